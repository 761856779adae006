//! The server as a process: health, paging at scale, durability across
//! restarts and under concurrent writes, clean shutdown.

use std::collections::HashSet;

use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, create_batch, input, list_all, scope};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

#[tokio::test]
async fn health_answers_serving_for_the_server_and_the_memory_service() {
    let server = Server::start().await;
    let engram = server.client().await;
    let mut health = HealthClient::new(engram.channel());
    for service in ["", "engram.v1.MemoryService"] {
        let status = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("health check")
            .into_inner()
            .status();
        assert_eq!(status, ServingStatus::Serving, "service {service:?}");
    }
}

async fn batch(
    engram: &engram_client::Engram,
    scope: &proto::Scope,
    contents: impl Iterator<Item = String>,
) {
    let memories = contents.map(|c| input(MemoryType::Fact, &c)).collect();
    create_batch(engram, scope, memories).await;
}

#[tokio::test]
async fn paging_through_1000_memories_returns_each_exactly_once() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("paging");
    batch(&engram, &ns, (0..500).map(|i| format!("memory number {i}"))).await;
    batch(
        &engram,
        &ns,
        (500..1000).map(|i| format!("memory number {i}")),
    )
    .await;

    for order in [
        proto::MemoryOrder::Unspecified,
        proto::MemoryOrder::CreateTimeAsc,
        proto::MemoryOrder::ImportanceDesc,
    ] {
        let mut seen = Vec::new();
        let mut page_token = String::new();
        let mut pages = 0;
        loop {
            let page = engram
                .memory()
                .list_memories(proto::ListMemoriesRequest {
                    scope: Some(ns.clone()),
                    page_size: 37,
                    page_token,
                    order_by: order.into(),
                    ..Default::default()
                })
                .await
                .expect("list");
            assert!(page.memories.len() <= 37);
            pages += 1;
            seen.extend(page.memories.into_iter().map(|m| m.content));
            if page.next_page_token.is_empty() {
                break;
            }
            page_token = page.next_page_token;
        }
        assert_eq!(pages, 1000usize.div_ceil(37), "{order:?}");
        assert_eq!(seen.len(), 1000, "{order:?}");
        let unique: HashSet<&String> = seen.iter().collect();
        assert_eq!(unique.len(), 1000, "{order:?}: no memory twice");
        if order == proto::MemoryOrder::CreateTimeAsc {
            assert_eq!(seen[0], "memory number 0");
            assert_eq!(seen[999], "memory number 999");
        }
    }

    // A page token only continues the listing it came from.
    let first = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            page_size: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    let reused = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(scope("someone-else")),
            page_size: 10,
            page_token: first.next_page_token,
            ..Default::default()
        })
        .await
        .expect_err("token from another scope");
    assert_eq!(reused.code(), engram_client::Code::InvalidArgument);
}

#[tokio::test]
async fn data_survives_a_restart_on_the_same_file() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("durable");
    batch(&engram, &ns, (0..25).map(|i| format!("durable fact {i}"))).await;
    let before = list_all(&engram, &ns, 10).await;
    assert_eq!(before.len(), 25);

    let server = server.restart().await;
    let engram = server.client().await;
    let after = list_all(&engram, &ns, 10).await;
    assert_eq!(after, before);
    let hits = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns),
            query: "durable fact 7".into(),
            ..Default::default()
        })
        .await
        .expect("search after restart")
        .hits;
    assert!(!hits.is_empty(), "the full-text index survives too");
}

#[tokio::test]
async fn concurrent_writes_are_all_acknowledged_and_kept() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("concurrent");
    let writers: Vec<_> = (0..200)
        .map(|i| {
            let engram = engram.clone();
            let ns = ns.clone();
            tokio::spawn(async move {
                engram
                    .memory()
                    .create_memory(proto::CreateMemoryRequest {
                        scope: Some(ns),
                        memory: Some(input(MemoryType::Event, &format!("event {i}"))),
                        ..Default::default()
                    })
                    .await
                    .map(|r| r.memory.unwrap().id)
            })
        })
        .collect();
    let mut acknowledged = HashSet::new();
    for writer in writers {
        acknowledged.insert(writer.await.expect("task").expect("acknowledged write"));
    }
    assert_eq!(acknowledged.len(), 200);

    let server = server.restart().await;
    let stored: HashSet<String> = list_all(&server.client().await, &ns, 1000)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(stored, acknowledged, "every acknowledged write is on disk");
}

#[tokio::test]
async fn sigterm_stops_the_server_cleanly() {
    let mut server = Server::start().await;
    let engram = server.client().await;
    batch(
        &engram,
        &scope("bye"),
        (0..3).map(|i| format!("last words {i}")),
    )
    .await;
    assert_eq!(server.terminate().await, Some(0));
    let log = server.log();
    assert!(log.contains("shutting down"), "{log}");
    assert!(log.contains("stopped"), "{log}");
}

#[tokio::test]
async fn every_rpc_is_logged_with_method_namespace_and_status() {
    let server = Server::start().await;
    let engram = server.client().await;
    let _ = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(scope("logged")),
            memory: Some(input(MemoryType::Fact, "")),
            ..Default::default()
        })
        .await;
    let log = server.log();
    let line = log
        .lines()
        .find(|l| l.contains("/engram.v1.MemoryService/CreateMemory"))
        .unwrap_or_else(|| panic!("no span for CreateMemory in:\n{log}"));
    assert!(line.contains("namespace=\"logged\""), "{line}");
    assert!(line.contains("status=InvalidArgument"), "{line}");
    assert!(line.contains("latency_ms="), "{line}");

    // A success sends its status in the trailers after the message: the
    // line is written when the body ends, with the status they carry.
    engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(scope("logged-ok")),
            memory: Some(input(MemoryType::Fact, "logged")),
            ..Default::default()
        })
        .await
        .expect("create");
    let log = server.log();
    let line = log
        .lines()
        .find(|l| l.contains("namespace=\"logged-ok\"") && l.contains("rpc finished"))
        .unwrap_or_else(|| panic!("no end of the successful CreateMemory in:\n{log}"));
    assert!(line.contains("status=Ok"), "{line}");
}
