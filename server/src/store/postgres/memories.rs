//! SQL for memories on PostgreSQL: visibility, filters, keyset paging,
//! identities, writes, history, and reading the change feed.

use std::collections::HashMap;

use sqlx::{PgConnection, Postgres, QueryBuilder, Row as _};

use super::rows::{self, FROM_MEMORIES, MEMORY_COLUMNS};
use super::{db_error, vectors};
use crate::domain::{
    Actor, ListQuery, Memory, MemoryChange, MemoryFilter, MemoryOrder, Micros, Neighbours,
    Revision, Scope, TimeRange,
};
use crate::error::{Error, Result};
use crate::store::budget;
use crate::store::sql::{self, Sql};
use crate::store::tx::{Identity, MemoryInsert};

/// `memory_changes.kind` of a deletion.
const DELETED: i32 = 4;
/// `memory_changes.kind` of a stored vector.
const VECTOR_STORED: i32 = 5;

/// What a statement that reads memories a unit of work may rewrite ends
/// with: the rows are locked until the transaction ends, and a row another
/// transaction is writing is read as that one commits it (READ COMMITTED
/// reads the newest version of a row it waited for). So two replicas
/// reinforcing, updating or deleting one memory take turns, and the second
/// decides on what the first wrote (no lost sighting, a stale etag seen as
/// stale).
const LOCK_FOR_WRITE: &str = " FOR UPDATE OF m";

fn select_from_memories() -> QueryBuilder<Postgres> {
    QueryBuilder::new(format!(
        "SELECT {MEMORY_COLUMNS} FROM {FROM_MEMORIES} WHERE "
    ))
}

/// Appends the visibility rule of DESIGN §3 for `scope`, and hides expired rows.
pub(super) fn push_visible(qb: &mut QueryBuilder<Postgres>, scope: &Scope, now: Micros) {
    let mut sql = Sql::<PgConnection>::wrap(std::mem::take(qb));
    sql::memories::push_visible(&mut sql, scope, now);
    *qb = sql.into_query();
}

fn push_filter(qb: &mut QueryBuilder<Postgres>, filter: &MemoryFilter) {
    push_in(
        qb,
        "m.memory_type",
        filter.memory_types.iter().map(|t| t.code()),
    );
    push_in(qb, "m.level", filter.levels.iter().map(|l| l.code()));
    for tag in &filter.tags {
        qb.push(" AND m.tags @> jsonb_build_array(")
            .push_bind(tag.clone())
            .push("::text)");
    }
    if filter.min_importance > 0.0 {
        qb.push(" AND m.importance >= ")
            .push_bind(filter.min_importance);
    }
    push_range(qb, "m.create_time", filter.created);
    push_range(qb, "m.occurred_at", filter.occurred);
    for (key, value) in &filter.metadata {
        qb.push(" AND m.metadata @> jsonb_build_object(")
            .push_bind(key.clone())
            .push("::text, ")
            .push_bind(value.clone())
            .push("::text)");
    }
}

/// Appends the conditions that `column` is in `range`.
fn push_range(qb: &mut QueryBuilder<Postgres>, column: &str, range: TimeRange) {
    if let Some(after) = range.after {
        qb.push(format!(" AND {column} >= ")).push_bind(after);
    }
    if let Some(before) = range.before {
        qb.push(format!(" AND {column} < ")).push_bind(before);
    }
}

