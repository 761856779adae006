//! Domain → protobuf conversions for responses.

use engram::v1 as pb;
use prost_types::Timestamp;

use crate::domain::{Created, Memory, Micros, Scope};
use crate::engine::context::{ContextBlock, ItemKind};
use crate::engine::search::Hit;

/// Microseconds since the epoch as a protobuf timestamp.
pub fn timestamp(micros: Micros) -> Timestamp {
    Timestamp {
        seconds: micros.div_euclid(1_000_000),
        // In [0, 999_999_000], so it always fits an i32.
        nanos: i32::try_from(micros.rem_euclid(1_000_000) * 1_000).unwrap_or(0),
    }
}

pub fn scope(scope: Scope) -> pb::Scope {
    pb::Scope {
        namespace: scope.namespace,
        agent_id: scope.agent_id,
        user_id: scope.user_id,
        project_id: scope.project_id,
        session_id: scope.session_id,
    }
}

pub fn memory(memory: Memory) -> pb::Memory {
    let etag = memory.etag();
    pb::Memory {
        id: memory.id,
        scope: Some(scope(memory.scope)),
        level: memory.level.code(),
        memory_type: memory.memory_type.code(),
        content: memory.content,
        summary: memory.summary,
        tags: memory.tags,
        metadata: memory.metadata.into_iter().collect(),
        importance: memory.importance,
        confidence: memory.confidence,
        source: memory.source.code(),
        seen_count: memory.seen_count,
        access_count: memory.access_count,
        create_time: Some(timestamp(memory.create_time)),
        update_time: Some(timestamp(memory.update_time)),
        last_access_time: memory.last_access_time.map(timestamp),
        expire_time: memory.expire_time.map(timestamp),
        etag,
    }
}

pub fn created(created: Created) -> pb::CreateMemoryResponse {
    pb::CreateMemoryResponse {
        result: created.result as i32,
        memory: Some(memory(created.memory)),
    }
}

pub fn hit(hit: Hit) -> pb::SearchHit {
    pb::SearchHit {
        score: hit.score,
        relevance: hit.relevance,
        recency: hit.recency,
        importance: hit.importance,
        memory: Some(memory(hit.memory)),
    }
}

pub fn context(block: ContextBlock) -> pb::BuildContextResponse {
    pb::BuildContextResponse {
        items: block
            .items
            .into_iter()
            .map(|item| pb::ContextItem {
                kind: match item.kind {
                    ItemKind::Memory => pb::ContextItemKind::Memory,
                    ItemKind::Preference => pb::ContextItemKind::Preference,
                } as i32,
                id: item.id,
            })
            .collect(),
        token_estimate: i32::try_from(block.token_estimate).unwrap_or(i32::MAX),
        truncated: block.truncated,
        text: block.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_before_the_epoch_have_positive_nanos() {
        assert_eq!(
            timestamp(-1),
            Timestamp {
                seconds: -1,
                nanos: 999_999_000
            }
        );
        assert_eq!(
            timestamp(1_500_000),
            Timestamp {
                seconds: 1,
                nanos: 500_000_000
            }
        );
    }
}
