//! The change feed both databases keep (SQLite's migration 0010,
//! PostgreSQL's 0002): each change names its namespace and memory, and a
//! removed memory leaves a tombstone. How far the feed reaches, one
//! namespace's changes for WatchMemories, and which namespaces changed.

use std::collections::HashMap;

use super::{Columns, Dialect, Row, Sql, count, rows};
use crate::domain::{
    Actor, ChangeAction, FeedBounds, FeedEvent, Memory, MemoryChange, MemoryLevel, MemoryType,
    Scope, Subject, Tombstone,
};
use crate::error::{Error, Result};

/// `memory_changes.kind` of a deletion.
pub const DELETED: i32 = 4;

/// How far the feed reaches. Nothing trims it today, so `oldest` is the
/// position before its first change.
pub async fn bounds<D: Dialect>(conn: &mut D) -> Result<FeedBounds> {
    let sql = Sql::new(format!(
        "SELECT ({}) AS newest, (SELECT min(seq) FROM memory_changes) AS first",
        D::FEED_HEAD
    ));
    let row = conn
        .fetch_optional(sql)
        .await?
        .ok_or_else(|| Error::Internal("the feed's bounds returned no row".into()))?;
    let c = Columns::<D>::of(&row);
    let newest: Option<i64> = c.get("newest")?;
    let first: Option<i64> = c.get("first")?;
    let newest = newest.unwrap_or(0);
    Ok(FeedBounds {
        // With no change left, none after the newest is missing either.
        oldest: first.map_or(newest, |first| first - 1),
        newest,
    })
}

/// Up to `limit` of `namespace`'s changes after `after`, in feed order: one
/// statement, so one snapshot, in which a change whose memory is gone finds
/// its tombstone (written by the transaction that removed it). The memory
/// is joined by sequence number *and* id, since SQLite may reuse the number
/// of a deleted memory. The history's record of the change is the newest
/// revision of that memory and version that removed it or not, as the
/// change did. Every column but the memory's has a name of its own, so that
/// the memory decoder reads the memory's. Changes that name no memory
/// (stored vectors, changes from before the feed named them) and stored
/// vectors are left out.
pub async fn events<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<FeedEvent>> {
    let mut sql = Sql::new("");
    push_events(&mut sql, namespace, after, limit);
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| event::<D>(row, namespace))
        .collect()
}

/// Appends the statement of [`events`] to `sql` (empty, or a prefix such
/// as `EXPLAIN QUERY PLAN `).
pub fn push_events<D: Dialect>(sql: &mut Sql<D>, namespace: &str, after: i64, limit: usize) {
    let (memory_columns, json) = (D::MEMORY_COLUMNS, D::JSON_AS_TEXT);
    let tomb_tags = format!("t.tags{json}");
    sql.push(format_args!(
        "SELECT c.seq AS change_seq, c.memory_id AS change_memory_id, \
           c.version AS change_version, c.kind AS change_kind, \
           r.action AS revision_action, r.time AS revision_time, r.key_id AS revision_key_id, \
           r.agent_id AS revision_agent_id, r.changed AS revision_changed, \
           t.agent_id AS tomb_agent_id, t.user_id AS tomb_user_id, \
           t.project_id AS tomb_project_id, t.session_id AS tomb_session_id, \
           t.level AS tomb_level, t.memory_type AS tomb_memory_type, {tomb_tags} AS tomb_tags, \
           m.id IS NOT NULL AS stored, {memory_columns} \
         FROM memory_changes c \
         LEFT JOIN memories m ON m.seq = c.memory_seq AND m.id = c.memory_id \
         LEFT JOIN memory_access a ON a.memory_seq = m.seq \
         LEFT JOIN memory_tombstones t ON m.id IS NULL \
           AND t.namespace = c.namespace AND t.memory_id = c.memory_id \
         LEFT JOIN memory_revisions r ON r.seq = ( \
           SELECT v.seq FROM memory_revisions v \
           WHERE v.namespace = c.namespace AND v.memory_id = c.memory_id \
             AND v.version = c.version AND (v.action >= 4) = (c.kind = {DELETED}) \
           ORDER BY v.seq DESC LIMIT 1) \
         WHERE c.namespace = "
    ));
    sql.bind(namespace)
        .push(" AND c.namespace <> '' AND c.seq > ")
        .bind(after)
        .push(format_args!(
            " AND c.kind <= {DELETED} ORDER BY c.seq LIMIT "
        ))
        .bind(count(limit));
}

