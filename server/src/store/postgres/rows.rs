//! Rows as domain values. Every column is read by name, so the column lists
//! below are what a query selects (or returns) to be decoded here; JSON
//! columns come as text (`::text`), which the domain types parse.

use sqlx::Row as _;
use sqlx::postgres::PgRow;

use super::db_error;
use crate::domain::{Actor, Memory, MemoryLevel, MemorySource, MemoryType, Revision, Scope};
use crate::error::{Error, Result};

/// A memory's columns (alias `m`) with its access bookkeeping (alias `a`,
/// a LEFT JOIN of `memory_access`), as [`memory`] reads them.
pub(super) const MEMORY_COLUMNS: &str = "m.seq, m.id, m.namespace, m.agent_id, m.user_id, \
     m.project_id, m.session_id, m.origin_session_id, m.level, m.memory_type, m.content, \
     m.content_hash, m.summary, m.tags::text AS tags, m.metadata::text AS metadata, m.importance, \
     m.confidence, m.source, m.seen_count, m.create_time, m.update_time, m.occurred_at, \
     m.expire_time, m.version, coalesce(a.access_count, 0) AS access_count, \
     a.last_access_time AS last_access_time";

/// Memories with their access bookkeeping, for [`MEMORY_COLUMNS`].
pub(super) const FROM_MEMORIES: &str =
    "memories m LEFT JOIN memory_access a ON a.memory_seq = m.seq";

fn get<'r, T>(row: &'r PgRow, column: &str) -> Result<T>
where
    T: sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
{
    row.try_get(column).map_err(db_error)
}

pub(super) fn memory(row: &PgRow) -> Result<Memory> {
    let corrupt = |what: &str| Error::Internal(format!("corrupt memory row: bad {what}"));
    let tags: String = get(row, "tags")?;
    let metadata: String = get(row, "metadata")?;
    Ok(Memory {
        seq: get(row, "seq")?,
        id: get(row, "id")?,
        scope: Scope {
            namespace: get(row, "namespace")?,
            agent_id: get(row, "agent_id")?,
            user_id: get(row, "user_id")?,
            project_id: get(row, "project_id")?,
            session_id: get(row, "session_id")?,
        },
        level: MemoryLevel::from_code(get(row, "level")?).ok_or_else(|| corrupt("level"))?,
        memory_type: MemoryType::from_code(get(row, "memory_type")?)
            .ok_or_else(|| corrupt("memory_type"))?,
        content: get(row, "content")?,
        summary: get(row, "summary")?,
        tags: serde_json::from_str(&tags).map_err(|_| corrupt("tags"))?,
        metadata: serde_json::from_str(&metadata).map_err(|_| corrupt("metadata"))?,
        importance: get(row, "importance")?,
        confidence: get(row, "confidence")?,
        source: MemorySource::from_code(get(row, "source")?).ok_or_else(|| corrupt("source"))?,
        seen_count: get(row, "seen_count")?,
        access_count: get(row, "access_count")?,
        create_time: get(row, "create_time")?,
        update_time: get(row, "update_time")?,
        last_access_time: get(row, "last_access_time")?,
        expire_time: get(row, "expire_time")?,
        occurred_at: get(row, "occurred_at")?,
        origin_session_id: get(row, "origin_session_id")?,
        version: get(row, "version")?,
    })
}

/// Between the names in `memory_revisions.changed` (as its trigger writes
/// them).
const CHANGED_SEPARATOR: char = ',';

pub(super) fn revision(row: &PgRow) -> Result<Revision> {
    let changed: String = get(row, "changed")?;
    Ok(Revision {
        seq: get(row, "seq")?,
        memory_id: get(row, "memory_id")?,
        version: get(row, "version")?,
        action: get(row, "action")?,
        time: get(row, "time")?,
        actor: Actor {
            key_id: get(row, "key_id")?,
            agent_id: get(row, "agent_id")?,
        },
        changed_fields: changed
            .split(CHANGED_SEPARATOR)
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

/// Decodes every row with `decode`.
pub(super) fn all<T>(rows: &[PgRow], decode: fn(&PgRow) -> Result<T>) -> Result<Vec<T>> {
    rows.iter().map(decode).collect()
}
