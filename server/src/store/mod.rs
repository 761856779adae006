//! Persistence. [`Store`] is what the rest of the server sees; each backend
//! lives in its own module with its own migrations.

pub mod access;
mod budget;
pub mod postgres;
pub mod sql;
pub mod sqlite;
pub mod tx;

pub use self::sql::transfer;

use async_trait::async_trait;
use tokio::sync::watch;

use crate::domain::episode::{
    Episode, EpisodeQuery, MistakeCard, Stats, StepWindow, TaskKnowledge, TaskRule,
};
use crate::domain::outcome::{
    AgentScope, AntiPattern, Heuristic, LearningFilter, Owner, TaskOutcome,
};
use crate::domain::{
    Embedding, FeedBounds, FeedEvent, ListQuery, Memory, MemoryChange, MemoryFilter, Micros,
    Neighbours, Revision, Scope, Unembedded,
};
use crate::error::{Error, Result};

/// What BuildContext shows about a task, as the engine asks for it: how
/// many of each kind, and how confident a heuristic must be to be advice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KnowledgeQuery {
    pub task_rules: usize,
    pub global_rules: usize,
    pub mistakes: usize,
    pub mistake_cards: usize,
    pub recent_episodes: usize,
    pub heuristics: usize,
    pub anti_patterns: usize,
    /// Heuristics less confident than this are not shown.
    pub min_heuristic_confidence: f64,
}

/// How many memories the namespaces hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceSizes {
    /// The largest namespaces with their memories, largest first.
    pub largest: Vec<(String, i64)>,
    /// Memories of all namespaces.
    pub memories: i64,
    /// Namespaces that hold a memory.
    pub namespaces: i64,
}