/// Appends `column IN (codes)`, the server's own enum numbers written as
/// literals so that the planner sees them (a single one can use the
/// partial index of preferences).
fn push_in(qb: &mut QueryBuilder<Postgres>, column: &str, codes: impl Iterator<Item = i32>) {
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

/// The memory `id` if it is visible from `scope`; locked for the rest of
/// the transaction when `for_write`.
pub(super) async fn get(
    conn: &mut PgConnection,
    scope: &Scope,
    id: &str,
    now: Micros,
    for_write: bool,
) -> Result<Option<Memory>> {
    let mut qb = select_from_memories();
    push_visible(&mut qb, scope, now);
    qb.push(" AND m.id = ").push_bind(id.to_owned());
    if for_write {
        qb.push(LOCK_FOR_WRITE);
    }
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.as_ref().map(rows::memory).transpose()
}

/// The memory `id` unless it has expired, whatever its scope.
pub(super) async fn get_unexpired(
    conn: &mut PgConnection,
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
    row.as_ref().map(rows::memory).transpose()
}

/// The memories of these identities, expired ones included, with their
/// content hashes: one statement whatever their number (the identities go
/// as arrays, so it is prepared once), each an indexed lookup. Locked when
/// `for_write`: a unit of work reads them to reinforce one, or to check
/// that an update makes no twin.
pub(super) async fn identical(
    conn: &mut PgConnection,
    identities: &[Identity],
    for_write: bool,
) -> Result<Vec<(Memory, String)>> {
    if identities.is_empty() {
        return Ok(Vec::new());
    }
    let column = |f: fn(&Identity) -> String| identities.iter().map(f).collect::<Vec<_>>();
    let code = |f: fn(&Identity) -> i32| identities.iter().map(f).collect::<Vec<_>>();
    let lock = if for_write { LOCK_FOR_WRITE } else { "" };
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {MEMORY_COLUMNS} FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], \
         $5::text[], $6::text[], $7::int[], $8::text[]) \
         AS v(namespace, level, agent_id, user_id, project_id, session_id, memory_type, content_hash) \
         JOIN memories m ON m.namespace = v.namespace AND m.level = v.level \
         AND m.agent_id = v.agent_id AND m.user_id = v.user_id AND m.project_id = v.project_id \
         AND m.session_id = v.session_id AND m.memory_type = v.memory_type \
         AND m.content_hash = v.content_hash \
         LEFT JOIN memory_access a ON a.memory_seq = m.seq ORDER BY m.seq{lock}"
    )))
    .bind(column(|i| i.scope.namespace.clone()))
    .bind(code(|i| i.level.code()))
    .bind(column(|i| i.scope.agent_id.clone()))
    .bind(column(|i| i.scope.user_id.clone()))
    .bind(column(|i| i.scope.project_id.clone()))
    .bind(column(|i| i.scope.session_id.clone()))
    .bind(code(|i| i.memory_type.code()))
    .bind(column(|i| i.content_hash.clone()))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let hash: String = row.try_get("content_hash").map_err(db_error)?;
            Ok((rows::memory(row)?, hash))
        })
        .collect()
}

