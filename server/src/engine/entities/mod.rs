//! Entities (DESIGN: knowledge that stays true): the people, organizations,
//! projects, services, tools and places memories name. A memory's entities
//! are found by rules ([`extract`]) when it is written, outside the write's
//! transaction, and linked to it inside; a name first seen makes a new
//! entity. Readers see an entity through the memories they see.

mod extract;
mod lexicon;
pub mod llm;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::domain::entity::{
    Entity, EntityLookup, EntityQuery, EntityView, Mention, Relation, StatedRelation, key,
};
use crate::domain::{Memory, MemoryFilter, Micros, Scope};
use crate::engine::contradictions::{claims, folded};
use crate::engine::unit;
use crate::error::{Error, Result};
use crate::index::STOP_WORDS;
use crate::store::Store;

/// The most of a memory's content searched for entities: a long memory is
/// named by its beginning, and a write never waits long for the rules.
const MAX_EXTRACTED_BYTES: usize = 8 * 1024;
/// The most entities linked to one memory.
const MAX_MENTIONS: usize = 32;

/// The entities a memory of `content` names, each once, in order of first
/// mention.
pub fn mentions(content: &str) -> Vec<Mention> {
    let text = &content[..content.floor_char_boundary(MAX_EXTRACTED_BYTES)];
    let mut mentions = extract::extract(text);
    mentions.truncate(MAX_MENTIONS);
    mentions
}

/// Resolves the entities `filter` names (ids or names, as the caller gave
/// them) to ids, and reads the memories naming all of them for the
/// indexes. A name no entity goes by leaves the filter matching nothing.
pub async fn resolve_filter(
    store: &dyn Store,
    namespace: &str,
    filter: &mut MemoryFilter,
) -> Result<()> {
    if filter.entities.is_empty() {
        return Ok(());
    }
    let call = Arc::new((namespace.to_owned(), filter.entities.clone()));
    let (ids, seqs) = unit::read(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (namespace, named) = &*call;
            let mut ids = Vec::with_capacity(named.len());
            for name in named {
                match tx.find_entity(namespace, name).await? {
                    Some(id) => ids.push(id),
                    None => return Ok((vec![String::new()], Vec::new())),
                }
            }
            let seqs = tx.mentioning(&ids).await?;
            Ok((ids, seqs))
        })
    })
    .await?;
    filter.entities = ids;
    filter.mentioning = Some(Arc::new(seqs.into_iter().collect::<HashSet<i64>>()));
    Ok(())
}

/// One page of the entities `query` asks for (plus one).
pub async fn list(store: &dyn Store, query: &EntityQuery, now: Micros) -> Result<Vec<Entity>> {
    let query = Arc::new(query.clone());
    unit::read(store, move |tx| {
        let query = query.clone();
        Box::pin(async move { tx.list_entities(&query, now).await })
    })
    .await
}

/// The entity `lookup` names, with its memories true at the asked time
/// and the attributes they state; `NotFound` when no memory the scope sees
/// names it.
pub async fn get(store: &dyn Store, lookup: EntityLookup, now: Micros) -> Result<EntityView> {
    let lookup = Arc::new(lookup);
    let found = unit::read(store, move |tx| {
        let lookup = lookup.clone();
        Box::pin(async move {
            let scope = &lookup.scope;
            let Some(id) = tx.find_entity(&scope.namespace, &lookup.entity).await? else {
                return Ok(None);
            };
            let Some(entity) = tx.entity(scope, &id, now).await? else {
                return Ok(None);
            };
            let memories = tx
                .entity_memories(scope, &id, lookup.validity, lookup.limit, now)
                .await?;
            let seqs: Vec<i64> = memories.iter().map(|m| m.seq).collect();
            let stated = tx.relations(&seqs).await?;
            Ok(Some((entity, memories, lookup.limit, stated)))
        })
    })
    .await?;
    let (entity, mut memories, limit, stated) = found.ok_or_else(|| {
        Error::NotFound(
            "no entity of that name or id is named by a memory visible from this scope".into(),
        )
    })?;
    let truncated = memories.len() > limit;
    memories.truncate(limit);
    let relations = relations(&entity, &memories, &stated);
    Ok(EntityView {
        entity,
        memories,
        relations,
        truncated,
    })
}

