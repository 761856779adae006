//! Idempotency keys (AIP-155): what a write with a `request_id` returned, so
//! that a retry gets the same answer and nothing is written twice. On
//! PostgreSQL, two replicas running the same request id at once both try to
//! record it; the second's insert fails with a unique violation, its unit of
//! work runs again and replays the first's answer.

use super::{Columns, Dialect, Sql, count};
use crate::domain::{Micros, RequestKey};
use crate::error::Result;
use crate::store::tx::RequestRecord;

/// The record of request id `id` in `namespace`, if a write with it ran.
pub async fn record<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    id: &str,
) -> Result<Option<RequestRecord>> {
    let mut sql = Sql::new("SELECT fingerprint, results FROM create_requests WHERE namespace = ");
    sql.bind(namespace).push(" AND request_id = ").bind(id);
    let Some(row) = conn.fetch_optional(sql).await? else {
        return Ok(None);
    };
    let c = Columns::<D>::of(&row);
    Ok(Some(RequestRecord {
        fingerprint: c.get("fingerprint")?,
        answer: c.get("results")?,
    }))
}

/// Remembers what a write with this request id returned.
pub async fn remember<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    request: &RequestKey,
    results: &str,
    now: Micros,
) -> Result<()> {
    let mut sql = Sql::new(
        "INSERT INTO create_requests (namespace, request_id, fingerprint, results, create_time) \
         VALUES (",
    );
    sql.values(|v| {
        v.bind(namespace)
            .bind(request.id.as_str())
            .bind(request.fingerprint.as_str())
            .bind(results)
            .bind(now);
    })
    .push(")");
    conn.execute(sql).await?;
    Ok(())
}

/// Forgets up to `limit` request ids recorded before `before`, oldest first
/// (leaving those another replica's purge holds); returns how many.
pub async fn purge<D: Dialect>(conn: &mut D, before: Micros, limit: usize) -> Result<usize> {
    let mut sql = Sql::new(
        "DELETE FROM create_requests WHERE (namespace, request_id) IN \
         (SELECT namespace, request_id FROM create_requests WHERE create_time < ",
    );
    sql.bind(before)
        .push(" ORDER BY create_time LIMIT ")
        .bind(count(limit))
        .push(D::SKIP_LOCKED)
        .push(")");
    let deleted = conn.execute(sql).await?;
    Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
}
