//! Several replicas on one PostgreSQL database, as behind a load balancer:
//! a write is found at once on the replica that took it and within a
//! bound on the others; concurrent writes of one thing through every
//! replica keep the rules (one memory per identity with every sighting
//! counted, one answer per request id, one heuristic per strategy group);
//! a replica killed mid-write loses no acknowledged write; a watch on one
//! replica sees the writes made through the others, in commit order.
//!
//! PostgreSQL whatever the suite's backend: replicas share a database, which
//! a SQLite file cannot be for several servers.

use std::time::{Duration, Instant};

use engram_client::proto::{self, MemoryType, RevisionAction, WriteResult};
use engram_client::{Engram, WatchMemories};
use engram_tests::postgres::TestDatabase;
use engram_tests::{
    Backend, Server, create, input, list_all, run_operator_script_with_env, scope, search,
};
use futures_util::StreamExt as _;

/// How long a write may take to be found through another replica: the
/// notification's delay, one read of the feed and the index's apply.
/// Measured 6 ms at the median, 34 ms at the 99th percentile (three
/// replicas on a 2-core machine; the test prints its own); the bound leaves
/// room for a loaded machine, and is the poll that covers lost
/// notifications.
const OTHER_REPLICA_BOUND: Duration = Duration::from_secs(1);
/// Writes whose visibility is timed.
const TIMED_WRITES: usize = 40;

/// Three replicas on one fresh database.
async fn replicas() -> Vec<Server> {
    let first = Server::start_on_backend(Backend::Postgres).await;
    let second = first.start_replica().await;
    let third = first.start_replica().await;
    vec![first, second, third]
}

async fn clients(servers: &[Server]) -> Vec<Engram> {
    let mut clients = Vec::new();
    for server in servers {
        clients.push(server.client().await);
    }
    clients
}

/// The contents of `query`'s hits in `scope`.
async fn found(engram: &Engram, scope: &proto::Scope, query: &str) -> Vec<String> {
    search(
        engram,
        proto::SearchMemoriesRequest {
            scope: Some(scope.clone()),
            query: query.into(),
            limit: 5,
            ..Default::default()
        },
    )
    .await
    .into_iter()
    .map(|hit| hit.memory.expect("a hit has its memory").content)
    .collect()
}

/// The `p`th percentile of `sorted`.
fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