/// The namespaces with a change a watcher is shown (of a memory's fields,
/// naming its memory) numbered above `after` and up to `upto`: a walk of
/// the feed's key over that range, whatever the number of namespaces.
pub async fn changed_namespaces<D: Dialect>(
    conn: &mut D,
    after: i64,
    upto: i64,
) -> Result<Vec<String>> {
    let mut sql = Sql::new("SELECT DISTINCT namespace FROM memory_changes WHERE seq > ");
    sql.bind(after)
        .push(" AND seq <= ")
        .bind(upto)
        .push(format_args!(" AND namespace <> '' AND kind <= {DELETED}"));
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| Columns::<D>::of(row).get("namespace"))
        .collect()
}

/// A row of [`events`] as a [`FeedEvent`] of `namespace`.
fn event<D: Dialect>(row: &Row<D>, namespace: &str) -> Result<FeedEvent> {
    let c = Columns::<D>::of(row);
    let corrupt = |what: &str| Error::Internal(format!("corrupt change feed row: bad {what}"));
    let text = |column: &str| {
        c.get::<Option<String>>(column)
            .map(Option::unwrap_or_default)
    };
    let kind: i32 = c.get("change_kind")?;
    let recorded: Option<i32> = c.get("revision_action")?;
    let action = match recorded {
        Some(code) => ChangeAction::from_code(code).ok_or_else(|| corrupt("revision action"))?,
        // No history of it (SQLite keeps none from before its migration
        // 0009): what the feed says, which cannot tell an expiry from a
        // delete.
        None => match kind {
            1 => ChangeAction::Created,
            2 => ChangeAction::Updated,
            3 => ChangeAction::Merged,
            DELETED => ChangeAction::Deleted,
            _ => return Err(corrupt("kind")),
        },
    };
    let subject = if c.get::<bool>("stored")? {
        Subject::Stored(Box::new(rows::memory::<D>(row)?))
    } else {
        Subject::Removed(tombstone::<D>(row, namespace)?)
    };
    Ok(FeedEvent {
        seq: c.get("change_seq")?,
        memory_id: c.get("change_memory_id")?,
        action,
        version: c.get("change_version")?,
        time: c.get("revision_time")?,
        actor: Actor {
            key_id: text("revision_key_id")?,
            agent_id: text("revision_agent_id")?,
        },
        changed_fields: text("revision_changed")?
            .split(',')
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect(),
        subject,
    })
}

/// The tombstone of a removed memory, from the `tomb_*` columns.
fn tombstone<D: Dialect>(row: &Row<D>, namespace: &str) -> Result<Tombstone> {
    let c = Columns::<D>::of(row);
    let corrupt = |what: &str| Error::Internal(format!("corrupt tombstone: bad {what}"));
    let text = |column: &str| {
        c.get::<Option<String>>(column)?
            .ok_or_else(|| corrupt("row: a removed memory has no tombstone"))
    };
    let code = |column: &str| c.get::<Option<i32>>(column)?.ok_or_else(|| corrupt(column));
    Ok(Tombstone {
        scope: Scope {
            namespace: namespace.to_owned(),
            agent_id: text("tomb_agent_id")?,
            user_id: text("tomb_user_id")?,
            project_id: text("tomb_project_id")?,
            session_id: text("tomb_session_id")?,
        },
        level: MemoryLevel::from_code(code("tomb_level")?).ok_or_else(|| corrupt("level"))?,
        memory_type: MemoryType::from_code(code("tomb_memory_type")?)
            .ok_or_else(|| corrupt("memory_type"))?,
        tags: serde_json::from_str(&text("tomb_tags")?).map_err(|_| corrupt("tags"))?,
    })
}

