//! `--reranker api` against a local fake `/rerank` server: the best fused
//! candidates come back in the reranker's order (whichever of the two
//! common reply shapes it speaks), and whenever it fails — an error status,
//! a hang-up, a late, partial or malformed reply — a search still succeeds,
//! in its own order. The API key goes in the Authorization header.

use std::time::{Duration, Instant};

use engram_client::Engram;
use engram_client::proto::{self, MemoryType};
use engram_tests::fake_rerank::{FakeReranker, Reply, texts};
use engram_tests::{Server, create, hit_contents, input, refuses_to_start, scope};

const KEY_ENV: &str = "ENGRAM_RERANKER_API_KEY";
const KEY: &str = "rr-test-key-5e0b9c";
const MODEL: &str = "fake-reranker";
/// What the fake prefers: a memory holding it is the reranker's first.
const PREFERRED: &str = "zebra";
const QUERY: &str = "deploy pipeline";
const MEMORIES: [&str; 5] = [
    "The deploy pipeline runs the deploy pipeline checks before every deploy",
    "Deploy pipeline: staging goes first, then production",
    "The pipeline for the deploy uses zebra canaries",
    "The deploy waits for a green build",
    "Lunch is at noon on Fridays",
];

async fn start(fake: &FakeReranker) -> Server {
    Server::start_with_env(
        &[
            "--reranker",
            "api",
            "--reranker-base-url",
            &fake.base_url,
            "--reranker-model",
            MODEL,
            "--reranker-timeout",
            "1s",
        ],
        &[(KEY_ENV, KEY)],
    )
    .await
}

async fn search(engram: &Engram, ns: &proto::Scope) -> proto::SearchMemoriesResponse {
    engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: QUERY.into(),
            limit: 10,
            ..Default::default()
        })
        .await
        .expect("a search succeeds whatever the reranker does")
}

fn contents(response: &proto::SearchMemoriesResponse) -> Vec<String> {
    hit_contents(response)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

fn scores_fall(response: &proto::SearchMemoriesResponse) -> bool {
    response.hits.windows(2).all(|w| w[0].score >= w[1].score)
}

#[tokio::test]
async fn the_reranker_orders_the_best_candidates_and_a_failing_one_changes_nothing() {
    let fake = FakeReranker::start(Reply::Status(500)).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let ns = scope("rerank");
    for memory in MEMORIES {
        create(&engram, &ns, input(MemoryType::Fact, memory)).await;
    }

    // The fused order, while the reranker fails.
    let fused = contents(&search(&engram, &ns).await);
    assert!(fused.len() >= 4, "{fused:?}");
    assert!(!fused[0].contains(PREFERRED), "{fused:?}");
    assert!(fused.iter().any(|c| c.contains(PREFERRED)), "{fused:?}");
    let asked = fake.seen();
    assert!(!asked.is_empty(), "the reranker was asked");
    let request = asked.last().expect("a request");
    assert_eq!(
        request.authorization.as_deref(),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(request.body["query"], QUERY);
    assert_eq!(request.body["model"], MODEL);
    assert_eq!(texts(request).len(), fused.len(), "every candidate is sent");
    assert_eq!(request.body["texts"], request.body["documents"]);

    // Both reply shapes reorder: the preferred memory first, the others in
    // the fused order, and the scores still fall hit by hit.
    let mut reranked: Vec<String> = fused
        .iter()
        .filter(|c| c.contains(PREFERRED))
        .cloned()
        .collect();
    reranked.extend(fused.iter().filter(|c| !c.contains(PREFERRED)).cloned());
    for reply in [
        Reply::Prefer(PREFERRED.into()),
        Reply::PreferCohere(PREFERRED.into()),
    ] {
        fake.reply(reply.clone());
        let response = search(&engram, &ns).await;
        assert_eq!(contents(&response), reranked, "{reply:?}");
        assert!(scores_fall(&response), "{reply:?}");
    }

    // Every failure leaves the fused order, within the timeout.
    for reply in [
        Reply::Status(503),
        Reply::Hangup,
        Reply::NotJsonBody,
        Reply::OneMissing(PREFERRED.into()),
        Reply::IndexOutOfRange,
        Reply::Garbage,
        Reply::Slow(Duration::from_secs(5), PREFERRED.into()),
    ] {
        fake.reply(reply.clone());
        let started = Instant::now();
        let response = search(&engram, &ns).await;
        assert_eq!(contents(&response), fused, "{reply:?}");
        assert!(scores_fall(&response), "{reply:?}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{reply:?}: the search waited {:?} for a reranker of 1 s",
            started.elapsed()
        );
    }
    assert!(!server.log().contains(KEY), "the key is in no log line");
}

#[tokio::test]
async fn the_reranker_flags_are_checked_at_start() {
    refuses_to_start(
        &["--reranker", "api"],
        &[],
        "--reranker api needs --reranker-base-url and --reranker-model",
    )
    .await;
    refuses_to_start(
        &["--reranker-model", "m"],
        &[],
        "--reranker-base-url and --reranker-model go with --reranker api",
    )
    .await;
    refuses_to_start(
        &[
            "--reranker",
            "api",
            "--reranker-base-url",
            "ftp://example.invalid",
            "--reranker-model",
            "m",
        ],
        &[],
        "--reranker-base-url: expected an http:// or https:// URL",
    )
    .await;
}
