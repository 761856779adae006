//! A unit of work: the storage primitives the engine drives inside one
//! transaction. The engine reads what it needs, decides, and writes exactly
//! what it decided; a backend only stores and finds. A backend may run a
//! unit of work more than once (PostgreSQL retries one that lost a
//! serialization conflict), so a unit of work keeps no state between runs.

use std::any::Any;

use async_trait::async_trait;
use futures_util::future::BoxFuture;

use crate::domain::entity::{Entity, EntityQuery, Mention, StatedRelation};
use crate::domain::episode::{Episode, MistakeCard, NewEpisode, RuleOrigin, Step, TaskRule};
use crate::domain::outcome::{AgentScope, AntiPattern, Heuristic, NewOutcome, Owner, TaskOutcome};
use crate::domain::provenance::Provenance;
use crate::domain::{
    Actor, LinkKind, Memory, MemoryLevel, MemoryLink, MemoryType, Micros, NewMemory, RequestKey,
    Scope, Validity,
};
use crate::error::Result;

/// What a unit of work returns, type-erased so [`crate::store::Store`]
/// stays object safe (`engine::unit::transact` restores the type).
pub type Answer = Box<dyn Any + Send>;

/// A unit of work as a backend runs it: called with the open transaction,
/// possibly more than once.
pub type Work = Box<dyn for<'t> FnMut(&'t mut dyn Tx) -> BoxFuture<'t, Result<Answer>> + Send>;

/// What a unit of work does to the disk, for a backend that must choose
/// what may still run when the disk is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskUse {
    /// It may grow the database: refused while the disk is full.
    Grows,
    /// It deletes (DeleteMemory, Forget, the purge): it runs on a full disk,
    /// so that space can be freed.
    Frees,
}

/// An idempotency key's record: what the first write with a request id was
/// bound to, and what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    pub fingerprint: String,
    /// The first answer, as JSON.
    pub answer: String,
}

/// A heuristic to store for the first time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewHeuristic {
    pub owner: Owner,
    pub task_type: String,
    pub strategy: String,
    /// The strategy as first worded: what later outcomes are compared with.
    pub match_key: String,
    pub confidence: f64,
    pub occurrence_count: i64,
    pub success_count: i64,
}

/// An anti-pattern to store for the first time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAntiPattern {
    pub owner: Owner,
    pub task_type: String,
    pub strategy: String,
    pub error: String,
    pub occurrence_count: i64,
    pub better_alternative: String,
    pub better_alternative_heuristic_id: String,
}

/// Which list of lessons an episode's lesson is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lesson {
    Mistake,
    Success,
}

/// What identifies a mistake card in its namespace: sightings with the same
/// key merge into one card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardKey {
    pub mistake_type: String,
    pub task_id: String,
    pub worker_id: String,
    pub correct_decision: String,
}

/// A mistake card to store for the first time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMistakeCard {
    pub namespace: String,
    pub key: CardKey,
    pub evidence: String,
    pub lesson: String,
    /// The episode it was seen in, or empty.
    pub episode_id: String,
    /// The namespace's tick of the sighting.
    pub last_seen: i64,
}

/// How far a namespace's learning has got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LearningProgress {
    /// Episodes completed, ever.
    pub completed_episodes: i64,
    /// `completed_episodes` when the namespace was last consolidated.
    pub last_consolidation: i64,
}

/// What makes memories identical (DESIGN §3): the owner scope (reduced to
/// the fields its level uses), level, type and the hash of the normalised
/// content. A namespace holds at most one memory of each identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    pub scope: Scope,
    pub level: MemoryLevel,
    pub memory_type: MemoryType,
    pub content_hash: String,
}

/// A memory to insert, with the id and content hash the engine made for it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryInsert {
    pub id: String,
    pub content_hash: String,
    pub new: NewMemory,
}

