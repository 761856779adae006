//! Inserting whole records for import: every field as the record has it
//! (ids, times, counters, versions), nothing where a record is already.
//! A memory's history is its revision records, never what the triggers of
//! migration 0009 would record of the import itself.

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::learning::{MISTAKE, SUCCESS};
use super::memories::CHANGED_SEPARATOR;
use super::{db_error, export};
use crate::domain::identity::content_hash;
use crate::error::{Error, Result};
use crate::store::transfer::Inserted;
use crate::transfer::records::{
    AgentScopeRecord, AntiPatternRecord, EpisodeRecord, HeuristicRecord, LearningStateRecord,
    LessonKind, LessonRecord, MemoryRecord, MemoryRevisionRecord, MistakeCardRecord, OutcomeRecord,
    Record, RevisionAction, StepRecord, TaskRuleRecord,
};

/// Inserts `record` unless a record with its key, or one it may not stand
/// beside, is there already.
pub(super) async fn insert(conn: &mut SqliteConnection, record: &Record) -> Result<Inserted> {
    let stored = match record {
        Record::Memory(r) => memory(conn, r).await?,
        Record::MemoryRevision(r) => memory_revision(conn, r).await?,
        Record::Episode(r) => episode(conn, r).await?,
        Record::Step(r) => step(conn, r).await?,
        Record::TaskRule(r) => task_rule(conn, r).await?,
        Record::EpisodeLesson(r) => lesson(conn, r).await?,
        Record::MistakeCard(r) => mistake_card(conn, r).await?,
        Record::LearningState(r) => learning_state(conn, r).await?,
        Record::Outcome(r) => outcome(conn, r).await?,
        Record::Heuristic(r) => heuristic(conn, r).await?,
        Record::AntiPattern(r) => anti_pattern(conn, r).await?,
        Record::AgentScope(r) => agent_scope(conn, r).await?,
    };
    if stored {
        return Ok(Inserted::New);
    }
    Ok(match export::find(conn, record).await? {
        Some(existing) => Inserted::Exists(Box::new(existing)),
        None => Inserted::Refused(refusal(record).into()),
    })
}

/// Why a record whose key is free could not be stored: a uniqueness rule
/// other than its key.
fn refusal(record: &Record) -> &'static str {
    match record {
        Record::Memory(_) => {
            "an identical memory (same scope, level, type and content) is already there under another id"
        }
        Record::Step(_) => "its episode is not there (an episode comes before its steps)",
        Record::TaskRule(_) => "a rule of the same task and text is already there under another id",
        Record::EpisodeLesson(_) => "the same lesson is already there under another id",
        Record::MistakeCard(_) => {
            "a card of the same type, task, worker and decision is already there under another id"
        }
        _ => "another record with its key is already there",
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::Internal(format!("encoding JSON: {e}")))
}

/// Inserts a row of these columns and values into `table` unless one with
/// the same key (or another unique value) is there; says whether it did.
/// Each value is named by its column, so none can be bound to another's.
macro_rules! insert_new {
    ($conn:expr, $table:literal { $($column:ident: $value:expr),+ $(,)? }) => {{
        let mut qb = QueryBuilder::<Sqlite>::new(concat!("INSERT INTO ", $table, " ("));
        let mut columns = qb.separated(", ");
        $(columns.push(stringify!($column));)+
        qb.push(") VALUES (");
        let mut values = qb.separated(", ");
        $(values.push_bind($value);)+
        qb.push(") ON CONFLICT DO NOTHING");
        let done = qb.build().execute(&mut *$conn).await.map_err(db_error)?;
        Ok(done.rows_affected() > 0)
    }};
}

