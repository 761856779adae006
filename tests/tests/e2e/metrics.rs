//! Prometheus metrics at `--metrics-listen`: the conventional gRPC server
//! metrics count every call by method, streaming kind and status code, and
//! Engram's own report the database, its writer, the models and retention.

use std::collections::BTreeMap;
use std::time::Duration;

use engram_client::Code;
use engram_client::proto::{self, MemoryType};
use engram_tests::fake_llm::{FakeLlm, Reply};
use engram_tests::scrape::{Scrape, http_get};
use engram_tests::{Server, create, input, scope};
use tonic::codegen::tokio_stream;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::{ServerReflectionRequest, ServerReflectionResponse};

const METRICS_ANY_PORT: [&str; 2] = ["--metrics-listen", "127.0.0.1:0"];

const MEMORY: &str = "engram.v1.MemoryService";
const HEALTH: &str = "grpc.health.v1.Health";
const REFLECTION: &str = "grpc.reflection.v1.ServerReflection";

/// (grpc_type, grpc_service, grpc_method, grpc_code).
type Handled = (&'static str, &'static str, &'static str, &'static str);

/// One reflection call: sends `request`, closes its side, reads every
/// answer and the final status.
async fn reflect(
    engram: &engram_client::Engram,
    request: MessageRequest,
) -> Result<Vec<ServerReflectionResponse>, tonic::Status> {
    let mut client = ServerReflectionClient::new(engram.channel());
    let requests = tokio_stream::iter([ServerReflectionRequest {
        host: String::new(),
        message_request: Some(request),
    }]);
    let mut answers = client.server_reflection_info(requests).await?.into_inner();
    let mut received = Vec::new();
    while let Some(answer) = answers.message().await? {
        received.push(answer);
    }
    Ok(received)
}

/// The labels of a method's series.
fn method_labels<'a>(kind: &'a str, service: &'a str, method: &'a str) -> [(&'a str, &'a str); 3] {
    [
        ("grpc_type", kind),
        ("grpc_service", service),
        ("grpc_method", method),
    ]
}

/// Every non-zero `grpc_server_handled_total` of a scrape.
fn handled(scrape: &Scrape) -> BTreeMap<[String; 4], f64> {
    scrape
        .named("grpc_server_handled_total")
        .filter(|s| s.value > 0.0)
        .map(|s| {
            let label = |name: &str| s.labels.get(name).cloned().unwrap_or_default();
            (
                [
                    label("grpc_type"),
                    label("grpc_service"),
                    label("grpc_method"),
                    label("grpc_code"),
                ],
                s.value,
            )
        })
        .collect()
}

