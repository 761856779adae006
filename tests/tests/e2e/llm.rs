//! The LLM classifier against a local OpenAI-compatible server that checks
//! what it is sent and misbehaves on purpose: every failure is the safe
//! FALLBACK decision, the RPC still succeeds, nothing is stored, and the API
//! key never reaches a log.

use std::time::Duration;

use engram_client::proto::{self, MemoryType};
use engram_client::{Code, Engram};
use engram_tests::fake_llm::{FakeLlm, Reply, asked};
use engram_tests::{Server, list_all, scope};

const KEY: &str = "sk-test-7f3a9c1e5b2d";
const MODEL: &str = "test-model";
/// The schema the classifier's requests ask for.
const DECISIONS: &str = "memory_decision";

fn preference(importance: f64) -> serde_json::Value {
    serde_json::json!({
        "should_store": true,
        "memory_type": "PREFERENCE",
        "summary": "The user wants answers in British English.",
        "importance": importance,
        "level": "GLOBAL",
        "reason": "explicit preference",
    })
}

async fn start(fake: &FakeLlm) -> Server {
    Server::start_with_env(
        &[
            "--llm-base-url",
            &fake.base_url,
            "--llm-model",
            MODEL,
            "--llm-timeout",
            "1s",
            "--log",
            "debug",
        ],
        &[("ENGRAM_LLM_API_KEY", KEY)],
    )
    .await
}

fn remember(ns: &proto::Scope, mode: proto::ClassifyMode) -> proto::RememberRequest {
    proto::RememberRequest {
        scope: Some(ns.clone()),
        task_id: "style".into(),
        transcript: "User: please always answer in British English.".into(),
        mode: mode.into(),
        ..Default::default()
    }
}

async fn remember_with(
    engram: &Engram,
    request: proto::RememberRequest,
) -> proto::RememberResponse {
    engram
        .policy()
        .remember(request)
        .await
        .expect("remember succeeds")
}

