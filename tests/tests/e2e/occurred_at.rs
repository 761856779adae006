//! When the remembered thing happened (`occurred_at`): set by the caller or
//! the create time, validated, kept by merges, filtered on alike by lists
//! and searches, the age search recency is measured from, and kept across
//! restarts and a rebuilt index.

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use engram_client::Engram;
use engram_client::proto::{self, MemoryType, SemanticSearch, WriteResult};
use engram_tests::{
    Server, assert_close, assert_rejects, create, embedded, input, list_all, listed_ids, scope,
    search,
};
use prost_types::Timestamp;

const DAY: i64 = 24 * 3600 * 1_000_000;
/// The default half-life of recency.
const HALF_LIFE: i64 = 30 * DAY;

fn now_micros() -> i64 {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970");
    i64::try_from(since_epoch.as_micros()).expect("micros fit")
}

fn timestamp(micros: i64) -> Timestamp {
    Timestamp {
        seconds: micros.div_euclid(1_000_000),
        nanos: i32::try_from(micros.rem_euclid(1_000_000) * 1_000).expect("nanos fit"),
    }
}

fn micros(time: Option<&Timestamp>) -> i64 {
    let time = time.expect("a time");
    time.seconds * 1_000_000 + i64::from(time.nanos / 1_000)
}

fn occurred(memory: &proto::Memory) -> i64 {
    micros(memory.occurred_at.as_ref())
}

/// A memory of what happened at `occurred_at` (microseconds since the epoch).
fn happened(memory_type: MemoryType, content: &str, occurred_at: i64) -> proto::MemoryInput {
    proto::MemoryInput {
        occurred_at: Some(timestamp(occurred_at)),
        ..input(memory_type, content)
    }
}

/// The memory `id` as GetMemory reads it, less its provenance (which
/// only GetMemory shows), so that it compares with what the writes return.
async fn get(engram: &Engram, ns: &proto::Scope, id: &str) -> proto::Memory {
    let mut got = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: id.to_owned(),
        })
        .await
        .expect("get");
    assert!(got.provenance.take().is_some(), "{got:?}");
    got
}

/// The hits of a search of `ns` for `query` with `filter`.
async fn find(
    engram: &Engram,
    ns: &proto::Scope,
    query: &str,
    filter: &proto::MemoryFilter,
) -> Vec<proto::SearchHit> {
    search(
        engram,
        proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: query.into(),
            filter: Some(filter.clone()),
            limit: 100,
            ..Default::default()
        },
    )
    .await
}

/// UpdateMemory of occurred_at alone.
async fn update_occurred_at(
    engram: &Engram,
    ns: &proto::Scope,
    id: &str,
    occurred_at: Option<Timestamp>,
) -> Result<proto::Memory, engram_client::Error> {
    engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(ns.clone()),
            id: id.to_owned(),
            memory: Some(proto::MemoryInput {
                occurred_at,
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["occurred_at".into()],
            }),
            etag: String::new(),
        })
        .await
}

fn hit_ids(hits: &[proto::SearchHit]) -> Vec<String> {
    hits.iter()
        .map(|h| h.memory.as_ref().expect("memory").id.clone())
        .collect()
}

/// The ids ListMemories and SearchMemories (for `query`) return with
/// `filter`, each as a set.
async fn listed_and_found(
    engram: &Engram,
    ns: &proto::Scope,
    query: &str,
    filter: &proto::MemoryFilter,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let found = find(engram, ns, query, filter).await;
    (
        listed_ids(engram, ns, filter).await,
        hit_ids(&found).into_iter().collect(),
    )
}

/// A filter on when things happened, from microseconds since the epoch.
fn occurred_between(after: Option<i64>, before: Option<i64>) -> proto::MemoryFilter {
    proto::MemoryFilter {
        occurred_after: after.map(timestamp),
        occurred_before: before.map(timestamp),
        ..Default::default()
    }
}