/// Inserts memories none of whose identities is stored (one statement, the
/// rows as arrays); returns them as stored, in the order given. Another
/// transaction's insert of one of these identities makes it fail with a
/// unique violation, and the unit of work runs again and finds it.
pub(super) async fn insert(
    conn: &mut PgConnection,
    inserts: &[MemoryInsert],
    now: Micros,
) -> Result<Vec<Memory>> {
    if inserts.is_empty() {
        return Ok(Vec::new());
    }
    let text = |f: fn(&MemoryInsert) -> &str| {
        inserts
            .iter()
            .map(|i| f(i).to_owned())
            .collect::<Vec<String>>()
    };
    let code = |f: fn(&MemoryInsert) -> i32| inserts.iter().map(f).collect::<Vec<i32>>();
    let float = |f: fn(&MemoryInsert) -> f64| inserts.iter().map(f).collect::<Vec<f64>>();
    let tags: Vec<String> = inserts.iter().map(|i| json(&i.new.tags)).collect();
    let metadata: Vec<String> = inserts.iter().map(|i| json(&i.new.metadata)).collect();
    let expire: Vec<Option<i64>> = inserts.iter().map(|i| i.new.expire_time).collect();
    let occurred: Vec<i64> = inserts
        .iter()
        .map(|i| i.new.occurred_at.unwrap_or(now))
        .collect();
    let rows = sqlx::query(
        "INSERT INTO memories (id, namespace, agent_id, user_id, project_id, session_id, level, \
         memory_type, content, content_hash, summary, tags, metadata, importance, confidence, source, \
         create_time, update_time, expire_time, occurred_at, origin_session_id, actor_key, actor_agent) \
         SELECT id, namespace, agent_id, user_id, project_id, session_id, level, memory_type, content, \
         content_hash, summary, tags::jsonb, metadata::jsonb, importance, confidence, source, $21, $21, \
         expire_time, occurred_at, origin_session_id, actor_key, actor_agent \
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
         $7::int[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], \
         $14::float8[], $15::float8[], $16::int[], $17::bigint[], $18::bigint[], $19::text[], \
         $20::text[], $22::text[]) \
         AS v(id, namespace, agent_id, user_id, project_id, session_id, level, memory_type, content, \
         content_hash, summary, tags, metadata, importance, confidence, source, expire_time, \
         occurred_at, origin_session_id, actor_key, actor_agent) \
         RETURNING seq, id",
    )
    .bind(text(|i| &i.id))
    .bind(text(|i| &i.new.scope.namespace))
    .bind(text(|i| &i.new.scope.agent_id))
    .bind(text(|i| &i.new.scope.user_id))
    .bind(text(|i| &i.new.scope.project_id))
    .bind(text(|i| &i.new.scope.session_id))
    .bind(code(|i| i.new.level.code()))
    .bind(code(|i| i.new.memory_type.code()))
    .bind(text(|i| &i.new.content))
    .bind(text(|i| &i.content_hash))
    .bind(text(|i| &i.new.summary))
    .bind(tags)
    .bind(metadata)
    .bind(float(|i| i.new.importance))
    .bind(float(|i| i.new.confidence))
    .bind(code(|i| i.new.source.code()))
    .bind(expire)
    .bind(occurred)
    .bind(text(|i| &i.new.origin_session_id))
    .bind(text(|i| &i.new.actor.key_id))
    .bind(now)
    .bind(text(|i| &i.new.actor.agent_id))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    // RETURNING gives no order: match the rows to the inserts by id.
    let mut seqs = HashMap::with_capacity(rows.len());
    for row in &rows {
        let id: String = row.try_get("id").map_err(db_error)?;
        seqs.insert(id, row.try_get::<i64, _>("seq").map_err(db_error)?);
    }
    inserts
        .iter()
        .map(|insert| {
            let seq = seqs
                .get(&insert.id)
                .copied()
                .ok_or_else(|| Error::Internal("an inserted memory returned no row".into()))?;
            Ok(inserted(insert, seq, now))
        })
        .collect()
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
    conn: &mut PgConnection,
    memory: &Memory,
    actor: &Actor,
) -> Result<()> {
    sqlx::query(
        "UPDATE memories SET seen_count = $1, importance = $2, update_time = $3, occurred_at = $4, \
         expire_time = $5, version = $6, actor_key = $7, actor_agent = $8 WHERE seq = $9",
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

/// Writes an updated memory as given; a twin of its new identity is
/// `AlreadyExists`.
pub(super) async fn rewrite(
    conn: &mut PgConnection,
    memory: &Memory,
    hash: &str,
    actor: &Actor,
) -> Result<()> {
    let updated = sqlx::query(
        "UPDATE memories SET memory_type = $1, content = $2, content_hash = $3, summary = $4, \
         tags = $5::jsonb, metadata = $6::jsonb, importance = $7, confidence = $8, expire_time = $9, \
         occurred_at = $10, update_time = $11, version = $12, actor_key = $13, actor_agent = $14 \
         WHERE seq = $15",
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
        // The engine looked for twins under row locks; one committed since
        // by another replica's insert is a twin all the same.
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(Error::AlreadyExists(
            "an identical memory already exists in this scope".into(),
        )),
        Err(err) => Err(db_error(err)),
    }
}

/// Names `actor` as the memory's last writer.
pub(super) async fn stamp_actor(conn: &mut PgConnection, seq: i64, actor: &Actor) -> Result<()> {
    sqlx::query("UPDATE memories SET actor_key = $1, actor_agent = $2 WHERE seq = $3")
        .bind(&actor.key_id)
        .bind(&actor.agent_id)
        .bind(seq)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// The history of memory `id` in `namespace`, oldest first.
pub(super) async fn revisions(
    conn: &mut PgConnection,
    namespace: &str,
    id: &str,
    limit: usize,
    after_seq: Option<i64>,
) -> Result<Vec<Revision>> {
    let rows = sqlx::query(
        "SELECT * FROM memory_revisions WHERE namespace = $1 AND memory_id = $2 AND seq > $3 \
         ORDER BY seq LIMIT $4",
    )
    .bind(namespace)
    .bind(id)
    .bind(after_seq.unwrap_or(0))
    .bind(limit_of(limit))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows::all(&rows, rows::revision)
}

/// A LIMIT as the database takes it.
pub(super) fn limit_of(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// Removes the memories `seqs`; their deletion triggers record each as a
/// change of the feed and a revision.
pub(super) async fn remove(conn: &mut PgConnection, seqs: &[i64]) -> Result<()> {
    if seqs.is_empty() {
        return Ok(());
    }
    sqlx::query("DELETE FROM memories WHERE seq = ANY($1)")
        .bind(seqs)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// Removes up to `limit` memories that expired at or before `now`, soonest
/// expired first; returns how many. Rows another replica's purge (or a
/// write) holds are left to it rather than waited for.
pub(super) async fn purge_expired(
    conn: &mut PgConnection,
    now: Micros,
    limit: usize,
) -> Result<usize> {
    let purged = sqlx::query(
        "DELETE FROM memories WHERE seq IN (SELECT seq FROM memories WHERE expire_time IS NOT NULL \
         AND expire_time <= $1 ORDER BY expire_time LIMIT $2 FOR UPDATE SKIP LOCKED)",
    )
    .bind(now)
    .bind(limit_of(limit))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(usize::try_from(purged.rows_affected()).unwrap_or(usize::MAX))
}

/// One page (plus one row, to tell whether another page follows).
pub(super) async fn list(
    conn: &mut PgConnection,
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
    qb.push(" LIMIT ").push_bind(limit_of(query.page_size + 1));
    let rows = budget::rows_of(qb.build().fetch(&mut *conn), db_error);
    budget::memories_within(rows, query.max_bytes, rows::memory).await
}

/// The memories with these sequence numbers that are visible from `scope`
/// and match `filter`.
pub(super) async fn by_seq(
    conn: &mut PgConnection,
    scope: &Scope,
    filter: &MemoryFilter,
    seqs: &[i64],
    now: Micros,
) -> Result<Vec<Memory>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let mut qb = select_from_memories();
    qb.push("m.seq = ANY(")
        .push_bind(seqs.to_vec())
        .push(") AND ");
    push_visible(&mut qb, scope, now);
    push_filter(&mut qb, filter);
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows::all(&rows, rows::memory)
}

/// The memories with these sequence numbers, whoever may see them.
async fn all_by_seq(conn: &mut PgConnection, seqs: &[i64]) -> Result<Vec<Memory>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {MEMORY_COLUMNS} FROM {FROM_MEMORIES} WHERE m.seq = ANY($1)"
    )))
    .bind(seqs)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows::all(&rows, rows::memory)
}

