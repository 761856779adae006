//! WAL checkpoints, off the write path.
//!
//! A checkpoint copies the pages of the write-ahead log back into the
//! database, so that the log can start over instead of growing. Left to
//! itself, SQLite checkpoints from the connection that commits once the log
//! passes a size: that is the single writer, and every write then waits
//! while it copies tens of megabytes. Here a task of its own copies in the
//! background on its own connection (PASSIVE: it blocks no one) every
//! [`CHECKPOINT_EVERY`]. But with writes always arriving, a background copy
//! never quite catches up, and only a complete one lets the log start over.
//! So once the log is long, the task catches up in a pass or two more, then
//! holds the writer's gate for a last one, which only has the last few pages
//! left to copy.

use std::sync::Arc;
use std::time::Duration;

use sqlx::{Connection as _, Row as _, SqliteConnection};
use tokio::sync::{Mutex, Notify};
use tokio::task::JoinHandle;

use crate::disk::DiskSpace;

/// How often the log is copied back in the background.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
/// A log this long (in pages) is completed with writes held.
const COMPLETE_AT_PAGES: i64 = 16_000;
/// Writes are held for the last pass only once at most this many pages are
/// left to copy (each pass copies what was written during the one before).
const HOLD_WRITES_BELOW_PAGES: i64 = 1_000;
/// Background passes tried before holding writes anyway.
const CATCH_UP_PASSES: usize = 3;
/// Passes with writes held before giving up until the next round, and the
/// pause between them.
const COMPLETE_TRIES: usize = 3;
const COMPLETE_RETRY: Duration = Duration::from_millis(1);

/// The writer holds it while it writes a group; the checkpointer takes it
/// to complete a checkpoint with writes held.
pub(super) type WriteGate = Arc<Mutex<()>>;

/// Checkpoints on `conn` until `closing` is notified. While the disk is
/// full a checkpoint may fail for want of room (the database file grows by
/// what the log holds): expected, so not a warning.
pub(super) fn spawn(
    mut conn: SqliteConnection,
    gate: WriteGate,
    closing: Arc<Notify>,
    disk: Arc<DiskSpace>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(CHECKPOINT_EVERY) => {}
                () = closing.notified() => break,
            }
            match checkpoint(&mut conn).await {
                Ok(progress) if progress.log >= COMPLETE_AT_PAGES => {
                    // Catch up while writes go on, until little is left to
                    // copy with them held.
                    let mut left = progress.left();
                    for _ in 0..CATCH_UP_PASSES {
                        if left <= HOLD_WRITES_BELOW_PAGES {
                            break;
                        }
                        match checkpoint(&mut conn).await {
                            Ok(progress) => left = progress.left(),
                            Err(_) => break,
                        }
                    }
                    let _writes_held = gate.lock().await;
                    // A reader still on an older snapshot stops the copy
                    // short; readers are quick, so try a few times.
                    for _ in 0..COMPLETE_TRIES {
                        match checkpoint(&mut conn).await {
                            Ok(progress) if progress.left() == 0 => break,
                            Ok(_) => tokio::time::sleep(COMPLETE_RETRY).await,
                            Err(err) => {
                                tracing::warn!(error = %err, "completing a WAL checkpoint failed");
                                break;
                            }
                        }
                    }
                }
                Ok(_) => {}
                Err(err) if disk.is_full() => {
                    tracing::debug!(error = %err, "checkpointing the WAL failed on a full disk");
                }
                Err(err) => tracing::warn!(error = %err, "checkpointing the WAL failed"),
            }
        }
        if let Err(err) = conn.close().await {
            tracing::warn!(error = %err, "closing the checkpoint connection failed");
        }
    })
}

/// How far a checkpoint got, in pages.
struct Progress {
    /// Pages in the log.
    log: i64,
    /// Pages of it copied back into the database.
    copied: i64,
}

impl Progress {
    fn left(&self) -> i64 {
        self.log - self.copied
    }
}

/// One PASSIVE checkpoint.
async fn checkpoint(conn: &mut SqliteConnection) -> Result<Progress, sqlx::Error> {
    let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut *conn)
        .await?;
    // (busy, pages in the log, pages copied back)
    Ok(Progress {
        log: row.try_get(1)?,
        copied: row.try_get(2)?,
    })
}
