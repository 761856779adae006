//! The history of a memory, over the real server: every create, merge,
//! update, delete and expiry is recorded with its time, actor (API key id
//! and agent) and changed fields; ListMemoryRevisions returns it, also for a
//! deleted memory and after a restart, within its namespace only.

use std::time::Duration;

use engram_client::proto::{self, MemoryType, RevisionAction};
use engram_client::{Code, Engram};
use engram_tests::{Server, input, scope, sha256_hex};
use tempfile::TempDir;

async fn revisions(
    engram: &Engram,
    namespace: &str,
    id: &str,
) -> Result<Vec<proto::MemoryRevision>, engram_client::Error> {
    let mut all = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = engram
            .memory()
            .list_memory_revisions(proto::ListMemoryRevisionsRequest {
                scope: Some(scope(namespace)),
                id: id.to_owned(),
                page_size: 2,
                page_token,
            })
            .await?;
        all.extend(page.revisions);
        if page.next_page_token.is_empty() {
            return Ok(all);
        }
        page_token = page.next_page_token;
    }
}

#[tokio::test]
async fn every_change_to_a_memory_is_recorded_with_who_made_it_and_what_it_changed() {
    let dir = TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "writer-key write notes\nadmin-key admin *\n").expect("keys");
    let server = Server::start_with_args(&["--auth-keys", keys.to_str().expect("utf-8")]).await;
    let writer = server.client_with_key("writer-key").await;
    let admin = server.client_with_key("admin-key").await;
    let agent = scope("notes").with_agent("planner");

    let create = |content: &str| proto::CreateMemoryRequest {
        scope: Some(agent.clone()),
        memory: Some(input(MemoryType::Fact, content)),
        ..Default::default()
    };
    let id = writer
        .memory()
        .create_memory(create("The deploy window is Tuesday"))
        .await
        .expect("create")
        .memory
        .expect("memory")
        .id;
    writer
        .memory()
        .create_memory(create("The deploy window is Tuesday"))
        .await
        .expect("create again: merged");
    let updated = admin
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(scope("notes")),
            id: id.clone(),
            memory: Some(proto::MemoryInput {
                content: "The deploy window is Thursday".into(),
                importance: Some(0.9),
                ..input(MemoryType::Fact, "")
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into(), "importance".into()],
            }),
            ..Default::default()
        })
        .await
        .expect("update");
    assert_eq!(updated.content, "The deploy window is Thursday");
    writer
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(agent.clone()),
            id: id.clone(),
            ..Default::default()
        })
        .await
        .expect("delete");

    let history = revisions(&writer, "notes", &id)
        .await
        .expect("history of a deleted memory");
    let summary: Vec<(RevisionAction, i64, String, String, Vec<String>)> = history
        .iter()
        .map(|r| {
            (
                r.action(),
                r.version,
                r.key_id.clone(),
                r.agent_id.clone(),
                r.changed_fields.clone(),
            )
        })
        .collect();
    // Keys go by an HMAC of their digest under the database's secret, as
    // the server logs them: never the bare digest, which would let any
    // reader test guesses of a weak key offline.
    let (writer_id, admin_id) = (server.key_id(1), server.key_id(2));
    assert_eq!(writer_id.len(), 16, "{writer_id}");
    assert_ne!(writer_id, sha256_hex("writer-key")[..16]);
    assert_ne!(admin_id, sha256_hex("admin-key")[..16]);
    assert_ne!(writer_id, admin_id);
    assert_eq!(
        summary,
        [
            (
                RevisionAction::Created,
                1,
                writer_id.clone(),
                "planner".into(),
                vec![]
            ),
            (
                RevisionAction::Merged,
                2,
                writer_id.clone(),
                "planner".into(),
                // The merge also keeps the later occurred_at: the second
                // create's, which defaulted to its time.
                vec!["seen_count".to_owned(), "occurred_at".to_owned()]
            ),
            (
                RevisionAction::Updated,
                3,
                admin_id.clone(),
                String::new(),
                vec!["content".to_owned(), "importance".to_owned()]
            ),
            (
                RevisionAction::Deleted,
                3,
                writer_id.clone(),
                "planner".into(),
                vec![]
            ),
        ]
    );
    let times: Vec<_> = history.iter().map(|r| r.time.expect("time")).collect();
    assert!(
        times
            .windows(2)
            .all(|w| (w[0].seconds, w[0].nanos) <= (w[1].seconds, w[1].nanos)),
        "{times:?}"
    );

    // Another namespace has no history of it; nor has an unknown id.
    let elsewhere = admin
        .memory()
        .list_memory_revisions(proto::ListMemoryRevisionsRequest {
            scope: Some(scope("other")),
            id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(elsewhere.code(), Code::NotFound);

    // The history survives a restart, and the keys keep their ids.
    let server = server.restart().await;
    assert_eq!((server.key_id(1), server.key_id(2)), (writer_id, admin_id));
    let after = Engram::builder(&server.url)
        .api_key("admin-key")
        .connect()
        .await
        .expect("connect");
    assert_eq!(
        revisions(&after, "notes", &id).await.expect("history"),
        history
    );
}

#[tokio::test]
async fn an_expired_memory_purged_by_retention_is_recorded_as_expired_by_no_one() {
    let server = Server::start_with_args(&["--retention-interval", "1s"]).await;
    let engram = server.client().await;
    let expires = prost_types::Timestamp {
        seconds: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64
            + 2,
        nanos: 0,
    };
    let id = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(scope("fleeting")),
            memory: Some(proto::MemoryInput {
                expire_time: Some(expires),
                ..input(MemoryType::Note, "Standup moved to 10:30 today")
            }),
            ..Default::default()
        })
        .await
        .expect("create")
        .memory
        .expect("memory")
        .id;
    let mut history = Vec::new();
    for _ in 0..300 {
        history = revisions(&engram, "fleeting", &id).await.expect("history");
        if history.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let actions: Vec<_> = history
        .iter()
        .map(|r| (r.action(), r.key_id.as_str()))
        .collect();
    assert_eq!(
        actions,
        [(RevisionAction::Created, ""), (RevisionAction::Expired, "")]
    );
}
