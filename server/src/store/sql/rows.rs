//! Rows as domain values, for both databases. Every column is read by
//! name, so a query selects (or returns) the columns named here.

use super::{Columns, Dialect, Row};
use crate::domain::outcome::{AntiPattern, Heuristic, TaskOutcome};
use crate::error::Result;

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