#[tokio::test]
async fn a_valid_reply_is_the_decision_and_the_request_is_strict_json_schema() {
    let fake = FakeLlm::start(Reply::Content(preference(0.9))).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let ns = scope("llm-valid");

    let first = remember_with(&engram, remember(&ns, proto::ClassifyMode::Llm)).await;
    let decision = first.decision.clone().unwrap();
    assert_eq!(decision.source(), proto::DecisionSource::Llm);
    assert!(decision.should_store);
    assert_eq!(decision.memory_type(), MemoryType::Preference);
    assert_eq!(
        decision.summary,
        "The user wants answers in British English."
    );
    assert_eq!(decision.importance, 0.9);
    assert_eq!(
        decision.metadata.get("model").map(String::as_str),
        Some(MODEL)
    );
    let memory = first.memory.clone().unwrap();
    assert_eq!(memory.source(), proto::MemorySource::PolicyLlm);
    assert_eq!(first.result(), proto::WriteResult::Created);
    // The same transcript again merges instead of duplicating.
    let again = remember_with(&engram, remember(&ns, proto::ClassifyMode::Auto)).await;
    assert_eq!(again.result(), proto::WriteResult::Merged);
    assert_eq!(again.memory.unwrap().id, memory.id);
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 1);

    let seen = asked(&fake, DECISIONS);
    assert_eq!(seen.len(), 2, "AUTO used the configured model too");
    let request = &seen[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        request.authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.body["model"], MODEL);
    assert_eq!(request.body["response_format"]["type"], "json_schema");
    assert_eq!(
        request.body["response_format"]["json_schema"]["strict"],
        true
    );
    let schema = &request.body["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"].as_array().map(Vec::len), Some(6));
    assert!(
        request.body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("British English")
    );

    // RULES mode does not call the model.
    let rules = engram
        .policy()
        .classify(proto::ClassifyRequest {
            scope: Some(ns.clone()),
            transcript: "User: I prefer tabs.".into(),
            mode: proto::ClassifyMode::Rules.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .decision
        .unwrap();
    assert_eq!(rules.source(), proto::DecisionSource::Rules);
    assert_eq!(asked(&fake, DECISIONS).len(), 2);
}

#[tokio::test]
async fn importance_out_of_range_is_clamped() {
    let fake = FakeLlm::start(Reply::Content(preference(7.5))).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let decision = remember_with(
        &engram,
        remember(&scope("llm-clamp"), proto::ClassifyMode::Llm),
    )
    .await
    .decision
    .unwrap();
    assert_eq!(decision.source(), proto::DecisionSource::Llm);
    assert_eq!(decision.importance, 1.0);
}

#[tokio::test]
async fn every_misbehaviour_is_the_safe_fallback_and_stores_nothing() {
    let fake = FakeLlm::start(Reply::Status(500)).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let ns = scope("llm-fallback");
    let mut extra = preference(0.9);
    extra["confidence"] = serde_json::json!(0.5);
    let mut wrong_enum = preference(0.9);
    wrong_enum["memory_type"] = serde_json::json!("OPINION");
    let mut missing = preference(0.9);
    missing.as_object_mut().unwrap().remove("level");
    let mut blank_summary = preference(0.9);
    blank_summary["summary"] = serde_json::json!("   ");
    let mut wrong_type = preference(0.9);
    wrong_type["importance"] = serde_json::json!("high");
    let cases = [
        (Reply::Content(extra), "unexpected key"),
        (Reply::Content(wrong_enum), "memory_type"),
        (Reply::Content(missing), "missing key"),
        (
            Reply::RawContent("sure! here you go: {not json".into()),
            "JSON",
        ),
        (Reply::NotJsonBody, "JSON"),
        (Reply::Status(500), "HTTP status 500"),
        (Reply::Content(blank_summary), "summary is blank"),
        (Reply::Content(wrong_type), "importance"),
        (
            Reply::Content(serde_json::json!(["not", "an", "object"])),
            "not a JSON object",
        ),
        (
            Reply::Slow(Duration::from_millis(2500), preference(0.9)),
            "timeout",
        ),
    ];
    for (reply, error) in cases {
        fake.reply(reply.clone());
        let response = remember_with(&engram, remember(&ns, proto::ClassifyMode::Llm)).await;
        let decision = response.decision.clone().unwrap();
        assert_eq!(
            decision.source(),
            proto::DecisionSource::Fallback,
            "{reply:?}"
        );
        assert!(!decision.should_store);
        assert_eq!(decision.memory_type(), MemoryType::Event);
        assert_eq!(decision.importance, 0.0);
        assert_eq!(
            decision.metadata.get("task_id").map(String::as_str),
            Some("style")
        );
        assert_eq!(
            decision.metadata.get("source").map(String::as_str),
            Some("llm")
        );
        let recorded = decision.metadata.get("error").cloned().unwrap_or_default();
        assert!(
            recorded.contains(error),
            "{reply:?}: error {recorded:?} should mention {error:?}"
        );
        assert!(response.memory.is_none());
        assert_eq!(response.result(), proto::WriteResult::Unspecified);
    }
    assert!(
        list_all(&engram, &ns, 50).await.is_empty(),
        "nothing stored"
    );
    let log = server.log();
    assert!(
        log.contains("the LLM classifier failed"),
        "failures are logged"
    );
    assert!(log.contains("LLM configured"), "the log is captured");
    assert!(!log.contains(KEY), "the API key appears in no log line");
}

#[tokio::test]
async fn at_most_llm_concurrency_calls_are_in_flight_and_the_rest_wait_their_turn() {
    let fake = FakeLlm::start(Reply::Slow(Duration::from_millis(300), preference(0.8))).await;
    let server = Server::start_with_env(
        &[
            "--llm-base-url",
            &fake.base_url,
            "--llm-model",
            MODEL,
            "--llm-concurrency",
            "1",
        ],
        &[("ENGRAM_LLM_API_KEY", KEY)],
    )
    .await;
    let engram = server.client().await;
    let ns = scope("llm-concurrency");
    let calls = (0..4).map(|n| {
        let engram = engram.clone();
        let request = proto::ClassifyRequest {
            scope: Some(ns.clone()),
            task_id: "style".into(),
            transcript: format!("User {n}: please always answer in British English."),
            mode: proto::ClassifyMode::Llm.into(),
        };
        async move { engram.policy().classify(request).await }
    });
    for answer in futures_util::future::join_all(calls).await {
        let decision = answer.expect("classify").decision.expect("a decision");
        assert_eq!(
            decision.source(),
            proto::DecisionSource::Llm,
            "the model's, not a fallback: {decision:?}"
        );
    }
    assert_eq!(asked(&fake, DECISIONS).len(), 4);
    assert_eq!(fake.peak_in_flight(), 1, "one call at a time");
}

#[tokio::test]
async fn llm_mode_without_a_model_is_failed_precondition() {
    let server = Server::start().await;
    let engram = server.client().await;
    let status = engram
        .policy()
        .classify(proto::ClassifyRequest {
            scope: Some(scope("no-llm")),
            transcript: "User: I prefer tabs.".into(),
            mode: proto::ClassifyMode::Llm.into(),
            ..Default::default()
        })
        .await
        .expect_err("no model configured");
    assert_eq!(status.code(), Code::FailedPrecondition);
}

#[tokio::test]
async fn llm_consolidation_writes_consolidated_rules_and_falls_back_to_rules() {
    let rules = [
        "Diff heap dumps before guessing at a leak.",
        "Reproduce the failure before changing code.",
        "Read the service logs around the first error.",
        "Check recent deploys first.",
        "Write the timeline as you go.",
    ];
    let fake = FakeLlm::start(Reply::Content(serde_json::json!({ "rules": rules }))).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let ns = scope("llm-consolidate");
    for (score, summary) in [
        (0.95, "Found the leak by diffing heap dumps"),
        (0.4, "Guessed at the cause"),
    ] {
        let episode = engram
            .memory()
            .start_episode(proto::StartEpisodeRequest {
                scope: Some(ns.clone()),
                task_id: "rca".into(),
                description: "Investigate the memory growth".into(),
                ..Default::default()
            })
            .await
            .expect("start");
        engram
            .memory()
            .complete_episode(proto::CompleteEpisodeRequest {
                scope: Some(ns.clone()),
                episode_id: episode.id,
                outcome: Some(proto::EpisodeOutcome {
                    score,
                    summary: summary.into(),
                    ..Default::default()
                }),
            })
            .await
            .expect("complete");
    }
    let consolidate = |mode: proto::ConsolidateMode| proto::ConsolidateRequest {
        scope: Some(ns.clone()),
        mode: mode.into(),
        force: true,
    };

    let by_llm = engram
        .learning()
        .consolidate(consolidate(proto::ConsolidateMode::Llm))
        .await
        .unwrap();
    assert_eq!(by_llm.mode(), proto::ConsolidateMode::Llm);
    assert!(!by_llm.fell_back);
    assert_eq!(by_llm.episodes_considered, 2);
    let texts: Vec<String> = by_llm.rules.iter().map(|r| r.text.clone()).collect();
    let expected: Vec<String> = rules
        .iter()
        .map(|r| format!("[CONSOLIDATED] {r}"))
        .collect();
    assert_eq!(texts, expected, "the most useful first");
    assert!(
        by_llm
            .rules
            .iter()
            .all(|r| r.origin() == proto::TaskRuleOrigin::Consolidated && r.task_id.is_empty())
    );
    let sent = asked(&fake, "consolidated_rules").last().unwrap().body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        sent.contains("Found the leak by diffing heap dumps") && sent.contains("score 0.40"),
        "{sent}"
    );

    // A failing model: the rules consolidate instead, and the response says why.
    fake.reply(Reply::Status(503));
    let fallback = engram
        .learning()
        .consolidate(consolidate(proto::ConsolidateMode::Auto))
        .await
        .unwrap();
    assert_eq!(fallback.mode(), proto::ConsolidateMode::Rules);
    assert!(fallback.fell_back);
    assert!(
        fallback.fallback_reason.contains("HTTP status 503"),
        "{}",
        fallback.fallback_reason
    );
    let texts: Vec<String> = fallback.rules.iter().map(|r| r.text.clone()).collect();
    assert_eq!(
        texts,
        ["[HIGH SCORE 0.95] Found the leak by diffing heap dumps"]
    );
    let log = server.log();
    assert!(log.contains("LLM configured"), "the log is captured");
    assert!(!log.contains(KEY));
}

