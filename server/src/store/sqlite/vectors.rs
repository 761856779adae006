//! SQL for memory vectors: what needs embedding, storing vectors of a
//! content that is still current, and reading them for the vector index.

use std::collections::HashMap;
use std::sync::Arc;

use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use super::memories::{self, memory_from_row};
use crate::domain::{Embedding, Memory, Micros, Unembedded};
use crate::error::{Error, Result};

/// A vector as a blob: little-endian f32s.
fn encode(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(blob: &[u8]) -> Result<Arc<[f32]>> {
    if !blob.len().is_multiple_of(4) {
        return Err(Error::Internal(format!(
            "a stored vector of {} bytes",
            blob.len()
        )));
    }
    Ok(blob
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Joins a memory's vector if it is of its current content.
const CURRENT: &str = "memory_vectors v JOIN memories m \
     ON m.seq = v.memory_seq AND m.content_hash = v.content_hash";

/// The vectors of these memories that are of their current content.
pub(super) async fn current(
    conn: &mut SqliteConnection,
    seqs: &[i64],
) -> Result<HashMap<i64, Embedding>> {
    let mut qb = QueryBuilder::<Sqlite>::new(format!(
        "SELECT v.memory_seq, v.model, v.vector FROM {CURRENT} WHERE v.memory_seq IN "
    ));
    memories::push_list(&mut qb, seqs);
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
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
fn push_unembedded(qb: &mut QueryBuilder<Sqlite>, model: &str) {
    qb.push(
        "NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq \
         AND v.content_hash = m.content_hash AND v.model = ",
    )
    .push_bind(model.to_owned())
    .push(")");
}

/// Up to `limit` memories without a vector of `model`, in sequence order:
/// those above `after_seq`, or, with `among`, only those of these sequence
/// numbers. Expired memories are left out (they are never found again).
pub(super) async fn unembedded(
    conn: &mut SqliteConnection,
    model: &str,
    after_seq: i64,
    among: Option<&[i64]>,
    limit: usize,
    now: Micros,
) -> Result<Vec<Unembedded>> {
    let mut qb = QueryBuilder::<Sqlite>::new(
        "SELECT m.seq, m.namespace, m.content, m.content_hash FROM memories m WHERE m.seq > ",
    );
    qb.push_bind(after_seq);
    if let Some(seqs) = among {
        qb.push(" AND m.seq IN ");
        memories::push_list(&mut qb, seqs);
    }
    qb.push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .push_bind(now)
        .push(") AND ");
    push_unembedded(&mut qb, model);
    qb.push(" ORDER BY m.seq LIMIT ")
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
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
/// hash that was embedded (a memory changed or deleted meanwhile is left
/// for the next round); returns how many were stored.
pub(super) async fn store(
    conn: &mut SqliteConnection,
    model: &str,
    vectors: &[(Unembedded, Vec<f32>)],
) -> Result<usize> {
    let mut stored = 0;
    for (memory, values) in vectors {
        let done = sqlx::query(
            "INSERT INTO memory_vectors (memory_seq, model, content_hash, vector) \
             SELECT seq, ?, content_hash, ? FROM memories WHERE seq = ? AND content_hash = ? \
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
    conn: &mut SqliteConnection,
    namespace: &str,
    model: &str,
    now: Micros,
) -> Result<i64> {
    let mut qb =
        QueryBuilder::<Sqlite>::new("SELECT count(*) FROM memories m WHERE m.namespace = ");
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

/// Up to `limit` memories above `after_seq` (in sequence order) with a
/// vector of `model` for their current content, with it: for loading the
/// vector index.
pub(super) async fn scan(
    conn: &mut SqliteConnection,
    model: &str,
    after_seq: i64,
    limit: usize,
) -> Result<Vec<(Memory, Embedding)>> {
    // Written as a join: the vector comes along with its memory.
    let mut qb = QueryBuilder::<Sqlite>::new(format!(
        "SELECT m.*, coalesce(a.access_count, 0) AS access_count, \
         a.last_access_time AS last_access_time, v.vector AS vector \
         FROM {CURRENT} LEFT JOIN memory_access a ON a.memory_seq = m.seq \
         WHERE v.memory_seq > "
    ));
    qb.push_bind(after_seq)
        .push(" AND v.model = ")
        .push_bind(model.to_owned())
        .push(" ORDER BY v.memory_seq LIMIT ")
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let memory = memory_from_row(row)?;
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
    conn: &mut SqliteConnection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    sqlx::query_as("SELECT seq, memory_seq FROM memory_changes WHERE seq > ? ORDER BY seq LIMIT ?")
        .bind(after)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}
