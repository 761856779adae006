//! Concurrent creates share their statements.
//!
//! Every statement is a round trip to the connection's thread, which costs
//! more than inserting a row, so creates without a request id that arrive
//! while the writer is busy wait in a queue, and one job of the next group
//! commit stores all of them with one multi-row statement. Each caller still
//! gets its own memories back, after the commit, like any other write.

use std::sync::{Arc, Mutex};

use sqlx::SqliteConnection;
use tokio::sync::oneshot;

use super::memories::{self, Prepared, Written};
use super::writer::{OnCommit, Writer};
use crate::domain::{Created, Micros, NewMemory};
use crate::error::{Error, Result};

/// Where a caller's answer goes.
type Reply = oneshot::Sender<Result<Vec<Created>>>;
/// The replies a flush has taken from the queue.
type Replies = Arc<Mutex<Vec<Reply>>>;

/// One caller's create, waiting for the next flush.
struct Pending {
    memories: Vec<Prepared>,
    now: Micros,
    reply: Reply,
}

#[derive(Default)]
struct State {
    pending: Vec<Pending>,
    /// Whether a flush is queued that has not taken the pending creates yet.
    scheduled: bool,
}

/// Creates waiting for the writer.
#[derive(Default)]
pub(super) struct CreateQueue {
    state: Mutex<State>,
}

impl CreateQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `memories` with whatever other creates are waiting; returns
    /// once they are committed.
    pub(super) async fn create(
        self: &Arc<Self>,
        writer: &Writer,
        written: &Arc<Written>,
        memories: Vec<NewMemory>,
        now: Micros,
    ) -> Result<Vec<Created>> {
        // Ids, hashes and JSON are made here, in parallel, not by the writer.
        let memories = memories.into_iter().map(Prepared::new).collect();
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
            // A task of its own: the flush must happen even if this caller
            // goes away.
            tokio::spawn(flush(self.clone(), writer.clone(), written.clone()));
        }
        answer
            .await
            .map_err(|_| Error::Unavailable("the server is shutting down".into()))?
    }

    fn take(&self) -> Vec<Pending> {
        let mut state = self.lock();
        state.scheduled = false;
        std::mem::take(&mut state.pending)
    }
}

/// Runs one writer job that stores every waiting create, then answers each
/// caller with the commit's outcome.
async fn flush(queue: Arc<CreateQueue>, writer: Writer, written: Arc<Written>) {
    // The callers' replies, kept outside the job so that they can be told
    // of a failed commit too.
    let replies: Replies = Arc::default();
    let taken = replies.clone();
    let store_from = queue.clone();
    // The stored memories are handed to the change feed's follower, so that
    // it need not read them back. A create fails only with a database
    // error: no savepoint needed.
    let keep: OnCommit<Vec<Vec<Created>>> = Box::new(move |stored| {
        written.keep(stored.iter().flatten().map(|created| &created.memory));
    });
    let stored = writer
        .write_atomic_then(move |conn| Box::pin(store(conn, store_from, taken)), keep)
        .await;
    let replies = std::mem::take(&mut *replies.lock().unwrap_or_else(|p| p.into_inner()));
    match stored {
        Ok(results) => {
            for (reply, created) in replies.into_iter().zip(results) {
                let _ = reply.send(Ok(created));
            }
        }
        Err(err) => {
            // No replies taken means the job never ran (the writer is
            // closing): a flush is only scheduled with a create waiting, and
            // the job takes every one. Those are told, rather than left
            // waiting for a flush that will not come.
            let replies = if replies.is_empty() {
                queue
                    .take()
                    .into_iter()
                    .map(|pending| pending.reply)
                    .collect()
            } else {
                replies
            };
            for reply in replies {
                let _ = reply.send(Err(err.clone()));
            }
        }
    }
}

/// Stores what the queue holds now: one batch for all callers, split back
/// into each caller's memories.
async fn store(
    conn: &mut SqliteConnection,
    queue: Arc<CreateQueue>,
    replies: Replies,
) -> Result<Vec<Vec<Created>>> {
    let pending = queue.take();
    let mut sizes = Vec::with_capacity(pending.len());
    let mut all = Vec::new();
    // One time for the batch: the latest caller's (they differ by microseconds).
    let now = pending.iter().map(|p| p.now).max().unwrap_or_default();
    {
        let mut replies = replies.lock().unwrap_or_else(|p| p.into_inner());
        for p in pending {
            sizes.push(p.memories.len());
            all.extend(p.memories);
            replies.push(p.reply);
        }
    }
    let mut created = memories::create_many(conn, &all, now).await?.into_iter();
    Ok(sizes
        .into_iter()
        .map(|size| created.by_ref().take(size).collect())
        .collect())
}
