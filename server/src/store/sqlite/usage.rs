//! What the database holds, for operators: its size, and memories per
//! namespace.

use sqlx::SqliteConnection;

use super::db_error;
use crate::error::Result;
use crate::store::NamespaceSizes;

/// The database file's size in bytes (its pages, free ones included; the
/// write-ahead log aside).
pub(super) async fn database_bytes(conn: &mut SqliteConnection) -> Result<i64> {
    sqlx::query_scalar("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)
}

/// Memories per namespace: the `limit` largest, and the totals. Both walk an
/// index that leads with the namespace (no memory row is read).
pub(super) async fn namespace_sizes(
    conn: &mut SqliteConnection,
    limit: usize,
) -> Result<NamespaceSizes> {
    let largest: Vec<(String, i64)> = sqlx::query_as(
        "SELECT namespace, count(*) AS memories FROM memories \
         GROUP BY namespace ORDER BY memories DESC, namespace LIMIT ?",
    )
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
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
