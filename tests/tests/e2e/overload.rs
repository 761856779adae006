//! Overload protection over the real server: beyond `--max-concurrent-calls`
//! calls in flight, and beyond a key's `--rate-limit-per-key`, calls are
//! shed — answered at once, unread, with RESOURCE_EXHAUSTED and a
//! `google.rpc.RetryInfo` delay — while health still answers; the Rust
//! client waits the delay and tries again, writes too.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use engram_client::proto::memory_service_client::MemoryServiceClient;
use engram_client::proto::{self, MemoryType};
use engram_client::{Code, Engram, Error, RetryPolicy, StartEpisode};
use engram_tests::{Server, input, list_all, refuses_to_start, scope};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
use tonic_types::StatusExt as _;

/// The calls in flight the tests allow.
const MAX_CALLS: &str = "2";

/// Retries enough to outlast the slots held in a test, however slowly it runs.
const PATIENT: RetryPolicy = RetryPolicy {
    max_attempts: 100,
    initial_backoff: Duration::from_millis(100),
    max_backoff: Duration::from_secs(1),
    multiplier: 2.0,
};

/// A server that allows [`MAX_CALLS`] in flight, with metrics, and a
/// client retrying by `policy`.
async fn start_limited(policy: RetryPolicy) -> (Server, Engram) {
    let server = Server::start_with_args(&[
        "--max-concurrent-calls",
        MAX_CALLS,
        "--metrics-listen",
        "127.0.0.1:0",
    ])
    .await;
    let engram = Engram::builder(server.url.clone())
        .retry(policy)
        .connect()
        .await
        .expect("connect");
    (server, engram)
}

/// A StreamSteps call left open, holding one of the server's slots until
/// it is closed.
struct OpenStream {
    sender: mpsc::Sender<proto::StreamStepsRequest>,
    call: JoinHandle<Result<tonic::Response<proto::StreamStepsResponse>, tonic::Status>>,
}

impl OpenStream {
    /// Opens a stream that sends nothing yet.
    fn open(engram: &Engram) -> OpenStream {
        let (sender, mut receiver) = mpsc::channel(1);
        let messages = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
        let mut client = MemoryServiceClient::new(engram.channel());
        let call = tokio::spawn(async move { client.stream_steps(messages).await });
        OpenStream { sender, call }
    }

    /// Ends the stream and waits for the server's answer.
    async fn close(self) {
        drop(self.sender);
        // Whatever the server answers an empty stream, the call is over.
        let _ = self.call.await.expect("the stream's task");
    }
}

/// Opens `count` streams and waits until the server counts them in flight.
async fn hold(server: &Server, engram: &Engram, count: usize) -> Vec<OpenStream> {
    let streams: Vec<OpenStream> = (0..count).map(|_| OpenStream::open(engram)).collect();
    server
        .scrape_until("the streams to be in flight", |s| {
            s.value("engram_calls_in_flight", &[]) == count as f64
        })
        .await;
    streams
}

/// Closes `streams` and waits until the server has let go of their slots.
async fn release(server: &Server, streams: Vec<OpenStream>) {
    for stream in streams {
        stream.close().await;
    }
    server
        .scrape_until("the streams to end", |s| {
            s.value("engram_calls_in_flight", &[]) == 0.0
        })
        .await;
}

fn shed_count(scrape: &engram_tests::scrape::Scrape, reason: &str) -> f64 {
    scrape.value("engram_shed_calls_total", &[("reason", reason)])
}

/// Asserts `error` is a shed call: RESOURCE_EXHAUSTED with a RetryInfo
/// delay above zero, which the client surfaces; returns the delay.
fn assert_shed(error: &Error) -> Duration {
    assert_eq!(error.code(), Code::ResourceExhausted, "{error:?}");
    let status = error.status().expect("the server's answer");
    let delay = status
        .get_details_retry_info()
        .and_then(|retry| retry.retry_delay)
        .expect("a google.rpc.RetryInfo with a delay");
    assert!(delay > Duration::ZERO, "{delay:?}");
    assert_eq!(error.retry_after(), Some(delay));
    assert!(error.is_shed() && error.is_retryable(), "{error:?}");
    delay
}

async fn create(engram: &Engram, content: &str) -> Result<proto::CreateMemoryResponse, Error> {
    engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(scope("overload")),
            memory: Some(input(MemoryType::Fact, content)),
            ..Default::default()
        })
        .await
}

async fn contents(engram: &Engram) -> Vec<String> {
    list_all(engram, &scope("overload"), 100)
        .await
        .into_iter()
        .map(|m| m.content)
        .collect()
}

#[tokio::test]
async fn calls_beyond_the_limit_are_shed_unread_while_health_still_answers() {
    let (server, engram) = start_limited(RetryPolicy::none()).await;
    let streams = hold(&server, &engram, 2).await;

    let shed = create(&engram, "a write that came while the server was busy")
        .await
        .expect_err("shed");
    let delay = assert_shed(&shed);
    assert!(delay < Duration::from_secs(1), "a short delay: {delay:?}");
    assert!(shed.message().contains("busy"), "{}", shed.message());
    let read = engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope("overload")),
        })
        .await
        .expect_err("reads are shed too");
    assert_shed(&read);
    let health = HealthClient::new(engram.channel())
        .check(HealthCheckRequest::default())
        .await
        .expect("health is never shed")
        .into_inner();
    assert_eq!(health.status(), ServingStatus::Serving);

    release(&server, streams).await;
    create(&engram, "a write once the streams ended")
        .await
        .expect("calls succeed again");
    assert_eq!(
        contents(&engram).await,
        ["a write once the streams ended"],
        "nothing of the shed write was stored"
    );
    let scrape = server.scrape().await;
    assert_eq!(shed_count(&scrape, "concurrency"), 2.0);
    assert_eq!(shed_count(&scrape, "rate_limit"), 0.0);
    assert_eq!(
        scrape.value(
            "grpc_server_handled_total",
            &[
                ("grpc_type", "unary"),
                ("grpc_service", "engram.v1.MemoryService"),
                ("grpc_method", "CreateMemory"),
                ("grpc_code", "ResourceExhausted"),
            ]
        ),
        1.0
    );
}