/// The name of the entity `id` and the first `limit` memories `scope`
/// sees that name it and count as true under `validity`, newest truth
/// first — what a context block says about it, without the counts and
/// names GetEntity adds. `None` when no memory the scope sees names it.
pub async fn about(
    store: &dyn Store,
    scope: &Scope,
    id: &str,
    validity: crate::domain::Validity,
    limit: usize,
    now: Micros,
) -> Result<Option<(String, Vec<Memory>)>> {
    let call = Arc::new((scope.clone(), id.to_owned()));
    unit::read(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (scope, id) = &*call;
            let memories = tx.entity_memories(scope, id, validity, limit, now).await?;
            if memories.is_empty() {
                return Ok(None);
            }
            Ok(tx.entity_name(id).await?.map(|name| (name, memories)))
        })
    })
    .await
}

/// What `memories` (newest truth first) state of `entity`'s attributes:
/// one relation per attribute, from the newest memory stating it — what
/// the model read of a memory (`stated`, about the entity when its
/// subject is one of the entity's names) before what the rules read. A
/// claim is about the entity when every word of its subject is a word of
/// one of the entity's names.
pub fn relations(
    entity: &Entity,
    memories: &[Memory],
    stated: &[(i64, StatedRelation)],
) -> Vec<Relation> {
    let names: HashSet<String> = std::iter::once(&entity.name)
        .chain(&entity.aliases)
        .flat_map(|name| folded(name))
        .collect();
    let keys: HashSet<String> = std::iter::once(&entity.name)
        .chain(&entity.aliases)
        .map(|name| key(name))
        .collect();
    let mut found: BTreeMap<String, Relation> = BTreeMap::new();
    let mut order = Vec::new();
    let mut add = |attribute: String, object: String, memory: &Memory| {
        if !found.contains_key(&attribute) {
            order.push(attribute.clone());
            found.insert(
                attribute.clone(),
                Relation {
                    predicate: attribute,
                    object,
                    memory_id: memory.id.clone(),
                },
            );
        }
    };
    for memory in memories {
        // What the model read of it first, then what the rules read.
        for (_, relation) in stated
            .iter()
            .filter(|(seq, r)| *seq == memory.seq && keys.contains(&r.subject_key))
        {
            add(relation.predicate.clone(), relation.object.clone(), memory);
        }
        for claim in claims(&memory.content) {
            let about = !claim.negated
                && !claim.subject.is_empty()
                && claim.subject.iter().all(|word| names.contains(word));
            if about {
                add(claim.attribute, claim.value_text, memory);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|attribute| found.remove(&attribute))
        .collect()
}

/// Makes the entity `duplicate` a name of `kept` (both given by id or
/// name) in `scope`'s namespace; returns the kept entity as `scope` sees
/// it.
pub async fn merge(
    store: &dyn Store,
    scope: Scope,
    kept: String,
    duplicate: String,
    now: Micros,
) -> Result<Entity> {
    let call = Arc::new((scope, kept, duplicate));
    unit::transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (scope, kept, duplicate) = &*call;
            let namespace = scope.namespace.as_str();
            let find = |field: &'static str, what: &str, found: Option<String>| {
                found.ok_or_else(|| {
                    Error::NotFound(format!(
                        "{field}: no entity of this namespace is named {what:?}"
                    ))
                })
            };
            let into = find("entity", kept, tx.find_entity(namespace, kept).await?)?;
            let from = find(
                "duplicate",
                duplicate,
                tx.find_entity(namespace, duplicate).await?,
            )?;
            if into == from {
                return Err(Error::FailedPrecondition(format!(
                    "{kept:?} and {duplicate:?} are already names of one entity"
                )));
            }
            tx.merge_entities(&into, &from).await?;
            tx.entity(scope, &into, now).await?.ok_or_else(|| {
                Error::NotFound("entity: no memory visible from this scope names it".into())
            })
        })
    })
    .await
}

/// The entities `text` names that `namespace` knows, by any of their
/// names: every run of one to four words of the text is looked up, so a
/// name written without capitals ("where does alice work") is found too.
/// Ids in order of first mention, each once.
pub async fn named_in(store: &dyn Store, namespace: &str, text: &str) -> Result<Vec<String>> {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || "-_.@#'".contains(c)))
        .map(|w| w.trim_matches(|c: char| c == '.' || c == '\''))
        .filter(|w| !w.is_empty())
        .take(MAX_QUERY_WORDS)
        .collect();
    let mut runs: Vec<String> = Vec::new();
    for start in 0..words.len() {
        for len in 1..=MAX_NAME_WORDS.min(words.len() - start) {
            let run = key(&words[start..start + len].join(" "));
            // "it", "go" or "the" alone names nothing a reader means.
            let common =
                len == 1 && (run.chars().count() < 3 || STOP_WORDS.contains(&run.as_str()));
            if !common && !runs.contains(&run) {
                runs.push(run);
            }
        }
    }
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let call = Arc::new((namespace.to_owned(), runs));
    unit::read(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (namespace, runs) = &*call;
            let keys: Vec<&str> = runs.iter().map(String::as_str).collect();
            let named = tx.entities_named(namespace, &keys).await?;
            let mut ids: Vec<String> = Vec::new();
            for run in runs {
                if let Some(id) = named_by(run, &named)
                    && !ids.contains(id)
                {
                    ids.push(id.clone());
                }
            }
            Ok(ids)
        })
    })
    .await
}

