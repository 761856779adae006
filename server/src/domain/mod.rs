//! Engram's domain types: plain Rust structs, independent of protobuf and SQL.

macro_rules! enum_codes {
    ($ty:ty { $($variant:ident = $code:literal),+ $(,)? }) => {
        impl $ty {
            /// The stable number of this value (its proto enum number).
            pub fn code(self) -> i32 {
                self as i32
            }

            /// The value with this number, if there is one.
            pub fn from_code(code: i32) -> Option<Self> {
                match code {
                    $($code => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

pub mod dates;
pub mod entity;
pub mod episode;
pub mod identity;
pub mod outcome;
pub mod policy;
pub mod provenance;

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch: the one time representation inside the
/// server (stored as INTEGER, converted to `google.protobuf.Timestamp` at the edge).
pub type Micros = i64;

/// The current time in microseconds since the Unix epoch.
pub fn now_micros() -> Micros {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Who is asking; every read and write is confined to it (DESIGN §3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Scope {
    pub namespace: String,
    pub agent_id: String,
    pub user_id: String,
    pub project_id: String,
    pub session_id: String,
}

impl Scope {
    /// The narrowest level this scope can write: CONVERSATION with a session,
    /// WORKSPACE with a project, else GLOBAL.
    pub fn narrowest_level(&self) -> MemoryLevel {
        if !self.session_id.is_empty() {
            MemoryLevel::Conversation
        } else if !self.project_id.is_empty() {
            MemoryLevel::Workspace
        } else {
            MemoryLevel::Global
        }
    }

    /// The scope a memory of `level` keeps: only the fields its level uses, so
    /// that the record says exactly who can see it.
    pub fn for_level(&self, level: MemoryLevel) -> Scope {
        let mut owned = Scope {
            namespace: self.namespace.clone(),
            agent_id: self.agent_id.clone(),
            user_id: self.user_id.clone(),
            ..Scope::default()
        };
        match level {
            MemoryLevel::Global => {}
            MemoryLevel::Workspace => owned.project_id = self.project_id.clone(),
            // Visibility follows the session alone, so that is all it keeps.
            MemoryLevel::Conversation => owned.session_id = self.session_id.clone(),
        }
        owned
    }
}

impl Scope {
    /// Whether this scope sees a memory of `level` kept under `owner` (the
    /// memory's own scope): the rule of DESIGN §3. The stores apply it in
    /// their queries and the search index in its own terms; a watch, which
    /// also follows memories that are gone, applies it here.
    pub fn sees(&self, level: MemoryLevel, owner: &Scope) -> bool {
        let placed = match level {
            MemoryLevel::Global => true,
            MemoryLevel::Workspace => {
                !owner.project_id.is_empty() && owner.project_id == self.project_id
            }
            MemoryLevel::Conversation => {
                !owner.session_id.is_empty() && owner.session_id == self.session_id
            }
        };
        // An agent or user the scope names sees its own and nobody's.
        let held_by =
            |mine: &str, theirs: &str| mine.is_empty() || theirs.is_empty() || mine == theirs;
        owner.namespace == self.namespace
            && placed
            && held_by(&self.agent_id, &owner.agent_id)
            && held_by(&self.user_id, &owner.user_id)
    }
}

/// How widely a memory is visible inside its namespace. The discriminants are
/// the `engram.v1.MemoryLevel` numbers, which are also what the database stores.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum MemoryLevel {
    Global = 1,
    Workspace = 2,
    Conversation = 3,
}

/// What kind of knowledge a memory holds (`engram.v1.MemoryType` numbers).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum MemoryType {
    Fact = 1,
    Preference = 2,
    Lesson = 3,
    Decision = 4,
    Event = 5,
    Note = 6,
}

/// Where a memory came from (`engram.v1.MemorySource` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemorySource {
    Explicit = 1,
    PolicyRules = 2,
    PolicyLlm = 3,
    Learning = 4,
    Consolidation = 5,
}

enum_codes!(ContradictionPolicy { Invalidate = 1, Off = 2, Link = 3 });
enum_codes!(MemoryLevel { Global = 1, Workspace = 2, Conversation = 3 });
enum_codes!(MemoryType { Fact = 1, Preference = 2, Lesson = 3, Decision = 4, Event = 5, Note = 6 });
enum_codes!(MemorySource { Explicit = 1, PolicyRules = 2, PolicyLlm = 3, Learning = 4, Consolidation = 5 });

impl MemoryType {
    /// The upper-case label used in context blocks, e.g. `FACT`.
    pub fn label(self) -> &'static str {
        match self {
            MemoryType::Fact => "FACT",
            MemoryType::Preference => "PREFERENCE",
            MemoryType::Lesson => "LESSON",
            MemoryType::Decision => "DECISION",
            MemoryType::Event => "EVENT",
            MemoryType::Note => "NOTE",
        }
    }

    /// The type whose [`label`](Self::label) is `label`, e.g. `FACT`.
    pub fn from_label(label: &str) -> Option<Self> {
        (1..)
            .map_while(Self::from_code)
            .find(|t| t.label() == label)
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub id: String,
    pub scope: Scope,
    pub level: MemoryLevel,
    pub memory_type: MemoryType,
    pub content: String,
    pub summary: String,
    pub tags: Vec<String>,
    pub metadata: BTreeMap<String, String>,
    pub importance: f64,
    pub confidence: f64,
    pub source: MemorySource,
    pub seen_count: i64,
    pub access_count: i64,
    pub create_time: Micros,
    pub update_time: Micros,
    pub last_access_time: Option<Micros>,
    pub expire_time: Option<Micros>,
    /// When the remembered thing happened; search recency is measured from it.
    pub occurred_at: Micros,
    /// The session it was written in (the writer's `session_id`), whatever
    /// its level; empty when written outside a session.
    pub origin_session_id: String,
    /// Since when it is true: `occurred_at` unless said otherwise.
    pub valid_from: Micros,
    /// Until when it was true; `None` while it still is. Set by an
    /// invalidation (a memory that replaced it, a contradiction) or by a
    /// caller; the memory itself stays.
    pub valid_to: Option<Micros>,
    /// The id of the memory that replaced it; empty when none did.
    pub invalidated_by: String,
    /// Why it stopped being true; empty while it is.
    pub invalidation_reason: String,
    /// Incremented by every change a caller can see; the etag is derived from it.
    pub version: i64,
    /// Insertion sequence number (the row id): the tie-breaker of keyset paging.
    pub seq: i64,
}

impl Memory {
    /// The bytes of its text fields: a lower bound of its size encoded
    /// (every string is sent whole, with a few bytes of framing).
    pub fn text_bytes(&self) -> usize {
        self.content.len()
            + self.summary.len()
            + self.tags.iter().map(String::len).sum::<usize>()
            + self
                .metadata
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
    }

    /// Whether this memory belongs to exactly the owner a write of `level`
    /// from `scope` creates (same user, agent, project or session as that
    /// level keeps, and the same level): the only memories a write's side
    /// effects — superseding, merging, invalidating — may touch. Seeing a
    /// memory is not owning it: a scope without a user sees every user's,
    /// and a user sees the shared ones.
    pub fn owned_by(&self, scope: &Scope, level: MemoryLevel) -> bool {
        self.level == level && self.scope == scope.for_level(level)
    }

    /// A GLOBAL fact of `content` in `namespace`, every other field at its
    /// plainest, for the indexes' unit tests.
    #[cfg(test)]
    pub fn plain(seq: i64, namespace: &str, content: &str) -> Memory {
        Memory {
            id: format!("m{seq}"),
            scope: Scope {
                namespace: namespace.into(),
                ..Scope::default()
            },
            level: MemoryLevel::Global,
            memory_type: MemoryType::Fact,
            content: content.into(),
            summary: String::new(),
            tags: Vec::new(),
            metadata: BTreeMap::new(),
            importance: 0.5,
            confidence: 1.0,
            source: MemorySource::Explicit,
            seen_count: 1,
            access_count: 0,
            create_time: 0,
            update_time: 0,
            last_access_time: None,
            expire_time: None,
            occurred_at: 0,
            origin_session_id: String::new(),
            valid_from: 0,
            valid_to: None,
            invalidated_by: String::new(),
            invalidation_reason: String::new(),
            version: 1,
            seq,
        }
    }

    /// The opaque etag of this version of the memory.
    pub fn etag(&self) -> String {
        format!("v{}", self.version)
    }
}

/// A memory to store, already validated and with defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    /// The owning scope, already reduced to the fields its level uses.
    pub scope: Scope,
    /// Who is writing it, for the memory's history.
    pub actor: Actor,
    pub level: MemoryLevel,
    pub memory_type: MemoryType,
    pub content: String,
    pub summary: String,
    pub tags: Vec<String>,
    pub metadata: BTreeMap<String, String>,
    pub importance: f64,
    pub confidence: f64,
    pub source: MemorySource,
    pub expire_time: Option<Micros>,
    /// When the remembered thing happened; `None`: when it is stored.
    pub occurred_at: Option<Micros>,
    /// The writer's session, kept whatever the level (provenance only).
    pub origin_session_id: String,
    /// How and from what it is written, kept as its provenance.
    pub origin: provenance::Origin,
}

/// A write's idempotency key (AIP-155): the caller's `request_id` and the
/// fingerprint of the request it came with. A retry with the same id and
/// the same request gets the first answer; the same id with another request
/// is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestKey {
    pub id: String,
    /// A stable digest of the request without its id (see
    /// `grpc::request_key`); kept beside the id.
    pub fingerprint: String,
}

impl RequestKey {
    /// Whether a stored fingerprint predates fingerprint schemes (`pb1:…`):
    /// a bare hex digest that cannot be recomputed.
    pub fn unversioned(fingerprint: &str) -> bool {
        !fingerprint.contains(':')
    }
}

/// Who makes a change, as a memory's history records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actor {
    /// The caller's API key id (empty without `--auth-keys`).
    pub key_id: String,
    /// The caller's scope agent_id (empty when it names none).
    pub agent_id: String,
}

/// What a memory's history records of one change (see migration 0009).
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    pub seq: i64,
    pub memory_id: String,
    /// The memory's version after the change (before it, for a removal).
    pub version: i64,
    /// The `engram.v1.RevisionAction` number.
    pub action: i32,
    pub time: Micros,
    pub actor: Actor,
    /// The fields the change set, by their proto names (none for a create
    /// or a removal).
    pub changed_fields: Vec<String>,
    /// Why, for an invalidation; empty otherwise.
    pub reason: String,
    /// The memory that replaced it, for an invalidation; empty otherwise.
    pub replaced_by: String,
}

/// A memory's neighbours in the conversation it was written in: the memories
/// written just before and just after it in the same session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neighbours {
    pub seq: i64,
    pub before: Option<i64>,
    pub after: Option<i64>,
    /// Whether the memory `seq` asks something (its content has a question
    /// mark): the memory after it is likely its answer.
    pub asks: bool,
}