#[tokio::test]
async fn grpc_calls_are_counted_by_method_streaming_kind_and_code() {
    let server = Server::start_with_args(&METRICS_ANY_PORT).await;
    let engram = server.client().await;

    let mut health = HealthClient::new(engram.channel());
    for _ in 0..2 {
        health
            .check(HealthCheckRequest::default())
            .await
            .expect("health check");
    }
    let (a, b) = (scope("metrics-a"), scope("metrics-b"));
    create(&engram, &a, input(MemoryType::Fact, "the first fact")).await;
    create(&engram, &a, input(MemoryType::Fact, "the second fact")).await;
    create(&engram, &b, input(MemoryType::Fact, "another fact")).await;
    for importance in [2.0, -1.0] {
        let mut bad = input(MemoryType::Fact, "too important");
        bad.importance = Some(importance);
        let error = engram
            .memory()
            .create_memory(proto::CreateMemoryRequest {
                scope: Some(a.clone()),
                memory: Some(bad),
                ..Default::default()
            })
            .await
            .expect_err("importance out of range");
        assert_eq!(error.code(), Code::InvalidArgument);
    }
    let episode = engram
        .memory()
        .start_episode(proto::StartEpisodeRequest {
            scope: Some(a.clone()),
            task_id: "deploy".into(),
            description: "Deploy the shop".into(),
            ..Default::default()
        })
        .await
        .expect("start episode");
    let streamed = engram
        .memory()
        .stream_steps(tokio_stream::iter([proto::StreamStepsRequest {
            scope: Some(a.clone()),
            episode_id: episode.id.clone(),
            steps: vec![proto::Step {
                step_number: 1,
                tool: "shell".into(),
                action: "cargo build".into(),
                ..Default::default()
            }],
        }]))
        .await
        .expect("stream steps");
    assert_eq!(streamed.accepted, 1);
    // A bidirectional stream that ends well, and one whose error comes in
    // the trailers after the response's headers.
    let listed = reflect(&engram, MessageRequest::ListServices(String::new()))
        .await
        .expect("list services");
    assert_eq!(listed.len(), 1);
    let refused = reflect(
        &engram,
        MessageRequest::FileContainingExtension(Default::default()),
    )
    .await
    .expect_err("extensions are not supported");
    assert_eq!(refused.code(), tonic::Code::NotFound);

    let scrape = server.scrape().await;
    let expected: BTreeMap<[String; 4], f64> = [
        (("unary", HEALTH, "Check", "OK"), 2.0),
        (("unary", MEMORY, "CreateMemory", "OK"), 3.0),
        (("unary", MEMORY, "CreateMemory", "InvalidArgument"), 2.0),
        (("unary", MEMORY, "StartEpisode", "OK"), 1.0),
        (("client_stream", MEMORY, "StreamSteps", "OK"), 1.0),
        (
            ("bidi_stream", REFLECTION, "ServerReflectionInfo", "OK"),
            1.0,
        ),
        (
            (
                "bidi_stream",
                REFLECTION,
                "ServerReflectionInfo",
                "NotFound",
            ),
            1.0,
        ),
    ]
    .into_iter()
    .map(|((kind, service, method, code), count): (Handled, f64)| {
        ([kind, service, method, code].map(str::to_owned), count)
    })
    .collect();
    assert_eq!(handled(&scrape), expected);

    // Each method's calls started as many times as they were handled, and
    // each was timed once.
    let mut calls: BTreeMap<[String; 3], f64> = BTreeMap::new();
    for ([kind, service, method, _], count) in &expected {
        *calls
            .entry([kind.clone(), service.clone(), method.clone()])
            .or_default() += count;
    }
    for ([kind, service, method], count) in &calls {
        let labels = method_labels(kind, service, method);
        assert_eq!(
            scrape.value("grpc_server_started_total", &labels),
            *count,
            "{method}"
        );
        assert_eq!(
            scrape.value("grpc_server_handling_seconds_count", &labels),
            *count,
            "{method}"
        );
        let mut inf = labels.to_vec();
        inf.push(("le", "+Inf"));
        assert_eq!(
            scrape.value("grpc_server_handling_seconds_bucket", &inf),
            *count,
            "{method}"
        );
        assert!(scrape.value("grpc_server_handling_seconds_sum", &labels) > 0.0);
    }
    // Every served method is there from the start, uncalled ones at zero;
    // the methods of other servers are not.
    assert_eq!(
        scrape.value(
            "grpc_server_started_total",
            &method_labels("server_stream", HEALTH, "Watch")
        ),
        0.0
    );
    assert_eq!(
        scrape.get(
            "grpc_server_started_total",
            &method_labels("unary", MEMORY, "NoSuchMethod")
        ),
        None
    );
    let started: f64 = scrape
        .named("grpc_server_started_total")
        .map(|s| s.value)
        .sum();
    assert_eq!(started, calls.values().sum::<f64>(), "nothing else started");

    // Engram's own: what the database holds, and the writer that wrote it.
    let namespace = |name: &str| scrape.get("engram_namespace_memories", &[("namespace", name)]);
    assert_eq!(namespace("metrics-a"), Some(2.0));
    assert_eq!(namespace("metrics-b"), Some(1.0));
    assert_eq!(scrape.value("engram_memories", &[]), 3.0);
    assert_eq!(scrape.value("engram_namespaces", &[]), 2.0);
    assert!(scrape.value("engram_database_size_bytes", &[]) > 0.0);
    let batches = scrape.value("engram_writer_batch_size_count", &[]);
    assert!(batches > 0.0);
    assert!(scrape.value("engram_writer_batch_size_sum", &[]) >= batches);
    assert_eq!(
        scrape.value("engram_writer_commit_seconds_count", &[]),
        batches
    );
    let queued = scrape.value("engram_writer_queue_depth", &[]);
    assert!((0.0..=1024.0).contains(&queued), "{queued}");
    let lag = scrape.value("engram_search_index_lag_changes", &[]);
    assert!(lag >= 0.0, "{lag}");
    for outcome in ["ok", "error", "timeout", "refused", "bad_reply"] {
        assert_eq!(
            scrape.value("engram_llm_calls_total", &[("outcome", outcome)]),
            0.0,
            "no LLM is configured"
        );
    }
    for kind in ["memory", "request_id"] {
        assert_eq!(
            scrape.value("engram_retention_purged_total", &[("kind", kind)]),
            0.0
        );
    }

    // A scrape is no gRPC call: scraping again counts nothing more.
    assert_eq!(handled(&server.scrape().await), expected);
}

