//! How each kind of record is stored: its table, and the value of each of
//! its columns. Both backends' schemas have the same tables and columns
//! (server/migrations/postgres/0001_schema.sql copies SQLite's), so this is
//! written once, for both databases' imports, and read back once
//! ([`record`]).

use serde_json::Value as Json;

use crate::archive::records::{
    AgentScopeRecord, EntityNameRecord, EntityRecord, HeuristicRecord, Kind, LearningStateRecord,
    LessonKind, LessonRecord, MemoryEntityRecord, MemoryLinkRecord, MemoryProvenanceRecord,
    MemoryRelationRecord, MemoryRevisionRecord, Record, RevisionAction, StepRecord, StepResult,
};
use crate::domain::LinkKind;
use crate::domain::entity::EntityType;
use crate::domain::identity::content_hash;
use crate::domain::provenance::WriteMethod;
use crate::error::{Error, Result};
use crate::store::sql::{self, Columns, Dialect, Sql};

/// `episode_lessons.kind` of a mistake.
pub const LESSON_MISTAKE: i32 = 1;
/// `episode_lessons.kind` of a success.
pub const LESSON_SUCCESS: i32 = 2;
/// Between the names in `memory_revisions.changed` (as its triggers write
/// them).
pub const CHANGED_SEPARATOR: char = ',';

/// A column's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Integer(i64),
    Real(f64),
    Boolean(bool),
    /// JSON: a column of a JSON type, or text holding JSON, as the
    /// backend's schema has it.
    Json(Json),
    Null,
}

impl Value {
    fn optional(value: Option<i64>) -> Value {
        value.map_or(Value::Null, Value::Integer)
    }
}

/// The row a record is stored as.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub table: &'static str,
    /// Every column the record sets, but the keys its backend makes:
    /// a `seq`, and a step's `episode_seq` (its episode's, found by the
    /// episode's id and namespace). A memory's access bookkeeping is a row
    /// of `memory_access`, not among them.
    pub columns: Vec<(&'static str, Value)>,
}

