//! Rows as domain values, for both databases. Every column is read by
//! name, so a query selects (or returns) the columns named here.

use super::{Columns, Dialect, Row};
use crate::domain::episode::{Episode, EpisodeStatus, MistakeCard, RuleOrigin, Step, TaskRule};
use crate::domain::outcome::{AntiPattern, Heuristic, TaskOutcome};
use crate::domain::{Actor, Memory, MemoryLevel, MemorySource, MemoryType, Revision, Scope};
use crate::error::{Error, Result};
use crate::store::transfer::rows::CHANGED_SEPARATOR;

/// A memory's columns (alias `m`) with its access bookkeeping (alias `a`,
/// a LEFT JOIN of `memory_access`, see [`FROM_MEMORIES`]), as [`memory`]
/// reads them; `$json` follows a JSON column to read it as text
/// ([`Dialect::JSON_AS_TEXT`]). Each dialect spells it once, as its
/// [`Dialect::MEMORY_COLUMNS`].
macro_rules! memory_columns {
    ($json:literal) => {
        concat!(
            "m.seq, m.id, m.namespace, m.agent_id, m.user_id, m.project_id, m.session_id, ",
            "m.origin_session_id, m.level, m.memory_type, m.content, m.content_hash, m.summary, ",
            "m.tags",
            $json,
            " AS tags, m.metadata",
            $json,
            " AS metadata, m.importance, m.confidence, m.source, m.seen_count, m.create_time, ",
            "m.update_time, m.occurred_at, m.expire_time, m.valid_from, m.valid_to, ",
            "m.invalidated_by, m.invalidation_reason, m.version, ",
            "coalesce(a.access_count, 0) AS access_count, a.last_access_time AS last_access_time"
        )
    };
}
pub(crate) use memory_columns;

/// Memories with their access bookkeeping, for [`Dialect::MEMORY_COLUMNS`].
pub const FROM_MEMORIES: &str = "memories m LEFT JOIN memory_access a ON a.memory_seq = m.seq";

/// A memory's row (see [`memory_columns`]).
pub fn memory<D: Dialect>(row: &Row<D>) -> Result<Memory> {
    let c = Columns::<D>::of(row);
    let corrupt = |what: &str| Error::Internal(format!("corrupt memory row: bad {what}"));
    let tags: String = c.get("tags")?;
    let metadata: String = c.get("metadata")?;
    Ok(Memory {
        seq: c.get("seq")?,
        id: c.get("id")?,
        scope: Scope {
            namespace: c.get("namespace")?,
            agent_id: c.get("agent_id")?,
            user_id: c.get("user_id")?,
            project_id: c.get("project_id")?,
            session_id: c.get("session_id")?,
        },
        level: MemoryLevel::from_code(c.get("level")?).ok_or_else(|| corrupt("level"))?,
        memory_type: MemoryType::from_code(c.get("memory_type")?)
            .ok_or_else(|| corrupt("memory_type"))?,
        content: c.get("content")?,
        summary: c.get("summary")?,
        tags: serde_json::from_str(&tags).map_err(|_| corrupt("tags"))?,
        metadata: serde_json::from_str(&metadata).map_err(|_| corrupt("metadata"))?,
        importance: c.get("importance")?,
        confidence: c.get("confidence")?,
        source: MemorySource::from_code(c.get("source")?).ok_or_else(|| corrupt("source"))?,
        seen_count: c.get("seen_count")?,
        access_count: c.get("access_count")?,
        create_time: c.get("create_time")?,
        update_time: c.get("update_time")?,
        last_access_time: c.get("last_access_time")?,
        expire_time: c.get("expire_time")?,
        occurred_at: c.get("occurred_at")?,
        origin_session_id: c.get("origin_session_id")?,
        valid_from: c.get("valid_from")?,
        valid_to: c.get("valid_to")?,
        invalidated_by: c.get("invalidated_by")?,
        invalidation_reason: c.get("invalidation_reason")?,
        version: c.get("version")?,
    })
}

/// A `memory_revisions` row.
pub fn revision<D: Dialect>(row: &Row<D>) -> Result<Revision> {
    let c = Columns::<D>::of(row);
    let changed: String = c.get("changed")?;
    Ok(Revision {
        seq: c.get("seq")?,
        memory_id: c.get("memory_id")?,
        version: c.get("version")?,
        action: c.get("action")?,
        time: c.get("time")?,
        actor: Actor {
            key_id: c.get("key_id")?,
            agent_id: c.get("agent_id")?,
        },
        changed_fields: changed
            .split(CHANGED_SEPARATOR)
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect(),
        reason: c.get("reason")?,
        replaced_by: c.get("replaced_by")?,
    })
}

/// An episode's columns (prefixed with `alias.` unless it is empty), its
/// JSON outcome as text: what [`episode`] reads.
pub fn episode_columns<D: Dialect>(alias: &str) -> String {
    let p = if alias.is_empty() {
        String::new()
    } else {
        format!("{alias}.")
    };
    let json = D::JSON_AS_TEXT;
    format!(
        "{p}seq, {p}id, {p}namespace, {p}agent_id, {p}user_id, {p}project_id, {p}session_id, \
         {p}task_id, {p}description, {p}task_type, {p}context, {p}status, {p}step_count, \
         {p}last_step, {p}outcome{json} AS outcome, {p}create_time, {p}update_time, \
         {p}complete_time, {p}version"
    )
}

