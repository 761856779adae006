//! Idempotency keys (AIP-155): what a write with a `request_id` returned, so
//! that a retry gets the same answer and nothing is written twice.

use sqlx::SqliteConnection;

use super::db_error;
use crate::domain::{Micros, RequestKey};
use crate::error::{Error, Result};

/// What the first write with this request id returned (as JSON), if there
/// was one. A request id reused for a different request is refused.
///
/// Servers before fingerprints had a scheme stored an unversioned digest of
/// their own types, which cannot be recomputed; such an id (kept at most
/// `--request-id-ttl`) counts as the same request, so retries across the
/// upgrade get their first answer rather than an error.
pub(super) async fn replay(
    conn: &mut SqliteConnection,
    namespace: &str,
    request: &RequestKey,
) -> Result<Option<String>> {
    let RequestKey {
        id: request_id,
        fingerprint,
    } = request;
    let first: Option<(String, String)> = sqlx::query_as(
        "SELECT fingerprint, results FROM create_requests WHERE namespace = ? AND request_id = ?",
    )
    .bind(namespace)
    .bind(request_id)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db_error)?;
    match first {
        None => Ok(None),
        Some((first, results)) if first == *fingerprint || !first.contains(':') => {
            Ok(Some(results))
        }
        Some(_) => Err(Error::AlreadyExists(format!(
            "request_id {request_id} was already used for a different request; use a new request_id"
        ))),
    }
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
