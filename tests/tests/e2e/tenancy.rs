//! API keys as tenant boundaries, over the real server: each key's role
//! decides which RPCs it may call and its namespaces which scopes it may
//! name (`--auth-keys`, `KEY ROLE NAMESPACES`); the key file is read again
//! on SIGHUP; `--tls-client-ca` makes clients prove themselves with a
//! certificate (mutual TLS).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use engram_client::proto::memory_service_client::MemoryServiceClient;
use engram_client::proto::{self, MemoryType};
use engram_client::{Code, CreateMemory, Engram};
use engram_tests::{Server, input, scope, sha256_hex};
use prost::Message as _;
use tempfile::TempDir;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Request, Status};

/// How long a test waits for the server to act on a SIGHUP.
const RELOAD_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether `role` may call `method`, as the key file's contract puts it:
/// `read` calls Get*, List*, Search*, WatchMemories, BuildContext and
/// Classify; `write` all but Forget, SetAgentScope and MergeEntities;
/// `admin` everything.
fn role_allows(role: &str, method: &str) -> bool {
    let reads = ["Get", "List", "Search"]
        .iter()
        .any(|prefix| method.starts_with(prefix))
        || matches!(
            method,
            "WatchMemories" | "BuildContext" | "Classify" | "ExplainMemory"
        );
    match role {
        "read" => reads,
        "write" => !matches!(method, "Forget" | "SetAgentScope" | "MergeEntities"),
        "admin" => true,
        other => panic!("no role {other}"),
    }
}

/// The RPCs whose requests in [`call_every_rpc`] are complete: when allowed,
/// they succeed (the others name ids that do not exist).
const SUCCEED_WHEN_ALLOWED: &[&str] = &[
    "CreateMemory",
    "BatchCreateMemories",
    "ListMemories",
    "WatchMemories",
    "SearchMemories",
    "BuildContext",
    "StartEpisode",
    "ListEpisodes",
    "ListEntities",
    "RecordOutcome",
    "ListOutcomes",
    "GetStats",
    "Classify",
    "Forget",
    "SetAgentScope",
];

type Authorized = InterceptedService<Channel, Bearer>;

/// Adds `authorization: Bearer <key>` to each call.
#[derive(Clone)]
struct Bearer(MetadataValue<tonic::metadata::Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request
            .metadata_mut()
            .insert("authorization", self.0.clone());
        Ok(request)
    }
}

fn code<T>(answer: Result<tonic::Response<T>, Status>) -> Code {
    answer.map_or_else(|status| status.code(), |_| Code::Ok)
}

