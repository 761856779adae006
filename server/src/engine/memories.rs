//! Writing memories (DESIGN §3), as units of work: a new memory merges into
//! the identical one when there is one (one more sighting), an expired twin
//! gives way to it, updates keep identities unique, and request ids replay
//! the first answer. Decided here; the store inserts, finds and writes rows.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::domain::entity::Mention;
use crate::domain::policy::Decision;
use crate::domain::policy::Remembered;
use crate::domain::provenance::Provenance;
use crate::domain::{
    Actor, Created, LinkKind, Memory, MemoryLink, MemoryPatch, Micros, NewMemory, RequestKey,
    Scope, WriteResult,
};
use crate::engine::contradictions::Contradiction;
use crate::engine::dedup::content_hash;
use crate::engine::entities;
use crate::engine::unit::{self, transact, transact_freeing};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::store::tx::{Identity, MemoryInsert, Tx};

/// A new memory ready to store: its id and content hash are made by the
/// caller's task, not inside the transaction.
pub fn prepare(new: NewMemory) -> MemoryInsert {
    MemoryInsert {
        id: uuid::Uuid::now_v7().to_string(),
        content_hash: content_hash(&new.content),
        new,
    }
}

fn identity_of_new(insert: &MemoryInsert) -> Identity {
    Identity {
        scope: insert.new.scope.clone(),
        level: insert.new.level,
        memory_type: insert.new.memory_type,
        content_hash: insert.content_hash.clone(),
    }
}

fn identity_of(memory: &Memory, content_hash: &str) -> Identity {
    Identity {
        scope: memory.scope.clone(),
        level: memory.level,
        memory_type: memory.memory_type,
        content_hash: content_hash.to_owned(),
    }
}

/// Whether `memory` has expired at `now` (it is then gone for everyone).
fn expired(memory: &Memory, now: Micros) -> bool {
    memory.expire_time.is_some_and(|t| t <= now)
}

/// One more sighting of `memory` (DESIGN §3): it keeps its content, tags and
/// the rest; it is seen once more, as important as the more important of
/// the two, happened at the later of the two times, and expires at the
/// later expiry (never, if either never expires). Stated again after it
/// was invalidated, it is true again from when it was restated (its
/// history keeps the time it was not).
fn reinforce(memory: &mut Memory, new: &NewMemory, now: Micros) {
    memory.seen_count += 1;
    memory.importance = memory.importance.max(new.importance);
    let restated = new.occurred_at.unwrap_or(now);
    if memory.valid_to.is_some() {
        memory.valid_from = restated;
        memory.valid_to = None;
        memory.invalidated_by.clear();
        memory.invalidation_reason.clear();
    }
    memory.occurred_at = memory.occurred_at.max(restated);
    memory.expire_time = match (memory.expire_time, new.expire_time) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    memory.update_time = now;
    memory.version += 1;
}

/// A memory to store and the older memories of its owner it contradicts
/// (found before the transaction; checked again inside it).
#[derive(Debug, Clone)]
pub struct Write {
    pub insert: MemoryInsert,
    /// What it makes no longer true.
    pub contradicts: Vec<Contradiction>,
    /// What it contradicts but leaves true, linked to it as conflicting
    /// (ContradictionPolicy::Link).
    pub conflicts: Vec<Contradiction>,
    /// The entities it names (linked if it is stored anew).
    pub mentions: Vec<Mention>,
    /// The valid memories of its type and owner it repeats in other words,
    /// closest first: linked to it, or with `merge` the first still valid
    /// is the one it merges into instead of being stored.
    pub near_duplicates: Vec<Contradiction>,
    pub merge: bool,
}

impl Write {
    /// A memory to store that contradicts nothing.
    pub fn plain(new: NewMemory) -> Write {
        Write {
            mentions: entities::mentions(&new.content),
            insert: prepare(new),
            contradicts: Vec::new(),
            conflicts: Vec::new(),
            near_duplicates: Vec::new(),
            merge: false,
        }
    }
}

