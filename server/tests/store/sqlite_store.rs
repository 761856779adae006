//! The SQLite store alone: purging expired memories and request ids, a
//! request id recorded by an older server, and a migration's fill.

use std::collections::BTreeMap;

use engram_server::domain::provenance::{Origin, WriteMethod};
use engram_server::domain::{
    Actor, Created, MemoryLevel, MemorySource, MemoryType, Micros, NewMemory, RequestKey, Scope,
    WriteResult,
};
use engram_server::engine::{memories as engine, unit};
use engram_server::error::{Error, Result};
use engram_server::store::Store;
use engram_server::store::sqlite::{MIGRATIONS, SqliteOptions, SqliteStore};
use sqlx::{Connection as _, SqliteConnection};

/// Stores `memories` in namespace "ns" as the engine does, with or
/// without a request id.
async fn create(
    store: &SqliteStore,
    request: Option<RequestKey>,
    memories: Vec<NewMemory>,
    now: Micros,
) -> Result<Vec<Created>> {
    let writes: Vec<_> = memories.into_iter().map(engine::Write::plain).collect();
    if let Some(request) = request {
        return engine::create_with_request(store, "ns".into(), request, writes, now).await;
    }
    unit::transact(store, move |tx| {
        let writes = writes.clone();
        Box::pin(async move { engine::create_many(tx, &writes, now).await })
    })
    .await
}

/// A GLOBAL fact of `content` in namespace "ns", expiring at `expire_time`.
fn fact(content: &str, expire_time: Option<Micros>) -> NewMemory {
    NewMemory {
        actor: Actor::default(),
        scope: Scope {
            namespace: "ns".into(),
            ..Scope::default()
        },
        level: MemoryLevel::Global,
        memory_type: MemoryType::Fact,
        content: content.into(),
        summary: String::new(),
        tags: Vec::new(),
        metadata: BTreeMap::new(),
        importance: 0.5,
        confidence: 1.0,
        source: MemorySource::Explicit,
        expire_time,
        occurred_at: None,
        origin_session_id: String::new(),
        origin: Origin::written(WriteMethod::CreateMemory, String::new()),
    }
}

async fn open_store(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(&SqliteOptions::new(dir.path().join("engram.db")))
        .await
        .expect("open the store")
}

#[tokio::test]
async fn purging_deletes_expired_memories_batch_by_batch_as_deletes_on_the_feed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_store(&dir).await;
    let now: Micros = 1_000_000;
    let expiring = Some(now + 10);
    let memories = vec![
        fact("a", expiring),
        fact("b", expiring),
        fact("c", expiring),
        fact("d", None),
        fact("e", Some(now + 1_000)),
    ];
    create(&store, None, memories, now).await.expect("create");
    let head = *store.feed_head().borrow();

    let purge = |at: Micros, limit: usize| store.purge_expired_memories(at, limit);
    assert_eq!(purge(now + 9, 10).await.expect("purge"), 0, "none expired");
    assert_eq!(purge(now + 10, 2).await.expect("purge"), 2);
    assert_eq!(purge(now + 10, 2).await.expect("purge"), 1);
    assert_eq!(purge(now + 10, 2).await.expect("purge"), 0);
    assert_eq!(store.count_memories().await.expect("count"), 2);

    // Each is a deletion on the change feed, which the indexes follow.
    let changes = store.changes_after(head, 100).await.expect("feed");
    assert_eq!(changes.len(), 3);
    assert!(changes.iter().all(|c| c.memory.is_none()), "{changes:?}");
    store.close().await;
}

#[tokio::test]
async fn a_purged_request_id_makes_a_new_request_and_a_kept_one_replays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_store(&dir).await;
    let (old, recent) = (1_000_000, 2_000_000);
    // The gRPC edge fingerprints the request; here the content stands
    // in for it.
    let create = |id: &'static str, content: &'static str, now: Micros| {
        let key = RequestKey {
            id: id.to_owned(),
            fingerprint: format!("pb1:{content}"),
        };
        create(&store, Some(key), vec![fact(content, None)], now)
    };
    create("old", "first", old).await.expect("create");
    let first_recent = create("recent", "second", recent).await.expect("create");
    let reused = create("old", "other", recent).await.expect_err("reused id");
    assert!(matches!(reused, Error::AlreadyExists(_)), "{reused:?}");

    assert_eq!(store.purge_request_ids(recent, 10).await.expect("purge"), 1);

    let renewed = create("old", "other", recent + 1)
        .await
        .expect("a new request");
    assert_eq!(renewed[0].result, WriteResult::Created);
    assert_eq!(renewed[0].memory.content, "other");
    let retried = create("recent", "second", recent + 1)
        .await
        .expect("a retry");
    assert_eq!(retried, first_recent, "the first answer again");
    assert_eq!(store.count_memories().await.expect("count"), 3);
    store.close().await;
}

