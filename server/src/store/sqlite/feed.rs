//! The change feed on SQLite, as the store serves it (its SQL is shared,
//! see [`crate::store::sql::feed`]): what WatchMemories is shown of changes,
//! removals and expiries.

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::super::{SqliteOptions, SqliteStore};
    use crate::domain::{
        Actor, ChangeAction, ListQuery, MemoryFilter, MemoryLevel, MemoryOrder, MemoryPatch,
        MemorySource, MemoryType, Micros, NewMemory, Scope, Subject, Tombstone, now_micros,
    };
    use sqlx::SqliteConnection;

    use crate::domain::{FeedBounds, FeedEvent};
    use crate::engine::{memories as engine, unit};
    use crate::store::Store;
    use crate::store::sql::{Columns, Dialect as _, Sql, feed};

    async fn open_store(dir: &tempfile::TempDir) -> SqliteStore {
        SqliteStore::open(&SqliteOptions::new(dir.path().join("engram.db")))
            .await
            .expect("open the store")
    }

    fn owned(namespace: &str) -> Scope {
        Scope {
            namespace: namespace.into(),
            ..Scope::default()
        }
    }

    /// A memory of `level` kept under `scope`, written by `actor`.
    fn memory(scope: Scope, level: MemoryLevel, content: &str) -> NewMemory {
        NewMemory {
            actor: Actor {
                key_id: "key-1".into(),
                agent_id: "writer".into(),
            },
            scope,
            level,
            memory_type: MemoryType::Fact,
            content: content.into(),
            summary: String::new(),
            tags: vec!["deploy".into()],
            metadata: BTreeMap::new(),
            importance: 0.5,
            confidence: 1.0,
            source: MemorySource::Explicit,
            expire_time: None,
            occurred_at: None,
            origin_session_id: String::new(),
        }
    }

    /// Stores `new` as the engine does.
    async fn create(store: &SqliteStore, new: NewMemory, now: Micros) -> crate::domain::Memory {
        let insert = engine::prepare(new);
        let mut created = unit::transact(store, move |tx| {
            let insert = insert.clone();
            Box::pin(async move { engine::create_many(tx, &[insert], now).await })
        })
        .await
        .expect("create");
        created.remove(0).memory
    }

    fn actions(events: &[FeedEvent]) -> Vec<(String, ChangeAction)> {
        events
            .iter()
            .map(|e| (e.memory_id.clone(), e.action))
            .collect()
    }

    #[tokio::test]
    async fn a_namespace_reads_its_own_changes_in_order_with_their_history() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = open_store(&dir).await;
        assert_eq!(
            store.feed_bounds().await.expect("bounds"),
            FeedBounds {
                oldest: 0,
                newest: 0
            }
        );
        let first = create(&store, memory(owned("a"), MemoryLevel::Global, "one"), 1).await;
        create(
            &store,
            memory(owned("b"), MemoryLevel::Global, "elsewhere"),
            2,
        )
        .await;
        let second = create(&store, memory(owned("a"), MemoryLevel::Global, "two"), 3).await;
        let patch = MemoryPatch {
            content: Some("one, changed".into()),
            ..MemoryPatch::default()
        };
        let editor = Actor {
            key_id: "key-2".into(),
            agent_id: "editor".into(),
        };
        engine::update_memory(
            &store,
            owned("a"),
            first.id.clone(),
            patch,
            None,
            editor.clone(),
            4,
        )
        .await
        .expect("update");
        create(&store, memory(owned("a"), MemoryLevel::Global, "two"), 5).await;

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
        store.close().await;
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
    async fn a_memory_purged_after_its_expiry_is_an_expiry_by_no_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = open_store(&dir).await;
        // The history tells an expiry by the clock, so this one is real.
        let now = now_micros();
        let mut expiring = memory(owned("a"), MemoryLevel::Global, "brief");
        expiring.expire_time = Some(now - 1);
        let brief = create(&store, expiring, now - 10).await;
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
        sqlx::raw_sql(
            "CREATE TABLE schema_migrations (
                 version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_time INTEGER NOT NULL)",
        )
        .execute(&mut conn)
        .await
        .expect("schema_migrations");
        for &(version, name, sql) in super::super::MIGRATIONS.iter().filter(|m| m.0 < 10) {
            sqlx::raw_sql(sql)
                .execute(&mut conn)
                .await
                .expect("older migration");
            sqlx::query("INSERT INTO schema_migrations VALUES (?, ?, 0)")
                .bind(version)
                .bind(name)
                .execute(&mut conn)
                .await
                .expect("record it");
        }
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
        let mut conn = store.readers.acquire().await.expect("a reader");
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

    #[tokio::test]
    async fn the_visibility_rule_a_watch_applies_is_the_one_listing_applies() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = open_store(&dir).await;
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
            stored.push(create(&store, new, 1).await);
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
        store.close().await;
    }
}
