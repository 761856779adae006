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
    pending: Mutex<HashMap<String, Access>>,
    wake: Notify,
    closing: Notify,
}

impl Accesses {
    /// Notes that a search returned `ids` at `now`.
    pub(super) fn record(&self, ids: Vec<String>, now: Micros) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        for id in ids {
            let access = pending.entry(id).or_insert(Access {
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

    fn take(&self) -> Vec<(String, Access)> {
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

async fn write(conn: &mut SqliteConnection, batch: Vec<(String, Access)>) -> Result<()> {
    for chunk in batch.chunks(ROWS_PER_STATEMENT) {
        let mut qb = QueryBuilder::<Sqlite>::new(
            "UPDATE memories SET access_count = access_count + a.column2, \
             last_access_time = max(coalesce(memories.last_access_time, 0), a.column3) \
             FROM (VALUES ",
        );
        let mut rows = qb.separated(", ");
        for (id, access) in chunk {
            rows.push("(")
                .push_bind_unseparated(id.clone())
                .push_unseparated(", ")
                .push_bind_unseparated(access.count)
                .push_unseparated(", ")
                .push_bind_unseparated(access.last)
                .push_unseparated(")");
        }
        qb.push(") AS a WHERE memories.id = a.column1");
        qb.build().execute(&mut *conn).await.map_err(db_error)?;
    }
    Ok(())
}
