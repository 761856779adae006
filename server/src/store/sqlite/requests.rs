//! Idempotency keys (AIP-155): what a write with a `request_id` returned, so
//! that a retry gets the same answer and nothing is written twice.

use sqlx::SqliteConnection;

use super::db_error;
use crate::domain::{Micros, RequestKey};
use crate::error::Result;
use crate::store::tx::RequestRecord;

/// The record of request id `id` in `namespace`, if a write with it ran.
pub(super) async fn record(
    conn: &mut SqliteConnection,
    namespace: &str,
    id: &str,
) -> Result<Option<RequestRecord>> {
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT fingerprint, results FROM create_requests WHERE namespace = ? AND request_id = ?",
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
    conn: &mut SqliteConnection,
    namespace: &str,
    request: &RequestKey,
    results: &str,
    now: Micros,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO create_requests (namespace, request_id, fingerprint, results, create_time) \
         VALUES (?, ?, ?, ?, ?)",
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
pub(super) async fn purge(
    conn: &mut SqliteConnection,
    before: Micros,
    limit: usize,
) -> Result<usize> {
    let done = sqlx::query(
        "DELETE FROM create_requests WHERE (namespace, request_id) IN \
         (SELECT namespace, request_id FROM create_requests WHERE create_time < ? \
          ORDER BY create_time LIMIT ?)",
    )
    .bind(before)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(usize::try_from(done.rows_affected()).unwrap_or(usize::MAX))
}