/// Calls every RPC of the engram.v1 services once, as `key`, in
/// `namespace`, with requests that would succeed or fail on their merits
/// (some name ids that do not exist); returns each method's status code.
async fn call_every_rpc(
    channel: Channel,
    key: &str,
    namespace: &str,
) -> BTreeMap<&'static str, Code> {
    use proto::learning_service_client::LearningServiceClient;
    use proto::policy_service_client::PolicyServiceClient;

    let bearer = Bearer(format!("Bearer {key}").parse().expect("ascii"));
    let mut memory: MemoryServiceClient<Authorized> =
        MemoryServiceClient::with_interceptor(channel.clone(), bearer.clone());
    let mut learning = LearningServiceClient::with_interceptor(channel.clone(), bearer.clone());
    let mut policy = PolicyServiceClient::with_interceptor(channel, bearer);
    let in_namespace = || Some(scope(namespace).with_agent("agent-1"));
    let unknown = "0190a0b0-0000-7000-8000-000000000000".to_owned();
    let content = format!("written with key {key} in {namespace}");
    let mut codes = BTreeMap::new();

    let create = proto::CreateMemoryRequest {
        scope: in_namespace(),
        memory: Some(input(MemoryType::Fact, &content)),
        ..Default::default()
    };
    codes.insert("CreateMemory", code(memory.create_memory(create).await));
    let batch = proto::BatchCreateMemoriesRequest {
        scope: in_namespace(),
        memories: vec![input(MemoryType::Lesson, &format!("batch {content}"))],
        ..Default::default()
    };
    codes.insert(
        "BatchCreateMemories",
        code(memory.batch_create_memories(batch).await),
    );
    let get = proto::GetMemoryRequest {
        scope: in_namespace(),
        id: unknown.clone(),
    };
    codes.insert("GetMemory", code(memory.get_memory(get).await));
    let explain = proto::ExplainMemoryRequest {
        scope: in_namespace(),
        id: unknown.clone(),
    };
    codes.insert("ExplainMemory", code(memory.explain_memory(explain).await));
    let update = proto::UpdateMemoryRequest {
        scope: in_namespace(),
        id: unknown.clone(),
        memory: Some(input(MemoryType::Fact, "updated")),
        ..Default::default()
    };
    codes.insert("UpdateMemory", code(memory.update_memory(update).await));
    let delete = proto::DeleteMemoryRequest {
        scope: in_namespace(),
        id: unknown.clone(),
        ..Default::default()
    };
    codes.insert("DeleteMemory", code(memory.delete_memory(delete).await));
    let list = proto::ListMemoriesRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert("ListMemories", code(memory.list_memories(list).await));
    let revisions = proto::ListMemoryRevisionsRequest {
        scope: in_namespace(),
        id: unknown.clone(),
        ..Default::default()
    };
    codes.insert(
        "ListMemoryRevisions",
        code(memory.list_memory_revisions(revisions).await),
    );
    // A watch that starts answers its first message (the start's cursor);
    // a refused one fails before any.
    let watch = proto::WatchMemoriesRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    let watched = match memory.watch_memories(watch).await {
        Ok(response) => {
            let first = response.into_inner().message().await;
            first.and_then(|message| message.ok_or_else(|| Status::internal("no first message")))
        }
        Err(status) => Err(status),
    };
    codes.insert("WatchMemories", code(watched.map(tonic::Response::new)));
    let search = proto::SearchMemoriesRequest {
        scope: in_namespace(),
        query: "written".into(),
        ..Default::default()
    };
    codes.insert("SearchMemories", code(memory.search_memories(search).await));
    let context = proto::BuildContextRequest {
        scope: in_namespace(),
        query: "written".into(),
        ..Default::default()
    };
    codes.insert("BuildContext", code(memory.build_context(context).await));
    let start = proto::StartEpisodeRequest {
        scope: in_namespace(),
        task_id: "task-1".into(),
        description: "an episode".into(),
        ..Default::default()
    };
    codes.insert("StartEpisode", code(memory.start_episode(start).await));
    let step = proto::Step {
        step_number: 1,
        action: "look".into(),
        ..Default::default()
    };
    let append = proto::AppendStepsRequest {
        scope: in_namespace(),
        episode_id: unknown.clone(),
        steps: vec![step.clone()],
    };
    codes.insert("AppendSteps", code(memory.append_steps(append).await));
    let streamed = proto::StreamStepsRequest {
        scope: in_namespace(),
        episode_id: unknown.clone(),
        steps: vec![step],
    };
    codes.insert(
        "StreamSteps",
        code(
            memory
                .stream_steps(futures_util::stream::iter([streamed]))
                .await,
        ),
    );
    let complete = proto::CompleteEpisodeRequest {
        scope: in_namespace(),
        episode_id: unknown.clone(),
        ..Default::default()
    };
    codes.insert(
        "CompleteEpisode",
        code(memory.complete_episode(complete).await),
    );
    let get = proto::GetEpisodeRequest {
        scope: in_namespace(),
        id: unknown.clone(),
        ..Default::default()
    };
    codes.insert("GetEpisode", code(memory.get_episode(get).await));
    let list = proto::ListEpisodesRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert("ListEpisodes", code(memory.list_episodes(list).await));
    let entities = proto::ListEntitiesRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert("ListEntities", code(memory.list_entities(entities).await));
    let entity = proto::GetEntityRequest {
        scope: in_namespace(),
        entity: "Nobody Known".into(),
        ..Default::default()
    };
    codes.insert("GetEntity", code(memory.get_entity(entity).await));
    let merge = proto::MergeEntitiesRequest {
        scope: in_namespace(),
        entity: "Nobody Known".into(),
        duplicate: "Nobody Else".into(),
    };
    codes.insert("MergeEntities", code(memory.merge_entities(merge).await));

    let outcome = proto::RecordOutcomeRequest {
        scope: in_namespace(),
        task: "deploy".into(),
        task_type: "deploy".into(),
        success: true,
        strategy: "run the tests first".into(),
        ..Default::default()
    };
    codes.insert(
        "RecordOutcome",
        code(learning.record_outcome(outcome).await),
    );
    let list = proto::ListOutcomesRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert("ListOutcomes", code(learning.list_outcomes(list).await));
    let list = proto::ListHeuristicsRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert("ListHeuristics", code(learning.list_heuristics(list).await));
    let list = proto::ListAntiPatternsRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert(
        "ListAntiPatterns",
        code(learning.list_anti_patterns(list).await),
    );
    let mistake = proto::RecordMistakeRequest {
        scope: in_namespace(),
        task_id: "task-1".into(),
        card: Some(proto::MistakeCardInput {
            mistake_type: "wrong_tool".into(),
            lesson: "read the docs".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    codes.insert(
        "RecordMistake",
        code(learning.record_mistake(mistake).await),
    );
    let list = proto::ListMistakeCardsRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert(
        "ListMistakeCards",
        code(learning.list_mistake_cards(list).await),
    );
    let list = proto::ListTaskRulesRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert("ListTaskRules", code(learning.list_task_rules(list).await));
    let set = proto::SetAgentScopeRequest {
        scope: in_namespace(),
        can_learn: vec!["deploy".into()],
        ..Default::default()
    };
    codes.insert("SetAgentScope", code(learning.set_agent_scope(set).await));
    let get = proto::GetAgentScopeRequest {
        scope: in_namespace(),
    };
    codes.insert("GetAgentScope", code(learning.get_agent_scope(get).await));
    let consolidate = proto::ConsolidateRequest {
        scope: in_namespace(),
        ..Default::default()
    };
    codes.insert("Consolidate", code(learning.consolidate(consolidate).await));
    let forget = proto::ForgetRequest {
        scope: in_namespace(),
        dry_run: true,
        ..Default::default()
    };
    codes.insert("Forget", code(learning.forget(forget).await));
    let stats = proto::GetStatsRequest {
        scope: in_namespace(),
    };
    codes.insert("GetStats", code(learning.get_stats(stats).await));

    let classify = proto::ClassifyRequest {
        scope: in_namespace(),
        transcript: "user: I always deploy on Fridays".into(),
        ..Default::default()
    };
    codes.insert("Classify", code(policy.classify(classify).await));
    let remember = proto::RememberRequest {
        scope: in_namespace(),
        transcript: "user: remember that the staging database is read-only".into(),
        ..Default::default()
    };
    codes.insert("Remember", code(policy.remember(remember).await));
    codes
}

/// Every RPC of the engram.v1 services, by method name.
fn every_rpc() -> Vec<String> {
    let set = prost_types::FileDescriptorSet::decode(engram::FILE_DESCRIPTOR_SET)
        .expect("descriptor set");
    set.file
        .iter()
        .flat_map(|file| &file.service)
        .flat_map(|service| &service.method)
        .map(|method| method.name().to_owned())
        .collect()
}

fn write_keys(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write the key file");
}

#[tokio::test]
async fn each_key_calls_what_its_role_allows_in_its_own_namespaces_only() {
    let dir = TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    // The reader's key is given by its digest, so the file holds no secret.
    write_keys(
        &keys,
        &format!(
            "# KEY ROLE NAMESPACES\n\
             sha256:{} read tenant-a\n\
             writer-key write tenant-a\n\
             admin-key  admin tenant-a,tenant-a-*\n\
             root-key   admin *\n",
            sha256_hex("reader-key")
        ),
    );
    let server = Server::start_with_args(&["--auth-keys", keys.to_str().expect("utf-8")]).await;
    let channel = server.client().await.channel();

    let rpcs = every_rpc();
    for (key, role) in [
        ("reader-key", "read"),
        ("writer-key", "write"),
        ("admin-key", "admin"),
    ] {
        for (namespace, own) in [
            ("tenant-a", true),
            ("tenant-b", false),
            ("tenant-ab", false),
        ] {
            let codes = call_every_rpc(channel.clone(), key, namespace).await;
            let called: Vec<&str> = codes.keys().copied().collect();
            let mut expected: Vec<&str> = rpcs.iter().map(String::as_str).collect();
            expected.sort_unstable();
            assert_eq!(called, expected, "the matrix must call every RPC");
            for (method, code) in codes {
                let allowed = own && role_allows(role, method);
                if allowed && SUCCEED_WHEN_ALLOWED.contains(&method) {
                    assert_eq!(code, Code::Ok, "{role} key in {namespace}: {method}");
                } else if allowed {
                    assert!(
                        !matches!(code, Code::PermissionDenied | Code::Unauthenticated),
                        "{role} key in {namespace}: {method} was refused ({code:?})"
                    );
                } else {
                    assert_eq!(
                        code,
                        Code::PermissionDenied,
                        "{role} key in {namespace}: {method} must be refused"
                    );
                }
            }
        }
    }
    // A prefix grant covers the namespaces under it.
    let codes = call_every_rpc(channel.clone(), "admin-key", "tenant-a-eu").await;
    assert!(
        codes.values().all(|code| *code != Code::PermissionDenied),
        "{codes:?}"
    );

    // The writes that were allowed landed; the refused ones left nothing.
    let root = Engram::builder(&server.url)
        .api_key("root-key")
        .connect()
        .await
        .expect("connect");
    let stats = |namespace: &'static str| {
        let root = root.clone();
        async move {
            root.learning()
                .get_stats(proto::GetStatsRequest {
                    scope: Some(scope(namespace)),
                })
                .await
                .expect("stats")
        }
    };
    let own = stats("tenant-a").await;
    let memories: i64 = own.memories_per_type.iter().map(|t| t.count).sum();
    assert!(memories >= 4, "the writer's and admin's memories: {own:?}");
    for namespace in ["tenant-b", "tenant-ab"] {
        let other = stats(namespace).await;
        assert!(other.memories_per_type.is_empty(), "{namespace}: {other:?}");
        assert_eq!(other.total_episodes, 0, "{namespace}: {other:?}");
        assert_eq!(other.outcomes, 0, "{namespace}: {other:?}");
        assert_eq!(other.mistakes, 0, "{namespace}: {other:?}");
    }
}

#[tokio::test]
async fn a_refusal_names_neither_the_key_nor_its_namespaces() {
    let dir = TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    write_keys(&keys, "dashboard-key read secret-project-x,team-*\n");
    let server = Server::start_with_args(&["--auth-keys", keys.to_str().expect("utf-8")]).await;
    let engram = Engram::builder(&server.url)
        .api_key("dashboard-key")
        .connect()
        .await
        .expect("connect");
    let create = CreateMemory::new(scope("secret-project-x"), MemoryType::Fact, "x");
    let refused = engram.memory().create_memory(create).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied);
    assert!(refused.message().contains("read role"), "{refused}");
    let elsewhere = engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope("other")),
        })
        .await
        .unwrap_err();
    assert_eq!(elsewhere.code(), Code::PermissionDenied);
    for refusal in [&refused, &elsewhere] {
        for secret in ["dashboard-key", "secret-project-x", "team-"] {
            assert!(!refusal.message().contains(secret), "{refusal}");
        }
    }
    // The log names the key by its id, never by the key itself.
    let log = server.log();
    let key_id = server.key_id(1);
    assert!(
        log.lines()
            .any(|line| !line.contains("API key ") && line.contains(&key_id)),
        "no call logged with the key's id {key_id}: {log}"
    );
    assert!(!log.contains("dashboard-key"), "{log}");
}