/// `memory_changes.kind` of a stored vector.
const VECTOR_STORED: i32 = 5;

/// Up to `limit` changes after `after`, for the search indexes: each with
/// the memory as of that change or later — from `written` when it holds
/// that very version (just stored by this server), else as the database
/// holds it now, which a follower converges on — and, for a stored vector,
/// the vector. Run on one snapshot, so the memories agree with the changes.
pub async fn changes_after<D: Dialect>(
    conn: &mut D,
    after: i64,
    limit: usize,
    written: Option<&Written>,
) -> Result<Vec<MemoryChange>> {
    let mut sql =
        Sql::new("SELECT seq, memory_seq, version, kind FROM memory_changes WHERE seq > ");
    sql.bind(after)
        .push(" ORDER BY seq LIMIT ")
        .bind(count(limit));
    let rows = conn.fetch_all(sql).await?;
    let mut changes = Vec::with_capacity(rows.len());
    let mut kinds = Vec::with_capacity(rows.len());
    for row in &rows {
        let c = Columns::<D>::of(row);
        let (memory_seq, version): (i64, i64) = (c.get("memory_seq")?, c.get("version")?);
        let kind: i32 = c.get("kind")?;
        changes.push(MemoryChange {
            seq: c.get("seq")?,
            memory_seq,
            vector: None,
            memory: match written {
                Some(written) if kind != DELETED => written.take(memory_seq, version),
                _ => None,
            },
        });
        kinds.push(kind);
    }
    // The changes still without their memory, and those of a vector.
    let (mut unread, mut vectors) = (Vec::new(), Vec::new());
    for (at, (change, &kind)) in changes.iter().zip(&kinds).enumerate() {
        if kind != DELETED && change.memory.is_none() {
            unread.push(at);
        }
        if kind == VECTOR_STORED {
            vectors.push(at);
        }
    }
    if !unread.is_empty() {
        let now: HashMap<i64, Memory> =
            super::memories::all_by_seq(conn, &seqs_at(&changes, &unread))
                .await?
                .into_iter()
                .map(|m| (m.seq, m))
                .collect();
        for i in unread {
            changes[i].memory = now.get(&changes[i].memory_seq).cloned();
        }
    }
    if !vectors.is_empty() {
        let stored = super::vectors::current(conn, &seqs_at(&changes, &vectors)).await?;
        for i in vectors {
            changes[i].vector = stored.get(&changes[i].memory_seq).cloned();
        }
    }
    Ok(changes)
}

/// The memories named by the changes at `at`.
fn seqs_at(changes: &[MemoryChange], at: &[usize]) -> Vec<i64> {
    at.iter().map(|&i| changes[i].memory_seq).collect()
}

/// Memories this server has just written, kept for the change feed's
/// follower so that it need not read them back from the database. Keyed by
/// sequence number and version: a cached memory is exactly the state that
/// change left. Taken when read; bounded, so a follower that stops reading
/// costs nothing but its own reads.
#[derive(Default)]
pub struct Written {
    memories: std::sync::Mutex<HashMap<(i64, i64), Memory>>,
}

/// The most memories [`Written`] holds.
const MAX_WRITTEN: usize = 50_000;

impl Written {
    /// Keeps `memories`, as just committed.
    pub fn keep<'a>(&self, memories: impl IntoIterator<Item = &'a Memory>) {
        let mut kept = self.memories.lock().unwrap_or_else(|p| p.into_inner());
        for memory in memories {
            if kept.len() >= MAX_WRITTEN {
                break;
            }
            kept.insert((memory.seq, memory.version), memory.clone());
        }
    }

    fn take(&self, seq: i64, version: i64) -> Option<Memory> {
        self.memories
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(seq, version))
    }
}