/// Whether a create stored a new memory or reinforced an identical one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteResult {
    Created = 1,
    Merged = 2,
}

/// The result of one create.
#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    pub memory: Memory,
    pub result: WriteResult,
    /// The memories of the same owner this one made no longer true (a
    /// contradiction found as it was written).
    pub invalidated: Vec<String>,
    /// The memories of the same owner it contradicts that stay true beside
    /// it, linked to it as conflicting (ContradictionPolicy::Link).
    pub conflicting: Vec<String>,
    /// The memories of the same type and owner it repeats in other words:
    /// linked to it, or the one it was merged into.
    pub near_duplicates: Vec<String>,
}

impl Created {
    /// A create that invalidated nothing.
    pub fn new(memory: Memory, result: WriteResult) -> Created {
        Created {
            memory,
            result,
            invalidated: Vec::new(),
            conflicting: Vec::new(),
            near_duplicates: Vec::new(),
        }
    }
}

/// How two memories are linked (`engram.v1.MemoryLinkKind` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// They contradict each other and both stay true (ContradictionPolicy
    /// LINK): someone should decide.
    Conflicts = 1,
    /// The newer says what the older says, in other words.
    NearDuplicate = 2,
}

enum_codes!(LinkKind { Conflicts = 1, NearDuplicate = 2 });

