//! Retention: a background task that purges from the database what the
//! server no longer keeps — memories past their expire time (invisible to
//! every read already) and request ids older than `--request-id-ttl` —
//! shortly after start and then every `--retention-interval`.
//!
//! It purges in small batches, each one job of the single writer (so one
//! short transaction that concurrent writes share), with a pause between
//! batches in which other writes have the writer to themselves: a backlog
//! of a million expired memories is worked off without stalling writes.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::{Micros, now_micros};
use crate::error::Result;
use crate::metrics::{self, Purged};
use crate::store::Store;

/// Rows purged per transaction.
pub const BATCH: usize = 500;
/// The pause between two batches of a run.
const PAUSE: Duration = Duration::from_millis(50);
/// The first run comes this long after start (or after one interval, if
/// that is shorter), once the start's own work is done.
const FIRST_RUN_AFTER: Duration = Duration::from_secs(10);

/// When and what to purge.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    /// Time between runs.
    pub interval: Duration,
    /// How long a request id is kept.
    pub request_id_ttl: Duration,
}

/// What one run purged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Run {
    pub memories: usize,
    pub request_ids: usize,
}

/// Purges every interval, for as long as the task runs (the server aborts
/// it when it stops). A run that fails is logged and tried again at the
/// next interval.
pub async fn run(store: Arc<dyn Store>, retention: Retention) {
    tokio::time::sleep(FIRST_RUN_AFTER.min(retention.interval)).await;
    let mut ticks = tokio::time::interval(retention.interval);
    // A run longer than the interval delays the next one, rather than
    // starting the next at once to catch up.
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let ran = purge(store.as_ref(), &retention).await;
        metrics::recorders().retention_ran(ran.is_ok());
        match ran {
            Ok(Run {
                memories: 0,
                request_ids: 0,
            }) => {}
            Ok(run) => tracing::info!(
                memories = run.memories,
                request_ids = run.request_ids,
                "retention: purged expired memories and old request ids"
            ),
            Err(err) => {
                tracing::warn!(error = %err, "retention: purging failed; trying again later")
            }
        }
    }
}

/// One run: every expired memory, then every request id past its time to
/// live, batch by batch.
pub async fn purge(store: &dyn Store, retention: &Retention) -> Result<Run> {
    let memories = drain(Purged::Memory, || {
        store.purge_expired_memories(now_micros(), BATCH)
    })
    .await?;
    let ttl = Micros::try_from(retention.request_id_ttl.as_micros()).unwrap_or(Micros::MAX);
    let before = now_micros().saturating_sub(ttl);
    let request_ids = drain(Purged::RequestId, || store.purge_request_ids(before, BATCH)).await?;
    Ok(Run {
        memories,
        request_ids,
    })
}

/// Runs `batch` until it purges less than a full batch, pausing between
/// batches; counts what it purged as `kind`.
async fn drain<F, Fut>(kind: Purged, mut batch: F) -> Result<usize>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<usize>>,
{
    let mut total = 0;
    loop {
        let purged = batch().await?;
        metrics::recorders().purged(kind, purged);
        total += purged;
        if purged < BATCH {
            return Ok(total);
        }
        tokio::time::sleep(PAUSE).await;
    }
}
