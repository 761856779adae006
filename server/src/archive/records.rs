//! The records of an export file: every kind of user data a database holds,
//! one JSON object per line, with the field names documented here (they
//! are the file format; see [`super`] for the lines around them).
//!
//! Conventions: times are integers, microseconds since the Unix epoch
//! (UTC); an optional value is `null` when absent; enumerations are lower
//! case names (`"fact"`, `"workspace"`); every record names its namespace;
//! ids are kept, so an imported record is the same record. A memory's
//! history is exported too, revision by revision, also of memories deleted
//! since (whose rows are gone). Derived data is not exported: embedding
//! vectors (the server embeds imported memories again in the background),
//! the change feed and the search index (made from the imported records),
//! and idempotency keys of past requests.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use self::knowledge::{
    EntityNameRecord, EntityRecord, MemoryEntityRecord, MemoryLinkRecord, MemoryProvenanceRecord,
    MemoryRelationRecord,
};
use crate::domain::entity::EntityType;
use crate::domain::episode::{EpisodeContext, EpisodeStatus, Outcome, RuleOrigin};
use crate::domain::provenance::WriteMethod;
use crate::domain::{LinkKind, MemoryLevel, MemorySource, MemoryType, Micros};

mod knowledge;
mod validate;

/// Serde modules writing an enumeration of the domain as lower case names.
macro_rules! names {
    ($module:ident: $ty:ty { $($variant:path => $name:literal),+ $(,)? }) => {
        pub(crate) mod $module {
            use super::*;

            pub fn serialize<S: serde::Serializer>(value: &$ty, to: S) -> Result<S::Ok, S::Error> {
                to.serialize_str(match *value { $($variant => $name),+ })
            }

            pub fn deserialize<'de, D: serde::Deserializer<'de>>(from: D) -> Result<$ty, D::Error> {
                let name = String::deserialize(from)?;
                match name.as_str() {
                    $($name => Ok($variant),)+
                    other => Err(serde::de::Error::unknown_variant(other, &[$($name),+])),
                }
            }
        }
    };
}

names!(level: MemoryLevel {
    MemoryLevel::Global => "global",
    MemoryLevel::Workspace => "workspace",
    MemoryLevel::Conversation => "conversation",
});
names!(memory_type: MemoryType {
    MemoryType::Fact => "fact",
    MemoryType::Preference => "preference",
    MemoryType::Lesson => "lesson",
    MemoryType::Decision => "decision",
    MemoryType::Event => "event",
    MemoryType::Note => "note",
});
names!(source: MemorySource {
    MemorySource::Explicit => "explicit",
    MemorySource::PolicyRules => "policy_rules",
    MemorySource::PolicyLlm => "policy_llm",
    MemorySource::Learning => "learning",
    MemorySource::Consolidation => "consolidation",
});
names!(write_method: WriteMethod {
    WriteMethod::CreateMemory => "create_memory",
    WriteMethod::BatchCreateMemories => "batch_create_memories",
    WriteMethod::Remember => "remember",
});
names!(link_kind: LinkKind {
    LinkKind::Conflicts => "conflicts",
    LinkKind::NearDuplicate => "near_duplicate",
});
names!(entity_type: EntityType {
    EntityType::Person => "person",
    EntityType::Organization => "organization",
    EntityType::Project => "project",
    EntityType::Service => "service",
    EntityType::Tool => "tool",
    EntityType::Place => "place",
    EntityType::Other => "other",
});
names!(status: EpisodeStatus {
    EpisodeStatus::Running => "running",
    EpisodeStatus::Completed => "completed",
    EpisodeStatus::Abandoned => "abandoned",
});
names!(origin: RuleOrigin {
    RuleOrigin::Works => "works",
    RuleOrigin::Avoid => "avoid",
    RuleOrigin::HighScore => "high_score",
    RuleOrigin::Consolidated => "consolidated",
});

/// How a step went (the `engram.v1.StepResult` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepResult {
    Unspecified = 0,
    Ok = 1,
    Error = 2,
}

impl StepResult {
    /// The result with this number, if there is one.
    pub fn from_code(code: i32) -> Option<StepResult> {
        [StepResult::Unspecified, StepResult::Ok, StepResult::Error]
            .into_iter()
            .find(|r| *r as i32 == code)
    }
}