/// A link from a memory to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLink {
    pub kind: LinkKind,
    /// The other memory's id.
    pub memory_id: String,
    /// Why they are linked, e.g. what they say otherwise.
    pub reason: String,
    pub create_time: Micros,
}

/// What a write does when a new memory says otherwise than an older valid
/// one of the same owner about the same subject and single-valued
/// attribute (DESIGN §3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ContradictionPolicy {
    /// The older one is no longer true: its `valid_to` is set and it names
    /// the new one as what replaced it (it is kept).
    #[default]
    Invalidate,
    /// Nothing is looked for.
    Off,
    /// Both stay true, linked to each other as conflicting.
    Link,
}

/// A validated change to a memory: `Some` fields are replaced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryPatch {
    pub memory_type: Option<MemoryType>,
    pub content: Option<String>,
    pub summary: Option<String>,
    pub tags: Option<Vec<String>>,
    pub metadata: Option<BTreeMap<String, String>>,
    pub importance: Option<f64>,
    pub confidence: Option<f64>,
    /// `Some(None)` clears the expiry.
    pub expire_time: Option<Option<Micros>>,
    /// `Some(None)` resets it to the create time.
    pub occurred_at: Option<Option<Micros>>,
    /// `Some(Some(t))` invalidates it as of `t`; `Some(None)` makes it true
    /// again.
    pub valid_to: Option<Option<Micros>>,
}