/// The memory `id` once a search's access to it is recorded: its
/// last_access_time is the clock that search scored with.
async fn accessed(engram: &Engram, ns: &proto::Scope, id: &str) -> proto::Memory {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let memory = get(engram, ns, id).await;
        if memory.last_access_time.is_some() {
            return memory;
        }
        assert!(Instant::now() < deadline, "the access was never recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `0.5^(age / 30 days)`, as DESIGN §4 defines recency.
fn recency(occurred_at: i64, at: i64) -> f64 {
    0.5f64.powf((at - occurred_at) as f64 / HALF_LIFE as f64)
}

#[tokio::test]
async fn a_past_occurred_at_comes_back_from_create_get_list_and_search() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-round-trip");
    // Odd microseconds, so that any rounding shows.
    let occurred_at = now_micros() - 400 * DAY + 123_457;
    let created = create(
        &engram,
        &ns,
        happened(
            MemoryType::Event,
            "The checkout outage began after the cache flush",
            occurred_at,
        ),
    )
    .await;
    assert_eq!(created.result(), WriteResult::Created);
    let stored = created.memory.expect("memory");
    assert_eq!(occurred(&stored), occurred_at);
    assert!(micros(stored.create_time.as_ref()) > occurred_at);

    assert_eq!(get(&engram, &ns, &stored.id).await, stored);
    assert_eq!(
        list_all(&engram, &ns, 50).await,
        std::slice::from_ref(&stored)
    );
    let hits = find(
        &engram,
        &ns,
        "checkout outage",
        &proto::MemoryFilter::default(),
    )
    .await;
    assert_eq!(hit_ids(&hits), [stored.id.as_str()]);
    assert_eq!(
        hits[0].memory.as_ref().unwrap().occurred_at,
        stored.occurred_at
    );
}

#[tokio::test]
async fn without_occurred_at_a_memory_happened_when_it_was_stored() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-default");
    let alone = create(
        &engram,
        &ns,
        input(MemoryType::Fact, "The API listens on 8080"),
    )
    .await
    .memory
    .expect("memory");
    assert_eq!(alone.occurred_at, alone.create_time);

    let batch = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: vec![
                input(MemoryType::Fact, "The queue is RabbitMQ"),
                input(MemoryType::Fact, "The cache is Redis"),
            ],
            ..Default::default()
        })
        .await
        .expect("batch")
        .results;
    // Concurrent creates are stored together by one statement.
    let concurrent: Vec<_> = (0..16)
        .map(|i| {
            let (engram, ns) = (engram.clone(), ns.clone());
            tokio::spawn(async move {
                create(&engram, &ns, input(MemoryType::Note, &format!("note {i}"))).await
            })
        })
        .collect();
    let mut stored: Vec<proto::Memory> = batch.into_iter().filter_map(|r| r.memory).collect();
    for task in concurrent {
        stored.push(task.await.expect("create task").memory.expect("memory"));
    }
    assert_eq!(stored.len(), 18);
    for memory in stored {
        assert_eq!(memory.occurred_at, memory.create_time, "{memory:?}");
        assert_eq!(
            get(&engram, &ns, &memory.id).await.occurred_at,
            memory.create_time
        );
    }
}