/// Stores `writes` in the caller's transaction, each merging into the
/// identical memory when there is one and invalidating what it
/// contradicts; results in the order given.
pub async fn create_many(tx: &mut dyn Tx, writes: &[Write], now: Micros) -> Result<Vec<Created>> {
    // Near-duplicates merged into what they repeat, when asked: not stored.
    let mut merged = Vec::with_capacity(writes.len());
    for write in writes {
        merged.push(if write.merge {
            merge_near_duplicate(tx, write, now).await?
        } else {
            None
        });
    }
    let inserts: Vec<&MemoryInsert> = writes
        .iter()
        .zip(&merged)
        .filter(|(_, merged)| merged.is_none())
        .map(|(write, _)| &write.insert)
        .collect();
    let mut stored = store_all(tx, &inserts, now).await?.into_iter();
    let mut created = Vec::with_capacity(writes.len());
    for merged in merged {
        created.push(match merged {
            Some(merged) => merged,
            None => stored.next().ok_or_else(|| {
                Error::Internal("the store returned fewer memories than it was given".into())
            })?,
        });
    }
    link_entities(tx, &created, writes, now).await?;
    for (created, write) in created.iter_mut().zip(writes) {
        if !created.near_duplicates.is_empty() {
            // Merged into what it repeats: the rest was done for that one.
            continue;
        }
        if created.result == WriteResult::Created && !write.near_duplicates.is_empty() {
            created.near_duplicates = link(
                tx,
                &write.near_duplicates,
                &created.memory,
                LinkKind::NearDuplicate,
                now,
            )
            .await?;
        }
        if !write.contradicts.is_empty() {
            created.invalidated = invalidate(
                tx,
                &write.contradicts,
                &mut created.memory,
                &write.insert.new.actor,
                now,
            )
            .await?;
        }
        if !write.conflicts.is_empty() {
            created.conflicting = link(
                tx,
                &write.conflicts,
                &created.memory,
                LinkKind::Conflicts,
                now,
            )
            .await?;
        }
    }
    Ok(created)
}

/// Links the memories `created` anew (not merged) to the entities their
/// writes name, per namespace (a group commit may hold several).
async fn link_entities(
    tx: &mut dyn Tx,
    created: &[Created],
    writes: &[Write],
    now: Micros,
) -> Result<()> {
    let mut links: BTreeMap<&str, Vec<(i64, Vec<Mention>)>> = BTreeMap::new();
    for (created, write) in created.iter().zip(writes) {
        if created.result == WriteResult::Created && !write.mentions.is_empty() {
            links
                .entry(created.memory.scope.namespace.as_str())
                .or_default()
                .push((created.memory.seq, write.mentions.clone()));
        }
    }
    for (namespace, links) in links {
        tx.link_entities(namespace, &links, now).await?;
    }
    Ok(())
}

/// Stores `inserts`, each merging into the identical memory when there is
/// one; results in the order given.
async fn store_all(
    tx: &mut dyn Tx,
    inserts: &[&MemoryInsert],
    now: Micros,
) -> Result<Vec<Created>> {
    if inserts.is_empty() {
        return Ok(Vec::new());
    }
    let mut seen = HashSet::new();
    if !inserts
        .iter()
        .all(|insert| seen.insert(identity_of_new(insert)))
    {
        // Memories of the batch merge into each other, in order: one at a time.
        let mut created = Vec::with_capacity(inserts.len());
        for insert in inserts {
            created.extend(create_distinct(tx, std::slice::from_ref(insert), now).await?);
        }
        return Ok(created);
    }
    create_distinct(tx, inserts, now).await
}

/// [`create_many`] for inserts of distinct identities: one lookup, one
/// insert of the new ones, one write per reinforced one.
async fn create_distinct(
    tx: &mut dyn Tx,
    inserts: &[&MemoryInsert],
    now: Micros,
) -> Result<Vec<Created>> {
    let identities: Vec<Identity> = inserts.iter().map(|i| identity_of_new(i)).collect();
    let mut live = HashMap::new();
    let mut expired_twins = Vec::new();
    for (memory, hash) in tx.identical_memories(&identities).await? {
        if expired(&memory, now) {
            // Gone as far as anyone can see: it must not block a live twin.
            expired_twins.push(memory.seq);
        } else {
            live.insert(identity_of(&memory, &hash), memory);
        }
    }
    if !expired_twins.is_empty() {
        tx.remove_memories(&expired_twins).await?;
    }
    let fresh: Vec<MemoryInsert> = inserts
        .iter()
        .zip(&identities)
        .filter(|(_, identity)| !live.contains_key(*identity))
        .map(|(insert, _)| (*insert).clone())
        .collect();
    let mut stored = if fresh.is_empty() {
        Vec::new()
    } else {
        tx.insert_memories(&fresh, now).await?
    }
    .into_iter();
    let mut created = Vec::with_capacity(inserts.len());
    for (insert, identity) in inserts.iter().zip(&identities) {
        created.push(match live.get_mut(identity) {
            Some(memory) => {
                reinforce(memory, &insert.new, now);
                tx.reinforce_memory(memory, &insert.new.actor).await?;
                Created::new(memory.clone(), WriteResult::Merged)
            }
            None => Created::new(
                stored.next().ok_or_else(|| {
                    Error::Internal("the store returned fewer memories than it inserted".into())
                })?,
                WriteResult::Created,
            ),
        });
    }
    Ok(created)
}

