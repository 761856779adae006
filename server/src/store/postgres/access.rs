//! Access bookkeeping on PostgreSQL — how often searches returned a memory,
//! and when last — gathered in memory and written in batches, as on SQLite
//! (see `store::sqlite::access`): a transaction per search would cost more
//! than the search. What is gathered when the process dies is lost, which
//! bookkeeping may be.
//!
//! Each replica writes its own batches, adding its counts to the row's: the
//! upsert's row lock makes concurrent batches add up rather than overwrite.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::PgPool;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::db_error;
use super::retry::{Retries, is_conflict};
use crate::domain::Micros;
use crate::error::{Error, Result};

/// How often gathered accesses are written.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// This many memories waiting are written without waiting for the interval.
const FLUSH_AT: usize = 10_000;

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

    /// What is gathered, in memory order: concurrent batches of several
    /// replicas then lock their rows in the same order, and cannot deadlock.
    fn take(&self) -> Vec<(i64, Access)> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let mut batch: Vec<(i64, Access)> = pending.drain().collect();
        batch.sort_unstable_by_key(|&(seq, _)| seq);
        batch
    }

    /// Writes what is gathered, then stops the flusher.
    pub(super) fn close(&self) {
        self.closing.notify_one();
    }
}

/// Writes gathered accesses until [`Accesses::close`]; the last batch is
/// written before the task ends.
pub(super) fn spawn_flusher(accesses: Arc<Accesses>, pool: PgPool) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let closing = tokio::select! {
                () = tokio::time::sleep(FLUSH_EVERY) => false,
                () = accesses.wake.notified() => false,
                () = accesses.closing.notified() => true,
            };
            let batch = accesses.take();
            if !batch.is_empty()
                && let Err(err) = write_with_retries(&pool, &batch).await
            {
                tracing::warn!(error = %err, "recording search accesses failed");
            }
            if closing {
                return;
            }
        }
    })
}

/// SQLSTATE of a batch that names a memory deleted (by any replica) after
/// the batch checked that it exists: run again, the check leaves it out.
const FOREIGN_KEY_VIOLATION: &str = "23503";

async fn write_with_retries(pool: &PgPool, batch: &[(i64, Access)]) -> Result<()> {
    let mut retries = Retries::default();
    loop {
        match write(pool, batch).await {
            Err(err) if is_conflict(&err) => retries.pause().await?,
            done => return done,
        }
    }
}

async fn write(pool: &PgPool, batch: &[(i64, Access)]) -> Result<()> {
    let seqs: Vec<i64> = batch.iter().map(|(seq, _)| *seq).collect();
    let counts: Vec<i64> = batch.iter().map(|(_, a)| a.count).collect();
    let lasts: Vec<i64> = batch.iter().map(|(_, a)| a.last).collect();
    let written = sqlx::query(
        "INSERT INTO memory_access (memory_seq, access_count, last_access_time) \
         SELECT a.seq, a.n, a.last FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) \
         AS a(seq, n, last) WHERE EXISTS (SELECT 1 FROM memories m WHERE m.seq = a.seq) \
         ON CONFLICT (memory_seq) DO UPDATE SET \
         access_count = memory_access.access_count + excluded.access_count, \
         last_access_time = greatest(memory_access.last_access_time, excluded.last_access_time)",
    )
    .bind(seqs)
    .bind(counts)
    .bind(lasts)
    .execute(pool)
    .await;
    match written {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some(FOREIGN_KEY_VIOLATION) => {
            Err(Error::Unavailable(super::retry::CONFLICT.into()))
        }
        Err(err) => Err(db_error(err)),
    }
}
