//! The calls most tests make, in one line each with the tests' defaults:
//! scopes and inputs, creating, searching and listing memories.

use std::collections::BTreeSet;

use engram_client::{Engram, proto};

/// A scope in `namespace` with nothing else set.
pub fn scope(namespace: &str) -> proto::Scope {
    proto::Scope {
        namespace: namespace.to_owned(),
        ..Default::default()
    }
}

/// A memory input of `memory_type` with `content`, everything else default.
pub fn input(memory_type: proto::MemoryType, content: &str) -> proto::MemoryInput {
    proto::MemoryInput {
        memory_type: memory_type.into(),
        content: content.to_owned(),
        ..Default::default()
    }
}

/// Creates one memory and returns the response.
pub async fn create(
    engram: &Engram,
    scope: &proto::Scope,
    memory: proto::MemoryInput,
) -> proto::CreateMemoryResponse {
    engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(scope.clone()),
            memory: Some(memory),
            ..Default::default()
        })
        .await
        .expect("create memory")
}

/// Creates `memories` in one BatchCreateMemories call.
pub async fn create_batch(
    engram: &Engram,
    scope: &proto::Scope,
    memories: Vec<proto::MemoryInput>,
) -> proto::BatchCreateMemoriesResponse {
    engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(scope.clone()),
            memories,
            ..Default::default()
        })
        .await
        .expect("batch create")
}

/// The hits of a search.
pub async fn search(
    engram: &Engram,
    request: proto::SearchMemoriesRequest,
) -> Vec<proto::SearchHit> {
    engram
        .memory()
        .search_memories(request)
        .await
        .expect("search")
        .hits
}

/// Searches `scope` for `query` (10 hits) with this semantic weight (the
/// server's default when `None`); the whole response, which says how
/// meaning was used.
pub async fn search_meaning(
    engram: &Engram,
    scope: &proto::Scope,
    query: &str,
    semantic: Option<f64>,
) -> proto::SearchMemoriesResponse {
    engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(scope.clone()),
            query: query.into(),
            limit: 10,
            weights: Some(proto::SearchWeights {
                semantic,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("search")
}

/// The contents of a search's hits, best first.
pub fn hit_contents(response: &proto::SearchMemoriesResponse) -> Vec<&str> {
    response
        .hits
        .iter()
        .map(|h| {
            h.memory
                .as_ref()
                .expect("a hit has its memory")
                .content
                .as_str()
        })
        .collect()
}

/// Every memory visible from `scope`, through all pages.
pub async fn list_all(engram: &Engram, scope: &proto::Scope, page_size: i32) -> Vec<proto::Memory> {
    let mut memories = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = engram
            .memory()
            .list_memories(proto::ListMemoriesRequest {
                scope: Some(scope.clone()),
                page_size,
                page_token,
                ..Default::default()
            })
            .await
            .expect("list memories");
        memories.extend(page.memories);
        if page.next_page_token.is_empty() {
            return memories;
        }
        page_token = page.next_page_token;
    }
}

/// The ids of the memories ListMemories returns from `scope` with `filter`
/// (up to 1,000: one page).
pub async fn listed_ids(
    engram: &Engram,
    scope: &proto::Scope,
    filter: &proto::MemoryFilter,
) -> BTreeSet<String> {
    engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(scope.clone()),
            filter: Some(filter.clone()),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list memories")
        .memories
        .into_iter()
        .map(|m| m.id)
        .collect()
}