/// Stores memories of `namespace` with a request id, in one transaction: a
/// retry with the id gets the first call's memories (as they are now) and
/// writes nothing; the id used for a different request is refused.
pub async fn create_with_request(
    store: &dyn Store,
    namespace: String,
    request: RequestKey,
    writes: Vec<Write>,
    now: Micros,
) -> Result<Vec<Created>> {
    let call = Arc::new((namespace, request, writes));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (namespace, request, writes) = &*call;
            if let Some(first) = unit::replay::<Vec<Answered>>(tx, namespace, Some(request)).await?
            {
                return reload(tx, &request.id, first, now).await;
            }
            let created = create_many(tx, writes, now).await?;
            let answer: Vec<Answered> = created.iter().map(Answered::of).collect();
            unit::remember(tx, namespace, Some(request), &answer, now).await?;
            Ok(created)
        })
    })
    .await
}

/// What a create remembers of each memory under its request id: its id,
/// write result number, the memories it invalidated, those it linked as
/// conflicting and those it repeats (answers stored by servers before
/// contradictions have two fields, before conflict links three, before
/// near-duplicates four).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum Answered {
    Repeating(String, i32, Vec<String>, Vec<String>, Vec<String>),
    Linking(String, i32, Vec<String>, Vec<String>),
    Invalidating(String, i32, Vec<String>),
    Plain(String, i32),
}

impl Answered {
    fn of(created: &Created) -> Answered {
        Answered::Repeating(
            created.memory.id.clone(),
            created.result as i32,
            created.invalidated.clone(),
            created.conflicting.clone(),
            created.near_duplicates.clone(),
        )
    }
}

/// The memories a first call returned, as they are now.
async fn reload(
    tx: &mut dyn Tx,
    request_id: &str,
    first: Vec<Answered>,
    now: Micros,
) -> Result<Vec<Created>> {
    let mut created = Vec::with_capacity(first.len());
    for answered in first {
        let none = Vec::new;
        let (id, result, invalidated, conflicting, near_duplicates) = match answered {
            Answered::Repeating(id, result, invalidated, conflicting, repeated) => {
                (id, result, invalidated, conflicting, repeated)
            }
            Answered::Linking(id, result, invalidated, conflicting) => {
                (id, result, invalidated, conflicting, none())
            }
            Answered::Invalidating(id, result, invalidated) => {
                (id, result, invalidated, none(), none())
            }
            Answered::Plain(id, result) => (id, result, none(), none(), none()),
        };
        let memory = tx.unexpired_memory(&id, now).await?.ok_or_else(|| {
            Error::FailedPrecondition(format!(
                "request_id {request_id} was already used for memory {id}, which has since been deleted or has expired"
            ))
        })?;
        let result = if result == WriteResult::Merged as i32 {
            WriteResult::Merged
        } else {
            WriteResult::Created
        };
        created.push(Created {
            memory,
            result,
            invalidated,
            conflicting,
            near_duplicates,
        });
    }
    Ok(created)
}

/// What a Remember remembers under its request id.
#[derive(serde::Serialize, serde::Deserialize)]
struct RememberAnswer {
    decision: Decision,
    /// The stored memory's id and write result number.
    memory: Option<(String, i32)>,
    /// The memories the stored one superseded.
    #[serde(default)]
    superseded: Vec<String>,
}

