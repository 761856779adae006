//! Entities: the people, organizations, projects, services, tools and
//! places memories name, each with every name it goes by.

use super::{Micros, Scope, Validity};

/// What kind of thing an entity is (`engram.v1.EntityType` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityType {
    Person = 1,
    Organization = 2,
    Project = 3,
    Service = 4,
    Tool = 5,
    Place = 6,
    Other = 7,
}

enum_codes!(EntityType { Person = 1, Organization = 2, Project = 3, Service = 4, Tool = 5, Place = 6, Other = 7 });

/// The key every name of an entity is stored under: two names written
/// alike ("Alice Chen", "alice  chen") share it. Lower-cased, inner white
/// space collapsed to one space, trimmed.
pub fn key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    for word in name.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(word.chars().flat_map(char::to_lowercase));
    }
    key
}

/// An entity a memory names, as the extractor found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// As written (the first, fullest form in the memory).
    pub name: String,
    pub entity_type: EntityType,
}

/// A stored entity, as a reader from some scope sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub id: String,
    /// As first written.
    pub name: String,
    pub entity_type: EntityType,
    /// Every other name it goes by, in key order.
    pub aliases: Vec<String>,
    /// The memories the reader sees that mention it and are true now.
    pub memory_count: i64,
    pub create_time: Micros,
    /// When the newest memory the reader sees that mentions it was written.
    pub last_mention_time: Micros,
    /// The listing order: the key of `name`, then `seq`.
    pub key: String,
    /// Insertion sequence number (the row id).
    pub seq: i64,
}

/// Where a page of entities starts: after this key and sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityCursor {
    pub key: String,
    pub seq: i64,
}

/// A request for one page of the entities a scope's memories name.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityQuery {
    pub scope: Scope,
    /// Only these types; empty: every type.
    pub types: Vec<EntityType>,
    /// Only entities whose name's key starts with this key.
    pub prefix: String,
    pub page_size: usize,
    pub after: Option<EntityCursor>,
}

/// What GetEntity answers: the entity and what the reader's memories say
/// of it at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityView {
    pub entity: Entity,
    /// Its memories true at the asked time, newest first.
    pub memories: Vec<super::Memory>,
    /// What those memories say the entity's attributes are.
    pub relations: Vec<Relation>,
    /// Whether more memories mention it than `memories` holds.
    pub truncated: bool,
}

/// A request for one entity and its memories.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityLookup {
    pub scope: Scope,
    /// An id, or any of its names.
    pub entity: String,
    pub validity: Validity,
    /// The most memories to return.
    pub limit: usize,
}

/// What a memory says of an entity it names, as the model read it: the
/// entity under `subject_key` (its key) `predicate` `object`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatedRelation {
    pub subject_key: String,
    pub predicate: String,
    pub object: String,
}

/// One attribute of an entity a memory states: `predicate` is `object`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    pub predicate: String,
    pub object: String,
    /// The memory that says so.
    pub memory_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_written_alike_share_a_key() {
        assert_eq!(key("Alice  Chen"), "alice chen");
        assert_eq!(key(" ALICE\tchen "), "alice chen");
        assert_eq!(key("Zürich"), key("ZÜRICH"));
        assert_ne!(key("@marco"), key("marco"));
    }
}
