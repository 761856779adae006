//! SQL for memories: visibility, filters, keyset paging, the create-or-merge
//! of DESIGN §3, and reading the change feed that search indexes follow.

use std::collections::HashMap;

use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use crate::domain::{Memory, MemoryChange, Micros, Neighbours};
use crate::error::{Error, Result};
use crate::store::sql::feed::DELETED;
use crate::store::sql::{self, Dialect, rows};
use crate::store::tx::{self, MemoryInsert};

/// A memory's columns with its access bookkeeping, as [`rows::memory`]
/// reads them, from [`FROM_MEMORIES`].
pub(super) const COLUMNS: &str = <SqliteConnection as Dialect>::MEMORY_COLUMNS;
pub(super) use crate::store::sql::rows::FROM_MEMORIES;

/// Selects the memories with these sequence numbers (conditions may be
/// appended). NOT INDEXED: they are looked up by rowid, never by walking a
/// namespace's index, which a visibility rule would otherwise invite.
fn select_by_seq(seqs: &[i64]) -> QueryBuilder<Sqlite> {
    let mut qb = QueryBuilder::new(format!(
        "SELECT {COLUMNS} FROM memories m NOT INDEXED \
         LEFT JOIN memory_access a ON a.memory_seq = m.seq WHERE m.seq IN "
    ));
    push_list(&mut qb, seqs);
    qb
}

/// Appends `(?, ?, …)` binding `seqs`.
pub(super) fn push_list(qb: &mut QueryBuilder<Sqlite>, seqs: &[i64]) {
    qb.push("(");
    let mut list = qb.separated(", ");
    for &seq in seqs {
        list.push_bind(seq);
    }
    qb.push(")");
}