async fn memory(conn: &mut SqliteConnection, r: &MemoryRecord) -> Result<bool> {
    let seq: Option<i64> = sqlx::query_scalar(
        "INSERT INTO memories (id, namespace, agent_id, user_id, project_id, session_id, level, memory_type, \
         content, content_hash, summary, tags, metadata, importance, confidence, source, seen_count, create_time, \
         update_time, expire_time, occurred_at, origin_session_id, version) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT DO NOTHING RETURNING seq",
    )
    .bind(&r.id)
    .bind(&r.namespace)
    .bind(&r.agent_id)
    .bind(&r.user_id)
    .bind(&r.project_id)
    .bind(&r.session_id)
    .bind(r.level.code())
    .bind(r.memory_type.code())
    .bind(&r.content)
    .bind(content_hash(&r.content))
    .bind(&r.summary)
    .bind(json(&r.tags)?)
    .bind(json(&r.metadata)?)
    .bind(r.importance)
    .bind(r.confidence)
    .bind(r.source.code())
    .bind(r.seen_count)
    .bind(r.create_time)
    .bind(r.update_time)
    .bind(r.expire_time)
    .bind(r.occurred_at)
    .bind(&r.origin_session_id)
    .bind(r.version)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db_error)?;
    let Some(seq) = seq else { return Ok(false) };
    forget_trigger_creation(conn, r).await?;
    if r.access_count > 0 || r.last_access_time.is_some() {
        sqlx::query(
            "INSERT INTO memory_access (memory_seq, access_count, last_access_time) VALUES (?, ?, ?)",
        )
        .bind(seq)
        .bind(r.access_count)
        .bind(r.last_access_time.unwrap_or(0))
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    }
    Ok(true)
}

/// Takes back the revision the insert's trigger just recorded of `r` (its
/// creation, by no one, as if the import had made it): its history is its
/// own revision records. That revision is the newest row of its table, as
/// this transaction is the database's only writer and `seq` only grows.
async fn forget_trigger_creation(conn: &mut SqliteConnection, r: &MemoryRecord) -> Result<()> {
    let done = sqlx::query(
        "DELETE FROM memory_revisions WHERE seq = (SELECT max(seq) FROM memory_revisions) \
         AND namespace = ? AND memory_id = ? AND action = ?",
    )
    .bind(&r.namespace)
    .bind(&r.id)
    .bind(RevisionAction::Created as i32)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if done.rows_affected() != 1 {
        // Without this the memory would keep a creation nobody made: better
        // no import than a history that lies.
        return Err(Error::Internal(format!(
            "importing memory {}: its insert did not record its creation as expected",
            r.id
        )));
    }
    Ok(())
}

/// Appends `r` to its memory's history unless a revision of the same
/// version and action is there (no index keeps that key unique: `seq` is
/// the table's own key).
async fn memory_revision(conn: &mut SqliteConnection, r: &MemoryRevisionRecord) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE NOT EXISTS (SELECT 1 FROM memory_revisions \
         WHERE namespace = ?1 AND memory_id = ?2 AND version = ?3 AND action = ?4)",
    )
    .bind(&r.namespace)
    .bind(&r.memory_id)
    .bind(r.version)
    .bind(r.action as i32)
    .bind(r.time)
    .bind(&r.key_id)
    .bind(&r.agent_id)
    .bind(r.changed_fields.join(&CHANGED_SEPARATOR.to_string()))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(done.rows_affected() > 0)
}

async fn episode(conn: &mut SqliteConnection, r: &EpisodeRecord) -> Result<bool> {
    insert_new!(conn, "episodes" {
        id: &r.id,
        namespace: &r.namespace,
        agent_id: &r.agent_id,
        user_id: &r.user_id,
        project_id: &r.project_id,
        session_id: &r.session_id,
        task_id: &r.task_id,
        description: &r.description,
        task_type: &r.task_type,
        context: json(&r.context)?,
        status: r.status.code(),
        step_count: r.step_count,
        last_step: r.last_step,
        score: r.outcome.as_ref().map(|o| o.score),
        outcome: r.outcome.as_ref().map(json).transpose()?,
        create_time: r.create_time,
        update_time: r.update_time,
        complete_time: r.complete_time,
        version: r.version,
    })
}

async fn step(conn: &mut SqliteConnection, r: &StepRecord) -> Result<bool> {
    // Keyed by its episode's row, found by the episode's id.
    let done = sqlx::query(
        "INSERT INTO episode_steps (episode_seq, step_number, tool, action, parameters, result, output, \
         latency_ms, time) SELECT seq, ?, ?, ?, ?, ?, ?, ?, ? FROM episodes WHERE id = ? AND namespace = ? \
         ON CONFLICT DO NOTHING",
    )
    .bind(r.step_number)
    .bind(&r.tool)
    .bind(&r.action)
    .bind(&r.parameters)
    .bind(r.result as i32)
    .bind(&r.output)
    .bind(r.latency_ms)
    .bind(r.time)
    .bind(&r.episode_id)
    .bind(&r.namespace)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(done.rows_affected() > 0)
}

