//! Retention: expired memories are purged from the database, and request
//! ids are forgotten once past `--request-id-ttl` (and not before).

use std::time::{Duration, SystemTime};

use engram_client::Code;
use engram_client::proto::{self, MemoryType, WriteResult};
use engram_tests::scrape::Scrape;
use engram_tests::{Server, create, input, list_all, scope};

/// A server with metrics that runs retention every second, with `more` flags.
async fn start(more: &[&str]) -> Server {
    let mut args = vec![
        "--metrics-listen",
        "127.0.0.1:0",
        "--retention-interval",
        "1s",
    ];
    args.extend_from_slice(more);
    Server::start_with_args(&args).await
}

fn purged(scrape: &Scrape, kind: &str) -> f64 {
    scrape.value("engram_retention_purged_total", &[("kind", kind)])
}

fn runs(scrape: &Scrape) -> f64 {
    scrape.value("engram_retention_runs_total", &[("outcome", "ok")])
}

async fn create_with_id(
    engram: &engram_client::Engram,
    namespace: &proto::Scope,
    request_id: &str,
    content: &str,
) -> Result<proto::CreateMemoryResponse, engram_client::Error> {
    engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(namespace.clone()),
            memory: Some(input(MemoryType::Fact, content)),
            request_id: request_id.into(),
            ..Default::default()
        })
        .await
}

#[tokio::test]
async fn expired_memories_are_purged_from_the_database() {
    let server = start(&[]).await;
    let engram = server.client().await;
    let ns = scope("retention");
    // Late enough to be counted, stored, before the first run can purge them.
    let soon = SystemTime::now() + Duration::from_secs(3);
    for i in 0..3 {
        let mut fleeting = input(MemoryType::Event, &format!("the build {i} is red"));
        fleeting.expire_time = Some(prost_types::Timestamp::from(soon));
        create(&engram, &ns, fleeting).await;
    }
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "the build runs on CI"),
    )
    .await;
    let stored =
        |scrape: &Scrape| scrape.get("engram_namespace_memories", &[("namespace", "retention")]);
    assert_eq!(stored(&server.scrape().await), Some(4.0));

    // Stored rows, expired or not, until a run after their expiry purges them.
    let scrape = server
        .scrape_until("the purge of the expired memories", |s| {
            purged(s, "memory") >= 3.0 && stored(s) == Some(1.0)
        })
        .await;
    assert_eq!(purged(&scrape, "memory"), 3.0);
    assert_eq!(scrape.value("engram_memories", &[]), 1.0);
    assert!(runs(&scrape) >= 1.0);
    assert_eq!(
        scrape.value("engram_retention_runs_total", &[("outcome", "error")]),
        0.0
    );
    let left = list_all(&engram, &ns, 10).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].content, "the build runs on CI");
}

#[tokio::test]
async fn a_request_id_within_its_ttl_still_gets_the_first_answer() {
    let server = start(&[]).await;
    let engram = server.client().await;
    let ns = scope("kept-ids");
    let first = create_with_id(&engram, &ns, "retry-me", "the deploy is on Friday")
        .await
        .expect("create");
    let recorded = runs(&server.scrape().await);
    // Two full runs after the id was recorded, with the default time to live.
    server
        .scrape_until("two retention runs", |s| runs(s) >= recorded + 2.0)
        .await;

    let retried = create_with_id(&engram, &ns, "retry-me", "the deploy is on Friday")
        .await
        .expect("retry");
    assert_eq!(retried, first, "the first answer again");
    let reused = create_with_id(&engram, &ns, "retry-me", "another request")
        .await
        .expect_err("the id is still taken");
    assert_eq!(reused.code(), Code::AlreadyExists);
    assert_eq!(list_all(&engram, &ns, 10).await.len(), 1);
    assert_eq!(purged(&server.scrape().await, "request_id"), 0.0);
}

#[tokio::test]
async fn a_request_id_past_its_ttl_is_forgotten_and_may_be_reused() {
    let server = start(&["--request-id-ttl", "1s"]).await;
    let engram = server.client().await;
    let ns = scope("forgotten-ids");
    let first = create_with_id(&engram, &ns, "reuse-me", "the deploy is on Friday")
        .await
        .expect("create")
        .memory
        .expect("the memory");
    create_with_id(&engram, &ns, "send-me-again", "the freeze starts Monday")
        .await
        .expect("create");
    server
        .scrape_until("the purge of the request ids", |s| {
            purged(s, "request_id") >= 2.0
        })
        .await;

    // The id now names a new request: another memory, where it was refused
    // (ALREADY_EXISTS) while the id was kept…
    let other = create_with_id(&engram, &ns, "reuse-me", "the office is closed")
        .await
        .expect("a new request");
    assert_eq!(other.result(), WriteResult::Created);
    assert_ne!(other.memory.as_ref().expect("the memory").id, first.id);
    // …and the same request sent again is a new one too: it merges into
    // the memory it made, where a replay would answer CREATED.
    let again = create_with_id(&engram, &ns, "send-me-again", "the freeze starts Monday")
        .await
        .expect("create");
    assert_eq!(again.result(), WriteResult::Merged);
    assert_eq!(list_all(&engram, &ns, 10).await.len(), 3);
}
