//! The store conformance suite: the same checks of the [`Store`] and
//! [`engram_server::store::tx::Tx`] primitives, run against both databases — SQLite
//! in a temporary folder, and PostgreSQL in a fresh database of the
//! throwaway server the test command starts. A check is written once, as a
//! function of a store; [`conformance!`] runs it on each.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use engram_tests::postgres::TestDatabase;
use futures_util::StreamExt as _;
use futures_util::future::join_all;
use tempfile::TempDir;

use engram_server::archive::records::Kind;
use engram_server::domain::provenance::{Origin, Provenance, WriteMethod};
use engram_server::domain::{
    Actor, ChangeAction, FeedBounds, FeedEvent, ListQuery, Memory, MemoryFilter, MemoryLevel,
    MemoryOrder, MemoryPatch, MemorySource, MemoryType, Micros, NewMemory, PageCursor, Scope,
    Subject, Validity, now_micros,
};
use engram_server::engine::{memories as engine, unit};
use engram_server::store::Store;
use engram_server::store::postgres::transfer::PostgresTransfer;
use engram_server::store::postgres::{PostgresOptions, PostgresStore, PostgresUrl};
use engram_server::store::sqlite::transfer::SqliteTransfer;
use engram_server::store::sqlite::{SqliteOptions, SqliteStore};
use engram_server::store::transfer::{Inserted, Transfer};

/// A store of one backend for one check, a transfer on the same database,
/// and what keeps its data alive.
struct Harness {
    store: Arc<dyn Store>,
    transfer: Box<dyn Transfer>,
    _dir: TempDir,
    _database: Option<TestDatabase>,
}

async fn sqlite() -> Harness {
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("engram.db");
    let store = SqliteStore::open(&SqliteOptions::new(&path))
        .await
        .expect("open SQLite");
    let transfer = SqliteTransfer::open_to_write(&path, Duration::from_secs(5))
        .await
        .expect("a transfer on SQLite");
    Harness {
        store: Arc::new(store),
        transfer: Box::new(transfer),
        _dir: dir,
        _database: None,
    }
}

async fn postgres() -> Harness {
    let dir = TempDir::new().expect("temp dir");
    let database = TestDatabase::create().await;
    let url: PostgresUrl = database.url().parse().expect("the test database's URL");
    let store = PostgresStore::open(&PostgresOptions {
        url: url.clone(),
        pool_size: 8,
        index_dir: dir.path().join("index"),
    })
    .await
    .expect("open PostgreSQL");
    let transfer = PostgresTransfer::open_to_write(&url)
        .await
        .expect("a transfer on PostgreSQL");
    Harness {
        store: Arc::new(store),
        transfer: Box::new(transfer),
        _dir: dir,
        _database: Some(database),
    }
}

/// Runs each check on SQLite (`on_sqlite::name`) and on PostgreSQL
/// (`on_postgres::name`).
macro_rules! conformance {
    ($($check:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test]
                async fn $check() {
                    let harness = super::sqlite().await;
                    super::$check(&harness).await;
                    harness.store.close().await;
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test]
                async fn $check() {
                    let harness = super::postgres().await;
                    super::$check(&harness).await;
                    harness.store.close().await;
                }
            )*
        }
    };
}

conformance!(
    pages_follow_each_order_without_gaps_or_repeats,
    a_scope_sees_the_levels_it_may_and_no_other,
    the_feed_shows_each_change_once_in_commit_order,
    values_left_unset_read_back_unset,
    concurrent_units_count_one_after_another,
    a_namespace_reads_its_own_changes_in_order_with_their_history,
    a_memory_purged_after_its_expiry_is_an_expiry_by_no_one,
    the_visibility_rule_a_watch_applies_is_the_one_listing_applies,
    every_kind_of_record_reads_back_as_it_was_imported,
    an_invalidated_memory_is_kept_and_read_only_for_when_it_was_true,
    the_memories_changed_after_a_change_are_those_of_its_namespace_and_filter,
    a_memory_s_provenance_reads_back_and_goes_with_it,
);