#[tokio::test]
async fn an_occurred_at_over_a_day_ahead_or_malformed_is_invalid_and_stores_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-invalid");
    let now = now_micros();
    for (occurred_at, what) in [
        (timestamp(now + 2 * DAY), "two days ahead"),
        (
            Timestamp {
                seconds: 0,
                nanos: -1,
            },
            "negative nanos",
        ),
        (
            Timestamp {
                seconds: 0,
                nanos: 1_000_000_000,
            },
            "a whole second of nanos",
        ),
        (
            Timestamp {
                seconds: 253_402_300_800,
                nanos: 0,
            },
            "after the year 9999",
        ),
    ] {
        let refused = engram
            .memory()
            .create_memory(proto::CreateMemoryRequest {
                scope: Some(ns.clone()),
                memory: Some(proto::MemoryInput {
                    occurred_at: Some(occurred_at),
                    ..input(MemoryType::Event, "The deploy went out")
                }),
                ..Default::default()
            })
            .await
            .expect_err(what);
        assert_rejects(&refused, "memory.occurred_at");
    }
    let refused = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: vec![
                happened(MemoryType::Event, "The deploy went out", now - DAY),
                happened(
                    MemoryType::Event,
                    "The deploy was rolled back",
                    now + 2 * DAY,
                ),
            ],
            ..Default::default()
        })
        .await
        .expect_err("a batch with one bad item");
    assert_rejects(&refused, "memories[1].occurred_at");
    assert!(
        list_all(&engram, &ns, 50).await.is_empty(),
        "nothing stored"
    );

    // Less than a day ahead is a caller's clock running fast: accepted.
    let ahead = now + DAY - 3600 * 1_000_000;
    let stored = create(
        &engram,
        &ns,
        happened(MemoryType::Event, "The deploy went out", ahead),
    )
    .await
    .memory
    .expect("memory");
    assert_eq!(occurred(&stored), ahead);

    let refused = update_occurred_at(&engram, &ns, &stored.id, Some(timestamp(now + 3 * DAY)))
        .await
        .expect_err("an update three days ahead");
    assert_rejects(&refused, "memory.occurred_at");
    assert_eq!(get(&engram, &ns, &stored.id).await, stored, "unchanged");

    // A filter's range must not be empty, and its ends must be times.
    let empty = occurred_between(Some(now), Some(now));
    let listed = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            filter: Some(empty.clone()),
            ..Default::default()
        })
        .await
        .expect_err("an empty range");
    assert_rejects(&listed, "filter.occurred_before");
    let searched = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: "deploy".into(),
            filter: Some(proto::MemoryFilter {
                occurred_after: Some(Timestamp {
                    seconds: 0,
                    nanos: -5,
                }),
                ..empty
            }),
            ..Default::default()
        })
        .await
        .expect_err("a malformed end");
    assert_rejects(&searched, "filter.occurred_after");
}

#[tokio::test]
async fn list_and_search_filter_by_when_it_happened_alike() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-filters");
    let now = now_micros();
    let mut memories = Vec::new();
    for (i, days_ago) in [100, 50, 10].into_iter().enumerate() {
        let content = format!("Incident {i}: the payment queue stalled");
        let memory = create(
            &engram,
            &ns,
            happened(MemoryType::Event, &content, now - days_ago * DAY),
        )
        .await;
        memories.push(memory.memory.expect("memory"));
    }
    // And one that happened when it was stored.
    let today = create(
        &engram,
        &ns,
        input(MemoryType::Event, "Incident 3: the payment queue stalled"),
    )
    .await;
    memories.push(today.memory.expect("memory"));
    let at: Vec<i64> = memories.iter().map(occurred).collect();

    let ranges = [
        (Some(at[1]), None),
        (None, Some(at[1])),
        // The start is in the range, the end is not.
        (Some(at[0]), Some(at[2])),
        (Some(at[2] + 1), None),
        (Some(now - 200 * DAY), Some(now - 150 * DAY)),
    ];
    for (after, before) in ranges {
        let expected: BTreeSet<String> = memories
            .iter()
            .filter(|m| after.is_none_or(|a| occurred(m) >= a))
            .filter(|m| before.is_none_or(|b| occurred(m) < b))
            .map(|m| m.id.clone())
            .collect();
        let filter = occurred_between(after, before);
        let (listed, found) = listed_and_found(&engram, &ns, "payment queue", &filter).await;
        assert_eq!(listed, expected, "ListMemories {after:?}..{before:?}");
        assert_eq!(found, expected, "SearchMemories {after:?}..{before:?}");
    }
    assert_eq!(
        listed_and_found(
            &engram,
            &ns,
            "payment queue",
            &occurred_between(Some(at[1]), None)
        )
        .await
        .0
        .len(),
        3
    );

    // The created and the occurred ranges are separate: all were created
    // just now, whenever they happened.
    let both = proto::MemoryFilter {
        created_after: Some(timestamp(now - DAY)),
        ..occurred_between(None, Some(at[2]))
    };
    let (listed, found) = listed_and_found(&engram, &ns, "payment queue", &both).await;
    let expected: BTreeSet<String> = memories[..2].iter().map(|m| m.id.clone()).collect();
    assert_eq!((listed, found), (expected.clone(), expected));
}

