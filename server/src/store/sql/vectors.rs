//! SQL for memory vectors: what needs embedding, storing vectors of a
//! content that is still current, and reading them for the vector index.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Columns, Dialect, Sql, count, rows};
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

/// Appends `(?, ?, …)` binding `seqs` (not empty).
pub(super) fn push_list<D: Dialect>(sql: &mut Sql<D>, seqs: &[i64]) {
    sql.push("(")
        .values(|v| {
            for &seq in seqs {
                v.bind(seq);
            }
        })
        .push(")");
}

/// The vectors of these memories that are of their current content.
pub async fn current<D: Dialect>(conn: &mut D, seqs: &[i64]) -> Result<HashMap<i64, Embedding>> {
    if seqs.is_empty() {
        return Ok(HashMap::new());
    }
    let mut sql = Sql::new(format!(
        "SELECT v.memory_seq, v.model, v.vector FROM {CURRENT} WHERE v.memory_seq IN "
    ));
    push_list(&mut sql, seqs);
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| {
            let c = Columns::<D>::of(row);
            let vector: Vec<u8> = c.get("vector")?;
            let embedding = Embedding {
                model: c.get("model")?,
                values: decode(&vector)?,
            };
            Ok((c.get("memory_seq")?, embedding))
        })
        .collect()
}

/// Whether `m` has no vector of `model` for its current content.
fn push_unembedded<D: Dialect>(sql: &mut Sql<D>, model: &str) {
    sql.push(
        "NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq \
         AND v.content_hash = m.content_hash AND v.model = ",
    )
    .bind(model)
    .push(")");
}

/// Up to `limit` memories without a vector of `model`, in sequence order:
/// those above `after_seq`, or, with `among`, only those of these sequence
/// numbers. Expired memories are left out (they are never found again).
pub async fn unembedded<D: Dialect>(
    conn: &mut D,
    model: &str,
    after_seq: i64,
    among: Option<&[i64]>,
    limit: usize,
    now: Micros,
) -> Result<Vec<Unembedded>> {
    let mut sql = Sql::new(
        "SELECT m.seq, m.namespace, m.content, m.content_hash FROM memories m WHERE m.seq > ",
    );
    sql.bind(after_seq);
    if let Some(seqs) = among {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        sql.push(" AND m.seq IN ");
        push_list(&mut sql, seqs);
    }
    sql.push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .bind(now)
        .push(") AND ");
    push_unembedded(&mut sql, model);
    sql.push(" ORDER BY m.seq LIMIT ").bind(count(limit));
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| {
            let c = Columns::<D>::of(row);
            Ok(Unembedded {
                seq: c.get("seq")?,
                namespace: c.get("namespace")?,
                content: c.get("content")?,
                content_hash: c.get("content_hash")?,
            })
        })
        .collect()
}

/// Stores the vectors of `model` for memories whose content still has the
/// hash that was embedded (a memory changed or deleted meanwhile is left
/// for the next round); returns how many were stored. In memory order, so
/// that two replicas storing the same vectors lock their rows in the same
/// order (no deadlock).
pub async fn store<D: Dialect>(
    conn: &mut D,
    model: &str,
    vectors: &[(Unembedded, Vec<f32>)],
) -> Result<usize> {
    let mut ordered: Vec<&(Unembedded, Vec<f32>)> = vectors.iter().collect();
    ordered.sort_by_key(|(memory, _)| memory.seq);
    let mut stored = 0;
    for (memory, values) in ordered {
        let vector = encode(values);
        let mut sql = Sql::new(
            "INSERT INTO memory_vectors (memory_seq, model, content_hash, vector) SELECT seq, ",
        );
        sql.bind(model)
            .push(", content_hash, ")
            .bind(vector.as_slice())
            .push(" FROM memories WHERE seq = ")
            .bind(memory.seq)
            .push(" AND content_hash = ")
            .bind(memory.content_hash.as_str())
            .push(
                " ON CONFLICT (memory_seq) DO UPDATE SET model = excluded.model, \
                 content_hash = excluded.content_hash, vector = excluded.vector",
            );
        let done = conn.execute(sql).await?;
        stored += usize::try_from(done).unwrap_or(0);
    }
    Ok(stored)
}

/// How many unexpired memories of `namespace` wait for a vector of `model`.
pub async fn pending<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    model: &str,
    now: Micros,
) -> Result<i64> {
    let mut sql = Sql::new("SELECT count(*) AS n FROM memories m WHERE m.namespace = ");
    sql.bind(namespace)
        .push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .bind(now)
        .push(") AND ");
    push_unembedded(&mut sql, model);
    match conn.fetch_optional(sql).await? {
        Some(row) => Columns::<D>::of(&row).get("n"),
        None => Ok(0),
    }
}

/// Up to `limit` memories above `after_seq` (in sequence order) with a
/// vector of `model` for their current content, with it: for loading the
/// vector index.
pub async fn scan<D: Dialect>(
    conn: &mut D,
    model: &str,
    after_seq: i64,
    limit: usize,
) -> Result<Vec<(Memory, Embedding)>> {
    // Written as a join: the vector comes along with its memory.
    let mut sql = Sql::new(format!(
        "SELECT {}, v.vector AS vector FROM {CURRENT} \
         LEFT JOIN memory_access a ON a.memory_seq = m.seq WHERE v.memory_seq > ",
        D::MEMORY_COLUMNS
    ));
    sql.bind(after_seq)
        .push(" AND v.model = ")
        .bind(model)
        .push(" ORDER BY v.memory_seq LIMIT ")
        .bind(count(limit));
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| {
            let memory = rows::memory::<D>(row)?;
            let vector: Vec<u8> = Columns::<D>::of(row).get("vector")?;
            Ok((
                memory,
                Embedding {
                    model: model.to_owned(),
                    values: decode(&vector)?,
                },
            ))
        })
        .collect()
}

/// Up to `limit` changes after `after`: (change, memory) sequence numbers.
pub async fn changed<D: Dialect>(
    conn: &mut D,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    let mut sql = Sql::new("SELECT seq, memory_seq FROM memory_changes WHERE seq > ");
    sql.bind(after)
        .push(" ORDER BY seq LIMIT ")
        .bind(count(limit));
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| {
            let c = Columns::<D>::of(row);
            Ok((c.get("seq")?, c.get("memory_seq")?))
        })
        .collect()
}