/// What a revision did to its memory (the `engram.v1.RevisionAction`
/// numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevisionAction {
    Created = 1,
    Updated = 2,
    Merged = 3,
    Deleted = 4,
    Expired = 5,
    Invalidated = 6,
}

impl RevisionAction {
    const ALL: [RevisionAction; 6] = [
        RevisionAction::Created,
        RevisionAction::Updated,
        RevisionAction::Merged,
        RevisionAction::Deleted,
        RevisionAction::Expired,
        RevisionAction::Invalidated,
    ];

    /// The action with this number, if there is one.
    pub fn from_code(code: i32) -> Option<RevisionAction> {
        RevisionAction::ALL.into_iter().find(|a| *a as i32 == code)
    }

    /// The name the file uses.
    pub fn name(self) -> &'static str {
        match self {
            RevisionAction::Created => "created",
            RevisionAction::Updated => "updated",
            RevisionAction::Merged => "merged",
            RevisionAction::Deleted => "deleted",
            RevisionAction::Expired => "expired",
            RevisionAction::Invalidated => "invalidated",
        }
    }
}

/// Which list of an episode's outcome a lesson came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LessonKind {
    Mistake,
    Success,
}

/// Every kind of record, in the order a namespace's records are written:
/// memories before their history, an episode before its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Memory,
    MemoryRevision,
    MemoryLink,
    MemoryProvenance,
    Episode,
    Step,
    TaskRule,
    EpisodeLesson,
    MistakeCard,
    LearningState,
    Outcome,
    Heuristic,
    AntiPattern,
    AgentScope,
    Entity,
    EntityName,
    MemoryEntity,
    MemoryRelation,
}

impl Kind {
    /// Every kind, in export order.
    pub const ALL: [Kind; 18] = [
        Kind::Memory,
        Kind::MemoryRevision,
        Kind::MemoryLink,
        Kind::MemoryProvenance,
        Kind::Episode,
        Kind::Step,
        Kind::TaskRule,
        Kind::EpisodeLesson,
        Kind::MistakeCard,
        Kind::LearningState,
        Kind::Outcome,
        Kind::Heuristic,
        Kind::AntiPattern,
        Kind::AgentScope,
        Kind::Entity,
        Kind::EntityName,
        Kind::MemoryEntity,
        Kind::MemoryRelation,
    ];

    /// The name the file uses: a record's `kind`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::MemoryRevision => "memory_revision",
            Kind::MemoryLink => "memory_link",
            Kind::MemoryProvenance => "memory_provenance",
            Kind::Episode => "episode",
            Kind::Step => "step",
            Kind::TaskRule => "task_rule",
            Kind::EpisodeLesson => "episode_lesson",
            Kind::MistakeCard => "mistake_card",
            Kind::LearningState => "learning_state",
            Kind::Outcome => "outcome",
            Kind::Heuristic => "heuristic",
            Kind::AntiPattern => "anti_pattern",
            Kind::AgentScope => "agent_scope",
            Kind::Entity => "entity",
            Kind::EntityName => "entity_name",
            Kind::MemoryEntity => "memory_entity",
            Kind::MemoryRelation => "memory_relation",
        }
    }
}

/// One record: a line of the file, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    Memory(MemoryRecord),
    MemoryRevision(MemoryRevisionRecord),
    MemoryLink(MemoryLinkRecord),
    MemoryProvenance(MemoryProvenanceRecord),
    Episode(EpisodeRecord),
    Step(StepRecord),
    TaskRule(TaskRuleRecord),
    EpisodeLesson(LessonRecord),
    MistakeCard(MistakeCardRecord),
    LearningState(LearningStateRecord),
    Outcome(OutcomeRecord),
    Heuristic(HeuristicRecord),
    AntiPattern(AntiPatternRecord),
    AgentScope(AgentScopeRecord),
    Entity(EntityRecord),
    EntityName(EntityNameRecord),
    MemoryEntity(MemoryEntityRecord),
    MemoryRelation(MemoryRelationRecord),
}

