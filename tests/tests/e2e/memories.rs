//! Memory lifecycle over the real server: create, get, update, delete,
//! merging of identical memories, idempotent creates and etags.

use engram_client::Code;
use engram_client::proto::{self, MemoryType, WriteResult};
use engram_tests::{Server, create, input, list_all, scope, uuid_v7};

#[tokio::test]
async fn create_get_update_delete_round_trip() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("round-trip");

    let mut memory = input(MemoryType::Fact, "The staging database runs on port 5433");
    memory.summary = "staging db port".into();
    memory.tags = vec!["infra".into(), "db".into()];
    memory.metadata = [("source".to_owned(), "runbook".to_owned())].into();
    memory.importance = Some(0.7);
    let created = create(&engram, &ns, memory).await;
    assert_eq!(created.result(), WriteResult::Created);
    let stored = created.memory.expect("memory");
    assert_eq!(stored.content, "The staging database runs on port 5433");
    assert_eq!(stored.memory_type(), MemoryType::Fact);
    assert_eq!(stored.level(), proto::MemoryLevel::Global);
    assert_eq!(stored.source(), proto::MemorySource::Explicit);
    assert_eq!(stored.importance, 0.7);
    assert_eq!(stored.confidence, 1.0);
    assert_eq!(stored.seen_count, 1);
    assert_eq!(stored.tags, ["infra", "db"]);
    assert_eq!(
        stored.metadata.get("source").map(String::as_str),
        Some("runbook")
    );
    assert!(stored.create_time.is_some() && stored.update_time.is_some());
    assert!(!stored.etag.is_empty());
    uuid_v7(&stored.id);

    let got = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: stored.id.clone(),
        })
        .await
        .expect("get");
    // GetMemory alone shows where it came from.
    let provenance = got.provenance.clone().expect("its provenance");
    assert_eq!(provenance.method(), proto::WriteMethod::CreateMemory);
    assert_eq!(provenance.create_time, stored.create_time);
    assert_eq!(
        proto::Memory {
            provenance: None,
            ..got
        },
        stored
    );

    let updated = engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(ns.clone()),
            id: stored.id.clone(),
            memory: Some(proto::MemoryInput {
                content: "The staging database runs on port 6543".into(),
                importance: Some(0.9),
                summary: "ignored: not in the mask".into(),
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into(), "importance".into()],
            }),
            etag: stored.etag.clone(),
        })
        .await
        .expect("update");
    assert_eq!(updated.content, "The staging database runs on port 6543");
    assert_eq!(updated.importance, 0.9);
    assert_eq!(
        updated.summary, "staging db port",
        "fields outside the mask keep their value"
    );
    assert_eq!(updated.tags, stored.tags);
    assert_ne!(updated.etag, stored.etag);
    assert_eq!(updated.create_time, stored.create_time);

    let reread = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: stored.id.clone(),
        })
        .await
        .expect("get after update");
    assert!(reread.provenance.is_some(), "{reread:?}");
    assert_eq!(
        proto::Memory {
            provenance: None,
            ..reread
        },
        updated
    );

    engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns.clone()),
            id: stored.id.clone(),
            etag: String::new(),
        })
        .await
        .expect("delete");
    let gone = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: stored.id.clone(),
        })
        .await
        .expect_err("deleted memory");
    assert_eq!(gone.code(), Code::NotFound);
    let again = engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns),
            id: stored.id,
            etag: String::new(),
        })
        .await
        .expect_err("second delete");
    assert_eq!(again.code(), Code::NotFound);
}

#[tokio::test]
async fn an_empty_update_mask_updates_the_fields_that_are_set() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("implicit-mask");
    let stored = create(&engram, &ns, input(MemoryType::Note, "draft note"))
        .await
        .memory
        .unwrap();
    let updated = engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(ns),
            id: stored.id,
            memory: Some(proto::MemoryInput {
                tags: vec!["later".into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("update");
    assert_eq!(updated.tags, ["later"]);
    assert_eq!(updated.content, "draft note");
    assert_eq!(updated.memory_type(), MemoryType::Note);
}

#[tokio::test]
async fn a_stale_etag_is_aborted_and_changes_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("etags");
    let first = create(&engram, &ns, input(MemoryType::Decision, "We use Postgres"))
        .await
        .memory
        .unwrap();
    let update = |etag: String, content: &str| proto::UpdateMemoryRequest {
        scope: Some(ns.clone()),
        id: first.id.clone(),
        memory: Some(proto::MemoryInput {
            content: content.into(),
            ..Default::default()
        }),
        update_mask: Some(prost_types::FieldMask {
            paths: vec!["content".into()],
        }),
        etag,
    };
    let second = engram
        .memory()
        .update_memory(update(first.etag.clone(), "We use Postgres 16"))
        .await
        .expect("update with the current etag");

    let stale = engram
        .memory()
        .update_memory(update(first.etag.clone(), "We use MySQL"))
        .await
        .expect_err("update with a stale etag");
    assert_eq!(stale.code(), Code::Aborted);
    let stale_delete = engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns.clone()),
            id: first.id.clone(),
            etag: first.etag,
        })
        .await
        .expect_err("delete with a stale etag");
    assert_eq!(stale_delete.code(), Code::Aborted);

    let current = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: first.id.clone(),
        })
        .await
        .expect("get");
    assert_eq!(
        proto::Memory {
            provenance: None,
            ..current
        },
        second,
        "failed conditional writes change nothing"
    );
    engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns),
            id: first.id,
            etag: second.etag,
        })
        .await
        .expect("delete with the current etag");
}

