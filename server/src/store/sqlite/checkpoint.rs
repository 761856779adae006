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
//! So once the log is long, the task holds the writer's gate for one more
//! pass, which only has the last few pages left to copy.

use std::sync::Arc;
use std::time::Duration;

use sqlx::{Connection as _, Row as _, SqliteConnection};
use tokio::sync::{Mutex, Notify};
use tokio::task::JoinHandle;

/// How often the log is copied back in the background.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);
/// A log this long (in pages) is completed with writes held.
const COMPLETE_AT_PAGES: i64 = 8_000;

/// The writer holds it while it writes a group; the checkpointer takes it
/// to complete a checkpoint with writes held.
pub(super) type WriteGate = Arc<Mutex<()>>;

/// Checkpoints on `conn` until `closing` is notified.
pub(super) fn spawn(
    mut conn: SqliteConnection,
    gate: WriteGate,
    closing: Arc<Notify>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(CHECKPOINT_EVERY) => {}
                () = closing.notified() => break,
            }
            match checkpoint(&mut conn).await {
                Ok(pages) if pages >= COMPLETE_AT_PAGES => {
                    let _writes_held = gate.lock().await;
                    if let Err(err) = checkpoint(&mut conn).await {
                        tracing::warn!(error = %err, "completing a WAL checkpoint failed");
                    }
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "checkpointing the WAL failed"),
            }
        }
        if let Err(err) = conn.close().await {
            tracing::warn!(error = %err, "closing the checkpoint connection failed");
        }
    })
}

/// One PASSIVE checkpoint; returns how many pages the log holds.
async fn checkpoint(conn: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
    let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut *conn)
        .await?;
    // (busy, pages in the log, pages copied back)
    row.try_get(1)
}
