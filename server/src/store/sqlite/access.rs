//! SQLite's write of a batch of access bookkeeping (see
//! [`crate::store::access`]): through the one writer, a statement per
//! thousand memories.

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::db_error;
use super::writer::Writer;
use crate::error::Result;
use crate::store::access::Access;

/// Memories updated per statement (three parameters each).
const ROWS_PER_STATEMENT: usize = 1_000;

/// Writes `batch` through `writer`, committed when this returns.
pub(super) async fn write_through(writer: &Writer, batch: Vec<(i64, Access)>) -> Result<()> {
    writer.write(move |conn| Box::pin(write(conn, batch))).await
}

async fn write(conn: &mut SqliteConnection, batch: Vec<(i64, Access)>) -> Result<()> {
    for chunk in batch.chunks(ROWS_PER_STATEMENT) {
        let mut qb = QueryBuilder::<Sqlite>::new(
            "INSERT INTO memory_access (memory_seq, access_count, last_access_time) \
             SELECT a.column1, a.column2, a.column3 FROM (VALUES ",
        );
        let mut rows = qb.separated(", ");
        for (seq, access) in chunk {
            rows.push("(")
                .push_bind_unseparated(*seq)
                .push_unseparated(", ")
                .push_bind_unseparated(access.count)
                .push_unseparated(", ")
                .push_bind_unseparated(access.last)
                .push_unseparated(")");
        }
        // Memories deleted meanwhile keep no bookkeeping.
        qb.push(
            ") AS a WHERE EXISTS (SELECT 1 FROM memories m WHERE m.seq = a.column1) \
             ON CONFLICT (memory_seq) DO UPDATE SET \
             access_count = access_count + excluded.access_count, \
             last_access_time = max(last_access_time, excluded.last_access_time)",
        );
        qb.build().execute(&mut *conn).await.map_err(db_error)?;
    }
    Ok(())
}