#[tokio::test]
async fn what_happened_recently_ranks_above_what_happened_long_ago() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-recency");
    let content = "The nightly backup job was moved to the replica";
    // The same words, so the same relevance; the memory of long ago is
    // stored last, so it would win a tie (and its update_time is as fresh).
    let recent = create(&engram, &ns, input(MemoryType::Event, content))
        .await
        .memory
        .expect("memory");
    let long_ago = create(
        &engram,
        &ns,
        happened(MemoryType::Fact, content, now_micros() - 90 * DAY),
    )
    .await
    .memory
    .expect("memory");

    let hits = find(
        &engram,
        &ns,
        "nightly backup",
        &proto::MemoryFilter::default(),
    )
    .await;
    assert_eq!(hit_ids(&hits), [recent.id.clone(), long_ago.id.clone()]);
    assert_eq!(hits[0].relevance, hits[1].relevance);
    assert!(hits[0].recency > 0.99, "{:?}", hits[0]);
    assert!(hits[0].recency > hits[1].recency);

    // Exactly 0.5^(age / 30 days), the age taken at the search's own clock,
    // which it stamped as the hits' last access.
    let searched_at = micros(
        accessed(&engram, &ns, &long_ago.id)
            .await
            .last_access_time
            .as_ref(),
    );
    assert_close(
        hits[1].recency,
        recency(occurred(&long_ago), searched_at),
        "recency of what happened 90 days ago",
    );
    assert!((hits[1].recency - 0.125).abs() < 1e-6, "{:?}", hits[1]);
    assert_close(
        hits[0].recency,
        recency(occurred(&recent), searched_at),
        "recency of what happened just now",
    );
    for hit in &hits {
        assert_close(
            hit.score,
            0.6 * hit.relevance + 0.2 * hit.recency + 0.2 * hit.importance,
            "score",
        );
    }
}

#[tokio::test]
async fn a_merged_duplicate_keeps_the_later_occurred_at() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-merge");
    let content = "Deploy of checkout v2 failed on the migration";
    let now = now_micros();
    let store = |occurred_at: Option<i64>| {
        let mut memory = input(MemoryType::Event, content);
        memory.occurred_at = occurred_at.map(timestamp);
        create(&engram, &ns, memory)
    };
    let first = store(Some(now - 10 * DAY)).await.memory.expect("memory");
    for (occurred_at, kept) in [
        // Told again of an earlier time: the later one stays.
        (now - 20 * DAY, now - 10 * DAY),
        // It happened again.
        (now - 5 * DAY, now - 5 * DAY),
    ] {
        let merged = store(Some(occurred_at)).await;
        assert_eq!(merged.result(), WriteResult::Merged);
        let merged = merged.memory.expect("memory");
        assert_eq!(merged.id, first.id);
        assert_eq!(occurred(&merged), kept);
    }
    // Stored again without a time: it happened as it was stored.
    let again = store(None).await.memory.expect("memory");
    assert_eq!(
        (again.id.as_str(), again.seen_count),
        (first.id.as_str(), 4)
    );
    assert_eq!(again.occurred_at, again.update_time);
    assert_eq!(
        get(&engram, &ns, &first.id).await.occurred_at,
        again.occurred_at
    );
    // Search sees the merged time: in the last day, and recent.
    let hits = find(
        &engram,
        &ns,
        "checkout migration",
        &occurred_between(Some(now - DAY), None),
    )
    .await;
    assert_eq!(hit_ids(&hits), [first.id.as_str()]);
    assert!(hits[0].recency > 0.99, "{:?}", hits[0]);

    // Identical items of one batch merge the same way, in order.
    let outage = "The office network was down";
    let results = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: [30, 3, 40]
                .into_iter()
                .map(|days_ago| happened(MemoryType::Event, outage, now - days_ago * DAY))
                .collect(),
            ..Default::default()
        })
        .await
        .expect("batch")
        .results;
    let last = results[2].memory.as_ref().expect("memory");
    assert_eq!(results[2].result(), WriteResult::Merged);
    assert_eq!((last.seen_count, occurred(last)), (3, now - 3 * DAY));
}

