//! The change feed's head on PostgreSQL: the newest sequence number of
//! `memory_changes` this replica knows to be committed.
//!
//! It moves two ways. After a commit of this replica that changed memories,
//! the store reads the head before acknowledging the write, so the write's
//! own changes are below it (read your writes here). Other replicas' commits
//! are noticed by a listener on [`super::FEED_CHANNEL`]: a notification
//! only wakes it, and it then reads `max(seq)` of the feed — the record —
//! never the identity's sequence, which runs ahead of what is committed
//! (numbers of transactions still committing, or rolled back). A poll every
//! [`POLL_EVERY`] covers notifications lost with a dropped connection.
//!
//! Reading `max(seq)` is sound because numbers become visible in the order
//! they were given (the schema's comment on `memory_changes`): once a number
//! is visible, every smaller one is visible or never will be.

use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::{PgExecutor, PgPool};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::reachability::Reachability;
use super::{FEED_CHANNEL, db_error};
use crate::error::Result;

/// How often the head is read without a notification: the bound on how far
/// behind a replica falls should notifications be lost (a dropped listener
/// connection), not the usual delay, which is the notification's.
pub(super) const POLL_EVERY: Duration = Duration::from_secs(1);
/// How long the listener waits before connecting again after a failure.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// The head, shared by the store (which moves it after its own commits) and
/// the listener.
pub(super) struct Feed {
    head: watch::Sender<i64>,
}

impl Feed {
    pub(super) fn new(head: i64) -> Feed {
        Feed {
            head: watch::Sender::new(head),
        }
    }

    pub(super) fn subscribe(&self) -> watch::Receiver<i64> {
        self.head.subscribe()
    }

    /// Moves the head to `head` unless it is there already or beyond:
    /// replicas' commits are read in any order, the head only goes forward.
    pub(super) fn advance(&self, head: i64) {
        self.head.send_if_modified(|current| {
            let moved = head > *current;
            if moved {
                *current = head;
            }
            moved
        });
    }
}

/// The newest committed change's sequence number, 0 before any.
pub(super) async fn read_head<'e>(executor: impl PgExecutor<'e>) -> Result<i64> {
    let head: Option<i64> = sqlx::query_scalar("SELECT max(seq) FROM memory_changes")
        .fetch_one(executor)
        .await
        .map_err(db_error)?;
    Ok(head.unwrap_or(0))
}

/// Starts listening on [`FEED_CHANNEL`] with a connection of
/// `listener_pool` (LISTEN holds it), reading the head through `pool` on
/// each wake-up. Listening has begun when this returns: a commit after it
/// is noticed.
pub(super) async fn spawn_listener(
    feed: std::sync::Arc<Feed>,
    listener_pool: PgPool,
    pool: PgPool,
    reachability: std::sync::Arc<Reachability>,
) -> anyhow::Result<JoinHandle<()>> {
    let mut listener = PgListener::connect_with(&listener_pool).await?;
    listener.listen(FEED_CHANNEL).await?;
    // A commit between reading the head at start and listening is caught
    // by this read.
    feed.advance(read_head(&pool).await?);
    Ok(tokio::spawn(async move {
        loop {
            let woken = tokio::time::timeout(POLL_EVERY, listener.try_recv()).await;
            match woken {
                // A notification, the poll's time, or a lost connection
                // (reconnected by the listener, which may have missed
                // notifications meanwhile): read the head in every case.
                Ok(Ok(_)) | Err(_) => {}
                Ok(Err(err)) => {
                    // The connection broke: the database is going away,
                    // or gone. The read below says whether it still answers.
                    reachability.set(false);
                    tracing::warn!(error = %err, "listening for changes failed; reconnecting");
                    tokio::time::sleep(RECONNECT_AFTER).await;
                }
            }
            // Notifications that arrived meanwhile are answered by the
            // same read.
            while listener.next_buffered().is_some() {}
            match read_head(&pool).await {
                Ok(head) => {
                    reachability.set(true);
                    feed.advance(head);
                }
                Err(err) => {
                    if matches!(err, crate::error::Error::Unavailable(_)) {
                        reachability.set(false);
                    }
                    tracing::warn!(error = %err, "reading the change feed's head failed");
                }
            }
        }
    }))
}
