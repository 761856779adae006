//! SQL for memories that both databases share: who sees a memory (DESIGN
//! §3), filters and pages, reading, changing and removing memories, their
//! history, conversation neighbours. (How many rows a statement creates or
//! looks up at once is each dialect's: see [`Dialect::insert_memories`].)

use std::collections::HashMap;

use super::rows::{self, FROM_MEMORIES};
use super::{Columns, Dialect, Sql, count};
use crate::domain::{
    Actor, ListQuery, Memory, MemoryFilter, MemoryLevel, MemoryOrder, Micros, Neighbours, Revision,
    Scope, TimeRange, Validity,
};
use crate::error::{Error, Result};
use crate::store::tx::MemoryInsert;

/// Appends the visibility rule of DESIGN §3 for `scope` (alias `m`),
/// without memories expired at `now`.
pub fn push_visible<D: Dialect>(sql: &mut Sql<D>, scope: &Scope, now: Micros) {
    push_in_scope(sql, scope);
    sql.push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .bind(now)
        .push(")");
}

/// Appends the visibility rule of DESIGN §3 for `scope` (alias `m`),
/// expired rows included.
pub fn push_in_scope<D: Dialect>(sql: &mut Sql<D>, scope: &Scope) {
    sql.push("m.namespace = ")
        .bind(scope.namespace.as_str())
        .push(" AND (m.level = ")
        .bind(MemoryLevel::Global.code())
        .push(" OR (m.level = ")
        .bind(MemoryLevel::Workspace.code())
        .push(" AND m.project_id = ")
        .bind(scope.project_id.as_str())
        .push(" AND m.project_id <> '') OR (m.level = ")
        .bind(MemoryLevel::Conversation.code())
        .push(" AND m.session_id = ")
        .bind(scope.session_id.as_str())
        .push(" AND m.session_id <> ''))");
    for (column, value) in [
        ("m.agent_id", &scope.agent_id),
        ("m.user_id", &scope.user_id),
    ] {
        if !value.is_empty() {
            sql.push(format_args!(" AND {column} IN ('', "))
                .bind(value.as_str())
                .push(")");
        }
    }
}

/// How many memories of each type `scope` sees at `now`, by type code.
pub async fn count_per_type<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    now: Micros,
) -> Result<(Vec<(i32, i64)>, i64)> {
    let mut sql = Sql::new(
        "SELECT m.memory_type, \
         CAST(CASE WHEN m.valid_to IS NULL OR m.valid_to > ",
    );
    sql.bind(now)
        .push(" THEN 1 ELSE 0 END AS BIGINT) AS current, count(*) AS n FROM memories m WHERE ");
    push_visible(&mut sql, scope, now);
    sql.push(" GROUP BY m.memory_type, current ORDER BY m.memory_type");
    let (mut per_type, mut invalidated) = (Vec::new(), 0);
    for row in conn.fetch_all(sql).await? {
        let c = Columns::<D>::of(&row);
        let (memory_type, current, n): (i32, i64, i64) =
            (c.get("memory_type")?, c.get("current")?, c.get("n")?);
        if current == 1 {
            per_type.push((memory_type, n));
        } else {
            invalidated += n;
        }
    }
    Ok((per_type, invalidated))
}

/// SELECT of memories with their access bookkeeping (alias `m`) `WHERE `,
/// conditions to follow.
fn select_from_memories<D: Dialect>() -> Sql<D> {
    Sql::new(format!(
        "SELECT {} FROM {FROM_MEMORIES} WHERE ",
        D::MEMORY_COLUMNS
    ))
}

