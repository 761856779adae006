//! The entity backfill: links, in the background, the memories stored
//! before entities existed (or imported since) to the entities they name,
//! a batch at a time in sequence order, until it reaches the last one it
//! was asked to read. Writes never wait for it; a failed batch is tried
//! again after a pause.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::entities::{self, Backfilled};
use crate::store::Store;

/// The pause between two batches, in which other writes have the writer
/// to themselves.
const PAUSE: Duration = Duration::from_millis(20);
/// The wait before retrying a failed batch.
const RETRY: Duration = Duration::from_secs(5);
/// How often it looks for more to read once done (an import into the
/// database of a running server asks for more).
const LOOK_AGAIN: Duration = Duration::from_secs(5);

/// Runs until the task is aborted.
pub async fn run(store: Arc<dyn Store>) {
    let mut linked = 0;
    loop {
        match entities::backfill(store.as_ref()).await {
            Ok(Backfilled::Done) => {
                if linked > 0 {
                    tracing::info!(memories = linked, "entity backfill: done");
                    linked = 0;
                }
                tokio::time::sleep(LOOK_AGAIN).await;
            }
            Ok(Backfilled::Batch(read)) => {
                linked += read;
                tokio::time::sleep(PAUSE).await;
            }
            Err(err) => {
                tracing::warn!(error = %err, "entity backfill: a batch failed; trying again");
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}