#[tokio::test]
async fn sighup_reloads_the_key_file_and_a_broken_file_keeps_the_keys_in_force() {
    let dir = TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    write_keys(&keys, "first-key write notes\nlegacy-key\n");
    let server = Server::start_with_args(&["--auth-keys", keys.to_str().expect("utf-8")]).await;
    assert!(
        server.log().contains("deprecated"),
        "a bare key is deprecated: {}",
        server.log()
    );
    let stats_with = |key: &'static str| {
        let url = server.url.clone();
        async move {
            let engram = Engram::builder(&url).api_key(key).connect().await?;
            engram
                .learning()
                .get_stats(proto::GetStatsRequest {
                    scope: Some(scope("notes")),
                })
                .await
                .map(drop)
        }
    };
    assert!(stats_with("first-key").await.is_ok());
    assert!(stats_with("legacy-key").await.is_ok());

    write_keys(&keys, "second-key read notes\n");
    server.hang_up();
    let started = Instant::now();
    while stats_with("second-key").await.is_err() {
        assert!(
            started.elapsed() < RELOAD_TIMEOUT,
            "SIGHUP did not reload the keys"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for gone in ["first-key", "legacy-key"] {
        let refused = stats_with(gone).await.unwrap_err();
        assert_eq!(refused.code(), Code::Unauthenticated, "{gone}: {refused}");
    }

    // A broken file is refused with its line; the keys in force stay.
    write_keys(&keys, "second-key read notes\nthird-key owner notes\n");
    server.hang_up();
    let started = Instant::now();
    while !server.log().contains("the keys in force stay") {
        assert!(started.elapsed() < RELOAD_TIMEOUT, "{}", server.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        server.log().contains("line 2: unknown role"),
        "{}",
        server.log()
    );
    assert!(stats_with("second-key").await.is_ok());
    assert_eq!(
        stats_with("third-key").await.unwrap_err().code(),
        Code::Unauthenticated
    );
}
