//! Bringing a database's schema up to date, one migration at a time, and
//! checking which version a database has. Each database keeps its own list
//! of migrations (`server/migrations/{sqlite,postgres}/`) and its own way to
//! keep two servers from applying one together (SQLite's write lock,
//! PostgreSQL's advisory lock); what a step does is the same.

use super::{Columns, Dialect, Sql};

/// A migration: its version, its name, and its SQL. A migration is never
/// edited once released; a change is a new entry.
pub type Migration = (i64, &'static str, &'static str);

/// The schema version `migrations` bring a database to.
pub fn newest(migrations: &[Migration]) -> i64 {
    migrations.last().map_or(0, |m| m.0)
}

/// The newest migration the database has applied, 0 for none.
async fn applied<D: Dialect>(conn: &mut D) -> crate::error::Result<i64> {
    let sql = Sql::new("SELECT max(version) AS version FROM schema_migrations");
    let applied: Option<i64> =
        super::fetch_one(conn, sql, |row| Columns::<D>::of(row).get("version")).await?;
    Ok(applied.unwrap_or(0))
}

/// Applies `migration` in the transaction `tx` — which holds the lock that
/// keeps other servers from applying it meanwhile — unless the database has
/// it already; refuses a database newer than `newest`, this server's
/// version. The caller commits.
pub async fn apply<D: Dialect>(
    tx: &mut D,
    migration: Migration,
    newest: i64,
) -> anyhow::Result<()> {
    let (version, name, script) = migration;
    let applied = applied(tx).await?;
    if applied > newest {
        anyhow::bail!(
            "the database has schema version {applied}, newer than this server's {newest}; upgrade the server"
        );
    }
    if applied >= version {
        return Ok(());
    }
    tx.run_script(script)
        .await
        .map_err(|e| anyhow::anyhow!("migration {version} ({name}) failed: {e}"))?;
    let mut sql = Sql::new("INSERT INTO schema_migrations (version, name, applied_time) VALUES (");
    sql.values(|v| {
        v.bind(version).bind(name).bind(crate::domain::now_micros());
    })
    .push(")");
    tx.execute(sql).await?;
    tracing::info!(version, name, "applied migration");
    Ok(())
}

/// Checks that the database `what` has exactly schema version `expected`:
/// a database only read (export) is never migrated, so it must be of this
/// server's version.
pub async fn check_version<D: Dialect>(
    conn: &mut D,
    expected: i64,
    what: &str,
) -> anyhow::Result<()> {
    let version = applied(conn)
        .await
        .map_err(|_| anyhow::anyhow!("{what} is not an Engram database"))?;
    if version != expected {
        anyhow::bail!(
            "{what} has schema version {version}, this engram-server reads version {expected}: \
             run the engram-server that matches it, or start this one on it once to upgrade it"
        );
    }
    Ok(())
}