/// The conversation neighbours of the memories `seqs` of `namespace`.
pub(super) async fn conversation_neighbours(
    conn: &mut PgConnection,
    namespace: &str,
    seqs: &[i64],
) -> Result<Vec<Neighbours>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    // The literal `<> ''` matches the partial index's predicate.
    let rows = sqlx::query(
        "SELECT m.seq, \
           (SELECT p.seq FROM memories p WHERE p.namespace = m.namespace \
              AND p.origin_session_id = m.origin_session_id AND p.origin_session_id <> '' \
              AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1) AS before_seq, \
           (SELECT n.seq FROM memories n WHERE n.namespace = m.namespace \
              AND n.origin_session_id = m.origin_session_id AND n.origin_session_id <> '' \
              AND n.seq > m.seq ORDER BY n.seq LIMIT 1) AS after_seq \
         FROM memories m WHERE m.origin_session_id <> '' AND m.namespace = $1 AND m.seq = ANY($2)",
    )
    .bind(namespace)
    .bind(seqs)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            Ok(Neighbours {
                seq: row.try_get("seq").map_err(db_error)?,
                before: row.try_get("before_seq").map_err(db_error)?,
                after: row.try_get("after_seq").map_err(db_error)?,
            })
        })
        .collect()
}

/// Up to `limit` changes after `after`, each with the memory as the
/// database holds it now (the same or a later state than the change left,
/// which a follower converges on) and, for a stored vector, the vector.
pub(super) async fn changes_after(
    conn: &mut PgConnection,
    after: i64,
    limit: usize,
) -> Result<Vec<MemoryChange>> {
    let changes: Vec<(i64, i64, i32)> = sqlx::query_as(
        "SELECT seq, memory_seq, kind FROM memory_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
    )
    .bind(after)
    .bind(limit_of(limit))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    let wanted: Vec<i64> = changes
        .iter()
        .filter(|(.., kind)| *kind != DELETED)
        .map(|&(_, memory_seq, _)| memory_seq)
        .collect();
    let now: HashMap<i64, Memory> = if wanted.is_empty() {
        HashMap::new()
    } else {
        all_by_seq(conn, &wanted)
            .await?
            .into_iter()
            .map(|m| (m.seq, m))
            .collect()
    };
    let stored: Vec<i64> = changes
        .iter()
        .filter(|(.., kind)| *kind == VECTOR_STORED)
        .map(|&(_, memory_seq, _)| memory_seq)
        .collect();
    let vectors = if stored.is_empty() {
        HashMap::new()
    } else {
        vectors::current(conn, &stored).await?
    };
    Ok(changes
        .into_iter()
        .map(|(seq, memory_seq, kind)| MemoryChange {
            seq,
            memory_seq,
            memory: if kind == DELETED {
                None
            } else {
                now.get(&memory_seq).cloned()
            },
            vector: if kind == VECTOR_STORED {
                vectors.get(&memory_seq).cloned()
            } else {
                None
            },
        })
        .collect())
}

/// Up to `limit` memories after `after_seq`, in sequence order, expired ones
/// included.
pub(super) async fn scan(
    conn: &mut PgConnection,
    after_seq: i64,
    limit: usize,
) -> Result<Vec<Memory>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {MEMORY_COLUMNS} FROM {FROM_MEMORIES} WHERE m.seq > $1 ORDER BY m.seq LIMIT $2"
    )))
    .bind(after_seq)
    .bind(limit_of(limit))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows::all(&rows, rows::memory)
}