/// A memory, with its access bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryRecord {
    pub id: String,
    pub namespace: String,
    /// The owning scope: only the fields its level uses are set.
    pub agent_id: String,
    pub user_id: String,
    pub project_id: String,
    pub session_id: String,
    #[serde(with = "level")]
    pub level: MemoryLevel,
    #[serde(with = "memory_type")]
    pub memory_type: MemoryType,
    pub content: String,
    pub summary: String,
    pub tags: Vec<String>,
    pub metadata: BTreeMap<String, String>,
    pub importance: f64,
    pub confidence: f64,
    #[serde(with = "source")]
    pub source: MemorySource,
    pub seen_count: i64,
    pub access_count: i64,
    pub last_access_time: Option<Micros>,
    pub create_time: Micros,
    pub update_time: Micros,
    pub expire_time: Option<Micros>,
    pub occurred_at: Micros,
    pub origin_session_id: String,
    /// Since when it is true; absent (files of servers before validity in
    /// time): from `occurred_at`.
    #[serde(default)]
    pub valid_from: Option<Micros>,
    /// Until when it was true; absent or null while it still is.
    #[serde(default)]
    pub valid_to: Option<Micros>,
    /// The id of the memory that replaced it; empty when none did.
    #[serde(default)]
    pub invalidated_by: String,
    /// Why it stopped being true; empty while it is.
    #[serde(default)]
    pub invalidation_reason: String,
    /// Its etag is `v{version}`.
    pub version: i64,
}

/// One change in a memory's history, as ListMemoryRevisions returns it.
/// A namespace's revisions are written oldest first, so the file keeps
/// each memory's order. Its key is its memory, version and action: every
/// change but a removal makes a new version, and a memory is removed once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryRevisionRecord {
    pub namespace: String,
    /// The memory's id (it may have been deleted since: its history stays).
    pub memory_id: String,
    /// The memory's version after the change (its last one, for a removal).
    pub version: i64,
    pub action: RevisionAction,
    pub time: Micros,
    /// The id of the API key the change was made with (empty without keys,
    /// and for an expiry).
    pub key_id: String,
    /// The agent_id of the caller's scope (empty when it named none).
    pub agent_id: String,
    /// For `updated` and `merged`: the fields whose values changed, by
    /// their names in a memory (`"content"`, `"seen_count"`).
    pub changed_fields: Vec<String>,
    /// For `invalidated`: why; empty otherwise.
    #[serde(default)]
    pub reason: String,
    /// For `invalidated`: the id of the memory that replaced it, if one did.
    #[serde(default)]
    pub replaced_by: String,
}

impl MemoryRevisionRecord {
    /// The revision a server records when it stores `memory` for no one:
    /// what each new memory of a file without history gets on import, as
    /// before history was exported.
    pub fn stored(memory: &MemoryRecord) -> Self {
        MemoryRevisionRecord {
            namespace: memory.namespace.clone(),
            memory_id: memory.id.clone(),
            version: memory.version,
            action: RevisionAction::Created,
            time: memory.create_time,
            key_id: String::new(),
            agent_id: String::new(),
            changed_fields: Vec::new(),
            reason: String::new(),
            replaced_by: String::new(),
        }
    }
}

/// An episode without its steps (they follow it as [`StepRecord`]s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpisodeRecord {
    pub id: String,
    pub namespace: String,
    pub agent_id: String,
    pub user_id: String,
    pub project_id: String,
    pub session_id: String,
    pub task_id: String,
    pub description: String,
    pub task_type: String,
    /// `{language, framework, domain, complexity, tags}`.
    pub context: EpisodeContext,
    #[serde(with = "status")]
    pub status: EpisodeStatus,
    pub step_count: i32,
    /// The highest step number logged.
    pub last_step: i32,
    /// Set on completion: `{score, success, summary, mistakes, successes,
    /// mistake_cards: [{mistake_type, worker_id, correct_decision, evidence,
    /// lesson}]}`.
    pub outcome: Option<Outcome>,
    pub create_time: Micros,
    pub update_time: Micros,
    pub complete_time: Option<Micros>,
    pub version: i64,
}

/// One step of an episode exported before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRecord {
    pub namespace: String,
    pub episode_id: String,
    pub step_number: i32,
    pub tool: String,
    pub action: String,
    /// JSON text, or empty.
    pub parameters: String,
    pub result: StepResult,
    pub output: String,
    pub latency_ms: i64,
    pub time: Micros,
}