/// Appends the conditions of `filter` (alias `m`), `now` being now.
pub fn push_filter<D: Dialect>(sql: &mut Sql<D>, filter: &MemoryFilter, now: Micros) {
    push_in(
        sql,
        "m.memory_type",
        filter.memory_types.iter().map(|t| t.code()),
    );
    push_in(sql, "m.level", filter.levels.iter().map(|l| l.code()));
    for tag in &filter.tags {
        sql.has_tag("m.tags", tag);
    }
    if filter.min_importance > 0.0 {
        sql.push(" AND m.importance >= ")
            .bind(filter.min_importance);
    }
    push_range(sql, "m.create_time", filter.created);
    push_range(sql, "m.occurred_at", filter.occurred);
    for (key, value) in &filter.metadata {
        sql.has_entry("m.metadata", key, value);
    }
    for entity in &filter.entities {
        sql.push(
            " AND EXISTS (SELECT 1 FROM memory_entities mx WHERE mx.memory_seq = m.seq \
             AND mx.entity_id = ",
        )
        .bind(entity.clone())
        .push(")");
    }
    match filter.validity {
        Validity::Current => {
            sql.push(" AND (m.valid_to IS NULL OR m.valid_to > ")
                .bind(now)
                .push(")");
        }
        Validity::At(at) => {
            sql.push(" AND m.valid_from <= ")
                .bind(at)
                .push(" AND (m.valid_to IS NULL OR m.valid_to > ")
                .bind(at)
                .push(")");
        }
        Validity::All => {}
    }
}

/// Appends the conditions that `column` is in `range`.
fn push_range<D: Dialect>(sql: &mut Sql<D>, column: &str, range: TimeRange) {
    if let Some(after) = range.after {
        sql.push(format_args!(" AND {column} >= ")).bind(after);
    }
    if let Some(before) = range.before {
        sql.push(format_args!(" AND {column} < ")).bind(before);
    }
}

/// Appends `column IN (codes)`. The codes are the server's own enum
/// numbers, written as literals so that the planner sees them: a single one
/// becomes `column = code`, which lets either database use a partial index
/// for that value (preferences have one).
fn push_in<D: Dialect>(sql: &mut Sql<D>, column: &str, codes: impl Iterator<Item = i32>) {
    let codes: Vec<String> = codes.map(|code| code.to_string()).collect();
    match codes.as_slice() {
        [] => {}
        [code] => {
            sql.push(format_args!(" AND {column} = {code}"));
        }
        many => {
            sql.push(format_args!(" AND {column} IN ({})", many.join(", ")));
        }
    }
}

/// A list or map as the JSON text a column holds.
pub fn json<T: serde::Serialize>(value: &T) -> String {
    // Serialising a Vec<String> or a map of strings cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

/// The memory `id` if it is visible from `scope`; locked for the rest of
/// the unit of work when `for_write`.
pub async fn get<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    id: &str,
    now: Micros,
    for_write: bool,
) -> Result<Option<Memory>> {
    let mut sql = select_from_memories::<D>();
    push_visible(&mut sql, scope, now);
    sql.push(" AND m.id = ").bind(id);
    if for_write {
        sql.push(D::LOCK_FOR_WRITE);
    }
    let row = conn.fetch_optional(sql).await?;
    row.as_ref().map(rows::memory::<D>).transpose()
}

/// The memory `id` unless it has expired, whatever its scope (the caller
/// has established that the scope may see it).
pub async fn get_unexpired<D: Dialect>(
    conn: &mut D,
    id: &str,
    now: Micros,
) -> Result<Option<Memory>> {
    let mut sql = select_from_memories::<D>();
    sql.push("m.id = ")
        .bind(id)
        .push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .bind(now)
        .push(")");
    let row = conn.fetch_optional(sql).await?;
    row.as_ref().map(rows::memory::<D>).transpose()
}

/// Appends what every write of a memory sets besides its own fields — its
/// validity, version and writer — and which row it is.
fn push_written<D: Dialect>(sql: &mut Sql<D>, memory: &Memory, actor: &Actor) {
    sql.push(", valid_from = ")
        .bind(memory.valid_from)
        .push(", valid_to = ")
        .bind(memory.valid_to)
        .push(", invalidated_by = ")
        .bind(memory.invalidated_by.as_str())
        .push(", invalidation_reason = ")
        .bind(memory.invalidation_reason.as_str())
        .push(", version = ")
        .bind(memory.version)
        .push(", actor_key = ")
        .bind(actor.key_id.as_str())
        .push(", actor_agent = ")
        .bind(actor.agent_id.as_str())
        .push(" WHERE seq = ")
        .bind(memory.seq);
}

