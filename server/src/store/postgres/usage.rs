//! What the database holds, for operators: its size, and memories per
//! namespace.

use sqlx::PgConnection;

use super::db_error;
use super::memories::limit_of;
use crate::error::Result;
use crate::store::NamespaceSizes;

/// The database's size in bytes, as PostgreSQL counts it (tables, indexes,
/// TOAST; the write-ahead log aside).
pub(super) async fn database_bytes(conn: &mut PgConnection) -> Result<i64> {
    sqlx::query_scalar("SELECT pg_database_size(current_database())")
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)
}

/// Memories per namespace: the `limit` largest, and the totals.
pub(super) async fn namespace_sizes(
    conn: &mut PgConnection,
    limit: usize,
) -> Result<NamespaceSizes> {
    let largest: Vec<(String, i64)> = sqlx::query_as(
        "SELECT namespace, count(*) AS memories FROM memories \
         GROUP BY namespace ORDER BY memories DESC, namespace LIMIT $1",
    )
    .bind(limit_of(limit))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    let (memories, namespaces): (i64, i64) =
        sqlx::query_as("SELECT count(*), count(DISTINCT namespace) FROM memories")
            .fetch_one(&mut *conn)
            .await
            .map_err(db_error)?;
    Ok(NamespaceSizes {
        largest,
        memories,
        namespaces,
    })
}
