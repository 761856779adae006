//! SQL for memory vectors on PostgreSQL: what needs embedding, storing
//! vectors of a content that is still current, and reading them for the
//! vector index.

use std::collections::HashMap;
use std::sync::Arc;

use sqlx::{PgConnection, Postgres, QueryBuilder, Row as _};

use super::db_error;
use super::memories::limit_of;
use super::rows::{self, MEMORY_COLUMNS};
use crate::domain::{Embedding, Memory, Micros, Unembedded};
use crate::error::{Error, Result};

/// A vector as bytes: little-endian f32s.
fn encode(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(bytes: &[u8]) -> Result<Arc<[f32]>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::Internal(format!(
            "a stored vector of {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Joins a memory's vector if it is of its current content.
const CURRENT: &str = "memory_vectors v JOIN memories m \
     ON m.seq = v.memory_seq AND m.content_hash = v.content_hash";

/// The vectors of these memories that are of their current content.
pub(super) async fn current(
    conn: &mut PgConnection,
    seqs: &[i64],
) -> Result<HashMap<i64, Embedding>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT v.memory_seq, v.model, v.vector FROM {CURRENT} WHERE v.memory_seq = ANY($1)"
    )))
    .bind(seqs)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let seq: i64 = row.try_get("memory_seq").map_err(db_error)?;
            let embedding = Embedding {
                model: row.try_get("model").map_err(db_error)?,
                values: decode(row.try_get("vector").map_err(db_error)?)?,
            };
            Ok((seq, embedding))
        })
        .collect()
}

/// Whether `m` has no vector of `model` for its current content.
fn push_unembedded(qb: &mut QueryBuilder<Postgres>, model: &str) {
    qb.push(
        "NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq \
         AND v.content_hash = m.content_hash AND v.model = ",
    )
    .push_bind(model.to_owned())
    .push(")");
}

/// Up to `limit` unexpired memories without a vector of `model`, in
/// sequence order: those above `after_seq`, or, with `among`, only those.
pub(super) async fn unembedded(
    conn: &mut PgConnection,
    model: &str,
    after_seq: i64,
    among: Option<&[i64]>,
    limit: usize,
    now: Micros,
) -> Result<Vec<Unembedded>> {
    let mut qb = QueryBuilder::<Postgres>::new(
        "SELECT m.seq, m.namespace, m.content, m.content_hash FROM memories m WHERE m.seq > ",
    );
    qb.push_bind(after_seq);
    if let Some(seqs) = among {
        qb.push(" AND m.seq = ANY(")
            .push_bind(seqs.to_vec())
            .push(")");
    }
    qb.push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .push_bind(now)
        .push(") AND ");
    push_unembedded(&mut qb, model);
    qb.push(" ORDER BY m.seq LIMIT ").push_bind(limit_of(limit));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter()
        .map(|row| {
            Ok(Unembedded {
                seq: row.try_get("seq").map_err(db_error)?,
                namespace: row.try_get("namespace").map_err(db_error)?,
                content: row.try_get("content").map_err(db_error)?,
                content_hash: row.try_get("content_hash").map_err(db_error)?,
            })
        })
        .collect()
}

/// Stores the vectors of `model` for memories whose content still has the
/// hash that was embedded; returns how many were stored.
pub(super) async fn store(
    conn: &mut PgConnection,
    model: &str,
    vectors: &[(Unembedded, Vec<f32>)],
) -> Result<usize> {
    let mut stored = 0;
    // In memory order, so that two replicas storing the same vectors lock
    // their rows in the same order (no deadlock).
    let mut ordered: Vec<&(Unembedded, Vec<f32>)> = vectors.iter().collect();
    ordered.sort_by_key(|(memory, _)| memory.seq);
    for (memory, values) in ordered {
        let done = sqlx::query(
            "INSERT INTO memory_vectors (memory_seq, model, content_hash, vector) \
             SELECT seq, $1, content_hash, $2 FROM memories WHERE seq = $3 AND content_hash = $4 \
             ON CONFLICT (memory_seq) DO UPDATE SET \
             model = excluded.model, content_hash = excluded.content_hash, vector = excluded.vector",
        )
        .bind(model)
        .bind(encode(values))
        .bind(memory.seq)
        .bind(&memory.content_hash)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
        stored += usize::try_from(done.rows_affected()).unwrap_or(0);
    }
    Ok(stored)
}

/// How many unexpired memories of `namespace` wait for a vector of `model`.
pub(super) async fn pending(
    conn: &mut PgConnection,
    namespace: &str,
    model: &str,
    now: Micros,
) -> Result<i64> {
    let mut qb =
        QueryBuilder::<Postgres>::new("SELECT count(*) FROM memories m WHERE m.namespace = ");
    qb.push_bind(namespace.to_owned())
        .push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .push_bind(now)
        .push(") AND ");
    push_unembedded(&mut qb, model);
    qb.build_query_scalar()
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)
}

/// Up to `limit` memories above `after_seq` with a vector of `model` for
/// their current content, with it: for loading the vector index.
pub(super) async fn scan(
    conn: &mut PgConnection,
    model: &str,
    after_seq: i64,
    limit: usize,
) -> Result<Vec<(Memory, Embedding)>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {MEMORY_COLUMNS}, v.vector AS vector FROM {CURRENT} \
         LEFT JOIN memory_access a ON a.memory_seq = m.seq \
         WHERE v.memory_seq > $1 AND v.model = $2 ORDER BY v.memory_seq LIMIT $3"
    )))
    .bind(after_seq)
    .bind(model)
    .bind(limit_of(limit))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let memory = rows::memory(row)?;
            let values = decode(row.try_get("vector").map_err(db_error)?)?;
            Ok((
                memory,
                Embedding {
                    model: model.to_owned(),
                    values,
                },
            ))
        })
        .collect()
}

/// Up to `limit` changes after `after`: (change, memory) sequence numbers.
pub(super) async fn changed(
    conn: &mut PgConnection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    sqlx::query_as(
        "SELECT seq, memory_seq FROM memory_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
    )
    .bind(after)
    .bind(limit_of(limit))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)
}