/// Records the engine has judged stale (Forget): one kind of record of one
/// owner, past a threshold.
#[derive(Debug, Clone, PartialEq)]
pub enum Stale {
    /// The owner's outcomes created before the time.
    Outcomes {
        owner: Owner,
        created_before: Micros,
    },
    /// The owner's heuristics less confident than this.
    Heuristics { owner: Owner, confidence_below: f64 },
    /// The owner's anti-patterns last seen before the time.
    AntiPatterns {
        owner: Owner,
        last_seen_before: Micros,
    },
    /// The memories owned by exactly this scope (every field as given) that
    /// expired at or before the time.
    ExpiredMemories { scope: Scope, at: Micros },
}

/// The storage primitives of one transaction. Every change is made in the
/// transaction and committed, or rolled back, with the whole unit of work.
#[async_trait]
pub trait Tx: Send {
    /// Serialises the units of work that decide about `key` (e.g. an
    /// outcome's strategy groups) until this transaction ends: where
    /// several writers run at once (PostgreSQL replicas), the second waits
    /// for the first to commit and then reads what it wrote. A backend with
    /// a single writer has nothing to do.
    async fn lock(&mut self, key: &str) -> Result<()>;

    /// The record of request id `id` in `namespace`, if a write with it ran.
    async fn request_record(&mut self, namespace: &str, id: &str) -> Result<Option<RequestRecord>>;

    /// Records what the write with `request`'s id answered.
    async fn record_request(
        &mut self,
        namespace: &str,
        request: &RequestKey,
        answer: &str,
        now: Micros,
    ) -> Result<()>;

    /// The agent's learning scope, if one was set.
    async fn agent_scope(&mut self, namespace: &str, agent_id: &str) -> Result<Option<AgentScope>>;

    /// Writes an agent's learning scope as given (its times and version
    /// included).
    async fn save_agent_scope(&mut self, scope: &AgentScope) -> Result<()>;

    /// Stores an outcome.
    async fn insert_outcome(&mut self, new: &NewOutcome, now: Micros) -> Result<TaskOutcome>;

    /// The owner's latest `limit` outcomes of `task_type`, newest first.
    async fn recent_outcomes(
        &mut self,
        owner: &Owner,
        task_type: &str,
        limit: i64,
    ) -> Result<Vec<TaskOutcome>>;

    /// The owner's heuristics of `task_type`, oldest first, each with its
    /// match key.
    async fn heuristics_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<(Heuristic, String)>>;

    async fn insert_heuristic(&mut self, new: &NewHeuristic, now: Micros) -> Result<Heuristic>;

    /// Writes a heuristic's changed fields (strategy, counts, confidence,
    /// times, version) as given.
    async fn update_heuristic(&mut self, heuristic: &Heuristic) -> Result<Heuristic>;

    /// The owner's anti-patterns of `task_type`, oldest first.
    async fn anti_patterns_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<AntiPattern>>;

    async fn insert_anti_pattern(
        &mut self,
        new: &NewAntiPattern,
        now: Micros,
    ) -> Result<AntiPattern>;

    /// Writes an anti-pattern's changed fields (strategy, error, count,
    /// better alternative, times, version) as given.
    async fn update_anti_pattern(&mut self, anti_pattern: &AntiPattern) -> Result<AntiPattern>;

    /// The episode `id` if it is visible from `scope`, without its steps.
    async fn episode(&mut self, scope: &Scope, id: &str) -> Result<Option<Episode>>;

    /// Writes an episode's end (status, outcome, times, version) as given.
    async fn finish_episode(&mut self, episode: &Episode) -> Result<Episode>;

    /// Adds a rule of `task_id` (`""`: a global rule) unless the same text
    /// is already one; `None` when it was.
    async fn insert_rule(
        &mut self,
        namespace: &str,
        task_id: &str,
        text: &str,
        origin: RuleOrigin,
        now: Micros,
    ) -> Result<Option<TaskRule>>;

    /// Deletes all but the newest `keep` rules of `task_id`.
    async fn trim_rules(&mut self, namespace: &str, task_id: &str, keep: usize) -> Result<()>;

    /// The namespace's next tick: a counter that orders sightings of
    /// mistakes and lessons in commit order, whatever the clocks say.
    async fn tick(&mut self, namespace: &str) -> Result<i64>;