fn scope(namespace: &str) -> Scope {
    Scope {
        namespace: namespace.into(),
        ..Scope::default()
    }
}

/// A fact of `level` kept under `scope`.
fn fact(scope: Scope, level: MemoryLevel, content: &str, importance: f64) -> NewMemory {
    NewMemory {
        actor: Actor::default(),
        scope,
        level,
        memory_type: MemoryType::Fact,
        content: content.into(),
        summary: String::new(),
        tags: Vec::new(),
        metadata: BTreeMap::new(),
        importance,
        confidence: 1.0,
        source: MemorySource::Explicit,
        expire_time: None,
        occurred_at: None,
        origin_session_id: String::new(),
        origin: Origin::written(WriteMethod::CreateMemory, String::new()),
    }
}

/// Stores `new` at `now` as the engine does.
pub async fn create(store: &dyn Store, new: NewMemory, now: Micros) -> Memory {
    let write = engine::Write::plain(new);
    let mut created = unit::transact(store, move |tx| {
        let write = write.clone();
        Box::pin(async move { engine::create_many(tx, &[write], now).await })
    })
    .await
    .expect("create");
    created.remove(0).memory
}

/// Every page of `order` in `scope`, `page_size` at a time, as the service
/// pages them (one more row than the page tells whether another follows).
async fn all_pages(
    store: &dyn Store,
    scope: &Scope,
    order: MemoryOrder,
    page_size: usize,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut after: Option<PageCursor> = None;
    loop {
        let query = ListQuery {
            scope: scope.clone(),
            filter: MemoryFilter::default(),
            order,
            page_size,
            after,
            max_bytes: None,
        };
        let mut page = store.list_memories(&query, 1_000_000).await.expect("list");
        let more = page.len() > page_size;
        page.truncate(page_size);
        after = page.last().map(PageCursor::after);
        seen.extend(page.into_iter().map(|m| m.content));
        if !more {
            return seen;
        }
    }
}

async fn pages_follow_each_order_without_gaps_or_repeats(harness: &Harness) {
    let store = &*harness.store;
    let ns = scope("paging");
    // Create times repeat (pairs share one) and importances tie, so the
    // tie-breaks are exercised.
    for i in 0..25 {
        let importance = f64::from(i % 5) / 10.0;
        let new = fact(
            ns.clone(),
            MemoryLevel::Global,
            &format!("m{i:02}"),
            importance,
        );
        create(store, new, 1_000 + i64::from(i / 2)).await;
    }
    let created: Vec<String> = (0..25).map(|i| format!("m{i:02}")).collect();

    let ascending = all_pages(store, &ns, MemoryOrder::CreateTimeAsc, 7).await;
    assert_eq!(ascending, created, "oldest first, ties in creation order");
    let descending = all_pages(store, &ns, MemoryOrder::CreateTimeDesc, 7).await;
    let mut newest_first = created.clone();
    newest_first.reverse();
    assert_eq!(descending, newest_first);
    let by_importance = all_pages(store, &ns, MemoryOrder::ImportanceDesc, 4).await;
    let mut expected: Vec<(u32, usize, &String)> = created
        .iter()
        .enumerate()
        .map(|(i, content)| (i as u32 % 5, i, content))
        .collect();
    // Most important first; then newest first (by create time, then seq).
    expected.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let expected: Vec<String> = expected.into_iter().map(|(.., c)| c.clone()).collect();
    assert_eq!(by_importance, expected);
}