/// The memories of these identities, expired ones included, with their
/// content hashes: one indexed lookup per identity.
pub(super) async fn identical(
    conn: &mut SqliteConnection,
    identities: &[tx::Identity],
) -> Result<Vec<(Memory, String)>> {
    let mut found = Vec::new();
    for chunk in identities.chunks(MAX_UPSERT_ROWS) {
        let mut qb = QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM (VALUES "));
        let mut rows = qb.separated(", ");
        for identity in chunk {
            let scope = &identity.scope;
            rows.push("(")
                .push_bind_unseparated(scope.namespace.clone())
                .push_unseparated(", ")
                .push_bind_unseparated(identity.level.code())
                .push_unseparated(", ")
                .push_bind_unseparated(scope.agent_id.clone())
                .push_unseparated(", ")
                .push_bind_unseparated(scope.user_id.clone())
                .push_unseparated(", ")
                .push_bind_unseparated(scope.project_id.clone())
                .push_unseparated(", ")
                .push_bind_unseparated(scope.session_id.clone())
                .push_unseparated(", ")
                .push_bind_unseparated(identity.memory_type.code())
                .push_unseparated(", ")
                .push_bind_unseparated(identity.content_hash.clone())
                .push_unseparated(")");
        }
        qb.push(
            ") AS v JOIN memories m ON m.namespace = v.column1 AND m.level = v.column2 \
             AND m.agent_id = v.column3 AND m.user_id = v.column4 AND m.project_id = v.column5 \
             AND m.session_id = v.column6 AND m.memory_type = v.column7 AND m.content_hash = v.column8 \
             LEFT JOIN memory_access a ON a.memory_seq = m.seq",
        );
        let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
        for row in &rows {
            let hash: String = row.try_get("content_hash").map_err(db_error)?;
            found.push((rows::memory::<SqliteConnection>(row)?, hash));
        }
    }
    Ok(found)
}

/// Inserts memories none of whose identities is stored; returns them as
/// stored, in the order given.
pub(super) async fn insert(
    conn: &mut SqliteConnection,
    inserts: &[MemoryInsert],
    now: Micros,
) -> Result<Vec<Memory>> {
    let mut stored = Vec::with_capacity(inserts.len());
    for chunk in inserts.chunks(MAX_UPSERT_ROWS) {
        let mut qb = QueryBuilder::<Sqlite>::new(INSERT);
        qb.push_values(chunk, |mut row, insert| {
            let new = &insert.new;
            row.push_bind(insert.id.as_str())
                .push_bind(new.scope.namespace.as_str())
                .push_bind(new.scope.agent_id.as_str())
                .push_bind(new.scope.user_id.as_str())
                .push_bind(new.scope.project_id.as_str())
                .push_bind(new.scope.session_id.as_str())
                .push_bind(new.level.code())
                .push_bind(new.memory_type.code())
                .push_bind(new.content.as_str())
                .push_bind(insert.content_hash.as_str())
                .push_bind(new.summary.as_str())
                .push_bind(sql::memories::json(&new.tags))
                .push_bind(sql::memories::json(&new.metadata))
                .push_bind(new.importance)
                .push_bind(new.confidence)
                .push_bind(new.source.code())
                .push_bind(now)
                .push_bind(now)
                .push_bind(new.expire_time)
                .push_bind(new.occurred_at.unwrap_or(now))
                .push_bind(new.origin_session_id.as_str())
                .push_bind(new.actor.key_id.as_str())
                .push_bind(new.actor.agent_id.as_str());
        });
        qb.push(" RETURNING seq, id");
        let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
        // RETURNING gives no order: match the rows to the inserts by id.
        let mut seqs = HashMap::with_capacity(rows.len());
        for row in &rows {
            let id: String = row.try_get("id").map_err(db_error)?;
            seqs.insert(id, row.try_get::<i64, _>("seq").map_err(db_error)?);
        }
        for insert in chunk {
            let seq = seqs
                .get(&insert.id)
                .copied()
                .ok_or_else(|| Error::Internal("an inserted memory returned no row".into()))?;
            stored.push(inserted(insert, seq, now));
        }
    }
    Ok(stored)
}

/// The memory an insert stored: what was sent, and the defaults of a new row.
fn inserted(insert: &MemoryInsert, seq: i64, now: Micros) -> Memory {
    let new = &insert.new;
    Memory {
        seq,
        id: insert.id.clone(),
        scope: new.scope.clone(),
        level: new.level,
        memory_type: new.memory_type,
        content: new.content.clone(),
        summary: new.summary.clone(),
        tags: new.tags.clone(),
        metadata: new.metadata.clone(),
        importance: new.importance,
        confidence: new.confidence,
        source: new.source,
        seen_count: 1,
        access_count: 0,
        create_time: now,
        update_time: now,
        last_access_time: None,
        expire_time: new.expire_time,
        occurred_at: new.occurred_at.unwrap_or(now),
        origin_session_id: new.origin_session_id.clone(),
        version: 1,
    }
}

/// The columns a create writes, in the order [`upsert`] binds them.
const INSERT: &str = "INSERT INTO memories (id, namespace, agent_id, user_id, project_id, session_id, level, \
     memory_type, content, content_hash, summary, tags, metadata, importance, confidence, source, create_time, \
     update_time, expire_time, occurred_at, origin_session_id, actor_key, actor_agent) ";
/// The most rows of one multi-row upsert (23 parameters a row, well under
/// SQLite's limit of 32,766). A statement of each size is prepared once and
/// kept in the write connection's statement cache ([`super::WRITER_STATEMENTS`]).
pub(super) const MAX_UPSERT_ROWS: usize = 256;

/// The conversation neighbours of the memories `seqs` of `namespace`: for
/// each one written in a session, the memory written just before and just
/// after it in that session (whoever may see them).
pub(super) async fn conversation_neighbours(
    conn: &mut SqliteConnection,
    namespace: &str,
    seqs: &[i64],
) -> Result<Vec<Neighbours>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    // The literal `<> ''` lets SQLite use the partial index.
    let mut qb = QueryBuilder::<Sqlite>::new(
        "SELECT m.seq, \
           (SELECT p.seq FROM memories p WHERE p.namespace = m.namespace \
              AND p.origin_session_id = m.origin_session_id AND p.origin_session_id <> '' \
              AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1) AS before, \
           (SELECT n.seq FROM memories n WHERE n.namespace = m.namespace \
              AND n.origin_session_id = m.origin_session_id AND n.origin_session_id <> '' \
              AND n.seq > m.seq ORDER BY n.seq LIMIT 1) AS after \
         FROM memories m NOT INDEXED WHERE m.origin_session_id <> '' AND m.namespace = ",
    );
    qb.push_bind(namespace).push(" AND m.seq IN ");
    push_list(&mut qb, seqs);
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter()
        .map(|row| {
            Ok(Neighbours {
                seq: row.try_get("seq").map_err(db_error)?,
                before: row.try_get("before").map_err(db_error)?,
                after: row.try_get("after").map_err(db_error)?,
            })
        })
        .collect()
}