    /// Counts one more sighting of a lesson (a new one is seen once).
    async fn count_lesson(
        &mut self,
        namespace: &str,
        kind: Lesson,
        text: &str,
        last_seen: i64,
        now: Micros,
    ) -> Result<()>;

    /// The mistake card of `key`, if there is one.
    async fn mistake_card(&mut self, namespace: &str, key: &CardKey)
    -> Result<Option<MistakeCard>>;

    async fn insert_mistake_card(
        &mut self,
        new: &NewMistakeCard,
        now: Micros,
    ) -> Result<MistakeCard>;

    /// Writes a card's changed fields (seen count, evidence, lesson, last
    /// sighting, times, version) as given.
    async fn update_mistake_card(&mut self, card: &MistakeCard) -> Result<MistakeCard>;

    /// Deletes all but the namespace's `keep` strongest cards: by seen
    /// count, then most recently seen.
    async fn trim_mistake_cards(&mut self, namespace: &str, keep: usize) -> Result<()>;

    /// Whether the card `id` is (still) stored.
    async fn mistake_card_exists(&mut self, id: &str) -> Result<bool>;

    /// Counts one more completed episode; returns the namespace's progress
    /// with it.
    async fn count_completion(&mut self, namespace: &str) -> Result<LearningProgress>;

    /// The namespace's progress.
    async fn learning_progress(&mut self, namespace: &str) -> Result<LearningProgress>;

    /// Records that the namespace is consolidated up to its completions.
    async fn mark_consolidated(&mut self, namespace: &str) -> Result<()>;

    /// Up to `limit` completed episodes of the namespace scoring at least
    /// `min_score`, latest completed first, without steps.
    async fn completed_episodes(
        &mut self,
        namespace: &str,
        min_score: f64,
        limit: usize,
    ) -> Result<Vec<Episode>>;

    /// Stores a new RUNNING episode.
    async fn insert_episode(&mut self, new: &NewEpisode, now: Micros) -> Result<Episode>;

    /// The stored steps of the episode `episode_seq` numbered among `numbers`.
    async fn stored_steps(&mut self, episode_seq: i64, numbers: &[i32]) -> Result<Vec<Step>>;

    /// Stores steps of the episode `episode_seq`.
    async fn insert_steps(&mut self, episode_seq: i64, steps: &[Step]) -> Result<()>;

    /// Writes an episode's step count, last step, update time and version
    /// as given.
    async fn save_step_progress(&mut self, episode: &Episode) -> Result<()>;

    /// The memories of these identities, expired ones included, each with
    /// its content hash.
    async fn identical_memories(
        &mut self,
        identities: &[Identity],
    ) -> Result<Vec<(Memory, String)>>;

    /// Inserts memories (none of whose identities is stored); returns them
    /// as stored, in the order given.
    async fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> Result<Vec<Memory>>;

    /// Writes a reinforced memory's seen count, importance, times, expiry
    /// and version as given, naming `actor` as the writer.
    async fn reinforce_memory(&mut self, memory: &Memory, actor: &Actor) -> Result<()>;

    /// Writes an updated memory's fields as given (with its new content
    /// hash), naming `actor` as the writer. Another memory of the same
    /// identity makes it fail with `AlreadyExists`.
    async fn update_memory(
        &mut self,
        memory: &Memory,
        content_hash: &str,
        actor: &Actor,
    ) -> Result<()>;

    /// Removes memories: each removal is a change of the feed and a
    /// revision naming the actor last written on the row.
    async fn remove_memories(&mut self, seqs: &[i64]) -> Result<()>;

    /// Names `actor` as the memory's last writer (before a removal, which
    /// history attributes to the last writer).
    async fn stamp_actor(&mut self, seq: i64, actor: &Actor) -> Result<()>;

    /// The memory `id` if it is visible from `scope` and unexpired.
    async fn visible_memory(
        &mut self,
        scope: &Scope,
        id: &str,
        now: Micros,
    ) -> Result<Option<Memory>>;

    /// The memory `id` if it is unexpired, whatever its scope (for a request
    /// id's replay: the request named the scope when it ran).
    async fn unexpired_memory(&mut self, id: &str, now: Micros) -> Result<Option<Memory>>;

