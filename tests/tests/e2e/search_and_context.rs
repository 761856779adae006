//! SearchMemories ranking and filters, and BuildContext's budget.

use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, create, input, scope, search};

fn contents(hits: &[proto::SearchHit]) -> Vec<String> {
    hits.iter()
        .map(|h| h.memory.as_ref().unwrap().content.clone())
        .collect()
}

#[tokio::test]
async fn search_puts_the_relevant_memory_first() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("search");
    for (memory_type, content) in [
        (
            MemoryType::Fact,
            "The office coffee machine is on the third floor",
        ),
        (
            MemoryType::Lesson,
            "Deploys failed because the migration locked the orders table",
        ),
        (
            MemoryType::Preference,
            "The user prefers short answers without emoji",
        ),
        (
            MemoryType::Fact,
            "Payments are processed by Stripe in the billing service",
        ),
        (
            MemoryType::Decision,
            "We decided to run database migrations before deploying",
        ),
    ] {
        create(&engram, &ns, input(memory_type, content)).await;
    }
    let hits = search(
        &engram,
        proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: "why did the deploy fail?".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(
        hits[0].memory.as_ref().unwrap().content,
        "Deploys failed because the migration locked the orders table",
        "stemming matches deploy/deploys and fail/failed: {:?}",
        contents(&hits)
    );
    assert_eq!(hits[0].relevance, 1.0);
    for hit in &hits {
        // Every hit carries its components, and the score is their weighted sum.
        let expected = 0.6 * hit.relevance + 0.2 * hit.recency + 0.2 * hit.importance;
        assert!((hit.score - expected).abs() < 1e-9, "{hit:?}");
        assert!(hit.recency > 0.99 && hit.recency <= 1.0);
    }
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(
        !contents(&hits).iter().any(|c| c.contains("coffee")),
        "unrelated memories do not match"
    );
}