/// Writes a reinforced memory's counters, times, expiry and validity as
/// given.
pub async fn reinforce<D: Dialect>(conn: &mut D, memory: &Memory, actor: &Actor) -> Result<()> {
    let mut sql = Sql::new("UPDATE memories SET seen_count = ");
    sql.bind(memory.seen_count)
        .push(", importance = ")
        .bind(memory.importance)
        .push(", update_time = ")
        .bind(memory.update_time)
        .push(", occurred_at = ")
        .bind(memory.occurred_at)
        .push(", expire_time = ")
        .bind(memory.expire_time);
    push_written(&mut sql, memory, actor);
    conn.execute(sql).await?;
    Ok(())
}

/// Writes an updated memory as given; a twin of its new identity is
/// `AlreadyExists` (on PostgreSQL, one another replica committed since the
/// engine looked for twins under row locks is a twin all the same).
pub async fn rewrite<D: Dialect>(
    conn: &mut D,
    memory: &Memory,
    hash: &str,
    actor: &Actor,
) -> Result<()> {
    let mut sql = Sql::new("UPDATE memories SET memory_type = ");
    sql.bind(memory.memory_type.code())
        .push(", content = ")
        .bind(memory.content.as_str())
        .push(", content_hash = ")
        .bind(hash)
        .push(", summary = ")
        .bind(memory.summary.as_str())
        .push(", tags = ")
        .bind(json(&memory.tags))
        .push(D::JSON_PARAM)
        .push(", metadata = ")
        .bind(json(&memory.metadata))
        .push(D::JSON_PARAM)
        .push(", importance = ")
        .bind(memory.importance)
        .push(", confidence = ")
        .bind(memory.confidence)
        .push(", expire_time = ")
        .bind(memory.expire_time)
        .push(", occurred_at = ")
        .bind(memory.occurred_at)
        .push(", update_time = ")
        .bind(memory.update_time);
    push_written(&mut sql, memory, actor);
    match conn.execute_unique(sql).await? {
        Some(_) => Ok(()),
        None => Err(Error::AlreadyExists(
            "an identical memory already exists in this scope".into(),
        )),
    }
}

/// Names `actor` as the memory's last writer.
pub async fn stamp_actor<D: Dialect>(conn: &mut D, seq: i64, actor: &Actor) -> Result<()> {
    let mut sql = Sql::new("UPDATE memories SET actor_key = ");
    sql.bind(actor.key_id.as_str())
        .push(", actor_agent = ")
        .bind(actor.agent_id.as_str())
        .push(" WHERE seq = ")
        .bind(seq);
    conn.execute(sql).await?;
    Ok(())
}

/// The history of memory `id` in `namespace`, oldest first: up to `limit`
/// revisions after `after_seq`.
pub async fn revisions<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    id: &str,
    limit: usize,
    after_seq: Option<i64>,
) -> Result<Vec<Revision>> {
    let mut sql = Sql::new("SELECT * FROM memory_revisions WHERE namespace = ");
    sql.bind(namespace)
        .push(" AND memory_id = ")
        .bind(id)
        .push(" AND seq > ")
        .bind(after_seq.unwrap_or(0))
        .push(" ORDER BY seq LIMIT ")
        .bind(count(limit));
    let found = conn.fetch_all(sql).await?;
    rows::all::<D, _>(&found, rows::revision::<D>)
}

/// Removes the memories `seqs`: the one way a memory leaves the database on
/// request (DeleteMemory) or by retention. Their deletion trigger records
/// each as a change of the feed (which the search indexes follow) and a
/// revision; whatever else a removal must leave behind belongs here too.
pub async fn remove<D: Dialect>(conn: &mut D, seqs: &[i64]) -> Result<()> {
    if seqs.is_empty() {
        return Ok(());
    }
    let mut sql = Sql::new("DELETE FROM memories WHERE ");
    sql.in_seqs("seq", seqs);
    conn.execute(sql).await?;
    Ok(())
}

