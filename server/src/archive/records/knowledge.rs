//! The records of what memories mean beyond their text: links between
//! memories, and the entities they name with every name each goes by.

use serde::{Deserialize, Serialize};

use crate::domain::entity::EntityType;
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

/// An entity memories name (its names follow as [`EntityNameRecord`]s;
/// which memories name it is not exported: an imported memory names its
/// entities again, through the names the file brings).
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
