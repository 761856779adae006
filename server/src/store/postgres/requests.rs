//! Idempotency keys (AIP-155) on PostgreSQL: what a write with a
//! `request_id` returned. Two replicas running the same request id at once
//! both try to record it; the second's insert fails with a unique violation,
//! its unit of work runs again and replays the first's answer.

use sqlx::PgConnection;

use super::db_error;
use super::memories::limit_of;
use crate::domain::{Micros, RequestKey};
use crate::error::Result;
use crate::store::tx::RequestRecord;

/// The record of request id `id` in `namespace`, if a write with it ran.
pub(super) async fn record(
    conn: &mut PgConnection,
    namespace: &str,
    id: &str,
) -> Result<Option<RequestRecord>> {
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT fingerprint, results FROM create_requests WHERE namespace = $1 AND request_id = $2",
    )
    .bind(namespace)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(row.map(|(fingerprint, answer)| RequestRecord {
        fingerprint,
        answer,
    }))
}

/// Remembers what a write with this request id returned.
pub(super) async fn remember(
    conn: &mut PgConnection,
    namespace: &str,
    request: &RequestKey,
    results: &str,
    now: Micros,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO create_requests (namespace, request_id, fingerprint, results, create_time) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(namespace)
    .bind(&request.id)
    .bind(&request.fingerprint)
    .bind(results)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Forgets up to `limit` request ids recorded before `before`, oldest first;
/// returns how many.
pub(super) async fn purge(conn: &mut PgConnection, before: Micros, limit: usize) -> Result<usize> {
    let done = sqlx::query(
        "DELETE FROM create_requests WHERE (namespace, request_id) IN \
         (SELECT namespace, request_id FROM create_requests WHERE create_time < $1 \
          ORDER BY create_time LIMIT $2 FOR UPDATE SKIP LOCKED)",
    )
    .bind(before)
    .bind(limit_of(limit))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(usize::try_from(done.rows_affected()).unwrap_or(usize::MAX))
}
