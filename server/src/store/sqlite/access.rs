//! Access bookkeeping — how often searches returned a memory, and when last —
//! gathered in memory and written in batches: a write transaction per search
//! would cost more than the search. What is gathered when the process dies
//! is lost, which bookkeeping may be.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::db_error;
use super::writer::Writer;
use crate::domain::Micros;
use crate::error::Result;

/// How often gathered accesses are written.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// This many memories waiting are written without waiting for the interval.
const FLUSH_AT: usize = 10_000;
/// Memories updated per statement (three parameters each).
const ROWS_PER_STATEMENT: usize = 1_000;

/// Accesses of one memory since the last write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Access {
    count: i64,
    last: Micros,
}

/// Accesses waiting to be written.
#[derive(Default)]
pub(super) struct Accesses {
    pending: Mutex<HashMap<i64, Access>>,
    wake: Notify,
    closing: Notify,
}

impl Accesses {
    /// Notes that a search returned the memories `seqs` at `now`.
    pub(super) fn record(&self, seqs: Vec<i64>, now: Micros) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        for seq in seqs {
            let access = pending.entry(seq).or_insert(Access {
                count: 0,
                last: now,
            });
            access.count += 1;
            access.last = access.last.max(now);
        }
        if pending.len() >= FLUSH_AT {
            self.wake.notify_one();
        }
    }

    fn take(&self) -> Vec<(i64, Access)> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.drain().collect()
    }

    /// Writes what is gathered, then stops the flusher.
    pub(super) fn close(&self) {
        self.closing.notify_one();
    }
}

/// Writes gathered accesses through `writer` until [`Accesses::close`]; the
/// last batch is written (and committed) before the task ends.
pub(super) fn spawn_flusher(accesses: Arc<Accesses>, writer: Writer) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let closing = tokio::select! {
                () = tokio::time::sleep(FLUSH_EVERY) => false,
                () = accesses.wake.notified() => false,
                () = accesses.closing.notified() => true,
            };
            let batch = accesses.take();
            if !batch.is_empty() {
                let written = writer.write(move |conn| Box::pin(write(conn, batch))).await;
                if let Err(err) = written {
                    tracing::warn!(error = %err, "recording search accesses failed");
                }
            }
            if closing {
                return;
            }
        }
    })
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