impl Row {
    /// The column names, in order, separated by ", ", each after `prefix`
    /// (a table alias with its dot, or nothing).
    pub fn column_list(&self, prefix: &str) -> String {
        self.columns
            .iter()
            .map(|(column, _)| format!("{prefix}{column}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The first column whose text holds U+0000, which PostgreSQL's text
    /// and JSON types cannot store.
    pub fn column_with_nul(&self) -> Option<&'static str> {
        self.columns
            .iter()
            .find(|(_, value)| match value {
                Value::Text(text) => text.contains('\0'),
                Value::Json(json) => json_holds_nul(json),
                _ => false,
            })
            .map(|(column, _)| *column)
    }
}

fn json_holds_nul(json: &Json) -> bool {
    match json {
        Json::String(text) => text.contains('\0'),
        Json::Array(items) => items.iter().any(json_holds_nul),
        Json::Object(fields) => fields
            .iter()
            .any(|(key, value)| key.contains('\0') || json_holds_nul(value)),
        Json::Null | Json::Bool(_) | Json::Number(_) => false,
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    // The records' lists, maps and outcomes are plain data: serialising
    // them cannot fail.
    Value::Json(serde_json::to_value(value).unwrap_or(Json::Null))
}

fn text(value: &str) -> Value {
    Value::Text(value.to_owned())
}

/// The row `record` is stored as.
pub fn row(record: &Record) -> Row {
    use Value::{Boolean, Integer, Real};
    let (table, columns) = match record {
        Record::Memory(r) => (
            "memories",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("agent_id", text(&r.agent_id)),
                ("user_id", text(&r.user_id)),
                ("project_id", text(&r.project_id)),
                ("session_id", text(&r.session_id)),
                ("level", Integer(r.level.code().into())),
                ("memory_type", Integer(r.memory_type.code().into())),
                ("content", text(&r.content)),
                ("content_hash", Value::Text(content_hash(&r.content))),
                ("summary", text(&r.summary)),
                ("tags", to_json(&r.tags)),
                ("metadata", to_json(&r.metadata)),
                ("importance", Real(r.importance)),
                ("confidence", Real(r.confidence)),
                ("source", Integer(r.source.code().into())),
                ("seen_count", Integer(r.seen_count)),
                ("create_time", Integer(r.create_time)),
                ("update_time", Integer(r.update_time)),
                ("expire_time", Value::optional(r.expire_time)),
                ("occurred_at", Integer(r.occurred_at)),
                ("valid_from", Integer(r.valid_from.unwrap_or(r.occurred_at))),
                ("valid_to", Value::optional(r.valid_to)),
                ("invalidated_by", text(&r.invalidated_by)),
                ("invalidation_reason", text(&r.invalidation_reason)),
                ("origin_session_id", text(&r.origin_session_id)),
                ("version", Integer(r.version)),
            ],
        ),
        Record::MemoryRevision(r) => (
            "memory_revisions",
            vec![
                ("namespace", text(&r.namespace)),
                ("memory_id", text(&r.memory_id)),
                ("version", Integer(r.version)),
                ("action", Integer(r.action as i64)),
                ("time", Integer(r.time)),
                ("key_id", text(&r.key_id)),
                ("agent_id", text(&r.agent_id)),
                (
                    "changed",
                    Value::Text(r.changed_fields.join(&CHANGED_SEPARATOR.to_string())),
                ),
                ("reason", text(&r.reason)),
                ("replaced_by", text(&r.replaced_by)),
            ],
        ),
        Record::MemoryLink(r) => (
            "memory_links",
            vec![
                ("namespace", text(&r.namespace)),
                ("memory_id", text(&r.memory_id)),
                ("other_id", text(&r.other_id)),
                ("kind", Integer(r.link_kind.code().into())),
                ("reason", text(&r.reason)),
                ("create_time", Integer(r.create_time)),
            ],
        ),
        Record::MemoryProvenance(r) => (
            "memory_provenance",
            vec![
                ("memory_id", text(&r.memory_id)),
                ("namespace", text(&r.namespace)),
                ("method", Integer(r.method.code().into())),
                ("key_id", text(&r.key_id)),
                ("agent_id", text(&r.agent_id)),
                ("episode_id", text(&r.episode_id)),
                ("transcript_hash", text(&r.transcript_sha256)),
                ("transcript", text(&r.transcript)),
                ("create_time", Integer(r.create_time)),
            ],
        ),
        Record::Episode(r) => (
            "episodes",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("agent_id", text(&r.agent_id)),
                ("user_id", text(&r.user_id)),
                ("project_id", text(&r.project_id)),
                ("session_id", text(&r.session_id)),
                ("task_id", text(&r.task_id)),
                ("description", text(&r.description)),
                ("task_type", text(&r.task_type)),
                ("context", to_json(&r.context)),
                ("status", Integer(r.status.code().into())),
                ("step_count", Integer(r.step_count.into())),
                ("last_step", Integer(r.last_step.into())),
                (
                    "score",
                    r.outcome.as_ref().map_or(Value::Null, |o| Real(o.score)),
                ),
                ("outcome", r.outcome.as_ref().map_or(Value::Null, to_json)),
                ("create_time", Integer(r.create_time)),
                ("update_time", Integer(r.update_time)),
                ("complete_time", Value::optional(r.complete_time)),
                ("version", Integer(r.version)),
            ],
        ),
        Record::Step(r) => (
            "episode_steps",
            vec![
                ("step_number", Integer(r.step_number.into())),
                ("tool", text(&r.tool)),
                ("action", text(&r.action)),
                ("parameters", text(&r.parameters)),
                ("result", Integer(r.result as i64)),
                ("output", text(&r.output)),
                ("latency_ms", Integer(r.latency_ms)),
                ("time", Integer(r.time)),
            ],
        ),
        Record::TaskRule(r) => (
            "task_rules",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("task_id", text(&r.task_id)),
                ("text", text(&r.text)),
                ("origin", Integer(r.origin.code().into())),
                ("create_time", Integer(r.create_time)),
            ],
        ),
        Record::EpisodeLesson(r) => (
            "episode_lessons",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                (
                    "kind",
                    Integer(
                        match r.lesson_kind {
                            LessonKind::Mistake => LESSON_MISTAKE,
                            LessonKind::Success => LESSON_SUCCESS,
                        }
                        .into(),
                    ),
                ),
                ("text", text(&r.text)),
                ("seen_count", Integer(r.seen_count)),
                ("last_seen", Integer(r.last_seen)),
                ("create_time", Integer(r.create_time)),
                ("update_time", Integer(r.update_time)),
            ],
        ),
        Record::MistakeCard(r) => (
            "mistake_cards",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("mistake_type", text(&r.mistake_type)),
                ("task_id", text(&r.task_id)),
                ("worker_id", text(&r.worker_id)),
                ("correct_decision", text(&r.correct_decision)),
                ("evidence", text(&r.evidence)),
                ("lesson", text(&r.lesson)),
                ("seen_count", Integer(r.seen_count)),
                ("first_seen_episode_id", text(&r.first_seen_episode_id)),
                ("last_seen_episode_id", text(&r.last_seen_episode_id)),
                ("last_seen", Integer(r.last_seen)),
                ("create_time", Integer(r.create_time)),
                ("update_time", Integer(r.update_time)),
                ("version", Integer(r.version)),
            ],
        ),
        Record::LearningState(r) => (
            "learning_state",
            vec![
                ("namespace", text(&r.namespace)),
                ("completed_episodes", Integer(r.completed_episodes)),
                ("tick", Integer(r.tick)),
                ("last_consolidation", Value::optional(r.last_consolidation)),
            ],
        ),
        Record::Outcome(r) => (
            "outcomes",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("agent_id", text(&r.agent_id)),
                ("project_id", text(&r.project_id)),
                ("task", text(&r.task)),
                ("task_type", text(&r.task_type)),
                ("task_type_inferred", Boolean(r.task_type_inferred)),
                ("success", Boolean(r.success)),
                ("strategy", text(&r.strategy)),
                ("duration_ms", Value::optional(r.duration_ms)),
                ("error", text(&r.error)),
                ("feedback", text(&r.feedback)),
                ("create_time", Integer(r.create_time)),
            ],
        ),
        Record::Heuristic(r) => (
            "heuristics",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("agent_id", text(&r.agent_id)),
                ("project_id", text(&r.project_id)),
                ("task_type", text(&r.task_type)),
                ("strategy", text(&r.strategy)),
                ("match_key", text(&r.match_key)),
                ("confidence", Real(r.confidence)),
                ("occurrence_count", Integer(r.occurrence_count)),
                ("success_count", Integer(r.success_count)),
                ("last_validated_time", Integer(r.last_validated_time)),
                ("create_time", Integer(r.create_time)),
                ("update_time", Integer(r.update_time)),
                ("version", Integer(r.version)),
            ],
        ),
        Record::AntiPattern(r) => (
            "anti_patterns",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("agent_id", text(&r.agent_id)),
                ("project_id", text(&r.project_id)),
                ("task_type", text(&r.task_type)),
                ("strategy", text(&r.strategy)),
                ("error", text(&r.error)),
                ("occurrence_count", Integer(r.occurrence_count)),
                ("better_alternative", text(&r.better_alternative)),
                (
                    "better_alternative_heuristic_id",
                    text(&r.better_alternative_heuristic_id),
                ),
                ("last_seen_time", Integer(r.last_seen_time)),
                ("create_time", Integer(r.create_time)),
                ("update_time", Integer(r.update_time)),
                ("version", Integer(r.version)),
            ],
        ),
        Record::AgentScope(r) => (
            "agent_scopes",
            vec![
                ("namespace", text(&r.namespace)),
                ("agent_id", text(&r.agent_id)),
                ("can_learn", to_json(&r.can_learn)),
                ("cannot_learn", to_json(&r.cannot_learn)),
                ("min_occurrences", Integer(r.min_occurrences)),
                ("create_time", Integer(r.create_time)),
                ("update_time", Integer(r.update_time)),
                ("version", Integer(r.version)),
            ],
        ),
        Record::Entity(r) => (
            "entities",
            vec![
                ("id", text(&r.id)),
                ("namespace", text(&r.namespace)),
                ("key", text(&r.key)),
                ("name", text(&r.name)),
                ("entity_type", Integer(r.entity_type.code().into())),
                ("create_time", Integer(r.create_time)),
            ],
        ),
        Record::EntityName(r) => (
            "entity_names",
            vec![
                ("namespace", text(&r.namespace)),
                ("key", text(&r.key)),
                ("entity_id", text(&r.entity_id)),
                ("name", text(&r.name)),
            ],
        ),
        Record::MemoryEntity(r) => ("memory_entities", vec![("entity_id", text(&r.entity_id))]),
        Record::MemoryRelation(r) => (
            "memory_relations",
            vec![
                ("position", Integer(r.position)),
                ("subject_key", text(&r.subject_key)),
                ("predicate", text(&r.predicate)),
                ("object", text(&r.object)),
            ],
        ),
    };
    Row { table, columns }
}