#[tokio::test]
async fn identical_content_merges_instead_of_duplicating() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("merge");
    let mut first = input(MemoryType::Preference, "The user prefers dark mode");
    first.importance = Some(0.4);
    let created = create(&engram, &ns, first).await;
    assert_eq!(created.result(), WriteResult::Created);
    let original = created.memory.unwrap();

    // Same content once case and white space are normalised, higher importance.
    let mut again = input(MemoryType::Preference, "  the user PREFERS\tdark mode ");
    again.importance = Some(0.8);
    let merged = create(&engram, &ns, again).await;
    assert_eq!(merged.result(), WriteResult::Merged);
    let merged = merged.memory.unwrap();
    assert_eq!(merged.id, original.id);
    assert_eq!(merged.seen_count, 2);
    assert_eq!(merged.importance, 0.8, "the higher importance wins");
    assert_eq!(
        merged.content, "The user prefers dark mode",
        "the first wording is kept"
    );
    let micros = |t: &Option<prost_types::Timestamp>| {
        t.map(|t| t.seconds * 1_000_000 + i64::from(t.nanos / 1000))
    };
    assert!(micros(&merged.update_time) > micros(&original.update_time));
    assert_ne!(merged.etag, original.etag);

    // A lower importance does not lower it.
    let mut third = input(MemoryType::Preference, "The user prefers dark mode");
    third.importance = Some(0.1);
    let third = create(&engram, &ns, third).await.memory.unwrap();
    assert_eq!((third.seen_count, third.importance), (3, 0.8));

    // A different type, level or namespace is a different memory.
    assert_eq!(
        create(
            &engram,
            &ns,
            input(MemoryType::Fact, "The user prefers dark mode")
        )
        .await
        .result(),
        WriteResult::Created
    );
    assert_eq!(
        create(
            &engram,
            &scope("other"),
            input(MemoryType::Preference, "The user prefers dark mode")
        )
        .await
        .result(),
        WriteResult::Created
    );
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 2);
}

#[tokio::test]
async fn a_retried_create_with_the_same_request_id_stores_once() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("idempotent");
    let request = proto::CreateMemoryRequest {
        scope: Some(ns.clone()),
        memory: Some(input(MemoryType::Event, "Deployed v2.3 to production")),
        request_id: "0f8e2a8c-7a51-4a1f-9a0c-6a3b9d1e2f40".into(),
        ..Default::default()
    };
    let first = engram
        .memory()
        .create_memory(request.clone())
        .await
        .expect("first");
    let retry = engram.memory().create_memory(request).await.expect("retry");
    assert_eq!(first.result(), WriteResult::Created);
    assert_eq!(
        retry, first,
        "a retry returns the first result, not a merge"
    );
    let stored = list_all(&engram, &ns, 50).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].seen_count, 1);

    // The same id for a different request (here, from another project) is
    // refused instead of answered with a memory that scope did not create.
    let reused = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(proto::Scope {
                namespace: "idempotent".into(),
                project_id: "elsewhere".into(),
                ..Default::default()
            }),
            memory: Some(input(MemoryType::Event, "Deployed v2.3 to production")),
            request_id: "0f8e2a8c-7a51-4a1f-9a0c-6a3b9d1e2f40".into(),
            ..Default::default()
        })
        .await
        .expect_err("request id reused for another request");
    assert_eq!(reused.code(), Code::AlreadyExists);
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 1);

    // The same for a batch.
    let batch = proto::BatchCreateMemoriesRequest {
        scope: Some(ns.clone()),
        memories: vec![
            input(MemoryType::Fact, "fact one"),
            input(MemoryType::Fact, "fact two"),
        ],
        request_id: "batch-7".into(),
        ..Default::default()
    };
    let first = engram
        .memory()
        .batch_create_memories(batch.clone())
        .await
        .expect("batch");
    let retry = engram
        .memory()
        .batch_create_memories(batch)
        .await
        .expect("batch retry");
    assert_eq!(retry, first);
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 3);
}