/// A rule learned for a task, or a global one (empty `task_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRuleRecord {
    pub id: String,
    pub namespace: String,
    pub task_id: String,
    pub text: String,
    #[serde(with = "origin")]
    pub origin: RuleOrigin,
    pub create_time: Micros,
}

/// A mistake or success reported by completed episodes, once per namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonRecord {
    pub id: String,
    pub namespace: String,
    pub lesson_kind: LessonKind,
    pub text: String,
    pub seen_count: i64,
    /// The namespace's tick (see [`LearningStateRecord::tick`]) when last reported.
    pub last_seen: i64,
    pub create_time: Micros,
    pub update_time: Micros,
}

/// A recurring mistake and the decision that should have been made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MistakeCardRecord {
    pub id: String,
    pub namespace: String,
    pub mistake_type: String,
    pub task_id: String,
    pub worker_id: String,
    pub correct_decision: String,
    pub evidence: String,
    pub lesson: String,
    pub seen_count: i64,
    pub first_seen_episode_id: String,
    pub last_seen_episode_id: String,
    /// The namespace's tick when last seen: later sightings are larger.
    pub last_seen: i64,
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
}

/// A namespace's learning counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearningStateRecord {
    pub namespace: String,
    /// Completed episodes, counted towards consolidation.
    pub completed_episodes: i64,
    /// Orders reports of mistakes and mistake cards.
    pub tick: i64,
    /// `completed_episodes` at the last consolidation.
    pub last_consolidation: Option<i64>,
}

/// How an agent's attempt at a task went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeRecord {
    pub id: String,
    pub namespace: String,
    pub agent_id: String,
    pub project_id: String,
    pub task: String,
    pub task_type: String,
    pub task_type_inferred: bool,
    pub success: bool,
    pub strategy: String,
    pub duration_ms: Option<i64>,
    pub error: String,
    pub feedback: String,
    pub create_time: Micros,
}

/// A strategy that tends to work for a task type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeuristicRecord {
    pub id: String,
    pub namespace: String,
    pub agent_id: String,
    pub project_id: String,
    pub task_type: String,
    /// The latest wording.
    pub strategy: String,
    /// The first wording: what new outcomes' strategies are compared with.
    pub match_key: String,
    pub confidence: f64,
    pub occurrence_count: i64,
    pub success_count: i64,
    pub last_validated_time: Micros,
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
}

/// A strategy that keeps failing the same way for a task type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AntiPatternRecord {
    pub id: String,
    pub namespace: String,
    pub agent_id: String,
    pub project_id: String,
    pub task_type: String,
    pub strategy: String,
    pub error: String,
    pub occurrence_count: i64,
    pub better_alternative: String,
    pub better_alternative_heuristic_id: String,
    pub last_seen_time: Micros,
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
}

/// What an agent may learn from (only agents whose scope was set have one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentScopeRecord {
    pub namespace: String,
    pub agent_id: String,
    pub can_learn: Vec<String>,
    pub cannot_learn: Vec<String>,
    pub min_occurrences: i64,
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
}

impl Record {
    pub fn kind(&self) -> Kind {
        match self {
            Record::Memory(_) => Kind::Memory,
            Record::MemoryRevision(_) => Kind::MemoryRevision,
            Record::MemoryLink(_) => Kind::MemoryLink,
            Record::MemoryProvenance(_) => Kind::MemoryProvenance,
            Record::Episode(_) => Kind::Episode,
            Record::Step(_) => Kind::Step,
            Record::TaskRule(_) => Kind::TaskRule,
            Record::EpisodeLesson(_) => Kind::EpisodeLesson,
            Record::MistakeCard(_) => Kind::MistakeCard,
            Record::LearningState(_) => Kind::LearningState,
            Record::Outcome(_) => Kind::Outcome,
            Record::Heuristic(_) => Kind::Heuristic,
            Record::AntiPattern(_) => Kind::AntiPattern,
            Record::AgentScope(_) => Kind::AgentScope,
            Record::Entity(_) => Kind::Entity,
            Record::EntityName(_) => Kind::EntityName,
            Record::MemoryEntity(_) => Kind::MemoryEntity,
            Record::MemoryRelation(_) => Kind::MemoryRelation,
        }
    }