    /// How many records `stale` names.
    async fn count_stale(&mut self, stale: &Stale) -> Result<i64>;

    /// Deletes up to `limit` of the records `stale` names; returns how many.
    async fn delete_stale(&mut self, stale: &Stale, limit: usize) -> Result<i64>;

    /// Links each memory (by sequence number) of `namespace` to the
    /// entities it names, creating those no name of which is known yet.
    async fn link_entities(
        &mut self,
        namespace: &str,
        links: &[(i64, Vec<Mention>)],
        now: Micros,
    ) -> Result<()>;

    /// Removes the links of the memory `seq` to the entities it named.
    async fn unlink_entities(&mut self, seq: i64) -> Result<()>;

    /// The id of the entity of `namespace` that `entity` names: its id or
    /// any of its names.
    async fn find_entity(&mut self, namespace: &str, entity: &str) -> Result<Option<String>>;

    /// The names of the entities of `namespace` that are one of these
    /// keys or start with one and a space: (key, entity id) pairs.
    async fn entities_named(
        &mut self,
        namespace: &str,
        keys: &[&str],
    ) -> Result<Vec<(String, String)>>;

    /// The name the entity `id` is shown by, if it exists (whoever sees
    /// it: pair it with a read of the memories naming it).
    async fn entity_name(&mut self, id: &str) -> Result<Option<String>>;

    /// The entity `id` as `scope` sees it: `None` when no memory it sees
    /// names it.
    async fn entity(&mut self, scope: &Scope, id: &str, now: Micros) -> Result<Option<Entity>>;

    /// One page of the entities `query` asks for, plus one.
    async fn list_entities(&mut self, query: &EntityQuery, now: Micros) -> Result<Vec<Entity>>;

    /// Up to `limit` + 1 memories `scope` sees that name the entity `id`
    /// and count as true under `validity`, newest truth first.
    async fn entity_memories(
        &mut self,
        scope: &Scope,
        id: &str,
        validity: Validity,
        limit: usize,
        now: Micros,
    ) -> Result<Vec<Memory>>;

    /// The memories (by sequence number) naming every one of the entities
    /// `ids`.
    async fn mentioning(&mut self, ids: &[String]) -> Result<Vec<i64>>;

    /// Of the memories `seqs`, those naming any of the entities `ids`,
    /// each with how many of them it names.
    async fn mentions_among(&mut self, ids: &[String], seqs: &[i64]) -> Result<Vec<(i64, i64)>>;

    /// Makes the entity `from` a name of the entity `into`.
    async fn merge_entities(&mut self, into: &str, from: &str) -> Result<()>;

    /// Links the memories `a` and `b` of `namespace` both ways.
    async fn link_memories(
        &mut self,
        namespace: &str,
        pair: (&str, &str),
        kind: LinkKind,
        reason: &str,
        now: Micros,
    ) -> Result<()>;

    /// Where the memory `id` came from (none for one written before
    /// provenance was kept).
    async fn provenance(&mut self, id: &str) -> Result<Option<Provenance>>;

    /// The first `limit` links from the memory `id`, oldest first.
    async fn memory_links(&mut self, id: &str, limit: usize) -> Result<Vec<MemoryLink>>;

    /// Replaces what the memory `seq` says of its entities (read by the
    /// model) with `relations`.
    async fn set_relations(&mut self, seq: i64, relations: &[StatedRelation]) -> Result<()>;

    /// What the memories `seqs` say of their entities, per memory in order.
    async fn relations(&mut self, seqs: &[i64]) -> Result<Vec<(i64, StatedRelation)>>;

    /// A fact about the database from `engram_meta`, if it is there.
    async fn meta(&mut self, key: &str) -> Result<Option<String>>;

    /// Sets a fact about the database in `engram_meta`.
    async fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;

    /// How many memories of `namespace` have a sequence number after
    /// `after` and up to `through`.
    async fn count_memories_between(
        &mut self,
        namespace: &str,
        after: i64,
        through: i64,
    ) -> Result<i64>;
}