#[tokio::test]
async fn a_request_id_recorded_by_an_older_server_still_replays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_store(&dir).await;
    let key = |fingerprint: &str| RequestKey {
        id: "r1".into(),
        fingerprint: fingerprint.into(),
    };
    let first = create(&store, Some(key("pb1:aa")), vec![fact("first", None)], 1)
        .await
        .expect("create");
    store.close().await;
    // Servers before fingerprints had a scheme stored a bare hex digest.
    let mut conn = SqliteConnection::connect(&format!(
        "sqlite://{}",
        dir.path().join("engram.db").display()
    ))
    .await
    .expect("open");
    sqlx::query("UPDATE create_requests SET fingerprint = ? WHERE request_id = 'r1'")
        .bind("9e025dc4dfe156fc05884a8546492e83bad69b9906a0ff0c27fb3acac4f99d60")
        .execute(&mut conn)
        .await
        .expect("make it an old row");
    conn.close().await.expect("close");

    let store = open_store(&dir).await;
    let retried = create(&store, Some(key("pb1:bb")), vec![fact("first", None)], 2)
        .await
        .expect("a retry across the upgrade");
    assert_eq!(retried, first);
    assert_eq!(store.count_memories().await.expect("count"), 1);
    // (A row of the current scheme refuses another request: see
    // a_purged_request_id_makes_a_new_request_and_a_kept_one_replays.)
    store.close().await;
}

#[tokio::test]
async fn memories_stored_before_occurred_at_existed_happened_when_they_were_stored() {
    let mut conn = SqliteConnection::connect("sqlite::memory:")
        .await
        .expect("open");
    migrate_below(&mut conn, 6).await;
    sqlx::query(
        "INSERT INTO memories (id, namespace, level, memory_type, content, content_hash, \
         importance, confidence, source, create_time, update_time) \
         VALUES ('m', 'ns', 1, 1, 'x', 'h', 0.5, 1, 1, 1000, 2000)",
    )
    .execute(&mut conn)
    .await
    .expect("insert");
    for &(_, _, sql) in MIGRATIONS.iter().filter(|m| m.0 == 6) {
        sqlx::raw_sql(sql)
            .execute(&mut conn)
            .await
            .expect("migration 6");
    }
    let (occurred_at, changes): (i64, i64) =
        sqlx::query_as("SELECT occurred_at, (SELECT count(*) FROM memory_changes) FROM memories")
            .fetch_one(&mut conn)
            .await
            .expect("read");
    assert_eq!(occurred_at, 1000, "the create time");
    assert_eq!(changes, 1, "the fill is not a change of the feed");
    // A change of occurred_at alone is one.
    sqlx::query("UPDATE memories SET occurred_at = 500")
        .execute(&mut conn)
        .await
        .expect("update");
    let changes: i64 = sqlx::query_scalar("SELECT count(*) FROM memory_changes")
        .fetch_one(&mut conn)
        .await
        .expect("count");
    assert_eq!(changes, 2);
}

/// Brings `conn`'s database to the schema of a server from before
/// migration `version`, as that server left it.
pub async fn migrate_below(conn: &mut SqliteConnection, version: i64) {
    sqlx::raw_sql(
        "CREATE TABLE schema_migrations (
             version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_time INTEGER NOT NULL)",
    )
    .execute(&mut *conn)
    .await
    .expect("schema_migrations");
    for &(applied, name, sql) in MIGRATIONS.iter().filter(|m| m.0 < version) {
        sqlx::raw_sql(sql)
            .execute(&mut *conn)
            .await
            .expect("older migration");
        sqlx::query("INSERT INTO schema_migrations VALUES (?, ?, 0)")
            .bind(applied)
            .bind(name)
            .execute(&mut *conn)
            .await
            .expect("record it");
    }
}
