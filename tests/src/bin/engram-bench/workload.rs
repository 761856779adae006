//! The requests the benches send: a create, a search, and a namespace
//! filled with synthetic memories.

use engram_client::MemoryClient;
use engram_client::proto::{self, MemoryType};
use engram_tests::input;

use crate::text::Text;

pub fn create_request(namespace: &proto::Scope, content: String) -> proto::CreateMemoryRequest {
    proto::CreateMemoryRequest {
        scope: Some(namespace.clone()),
        memory: Some(input(MemoryType::Fact, &content)),
        ..Default::default()
    }
}

pub fn search_request(namespace: &proto::Scope, query: &str) -> proto::SearchMemoriesRequest {
    proto::SearchMemoriesRequest {
        scope: Some(namespace.clone()),
        query: query.to_owned(),
        limit: 10,
        ..Default::default()
    }
}

/// Stores `count` synthetic memories of `memory_type` in `namespace`, 500
/// per batch, each batch through the next of `clients` (replicas of one
/// database, or one server). Each memory's content starts with its number.
pub async fn fill(
    clients: &[MemoryClient],
    namespace: &proto::Scope,
    memory_type: MemoryType,
    rng: &mut Text,
    from: usize,
    count: usize,
) -> anyhow::Result<()> {
    let mut stored = 0;
    let mut batches = 0;
    while stored < count {
        let client = &clients[batches % clients.len()];
        batches += 1;
        let n = (count - stored).min(500);
        let batch = (0..n)
            .map(|i| {
                input(
                    memory_type,
                    &format!("{} {}", from + stored + i, rng.sentence(14)),
                )
            })
            .collect();
        client
            .clone()
            .batch_create_memories(proto::BatchCreateMemoriesRequest {
                scope: Some(namespace.clone()),
                memories: batch,
                ..Default::default()
            })
            .await?;
        stored += n;
    }
    Ok(())
}
