//! Waiting for the server's background embedding of a namespace.

use std::time::{Duration, Instant};

use engram_client::{Engram, proto};

/// Waits until every memory of `namespace` has its vector, reporting the
/// backlog every 30 s.
pub async fn wait_embedded(engram: &Engram, namespace: &proto::Scope) -> anyhow::Result<()> {
    let mut reported = Instant::now();
    loop {
        let pending = pending_embeddings(engram, namespace).await?;
        if pending == 0 {
            return Ok(());
        }
        if reported.elapsed() >= Duration::from_secs(30) {
            eprintln!(
                "  {pending} memories of {} still to embed",
                namespace.namespace
            );
            reported = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// How many memories of `namespace` still wait for their vector.
async fn pending_embeddings(engram: &Engram, namespace: &proto::Scope) -> anyhow::Result<i64> {
    Ok(engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(namespace.clone()),
        })
        .await?
        .pending_embeddings)
}