#[tokio::test]
async fn a_retried_remember_returns_the_first_answer_without_asking_again() {
    let fake = FakeLlm::start(Reply::Content(preference(0.9))).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let ns = scope("llm-retry");
    let request = proto::RememberRequest {
        request_id: "remember-1".into(),
        ..remember(&ns, proto::ClassifyMode::Llm)
    };
    let first = remember_with(&engram, request.clone()).await;
    assert_eq!(first.result(), proto::WriteResult::Created);
    // The model would now answer differently; the retry must not ask it.
    let mut other = preference(0.2);
    other["memory_type"] = serde_json::json!("FACT");
    fake.reply(Reply::Content(other));
    let retry = remember_with(&engram, request.clone()).await;
    assert_eq!(retry, first, "the first answer, memory and result");
    assert_eq!(asked(&fake, DECISIONS).len(), 1, "the model was asked once");
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 1);
    assert_eq!(
        list_all(&engram, &ns, 50).await[0].seen_count,
        1,
        "stored once"
    );

    let reused = engram
        .policy()
        .remember(proto::RememberRequest {
            transcript: "User: a different transcript entirely.".into(),
            ..request
        })
        .await
        .expect_err("request id reused for another request");
    assert_eq!(reused.code(), Code::AlreadyExists);
}