async fn a_scope_sees_the_levels_it_may_and_no_other(harness: &Harness) {
    let store = &*harness.store;
    let base = scope("levels");
    let in_project = Scope {
        project_id: "p1".into(),
        ..base.clone()
    };
    let in_session = Scope {
        session_id: "s1".into(),
        ..base.clone()
    };
    let of_bob = Scope {
        user_id: "bob".into(),
        ..base.clone()
    };
    create(
        store,
        fact(base.clone(), MemoryLevel::Global, "global", 0.5),
        1,
    )
    .await;
    create(
        store,
        fact(
            in_project.clone(),
            MemoryLevel::Workspace,
            "p1 workspace",
            0.5,
        ),
        2,
    )
    .await;
    create(
        store,
        fact(
            in_session.clone(),
            MemoryLevel::Conversation,
            "s1 conversation",
            0.5,
        ),
        3,
    )
    .await;
    create(
        store,
        fact(of_bob.clone(), MemoryLevel::Global, "bob's", 0.5),
        4,
    )
    .await;
    let other = scope("elsewhere");
    create(
        store,
        fact(other.clone(), MemoryLevel::Global, "another namespace", 0.5),
        5,
    )
    .await;

    let seen = |scope: Scope| async move {
        all_pages(store, &scope, MemoryOrder::CreateTimeAsc, 10)
            .await
            .into_iter()
            .collect::<BTreeSet<String>>()
    };
    let set = |items: &[&str]| {
        items
            .iter()
            .map(|s| (*s).to_owned())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(seen(base.clone()).await, set(&["global", "bob's"]));
    assert_eq!(
        seen(in_project).await,
        set(&["global", "p1 workspace", "bob's"])
    );
    assert_eq!(
        seen(in_session).await,
        set(&["global", "s1 conversation", "bob's"])
    );
    let of_alice = Scope {
        user_id: "alice".into(),
        ..base
    };
    assert_eq!(seen(of_alice).await, set(&["global"]), "not bob's");
    assert_eq!(seen(other).await, set(&["another namespace"]));
}

async fn the_feed_shows_each_change_once_in_commit_order(harness: &Harness) {
    let store = &*harness.store;
    let ns = scope("feed");
    let start = store.feed_bounds().await.expect("bounds").newest;
    let first = create(
        store,
        fact(ns.clone(), MemoryLevel::Global, "first", 0.5),
        10,
    )
    .await;
    let second = create(
        store,
        fact(ns.clone(), MemoryLevel::Global, "second", 0.5),
        11,
    )
    .await;
    // The same again: merged into the first.
    create(
        store,
        fact(ns.clone(), MemoryLevel::Global, "first", 0.5),
        12,
    )
    .await;
    create(
        store,
        fact(
            scope("other"),
            MemoryLevel::Global,
            "not this namespace's",
            0.5,
        ),
        13,
    )
    .await;
    let seq = second.seq;
    unit::transact(store, move |tx| {
        Box::pin(async move { tx.remove_memories(&[seq]).await })
    })
    .await
    .expect("remove");

    let events = store
        .memory_events("feed", start, 100)
        .await
        .expect("events");
    let seen: Vec<(String, ChangeAction)> = events
        .iter()
        .map(|e| (e.memory_id.clone(), e.action))
        .collect();
    assert_eq!(
        seen,
        [
            (first.id.clone(), ChangeAction::Created),
            (second.id.clone(), ChangeAction::Created),
            (first.id.clone(), ChangeAction::Merged),
            (second.id.clone(), ChangeAction::Deleted),
        ]
    );
    assert!(
        events.windows(2).all(|pair| pair[0].seq < pair[1].seq),
        "in feed order: {events:?}"
    );
    // Read on from the second event: the rest, none twice.
    let rest = store
        .memory_events("feed", events[1].seq, 100)
        .await
        .expect("events");
    assert_eq!(rest.len(), 2);
    assert_eq!(rest[0].seq, events[2].seq);
    let bounds = store.feed_bounds().await.expect("bounds");
    assert!(bounds.newest >= events[3].seq, "{bounds:?}");
    let changed = store
        .changed_namespaces(start, bounds.newest)
        .await
        .expect("changed");
    assert_eq!(
        changed.into_iter().collect::<BTreeSet<_>>(),
        BTreeSet::from(["feed".to_owned(), "other".to_owned()])
    );
}

async fn values_left_unset_read_back_unset(harness: &Harness) {
    let store = &*harness.store;
    let ns = scope("unset");
    let created = create(
        store,
        fact(ns.clone(), MemoryLevel::Global, "plain", 0.5),
        7,
    )
    .await;
    let read = store
        .get_memory(&ns, &created.id, 8)
        .await
        .expect("get")
        .expect("found");
    assert_eq!(read.expire_time, None);
    assert_eq!(read.last_access_time, None);
    assert_eq!(read.access_count, 0);
    assert_eq!(read.summary, "");
    assert!(read.tags.is_empty() && read.metadata.is_empty());
    assert_eq!(read.occurred_at, 7, "defaults to its creation");
    let progress = store.learning_progress("unset").await.expect("progress");
    assert_eq!(
        (progress.completed_episodes, progress.last_consolidation),
        (0, 0)
    );
    let none = unit::read(store, |tx| {
        Box::pin(async move { tx.agent_scope("unset", "nobody").await })
    })
    .await
    .expect("agent scope");
    assert_eq!(none, None);
}

async fn concurrent_units_count_one_after_another(harness: &Harness) {
    let store = &*harness.store;
    const UNITS: i64 = 16;
    let ticks = join_all((0..UNITS).map(|_| {
        unit::transact(store, |tx| {
            Box::pin(async move {
                tx.lock("tick/counting").await?;
                tx.tick("counting").await
            })
        })
    }))
    .await;
    let ticks: BTreeSet<i64> = ticks.into_iter().map(|t| t.expect("tick")).collect();
    assert_eq!(
        ticks,
        (1..=UNITS).collect(),
        "each unit saw the others' ticks"
    );
}

/// A memory of `level` kept under `scope`, written by `key-1` as `writer`.
pub fn memory(scope: Scope, level: MemoryLevel, content: &str) -> NewMemory {
    NewMemory {
        actor: Actor {
            key_id: "key-1".into(),
            agent_id: "writer".into(),
        },
        tags: vec!["deploy".into()],
        ..fact(scope, level, content, 0.5)
    }
}

pub fn owned(namespace: &str) -> Scope {
    scope(namespace)
}

pub fn actions(events: &[FeedEvent]) -> Vec<(String, ChangeAction)> {
    events
        .iter()
        .map(|e| (e.memory_id.clone(), e.action))
        .collect()
}

/// Memories "one" and "two" of namespace "a" (at times 1 and 3), and
/// "elsewhere" of "b" between them.
async fn two_here_one_elsewhere(store: &dyn Store) -> (Memory, Memory) {
    let first = create(store, memory(owned("a"), MemoryLevel::Global, "one"), 1).await;
    create(
        store,
        memory(owned("b"), MemoryLevel::Global, "elsewhere"),
        2,
    )
    .await;
    let second = create(store, memory(owned("a"), MemoryLevel::Global, "two"), 3).await;
    (first, second)
}

async fn a_namespace_reads_its_own_changes_in_order_with_their_history(harness: &Harness) {
    let store = &*harness.store;
    assert_eq!(
        store.feed_bounds().await.expect("bounds"),
        FeedBounds {
            oldest: 0,
            newest: 0
        }
    );
    let (first, second) = two_here_one_elsewhere(store).await;
    let patch = MemoryPatch {
        content: Some("one, changed".into()),
        ..MemoryPatch::default()
    };
    let editor = Actor {
        key_id: "key-2".into(),
        agent_id: "editor".into(),
    };
    engine::update_memory(
        store,
        owned("a"),
        first.id.clone(),
        patch,
        None,
        editor.clone(),
        4,
    )
    .await
    .expect("update");
    create(store, memory(owned("a"), MemoryLevel::Global, "two"), 5).await;

    let events = store.memory_events("a", 0, 100).await.expect("events");
    assert_eq!(
        actions(&events),
        [
            (first.id.clone(), ChangeAction::Created),
            (second.id.clone(), ChangeAction::Created),
            (first.id.clone(), ChangeAction::Updated),
            (second.id.clone(), ChangeAction::Merged),
        ]
    );
    assert!(events.windows(2).all(|w| w[0].seq < w[1].seq), "in order");
    let updated = &events[2];
    assert_eq!((updated.time, updated.actor.clone()), (Some(4), editor));
    assert_eq!(updated.changed_fields, ["content"]);
    // Every change carries the memory as it is now.
    let Subject::Stored(now) = &events[0].subject else {
        panic!("{:?}", events[0].subject);
    };
    assert_eq!((now.content.as_str(), now.version), ("one, changed", 2));
    assert_eq!(events[0].version, 1, "the version the create left");

    let after = store
        .memory_events("a", events[1].seq, 100)
        .await
        .expect("events");
    assert_eq!(after.len(), 2, "after a change: the ones that follow");
    assert_eq!(
        store.memory_events("a", 0, 1).await.expect("events").len(),
        1
    );
    let bounds = store.feed_bounds().await.expect("bounds");
    assert_eq!((bounds.oldest, bounds.newest), (0, events[3].seq));
}

async fn a_memory_purged_after_its_expiry_is_an_expiry_by_no_one(harness: &Harness) {
    let store = &*harness.store;
    // The history tells an expiry by the clock, so this one is real.
    let now = now_micros();
    let mut expiring = memory(owned("a"), MemoryLevel::Global, "brief");
    expiring.expire_time = Some(now - 1);
    let brief = create(store, expiring, now - 10).await;
    assert_eq!(
        store.purge_expired_memories(now, 10).await.expect("purge"),
        1
    );
    let events = store.memory_events("a", 0, 100).await.expect("events");
    assert_eq!(
        actions(&events),
        [
            (brief.id.clone(), ChangeAction::Created),
            (brief.id.clone(), ChangeAction::Expired),
        ]
    );
    assert_eq!(events[1].actor, Actor::default());
}

async fn the_visibility_rule_a_watch_applies_is_the_one_listing_applies(harness: &Harness) {
    let store = &*harness.store;
    let mut owners = Vec::new();
    for agent in ["", "a1"] {
        for user in ["", "u1"] {
            let scope = |project: &str, session: &str| Scope {
                namespace: "ns".into(),
                agent_id: agent.into(),
                user_id: user.into(),
                project_id: project.into(),
                session_id: session.into(),
            };
            owners.push((MemoryLevel::Global, scope("", "")));
            for project in ["p1", "p2"] {
                owners.push((MemoryLevel::Workspace, scope(project, "")));
            }
            for session in ["s1", "s2"] {
                owners.push((MemoryLevel::Conversation, scope("", session)));
            }
        }
    }
    owners.push((MemoryLevel::Global, owned("other")));
    let mut stored = Vec::new();
    for (i, (level, owner)) in owners.into_iter().enumerate() {
        let new = memory(owner, level, &format!("memory {i}"));
        stored.push(create(store, new, 1).await);
    }
    for agent in ["", "a1", "a2"] {
        for user in ["", "u1", "u2"] {
            for project in ["", "p1"] {
                for session in ["", "s1"] {
                    let reader = Scope {
                        namespace: "ns".into(),
                        agent_id: agent.into(),
                        user_id: user.into(),
                        project_id: project.into(),
                        session_id: session.into(),
                    };
                    let query = ListQuery {
                        scope: reader.clone(),
                        filter: MemoryFilter::default(),
                        order: MemoryOrder::default(),
                        page_size: 1000,
                        after: None,
                        max_bytes: None,
                    };
                    let listed: BTreeSet<String> = store
                        .list_memories(&query, 2)
                        .await
                        .expect("list")
                        .into_iter()
                        .map(|m| m.id)
                        .collect();
                    let seen: BTreeSet<String> = stored
                        .iter()
                        .filter(|m| reader.sees(m.level, &m.scope))
                        .map(|m| m.id.clone())
                        .collect();
                    assert_eq!(seen, listed, "{reader:?}");
                }
            }
        }
    }
}

/// A record of every kind, imported, reads back as it was written — values
/// that are easy to get wrong included (floats without a short decimal form,
/// text beyond ASCII, nulls and their absence, JSON columns, a memory's
/// access bookkeeping) — in the order it was written; imported again, each
/// is found as it is.
async fn every_kind_of_record_reads_back_as_it_was_imported(harness: &Harness) {
    let records = records();
    let mut import = harness.transfer.begin_import().await.expect("begin");
    for record in &records {
        assert_eq!(import.insert(record).await.expect("insert"), Inserted::New);
    }
    import.commit().await.expect("commit");

    let mut snapshot = harness.transfer.snapshot().await.expect("snapshot");
    assert_eq!(snapshot.namespaces().await.expect("namespaces"), ["n"]);
    for kind in Kind::ALL {
        let written: Vec<_> = records
            .iter()
            .filter(|r| r.kind() == kind)
            .cloned()
            .collect();
        let read: Vec<_> = snapshot
            .records("n", kind)
            .map(|record| record.expect("a record"))
            .collect()
            .await;
        assert_eq!(read, written, "{}", kind.name());
        let count = snapshot.count("n", kind).await.expect("count");
        assert_eq!(count, written.len() as u64, "{}", kind.name());
    }
    drop(snapshot);

    let mut again = harness.transfer.begin_import().await.expect("begin");
    for record in &records {
        assert_eq!(
            again.insert(record).await.expect("insert"),
            Inserted::Exists(Box::new(record.clone())),
            "{record:?}"
        );
    }
}

/// A record of every kind, with values that are easy to get wrong
/// (`server/tests/data/records.jsonl`).
fn records() -> Vec<engram_server::archive::records::Record> {
    include_str!("../data/records.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a record"))
        .collect()
}

