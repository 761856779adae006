//! Forget (DESIGN §5): which records of a scope are stale, and deleting them
//! in batches that never hold the writer for long.

use std::sync::Arc;

use crate::domain::Micros;
use crate::domain::outcome::{ForgetKind, ForgetRequest, Forgotten, Owner};
use crate::engine::unit::{self, transact_freeing};
use crate::error::Result;
use crate::metrics;
use crate::store::Store;
use crate::store::tx::Stale;

/// The most rows of each kind one Forget transaction deletes: a Forget of
/// many rows is several transactions, so other writes run in between.
pub const FORGET_BATCH: usize = 2_000;

/// What is stale of `kind` for `request` at `now`: outcomes created and
/// anti-patterns last seen before `stale_before`, heuristics less confident
/// than `below_confidence` (all of the scope's agent and project exactly),
/// and memories of exactly the scope that have expired.
fn stale(request: &ForgetRequest, kind: ForgetKind, now: Micros) -> Stale {
    let owner = Owner::from(&request.scope);
    match kind {
        ForgetKind::Outcomes => Stale::Outcomes {
            owner,
            created_before: request.stale_before,
        },
        ForgetKind::Heuristics => Stale::Heuristics {
            owner,
            confidence_below: request.below_confidence,
        },
        ForgetKind::AntiPatterns => Stale::AntiPatterns {
            owner,
            last_seen_before: request.stale_before,
        },
        ForgetKind::Memories => Stale::ExpiredMemories {
            scope: request.scope.clone(),
            at: now,
        },
    }
}

fn count(forgotten: &mut Forgotten, kind: ForgetKind, n: i64) {
    let total = match kind {
        ForgetKind::Outcomes => &mut forgotten.outcomes,
        ForgetKind::Heuristics => &mut forgotten.heuristics,
        ForgetKind::AntiPatterns => &mut forgotten.anti_patterns,
        ForgetKind::Memories => &mut forgotten.memories,
    };
    *total += n;
}

/// Counts (a dry run) or deletes the stale records of the request's kinds.
/// Deleting goes batch by batch, each its own transaction, until a batch
/// finds fewer rows than it may delete; should one fail, the earlier ones
/// stay done, and forgetting again finishes the work. Runs on a full disk.
pub async fn forget(store: &dyn Store, request: ForgetRequest, now: Micros) -> Result<Forgotten> {
    let kinds: Arc<Vec<(ForgetKind, Stale)>> = Arc::new(
        request
            .kinds
            .iter()
            .map(|kind| (*kind, stale(&request, *kind, now)))
            .collect(),
    );
    if request.dry_run {
        return unit::read(store, move |tx| {
            let kinds = kinds.clone();
            Box::pin(async move {
                let mut forgotten = Forgotten::default();
                for (kind, stale) in kinds.iter() {
                    count(&mut forgotten, *kind, tx.count_stale(stale).await?);
                }
                Ok(forgotten)
            })
        })
        .await;
    }
    let full = i64::try_from(FORGET_BATCH).unwrap_or(i64::MAX);
    let mut total = Forgotten::default();
    let mut left = kinds;
    while !left.is_empty() {
        let batch = left.clone();
        let deleted: Vec<i64> = transact_freeing(store, move |tx| {
            let batch = batch.clone();
            Box::pin(async move {
                let mut deleted = Vec::with_capacity(batch.len());
                for (_, stale) in batch.iter() {
                    deleted.push(tx.delete_stale(stale, FORGET_BATCH).await?);
                }
                Ok(deleted)
            })
        })
        .await?;
        metrics::recorders().forget_batches.inc();
        let mut more = Vec::new();
        for ((kind, stale), n) in left.iter().zip(deleted) {
            count(&mut total, *kind, n);
            if n >= full {
                more.push((*kind, stale.clone()));
            }
        }
        left = Arc::new(more);
    }
    Ok(total)
}