/// What a Remember with this request id answered first, if it ran: run
/// before classifying, so a retry skips the classifier (and the model). A
/// request id used for a different request is `AlreadyExists`.
pub async fn replay_remember(
    store: &dyn Store,
    namespace: String,
    request: RequestKey,
) -> Result<Option<Remembered>> {
    let call = Arc::new((namespace, request));
    unit::read(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (namespace, request) = &*call;
            replayed_remember(tx, namespace, request).await
        })
    })
    .await
}

async fn replayed_remember(
    tx: &mut dyn Tx,
    namespace: &str,
    request: &RequestKey,
) -> Result<Option<Remembered>> {
    let Some(first) = unit::replay::<RememberAnswer>(tx, namespace, Some(request)).await? else {
        return Ok(None);
    };
    let created = match first.memory {
        Some((id, result)) => reload(
            tx,
            &request.id,
            vec![Answered::Invalidating(id, result, first.superseded.clone())],
            crate::domain::now_micros(),
        )
        .await?
        .pop(),
        None => None,
    };
    Ok(Some(Remembered {
        decision: first.decision,
        created,
        superseded: first.superseded,
    }))
}

/// Why a superseded memory is no longer true.
pub const SUPERSEDED: &str = "superseded: restated with a change by a newer memory";

/// Invalidates the valid memories of `contradicts` that `by` (just
/// stored) contradicts, each no longer true from when `by` is (its
/// `valid_from`), naming `by` as what replaced it — an invalidation in its
/// history; nothing is removed. Only memories `by`'s owner owns are
/// touched (checked again here, inside the transaction): never another
/// user's or agent's, nor a shared one. An older memory that turns out to
/// be true later than `by` (an import with its original dates) is not
/// replaced: `by` is, by it. Returns the ids invalidated.
async fn invalidate(
    tx: &mut dyn Tx,
    contradicts: &[Contradiction],
    by: &mut Memory,
    actor: &Actor,
    now: Micros,
) -> Result<Vec<String>> {
    let mut invalidated = Vec::new();
    for Contradiction { id, reason } in contradicts {
        if *id == by.id || by.valid_to.is_some() {
            continue;
        }
        let Some(mut old) = tx.visible_memory(&by.scope, id, now).await? else {
            continue;
        };
        if !old.owned_by(&by.scope, by.level) || old.valid_to.is_some() {
            continue;
        }
        let (earlier, later) = if old.valid_from <= by.valid_from {
            (&mut old, &*by)
        } else {
            (&mut *by, &old)
        };
        earlier.valid_to = Some(later.valid_from);
        earlier.invalidated_by = later.id.clone();
        earlier.invalidation_reason = reason.clone();
        earlier.update_time = now;
        earlier.version += 1;
        let earlier = earlier.clone();
        tx.update_memory(&earlier, &content_hash(&earlier.content), actor)
            .await?;
        if earlier.id == *id {
            invalidated.push(id.clone());
        } else {
            *by = earlier;
        }
    }
    Ok(invalidated)
}

/// Links `by` (just stored) to the valid memories of `others` as `kind`
/// (those it contradicts but leaves true, or repeats) — only memories
/// `by`'s owner owns (checked again here, inside the transaction).
/// Returns the ids linked.
async fn link(
    tx: &mut dyn Tx,
    others: &[Contradiction],
    by: &Memory,
    kind: LinkKind,
    now: Micros,
) -> Result<Vec<String>> {
    let mut linked = Vec::new();
    for Contradiction { id, reason } in others {
        if *id == by.id {
            continue;
        }
        let Some(old) = tx.visible_memory(&by.scope, id, now).await? else {
            continue;
        };
        if !old.owned_by(&by.scope, by.level) || old.valid_to.is_some() {
            continue;
        }
        let pair = (by.id.as_str(), id.as_str());
        tx.link_memories(&by.scope.namespace, pair, kind, reason, now)
            .await?;
        linked.push(id.clone());
    }
    Ok(linked)
}

