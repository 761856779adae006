//! Bad input is rejected with INVALID_ARGUMENT naming the field, and changes nothing.

use std::collections::BTreeMap;

use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, assert_rejects, create, input, list_all, scope};

fn create_request(memory: proto::MemoryInput) -> proto::CreateMemoryRequest {
    proto::CreateMemoryRequest {
        scope: Some(scope("validation")),
        memory: Some(memory),
        ..Default::default()
    }
}

#[tokio::test]
async fn every_kind_of_bad_memory_is_rejected_with_its_field_named() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("validation");
    let ok = || input(MemoryType::Fact, "a valid memory");

    let cases: Vec<(&str, proto::MemoryInput)> = vec![
        ("memory.content", input(MemoryType::Fact, "")),
        ("memory.content", input(MemoryType::Fact, " \n\t ")),
        (
            "memory.content",
            input(MemoryType::Fact, &"x".repeat(64 * 1024 + 1)),
        ),
        (
            "memory.importance",
            proto::MemoryInput {
                importance: Some(1.5),
                ..ok()
            },
        ),
        (
            "memory.importance",
            proto::MemoryInput {
                importance: Some(-0.1),
                ..ok()
            },
        ),
        (
            "memory.importance",
            proto::MemoryInput {
                importance: Some(f64::NAN),
                ..ok()
            },
        ),
        (
            "memory.confidence",
            proto::MemoryInput {
                confidence: Some(2.0),
                ..ok()
            },
        ),
        (
            "memory.memory_type",
            proto::MemoryInput {
                memory_type: 99,
                ..ok()
            },
        ),
        ("memory.level", proto::MemoryInput { level: 42, ..ok() }),
        ("memory.source", proto::MemoryInput { source: -3, ..ok() }),
        (
            "memory.summary",
            proto::MemoryInput {
                summary: "s".repeat(1001),
                ..ok()
            },
        ),
        (
            "memory.tags",
            proto::MemoryInput {
                tags: (0..33).map(|i| format!("t{i}")).collect(),
                ..ok()
            },
        ),
        (
            "memory.tags[1]",
            proto::MemoryInput {
                tags: vec!["fine".into(), String::new()],
                ..ok()
            },
        ),
        (
            "memory.metadata",
            proto::MemoryInput {
                metadata: (0..65).map(|i| (format!("k{i}"), "v".to_owned())).collect(),
                ..ok()
            },
        ),
        (
            "memory.expire_time",
            proto::MemoryInput {
                expire_time: Some(prost_types::Timestamp {
                    seconds: 1,
                    nanos: 0,
                }),
                ..ok()
            },
        ),
    ];
    for (field, memory) in cases {
        let status = engram
            .memory()
            .create_memory(create_request(memory))
            .await
            .expect_err(field);
        assert_rejects(&status, field);
    }

    let status = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(ns.clone()),
            memory: None,
            ..Default::default()
        })
        .await
        .expect_err("missing memory");
    assert_rejects(&status, "memory");

    for blank in [" ", "\t"] {
        let status = engram
            .memory()
            .create_memory(proto::CreateMemoryRequest {
                scope: Some(proto::Scope {
                    namespace: "ok".into(),
                    project_id: blank.into(),
                    ..Default::default()
                }),
                memory: Some(ok()),
                ..Default::default()
            })
            .await
            .expect_err("white-space project");
        assert_rejects(&status, "scope.project_id");
    }
    let bad_scope = proto::Scope {
        namespace: "has space".into(),
        agent_id: "x".repeat(129),
        ..Default::default()
    };
    let status = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(bad_scope),
            memory: Some(ok()),
            ..Default::default()
        })
        .await
        .expect_err("bad scope");
    assert_rejects(&status, "scope.namespace");
    assert_rejects(&status, "scope.agent_id");

    // A batch with one bad item stores none of them.
    let status = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: vec![ok(), input(MemoryType::Fact, "")],
            ..Default::default()
        })
        .await
        .expect_err("bad batch item");
    assert_rejects(&status, "memories[1].content");
    let status = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: vec![],
            ..Default::default()
        })
        .await
        .expect_err("empty batch");
    assert_rejects(&status, "memories");

    assert!(
        list_all(&engram, &ns, 50).await.is_empty(),
        "nothing was written"
    );
}