    pub fn namespace(&self) -> &str {
        match self {
            Record::Memory(r) => &r.namespace,
            Record::MemoryRevision(r) => &r.namespace,
            Record::MemoryLink(r) => &r.namespace,
            Record::MemoryProvenance(r) => &r.namespace,
            Record::Episode(r) => &r.namespace,
            Record::Step(r) => &r.namespace,
            Record::TaskRule(r) => &r.namespace,
            Record::EpisodeLesson(r) => &r.namespace,
            Record::MistakeCard(r) => &r.namespace,
            Record::LearningState(r) => &r.namespace,
            Record::Outcome(r) => &r.namespace,
            Record::Heuristic(r) => &r.namespace,
            Record::AntiPattern(r) => &r.namespace,
            Record::AgentScope(r) => &r.namespace,
            Record::Entity(r) => &r.namespace,
            Record::EntityName(r) => &r.namespace,
            Record::MemoryEntity(r) => &r.namespace,
            Record::MemoryRelation(r) => &r.namespace,
        }
    }

    /// The record's id, for the kinds that have one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Record::Memory(MemoryRecord { id, .. })
            | Record::Episode(EpisodeRecord { id, .. })
            | Record::TaskRule(TaskRuleRecord { id, .. })
            | Record::EpisodeLesson(LessonRecord { id, .. })
            | Record::MistakeCard(MistakeCardRecord { id, .. })
            | Record::Outcome(OutcomeRecord { id, .. })
            | Record::Heuristic(HeuristicRecord { id, .. })
            | Record::AntiPattern(AntiPatternRecord { id, .. })
            | Record::Entity(EntityRecord { id, .. }) => Some(id),
            Record::EntityName(_)
            | Record::MemoryEntity(_)
            | Record::MemoryRelation(_)
            | Record::MemoryLink(_)
            | Record::MemoryProvenance(_)
            | Record::MemoryRevision(_)
            | Record::Step(_)
            | Record::LearningState(_)
            | Record::AgentScope(_) => None,
        }
    }

    /// What names the record in messages, e.g. `memory 0196…`, `step 3 of
    /// episode 0196…` or `the merged revision (version 2) of memory 0196…`.
    pub fn describe(&self) -> String {
        if let Some(id) = self.id() {
            return format!("{} {id}", self.kind().name());
        }
        match self {
            Record::MemoryRevision(r) => format!(
                "the {} revision (version {}) of memory {}",
                r.action.name(),
                r.version,
                r.memory_id
            ),
            Record::Step(r) => format!("step {} of episode {}", r.step_number, r.episode_id),
            Record::MemoryLink(r) => {
                format!("the link of memory {} to {}", r.memory_id, r.other_id)
            }
            Record::MemoryProvenance(r) => format!("the provenance of memory {}", r.memory_id),
            Record::LearningState(r) => format!("the learning state of {}", r.namespace),
            Record::AgentScope(r) => format!("the agent scope of {}", r.agent_id),
            Record::EntityName(r) => format!("the entity name {:?}", r.name),
            Record::MemoryEntity(r) => {
                format!("memory {} naming entity {}", r.memory_id, r.entity_id)
            }
            Record::MemoryRelation(r) => {
                format!("relation {} of memory {}", r.position, r.memory_id)
            }
            _ => self.kind().name().to_owned(),
        }
    }
}

impl Record {
    /// The record with what an older file leaves out filled in as a server
    /// of this version writes it: a memory without `valid_from` is valid
    /// from when it happened.
    pub fn with_defaults(mut self) -> Record {
        if let Record::Memory(memory) = &mut self {
            memory.valid_from.get_or_insert(memory.occurred_at);
        }
        self
    }
}

// From the domain's types, which hold the same fields (less their row
// sequence numbers, which are the database's own).

impl From<crate::domain::Memory> for MemoryRecord {
    fn from(m: crate::domain::Memory) -> Self {
        MemoryRecord {
            id: m.id,
            namespace: m.scope.namespace,
            agent_id: m.scope.agent_id,
            user_id: m.scope.user_id,
            project_id: m.scope.project_id,
            session_id: m.scope.session_id,
            level: m.level,
            memory_type: m.memory_type,
            content: m.content,
            summary: m.summary,
            tags: m.tags,
            metadata: m.metadata,
            importance: m.importance,
            confidence: m.confidence,
            source: m.source,
            seen_count: m.seen_count,
            access_count: m.access_count,
            last_access_time: m.last_access_time,
            create_time: m.create_time,
            update_time: m.update_time,
            expire_time: m.expire_time,
            occurred_at: m.occurred_at,
            origin_session_id: m.origin_session_id,
            valid_from: Some(m.valid_from),
            valid_to: m.valid_to,
            invalidated_by: m.invalidated_by,
            invalidation_reason: m.invalidation_reason,
            version: m.version,
        }
    }
}