#[tokio::test]
async fn an_unreachable_model_is_the_safe_fallback() {
    // A port that was free a moment ago: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let base_url = format!("http://{closed}/v1");
    let server = Server::start_with_env(
        &[
            "--llm-base-url",
            &base_url,
            "--llm-model",
            MODEL,
            "--llm-timeout",
            "2s",
        ],
        &[("ENGRAM_LLM_API_KEY", KEY)],
    )
    .await;
    let engram = server.client().await;
    let response = remember_with(
        &engram,
        remember(&scope("llm-unreachable"), proto::ClassifyMode::Auto),
    )
    .await;
    let decision = response.decision.clone().unwrap();
    assert_eq!(decision.source(), proto::DecisionSource::Fallback);
    assert!(!decision.should_store);
    let error = decision.metadata.get("error").cloned().unwrap_or_default();
    assert!(error.contains("transport error"), "{error}");
    assert!(response.memory.is_none());
    let log = server.log();
    assert!(log.contains("LLM configured"), "the log is captured");
    assert!(!log.contains(KEY));
}

#[tokio::test]
async fn a_fallback_is_not_pinned_to_the_request_id() {
    let fake = FakeLlm::start(Reply::Status(503)).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let ns = scope("llm-recover");
    let request = proto::RememberRequest {
        request_id: "remember-after-outage".into(),
        ..remember(&ns, proto::ClassifyMode::Llm)
    };
    let during = remember_with(&engram, request.clone()).await;
    assert_eq!(
        during.decision.unwrap().source(),
        proto::DecisionSource::Fallback
    );
    fake.reply(Reply::Content(preference(0.9)));
    let after = remember_with(&engram, request).await;
    assert_eq!(
        after.decision.clone().unwrap().source(),
        proto::DecisionSource::Llm
    );
    assert_eq!(
        after.result(),
        proto::WriteResult::Created,
        "the retry is classified again and stored"
    );
}