#[tokio::test]
async fn bad_reads_and_updates_are_rejected_and_change_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("validation-reads");
    let stored = create(&engram, &ns, input(MemoryType::Fact, "unchanged"))
        .await
        .memory
        .unwrap();

    let status = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: "not-a-uuid".into(),
        })
        .await
        .expect_err("malformed id");
    assert_rejects(&status, "id");

    for page_size in [-1, 1001, i32::MAX] {
        let status = engram
            .memory()
            .list_memories(proto::ListMemoriesRequest {
                scope: Some(ns.clone()),
                page_size,
                ..Default::default()
            })
            .await
            .expect_err("page_size out of range");
        assert_rejects(&status, "page_size");
    }
    let status = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            page_token: "garbage".into(),
            ..Default::default()
        })
        .await
        .expect_err("bad page token");
    assert_rejects(&status, "page_token");
    let status = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            order_by: 17,
            ..Default::default()
        })
        .await
        .expect_err("unknown order");
    assert_rejects(&status, "order_by");
    let status = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            filter: Some(proto::MemoryFilter {
                valid_at: Some(prost_types::Timestamp {
                    seconds: 1_700_000_000,
                    nanos: 0,
                }),
                include_invalidated: true,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect_err("valid_at with include_invalidated");
    assert_rejects(&status, "filter.include_invalidated");
    let status = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            filter: Some(proto::MemoryFilter {
                memory_types: vec![1, 77],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect_err("unknown type in filter");
    assert_rejects(&status, "filter.memory_types[1]");

    let update = |paths: Vec<&str>, memory: proto::MemoryInput| proto::UpdateMemoryRequest {
        scope: Some(ns.clone()),
        id: stored.id.clone(),
        memory: Some(memory),
        update_mask: Some(prost_types::FieldMask {
            paths: paths.into_iter().map(str::to_owned).collect(),
        }),
        etag: String::new(),
    };
    for (paths, memory, field) in [
        (
            vec!["content", "colour"],
            input(MemoryType::Fact, "changed"),
            "update_mask.paths[1]",
        ),
        (
            vec!["level"],
            input(MemoryType::Fact, "changed"),
            "update_mask.paths[0]",
        ),
        (
            vec!["content"],
            input(MemoryType::Fact, ""),
            "memory.content",
        ),
        (
            vec!["importance"],
            proto::MemoryInput {
                importance: Some(7.0),
                ..Default::default()
            },
            "memory.importance",
        ),
        (vec![], proto::MemoryInput::default(), "update_mask"),
        (
            vec![],
            proto::MemoryInput {
                level: 3,
                ..input(MemoryType::Fact, "moved")
            },
            "memory.level",
        ),
        (
            vec!["content"],
            proto::MemoryInput {
                source: 2,
                ..input(MemoryType::Fact, "relabelled")
            },
            "memory.source",
        ),
    ] {
        let status = engram
            .memory()
            .update_memory(update(paths, memory))
            .await
            .expect_err(field);
        assert_rejects(&status, field);
    }

    for (request, field) in [
        (
            proto::SearchMemoriesRequest {
                scope: Some(ns.clone()),
                query: String::new(),
                ..Default::default()
            },
            "query",
        ),
        (
            proto::SearchMemoriesRequest {
                scope: Some(ns.clone()),
                query: "q".into(),
                limit: 101,
                ..Default::default()
            },
            "limit",
        ),
        (
            proto::SearchMemoriesRequest {
                scope: Some(ns.clone()),
                query: "q".into(),
                weights: Some(proto::SearchWeights {
                    relevance: Some(-1.0),
                    ..Default::default()
                }),
                ..Default::default()
            },
            "weights.relevance",
        ),
        (
            proto::SearchMemoriesRequest {
                scope: Some(ns.clone()),
                query: "q".into(),
                weights: Some(proto::SearchWeights {
                    recency_half_life: Some(prost_types::Duration {
                        seconds: 0,
                        nanos: 0,
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            },
            "weights.recency_half_life",
        ),
    ] {
        let status = engram
            .memory()
            .search_memories(request)
            .await
            .expect_err(field);
        assert_rejects(&status, field);
    }

    let status = engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            etag: "\u{7}".repeat(100),
            ..update(vec!["content"], input(MemoryType::Fact, "changed"))
        })
        .await
        .expect_err("garbage etag");
    assert_rejects(&status, "etag");
    let status = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            filter: Some(proto::MemoryFilter {
                created_after: Some(prost_types::Timestamp {
                    seconds: 2_000_000_000,
                    nanos: 0,
                }),
                created_before: Some(prost_types::Timestamp {
                    seconds: 1_000_000_000,
                    nanos: 0,
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect_err("an empty time range");
    assert_rejects(&status, "filter.created_before");
    let status = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            filter: Some(proto::MemoryFilter {
                created_after: Some(prost_types::Timestamp {
                    seconds: i64::MAX / 2,
                    nanos: 0,
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect_err("a timestamp past year 9999");
    assert_rejects(&status, "filter.created_after");
    let status = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: "q".into(),
            weights: Some(proto::SearchWeights {
                relevance: Some(1e308),
                recency: Some(1e308),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect_err("weights that overflow");
    assert_rejects(&status, "weights.relevance");

    for token_budget in [1, 15, 32_769, -5] {
        let status = engram
            .memory()
            .build_context(proto::BuildContextRequest {
                scope: Some(ns.clone()),
                token_budget,
                ..Default::default()
            })
            .await
            .expect_err("token budget out of range");
        assert_rejects(&status, "token_budget");
    }

    let after = list_all(&engram, &ns, 50).await;
    assert_eq!(after, vec![stored], "nothing changed");
}

#[tokio::test]
async fn fts_syntax_in_a_query_is_plain_text() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("fts-injection");
    create(
        &engram,
        &ns,
        input(
            MemoryType::Fact,
            "NEAR the AND gate, content: OR \"quotes\"",
        ),
    )
    .await;
    for query in [
        "\"", "content:", "NEAR(", "a AND", "*", "OR OR", "^x", "-", "(((", "🙂",
    ] {
        let result = engram
            .memory()
            .search_memories(proto::SearchMemoriesRequest {
                scope: Some(ns.clone()),
                query: query.into(),
                ..Default::default()
            })
            .await;
        assert!(result.is_ok(), "query {query:?} failed: {result:?}");
    }
    let metadata: BTreeMap<String, String> =
        [("k\"'); DROP TABLE memories; --".to_owned(), "v".to_owned())].into();
    let stored = create(
        &engram,
        &ns,
        proto::MemoryInput {
            metadata: metadata.clone(),
            ..input(MemoryType::Note, "odd keys")
        },
    )
    .await;
    assert_eq!(stored.memory.unwrap().metadata, metadata);
    let filtered = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            filter: Some(proto::MemoryFilter {
                metadata,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("metadata filter with odd keys")
        .memories;
    assert_eq!(filtered.len(), 1);
}

/// However many problems a request has, or however long the text a problem
/// quotes, the error stays small enough for any gRPC client (whose limit on
/// trailers is 8 KiB by default): the first violations, and how many more.
#[tokio::test]
async fn an_error_with_a_thousand_violations_stays_readable() {
    let server = Server::start().await;
    let engram = server.client().await;
    let status = engram
        .learning()
        .forget(proto::ForgetRequest {
            scope: Some(scope("thousand-violations")),
            kinds: vec![0; 1_000],
            ..Default::default()
        })
        .await
        .expect_err("refused");
    assert_rejects(&status, "kinds[0]");
    let violations = status.field_violations();
    assert!(violations.len() < 1_000, "{}", violations.len());
    let shown = violations.len();
    let message = status.message();
    assert!(message.len() < 2_048, "{} bytes", message.len());
    assert!(
        message.contains(&format!("and {} more", 1_000 - shown)),
        "{message}"
    );
    let details = status.status().expect("a status").details().len();
    assert!(details < 4_096, "{details} bytes of details");
}