impl From<crate::domain::episode::Episode> for EpisodeRecord {
    fn from(e: crate::domain::episode::Episode) -> Self {
        EpisodeRecord {
            id: e.id,
            namespace: e.scope.namespace,
            agent_id: e.scope.agent_id,
            user_id: e.scope.user_id,
            project_id: e.scope.project_id,
            session_id: e.scope.session_id,
            task_id: e.task_id,
            description: e.description,
            task_type: e.task_type,
            context: e.context,
            status: e.status,
            step_count: e.step_count,
            last_step: e.last_step,
            outcome: e.outcome,
            create_time: e.create_time,
            update_time: e.update_time,
            complete_time: e.complete_time,
            version: e.version,
        }
    }
}

impl From<crate::domain::episode::TaskRule> for TaskRuleRecord {
    fn from(r: crate::domain::episode::TaskRule) -> Self {
        TaskRuleRecord {
            id: r.id,
            namespace: r.namespace,
            task_id: r.task_id,
            text: r.text,
            origin: r.origin,
            create_time: r.create_time,
        }
    }
}

impl From<crate::domain::episode::MistakeCard> for MistakeCardRecord {
    fn from(c: crate::domain::episode::MistakeCard) -> Self {
        MistakeCardRecord {
            id: c.id,
            namespace: c.namespace,
            mistake_type: c.mistake_type,
            task_id: c.task_id,
            worker_id: c.worker_id,
            correct_decision: c.correct_decision,
            evidence: c.evidence,
            lesson: c.lesson,
            seen_count: c.seen_count,
            first_seen_episode_id: c.first_seen_episode_id,
            last_seen_episode_id: c.last_seen_episode_id,
            last_seen: c.last_seen,
            create_time: c.create_time,
            update_time: c.update_time,
            version: c.version,
        }
    }
}

impl From<crate::domain::outcome::TaskOutcome> for OutcomeRecord {
    fn from(o: crate::domain::outcome::TaskOutcome) -> Self {
        OutcomeRecord {
            id: o.id,
            namespace: o.namespace,
            agent_id: o.agent_id,
            project_id: o.project_id,
            task: o.task,
            task_type: o.task_type,
            task_type_inferred: o.task_type_inferred,
            success: o.success,
            strategy: o.strategy,
            duration_ms: o.duration_ms,
            error: o.error,
            feedback: o.feedback,
            create_time: o.create_time,
        }
    }
}

impl HeuristicRecord {
    /// The record of a heuristic, whose domain type leaves out the wording
    /// outcomes are matched against.
    pub fn new(h: crate::domain::outcome::Heuristic, match_key: String) -> Self {
        HeuristicRecord {
            id: h.id,
            namespace: h.namespace,
            agent_id: h.agent_id,
            project_id: h.project_id,
            task_type: h.task_type,
            strategy: h.strategy,
            match_key,
            confidence: h.confidence,
            occurrence_count: h.occurrence_count,
            success_count: h.success_count,
            last_validated_time: h.last_validated_time,
            create_time: h.create_time,
            update_time: h.update_time,
            version: h.version,
        }
    }
}

impl From<crate::domain::outcome::AntiPattern> for AntiPatternRecord {
    fn from(a: crate::domain::outcome::AntiPattern) -> Self {
        AntiPatternRecord {
            id: a.id,
            namespace: a.namespace,
            agent_id: a.agent_id,
            project_id: a.project_id,
            task_type: a.task_type,
            strategy: a.strategy,
            error: a.error,
            occurrence_count: a.occurrence_count,
            better_alternative: a.better_alternative,
            better_alternative_heuristic_id: a.better_alternative_heuristic_id,
            last_seen_time: a.last_seen_time,
            create_time: a.create_time,
            update_time: a.update_time,
            version: a.version,
        }
    }
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;