/// An invalidation keeps the memory: lists leave it out unless asked for
/// what was true then (or for everything), the purge never removes it even
/// once it expires, and its history records the invalidation with why and
/// what replaced it.
async fn an_invalidated_memory_is_kept_and_read_only_for_when_it_was_true(harness: &Harness) {
    let store = &*harness.store;
    let now = now_micros();
    let mut old = memory(
        owned("v"),
        MemoryLevel::Global,
        "staging DB is on port 5433",
    );
    old.occurred_at = Some(now - 1_000);
    old.expire_time = Some(now - 1);
    let old = create(store, old, now - 900).await;
    assert_eq!(old.valid_from, now - 1_000, "valid from when it happened");
    let new = create(
        store,
        memory(owned("v"), MemoryLevel::Global, "staging DB moved to 6432"),
        now - 500,
    )
    .await;
    let (invalidated, by) = (old.clone(), new.id.clone());
    unit::transact(store, move |tx| {
        let (mut invalidated, by) = (invalidated.clone(), by.clone());
        Box::pin(async move {
            invalidated.valid_to = Some(now - 500);
            invalidated.invalidated_by = by;
            invalidated.invalidation_reason = "the port moved".into();
            invalidated.update_time = now - 500;
            invalidated.version += 1;
            let hash = engram_server::domain::identity::content_hash(&invalidated.content);
            tx.update_memory(&invalidated, &hash, &Actor::default())
                .await
        })
    })
    .await
    .expect("invalidate");

    // Expired too, yet never purged: it answers for when it was true.
    assert_eq!(
        store.purge_expired_memories(now, 10).await.expect("purge"),
        0
    );

    let listed = |validity: Validity| {
        let query = ListQuery {
            scope: owned("v"),
            filter: MemoryFilter {
                validity,
                ..MemoryFilter::default()
            },
            order: MemoryOrder::CreateTimeAsc,
            page_size: 10,
            after: None,
            max_bytes: None,
        };
        async move {
            // Read before the expiry, so that only validity decides.
            store
                .list_memories(&query, now - 100)
                .await
                .expect("list")
                .into_iter()
                .map(|m| m.content)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        listed(Validity::Current).await,
        ["staging DB moved to 6432"]
    );
    assert_eq!(
        listed(Validity::At(now - 700)).await,
        ["staging DB is on port 5433"]
    );
    assert_eq!(
        listed(Validity::All).await,
        ["staging DB is on port 5433", "staging DB moved to 6432"]
    );

    let history = store
        .list_memory_revisions("v", &old.id, 10, None)
        .await
        .expect("history");
    let last = history.last().expect("revisions");
    assert_eq!(last.action, ChangeAction::Invalidated as i32);
    assert_eq!(last.changed_fields, ["valid_to"]);
    assert_eq!(last.reason, "the port moved");
    assert_eq!(last.replaced_by, new.id);
}

async fn the_memories_changed_after_a_change_are_those_of_its_namespace_and_filter(
    harness: &Harness,
) {
    let store = &*harness.store;
    let (first, second) = two_here_one_elsewhere(store).await;
    let mut event = memory(owned("a"), MemoryLevel::Global, "three");
    event.memory_type = MemoryType::Event;
    let third = create(store, event, 4).await;
    let events = store.memory_events("a", 0, 100).await.expect("events");
    assert_eq!(events.len(), 3);
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    let ids = |found: Vec<Memory>| sorted(found.into_iter().map(|m| m.id).collect());
    let all = MemoryFilter::default();
    let changed = |after: i64, limit: usize, filter: MemoryFilter| async move {
        store
            .memories_changed_after(&owned("a"), &filter, after, limit, 10)
            .await
            .expect("memories")
    };
    // After the first change: the two that follow in its namespace.
    assert_eq!(
        ids(changed(events[0].seq, 100, all.clone()).await),
        sorted(vec![second.id.clone(), third.id.clone()])
    );
    // From the start: all three; the first change only: the first memory.
    assert_eq!(
        ids(changed(0, 100, all.clone()).await),
        sorted(vec![first.id.clone(), second.id.clone(), third.id.clone()])
    );
    assert_eq!(
        ids(changed(0, 1, all.clone()).await),
        vec![first.id.clone()]
    );
    // The filter holds: no EVENT.
    let facts = MemoryFilter {
        memory_types: vec![MemoryType::Fact],
        ..MemoryFilter::default()
    };
    assert_eq!(
        ids(changed(events[0].seq, 100, facts).await),
        vec![second.id.clone()]
    );
    // After the last change: none.
    assert!(changed(events[2].seq, 100, all).await.is_empty());
}

async fn a_memory_s_provenance_reads_back_and_goes_with_it(harness: &Harness) {
    let store = &*harness.store;
    let origin = Origin {
        method: WriteMethod::Remember,
        episode_id: "0190b6b2-7c3e-7d41-9f3a-2b1c4d5e6f70".into(),
        transcript_hash: "ab".repeat(32),
        transcript: "User: the lesson — caf\u{e9} first".into(),
    };
    let actor = Actor {
        key_id: "k1".into(),
        agent_id: "planner".into(),
    };
    let new = NewMemory {
        origin: origin.clone(),
        actor: actor.clone(),
        ..fact(
            scope("provenance"),
            MemoryLevel::Global,
            "Kept with its source",
            0.5,
        )
    };
    let plain = fact(
        scope("provenance"),
        MemoryLevel::Global,
        "Kept without",
        0.5,
    );
    let (memory, other) = (create(store, new, 21).await, create(store, plain, 22).await);
    let read = engine::get_detailed(store, scope("provenance"), memory.id.clone(), 23)
        .await
        .expect("read");
    assert_eq!(
        read.provenance,
        Some(Provenance {
            origin,
            actor,
            create_time: 21
        })
    );
    let provenance_of = |id: String| {
        unit::read(store, move |tx| {
            let id = id.clone();
            Box::pin(async move { tx.provenance(&id).await })
        })
    };
    let seq = memory.seq;
    unit::transact(store, move |tx| {
        Box::pin(async move { tx.remove_memories(&[seq]).await })
    })
    .await
    .expect("remove");
    assert_eq!(provenance_of(memory.id).await.expect("read"), None);
    let kept = provenance_of(other.id).await.expect("read").expect("kept");
    assert_eq!(kept.origin.method, WriteMethod::CreateMemory);
}
