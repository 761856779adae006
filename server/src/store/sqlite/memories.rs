//! SQL for memories: visibility, filters, keyset paging, the create-or-merge
//! of DESIGN §3, and reading the change feed that search indexes follow.

use std::collections::HashMap;

use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use crate::domain::{
    Actor, ListQuery, Memory, MemoryChange, MemoryFilter, MemoryOrder, Micros, Neighbours,
    Revision, Scope, TimeRange,
};
use crate::error::{Error, Result};
use crate::store::budget;
use crate::store::sql::{self, Dialect, Sql, rows};
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

fn select_from_memories() -> QueryBuilder<Sqlite> {
    QueryBuilder::new(format!("SELECT {COLUMNS} FROM {FROM_MEMORIES} WHERE "))
}

/// Appends the visibility rule of DESIGN §3 for `scope`, and hides expired rows.
pub(super) fn push_visible(qb: &mut QueryBuilder<Sqlite>, scope: &Scope, now: Micros) {
    let mut sql = Sql::<SqliteConnection>::wrap(std::mem::take(qb));
    sql::memories::push_visible(&mut sql, scope, now);
    *qb = sql.into_query();
}

fn push_filter(qb: &mut QueryBuilder<Sqlite>, filter: &MemoryFilter) {
    push_in(
        qb,
        "m.memory_type",
        filter.memory_types.iter().map(|t| t.code()),
    );
    push_in(qb, "m.level", filter.levels.iter().map(|l| l.code()));
    for tag in &filter.tags {
        qb.push(" AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ")
            .push_bind(tag.clone())
            .push(")");
    }
    if filter.min_importance > 0.0 {
        qb.push(" AND m.importance >= ")
            .push_bind(filter.min_importance);
    }
    push_range(qb, "m.create_time", filter.created);
    push_range(qb, "m.occurred_at", filter.occurred);
    for (key, value) in &filter.metadata {
        qb.push(" AND EXISTS (SELECT 1 FROM json_each(m.metadata) WHERE json_each.key = ")
            .push_bind(key.clone())
            .push(" AND json_each.value = ")
            .push_bind(value.clone())
            .push(")");
    }
}

/// Appends the conditions that `column` is in `range`.
fn push_range(qb: &mut QueryBuilder<Sqlite>, column: &str, range: TimeRange) {
    if let Some(after) = range.after {
        qb.push(format!(" AND {column} >= ")).push_bind(after);
    }
    if let Some(before) = range.before {
        qb.push(format!(" AND {column} < ")).push_bind(before);
    }
}

/// Appends `column IN (codes)`. The codes are the server's own enum
/// numbers, written as literals so that the planner sees them: a single one
/// becomes `column = code`, which lets SQLite use a partial index for that
/// value (preferences have one).
fn push_in(qb: &mut QueryBuilder<Sqlite>, column: &str, codes: impl ExactSizeIterator<Item = i32>) {
    let codes: Vec<String> = codes.map(|code| code.to_string()).collect();
    match codes.as_slice() {
        [] => {}
        [code] => {
            qb.push(format!(" AND {column} = {code}"));
        }
        many => {
            qb.push(format!(" AND {column} IN ({})", many.join(", ")));
        }
    }
}

