//! The records of what memories mean beyond their text: links between
//! memories, the entities they name with every name each goes by, and what
//! the model read a memory to state of them.

use serde::{Deserialize, Serialize};

use crate::domain::entity::EntityType;
use crate::domain::provenance::WriteMethod;
use crate::domain::{LinkKind, Micros};

/// A link from a memory to another (each link is two records, one each
/// way).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryLinkRecord {
    pub namespace: String,
    pub memory_id: String,
    pub other_id: String,
    /// How they are linked (not `kind`: that names the record's kind).
    #[serde(with = "super::link_kind")]
    pub link_kind: LinkKind,
    pub reason: String,
    pub create_time: Micros,
}

/// Where a memory came from (one record a memory; memories written before
/// provenance was kept have none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryProvenanceRecord {
    pub namespace: String,
    pub memory_id: String,
    /// How it was written: `create_memory`, `batch_create_memories` or
    /// `remember`.
    #[serde(with = "super::write_method")]
    pub method: WriteMethod,
    pub key_id: String,
    pub agent_id: String,
    /// The episode its writer named; empty when none.
    pub episode_id: String,
    /// For a Remember, the hex SHA-256 of its transcript; else empty.
    pub transcript_sha256: String,
    /// The screened transcript, when the server kept it; else empty.
    pub transcript: String,
    pub create_time: Micros,
}

/// An entity memories name (its names follow as [`EntityNameRecord`]s, and
/// the memories naming it as [`MemoryEntityRecord`]s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityRecord {
    pub id: String,
    pub namespace: String,
    /// The case-folded key of `name`.
    pub key: String,
    /// Its name as first written.
    pub name: String,
    #[serde(with = "super::entity_type")]
    pub entity_type: EntityType,
    pub create_time: Micros,
}

/// One name an entity goes by, under its case-folded key (unique in its
/// namespace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityNameRecord {
    pub namespace: String,
    pub key: String,
    pub entity_id: String,
    pub name: String,
}

/// A memory naming an entity, as the rules or the model found it when it
/// was written or read (an imported memory is also read by the rules
/// again, so that a file of a version before 4 links what they find).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryEntityRecord {
    pub namespace: String,
    pub memory_id: String,
    pub entity_id: String,
}

/// One thing a memory states of an entity it names, as (subject,
/// predicate, object), read by the model (`--llm-base-url`); a memory's
/// relations follow it in the order the model gave them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryRelationRecord {
    pub namespace: String,
    pub memory_id: String,
    /// Its place among the memory's relations, from 0.
    pub position: i64,
    /// The key of the entity it is about (an entity name's `key`).
    pub subject_key: String,
    pub predicate: String,
    pub object: String,
}