/// Filters shared by list and search; empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryFilter {
    pub memory_types: Vec<MemoryType>,
    pub levels: Vec<MemoryLevel>,
    pub tags: Vec<String>,
    pub min_importance: f64,
    /// Of `create_time`.
    pub created: TimeRange,
    /// Of `occurred_at`.
    pub occurred: TimeRange,
    pub metadata: BTreeMap<String, String>,
    /// Which memories count as true.
    pub validity: Validity,
    /// Only memories naming every one of these entities (by id; the edge
    /// resolves names).
    pub entities: Vec<String>,
    /// The memories naming every one of `entities`, once read (a search
    /// reads them before asking its indexes, which check this; SQL checks
    /// `entities` itself). `None` until read.
    pub mentioning: Option<std::sync::Arc<std::collections::HashSet<i64>>>,
}

/// Which memories a read counts as true (DESIGN: validity in time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Validity {
    /// Those not invalidated: `valid_to` unset or still ahead.
    #[default]
    Current,
    /// Those that were true at this time, as known now: `valid_from` at or
    /// before it and `valid_to` unset or after it.
    At(Micros),
    /// Every one, invalidated or not.
    All,
}

impl Validity {
    /// Whether a memory valid from `from` until `to` counts, `now` being now.
    pub fn admits(self, from: Micros, to: Option<Micros>, now: Micros) -> bool {
        match self {
            Validity::Current => to.is_none_or(|to| to > now),
            Validity::At(at) => from <= at && to.is_none_or(|to| to > at),
            Validity::All => true,
        }
    }
}

/// A range of times: at or after `after`, and before `before`; an unset
/// end is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeRange {
    pub after: Option<Micros>,
    pub before: Option<Micros>,
}

impl TimeRange {
    /// Whether the range holds every time (neither end is set).
    pub fn is_open(&self) -> bool {
        self.after.is_none() && self.before.is_none()
    }

    /// Whether `time` is in the range.
    pub fn contains(&self, time: Micros) -> bool {
        self.after.is_none_or(|after| time >= after)
            && self.before.is_none_or(|before| time < before)
    }
}

/// The order of a memory listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryOrder {
    #[default]
    CreateTimeDesc,
    CreateTimeAsc,
    ImportanceDesc,
}

/// Where a page starts: the sort key of the last memory of the previous page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageCursor {
    pub importance: f64,
    pub create_time: Micros,
    pub seq: i64,
}

impl PageCursor {
    /// The cursor that continues after `memory`.
    pub fn after(memory: &Memory) -> Self {
        PageCursor {
            importance: memory.importance,
            create_time: memory.create_time,
            seq: memory.seq,
        }
    }
}

/// A request for one page of memories.
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery {
    pub scope: Scope,
    pub filter: MemoryFilter,
    pub order: MemoryOrder,
    pub page_size: usize,
    pub after: Option<PageCursor>,
    /// Stop reading once the memories read pass this many bytes (the one
    /// that passes is read too, so the caller sees the page is full):
    /// a page of large memories is never read whole to be cut afterwards.
    /// `None`: read the page whole.
    pub max_bytes: Option<usize>,
}