/// Merges `write` into the first of its near-duplicates still a valid,
/// unexpired memory of its type that its owner owns (checked here, inside
/// the transaction): one more sighting of it, as an identical memory would
/// be. `None` when none is (the write is stored instead).
async fn merge_near_duplicate(
    tx: &mut dyn Tx,
    write: &Write,
    now: Micros,
) -> Result<Option<Created>> {
    let new = &write.insert.new;
    for Contradiction { id, .. } in &write.near_duplicates {
        let Some(mut old) = tx.visible_memory(&new.scope, id, now).await? else {
            continue;
        };
        if !old.owned_by(&new.scope, new.level)
            || old.valid_to.is_some()
            || expired(&old, now)
            || old.memory_type != new.memory_type
        {
            continue;
        }
        reinforce(&mut old, new, now);
        tx.reinforce_memory(&old, &new.actor).await?;
        let mut merged = Created::new(old, WriteResult::Merged);
        merged.near_duplicates.push(id.clone());
        return Ok(Some(merged));
    }
    Ok(None)
}

/// Stores a Remember's memory (when it has one) and, with a request id,
/// remembers the answer, in one transaction; a request id that ran
/// meanwhile returns its first answer instead.
pub async fn remember(
    store: &dyn Store,
    namespace: String,
    request: Option<RequestKey>,
    decision: Decision,
    memory: Option<Write>,
    now: Micros,
) -> Result<Remembered> {
    let call = Arc::new((namespace, request, decision, memory));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (namespace, request, decision, write) = &*call;
            if let Some(request) = request
                && let Some(first) = replayed_remember(tx, namespace, request).await?
            {
                return Ok(first);
            }
            let created = match write {
                Some(write) => create_many(tx, std::slice::from_ref(write), now)
                    .await?
                    .pop(),
                None => None,
            };
            let superseded = created
                .as_ref()
                .map(|c| c.invalidated.clone())
                .unwrap_or_default();
            let answer = RememberAnswer {
                decision: decision.clone(),
                memory: created
                    .as_ref()
                    .map(|c| (c.memory.id.clone(), c.result as i32)),
                superseded: superseded.clone(),
            };
            unit::remember(tx, namespace, request.as_ref(), &answer, now).await?;
            Ok(Remembered {
                decision: decision.clone(),
                created,
                superseded,
            })
        })
    })
    .await
}

/// The most links GetMemory shows of a memory.
const MAX_LINKS_SHOWN: usize = 100;

/// The memory `id` visible from `scope` with its first links (see
/// [`MAX_LINKS_SHOWN`]) and its provenance, on one snapshot.
pub async fn get_detailed(
    store: &dyn Store,
    scope: Scope,
    id: String,
    now: Micros,
) -> Result<Detailed> {
    let call = Arc::new((scope, id));
    unit::read(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (scope, id) = &*call;
            let memory = tx
                .visible_memory(scope, id, now)
                .await?
                .ok_or_else(|| Error::NotFound(format!("memory {id} not found")))?;
            let links = tx.memory_links(id, MAX_LINKS_SHOWN).await?;
            let provenance = tx.provenance(id).await?;
            Ok(Detailed {
                memory,
                links,
                provenance,
            })
        })
    })
    .await
}

/// A memory with what only a read of that one memory shows.
#[derive(Debug, Clone)]
pub struct Detailed {
    pub memory: Memory,
    /// Its first links to other memories (see [`MAX_LINKS_SHOWN`]).
    pub links: Vec<MemoryLink>,
    /// Where it came from; `None` when written before provenance was kept.
    pub provenance: Option<Provenance>,
}

/// The memory `id` visible from `scope`, if `etag` (when given) is still
/// its current one.
async fn for_write(
    tx: &mut dyn Tx,
    scope: &Scope,
    id: &str,
    etag: Option<&str>,
    now: Micros,
) -> Result<Memory> {
    let memory = tx
        .visible_memory(scope, id, now)
        .await?
        .ok_or_else(|| Error::NotFound(format!("memory {id} not found")))?;
    match etag {
        Some(etag) if etag != memory.etag() => Err(Error::Aborted(format!(
            "memory {id} has changed: etag {etag} is stale (current {}); read it again and retry",
            memory.etag()
        ))),
        _ => Ok(memory),
    }
}

