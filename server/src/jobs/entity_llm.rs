//! Entities read by the model in the background, when one is configured
//! ([`crate::engine::entities::llm`]): a few memories at a time in
//! sequence order, pausing while the model cannot be reached. Writes never
//! wait for it.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::entities::llm::{self, Step};
use crate::llm::LlmClient;
use crate::store::Store;

/// The pause between two steps.
const PAUSE: Duration = Duration::from_millis(20);
/// The wait after a failure (the model or the database unreachable).
const RETRY: Duration = Duration::from_secs(2);
/// How often it looks for new memories once it has read them all.
const LOOK_AGAIN: Duration = Duration::from_secs(1);

/// Runs until the task is aborted.
pub async fn run(store: Arc<dyn Store>, model: Arc<LlmClient>) {
    let mut read = 0;
    loop {
        match llm::step(store.as_ref(), &model).await {
            Ok(Step::Read(n)) => {
                read += n;
                tokio::time::sleep(PAUSE).await;
            }
            Ok(Step::Done) => {
                if read > 0 {
                    tracing::info!(memories = read, "entities read by the model: done");
                    read = 0;
                }
                tokio::time::sleep(LOOK_AGAIN).await;
            }
            Ok(Step::Unreachable(error)) => {
                tracing::warn!(%error, "entities read by the model: the model cannot be reached; trying again");
                tokio::time::sleep(RETRY).await;
            }
            Err(error) => {
                tracing::warn!(%error, "entities read by the model: a step failed; trying again");
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}