#[tokio::test]
async fn the_endpoint_serves_only_metrics_in_the_openmetrics_text_format() {
    let server = Server::start_with_args(&METRICS_ANY_PORT).await;
    let address = server.metrics.as_deref().expect("metrics address");
    let metrics = http_get(address, "/metrics").await.expect("GET /metrics");
    assert_eq!(metrics.status, 200);
    assert_eq!(
        metrics.headers.get("content-type").map(String::as_str),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(metrics.body.ends_with("# EOF\n"), "{}", metrics.body);
    for path in ["/", "/metricsx", "/metrics/", "/debug"] {
        let response = http_get(address, path).await.expect("GET");
        assert_eq!(response.status, 404, "{path}");
    }

    let without = Server::start().await;
    assert_eq!(without.metrics, None, "no metrics without --metrics-listen");
}

#[tokio::test]
async fn llm_calls_are_counted_by_outcome() {
    let fake = FakeLlm::start(Reply::Status(500)).await;
    let server = Server::start_with_args(&[
        METRICS_ANY_PORT[0],
        METRICS_ANY_PORT[1],
        "--llm-base-url",
        &fake.base_url,
        "--llm-model",
        "test-model",
        "--llm-timeout",
        "1s",
    ])
    .await;
    let engram = server.client().await;
    let decision = serde_json::json!({
        "should_store": false,
        "memory_type": "EVENT",
        "summary": "small talk",
        "importance": 0.1,
        "level": "CONVERSATION",
        "reason": "chatter",
    });
    let replies = [
        Reply::Content(decision.clone()),
        Reply::Content(decision.clone()),
        Reply::Status(503),
        Reply::Status(400),
        Reply::NotJsonBody,
        Reply::Slow(Duration::from_millis(2500), decision),
    ];
    for reply in replies {
        fake.reply(reply);
        engram
            .policy()
            .classify(proto::ClassifyRequest {
                scope: Some(scope("llm-metrics")),
                task_id: "chat".into(),
                transcript: "User: nice weather today".into(),
                mode: proto::ClassifyMode::Llm.into(),
            })
            .await
            .expect("classify answers, falling back when the model fails");
    }
    let scrape = server.scrape().await;
    let calls = |outcome: &str| scrape.value("engram_llm_calls_total", &[("outcome", outcome)]);
    assert_eq!(calls("ok"), 2.0);
    assert_eq!(calls("error"), 1.0);
    assert_eq!(calls("refused"), 1.0);
    assert_eq!(calls("bad_reply"), 1.0);
    assert_eq!(calls("timeout"), 1.0);
}
