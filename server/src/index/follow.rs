//! The follower: applies each change of the database's feed to the tail as
//! soon as it is committed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::document::IndexedDoc;
use super::{COMMIT_AT, FEED_BATCH, MAX_TAIL, Shared};
use crate::domain::{MemoryChange, now_micros};
use crate::store::Store;

/// How long to wait before reading the feed again after a failure.
const RETRY_AFTER: Duration = Duration::from_millis(200);
/// Batches of more changes than this are analysed on a blocking thread.
const INLINE_ANALYSIS: usize = 64;

/// Follows the feed from `applied` until the index closes or the store does.
pub(super) async fn run(shared: Arc<Shared>, store: Arc<dyn Store>, mut applied: i64) {
    let mut head = store.feed_head();
    loop {
        let target = *head.borrow_and_update();
        while applied < target {
            tokio::select! {
                biased;
                () = shared.stop_following.notified() => return,
                next = apply_next(&shared, store.as_ref(), applied, target) => applied = next,
            }
        }
        tokio::select! {
            biased;
            () = shared.stop_following.notified() => return,
            changed = head.changed() => if changed.is_err() { return },
        }
    }
}

/// Applies the next batch of changes after `applied`; returns the new
/// position. Cancel-safe: the tail changes only after the last await.
async fn apply_next(shared: &Shared, store: &dyn Store, applied: i64, target: i64) -> i64 {
    wait_for_room(shared).await;
    let changes = match store.changes_after(applied, FEED_BATCH).await {
        Ok(changes) => changes,
        Err(err) => {
            tracing::error!(error = %err, "reading the change feed failed; retrying");
            tokio::time::sleep(RETRY_AFTER).await;
            return applied;
        }
    };
    let last = changes.last().map_or(target, |c| c.seq);
    let latest = latest_per_memory(changes);
    if let Some(vectors) = &shared.vectors {
        for change in &latest {
            vectors.apply(
                change.memory_seq,
                change.memory.as_ref(),
                change.vector.as_ref(),
            );
        }
    }
    let analysed = if latest.len() > INLINE_ANALYSIS {
        match tokio::task::spawn_blocking(move || analyse(latest)).await {
            Ok(analysed) => analysed,
            Err(err) => {
                tracing::error!(error = %err, "analysing changes failed; retrying");
                return applied;
            }
        }
    } else {
        analyse(latest)
    };
    let pending = {
        let mut live = shared.write();
        for (feed_seq, memory_seq, doc) in analysed {
            live.tail.apply(feed_seq, memory_seq, doc);
        }
        live.tail.skip_to(last);
        live.tail.pending()
    };
    shared.applied.send_replace(last);
    if pending >= COMMIT_AT {
        shared.wake.notify_one();
    }
    last
}

/// Each memory's last change of the batch, in feed order: every change
/// carries the memory's current state, so the earlier ones add nothing —
/// except a vector, which only a change that stored one carries (and which
/// is the memory's current one too).
fn latest_per_memory(changes: Vec<MemoryChange>) -> Vec<MemoryChange> {
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let mut latest: Vec<MemoryChange> = Vec::new();
    for change in changes.into_iter().rev() {
        match seen.get(&change.memory_seq) {
            Some(&at) => {
                if latest[at].vector.is_none() {
                    latest[at].vector = change.vector;
                }
            }
            None => {
                seen.insert(change.memory_seq, latest.len());
                latest.push(change);
            }
        }
    }
    latest.reverse();
    latest
}

/// The indexed form of each change: `None` for a memory that is gone or has
/// expired (it can never be found again).
fn analyse(changes: Vec<MemoryChange>) -> Vec<(i64, i64, Option<Arc<IndexedDoc>>)> {
    let now = now_micros();
    changes
        .into_iter()
        .map(|change| {
            let doc = change
                .memory
                .filter(|m| m.expire_time.is_none_or(|t| t > now))
                .map(|m| Arc::new(IndexedDoc::new(&m)));
            (change.seq, change.memory_seq, doc)
        })
        .collect()
}

/// Waits while the tail is full, so memory stays bounded when writes
/// outrun indexing.
async fn wait_for_room(shared: &Shared) {
    loop {
        let room = shared.room.notified();
        if shared.read().tail.len() < MAX_TAIL {
            return;
        }
        shared.wake.notify_one();
        room.await;
    }
}