/// Removes up to `limit` memories that expired at or before `now`, soonest
/// expired first; returns how many. An invalidated memory is never removed:
/// it answers for the time it was true. Rows another replica's purge (or a
/// write) holds are left to it rather than waited for.
pub async fn purge_expired<D: Dialect>(conn: &mut D, now: Micros, limit: usize) -> Result<usize> {
    let mut sql = Sql::new(
        "DELETE FROM memories WHERE seq IN (SELECT seq FROM memories \
         WHERE valid_to IS NULL AND expire_time IS NOT NULL AND expire_time <= ",
    );
    sql.bind(now)
        .push(" ORDER BY expire_time LIMIT ")
        .bind(count(limit))
        .push(D::SKIP_LOCKED)
        .push(")");
    let purged = conn.execute(sql).await?;
    Ok(usize::try_from(purged).unwrap_or(usize::MAX))
}

/// One page (plus one row, to tell whether another page follows), read
/// within the query's byte budget.
pub async fn list<D: Dialect>(conn: &mut D, query: &ListQuery, now: Micros) -> Result<Vec<Memory>> {
    let mut sql = select_from_memories::<D>();
    push_visible(&mut sql, &query.scope, now);
    push_filter(&mut sql, &query.filter, now);
    if let Some(after) = query.after {
        match query.order {
            MemoryOrder::CreateTimeDesc => sql
                .push(" AND (m.create_time, m.seq) < (")
                .bind(after.create_time)
                .push(", ")
                .bind(after.seq)
                .push(")"),
            MemoryOrder::CreateTimeAsc => sql
                .push(" AND (m.create_time, m.seq) > (")
                .bind(after.create_time)
                .push(", ")
                .bind(after.seq)
                .push(")"),
            MemoryOrder::ImportanceDesc => sql
                .push(" AND (m.importance, m.create_time, m.seq) < (")
                .bind(after.importance)
                .push(", ")
                .bind(after.create_time)
                .push(", ")
                .bind(after.seq)
                .push(")"),
        };
    }
    sql.push(match query.order {
        MemoryOrder::CreateTimeDesc => " ORDER BY m.create_time DESC, m.seq DESC",
        MemoryOrder::CreateTimeAsc => " ORDER BY m.create_time ASC, m.seq ASC",
        MemoryOrder::ImportanceDesc => {
            " ORDER BY m.importance DESC, m.create_time DESC, m.seq DESC"
        }
    });
    sql.push(" LIMIT ").bind(count(query.page_size + 1));
    conn.memories_within(sql, query.max_bytes).await
}

/// The memories with these sequence numbers that are visible from `scope`
/// and match `filter`.
pub async fn by_seq<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    filter: &MemoryFilter,
    seqs: &[i64],
    now: Micros,
) -> Result<Vec<Memory>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    visible_by_seq(conn, scope, filter, now, |sql| {
        sql.in_seqs("m.seq", seqs);
    })
    .await
}

/// The memories visible from `scope` that match `filter` among those
/// `seqs` pushes a condition on `m.seq` for, read by their sequence
/// numbers (not by an index of the filter's columns).
async fn visible_by_seq<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    filter: &MemoryFilter,
    now: Micros,
    seqs: impl FnOnce(&mut Sql<D>),
) -> Result<Vec<Memory>> {
    let mut sql = Sql::new(format!(
        "SELECT {} FROM {} WHERE ",
        D::MEMORY_COLUMNS,
        D::MEMORIES_BY_SEQ
    ));
    seqs(&mut sql);
    sql.push(" AND ");
    push_visible(&mut sql, scope, now);
    push_filter(&mut sql, filter, now);
    let found = conn.fetch_all(sql).await?;
    rows::all::<D, _>(&found, rows::memory::<D>)
}