#[tokio::test]
async fn updating_occurred_at_moves_its_recency_and_unsetting_it_resets_it_to_the_create_time() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-update");
    let stored = create(
        &engram,
        &ns,
        input(
            MemoryType::Event,
            "The load balancer certificate was renewed",
        ),
    )
    .await
    .memory
    .expect("memory");
    let month_ago = now_micros() - HALF_LIFE;
    let moved = update_occurred_at(&engram, &ns, &stored.id, Some(timestamp(month_ago)))
        .await
        .expect("update");
    assert_eq!(occurred(&moved), month_ago);
    assert_eq!(
        moved.content, stored.content,
        "only the masked field changes"
    );
    let hits = find(
        &engram,
        &ns,
        "certificate renewed",
        &proto::MemoryFilter::default(),
    )
    .await;
    assert!((hits[0].recency - 0.5).abs() < 1e-6, "{:?}", hits[0]);

    let reset = update_occurred_at(&engram, &ns, &stored.id, None)
        .await
        .expect("update");
    assert_eq!(reset.occurred_at, stored.create_time);
    assert_eq!(
        get(&engram, &ns, &stored.id).await.occurred_at,
        stored.create_time
    );
}

#[tokio::test]
async fn occurred_at_survives_a_restart_and_a_rebuilt_index() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("occurred-restart");
    let content = "The data center in Frankfurt lost power";
    let two_months_ago = now_micros() - 2 * HALF_LIFE;
    let old = create(
        &engram,
        &ns,
        happened(MemoryType::Event, content, two_months_ago),
    )
    .await
    .memory
    .expect("memory");
    let fresh = create(&engram, &ns, input(MemoryType::Fact, content))
        .await
        .memory
        .expect("memory");

    async fn check(server: &Server, ns: &proto::Scope, old: &proto::Memory, fresh: &proto::Memory) {
        let engram = server.client().await;
        assert_eq!(get(&engram, ns, &old.id).await.occurred_at, old.occurred_at);
        let hits = find(
            &engram,
            ns,
            "Frankfurt power",
            &proto::MemoryFilter::default(),
        )
        .await;
        assert_eq!(hit_ids(&hits), [fresh.id.clone(), old.id.clone()]);
        assert!((hits[1].recency - 0.25).abs() < 1e-6, "{:?}", hits[1]);
        let before = occurred_between(None, Some(occurred(old) + 1));
        let (listed, found) = listed_and_found(&engram, ns, "Frankfurt power", &before).await;
        let expected = BTreeSet::from([old.id.clone()]);
        assert_eq!((listed, found), (expected.clone(), expected));
    }

    // From the committed index, caught up from its checkpoint.
    let mut server = server.restart().await;
    check(&server, &ns, &old, &fresh).await;
    // A lost index folder is rebuilt from the database.
    server.stop().await;
    std::fs::remove_dir_all(server.index_dir()).expect("remove the index folder");
    let server = server.start_again().await;
    check(&server, &ns, &old, &fresh).await;
}

#[tokio::test]
async fn the_vector_index_filters_and_scores_by_when_it_happened() {
    let server = Server::start_with_test_model().await;
    let engram = server.client().await;
    let ns = scope("occurred-vectors");
    // Found by meaning only: not one word in common with the query.
    let dog = create(
        &engram,
        &ns,
        happened(
            MemoryType::Event,
            "My dog loves playing fetch in the park",
            now_micros() - 90 * DAY,
        ),
    )
    .await
    .memory
    .expect("memory");
    let tax = create(
        &engram,
        &ns,
        input(MemoryType::Fact, "The quarterly tax report is due in April"),
    )
    .await
    .memory
    .expect("memory");
    embedded(&engram, &ns).await;

    let query = "puppy enjoys chasing a ball outdoors";
    let found = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: query.into(),
            ..Default::default()
        })
        .await
        .expect("search");
    assert_eq!(found.semantic(), SemanticSearch::Complete);
    assert_eq!(hit_ids(&found.hits).first(), Some(&dog.id));
    assert!(
        (found.hits[0].recency - 0.125).abs() < 1e-6,
        "{:?}",
        found.hits[0]
    );

    // Every memory of the namespace is a candidate by meaning, so a search
    // returns just what the filter lets through.
    let month_ago = now_micros() - HALF_LIFE;
    for (filter, expected) in [
        (occurred_between(None, Some(month_ago)), &dog.id),
        (occurred_between(Some(month_ago), None), &tax.id),
    ] {
        let expected = BTreeSet::from([expected.clone()]);
        let (listed, found) = listed_and_found(&engram, &ns, query, &filter).await;
        assert_eq!((listed, found), (expected.clone(), expected), "{filter:?}");
    }
}