fn json<T: serde::Serialize>(value: &T) -> String {
    // Serialising a Vec<String> or a map of strings cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

/// The memory `id` if it is visible from `scope`.
pub(super) async fn get(
    conn: &mut SqliteConnection,
    scope: &Scope,
    id: &str,
    now: Micros,
) -> Result<Option<Memory>> {
    let mut qb = select_from_memories();
    push_visible(&mut qb, scope, now);
    qb.push(" AND m.id = ").push_bind(id.to_owned());
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.as_ref()
        .map(rows::memory::<SqliteConnection>)
        .transpose()
}

/// The memory `id` unless it has expired, whatever its scope (the caller
/// has established that the scope may see it).
pub(super) async fn get_unexpired(
    conn: &mut SqliteConnection,
    id: &str,
    now: Micros,
) -> Result<Option<Memory>> {
    let mut qb = select_from_memories();
    qb.push("m.id = ")
        .push_bind(id.to_owned())
        .push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .push_bind(now)
        .push(")");
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.as_ref()
        .map(rows::memory::<SqliteConnection>)
        .transpose()
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
                .push_bind(json(&new.tags))
                .push_bind(json(&new.metadata))
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

/// Writes a reinforced memory's counters, times and expiry as given.
pub(super) async fn reinforce(
    conn: &mut SqliteConnection,
    memory: &Memory,
    actor: &Actor,
) -> Result<()> {
    sqlx::query(
        "UPDATE memories SET seen_count = ?, importance = ?, update_time = ?, occurred_at = ?, expire_time = ?, \
         version = ?, actor_key = ?, actor_agent = ? WHERE seq = ?",
    )
    .bind(memory.seen_count)
    .bind(memory.importance)
    .bind(memory.update_time)
    .bind(memory.occurred_at)
    .bind(memory.expire_time)
    .bind(memory.version)
    .bind(&actor.key_id)
    .bind(&actor.agent_id)
    .bind(memory.seq)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Writes an updated memory as given.
pub(super) async fn rewrite(
    conn: &mut SqliteConnection,
    memory: &Memory,
    hash: &str,
    actor: &Actor,
) -> Result<()> {
    let updated = sqlx::query(
        "UPDATE memories SET memory_type = ?, content = ?, content_hash = ?, summary = ?, tags = ?, metadata = ?, \
         importance = ?, confidence = ?, expire_time = ?, occurred_at = ?, update_time = ?, version = ?, \
         actor_key = ?, actor_agent = ? WHERE seq = ?",
    )
    .bind(memory.memory_type.code())
    .bind(&memory.content)
    .bind(hash)
    .bind(&memory.summary)
    .bind(json(&memory.tags))
    .bind(json(&memory.metadata))
    .bind(memory.importance)
    .bind(memory.confidence)
    .bind(memory.expire_time)
    .bind(memory.occurred_at)
    .bind(memory.update_time)
    .bind(memory.version)
    .bind(&actor.key_id)
    .bind(&actor.agent_id)
    .bind(memory.seq)
    .execute(&mut *conn)
    .await;
    match updated {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(Error::AlreadyExists(
            "an identical memory already exists in this scope".into(),
        )),
        Err(err) => Err(db_error(err)),
    }
}

/// Names `actor` as the memory's last writer.
pub(super) async fn stamp_actor(
    conn: &mut SqliteConnection,
    seq: i64,
    actor: &Actor,
) -> Result<()> {
    sqlx::query("UPDATE memories SET actor_key = ?, actor_agent = ? WHERE seq = ?")
        .bind(&actor.key_id)
        .bind(&actor.agent_id)
        .bind(seq)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// The columns a create writes, in the order [`upsert`] binds them.
const INSERT: &str = "INSERT INTO memories (id, namespace, agent_id, user_id, project_id, session_id, level, \
     memory_type, content, content_hash, summary, tags, metadata, importance, confidence, source, create_time, \
     update_time, expire_time, occurred_at, origin_session_id, actor_key, actor_agent) ";
/// The most rows of one multi-row upsert (23 parameters a row, well under
/// SQLite's limit of 32,766). A statement of each size is prepared once and
/// kept in the write connection's statement cache ([`super::WRITER_STATEMENTS`]).
pub(super) const MAX_UPSERT_ROWS: usize = 256;

/// The history of memory `id` in `namespace`, oldest first: up to `limit`
/// revisions after `after_seq`.
pub(super) async fn revisions(
    conn: &mut SqliteConnection,
    namespace: &str,
    id: &str,
    limit: usize,
    after_seq: Option<i64>,
) -> Result<Vec<Revision>> {
    let rows = sqlx::query(
        "SELECT * FROM memory_revisions WHERE namespace = ? AND memory_id = ? AND seq > ? \
         ORDER BY seq LIMIT ?",
    )
    .bind(namespace)
    .bind(id)
    .bind(after_seq.unwrap_or(0))
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter().map(revision_from_row).collect()
}

/// A row of `memory_revisions` as a revision.
pub(super) fn revision_from_row(row: &SqliteRow) -> Result<Revision> {
    let changed: String = row.try_get("changed").map_err(db_error)?;
    Ok(Revision {
        seq: row.try_get("seq").map_err(db_error)?,
        memory_id: row.try_get("memory_id").map_err(db_error)?,
        version: row.try_get("version").map_err(db_error)?,
        action: row.try_get("action").map_err(db_error)?,
        time: row.try_get("time").map_err(db_error)?,
        actor: Actor {
            key_id: row.try_get("key_id").map_err(db_error)?,
            agent_id: row.try_get("agent_id").map_err(db_error)?,
        },
        changed_fields: changed
            .split(CHANGED_SEPARATOR)
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

/// Between the names in `memory_revisions.changed` (as its trigger writes
/// them).
pub(super) const CHANGED_SEPARATOR: char = crate::store::transfer::rows::CHANGED_SEPARATOR;

/// Removes the memories `seqs`: the one way a memory leaves the database on
/// request (DeleteMemory) or by retention. Their deletion trigger records
/// each as a change of the feed, which the search indexes follow; whatever
/// else a removal must leave behind belongs here too.
pub(super) async fn remove(conn: &mut SqliteConnection, seqs: &[i64]) -> Result<()> {
    if seqs.is_empty() {
        return Ok(());
    }
    let mut qb = QueryBuilder::<Sqlite>::new("DELETE FROM memories WHERE seq IN ");
    push_list(&mut qb, seqs);
    qb.build().execute(&mut *conn).await.map_err(db_error)?;
    Ok(())
}

/// Removes up to `limit` memories that expired at or before `now`, soonest
/// expired first; returns how many.
pub(super) async fn purge_expired(
    conn: &mut SqliteConnection,
    now: Micros,
    limit: usize,
) -> Result<usize> {
    let seqs: Vec<i64> = sqlx::query_scalar(
        "SELECT seq FROM memories WHERE expire_time IS NOT NULL AND expire_time <= ? \
         ORDER BY expire_time LIMIT ?",
    )
    .bind(now)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    remove(conn, &seqs).await?;
    Ok(seqs.len())
}

/// One page (plus one row, to tell whether another page follows).
pub(super) async fn list(
    conn: &mut SqliteConnection,
    query: &ListQuery,
    now: Micros,
) -> Result<Vec<Memory>> {
    let mut qb = select_from_memories();
    push_visible(&mut qb, &query.scope, now);
    push_filter(&mut qb, &query.filter);
    if let Some(after) = query.after {
        match query.order {
            MemoryOrder::CreateTimeDesc => qb
                .push(" AND (m.create_time, m.seq) < (")
                .push_bind(after.create_time)
                .push(", ")
                .push_bind(after.seq)
                .push(")"),
            MemoryOrder::CreateTimeAsc => qb
                .push(" AND (m.create_time, m.seq) > (")
                .push_bind(after.create_time)
                .push(", ")
                .push_bind(after.seq)
                .push(")"),
            MemoryOrder::ImportanceDesc => qb
                .push(" AND (m.importance, m.create_time, m.seq) < (")
                .push_bind(after.importance)
                .push(", ")
                .push_bind(after.create_time)
                .push(", ")
                .push_bind(after.seq)
                .push(")"),
        };
    }
    qb.push(match query.order {
        MemoryOrder::CreateTimeDesc => " ORDER BY m.create_time DESC, m.seq DESC",
        MemoryOrder::CreateTimeAsc => " ORDER BY m.create_time ASC, m.seq ASC",
        MemoryOrder::ImportanceDesc => {
            " ORDER BY m.importance DESC, m.create_time DESC, m.seq DESC"
        }
    });
    qb.push(" LIMIT ")
        .push_bind(i64::try_from(query.page_size + 1).unwrap_or(i64::MAX));
    let rows = budget::rows_of(qb.build().fetch(&mut *conn), db_error);
    budget::memories_within(rows, query.max_bytes, rows::memory::<SqliteConnection>).await
}

/// The memories with these sequence numbers that are visible from `scope`
/// and match `filter`.
pub(super) async fn by_seq(
    conn: &mut SqliteConnection,
    scope: &Scope,
    filter: &MemoryFilter,
    seqs: &[i64],
    now: Micros,
) -> Result<Vec<Memory>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let mut qb = select_by_seq(seqs);
    qb.push(" AND ");
    push_visible(&mut qb, scope, now);
    push_filter(&mut qb, filter);
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(rows::memory::<SqliteConnection>).collect()
}

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

/// `memory_changes.kind` of a deletion.
const DELETED: i32 = 4;
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

/// Up to `limit` memories after `after_seq`, in sequence order, expired ones
/// included.
pub(super) async fn scan(
    conn: &mut SqliteConnection,
    after_seq: i64,
    limit: usize,
) -> Result<Vec<Memory>> {
    let mut qb = select_from_memories();
    qb.push("m.seq > ")
        .push_bind(after_seq)
        .push(" ORDER BY m.seq LIMIT ")
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(rows::memory::<SqliteConnection>).collect()
}