/// A memory found by full-text search: its sequence number, its BM25 score
/// (higher is better) and what re-scoring needs, as the index holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct TextMatch {
    pub seq: i64,
    pub bm25: f64,
    pub importance: f64,
    pub occurred_at: Micros,
}

/// What a change did to a memory (the `engram.v1.RevisionAction` numbers,
/// as the history records them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeAction {
    Created = 1,
    Updated = 2,
    Merged = 3,
    Deleted = 4,
    Expired = 5,
    /// It stopped being true (it stays stored).
    Invalidated = 6,
}

enum_codes!(ChangeAction {
    Created = 1,
    Updated = 2,
    Merged = 3,
    Deleted = 4,
    Expired = 5,
    Invalidated = 6
});

impl ChangeAction {
    /// Whether the memory left the database by this change.
    pub fn removes(self) -> bool {
        matches!(self, ChangeAction::Deleted | ChangeAction::Expired)
    }
}

/// What a removed memory leaves behind: who could see it, and what a
/// watch filters on, as it was when it went (never its content).
#[derive(Debug, Clone, PartialEq)]
pub struct Tombstone {
    pub scope: Scope,
    pub level: MemoryLevel,
    pub memory_type: MemoryType,
    pub tags: Vec<String>,
}

/// The memory a change of the feed was made to, as the feed is read.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// It is still stored: as it is now (expired or not), which is the
    /// state the change left it in, or a later one. (Boxed: a memory is
    /// more than twice a tombstone.)
    Stored(Box<Memory>),
    /// It has been removed (by this change or a later one).
    Removed(Tombstone),
}

impl Subject {
    /// The memory's scope, as stored.
    pub fn scope(&self) -> &Scope {
        match self {
            Subject::Stored(memory) => &memory.scope,
            Subject::Removed(tombstone) => &tombstone.scope,
        }
    }

    pub fn level(&self) -> MemoryLevel {
        match self {
            Subject::Stored(memory) => memory.level,
            Subject::Removed(tombstone) => tombstone.level,
        }
    }

    pub fn memory_type(&self) -> MemoryType {
        match self {
            Subject::Stored(memory) => memory.memory_type,
            Subject::Removed(tombstone) => tombstone.memory_type,
        }
    }

    pub fn tags(&self) -> &[String] {
        match self {
            Subject::Stored(memory) => &memory.tags,
            Subject::Removed(tombstone) => &tombstone.tags,
        }
    }
}

/// One change of a namespace's feed, as a watch reads it: the change
/// numbered `seq` was `action` on memory `memory_id`, with what the
/// memory's history recorded of it (time, actor, changed fields; unset
/// when the history has no record of it).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedEvent {
    pub seq: i64,
    pub memory_id: String,
    pub action: ChangeAction,
    /// The memory's version after the change (its last one, for a removal).
    pub version: i64,
    pub time: Option<Micros>,
    pub actor: Actor,
    /// By their proto names; empty for a create or a removal.
    pub changed_fields: Vec<String>,
    pub subject: Subject,
}

/// How far the change feed reaches: a follower can read on without a gap
/// from any position from `oldest` to `newest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedBounds {
    /// The changes up to this number may be gone (trimmed); those after it
    /// are all kept.
    pub oldest: i64,
    /// The number of the newest committed change (0 before any).
    pub newest: i64,
}

/// One entry of the change feed (DESIGN §7): the memory `memory_seq` changed
/// in the change numbered `seq`. `memory` is the memory as that change left
/// it or as it is now (`None` once it is deleted): never older, so a
/// follower that applies changes in order converges on the database.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryChange {
    pub seq: i64,
    pub memory_seq: i64,
    pub memory: Option<Memory>,
    /// For a change that stored a vector: the memory's vector, if it is
    /// still that of its current content.
    pub vector: Option<Embedding>,
}

/// A memory's vector: of its content, made by the embedder `model`,
/// L2-normalised.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    pub model: String,
    pub values: std::sync::Arc<[f32]>,
}

/// A memory whose content has no vector of the current model yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Unembedded {
    pub seq: i64,
    pub namespace: String,
    pub content: String,
    /// The normalised content hash: a vector is stored only if the memory
    /// still has it.
    pub content_hash: String,
}
