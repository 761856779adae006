//! The PostgreSQL schema's triggers, at the level of SQL: they write the
//! change feed and the memory history as SQLite's do, and the feed's
//! sequence numbers become visible in commit order under concurrent writers.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use engram_tests::postgres::TestDatabase;
use sqlx::postgres::PgListener;
use sqlx::{AssertSqlSafe, Connection as _, PgPool, SqliteConnection};

use engram_server::domain::now_micros;
use engram_server::store::Store as _;
use engram_server::store::postgres::{FEED_CHANNEL, connect, migrate};
use engram_server::store::sqlite::{SqliteOptions, SqliteStore};

/// A fresh database with the schema, and a pool of `connections` to it.
async fn migrated(connections: u32) -> (TestDatabase, PgPool) {
    let database = TestDatabase::create().await;
    let pool = connect(&database.url().parse().unwrap(), connections)
        .await
        .unwrap();
    migrate(&pool).await.unwrap();
    (database, pool)
}

/// Inserts memory `id` (its content hash `hash`), written by `actor`.
fn insert_memory(id: &str, hash: &str, time: i64, actor: (&str, &str)) -> String {
    format!(
        "INSERT INTO memories (id, namespace, level, memory_type, content, content_hash, tags, \
         metadata, importance, confidence, source, create_time, update_time, occurred_at, \
         actor_key, actor_agent) \
         VALUES ('{id}', 'ns', 1, 1, 'content of {hash}', '{hash}', '[\"sky\"]', '{{}}', 0.5, \
         0.9, 1, {time}, {time}, {time}, '{}', '{}')",
        actor.0, actor.1
    )
}

/// Writes memory `id` (its own content) in `tx`, by no one in particular.
async fn write_memory(tx: &mut sqlx::PgConnection, id: &str) {
    sqlx::raw_sql(AssertSqlSafe(insert_memory(id, id, 1000, ("", ""))))
        .execute(tx)
        .await
        .unwrap();
}

/// Where a backend's SQL differs: a blob literal.
const VECTOR: &str = "{VECTOR}";

/// One history of two memories, as statements both backends run, each in a
/// transaction of its own: every kind of change and revision, and
/// bookkeeping that is neither.
fn history() -> Vec<String> {
    let mut merge = insert_memory("m3", "h3", 2200, ("key-5", "agent-5"));
    merge.push_str(
        " ON CONFLICT (namespace, level, agent_id, user_id, project_id, session_id, memory_type, \
         content_hash) DO UPDATE SET seen_count = memories.seen_count + 1, \
         version = memories.version + 1, update_time = excluded.update_time, \
         actor_key = excluded.actor_key, actor_agent = excluded.actor_agent",
    );
    vec![
        insert_memory("m1", "h1", 1000, ("key-1", "agent-1")),
        insert_memory("m2", "h2", 1000, ("key-1", "agent-1")),
        // An update of several fields.
        "UPDATE memories SET content = 'grey sky', content_hash = 'h3', tags = '[\"sky\",\"grey\"]', \
         importance = 0.7, version = version + 1, update_time = 2000, actor_key = 'key-2', \
         actor_agent = 'agent-2' WHERE id = 'm1'"
            .into(),
        // An identical memory merged into m1: reinforced.
        merge,
        // The writer's name alone is bookkeeping: neither a change nor a revision.
        "UPDATE memories SET actor_key = 'key-3' WHERE id = 'm2'".into(),
        // A visible column without a new version: a change, no revision.
        "UPDATE memories SET update_time = 2500 WHERE id = 'm2'".into(),
        format!(
            "INSERT INTO memory_vectors (memory_seq, model, content_hash, vector) \
             SELECT seq, 'model-a', content_hash, {VECTOR} FROM memories WHERE id = 'm1'"
        ),
        "UPDATE memory_vectors SET model = 'model-b'".into(),
        "INSERT INTO memory_access (memory_seq, access_count, last_access_time) \
         SELECT seq, 3, 2600 FROM memories WHERE id = 'm1'"
            .into(),
        // m2 expires (long ago) and retention purges it: an expiry, by no one.
        "UPDATE memories SET expire_time = 1, version = version + 1, update_time = 3000 \
         WHERE id = 'm2'"
            .into(),
        "DELETE FROM memories WHERE id = 'm2'".into(),
        // m1 is deleted by the writer named on it just before.
        "UPDATE memories SET actor_key = 'key-4', actor_agent = 'agent-4' WHERE id = 'm1'".into(),
        "DELETE FROM memories WHERE id = 'm1'".into(),
    ]
}

