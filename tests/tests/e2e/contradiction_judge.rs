//! The LLM tier of contradiction detection (issue 27), against a local
//! OpenAI-compatible server that checks what it is sent and misbehaves on
//! purpose: with a model configured it judges a new memory's candidates
//! under a strict JSON schema, and any failure leaves the rules' verdict.

use std::time::Duration;

use engram_client::Engram;
use engram_client::proto::{self, MemoryType};
use engram_tests::fake_llm::{FakeLlm, Reply, asked};
use engram_tests::{Server, create, input, scope};

const OLDER: &str = "Alice Chen works at Acme Corp as a data engineer.";
/// What the rules judge to contradict [`OLDER`].
const NEWER: &str = "Alice left Acme and joined Globex in March.";

/// The requests the fake received to judge contradictions (the server's
/// background reading of entities asks it too).
fn judging(fake: &FakeLlm) -> Vec<engram_tests::fake_llm::Seen> {
    asked(fake, "memory_invalidations")
}

async fn start(fake: &FakeLlm) -> Server {
    Server::start_with_env(
        &[
            "--llm-base-url",
            &fake.base_url,
            "--llm-model",
            "test-model",
            "--llm-timeout",
            "1s",
        ],
        &[("ENGRAM_LLM_API_KEY", "sk-test-contradictions")],
    )
    .await
}

/// Writes [`OLDER`] then `newer` for `owner`: the older one's id and what
/// the newer one invalidated.
async fn pair(engram: &Engram, owner: &proto::Scope, newer: &str) -> (String, Vec<String>) {
    let older = create(engram, owner, input(MemoryType::Fact, OLDER)).await;
    let newer = create(engram, owner, input(MemoryType::Fact, newer)).await;
    (
        older.memory.expect("memory").id,
        newer.invalidated_memory_ids,
    )
}

#[tokio::test]
async fn the_model_judges_the_candidates_under_a_strict_schema() {
    let fake = FakeLlm::start(Reply::Content(serde_json::json!({
        "invalidates": [{"id": "m1", "reason": "Alice's employer is now Globex"}],
    })))
    .await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let owner = scope("judge").with_user("alice-team");

    // Nothing stored yet: nothing to judge, the model is not asked.
    let first = create(&engram, &owner, input(MemoryType::Fact, OLDER)).await;
    assert!(judging(&fake).is_empty(), "asked with no candidates");
    let older_id = first.memory.expect("memory").id;

    // The model's verdict is the write's.
    let newer = create(&engram, &owner, input(MemoryType::Fact, NEWER)).await;
    assert_eq!(
        newer.invalidated_memory_ids,
        std::slice::from_ref(&older_id)
    );
    let older = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(owner.clone()),
            id: older_id.clone(),
        })
        .await
        .expect("get");
    assert_eq!(
        older.invalidation_reason,
        "contradicted (judged by the model): Alice's employer is now Globex"
    );
    let seen = judging(&fake);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    let format = &seen[0].body["response_format"]["json_schema"];
    assert_eq!(format["name"], "memory_invalidations");
    assert_eq!(format["strict"], true);
    assert_eq!(
        format["schema"]["properties"]["invalidates"]["items"]["properties"]["id"]["enum"],
        serde_json::json!(["m1"])
    );
    let user = seen[0].body["messages"][1]["content"]
        .as_str()
        .expect("user message");
    assert!(user.contains(&format!("NEW: {NEWER}")), "{user}");
    assert!(user.contains(&format!("m1: {OLDER}")), "{user}");
    assert!(
        !user.contains(&older_id),
        "memory ids are not shown: {user}"
    );

    // The model may find nothing where the rules would.
    fake.reply(Reply::Content(serde_json::json!({"invalidates": []})));
    let (_, invalidated) = pair(&engram, &scope("judge").with_user("bo-team"), NEWER).await;
    assert!(invalidated.is_empty(), "{invalidated:?}");
}

#[tokio::test]
async fn any_failure_of_the_model_leaves_the_rules_verdict() {
    let fake = FakeLlm::start(Reply::Status(500)).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let cases = [
        Reply::Status(500),
        Reply::NotJsonBody,
        Reply::RawContent("{\"invalidates\": [".into()),
        Reply::Content(serde_json::json!({"invalidates": [{"id": "m9", "reason": "?"}]})),
        Reply::Content(serde_json::json!({"invalidates": [], "confidence": 1})),
        Reply::Content(serde_json::json!({"invalidates": [{"id": "m1", "reason": ""}]})),
        Reply::Slow(
            Duration::from_millis(2500),
            serde_json::json!({"invalidates": []}),
        ),
    ];
    for (n, reply) in cases.into_iter().enumerate() {
        fake.reply(reply.clone());
        let owner = scope("judge-fails").with_user(format!("case-{n}"));
        let asked = judging(&fake).len();
        let (older_id, invalidated) = pair(&engram, &owner, NEWER).await;
        assert_eq!(judging(&fake).len(), asked + 1, "{reply:?}: asked once");
        assert_eq!(invalidated, [older_id], "{reply:?}: the rules' verdict");
    }
    assert!(
        server
            .log()
            .contains("the LLM contradiction judge failed; the rules' verdict stands"),
        "failures are logged"
    );
}