#[tokio::test]
async fn a_batch_reports_each_item_in_order_and_merges_within_itself() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("batch");
    let results = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: vec![
                input(MemoryType::Fact, "alpha"),
                input(MemoryType::Fact, "beta"),
                input(MemoryType::Fact, "ALPHA"),
            ],
            ..Default::default()
        })
        .await
        .expect("batch")
        .results;
    let summary: Vec<(WriteResult, String)> = results
        .iter()
        .map(|r| (r.result(), r.memory.as_ref().unwrap().content.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (WriteResult::Created, "alpha".to_owned()),
            (WriteResult::Created, "beta".to_owned()),
            (WriteResult::Merged, "alpha".to_owned()),
        ]
    );
    assert_eq!(results[2].memory.as_ref().unwrap().seen_count, 2);
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 2);
}

#[tokio::test]
async fn expired_memories_are_never_returned() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("expiry");
    let soon = std::time::SystemTime::now() + std::time::Duration::from_millis(1500);
    let mut fleeting = input(MemoryType::Event, "the build is currently red");
    fleeting.expire_time = Some(prost_types::Timestamp::from(soon));
    let fleeting = create(&engram, &ns, fleeting).await.memory.unwrap();
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "the build runs on CI"),
    )
    .await;
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 2);

    tokio::time::sleep(std::time::Duration::from_millis(1600)).await;
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 1);
    let get = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: fleeting.id,
        })
        .await
        .expect_err("expired");
    assert_eq!(get.code(), Code::NotFound);
    let hits = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: "build red".into(),
            ..Default::default()
        })
        .await
        .expect("search")
        .hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(
        hits[0].memory.as_ref().unwrap().content,
        "the build runs on CI"
    );
    // Storing the same content again makes a fresh memory, not a merge into the expired one.
    let fresh = create(
        &engram,
        &ns,
        input(MemoryType::Event, "the build is currently red"),
    )
    .await;
    assert_eq!(fresh.result(), WriteResult::Created);
    assert_eq!(fresh.memory.unwrap().seen_count, 1);
}

#[tokio::test]
async fn storing_again_without_an_expiry_keeps_the_memory_for_good() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("merge-expiry");
    let soon = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let mut fleeting = input(MemoryType::Fact, "the release freeze starts friday");
    fleeting.expire_time = Some(prost_types::Timestamp::from(soon));
    let first = create(&engram, &ns, fleeting).await.memory.unwrap();
    assert!(first.expire_time.is_some());
    let merged = create(
        &engram,
        &ns,
        input(MemoryType::Fact, "the release freeze starts friday"),
    )
    .await;
    assert_eq!(merged.result(), WriteResult::Merged);
    assert_eq!(
        merged.memory.unwrap().expire_time,
        None,
        "no expiry wins over an expiry"
    );
}

#[tokio::test]
async fn ids_are_found_whatever_their_spelling() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("uuid-spelling");
    let stored = create(&engram, &ns, input(MemoryType::Note, "spelled ids"))
        .await
        .memory
        .unwrap();
    for spelling in [
        stored.id.to_uppercase(),
        format!("{{{}}}", stored.id),
        format!("urn:uuid:{}", stored.id),
    ] {
        let got = engram
            .memory()
            .get_memory(proto::GetMemoryRequest {
                scope: Some(ns.clone()),
                id: spelling.clone(),
            })
            .await
            .unwrap_or_else(|e| panic!("{spelling}: {e:?}"));
        assert_eq!(got.id, stored.id);
    }
}

#[tokio::test]
async fn large_memories_page_within_the_default_message_size() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("big-pages");
    let memories = (0..100)
        .map(|i| input(MemoryType::Note, &format!("{i} {}", "x".repeat(60 * 1024))))
        .collect();
    let created = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories,
            ..Default::default()
        })
        .await
        .expect("a 6 MB batch and its echo");
    assert_eq!(created.results.len(), 100);

    // A plain generated client, with gRPC's default 4 MiB limit, can page through them.
    let mut plain = proto::memory_service_client::MemoryServiceClient::connect(server.url.clone())
        .await
        .unwrap();
    let first = plain
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            page_size: 100,
            ..Default::default()
        })
        .await
        .expect("first page fits")
        .into_inner();
    assert!(
        first.memories.len() < 100,
        "the page is cut by size, not count"
    );
    assert!(!first.next_page_token.is_empty());
    assert_eq!(list_all(&engram, &ns, 100).await.len(), 100);
}