/// The change feed: (seq, memory seq, version, kind, namespace, memory id).
type Change = (i64, i64, i64, i64, String, String);
/// A removed memory's tombstone: (namespace, memory id, agent id, level,
/// type, tags as JSON text).
type Tombstone = (String, String, String, i64, i64, String);
/// The history: (seq, memory id, version, action, time, key id, agent id, changed).
type Revision = (i64, String, i64, i64, i64, String, String, String);

const CHANGES: &str = "SELECT seq, memory_seq, version, CAST(kind AS bigint), namespace, memory_id \
     FROM memory_changes ORDER BY seq";
const TOMBSTONES: &str = "SELECT namespace, memory_id, agent_id, CAST(level AS bigint), \
     CAST(memory_type AS bigint), CAST(tags AS text) FROM memory_tombstones ORDER BY memory_id";
const REVISIONS: &str = "SELECT seq, memory_id, version, CAST(action AS bigint), time, key_id, agent_id, changed \
     FROM memory_revisions ORDER BY seq";
const LEFTOVERS: &str =
    "SELECT (SELECT count(*) FROM memory_access) + (SELECT count(*) FROM memory_vectors)";

/// What the history leaves on SQLite, the reference.
async fn on_sqlite() -> (Vec<Change>, Vec<Revision>, Vec<Tombstone>, i64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    // The store applies the SQLite migrations.
    let store = SqliteStore::open(&SqliteOptions::new(&path)).await.unwrap();
    store.close().await;
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    for statement in history() {
        let statement = statement.replace(VECTOR, "X'0000803F'");
        sqlx::raw_sql(AssertSqlSafe(statement))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    (
        sqlx::query_as(CHANGES).fetch_all(&mut conn).await.unwrap(),
        sqlx::query_as(REVISIONS)
            .fetch_all(&mut conn)
            .await
            .unwrap(),
        sqlx::query_as(TOMBSTONES)
            .fetch_all(&mut conn)
            .await
            .unwrap(),
        sqlx::query_scalar(LEFTOVERS)
            .fetch_one(&mut conn)
            .await
            .unwrap(),
    )
}

/// A revision's time with the clock's reading replaced by 0 when it lies
/// between `before` and `after`, so two runs compare equal.
fn clock_read(revision: &Revision, before: i64, after: i64) -> Revision {
    let mut revision = revision.clone();
    if (before..=after).contains(&revision.4) {
        revision.4 = 0;
    }
    revision
}

#[tokio::test]
async fn triggers_record_changes_and_revisions_as_sqlite_does() {
    let before = now_micros();
    let (_database, pool) = migrated(1).await;
    for statement in history() {
        let statement = statement.replace(VECTOR, "'\\x0000803f'::bytea");
        sqlx::raw_sql(AssertSqlSafe(statement))
            .execute(&pool)
            .await
            .unwrap();
    }
    let changes: Vec<Change> = sqlx::query_as(CHANGES).fetch_all(&pool).await.unwrap();
    let revisions: Vec<Revision> = sqlx::query_as(REVISIONS).fetch_all(&pool).await.unwrap();
    let tombstones: Vec<Tombstone> = sqlx::query_as(TOMBSTONES).fetch_all(&pool).await.unwrap();
    let leftovers: i64 = sqlx::query_scalar(LEFTOVERS)
        .fetch_one(&pool)
        .await
        .unwrap();
    let (sqlite_changes, sqlite_revisions, sqlite_tombstones, sqlite_leftovers) = on_sqlite().await;
    let after = now_micros();

    // Kinds: 1 created, 2 updated, 3 merged, 4 deleted, 5 vector stored
    // (which names no memory: nothing a watcher is told about).
    let change = |seq, memory_seq, version, kind, id: &str| {
        let namespace = if id.is_empty() { "" } else { "ns" };
        (
            seq,
            memory_seq,
            version,
            kind,
            namespace.to_owned(),
            id.to_owned(),
        )
    };
    assert_eq!(
        changes,
        [
            change(1, 1, 1, 1, "m1"),
            change(2, 2, 1, 1, "m2"),
            change(3, 1, 2, 2, "m1"),
            change(4, 1, 3, 3, "m1"),
            change(5, 2, 1, 2, "m2"),
            change(6, 1, 3, 5, ""),
            change(7, 1, 3, 5, ""),
            change(8, 2, 2, 2, "m2"),
            change(9, 2, 2, 4, "m2"),
            change(10, 1, 3, 4, "m1"),
        ]
    );
    // What each removed memory leaves for watchers: who saw it, its level,
    // type and tags as they were when it went.
    let tags = |tombstones: &[Tombstone]| -> Vec<Vec<String>> {
        tombstones
            .iter()
            .map(|t| serde_json::from_str(&t.5).unwrap())
            .collect()
    };
    let without_tags = |tombstones: &[Tombstone]| -> Vec<(String, String, String, i64, i64)> {
        tombstones
            .iter()
            .map(|t| (t.0.clone(), t.1.clone(), t.2.clone(), t.3, t.4))
            .collect()
    };
    assert_eq!(
        without_tags(&tombstones),
        [
            ("ns".into(), "m1".into(), String::new(), 1, 1),
            ("ns".into(), "m2".into(), String::new(), 1, 1),
        ]
    );
    assert_eq!(tags(&tombstones), [vec!["sky", "grey"], vec!["sky"]]);
    assert_eq!(
        (without_tags(&tombstones), tags(&tombstones)),
        (without_tags(&sqlite_tombstones), tags(&sqlite_tombstones)),
        "the tombstones differ from SQLite's"
    );
    // Actions: 1 created, 2 updated, 3 merged, 4 deleted, 5 expired; a
    // removal is timed by the database's clock (0 here).
    let revision = |seq, id: &str, version, action, time, key: &str, agent: &str, changed: &str| {
        (
            seq,
            id.to_owned(),
            version,
            action,
            time,
            key.to_owned(),
            agent.to_owned(),
            changed.to_owned(),
        )
    };
    let expected = [
        revision(1, "m1", 1, 1, 1000, "key-1", "agent-1", ""),
        revision(2, "m2", 1, 1, 1000, "key-1", "agent-1", ""),
        revision(
            3,
            "m1",
            2,
            2,
            2000,
            "key-2",
            "agent-2",
            "content,tags,importance",
        ),
        revision(4, "m1", 3, 3, 2200, "key-5", "agent-5", "seen_count"),
        revision(5, "m2", 2, 2, 3000, "key-3", "agent-1", "expire_time"),
        revision(6, "m2", 2, 5, 0, "", "", ""),
        revision(7, "m1", 3, 4, 0, "key-4", "agent-4", ""),
    ];
    let timed = |revisions: &[Revision]| -> Vec<Revision> {
        revisions
            .iter()
            .map(|r| clock_read(r, before, after))
            .collect()
    };
    assert_eq!(timed(&revisions), expected);
    // Access bookkeeping and vectors leave with their memory.
    assert_eq!(leftovers, 0);

    assert_eq!(
        changes, sqlite_changes,
        "the change feed differs from SQLite's"
    );
    assert_eq!(
        timed(&revisions),
        timed(&sqlite_revisions),
        "the history differs from SQLite's"
    );
    assert_eq!(leftovers, sqlite_leftovers);
}

#[tokio::test]
async fn changes_join_the_feed_when_their_transaction_commits() {
    let (_database, pool) = migrated(2).await;
    let mut tx = pool.begin().await.unwrap();
    write_memory(&mut tx, "m1").await;
    let in_transaction: i64 = sqlx::query_scalar("SELECT count(*) FROM memory_changes")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(in_transaction, 0, "appended only at commit, under the lock");
    tx.commit().await.unwrap();
    let committed: Vec<Change> = sqlx::query_as(CHANGES).fetch_all(&pool).await.unwrap();
    assert_eq!(committed, [(1, 1, 1, 1, "ns".to_owned(), "m1".to_owned())]);

    // A rolled-back change never joins; its number may be skipped.
    let mut tx = pool.begin().await.unwrap();
    write_memory(&mut tx, "m2").await;
    tx.rollback().await.unwrap();
    let after_rollback: Vec<Change> = sqlx::query_as(CHANGES).fetch_all(&pool).await.unwrap();
    assert_eq!(after_rollback, committed);
}

/// A small random number generator (xorshift), enough to vary timings
/// without a dependency.
struct Jitter(u64);

impl Jitter {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_polling_after_its_last_change_misses_none() {
    const WRITERS: u32 = 16;
    const TRANSACTIONS: u32 = 30;
    // Each transaction stays open up to this long after its insert, so that
    // transactions which insert early often commit late.
    const MAX_HOLD_MICROS: u64 = 3000;
    let (_database, pool) = migrated(WRITERS + 1).await;

    let writing_done = Arc::new(AtomicBool::new(false));
    let follower = {
        let pool = pool.clone();
        let writing_done = writing_done.clone();
        tokio::spawn(async move {
            let mut last = 0_i64;
            let mut seen = Vec::new();
            loop {
                // Read before polling: the poll after the writers are done
                // sees everything they committed.
                let done = writing_done.load(Ordering::SeqCst);
                let seqs: Vec<i64> = sqlx::query_scalar(
                    "SELECT seq FROM memory_changes WHERE seq > $1 ORDER BY seq",
                )
                .bind(last)
                .fetch_all(&pool)
                .await
                .unwrap();
                if let Some(&newest) = seqs.last() {
                    last = newest;
                }
                seen.extend(seqs);
                if done {
                    return seen;
                }
            }
        })
    };

    let writers = (0..WRITERS).map(|writer| {
        let pool = pool.clone();
        tokio::spawn(async move {
            let mut jitter = Jitter(0x9E37_79B9_7F4A_7C15 ^ u64::from(writer + 1));
            let mut committed = 0;
            for n in 0..TRANSACTIONS {
                let mut tx = pool.begin().await.unwrap();
                let id = format!("w{writer}-{n}");
                write_memory(&mut tx, &id).await;
                tokio::time::sleep(Duration::from_micros(jitter.below(MAX_HOLD_MICROS))).await;
                // Some roll back, leaving gaps a follower must not wait on.
                if jitter.below(5) == 0 {
                    tx.rollback().await.unwrap();
                } else {
                    tx.commit().await.unwrap();
                    committed += 1;
                }
            }
            committed
        })
    });
    let mut committed = 0;
    for writer in futures_util::future::join_all(writers).await {
        committed += writer.unwrap();
    }
    writing_done.store(true, Ordering::SeqCst);
    let seen = follower.await.unwrap();

    let all: Vec<i64> = sqlx::query_scalar("SELECT seq FROM memory_changes ORDER BY seq")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(all.len(), committed, "one change per committed memory");
    let missed: BTreeSet<i64> = all
        .iter()
        .copied()
        .filter(|seq| !seen.contains(seq))
        .collect();
    assert!(
        missed.is_empty(),
        "the follower missed changes {missed:?}: their numbers became visible after larger ones"
    );
    assert_eq!(seen, all, "each change seen once, in order");
}

#[tokio::test]
async fn a_commit_that_changes_memories_wakes_listeners_once() {
    /// How long a notification may take to arrive; and how long one that
    /// should not come is waited for.
    const ARRIVAL: Duration = Duration::from_secs(5);
    const SILENCE: Duration = Duration::from_millis(300);
    let (_database, pool) = migrated(3).await;
    let mut listener = PgListener::connect_with(&pool).await.unwrap();
    listener.listen(FEED_CHANNEL).await.unwrap();

    // Three memories in one transaction: one notification, no payload.
    let mut tx = pool.begin().await.unwrap();
    for id in ["m1", "m2", "m3"] {
        write_memory(&mut tx, id).await;
    }
    tx.commit().await.unwrap();
    let notification = tokio::time::timeout(ARRIVAL, listener.recv())
        .await
        .expect("a notification")
        .unwrap();
    assert_eq!(notification.channel(), FEED_CHANNEL);
    assert_eq!(notification.payload(), "");
    assert!(
        tokio::time::timeout(SILENCE, listener.recv())
            .await
            .is_err(),
        "one notification per transaction"
    );

    // Neither a rolled-back change nor bookkeeping wakes anyone.
    let mut tx = pool.begin().await.unwrap();
    write_memory(&mut tx, "m4").await;
    tx.rollback().await.unwrap();
    sqlx::query("UPDATE memories SET actor_key = 'someone'")
        .execute(&pool)
        .await
        .unwrap();
    assert!(
        tokio::time::timeout(SILENCE, listener.recv())
            .await
            .is_err(),
        "no change, no notification"
    );
}
