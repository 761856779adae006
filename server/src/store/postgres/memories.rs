//! SQL for memories on PostgreSQL: visibility, filters, keyset paging,
//! identities, writes, history, and reading the change feed.

use std::collections::HashMap;

use sqlx::{PgConnection, Row as _};

use super::rows::{self, FROM_MEMORIES, MEMORY_COLUMNS};
use super::{db_error, vectors};
use crate::domain::{Memory, MemoryChange, Micros, Neighbours};
use crate::error::{Error, Result};
use crate::store::sql::{self, feed::DELETED};
use crate::store::tx::{Identity, MemoryInsert};

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
    let tags: Vec<String> = inserts
        .iter()
        .map(|i| sql::memories::json(&i.new.tags))
        .collect();
    let metadata: Vec<String> = inserts
        .iter()
        .map(|i| sql::memories::json(&i.new.metadata))
        .collect();
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

/// A LIMIT as the database takes it.
pub(super) fn limit_of(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
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
