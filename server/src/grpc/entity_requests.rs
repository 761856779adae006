//! Entity requests (ListEntities, GetEntity, MergeEntities, and the
//! entities a memory filter names): validated and turned into domain
//! values.

use engram::v1 as pb;

use super::page_token;
use super::validate::Violations;
use crate::domain::Validity;
use crate::domain::entity::{EntityCursor, EntityLookup, EntityQuery, EntityType, key};
use crate::error::Result;

/// The most characters of an entity's name or id in a request.
pub const MAX_ENTITY_CHARS: usize = 256;
/// The most entities one memory filter may name.
pub const MAX_FILTER_ENTITIES: usize = 16;
pub const DEFAULT_ENTITY_MEMORIES: usize = 20;
pub const MAX_ENTITY_MEMORIES: usize = 100;

/// Checks an entity named by id or name in `field`.
fn entity(v: &mut Violations, field: &str, value: &str) -> String {
    v.text(field, value, MAX_ENTITY_CHARS, true);
    value.trim().to_owned()
}

/// The entities a memory filter names (`filter.entities`).
pub fn filter_entities(v: &mut Violations, entities: &[String]) -> Vec<String> {
    if entities.len() > MAX_FILTER_ENTITIES {
        v.add(
            "filter.entities",
            format!("must name at most {MAX_FILTER_ENTITIES} entities"),
        );
    }
    entities
        .iter()
        .enumerate()
        .map(|(i, name)| entity(v, &format!("filter.entities[{i}]"), name))
        .collect()
}

/// A ListEntities request as a query, with the fingerprint its page tokens
/// are bound to.
pub fn list(req: &pb::ListEntitiesRequest) -> Result<(EntityQuery, String)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let types: Vec<EntityType> = req
        .entity_types
        .iter()
        .enumerate()
        .filter_map(|(i, &code)| {
            let field = format!("entity_types[{i}]");
            if code == 0 {
                v.add(field, "must not be ENTITY_TYPE_UNSPECIFIED");
                return None;
            }
            v.enum_value(&field, code, EntityType::from_code)
        })
        .collect();
    v.text("name_prefix", &req.name_prefix, MAX_ENTITY_CHARS, false);
    let prefix = key(&req.name_prefix);
    let page_size = v.page_size("page_size", req.page_size);
    let fingerprint = page_token::fingerprint(&(&scope, &types, &prefix));
    let after = page_token::decode_text_field(&mut v, "page_token", &req.page_token, &fingerprint)
        .map(|(key, [seq])| EntityCursor { key, seq });
    v.finish((
        EntityQuery {
            scope,
            types,
            prefix,
            page_size,
            after,
        },
        fingerprint,
    ))
}

/// A GetEntity request as a lookup.
pub fn get(req: &pb::GetEntityRequest) -> Result<EntityLookup> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let entity = entity(&mut v, "entity", &req.entity);
    let validity = v
        .timestamp("valid_at", req.valid_at.as_ref())
        .map_or(Validity::Current, Validity::At);
    let limit = v.count_or_default(
        "memory_limit",
        req.memory_limit,
        DEFAULT_ENTITY_MEMORIES,
        1,
        MAX_ENTITY_MEMORIES,
    );
    v.finish(EntityLookup {
        scope,
        entity,
        validity,
        limit,
    })
}

/// A MergeEntities request: the namespace, the entity to keep and its
/// duplicate.
pub fn merge(req: &pb::MergeEntitiesRequest) -> Result<(crate::domain::Scope, String, String)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let kept = entity(&mut v, "entity", &req.entity);
    let duplicate = entity(&mut v, "duplicate", &req.duplicate);
    if !kept.is_empty() && key(&kept) == key(&duplicate) {
        v.add("duplicate", "must name another entity than `entity`");
    }
    v.finish((scope, kept, duplicate))
}