#[tokio::test]
async fn the_client_retries_a_shed_write_once_capacity_frees() {
    let (server, engram) = start_limited(PATIENT).await;
    let streams = hold(&server, &engram, 2).await;

    // No request_id: a write the client would not repeat after UNAVAILABLE.
    let write = {
        let engram = engram.clone();
        tokio::spawn(async move { create(&engram, "a write that waited its turn").await })
    };
    server
        .scrape_until("the write to be shed", |s| {
            shed_count(s, "concurrency") >= 1.0
        })
        .await;
    assert!(!write.is_finished(), "the client waits and tries again");
    release(&server, streams).await;

    write
        .await
        .expect("the write's task")
        .expect("the retried write succeeds");
    assert_eq!(contents(&engram).await, ["a write that waited its turn"]);
}

#[tokio::test]
async fn a_shed_step_stream_is_sent_again_from_a_fresh_stream() {
    let (server, engram) = start_limited(PATIENT).await;
    let episode = engram
        .memory()
        .start_episode(StartEpisode::new(scope("overload"), "crawl"))
        .await
        .expect("start");
    let streams = hold(&server, &engram, 2).await;

    let tries = Arc::new(AtomicUsize::new(0));
    let streamed = {
        let (engram, id, tries) = (engram.clone(), episode.id.clone(), tries.clone());
        tokio::spawn(async move {
            engram
                .memory()
                .stream_steps_from(move || {
                    tries.fetch_add(1, Ordering::SeqCst);
                    let id = id.clone();
                    futures_util::stream::iter((1..=3).map(move |n| proto::StreamStepsRequest {
                        scope: Some(scope("overload")),
                        episode_id: id.clone(),
                        steps: vec![proto::Step {
                            step_number: n,
                            tool: "http".into(),
                            action: format!("fetch page {n}"),
                            result: proto::StepResult::Ok.into(),
                            ..Default::default()
                        }],
                    }))
                })
                .await
        })
    };
    server
        .scrape_until("the stream to be shed", |s| {
            shed_count(s, "concurrency") >= 1.0
        })
        .await;
    assert!(!streamed.is_finished(), "the client waits and tries again");
    release(&server, streams).await;

    let summary = streamed
        .await
        .expect("the stream's task")
        .expect("the stream sent again succeeds");
    assert_eq!((summary.accepted, summary.rejected), (3, 0), "{summary:?}");
    assert!(tries.load(Ordering::SeqCst) >= 2, "a fresh stream per try");
    let stored = engram
        .memory()
        .get_episode(proto::GetEpisodeRequest {
            scope: Some(scope("overload")),
            id: episode.id.clone(),
            ..Default::default()
        })
        .await
        .expect("get");
    assert_eq!(stored.step_count, 3);

    // Without the retrying form, a shed stream is the caller's to handle.
    let streams = hold(&server, &engram, 2).await;
    let once = engram
        .memory()
        .stream_steps(futures_util::stream::iter(Vec::new()))
        .await
        .expect_err("shed");
    assert_shed(&once);
    release(&server, streams).await;
}

#[tokio::test]
async fn each_api_key_has_its_own_rate_limit() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "alpha-key write *\nbeta-key write *\n").expect("key file");
    // One call a minute after a burst of five: no token comes back while
    // the test runs, however slowly.
    let server = Server::start_with_args(&[
        "--auth-keys",
        keys.to_str().expect("utf-8 path"),
        "--rate-limit-per-key",
        "1/m",
        "--rate-limit-burst",
        "5",
        "--metrics-listen",
        "127.0.0.1:0",
    ])
    .await;
    let client = |key: &str| {
        Engram::builder(server.url.clone())
            .api_key(key)
            .retry(RetryPolicy::none())
            .connect()
    };
    let (alpha, beta) = (
        client("alpha-key").await.expect("connect"),
        client("beta-key").await.expect("connect"),
    );

    for call in 1..=5 {
        create(&alpha, &format!("alpha's call {call}"))
            .await
            .unwrap_or_else(|e| panic!("call {call} is within the burst: {e:?}"));
    }
    let limited = create(&alpha, "alpha's sixth call")
        .await
        .expect_err("over the rate");
    let delay = assert_shed(&limited);
    assert!(
        delay > Duration::from_secs(1) && delay <= Duration::from_secs(60),
        "the next token is due within the minute: {delay:?}"
    );
    assert!(
        !limited.message().contains("alpha"),
        "{}",
        limited.message()
    );
    create(&beta, "beta's call")
        .await
        .expect("another key has its own tokens");

    let stored = contents(&beta).await;
    assert!(
        !stored.iter().any(|c| c == "alpha's sixth call"),
        "{stored:?}"
    );
    let scrape = server.scrape().await;
    assert_eq!(shed_count(&scrape, "rate_limit"), 1.0);
    assert_eq!(shed_count(&scrape, "concurrency"), 0.0);
}

#[tokio::test]
async fn a_rate_limit_needs_api_keys() {
    refuses_to_start(&["--rate-limit-per-key", "5/s"], &[], "--auth-keys").await;
    refuses_to_start(
        &["--max-concurrent-calls", "0"],
        &[],
        "--max-concurrent-calls",
    )
    .await;
}
