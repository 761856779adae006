//! Following one namespace's change feed (WatchMemories) on PostgreSQL:
//! the statement and rows both backends share ([`crate::store::feed_rows`])
//! in PostgreSQL's dialect, and how far the feed reaches.

use std::sync::LazyLock;

use sqlx::PgConnection;

use super::db_error;
use super::feed::read_head;
use super::memories::limit_of;
use super::rows::{self, MEMORY_COLUMNS};
use crate::domain::{FeedBounds, FeedEvent};
use crate::error::Result;
use crate::store::feed_rows::{self, Dialect};

static EVENTS: LazyLock<String> = LazyLock::new(|| {
    feed_rows::events_sql(&Dialect {
        memory_columns: MEMORY_COLUMNS,
        tomb_tags: "t.tags::text",
        params: ["$1", "$2", "$3"],
    })
});

/// How far the feed reaches. Nothing trims it today, so `oldest` is the
/// position before its first change.
pub(super) async fn bounds(conn: &mut PgConnection) -> Result<FeedBounds> {
    let newest = read_head(&mut *conn).await?;
    let first: Option<i64> = sqlx::query_scalar("SELECT min(seq) FROM memory_changes")
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(FeedBounds {
        // With no change left, none after the newest is missing either.
        oldest: first.map_or(newest, |first| first - 1),
        newest,
    })
}

/// Up to `limit` changes of `namespace`'s memories after `after`.
pub(super) async fn events(
    conn: &mut PgConnection,
    namespace: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<FeedEvent>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(EVENTS.as_str()))
        .bind(namespace)
        .bind(after)
        .bind(limit_of(limit))
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?;
    rows.iter()
        .map(|row| feed_rows::event(row, namespace, rows::memory, db_error))
        .collect()
}

static CHANGED_NAMESPACES: LazyLock<String> =
    LazyLock::new(|| feed_rows::changed_namespaces_sql(["$1", "$2"]));

/// The namespaces with a change shown to watchers in `(after, upto]`.
pub(super) async fn changed_namespaces(
    conn: &mut PgConnection,
    after: i64,
    upto: i64,
) -> Result<Vec<String>> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(CHANGED_NAMESPACES.as_str()))
        .bind(after)
        .bind(upto)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}