#[tokio::test]
async fn search_respects_filters_and_limit() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("filters");
    let mut tagged = input(
        MemoryType::Lesson,
        "Retry the flaky upload test with a longer timeout",
    );
    tagged.tags = vec!["ci".into()];
    tagged.metadata = [("repo".to_owned(), "web".to_owned())].into();
    tagged.importance = Some(0.9);
    create(&engram, &ns, tagged).await;
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "The upload test uploads a 10 MB file"),
    )
    .await;
    let mut low = input(
        MemoryType::Lesson,
        "The upload test once failed on a full disk",
    );
    low.importance = Some(0.1);
    create(&engram, &ns, low).await;

    let query = |filter: proto::MemoryFilter| proto::SearchMemoriesRequest {
        scope: Some(ns.clone()),
        query: "upload test".into(),
        filter: Some(filter),
        ..Default::default()
    };
    assert_eq!(
        search(&engram, query(proto::MemoryFilter::default()))
            .await
            .len(),
        3
    );
    let lessons = search(
        &engram,
        query(proto::MemoryFilter {
            memory_types: vec![MemoryType::Lesson.into()],
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(lessons.len(), 2);
    assert!(
        lessons
            .iter()
            .all(|h| h.memory.as_ref().unwrap().memory_type() == MemoryType::Lesson)
    );
    let ci = search(
        &engram,
        query(proto::MemoryFilter {
            tags: vec!["ci".into()],
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(
        contents(&ci),
        ["Retry the flaky upload test with a longer timeout"]
    );
    let web = search(
        &engram,
        query(proto::MemoryFilter {
            metadata: [("repo".to_owned(), "web".to_owned())].into(),
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(
        contents(&web),
        ["Retry the flaky upload test with a longer timeout"]
    );
    let important = search(
        &engram,
        query(proto::MemoryFilter {
            min_importance: 0.5,
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(important.len(), 2);
    let limited = search(
        &engram,
        proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: "upload".into(),
            limit: 1,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(limited.len(), 1);
}

#[tokio::test]
async fn per_request_weights_change_the_ranking() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("weights");
    let mut strong_text = input(MemoryType::Fact, "kafka kafka kafka consumer lag alert");
    strong_text.importance = Some(0.0);
    create(&engram, &ns, strong_text).await;
    let mut important = input(
        MemoryType::Fact,
        "kafka brokers are in eu-west-1, always check region first",
    );
    important.importance = Some(1.0);
    create(&engram, &ns, important).await;

    let ranked = |weights: Option<proto::SearchWeights>| proto::SearchMemoriesRequest {
        scope: Some(ns.clone()),
        query: "kafka".into(),
        weights,
        ..Default::default()
    };
    let by_text = search(
        &engram,
        ranked(Some(proto::SearchWeights {
            relevance: Some(1.0),
            recency: Some(0.0),
            importance: Some(0.0),
            ..Default::default()
        })),
    )
    .await;
    assert!(
        by_text[0]
            .memory
            .as_ref()
            .unwrap()
            .content
            .starts_with("kafka kafka")
    );
    assert_eq!(by_text[0].score, by_text[0].relevance);
    let by_importance = search(
        &engram,
        ranked(Some(proto::SearchWeights {
            relevance: Some(0.0),
            recency: Some(0.0),
            importance: Some(1.0),
            ..Default::default()
        })),
    )
    .await;
    assert!(
        by_importance[0]
            .memory
            .as_ref()
            .unwrap()
            .content
            .starts_with("kafka brokers")
    );
    assert_eq!(by_importance[0].score, 1.0);
}

#[tokio::test]
async fn search_counts_accesses() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("access");
    let stored = create(
        &engram,
        &ns,
        input(MemoryType::Fact, "The VPN needs a hardware token"),
    )
    .await
    .memory
    .unwrap();
    assert_eq!(stored.access_count, 0);
    for _ in 0..3 {
        search(
            &engram,
            proto::SearchMemoriesRequest {
                scope: Some(ns.clone()),
                query: "vpn token".into(),
                ..Default::default()
            },
        )
        .await;
    }
    // Access counts are written off the request path: wait for them to land.
    let mut seen = 0;
    for _ in 0..100 {
        let memory = engram
            .memory()
            .get_memory(proto::GetMemoryRequest {
                scope: Some(ns.clone()),
                id: stored.id.clone(),
            })
            .await
            .unwrap();
        seen = memory.access_count;
        if seen == 3 {
            assert!(memory.last_access_time.is_some());
            assert_eq!(
                memory.etag, stored.etag,
                "access bookkeeping does not change the etag"
            );
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(seen, 3);
}

#[tokio::test]
async fn build_context_never_exceeds_the_token_budget() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("budget");
    let mut memories = Vec::new();
    for i in 0..60 {
        let mut memory = input(
            if i % 4 == 0 {
                MemoryType::Preference
            } else {
                MemoryType::Fact
            },
            &format!(
                "Service {i} talks to the payments API through the gateway with retries {}",
                "and more detail ".repeat(i % 9)
            ),
        );
        memory.importance = Some((i % 10) as f64 / 10.0);
        memories.push(memory);
    }
    engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories,
            ..Default::default()
        })
        .await
        .expect("batch");

    for budget in [16, 17, 25, 40, 64, 100, 128, 200, 333, 512, 1000, 4096] {
        for query in ["", "payments gateway retries"] {
            let context = engram
                .memory()
                .build_context(proto::BuildContextRequest {
                    scope: Some(ns.clone()),
                    query: query.into(),
                    token_budget: budget,
                    ..Default::default()
                })
                .await
                .expect("build context");
            let estimate = context.text.chars().count().div_ceil(4);
            assert!(
                estimate <= budget as usize,
                "budget {budget}, query {query:?}: {estimate} tokens"
            );
            assert_eq!(context.token_estimate as usize, estimate);
            assert!(
                context.text.is_empty() || context.text.ends_with('\n'),
                "lines are never cut"
            );
            let bullet_lines = context.text.lines().filter(|l| l.starts_with("- ")).count();
            assert_eq!(
                bullet_lines,
                context.items.len(),
                "every line is listed as an item"
            );
            if budget < 1000 {
                assert!(context.truncated, "budget {budget} cannot hold 60 memories");
            }
        }
    }
}

#[tokio::test]
async fn build_context_shows_relevant_memories_and_preferences() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("context");
    let fact = create(
        &engram,
        &ns,
        input(MemoryType::Fact, "The billing service is written in Go"),
    )
    .await
    .memory
    .unwrap();
    let mut pref = input(MemoryType::Preference, "Always answer in British English");
    pref.importance = Some(0.9);
    let pref = create(&engram, &ns, pref).await.memory.unwrap();
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "The office is closed on Fridays"),
    )
    .await;

    let context = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(ns.clone()),
            query: "what language is billing written in".into(),
            ..Default::default()
        })
        .await
        .expect("build context");
    assert_eq!(
        context.text,
        "## Relevant memories\n- [FACT] The billing service is written in Go\n\n## Preferences\n- Always answer in British English\n"
    );
    let items: Vec<(proto::ContextItemKind, String)> = context
        .items
        .iter()
        .map(|i| (i.kind(), i.id.clone()))
        .collect();
    assert_eq!(
        items,
        [
            (proto::ContextItemKind::Memory, fact.id),
            (proto::ContextItemKind::Preference, pref.id)
        ]
    );
    assert!(!context.truncated);

    let empty = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(scope("nothing-here")),
            ..Default::default()
        })
        .await
        .expect("empty namespace");
    assert_eq!(empty.text, "");
    assert!(empty.items.is_empty());
}
