//! Concurrent creates share a unit of work.
//!
//! A unit of work costs a few round trips to the database whatever it holds,
//! more than storing a memory, so creates without a request id that arrive
//! while the writer is busy wait here, and the next unit of work stores all
//! of them (one lookup, one multi-row insert). Each caller still gets its
//! own memories back, after the commit, like any other write.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::domain::{Created, Micros};
use crate::engine::memories::{Write, create_many};
use crate::engine::unit::transact;
use crate::error::{Error, Result};
use crate::store::Store;

/// Where a caller's answer goes.
type Reply = oneshot::Sender<Result<Vec<Created>>>;

/// One caller's create, waiting for the next unit of work.
struct Pending {
    memories: Vec<Write>,
    now: Micros,
    reply: Reply,
}

#[derive(Default)]
struct State {
    pending: Vec<Pending>,
    /// Whether a unit of work is queued that has not taken the pending
    /// creates yet.
    scheduled: bool,
}

/// Creates waiting for the writer.
#[derive(Default)]
pub struct CreateBatch {
    state: Mutex<State>,
}

/// The creates one unit of work took: the memories of all, each caller's
/// count and reply, and the time of the batch.
struct Taken {
    memories: Arc<Vec<Write>>,
    sizes: Vec<usize>,
    replies: Vec<Reply>,
    now: Micros,
}

impl CreateBatch {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `memories` with whatever other creates are waiting; returns
    /// once they are committed.
    pub async fn create(
        self: &Arc<Self>,
        store: Arc<dyn Store>,
        memories: Vec<Write>,
        now: Micros,
    ) -> Result<Vec<Created>> {
        let (reply, answer) = oneshot::channel();
        let schedule = {
            let mut state = self.lock();
            state.pending.push(Pending {
                memories,
                now,
                reply,
            });
            !std::mem::replace(&mut state.scheduled, true)
        };
        if schedule {
            // A task of its own: the batch must be stored even if this
            // caller goes away.
            tokio::spawn(flush(self.clone(), store));
        }
        answer
            .await
            .map_err(|_| Error::Unavailable("the server is shutting down".into()))?
    }

    /// Takes every waiting create.
    fn take(&self) -> Taken {
        let pending = {
            let mut state = self.lock();
            state.scheduled = false;
            std::mem::take(&mut state.pending)
        };
        // One time for the batch: the latest caller's (they differ by
        // microseconds).
        let now = pending.iter().map(|p| p.now).max().unwrap_or_default();
        let mut memories = Vec::new();
        let mut sizes = Vec::with_capacity(pending.len());
        let mut replies = Vec::with_capacity(pending.len());
        for p in pending {
            sizes.push(p.memories.len());
            memories.extend(p.memories);
            replies.push(p.reply);
        }
        Taken {
            memories: Arc::new(memories),
            sizes,
            replies,
            now,
        }
    }
}

/// Runs one unit of work that stores every waiting create, then answers
/// each caller with the commit's outcome.
async fn flush(batch: Arc<CreateBatch>, store: Arc<dyn Store>) {
    // The creates are taken when the unit of work first runs, not when it
    // is queued, so that those arriving meanwhile join it; a rerun (after a
    // conflict) stores the same ones again.
    let taken: Arc<Mutex<Option<Taken>>> = Arc::default();
    let held = taken.clone();
    let from = batch.clone();
    let stored = transact(&*store, move |tx| {
        let (held, from) = (held.clone(), from.clone());
        Box::pin(async move {
            let (memories, now) = {
                let mut held = held.lock().unwrap_or_else(|p| p.into_inner());
                let taken = held.get_or_insert_with(|| from.take());
                (taken.memories.clone(), taken.now)
            };
            create_many(tx, &memories, now).await
        })
    })
    .await;
    let taken = taken.lock().unwrap_or_else(|p| p.into_inner()).take();
    let Some(Taken { sizes, replies, .. }) = taken else {
        // The unit of work never ran (the server is closing): a flush is
        // only scheduled with a create waiting, so those are told rather
        // than left waiting for a flush that will not come.
        let err = stored
            .err()
            .unwrap_or_else(|| Error::Internal("a batch of creates stored nothing".into()));
        for reply in batch.take().replies {
            let _ = reply.send(Err(err.clone()));
        }
        return;
    };
    match stored {
        Ok(created) => {
            let mut created = created.into_iter();
            for (reply, size) in replies.into_iter().zip(sizes) {
                let _ = reply.send(Ok(created.by_ref().take(size).collect()));
            }
        }
        Err(err) => {
            for reply in replies {
                let _ = reply.send(Err(err.clone()));
            }
        }
    }
}
