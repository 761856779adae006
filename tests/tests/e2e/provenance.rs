//! Where each memory came from (issue 29): every write path records how the
//! memory was written, by which key and agent, from which episode and, for
//! a Remember, the transcript's hash (and its screened text with
//! `--keep-transcripts`); GetMemory shows it and ExplainMemory answers why
//! Engram holds a memory.

use engram_client::proto::{self, MemoryType, WriteMethod};
use engram_client::{Code, Engram};
use engram_tests::{Server, assert_rejects, create, input, list_all, scope, sha256_hex};
use tempfile::TempDir;

async fn get(engram: &Engram, ns: &proto::Scope, id: &str) -> proto::Memory {
    engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: id.to_owned(),
        })
        .await
        .expect("get")
}

async fn explain(engram: &Engram, ns: &proto::Scope, id: &str) -> proto::ExplainMemoryResponse {
    engram
        .memory()
        .explain_memory(proto::ExplainMemoryRequest {
            scope: Some(ns.clone()),
            id: id.to_owned(),
        })
        .await
        .expect("explain")
}

async fn start_episode(engram: &Engram, ns: &proto::Scope, description: &str) -> String {
    engram
        .memory()
        .start_episode(proto::StartEpisodeRequest {
            scope: Some(ns.clone()),
            task_id: "deploy".into(),
            description: description.into(),
            ..Default::default()
        })
        .await
        .expect("start episode")
        .id
}

fn from_episode(content: &str, episode_id: &str) -> proto::MemoryInput {
    proto::MemoryInput {
        episode_id: episode_id.to_owned(),
        ..input(MemoryType::Fact, content)
    }
}

async fn create_one(
    engram: &Engram,
    ns: &proto::Scope,
    memory: proto::MemoryInput,
) -> proto::Memory {
    create(engram, ns, memory).await.memory.expect("a memory")
}

async fn remember(
    engram: &Engram,
    ns: &proto::Scope,
    transcript: &str,
    episode_id: &str,
) -> proto::Memory {
    engram
        .policy()
        .remember(proto::RememberRequest {
            scope: Some(ns.clone()),
            transcript: transcript.to_owned(),
            mode: proto::ClassifyMode::Rules.into(),
            episode_id: episode_id.to_owned(),
            ..Default::default()
        })
        .await
        .expect("remember")
        .memory
        .expect("the transcript is worth keeping")
}

#[tokio::test]
async fn every_write_path_records_how_by_whom_and_from_what() {
    let dir = TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "writer-key write notes\nother-key write notes\n").expect("keys");
    let server = Server::start_with_args(&[
        "--auth-keys",
        keys.to_str().expect("utf-8"),
        "--keep-transcripts",
    ])
    .await;
    let writer = server.client_with_key("writer-key").await;
    let other = server.client_with_key("other-key").await;
    let (writer_id, other_id) = (server.key_id(1), server.key_id(2));
    let planner = scope("notes").with_agent("planner");
    let episode = start_episode(&writer, &planner, "Move the deploy window").await;

    // CreateMemory, naming the episode it came from.
    let created = create_one(
        &writer,
        &planner,
        from_episode("The deploy window is Tuesday", &episode),
    )
    .await;
    assert!(
        created.provenance.is_none(),
        "only GetMemory and ExplainMemory show it"
    );
    let read = get(&writer, &planner, &created.id).await;
    let provenance = read.provenance.clone().expect("a provenance");
    assert_eq!(provenance.method(), WriteMethod::CreateMemory);
    assert_eq!(provenance.key_id, writer_id);
    assert_eq!(provenance.agent_id, "planner");
    assert_eq!(provenance.episode_id, episode);
    assert_eq!(provenance.transcript_sha256, "");
    assert_eq!(provenance.create_time, read.create_time);

    // An identical write by another key merges into it: the provenance
    // stays the first writer's (the merge is in the history).
    let merged = create_one(
        &other,
        &planner,
        input(MemoryType::Fact, "The deploy window is Tuesday"),
    )
    .await;
    assert_eq!(merged.id, created.id);
    let read = get(&writer, &planner, &created.id).await;
    assert_eq!(read.seen_count, 2);
    assert_eq!(read.provenance, Some(provenance.clone()));

    // BatchCreateMemories, one naming the episode and one not.
    let batch = writer
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(planner.clone()),
            memories: vec![
                from_episode("Rollbacks take four minutes", &episode),
                input(MemoryType::Note, "The on-call rota is in the wiki"),
            ],
            ..Default::default()
        })
        .await
        .expect("batch");
    let ids: Vec<String> = batch
        .results
        .iter()
        .map(|r| r.memory.as_ref().expect("a memory").id.clone())
        .collect();
    for (id, named) in ids.iter().zip([episode.as_str(), ""]) {
        let provenance = get(&writer, &planner, id)
            .await
            .provenance
            .expect("a provenance");
        assert_eq!(provenance.method(), WriteMethod::BatchCreateMemories);
        assert_eq!(provenance.key_id, writer_id);
        assert_eq!(provenance.episode_id, named);
    }

    // Remember keeps the transcript's hash and, with --keep-transcripts, the
    // transcript as screened: without the password it held.
    let transcript = "Tool output:\nOPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n\
                      User: The lesson: always export the key before running the eval.";
    let remembered = remember(&other, &planner, transcript, &episode).await;
    let provenance = get(&other, &planner, &remembered.id)
        .await
        .provenance
        .expect("a provenance");
    assert_eq!(provenance.method(), WriteMethod::Remember);
    assert_eq!(provenance.key_id, other_id);
    assert_eq!(provenance.agent_id, "planner");
    assert_eq!(provenance.episode_id, episode);
    assert_eq!(provenance.transcript_sha256, sha256_hex(transcript));
    assert!(
        provenance.transcript.contains("always export the key"),
        "{provenance:?}"
    );
    assert!(
        !provenance.transcript.contains("sk-proj-"),
        "{provenance:?}"
    );

    // ExplainMemory: the records and the sentences.
    let explained = explain(&writer, &planner, &created.id).await;
    let memory = explained.memory.expect("the memory");
    assert_eq!(
        memory.provenance.expect("its provenance").episode_id,
        episode
    );
    let source = explained.episode.expect("the episode it came from");
    assert_eq!(
        (source.id.as_str(), source.description.as_str()),
        (episode.as_str(), "Move the deploy window")
    );
    assert!(source.steps.is_empty());
    let actions: Vec<proto::RevisionAction> =
        explained.revisions.iter().map(|r| r.action()).collect();
    assert_eq!(
        actions,
        [
            proto::RevisionAction::Created,
            proto::RevisionAction::Merged
        ]
    );
    assert!(explained.replaced_by.is_none());
    let said = explained.explanation.join("\n");
    assert!(
        said.contains(&format!(
            "Written with CreateMemory by API key {writer_id} for agent \"planner\""
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "From episode {episode} (\"Move the deploy window\""
        )),
        "{said}"
    );
    assert!(said.contains("Written 2 times"), "{said}");
    let said = explain(&other, &planner, &remembered.id)
        .await
        .explanation
        .join("\n");
    assert!(said.contains("Decided by the rules classifier"), "{said}");
    assert!(said.contains(&sha256_hex(transcript)), "{said}");
}