/// The entity `run` names among `named` (key, id) pairs: the one with
/// that very name, else the only one whose name starts with it ("robert"
/// for "Robert Smith"); none when several do.
fn named_by<'n>(run: &str, named: &'n [(String, String)]) -> Option<&'n String> {
    if let Some((_, id)) = named.iter().find(|(k, _)| k == run) {
        return Some(id);
    }
    let mut starting = named
        .iter()
        .filter(|(k, _)| {
            k.strip_prefix(run)
                .is_some_and(|rest| rest.starts_with(' '))
        })
        .map(|(_, id)| id);
    let first = starting.next()?;
    starting.all(|id| id == first).then_some(first)
}

/// Where the entity backfill is: it has linked the memories up to `after`
/// and reads on until `through` (`engram_meta`).
const BACKFILL_AFTER: &str = "entity_backfill_after";
const BACKFILL_THROUGH: &str = "entity_backfill_through";
/// Memories the backfill reads at a time.
const BACKFILL_BATCH: usize = 200;

/// What one step of the backfill did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backfilled {
    /// It read this many memories; more follow.
    Batch(usize),
    /// Every memory it was asked to read names its entities.
    Done,
}

/// Where the backfill is: (after, through), both 0 when it has nothing
/// to do.
async fn backfill_position(tx: &mut dyn crate::store::tx::Tx) -> Result<(i64, i64)> {
    let read = |value: Option<String>| value.and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
    let after = read(tx.meta(BACKFILL_AFTER).await?);
    let through = read(tx.meta(BACKFILL_THROUGH).await?);
    Ok((after, through))
}

/// One step of the entity backfill: links the next batch of memories it
/// has not read to the entities they name, and records how far it got, in
/// one transaction.
pub async fn backfill(store: &dyn Store) -> Result<Backfilled> {
    let (after, through) = unit::read(store, |tx| Box::pin(backfill_position(tx))).await?;
    if after >= through {
        return Ok(Backfilled::Done);
    }
    let memories = store.scan_memories(after, BACKFILL_BATCH).await?;
    let read: Vec<&Memory> = memories.iter().filter(|m| m.seq <= through).collect();
    let last = read.last().map_or(through, |m| m.seq);
    let mut links: BTreeMap<String, Vec<(i64, Vec<Mention>)>> = BTreeMap::new();
    for memory in &read {
        let mentions = mentions(&memory.content);
        if !mentions.is_empty() {
            links
                .entry(memory.scope.namespace.clone())
                .or_default()
                .push((memory.seq, mentions));
        }
    }
    let links = Arc::new(links);
    let now = crate::domain::now_micros();
    unit::transact(store, move |tx| {
        let links = links.clone();
        Box::pin(async move {
            for (namespace, links) in links.iter() {
                tx.link_entities(namespace, links, now).await?;
            }
            tx.set_meta(BACKFILL_AFTER, &last.to_string()).await
        })
    })
    .await?;
    Ok(if last >= through {
        Backfilled::Done
    } else {
        Backfilled::Batch(read.len())
    })
}

/// How many memories of `namespace` wait for the backfill to name their
/// entities.
pub async fn pending(store: &dyn Store, namespace: &str) -> Result<i64> {
    let namespace = Arc::new(namespace.to_owned());
    unit::read(store, move |tx| {
        let namespace = namespace.clone();
        Box::pin(async move {
            let (after, through) = backfill_position(tx).await?;
            if after >= through {
                return Ok(0);
            }
            tx.count_memories_between(&namespace, after, through).await
        })
    })
    .await
}

/// The most words of a query looked up as names.
const MAX_QUERY_WORDS: usize = 64;
/// The most words of one name looked up.
const MAX_NAME_WORDS: usize = 4;
