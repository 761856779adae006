//! The change feed on SQLite alone: a number SQLite reuses, changes from
//! before the feed named namespaces, and the namespace index's use.
use sqlx::SqliteConnection;

use crate::conformance::{actions, create, memory, owned};
use engram_server::domain::{
    Actor, ChangeAction, MemoryLevel, MemoryType, Scope, Subject, Tombstone,
};
use engram_server::engine::memories as engine;
use engram_server::store::Store;
use engram_server::store::sql::{Columns, Dialect as _, Sql, feed};
use engram_server::store::sqlite::{SqliteOptions, SqliteStore};

async fn open_store(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(&SqliteOptions::new(dir.path().join("engram.db")))
        .await
        .expect("open the store")
}

#[tokio::test]
async fn a_removed_memory_is_read_through_its_tombstone_even_once_its_number_is_reused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_store(&dir).await;
    let session = Scope {
        session_id: "s1".into(),
        ..owned("a")
    };
    let gone = create(
        &store,
        memory(session.clone(), MemoryLevel::Conversation, "x"),
        1,
    )
    .await;
    let deleter = Actor {
        key_id: "key-3".into(),
        agent_id: "janitor".into(),
    };
    engine::delete_memory(
        &store,
        session.clone(),
        gone.id.clone(),
        None,
        deleter.clone(),
        2,
    )
    .await
    .expect("delete");
    // The newest memory's number is given to the next one, of another
    // namespace: the old changes must not be read as that memory's.
    let reused = create(&store, memory(owned("b"), MemoryLevel::Global, "y"), 3).await;
    assert_eq!(reused.seq, gone.seq, "SQLite reuses the number");

    let events = store.memory_events("a", 0, 100).await.expect("events");
    assert_eq!(
        actions(&events),
        [
            (gone.id.clone(), ChangeAction::Created),
            (gone.id.clone(), ChangeAction::Deleted),
        ]
    );
    for event in &events {
        assert_eq!(
            event.subject,
            Subject::Removed(Tombstone {
                scope: session.clone(),
                level: MemoryLevel::Conversation,
                memory_type: MemoryType::Fact,
                tags: vec!["deploy".into()],
            })
        );
    }
    assert_eq!(events[1].actor, deleter);
    assert_eq!(store.memory_events("b", 0, 100).await.expect("b").len(), 1);
    store.close().await;
}

#[tokio::test]
async fn changes_from_before_the_watch_existed_are_never_attributed_to_a_namespace() {
    use sqlx::Connection as _;

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("engram.db");
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .expect("open");
    crate::sqlite_store::migrate_below(&mut conn, 10).await;
    sqlx::query(
        "INSERT INTO memories (id, namespace, level, memory_type, content, content_hash, \
         importance, confidence, source, create_time, update_time) \
         VALUES ('old', 'a', 1, 1, 'x', 'h', 0.5, 1, 1, 1, 1)",
    )
    .execute(&mut conn)
    .await
    .expect("a memory from before");
    conn.close().await.expect("close");

    let store = open_store(&dir).await;
    let bounds = store.feed_bounds().await.expect("bounds");
    assert_eq!((bounds.oldest, bounds.newest), (0, 1));
    assert!(
        store
            .memory_events("a", 0, 100)
            .await
            .expect("events")
            .is_empty()
    );
    let new = create(&store, memory(owned("a"), MemoryLevel::Global, "new"), 2).await;
    let events = store.memory_events("a", 0, 100).await.expect("events");
    assert_eq!(actions(&events), [(new.id, ChangeAction::Created)]);
    store.close().await;
}

#[tokio::test]
async fn a_namespace_is_read_through_its_index_whatever_the_others_hold() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_store(&dir).await;
    use engram_server::store::sql::store::Backend as _;
    let mut conn = store.connection().await.expect("a reader");
    let mut explain = Sql::<SqliteConnection>::new("EXPLAIN QUERY PLAN ");
    feed::push_events(&mut explain, "a", 0, 100);
    let plan: Vec<String> = conn
        .fetch_all(explain)
        .await
        .expect("plan")
        .iter()
        .map(|row| {
            Columns::<SqliteConnection>::of(row)
                .get("detail")
                .expect("detail")
        })
        .collect();
    let changes = plan
        .iter()
        .find(|detail| detail.contains(" c "))
        .expect("a step that reads the changes");
    assert!(
        changes.contains("USING INDEX memory_changes_by_namespace (namespace=? AND seq>?)"),
        "{plan:?}"
    );
    drop(conn);
    store.close().await;
}