#[tokio::test]
async fn a_write_naming_an_episode_the_scope_does_not_see_is_refused_and_stores_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("provenance-refused");
    let elsewhere = start_episode(&engram, &scope("another-tenant"), "Someone else's task").await;
    let unknown = "0190b6b2-7c3e-7d41-9f3a-2b1c4d5e6f70";

    for (episode, why) in [
        ("not-an-id", "must be a UUID"),
        (unknown, "names no episode visible"),
        (elsewhere.as_str(), "names no episode visible"),
    ] {
        let err = engram
            .memory()
            .create_memory(proto::CreateMemoryRequest {
                scope: Some(ns.clone()),
                memory: Some(from_episode("The build cache lives on the NAS", episode)),
                ..Default::default()
            })
            .await
            .expect_err("refused");
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
        assert_rejects(&err, "memory.episode_id");
        assert!(format!("{err:?}").contains(why), "{err:?}");
    }
    let err = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: vec![
                input(MemoryType::Fact, "The staging database is on port 5433"),
                from_episode("The build cache lives on the NAS", unknown),
            ],
            ..Default::default()
        })
        .await
        .expect_err("refused");
    assert_rejects(&err, "memories[1].episode_id");
    let err = engram
        .policy()
        .remember(proto::RememberRequest {
            scope: Some(ns.clone()),
            transcript: "User: I always prefer tabs over spaces.".into(),
            episode_id: unknown.into(),
            ..Default::default()
        })
        .await
        .expect_err("refused");
    assert_rejects(&err, "episode_id");
    assert!(
        list_all(&engram, &ns, 100).await.is_empty(),
        "nothing was stored"
    );
}

#[tokio::test]
async fn without_kept_transcripts_only_the_hash_is_kept_and_a_replaced_memory_names_its_successor()
{
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("provenance-explain").with_user("alice");

    let old = remember(
        &engram,
        &ns,
        "User: I prefer dark mode in every editor.",
        "",
    )
    .await;
    let provenance = get(&engram, &ns, &old.id)
        .await
        .provenance
        .expect("a provenance");
    assert_eq!(provenance.method(), WriteMethod::Remember);
    assert_eq!(
        provenance.transcript, "",
        "transcripts are kept only when asked"
    );
    assert_eq!(
        provenance.transcript_sha256,
        sha256_hex("User: I prefer dark mode in every editor.")
    );
    assert_eq!(
        (provenance.key_id.as_str(), provenance.episode_id.as_str()),
        ("", "")
    );

    let new = remember(
        &engram,
        &ns,
        "User: I no longer prefer dark mode; switch me back to light mode.",
        "",
    )
    .await;
    let explained = explain(&engram, &ns, &old.id).await;
    let successor = explained.replaced_by.expect("what replaced it");
    assert_eq!(successor.id, new.id);
    let actions: Vec<proto::RevisionAction> =
        explained.revisions.iter().map(|r| r.action()).collect();
    assert_eq!(
        actions,
        [
            proto::RevisionAction::Created,
            proto::RevisionAction::Invalidated
        ]
    );
    let said = explained.explanation.join("\n");
    assert!(said.contains("No longer true since"), "{said}");
    assert!(
        said.contains(&format!("replaced by memory {}", new.id)),
        "{said}"
    );
    assert!(explained.episode.is_none());

    let err = engram
        .memory()
        .explain_memory(proto::ExplainMemoryRequest {
            scope: Some(scope("someone-else")),
            id: old.id.clone(),
        })
        .await
        .expect_err("not visible from another namespace");
    assert_eq!(err.code(), Code::NotFound);
}