/// Why a record whose key is free could not be stored: a uniqueness rule
/// of the schema other than its key.
pub fn refusal(record: &Record) -> &'static str {
    match record {
        Record::Memory(_) => {
            "an identical memory (same scope, level, type and content) is already there under another id"
        }
        Record::Step(_) => "its episode is not there (an episode comes before its steps)",
        Record::MemoryEntity(_) | Record::MemoryRelation(_) => {
            "its memory is not there (a memory comes before what it says of its entities)"
        }
        Record::TaskRule(_) => "a rule of the same task and text is already there under another id",
        Record::EpisodeLesson(_) => "the same lesson is already there under another id",
        Record::MistakeCard(_) => {
            "a card of the same type, task, worker and decision is already there under another id"
        }
        _ => "another record with its key is already there",
    }
}

fn corrupt(kind: Kind, what: &str) -> Error {
    Error::Internal(format!("corrupt {} row: bad {what}", kind.name()))
}

/// A row of `kind`'s table, with the columns [`super::tables::Table::of`]
/// selects, as a record.
pub fn record<D: Dialect>(kind: Kind, row: &sql::Row<D>) -> Result<Record> {
    let c = Columns::<D>::of(row);
    let text = |column: &str| c.get::<String>(column);
    let number = |column: &str| c.get::<i64>(column);
    Ok(match kind {
        Kind::Memory => Record::Memory(sql::rows::memory::<D>(row)?.into()),
        Kind::MemoryRevision => {
            let revision = sql::rows::revision::<D>(row)?;
            Record::MemoryRevision(MemoryRevisionRecord {
                namespace: text("namespace")?,
                memory_id: revision.memory_id,
                version: revision.version,
                action: RevisionAction::from_code(revision.action)
                    .ok_or_else(|| corrupt(kind, "action"))?,
                time: revision.time,
                key_id: revision.actor.key_id,
                agent_id: revision.actor.agent_id,
                changed_fields: revision.changed_fields,
                reason: revision.reason,
                replaced_by: revision.replaced_by,
            })
        }
        Kind::Episode => Record::Episode(sql::rows::episode::<D>(row)?.into()),
        Kind::Step => Record::Step(StepRecord {
            namespace: text("namespace")?,
            episode_id: text("episode_id")?,
            step_number: c.get("step_number")?,
            tool: text("tool")?,
            action: text("action")?,
            parameters: text("parameters")?,
            result: StepResult::from_code(c.get("result")?)
                .ok_or_else(|| corrupt(kind, "result"))?,
            output: text("output")?,
            latency_ms: number("latency_ms")?,
            time: number("time")?,
        }),
        Kind::TaskRule => Record::TaskRule(sql::rows::rule::<D>(row)?.into()),
        Kind::EpisodeLesson => Record::EpisodeLesson(LessonRecord {
            id: text("id")?,
            namespace: text("namespace")?,
            lesson_kind: match c.get::<i32>("kind")? {
                LESSON_MISTAKE => LessonKind::Mistake,
                LESSON_SUCCESS => LessonKind::Success,
                _ => return Err(corrupt(kind, "kind")),
            },
            text: text("text")?,
            seen_count: number("seen_count")?,
            last_seen: number("last_seen")?,
            create_time: number("create_time")?,
            update_time: number("update_time")?,
        }),
        Kind::MistakeCard => Record::MistakeCard(sql::rows::card::<D>(row)?.into()),
        Kind::LearningState => Record::LearningState(LearningStateRecord {
            namespace: text("namespace")?,
            completed_episodes: number("completed_episodes")?,
            tick: number("tick")?,
            last_consolidation: c.get("last_consolidation")?,
        }),
        Kind::Outcome => Record::Outcome(sql::rows::outcome::<D>(row)?.into()),
        Kind::Heuristic => Record::Heuristic(HeuristicRecord::new(
            sql::rows::heuristic::<D>(row)?,
            text("match_key")?,
        )),
        Kind::AntiPattern => Record::AntiPattern(sql::rows::anti_pattern::<D>(row)?.into()),
        Kind::AgentScope => {
            let list = |column: &str| -> Result<Vec<String>> {
                serde_json::from_str(&text(column)?).map_err(|_| corrupt(kind, column))
            };
            Record::AgentScope(AgentScopeRecord {
                namespace: text("namespace")?,
                agent_id: text("agent_id")?,
                can_learn: list("can_learn")?,
                cannot_learn: list("cannot_learn")?,
                min_occurrences: number("min_occurrences")?,
                create_time: number("create_time")?,
                update_time: number("update_time")?,
                version: number("version")?,
            })
        }
        Kind::MemoryLink => Record::MemoryLink(MemoryLinkRecord {
            namespace: text("namespace")?,
            memory_id: text("memory_id")?,
            other_id: text("other_id")?,
            link_kind: LinkKind::from_code(c.get("kind")?).ok_or_else(|| corrupt(kind, "kind"))?,
            reason: text("reason")?,
            create_time: number("create_time")?,
        }),
        Kind::MemoryProvenance => Record::MemoryProvenance(MemoryProvenanceRecord {
            namespace: text("namespace")?,
            memory_id: text("memory_id")?,
            method: WriteMethod::from_code(c.get("method")?)
                .ok_or_else(|| corrupt(kind, "method"))?,
            key_id: text("key_id")?,
            agent_id: text("agent_id")?,
            episode_id: text("episode_id")?,
            transcript_sha256: text("transcript_hash")?,
            transcript: text("transcript")?,
            create_time: number("create_time")?,
        }),
        Kind::Entity => Record::Entity(EntityRecord {
            id: text("id")?,
            namespace: text("namespace")?,
            key: text("key")?,
            name: text("name")?,
            entity_type: EntityType::from_code(c.get("entity_type")?)
                .ok_or_else(|| corrupt(kind, "entity_type"))?,
            create_time: number("create_time")?,
        }),
        Kind::EntityName => Record::EntityName(EntityNameRecord {
            namespace: text("namespace")?,
            key: text("key")?,
            entity_id: text("entity_id")?,
            name: text("name")?,
        }),
        Kind::MemoryEntity => Record::MemoryEntity(MemoryEntityRecord {
            namespace: text("namespace")?,
            memory_id: text("memory_id")?,
            entity_id: text("entity_id")?,
        }),
        Kind::MemoryRelation => Record::MemoryRelation(MemoryRelationRecord {
            namespace: text("namespace")?,
            memory_id: text("memory_id")?,
            position: c.get::<i32>("position")?.into(),
            subject_key: text("subject_key")?,
            predicate: text("predicate")?,
            object: text("object")?,
        }),
    })
}