/// Applies `patch` to the memory `id` visible from `scope`; with an `etag`,
/// only if it is still current (else `Aborted`). A change that would make
/// it identical to another live memory is `AlreadyExists`.
pub async fn update_memory(
    store: &dyn Store,
    scope: Scope,
    id: String,
    patch: MemoryPatch,
    etag: Option<String>,
    actor: Actor,
    now: Micros,
) -> Result<Memory> {
    // A new content names its own entities, found before the transaction.
    let mentions = patch.content.as_deref().map(entities::mentions);
    let call = Arc::new((scope, id, patch, etag, actor, mentions));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (scope, id, patch, etag, actor, mentions) = &*call;
            let mut memory = for_write(tx, scope, id, etag.as_deref(), now).await?;
            let content_before = memory.content.clone();
            apply_patch(&mut memory, patch.clone())?;
            memory.update_time = now;
            memory.version += 1;
            let hash = content_hash(&memory.content);
            let identity = identity_of(&memory, &hash);
            for (twin, _) in tx
                .identical_memories(std::slice::from_ref(&identity))
                .await?
            {
                if twin.seq == memory.seq {
                    continue;
                }
                if expired(&twin, now) {
                    tx.remove_memories(&[twin.seq]).await?;
                } else {
                    return Err(Error::AlreadyExists(format!(
                        "an identical {} memory already exists in this scope",
                        memory.memory_type.label().to_lowercase()
                    )));
                }
            }
            tx.update_memory(&memory, &hash, actor).await?;
            if let Some(mentions) = mentions
                && memory.content != content_before
            {
                tx.unlink_entities(memory.seq).await?;
                // What the model read of the old content no longer holds.
                tx.set_relations(memory.seq, &[]).await?;
                let links = [(memory.seq, mentions.clone())];
                tx.link_entities(&memory.scope.namespace, &links, now)
                    .await?;
            }
            Ok(memory)
        })
    })
    .await
}

/// Why a memory a caller invalidated with UpdateMemory is no longer true.
pub const SET_BY_UPDATE: &str = "valid_to set by UpdateMemory";

fn apply_patch(memory: &mut Memory, patch: MemoryPatch) -> Result<()> {
    let MemoryPatch {
        memory_type,
        content,
        summary,
        tags,
        metadata,
        importance,
        confidence,
        expire_time,
        occurred_at,
        valid_to,
    } = patch;
    if let Some(v) = memory_type {
        memory.memory_type = v;
    }
    if let Some(v) = content {
        memory.content = v;
    }
    if let Some(v) = summary {
        memory.summary = v;
    }
    if let Some(v) = tags {
        memory.tags = v;
    }
    if let Some(v) = metadata {
        memory.metadata = v;
    }
    if let Some(v) = importance {
        memory.importance = v;
    }
    if let Some(v) = confidence {
        memory.confidence = v;
    }
    if let Some(v) = expire_time {
        memory.expire_time = v;
    }
    if let Some(v) = occurred_at {
        let occurred_at = v.unwrap_or(memory.create_time);
        // It is true from when it happened, unless it was said otherwise.
        if memory.valid_from == memory.occurred_at {
            memory.valid_from = occurred_at;
        }
        memory.occurred_at = occurred_at;
    }
    match valid_to {
        None => {}
        Some(None) => {
            memory.valid_to = None;
            memory.invalidated_by.clear();
            memory.invalidation_reason.clear();
        }
        Some(Some(to)) => {
            if to <= memory.valid_from {
                return Err(Error::invalid(
                    "memory.valid_to",
                    "must be later than the memory's valid_from",
                ));
            }
            if memory.valid_to.is_none() {
                memory.invalidation_reason = SET_BY_UPDATE.to_owned();
            }
            memory.valid_to = Some(to);
        }
    }
    Ok(())
}

/// Deletes the memory `id` visible from `scope`; with an `etag`, only if it
/// is still current (else `Aborted`). Runs on a full disk: it frees space.
pub async fn delete_memory(
    store: &dyn Store,
    scope: Scope,
    id: String,
    etag: Option<String>,
    actor: Actor,
    now: Micros,
) -> Result<()> {
    let call = Arc::new((scope, id, etag, actor));
    transact_freeing(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (scope, id, etag, actor) = &*call;
            let memory = for_write(tx, scope, id, etag.as_deref(), now).await?;
            // History names whoever the row names as its last writer.
            tx.stamp_actor(memory.seq, actor).await?;
            tx.remove_memories(&[memory.seq]).await
        })
    })
    .await
}