/// The statement that reads the change feed's head: AUTOINCREMENT keeps the
/// highest number ever used, which is also the newest change's (numbers are
/// never reused). No row before the first change.
macro_rules! feed_head_sql {
    () => {
        "SELECT seq FROM sqlite_sequence WHERE name = 'memory_changes'"
    };
}
pub(super) use feed_head_sql;

/// The newest change's sequence number, 0 before any.
pub(super) async fn feed_head(conn: &mut SqliteConnection) -> Result<i64> {
    let head: Option<i64> = sqlx::query_scalar(feed_head_sql!())
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(head.unwrap_or(0))
}

/// Up to `limit` changes after `after`, each with the memory as of that
/// change or later: from `written` when it holds that very version (just
/// stored by this server), else as the database holds it now.
pub(super) async fn changes_after(
    conn: &mut SqliteConnection,
    after: i64,
    limit: usize,
    written: &Written,
) -> Result<Vec<MemoryChange>> {
    let rows: Vec<(i64, i64, i64, i32)> = sqlx::query_as(
        "SELECT seq, memory_seq, version, kind FROM memory_changes WHERE seq > ? ORDER BY seq LIMIT ?",
    )
    .bind(after)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    let mut changes: Vec<MemoryChange> = rows
        .iter()
        .map(|&(seq, memory_seq, version, kind)| MemoryChange {
            seq,
            memory_seq,
            vector: None,
            memory: if kind == DELETED {
                None
            } else {
                written.take(memory_seq, version)
            },
        })
        .collect();
    let missing: Vec<i64> = rows
        .iter()
        .zip(&changes)
        .filter(|((.., kind), change)| *kind != DELETED && change.memory.is_none())
        .map(|(_, change)| change.memory_seq)
        .collect();
    if !missing.is_empty() {
        let read = select_by_seq(&missing)
            .build()
            .fetch_all(&mut *conn)
            .await
            .map_err(db_error)?;
        let now: HashMap<i64, Memory> = read
            .iter()
            .map(|row| rows::memory::<SqliteConnection>(row).map(|m| (m.seq, m)))
            .collect::<Result<_>>()?;
        for change in changes.iter_mut().filter(|c| c.memory.is_none()) {
            change.memory = now.get(&change.memory_seq).cloned();
        }
    }
    let stored: Vec<i64> = rows
        .iter()
        .filter(|(.., kind)| *kind == VECTOR_STORED)
        .map(|&(_, memory_seq, ..)| memory_seq)
        .collect();
    if !stored.is_empty() {
        let vectors = sql::vectors::current(conn, &stored).await?;
        for (change, _) in changes
            .iter_mut()
            .zip(&rows)
            .filter(|(_, (.., kind))| *kind == VECTOR_STORED)
        {
            change.vector = vectors.get(&change.memory_seq).cloned();
        }
    }
    Ok(changes)
}

/// `memory_changes.kind` of a stored vector.
const VECTOR_STORED: i32 = 5;

/// Memories this server has just written, kept for the change feed's
/// follower so that it need not read them back from the database. Keyed by
/// sequence number and version: a cached memory is exactly the state that
/// change left. Taken when read; bounded, so a follower that stops reading
/// costs nothing but its own reads.
#[derive(Default)]
pub(super) struct Written {
    memories: std::sync::Mutex<HashMap<(i64, i64), Memory>>,
}

/// The most memories [`Written`] holds.
const MAX_WRITTEN: usize = 50_000;

impl Written {
    /// Keeps `memories`, as just committed.
    pub(super) fn keep<'a>(&self, memories: impl IntoIterator<Item = &'a Memory>) {
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