/// Pushes `value` into `sql`: bound, JSON as its text, a null written as
/// `NULL` (not bound: a statement is prepared once for its text, with the
/// types of its first parameters, and a column bound as an integer in one
/// row and as a null of another type in the next would reach a statement
/// prepared for the other).
pub fn push_value<D: Dialect>(sql: &mut Sql<D>, value: &Value) {
    match value {
        Value::Text(text) => sql.bind(text.as_str()),
        Value::Integer(number) => sql.bind(*number),
        Value::Real(number) => sql.bind(*number),
        Value::Boolean(flag) => sql.bind(*flag),
        Value::Json(json) => sql.bind(json.to_string()),
        Value::Null => sql.push("NULL"),
    };
}

/// Checks that taking back the creation an imported memory's insert
/// recorded (its history is its own revision records) removed exactly one
/// revision: without it the memory would keep a creation nobody made —
/// better no import than a history that lies.
pub fn creation_taken_back(removed: u64, memory_id: &str) -> Result<()> {
    if removed == 1 {
        return Ok(());
    }
    Err(Error::Internal(format!(
        "importing memory {memory_id}: its insert did not record its creation as expected"
    )))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record of every kind, with values that are easy to get wrong:
    /// floats without a short decimal form, text beyond ASCII, nulls and
    /// their absence, an outcome with its cards.
    const RECORDS: &str = include_str!("../../../../tests/data/records.jsonl");

    /// [`RECORDS`], parsed.
    pub(crate) fn records() -> Vec<Record> {
        RECORDS
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).expect("a record"))
            .collect()
    }

    #[test]
    fn a_memory_row_carries_its_content_hash_and_not_its_access_bookkeeping() {
        let memory = &records()[0];
        let row = row(memory);
        assert_eq!(row.table, "memories");
        let Record::Memory(r) = memory else {
            unreachable!("a memory")
        };
        assert!(
            row.columns
                .contains(&("content_hash", Value::Text(content_hash(&r.content))))
        );
        assert!(row.columns.iter().all(|(c, _)| !c.contains("access")));
    }

    #[test]
    fn a_nul_character_is_found_in_text_and_inside_json() {
        let records = records();
        assert_eq!(row(&records[0]).column_with_nul(), None);
        let Record::Memory(mut memory) = records[0].clone() else {
            unreachable!("a memory")
        };
        memory.metadata.insert("k".into(), "a\0b".into());
        assert_eq!(
            row(&Record::Memory(memory.clone())).column_with_nul(),
            Some("metadata")
        );
        memory.summary = "\0".into();
        assert_eq!(
            row(&Record::Memory(memory)).column_with_nul(),
            Some("summary")
        );
    }
}
