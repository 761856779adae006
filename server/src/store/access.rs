//! Access bookkeeping — how often searches returned a memory, and when last
//! — gathered in memory and written in batches: a write transaction per
//! search would cost more than the search. What is gathered when the process
//! dies is lost, which bookkeeping may be. Each backend writes a batch its
//! own way (SQLite through its one writer; PostgreSQL in a transaction of
//! its own, retried on a conflict with another replica's batch).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::domain::Micros;
use crate::error::Result;

/// How often gathered accesses are written.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// This many memories waiting are written without waiting for the interval.
const FLUSH_AT: usize = 10_000;

/// Accesses of one memory since the last write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub count: i64,
    pub last: Micros,
}

/// Accesses waiting to be written.
#[derive(Default)]
struct Accesses {
    pending: Mutex<HashMap<i64, Access>>,
    wake: Notify,
    closing: Notify,
}

impl Accesses {
    /// Notes that a search returned the memories `seqs` at `now`.
    pub fn record(&self, seqs: Vec<i64>, now: Micros) {
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

    /// What is gathered, by memory: concurrent batches of several replicas
    /// then lock their rows in the same order, and cannot deadlock.
    fn take(&self) -> Vec<(i64, Access)> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let mut batch: Vec<(i64, Access)> = pending.drain().collect();
        batch.sort_unstable_by_key(|&(seq, _)| seq);
        batch
    }

    /// Writes what is gathered, then stops the flusher.
    fn close(&self) {
        self.closing.notify_one();
    }
}

/// Writes gathered accesses with `write` until [`Accesses::close`]; the last
/// batch is written before the task ends.
fn spawn_flusher<F, W>(accesses: Arc<Accesses>, write: W) -> JoinHandle<()>
where
    W: Fn(Vec<(i64, Access)>) -> F + Send + 'static,
    F: Future<Output = Result<()>> + Send,
{
    tokio::spawn(async move {
        loop {
            let closing = tokio::select! {
                () = tokio::time::sleep(FLUSH_EVERY) => false,
                () = accesses.wake.notified() => false,
                () = accesses.closing.notified() => true,
            };
            let batch = accesses.take();
            if !batch.is_empty()
                && let Err(err) = write(batch).await
            {
                tracing::warn!(error = %err, "recording search accesses failed");
            }
            if closing {
                return;
            }
        }
    })
}

/// The accesses a store gathers, with the task that writes them.
pub struct Gatherer {
    accesses: Arc<Accesses>,
    flusher: tokio::sync::Mutex<Option<JoinHandle<()>>>,
}

impl Gatherer {
    /// Gathers accesses and writes them with `write` (see [`spawn_flusher`]).
    pub fn start<F, W>(write: W) -> Gatherer
    where
        W: Fn(Vec<(i64, Access)>) -> F + Send + 'static,
        F: Future<Output = Result<()>> + Send,
    {
        let accesses = Arc::new(Accesses::default());
        let flusher = spawn_flusher(accesses.clone(), write);
        Gatherer {
            accesses,
            flusher: tokio::sync::Mutex::new(Some(flusher)),
        }
    }

    /// Notes that a search returned the memories `seqs` at `now`.
    pub fn record(&self, seqs: Vec<i64>, now: Micros) {
        self.accesses.record(seqs, now);
    }

    /// Writes what is gathered and stops the flusher, once it has.
    pub async fn close(&self) {
        self.accesses.close();
        let flusher = self.flusher.lock().await.take();
        if let Some(flusher) = flusher
            && let Err(err) = flusher.await
        {
            tracing::error!(error = %err, "the access flusher failed");
        }
    }
}