/// The memories visible from `scope` that match `filter` among those the
/// first `limit` changes of its namespace after the change `after` are of
/// ([`crate::store::Store::memories_changed_after`]).
pub async fn changed_after<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    filter: &MemoryFilter,
    after: i64,
    limit: usize,
    now: Micros,
) -> Result<Vec<Memory>> {
    visible_by_seq(conn, scope, filter, now, |sql| {
        sql.push("m.seq IN (SELECT c.memory_seq FROM memory_changes c WHERE c.namespace = ")
            .bind(scope.namespace.as_str())
            .push(" AND c.seq > ")
            .bind(after)
            .push(format_args!(
                " AND c.kind <= {} ORDER BY c.seq LIMIT ",
                super::feed::DELETED
            ))
            .bind(count(limit))
            .push(")");
    })
    .await
}

/// Up to `limit` memories after `after_seq`, in sequence order, expired ones
/// included.
pub async fn scan<D: Dialect>(conn: &mut D, after_seq: i64, limit: usize) -> Result<Vec<Memory>> {
    let mut sql = select_from_memories::<D>();
    sql.push("m.seq > ")
        .bind(after_seq)
        .push(" ORDER BY m.seq LIMIT ")
        .bind(count(limit));
    let found = conn.fetch_all(sql).await?;
    rows::all::<D, _>(&found, rows::memory::<D>)
}

/// The memories with these sequence numbers, whoever may see them.
pub async fn all_by_seq<D: Dialect>(conn: &mut D, seqs: &[i64]) -> Result<Vec<Memory>> {
    let mut sql = Sql::new(format!(
        "SELECT {} FROM {} WHERE ",
        D::MEMORY_COLUMNS,
        D::MEMORIES_BY_SEQ
    ));
    sql.in_seqs("m.seq", seqs);
    let found = conn.fetch_all(sql).await?;
    rows::all::<D, _>(&found, rows::memory::<D>)
}

/// The conversation neighbours of the memories `seqs` of `namespace`: for
/// each one written in a session, the memory written just before and just
/// after it in that session (whoever may see them).
pub async fn conversation_neighbours<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    seqs: &[i64],
) -> Result<Vec<Neighbours>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    // The literal `<> ''` matches the partial index's predicate.
    let mut sql = Sql::new(
        "SELECT m.seq, \
           (SELECT p.seq FROM memories p WHERE p.namespace = m.namespace \
              AND p.origin_session_id = m.origin_session_id AND p.origin_session_id <> '' \
              AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1) AS before_seq, \
           (SELECT n.seq FROM memories n WHERE n.namespace = m.namespace \
              AND n.origin_session_id = m.origin_session_id AND n.origin_session_id <> '' \
              AND n.seq > m.seq ORDER BY n.seq LIMIT 1) AS after_seq, \
           m.content LIKE ",
    );
    sql.bind("%?%").push(format!(
        " AS asks FROM memories m{} WHERE m.origin_session_id <> '' AND m.namespace = ",
        D::NOT_INDEXED
    ));
    sql.bind(namespace).push(" AND ").in_seqs("m.seq", seqs);
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| {
            let c = Columns::<D>::of(row);
            Ok(Neighbours {
                seq: c.get("seq")?,
                before: c.get("before_seq")?,
                after: c.get("after_seq")?,
                asks: c.get("asks")?,
            })
        })
        .collect()
}

/// The memories an insert stored, in the order of `inserts`: what was
/// sent, and the defaults of a new row, numbered from the `(id, seq)` pairs
/// its RETURNING gave (in no particular order).
pub fn inserted(
    inserts: &[MemoryInsert],
    returned: Vec<(String, i64)>,
    now: Micros,
) -> Result<Vec<Memory>> {
    let seqs: HashMap<String, i64> = returned.into_iter().collect();
    inserts
        .iter()
        .map(|insert| {
            let seq = seqs
                .get(&insert.id)
                .copied()
                .ok_or_else(|| Error::Internal("an inserted memory returned no row".into()))?;
            let new = &insert.new;
            Ok(Memory {
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
                valid_from: new.occurred_at.unwrap_or(now),
                valid_to: None,
                invalidated_by: String::new(),
                invalidation_reason: String::new(),
                version: 1,
            })
        })
        .collect()
}