/// An `episodes` row, without its steps (see [`episode_columns`]).
pub fn episode<D: Dialect>(row: &Row<D>) -> Result<Episode> {
    let c = Columns::<D>::of(row);
    let corrupt = |what: &str| Error::Internal(format!("corrupt episode row: bad {what}"));
    let context: String = c.get("context")?;
    let outcome: Option<String> = c.get("outcome")?;
    Ok(Episode {
        seq: c.get("seq")?,
        id: c.get("id")?,
        scope: Scope {
            namespace: c.get("namespace")?,
            agent_id: c.get("agent_id")?,
            user_id: c.get("user_id")?,
            project_id: c.get("project_id")?,
            session_id: c.get("session_id")?,
        },
        task_id: c.get("task_id")?,
        description: c.get("description")?,
        task_type: c.get("task_type")?,
        context: serde_json::from_str(&context).map_err(|_| corrupt("context"))?,
        status: EpisodeStatus::from_code(c.get("status")?).ok_or_else(|| corrupt("status"))?,
        steps: Vec::new(),
        step_count: c.get("step_count")?,
        last_step: c.get("last_step")?,
        outcome: outcome
            .map(|o| serde_json::from_str(&o))
            .transpose()
            .map_err(|_| corrupt("outcome"))?,
        create_time: c.get("create_time")?,
        update_time: c.get("update_time")?,
        complete_time: c.get("complete_time")?,
        version: c.get("version")?,
    })
}

/// An `episode_steps` row.
pub fn step<D: Dialect>(row: &Row<D>) -> Result<Step> {
    let c = Columns::<D>::of(row);
    Ok(Step {
        number: c.get("step_number")?,
        tool: c.get("tool")?,
        action: c.get("action")?,
        parameters: c.get("parameters")?,
        result: c.get("result")?,
        output: c.get("output")?,
        latency_ms: c.get("latency_ms")?,
        time: c.get("time")?,
    })
}

/// A `task_rules` row.
pub fn rule<D: Dialect>(row: &Row<D>) -> Result<TaskRule> {
    let c = Columns::<D>::of(row);
    Ok(TaskRule {
        seq: c.get("seq")?,
        id: c.get("id")?,
        namespace: c.get("namespace")?,
        task_id: c.get("task_id")?,
        text: c.get("text")?,
        origin: RuleOrigin::from_code(c.get("origin")?)
            .ok_or_else(|| Error::Internal("corrupt task rule: bad origin".into()))?,
        create_time: c.get("create_time")?,
    })
}

/// A `mistake_cards` row.
pub fn card<D: Dialect>(row: &Row<D>) -> Result<MistakeCard> {
    let c = Columns::<D>::of(row);
    Ok(MistakeCard {
        id: c.get("id")?,
        namespace: c.get("namespace")?,
        mistake_type: c.get("mistake_type")?,
        task_id: c.get("task_id")?,
        worker_id: c.get("worker_id")?,
        correct_decision: c.get("correct_decision")?,
        evidence: c.get("evidence")?,
        lesson: c.get("lesson")?,
        seen_count: c.get("seen_count")?,
        first_seen_episode_id: c.get("first_seen_episode_id")?,
        last_seen_episode_id: c.get("last_seen_episode_id")?,
        last_seen: c.get("last_seen")?,
        create_time: c.get("create_time")?,
        update_time: c.get("update_time")?,
        version: c.get("version")?,
    })
}

/// An `outcomes` row.
pub fn outcome<D: Dialect>(row: &Row<D>) -> Result<TaskOutcome> {
    let c = Columns::<D>::of(row);
    Ok(TaskOutcome {
        seq: c.get("seq")?,
        id: c.get("id")?,
        namespace: c.get("namespace")?,
        agent_id: c.get("agent_id")?,
        project_id: c.get("project_id")?,
        task: c.get("task")?,
        task_type: c.get("task_type")?,
        task_type_inferred: c.get("task_type_inferred")?,
        success: c.get("success")?,
        strategy: c.get("strategy")?,
        duration_ms: c.get("duration_ms")?,
        error: c.get("error")?,
        feedback: c.get("feedback")?,
        create_time: c.get("create_time")?,
    })
}

/// A `heuristics` row.
pub fn heuristic<D: Dialect>(row: &Row<D>) -> Result<Heuristic> {
    let c = Columns::<D>::of(row);
    Ok(Heuristic {
        seq: c.get("seq")?,
        id: c.get("id")?,
        namespace: c.get("namespace")?,
        agent_id: c.get("agent_id")?,
        project_id: c.get("project_id")?,
        task_type: c.get("task_type")?,
        strategy: c.get("strategy")?,
        confidence: c.get("confidence")?,
        occurrence_count: c.get("occurrence_count")?,
        success_count: c.get("success_count")?,
        last_validated_time: c.get("last_validated_time")?,
        create_time: c.get("create_time")?,
        update_time: c.get("update_time")?,
        version: c.get("version")?,
    })
}

/// An `anti_patterns` row.
pub fn anti_pattern<D: Dialect>(row: &Row<D>) -> Result<AntiPattern> {
    let c = Columns::<D>::of(row);
    Ok(AntiPattern {
        seq: c.get("seq")?,
        id: c.get("id")?,
        namespace: c.get("namespace")?,
        agent_id: c.get("agent_id")?,
        project_id: c.get("project_id")?,
        task_type: c.get("task_type")?,
        strategy: c.get("strategy")?,
        error: c.get("error")?,
        occurrence_count: c.get("occurrence_count")?,
        better_alternative: c.get("better_alternative")?,
        better_alternative_heuristic_id: c.get("better_alternative_heuristic_id")?,
        last_seen_time: c.get("last_seen_time")?,
        create_time: c.get("create_time")?,
        update_time: c.get("update_time")?,
        version: c.get("version")?,
    })
}

/// Every row of `rows` decoded with `decode`.
pub fn all<D: Dialect, T>(rows: &[Row<D>], decode: fn(&Row<D>) -> Result<T>) -> Result<Vec<T>> {
    rows.iter().map(decode).collect()
}
