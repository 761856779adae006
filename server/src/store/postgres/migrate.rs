//! The PostgreSQL schema's migrations, which every replica applies at start.
//! Replicas that start together take turns under an advisory lock: the
//! first applies what is missing, the others find it applied.

use sqlx::PgPool;

use crate::store::sql::migrations::{self, Migration};

/// The schema, in order. Each runs in a transaction (so a migration cannot
/// use statements that refuse one, such as CREATE INDEX CONCURRENTLY).
const MIGRATIONS: &[Migration] = &[
    (
        1,
        "schema",
        include_str!("../../../migrations/postgres/0001_schema.sql"),
    ),
    (
        2,
        "watch",
        include_str!("../../../migrations/postgres/0002_watch.sql"),
    ),
    (
        3,
        "key_ids",
        include_str!("../../../migrations/postgres/0003_key_ids.sql"),
    ),
    (
        4,
        "validity",
        include_str!("../../../migrations/postgres/0004_validity.sql"),
    ),
    (
        5,
        "entities",
        include_str!("../../../migrations/postgres/0005_entities.sql"),
    ),
    (
        6,
        "memory_links",
        include_str!("../../../migrations/postgres/0006_memory_links.sql"),
    ),
    (
        7,
        "memory_relations",
        include_str!("../../../migrations/postgres/0007_memory_relations.sql"),
    ),
    (
        8,
        "memory_provenance",
        include_str!("../../../migrations/postgres/0008_memory_provenance.sql"),
    ),
];

/// The advisory lock migrations are applied under: Engram's locks are
/// (1701734258, n), "engr" in ASCII (the schema's header lists them).
const LOCK_CLASS: i32 = 1_701_734_258;
const MIGRATIONS_LOCK: i32 = 1;

/// The schema version this server brings a database to.
pub fn schema_version() -> i64 {
    migrations::newest(MIGRATIONS)
}

/// Applies the migrations the database has not seen, each in its own
/// transaction under the migrations' advisory lock, which the transaction's
/// end releases however it ends (a replica that dies mid-migration releases
/// it with its connection, and its half is rolled back).
pub async fn migrate(pool: &PgPool) -> anyhow::Result<()> {
    let newest = schema_version();
    for &migration in MIGRATIONS {
        // READ COMMITTED whatever the database's default: each statement
        // then sees what was committed before it started, so the version
        // read after the lock is the one the previous holder left. (Under
        // REPEATABLE READ the snapshot would date from before the wait.)
        let mut tx = pool
            .begin_with("BEGIN ISOLATION LEVEL READ COMMITTED")
            .await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
            .bind(LOCK_CLASS)
            .bind(MIGRATIONS_LOCK)
            .execute(&mut *tx)
            .await?;
        sqlx::raw_sql(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                 version bigint PRIMARY KEY, name text NOT NULL, applied_time bigint NOT NULL)",
        )
        .execute(&mut *tx)
        .await?;
        migrations::apply(&mut *tx, migration, newest).await?;
        tx.commit().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use engram_tests::postgres::TestDatabase;

    use super::*;
    use crate::store::postgres::connect;

    /// Every table of the schema, as the SQLite migrations leave them.
    const TABLES: &[&str] = &[
        "agent_scopes",
        "anti_patterns",
        "create_requests",
        "engram_meta",
        "entities",
        "entity_names",
        "episode_lessons",
        "episode_steps",
        "episodes",
        "heuristics",
        "learning_state",
        "memories",
        "memory_access",
        "memory_changes",
        "memory_entities",
        "memory_links",
        "memory_provenance",
        "memory_relations",
        "memory_revisions",
        "memory_tombstones",
        "memory_vectors",
        "mistake_cards",
        "outcomes",
        "schema_migrations",
        "task_rules",
    ];

    async fn applied(pool: &PgPool) -> Vec<(i64, String)> {
        sqlx::query_as("SELECT version, name FROM schema_migrations ORDER BY version")
            .fetch_all(pool)
            .await
            .unwrap()
    }

    fn every_migration() -> Vec<(i64, String)> {
        MIGRATIONS
            .iter()
            .map(|&(version, name, _)| (version, name.to_owned()))
            .collect()
    }

    #[tokio::test]
    async fn migrations_build_the_schema_on_an_empty_database() {
        let database = TestDatabase::create().await;
        let pool = connect(&database.url().parse().unwrap(), 2).await.unwrap();
        migrate(&pool).await.unwrap();

        assert_eq!(applied(&pool).await, every_migration());
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        assert_eq!(tables, TABLES);
        let id: String =
            sqlx::query_scalar("SELECT value FROM engram_meta WHERE key = 'database_id'")
                .fetch_one(&pool)
                .await
                .unwrap();
        assert!(
            id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );

        // A restart finds nothing to do.
        migrate(&pool).await.unwrap();
        assert_eq!(applied(&pool).await, every_migration());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn replicas_starting_together_apply_each_migration_once() {
        const REPLICAS: usize = 4;
        let database = TestDatabase::create().await;
        let url = database.url().parse().unwrap();
        let mut pools = Vec::new();
        for _ in 0..REPLICAS {
            pools.push(connect(&url, 1).await.unwrap());
        }
        // All start at once, each on its own connection, as replicas would.
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(REPLICAS));
        let replicas = pools.iter().cloned().map(|pool| {
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                migrate(&pool).await
            })
        });
        for replica in futures_util::future::join_all(replicas).await {
            replica.unwrap().unwrap();
        }
        assert_eq!(applied(&pools[0]).await, every_migration());
    }

    #[tokio::test]
    async fn a_database_of_a_newer_server_is_refused() {
        let database = TestDatabase::create().await;
        let pool = connect(&database.url().parse().unwrap(), 1).await.unwrap();
        migrate(&pool).await.unwrap();
        sqlx::query(
            "INSERT INTO schema_migrations (version, name, applied_time) VALUES ($1, 'future', 0)",
        )
        .bind(schema_version() + 1)
        .execute(&pool)
        .await
        .unwrap();
        let error = migrate(&pool).await.unwrap_err().to_string();
        assert!(error.contains("upgrade the server"), "{error}");
    }
}
