//! The typed client's own promises over the real server: transport failures
//! told apart from the server's answers, retries only where they are safe,
//! deadlines, and the quick start the README shows.

use std::time::Duration;

use engram_client::proto::{self, MemoryType, Scope, WriteResult};
use engram_client::{
    BuildContext, Code, CreateMemory, Engram, Error, ListMemories, RetryPolicy, SearchMemories,
};
use engram_tests::Server;

/// Retries patient enough to outlast a server restart.
const PATIENT: RetryPolicy = RetryPolicy {
    max_attempts: 100,
    initial_backoff: Duration::from_millis(50),
    max_backoff: Duration::from_millis(200),
    multiplier: 2.0,
};

async fn contents(engram: &Engram, scope: &Scope) -> Vec<String> {
    let page = engram
        .memory()
        .list_memories(ListMemories::new(scope.clone()))
        .await
        .expect("list");
    page.memories.into_iter().map(|m| m.content).collect()
}

#[tokio::test]
async fn the_readme_quick_start_runs() -> Result<(), Error> {
    let server = Server::start().await;
    let url = server.url.clone();
    // readme:begin rust
    let engram = Engram::connect(url).await?;
    let scope = Scope::new("demo").with_user("alice").with_project("shop");

    let lesson = "Checkout deploys failed because the orders migration locked the table";
    let created = engram
        .memory()
        .create_memory(
            CreateMemory::new(scope.clone(), MemoryType::Lesson, lesson).tags(["deploy"]),
        )
        .await?;
    assert_eq!(created.result(), WriteResult::Created);

    let hits = engram
        .memory()
        .search_memories(SearchMemories::new(
            scope.clone(),
            "why did the deploy fail?",
        ))
        .await?
        .hits;
    assert_eq!(hits[0].memory.as_ref().unwrap().content, lesson);

    let context = engram
        .memory()
        .build_context(
            BuildContext::new(scope.clone())
                .query("deploying checkout")
                .token_budget(200),
        )
        .await?;
    assert!(context.text.contains(lesson));

    // Bad input names every offending field.
    let error = engram
        .memory()
        .create_memory(CreateMemory::new(scope, MemoryType::Fact, "").importance(3.0))
        .await
        .unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    let fields: Vec<String> = error
        .field_violations()
        .into_iter()
        .map(|(field, _)| field)
        .collect();
    assert_eq!(fields, ["memory.content", "memory.importance"]);
    // readme:end rust
    Ok(())
}

#[tokio::test]
async fn a_server_that_is_down_is_a_transport_failure_not_a_status() {
    let mut server = Server::start().await;
    let engram = Engram::builder(&server.url)
        .retry(RetryPolicy::none())
        .connect()
        .await
        .expect("connect");
    let missing = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(Scope::new("down")),
            id: "0196d1a4-2b6e-7c3d-9e1f-0a1b2c3d4e5f".into(),
        })
        .await
        .unwrap_err();
    assert!(matches!(missing, Error::Status(_)), "{missing:?}");
    assert_eq!(missing.code(), Code::NotFound);

    server.stop().await;
    let error = engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(Scope::new("down")),
        })
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Transport(_)), "{error:?}");
    assert_eq!(error.code(), Code::Unavailable);
    assert!(error.is_retryable());
    assert!(error.field_violations().is_empty());

    let refused = Engram::connect(server.url.clone()).await.unwrap_err();
    assert!(matches!(refused, Error::Connect(_)), "{refused:?}");
    assert!(
        refused.to_string().contains("Connection refused"),
        "{refused}"
    );
}

#[tokio::test]
async fn reads_and_creates_with_a_request_id_are_retried_across_a_restart() {
    let mut server = Server::start().await;
    let scope = Scope::new("restart");
    let engram = Engram::builder(&server.url)
        .retry(PATIENT)
        .connect()
        .await
        .expect("connect");
    engram
        .memory()
        .create_memory(CreateMemory::new(
            scope.clone(),
            MemoryType::Fact,
            "before the restart",
        ))
        .await
        .expect("create while up");

    server.stop().await;
    // While the server is down: a create without a request id fails at once
    // (repeating it could store it twice), while a read and a create with a
    // request id keep trying until the server is back.
    let unsafe_create = engram
        .memory()
        .create_memory(CreateMemory::new(
            scope.clone(),
            MemoryType::Fact,
            "no request id",
        ))
        .await
        .unwrap_err();
    assert_eq!(unsafe_create.code(), Code::Unavailable, "{unsafe_create:?}");

    let reader = {
        let (engram, scope) = (engram.clone(), scope.clone());
        tokio::spawn(async move { contents(&engram, &scope).await })
    };
    let creator = {
        let (engram, scope) = (engram.clone(), scope.clone());
        tokio::spawn(async move {
            let create = CreateMemory::new(scope, MemoryType::Fact, "with a request id")
                .request_id("restart-1");
            engram.memory().create_memory(create).await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !reader.is_finished() && !creator.is_finished(),
        "they wait for the server"
    );
    let _server = server.start_again().await;

    // The read may land before or after the retried create.
    let read = reader.await.expect("reader");
    assert!(read.contains(&"before the restart".to_owned()), "{read:?}");
    let created = creator.await.expect("creator").expect("retried create");
    assert_eq!(created.result(), WriteResult::Created);
    let mut stored = contents(&engram, &scope).await;
    stored.sort();
    assert_eq!(stored, ["before the restart", "with a request id"]);
}

#[tokio::test]
async fn retries_give_up_after_max_attempts() {
    let mut server = Server::start().await;
    let engram = Engram::builder(&server.url)
        .retry(RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(10),
            ..RetryPolicy::default()
        })
        .connect()
        .await
        .expect("connect");
    server.stop().await;
    let error = engram
        .memory()
        .list_memories(ListMemories::new(Scope::new("gone")))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Transport(_)), "{error:?}");
}

#[tokio::test]
async fn malformed_settings_fail_before_anything_is_sent() {
    let server = Server::start().await;
    let error = Engram::builder(&server.url)
        .api_key("line\nbreak")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Config(_)), "{error:?}");
    let error = Engram::builder(&server.url)
        .tls_ca_certificate(b"not a certificate".to_vec())
        .connect()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("https://"), "{error}");
}

#[tokio::test]
async fn a_call_slower_than_the_timeout_is_deadline_exceeded() {
    use engram_tests::fake_llm::{FakeLlm, Reply};

    // A model that takes 3 s to answer makes Classify in LLM mode slow.
    let decision = serde_json::json!({
        "should_store": true,
        "memory_type": "PREFERENCE",
        "summary": "Dark mode.",
        "importance": 0.5,
        "level": "GLOBAL",
        "reason": "explicit preference",
    });
    let fake = FakeLlm::start(Reply::Slow(Duration::from_secs(3), decision)).await;
    let server = Server::start_with_args(&[
        "--llm-base-url",
        &fake.base_url,
        "--llm-model",
        "slow-model",
        "--llm-timeout",
        "10s",
    ])
    .await;
    let engram = Engram::builder(&server.url)
        .timeout(Duration::from_millis(300))
        .connect()
        .await
        .expect("connect");
    let slow = engram_client::Classify::new(Scope::new("slow"), "User: I prefer dark mode.")
        .mode(proto::ClassifyMode::Llm);
    let error = engram.policy().classify(slow).await.unwrap_err();
    assert!(matches!(error, Error::Transport(_)), "{error:?}");
    assert_eq!(error.code(), Code::DeadlineExceeded, "{error}");
    assert!(!error.is_retryable());
}