#[tokio::test]
async fn a_write_is_found_at_once_on_its_replica_and_within_the_bound_on_the_others() {
    let servers = replicas().await;
    let engrams = clients(&servers).await;
    let ns = scope("visible");
    let mut lags = Vec::new();
    for i in 0..TIMED_WRITES {
        let (writer, readers) = (i % engrams.len(), [(i + 1) % 3, (i + 2) % 3]);
        let content = format!("zebra{i} crossed the road at dawn");
        create(&engrams[writer], &ns, input(MemoryType::Fact, &content)).await;
        let acknowledged = Instant::now();
        assert_eq!(
            found(&engrams[writer], &ns, &format!("zebra{i}")).await,
            std::slice::from_ref(&content),
            "read your writes on the replica that took it"
        );
        for reader in readers {
            loop {
                if found(&engrams[reader], &ns, &format!("zebra{i}")).await == [content.as_str()] {
                    lags.push(acknowledged.elapsed());
                    break;
                }
                assert!(
                    acknowledged.elapsed() < OTHER_REPLICA_BOUND,
                    "write {i} was not found through replica {reader} within {OTHER_REPLICA_BOUND:?}"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    }
    lags.sort();
    eprintln!(
        "visibility on another replica over {} reads: p50 {:?}, p99 {:?}, max {:?}",
        lags.len(),
        percentile(&lags, 50),
        percentile(&lags, 99),
        lags[lags.len() - 1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_memory_created_through_every_replica_at_once_is_stored_once_with_every_sighting() {
    const CREATES: usize = 60;
    let servers = replicas().await;
    let engrams = clients(&servers).await;
    let ns = scope("merged");
    let creates: Vec<_> = (0..CREATES)
        .map(|i| {
            let engram = engrams[i % engrams.len()].clone();
            let ns = ns.clone();
            tokio::spawn(async move {
                create(
                    &engram,
                    &ns,
                    input(MemoryType::Fact, "The deploy key rotates monthly"),
                )
                .await
            })
        })
        .collect();
    let mut created = 0;
    for create in creates {
        let answer = create.await.expect("a create");
        created += usize::from(answer.result() == WriteResult::Created);
    }
    assert_eq!(created, 1, "one create stored it, the others merged");
    let stored = list_all(&engrams[0], &ns, 10).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(
        stored[0].seen_count, CREATES as i64,
        "every sighting counted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_id_sent_through_every_replica_at_once_is_written_once() {
    const RETRIES: usize = 30;
    let servers = replicas().await;
    let engrams = clients(&servers).await;
    let ns = scope("idempotent");
    let sends: Vec<_> = (0..RETRIES)
        .map(|i| {
            let engram = engrams[i % engrams.len()].clone();
            let ns = ns.clone();
            tokio::spawn(async move {
                engram
                    .memory()
                    .create_memory(proto::CreateMemoryRequest {
                        scope: Some(ns),
                        memory: Some(input(MemoryType::Note, "Sent once, retried everywhere")),
                        request_id: "one-request".into(),
                        ..Default::default()
                    })
                    .await
                    .expect("a create")
            })
        })
        .collect();
    let mut answers = Vec::new();
    for send in sends {
        answers.push(send.await.expect("a send"));
    }
    assert!(
        answers.iter().all(|a| *a == answers[0]),
        "one answer for all"
    );
    let stored = list_all(&engrams[0], &ns, 10).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].seen_count, 1, "written once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outcomes_recorded_through_every_replica_at_once_learn_one_heuristic_per_group() {
    const OUTCOMES: usize = 2_000;
    const IN_FLIGHT: usize = 60;
    let servers = replicas().await;
    let engrams = clients(&servers).await;
    let ns = proto::Scope {
        agent_id: "tester".into(),
        ..scope("learning")
    };
    // Two groups of similar wordings: each must end in one heuristic.
    let wordings = [
        [
            "retry the flaky request with backoff",
            "retry flaky request with backoff",
        ],
        [
            "check the page title before clicking",
            "check page title before clicking",
        ],
    ];
    let workers: Vec<_> = (0..IN_FLIGHT)
        .map(|worker| {
            let engram = engrams[worker % engrams.len()].clone();
            let ns = ns.clone();
            tokio::spawn(async move {
                for i in (worker..OUTCOMES).step_by(IN_FLIGHT) {
                    engram
                        .learning()
                        .record_outcome(proto::RecordOutcomeRequest {
                            scope: Some(ns.clone()),
                            task: "test the login form".into(),
                            task_type: "form_testing".into(),
                            success: i % 5 != 0,
                            strategy: wordings[i % 2][(i / 2) % 2].into(),
                            ..Default::default()
                        })
                        .await
                        .expect("record outcome");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("worker");
    }
    let heuristics = engrams[1]
        .learning()
        .list_heuristics(proto::ListHeuristicsRequest {
            scope: Some(ns.clone()),
            page_size: 100,
            ..Default::default()
        })
        .await
        .expect("list heuristics")
        .heuristics;
    assert_eq!(
        heuristics.len(),
        2,
        "one per strategy group: {heuristics:?}"
    );
    let outcomes = engrams[2]
        .learning()
        .list_outcomes(proto::ListOutcomesRequest {
            scope: Some(ns.clone()),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list outcomes");
    let mut stored = outcomes.outcomes.len();
    let mut token = outcomes.next_page_token;
    while !token.is_empty() {
        let page = engrams[2]
            .learning()
            .list_outcomes(proto::ListOutcomesRequest {
                scope: Some(ns.clone()),
                page_size: 1000,
                page_token: token,
                ..Default::default()
            })
            .await
            .expect("list outcomes");
        stored += page.outcomes.len();
        token = page.next_page_token;
    }
    assert_eq!(stored, OUTCOMES, "every outcome stored once");
    // Every outcome counted in its group's heuristic exactly once.
    let counted: i64 = heuristics.iter().map(|h| h.occurrence_count).sum();
    assert_eq!(counted, OUTCOMES as i64, "{heuristics:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_killed_mid_write_loses_no_acknowledged_write() {
    let mut servers = replicas().await;
    let engrams = clients(&servers).await;
    let ns = scope("killed");
    let writer = {
        let engram = engrams[0].clone();
        let ns = ns.clone();
        tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            for i in 0.. {
                let sent = engram
                    .memory()
                    .create_memory(proto::CreateMemoryRequest {
                        scope: Some(ns.clone()),
                        memory: Some(input(MemoryType::Event, &format!("event {i}"))),
                        ..Default::default()
                    })
                    .await;
                match sent {
                    Ok(answer) => acknowledged.push(answer.memory.expect("a memory").id),
                    Err(_) => return acknowledged,
                }
            }
            acknowledged
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    servers[0].kill().await;
    let acknowledged = writer.await.expect("the writer");
    assert!(
        !acknowledged.is_empty(),
        "some writes were acknowledged first"
    );
    let stored: std::collections::HashSet<String> = list_all(&engrams[1], &ns, 500)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect();
    for id in &acknowledged {
        assert!(stored.contains(id), "acknowledged write {id} is stored");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watch_on_one_replica_sees_the_writes_made_through_the_others_in_order() {
    const WRITES: usize = 30;
    let servers = replicas().await;
    let engrams = clients(&servers).await;
    let ns = scope("watched");
    let mut watch = engrams[1]
        .memory()
        .watch_memories(WatchMemories::new(ns.clone()))
        .await
        .expect("start a watch on the second replica");
    // Writes through the first and third replicas, one after another: each
    // acknowledged before the next is sent, so commit order is this order.
    let mut written = Vec::new();
    for i in 0..WRITES {
        let engram = &engrams[if i % 2 == 0 { 0 } else { 2 }];
        let id = create(
            engram,
            &ns,
            input(MemoryType::Fact, &format!("watched fact {i}")),
        )
        .await
        .memory
        .expect("the memory")
        .id;
        written.push((RevisionAction::Created, id));
    }
    let removed = written[3].1.clone();
    engrams[2]
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns.clone()),
            id: removed.clone(),
            etag: String::new(),
        })
        .await
        .expect("delete through the third replica");
    written.push((RevisionAction::Deleted, removed));

    let mut seen = Vec::new();
    let mut cursor = String::new();
    while seen.len() < written.len() {
        let event = next_event(&mut watch).await;
        seen.push((event.action(), event.memory_id));
        if seen.len() == WRITES / 2 {
            cursor = event.cursor;
        }
    }
    assert_eq!(seen, written, "every write, once, in the order it was made");

    // A cursor of one replica resumes on another: the feed is the database's.
    let mut resumed = engrams[0]
        .memory()
        .watch_memories(WatchMemories::new(ns.clone()).cursor(cursor))
        .await
        .expect("resume the watch on the first replica");
    let mut after = Vec::new();
    while after.len() < written.len() - WRITES / 2 {
        let event = next_event(&mut resumed).await;
        after.push((event.action(), event.memory_id));
    }
    assert_eq!(after, written[WRITES / 2..], "no gap, no duplicate");
}

/// The next event of `watch`.
async fn next_event(watch: &mut engram_client::MemoryWatch) -> proto::MemoryEvent {
    tokio::time::timeout(Duration::from_secs(20), watch.next())
        .await
        .expect("an event in time")
        .expect("the watch goes on")
        .expect("an event, not an error")
}

#[tokio::test]
async fn the_readme_runs_two_replicas_and_finds_a_write_through_the_other() {
    // readme: tests/operator/replicas.sh, on a fresh database. The script
    // fails unless the memory written through one replica is found through
    // the other.
    let database = TestDatabase::create().await;
    let dir = tempfile::TempDir::new().expect("temp dir");
    tokio::time::timeout(
        Duration::from_secs(120),
        run_operator_script_with_env(
            "replicas.sh",
            dir.path(),
            &[("ENGRAM_DATABASE", database.url())],
        ),
    )
    .await
    .expect("the script ends within two minutes");
    // Both replicas made an index of their own in the folder.
    for index in ["index-a", "index-b"] {
        assert!(dir.path().join(index).is_dir(), "{index} made");
    }
}