async fn task_rule(conn: &mut SqliteConnection, r: &TaskRuleRecord) -> Result<bool> {
    insert_new!(conn, "task_rules" {
        id: &r.id,
        namespace: &r.namespace,
        task_id: &r.task_id,
        text: &r.text,
        origin: r.origin.code(),
        create_time: r.create_time,
    })
}

async fn lesson(conn: &mut SqliteConnection, r: &LessonRecord) -> Result<bool> {
    insert_new!(conn, "episode_lessons" {
        id: &r.id,
        namespace: &r.namespace,
        kind: match r.lesson_kind {
            LessonKind::Mistake => MISTAKE,
            LessonKind::Success => SUCCESS,
        },
        text: &r.text,
        seen_count: r.seen_count,
        last_seen: r.last_seen,
        create_time: r.create_time,
        update_time: r.update_time,
    })
}

async fn mistake_card(conn: &mut SqliteConnection, r: &MistakeCardRecord) -> Result<bool> {
    insert_new!(conn, "mistake_cards" {
        id: &r.id,
        namespace: &r.namespace,
        mistake_type: &r.mistake_type,
        task_id: &r.task_id,
        worker_id: &r.worker_id,
        correct_decision: &r.correct_decision,
        evidence: &r.evidence,
        lesson: &r.lesson,
        seen_count: r.seen_count,
        first_seen_episode_id: &r.first_seen_episode_id,
        last_seen_episode_id: &r.last_seen_episode_id,
        last_seen: r.last_seen,
        create_time: r.create_time,
        update_time: r.update_time,
        version: r.version,
    })
}

async fn learning_state(conn: &mut SqliteConnection, r: &LearningStateRecord) -> Result<bool> {
    insert_new!(conn, "learning_state" {
        namespace: &r.namespace,
        completed_episodes: r.completed_episodes,
        tick: r.tick,
        last_consolidation: r.last_consolidation,
    })
}

async fn outcome(conn: &mut SqliteConnection, r: &OutcomeRecord) -> Result<bool> {
    insert_new!(conn, "outcomes" {
        id: &r.id,
        namespace: &r.namespace,
        agent_id: &r.agent_id,
        project_id: &r.project_id,
        task: &r.task,
        task_type: &r.task_type,
        task_type_inferred: r.task_type_inferred,
        success: r.success,
        strategy: &r.strategy,
        duration_ms: r.duration_ms,
        error: &r.error,
        feedback: &r.feedback,
        create_time: r.create_time,
    })
}

async fn heuristic(conn: &mut SqliteConnection, r: &HeuristicRecord) -> Result<bool> {
    insert_new!(conn, "heuristics" {
        id: &r.id,
        namespace: &r.namespace,
        agent_id: &r.agent_id,
        project_id: &r.project_id,
        task_type: &r.task_type,
        strategy: &r.strategy,
        match_key: &r.match_key,
        confidence: r.confidence,
        occurrence_count: r.occurrence_count,
        success_count: r.success_count,
        last_validated_time: r.last_validated_time,
        create_time: r.create_time,
        update_time: r.update_time,
        version: r.version,
    })
}

async fn anti_pattern(conn: &mut SqliteConnection, r: &AntiPatternRecord) -> Result<bool> {
    insert_new!(conn, "anti_patterns" {
        id: &r.id,
        namespace: &r.namespace,
        agent_id: &r.agent_id,
        project_id: &r.project_id,
        task_type: &r.task_type,
        strategy: &r.strategy,
        error: &r.error,
        occurrence_count: r.occurrence_count,
        better_alternative: &r.better_alternative,
        better_alternative_heuristic_id: &r.better_alternative_heuristic_id,
        last_seen_time: r.last_seen_time,
        create_time: r.create_time,
        update_time: r.update_time,
        version: r.version,
    })
}

async fn agent_scope(conn: &mut SqliteConnection, r: &AgentScopeRecord) -> Result<bool> {
    insert_new!(conn, "agent_scopes" {
        namespace: &r.namespace,
        agent_id: &r.agent_id,
        can_learn: json(&r.can_learn)?,
        cannot_learn: json(&r.cannot_learn)?,
        min_occurrences: r.min_occurrences,
        create_time: r.create_time,
        update_time: r.update_time,
        version: r.version,
    })
}