/// Where everything lives: memories, episodes and what is learned. Every
/// method takes the caller's scope (or namespace) and never reads or writes
/// outside it (DESIGN §3); expired memories are invisible to all of them.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Runs a unit of work (see [`tx`]) in one transaction and commits it;
    /// on an error nothing of it is kept. Use `engine::unit::transact`,
    /// which keeps the answer's type.
    async fn transact(&self, work: tx::Work, disk: tx::DiskUse) -> Result<tx::Answer>;

    /// Runs a unit of work that only reads, on one consistent snapshot and
    /// beside the writes (it waits for no writer); a write primitive called
    /// in it fails. Use `engine::unit::read`.
    async fn read(&self, work: tx::Work) -> Result<tx::Answer>;

    /// The memory `id` if it is visible from `scope`.
    async fn get_memory(&self, scope: &Scope, id: &str, now: Micros) -> Result<Option<Memory>>;

    /// The history of memory `id` in `namespace`, oldest first: at most
    /// `page_size + 1` revisions after the one numbered `after_seq`. Empty
    /// when the namespace never held such a memory.
    async fn list_memory_revisions(
        &self,
        namespace: &str,
        id: &str,
        page_size: usize,
        after_seq: Option<i64>,
    ) -> Result<Vec<Revision>>;

    /// One page of memories (at most `page_size + 1`, so the caller can tell
    /// whether another page follows).
    async fn list_memories(&self, query: &ListQuery, now: Micros) -> Result<Vec<Memory>>;

    /// For each of the memories `seqs` of `namespace` that was written in a
    /// session, the memories written just before and just after it in that
    /// session (visible or not: the caller only uses what it found itself).
    async fn conversation_neighbours(
        &self,
        namespace: &str,
        seqs: &[i64],
    ) -> Result<Vec<Neighbours>>;

    /// The memories with these sequence numbers that are visible from
    /// `scope` and match `filter`, in no particular order (the search index
    /// found them; this re-checks them against the source of truth).
    async fn memories_by_seq(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        seqs: &[i64],
        now: Micros,
    ) -> Result<Vec<Memory>>;

    /// The memories visible from `scope` that match `filter` and changed in
    /// the first `limit` changes of its namespace after the change numbered
    /// `after` (as [`Store::memory_events`] numbers them), in no particular
    /// order: what a search index that has applied the feed up to `after`
    /// does not have yet. Reads the memories only, not the feed's events.
    async fn memories_changed_after(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        after: i64,
        limit: usize,
        now: Micros,
    ) -> Result<Vec<Memory>>;

    /// Records that a search returned these memories (by sequence number).
    /// Fire and forget: the
    /// counts are gathered in memory and written in batches (within about a
    /// second); a crash loses the last batch, as bookkeeping may.
    fn record_access(&self, seqs: Vec<i64>, now: Micros);

    /// The episode with the steps in `steps`, if visible from `scope`.
    async fn get_episode(
        &self,
        scope: &Scope,
        id: &str,
        steps: StepWindow,
    ) -> Result<Option<Episode>>;

    /// One page of episodes (plus one), newest first, without steps.
    async fn list_episodes(&self, query: &EpisodeQuery) -> Result<Vec<Episode>>;

    /// One page of rules (plus one), newest first: of a task, the global ones
    /// (`Some("")`) or all (`None`).
    async fn list_task_rules(
        &self,
        namespace: &str,
        task_id: Option<&str>,
        page_size: usize,
        after_seq: Option<i64>,
    ) -> Result<Vec<TaskRule>>;

    /// Up to `limit` mistake cards, strongest first, after a (seen_count,
    /// last_seen) cursor.
    async fn list_mistake_cards(
        &self,
        namespace: &str,
        task_id: Option<&str>,
        mistake_type: Option<&str>,
        limit: usize,
        after: Option<(i64, i64)>,
    ) -> Result<Vec<MistakeCard>>;

    /// How far the namespace's learning has got (completions, the last
    /// consolidation).
    async fn learning_progress(&self, namespace: &str) -> Result<tx::LearningProgress>;

    /// The namespace's latest completed episodes, newest first.
    async fn recent_completed_episodes(
        &self,
        namespace: &str,
        limit: usize,
    ) -> Result<Vec<Episode>>;

    /// The learning statistics of `scope`, with its `top_cards` strongest
    /// mistake cards.
    async fn stats(&self, scope: &Scope, top_cards: usize, now: Micros) -> Result<Stats>;

    /// What `query` asks for about a task (and its task type: the given one,
    /// else that of the task's latest episode) and its namespace, on one
    /// snapshot.
    async fn task_knowledge(
        &self,
        scope: &Scope,
        task_id: &str,
        task_type: &str,
        query: &KnowledgeQuery,
    ) -> Result<TaskKnowledge>;

    /// The strategies of the owner's latest `recent` outcomes of
    /// `task_type`, and of its heuristics of that type (as first worded and
    /// as last seen), without repeats: what a new outcome's strategy is
    /// compared with when it is recorded (to embed them beforehand).
    async fn compared_strategies(
        &self,
        owner: &Owner,
        task_type: &str,
        recent: i64,
    ) -> Result<Vec<String>>;

    /// An agent's learning scope, if one was set.
    async fn get_agent_scope(&self, namespace: &str, agent_id: &str) -> Result<Option<AgentScope>>;

    /// Up to `limit` outcomes visible from `scope`, newest first, after a seq.
    async fn list_outcomes(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<i64>,
    ) -> Result<Vec<TaskOutcome>>;

    /// Up to `limit` heuristics, most confident first, after (confidence, seq).
    async fn list_heuristics(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<(f64, i64)>,
    ) -> Result<Vec<Heuristic>>;

    /// Up to `limit` anti-patterns, most frequent first, after (count, seq).
    async fn list_anti_patterns(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<(i64, i64)>,
    ) -> Result<Vec<AntiPattern>>;

    /// The change feed's head: the sequence number of the newest committed
    /// change to a memory (0 before any). It moves after every commit that
    /// changed a memory, before that commit's writes are acknowledged.
    fn feed_head(&self) -> watch::Receiver<i64>;

    /// Up to `limit` changes after the change `after`, oldest first, each
    /// with the memory as that change left it or as it is now (`None` once
    /// it is deleted): a follower that applies them in order converges on
    /// the database.
    async fn changes_after(&self, after: i64, limit: usize) -> Result<Vec<MemoryChange>>;

    /// How far the change feed reaches: a watch "from now" starts at
    /// `newest`, and one resumed from an older position needs the changes
    /// after it still kept (`oldest`).
    async fn feed_bounds(&self) -> Result<FeedBounds>;

    /// Up to `limit` changes of the memories of `namespace` after the change
    /// numbered `after`, in feed order, each with the memory as it is now or
    /// its tombstone once it is removed (only changes of a memory's fields:
    /// not a stored vector). Numbers follow commit order — a change committed
    /// later never gets a lower number — so a follower that reads on from the
    /// last number it saw, once the head has moved, misses nothing. Cheap for
    /// a namespace whatever the others write: an index leads to its changes.
    async fn memory_events(
        &self,
        namespace: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<FeedEvent>>;

    /// The namespaces of the changes [`Store::memory_events`] would return
    /// numbered above `after` and up to `upto`, in no order: which watchers
    /// a move of the feed's head concerns.
    async fn changed_namespaces(&self, after: i64, upto: i64) -> Result<Vec<String>>;

    /// Up to `limit` memories (expired ones included) with a sequence number
    /// above `after_seq`, in sequence order. For rebuilding an index: what
    /// changes during the scan is caught up from the feed afterwards.
    async fn scan_memories(&self, after_seq: i64, limit: usize) -> Result<Vec<Memory>>;

    /// Up to `limit` unexpired memories without a vector of `model` for
    /// their current content, in sequence order: those above `after_seq`,
    /// or, with `among`, only those of these sequence numbers.
    async fn unembedded(
        &self,
        model: &str,
        after_seq: i64,
        among: Option<&[i64]>,
        limit: usize,
        now: Micros,
    ) -> Result<Vec<Unembedded>>;

    /// Stores vectors of `model`, each only if its memory still has the
    /// content that was embedded; returns how many were stored. Each stored
    /// vector is a change of the feed.
    async fn store_vectors(
        &self,
        model: &str,
        vectors: Vec<(Unembedded, Vec<f32>)>,
    ) -> Result<usize>;

    /// How many unexpired memories of `namespace` wait for a vector of `model`.
    async fn pending_embeddings(&self, namespace: &str, model: &str, now: Micros) -> Result<i64>;

    /// Up to `limit` memories above `after_seq`, in sequence order, that
    /// have a vector of `model` for their current content, with it.
    async fn scan_embedded(
        &self,
        model: &str,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<(Memory, Embedding)>>;

    /// Up to `limit` changes after the change `after`, oldest first, as
    /// (change, memory) sequence numbers: the feed without the memories.
    async fn changed_memories(&self, after: i64, limit: usize) -> Result<Vec<(i64, i64)>>;

    /// How many memories are stored, expired ones included.
    async fn count_memories(&self) -> Result<i64>;

    /// A fact about the database itself from `engram_meta`, by its key.
    async fn meta(&self, key: &str) -> Result<String>;

    /// A random identifier of this database, made when it was created: an
    /// index built from another database is not to be trusted.
    async fn database_id(&self) -> Result<String> {
        self.meta("database_id").await
    }

    /// The secret API keys' ids are derived with (HMAC), made with the
    /// database (or by the migration that brought it in) and never shown.
    async fn key_id_secret(&self) -> Result<Vec<u8>> {
        let hex = self.meta("key_id_secret").await?;
        (0..hex.len())
            .step_by(2)
            .map(|at| {
                hex.get(at..at + 2)
                    .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                    .ok_or_else(|| Error::Internal("engram_meta's key_id_secret is not hex".into()))
            })
            .collect()
    }

    /// Deletes up to `limit` memories whose expire time is at or before
    /// `now`, soonest expired first, each exactly as [`Store::delete_memory`]
    /// deletes one (so the change feed records it, and the indexes drop
    /// it); returns how many. Keep `limit` small: it is one transaction.
    async fn purge_expired_memories(&self, now: Micros, limit: usize) -> Result<usize>;

    /// Forgets up to `limit` request ids (of every kind of write) recorded
    /// before `before`, oldest first; returns how many. A write that reuses
    /// such an id is a new request. Keep `limit` small: it is one transaction.
    async fn purge_request_ids(&self, before: Micros, limit: usize) -> Result<usize>;

    /// The database's size in bytes.
    async fn database_bytes(&self) -> Result<i64>;

    /// How many memories the `limit` largest namespaces hold, and the totals
    /// of all: stored rows, expired ones included until they are purged.
    /// Reads every memory's index entry: not for every call.
    async fn namespace_sizes(&self, limit: usize) -> Result<NamespaceSizes>;

    /// Whether the disk is full, shared with whatever else writes to the
    /// data folder (the search index) and with the health service.
    fn disk_space(&self) -> std::sync::Arc<crate::disk::DiskSpace>;

    /// Whether the database answers, followed by the health service (writes
    /// are NOT_SERVING while it does not). An embedded database always
    /// does: the default is a value that never changes.
    fn database_reachable(&self) -> watch::Receiver<bool> {
        watch::channel(true).1
    }

    /// Finishes queued writes and closes the database.
    async fn close(&self);
}
