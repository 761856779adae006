//! The backfill: embeds, in the background, every memory whose content has
//! no vector of the current model — at start, everything stored before
//! (including all of it after a model change), then whatever the change feed
//! says was written. Writes never wait for it; a failing embedder is retried
//! with backoff, and the backfill catches up once it recovers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::domain::{Unembedded, now_micros};
use crate::embed::{BackfillProgress, EmbedError, Embedder};
use crate::store::Store;

/// Memories embedded at a time: enough for the local model to sort them by
/// length into batches that pad little (it encodes 32 at a time).
const BATCH: usize = 256;
/// Changes read from the feed at a time.
const FEED_BATCH: usize = 1_000;
/// The first and the longest wait before retrying a failed batch.
const FIRST_RETRY: Duration = Duration::from_millis(500);
const LONGEST_RETRY: Duration = Duration::from_secs(30);
/// How often a long backfill reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Runs until the task is aborted.
pub async fn run(store: Arc<dyn Store>, embedder: Arc<Embedder>, progress: Arc<BackfillProgress>) {
    let model = embedder.info().id.clone();
    let mut head = store.feed_head();
    // Changes from here on are followed below; what was stored before is
    // found by the scan.
    let mut position = *head.borrow_and_update();
    let started = Instant::now();
    let mut embedded = 0usize;
    let mut reported = started;
    let mut after = 0;
    loop {
        let batch = retrying("finding memories to embed", || {
            store.unembedded(&model, after, None, BATCH, now_micros())
        })
        .await;
        let Some(last) = batch.last().map(|m| m.seq) else {
            break;
        };
        if after == 0 {
            // Everything, after a model change: it may take a while.
            tracing::info!(model = %model, "embedding stored memories");
        }
        after = last;
        embedded += embed_and_store(store.as_ref(), &embedder, batch).await;
        if reported.elapsed() >= PROGRESS_EVERY {
            tracing::info!(embedded, model = %model, "embedding stored memories");
            reported = Instant::now();
        }
    }
    progress.scanned(position);
    if embedded > 0 {
        tracing::info!(
            embedded,
            model = %model,
            seconds = started.elapsed().as_secs_f64(),
            "stored memories embedded"
        );
    }
    loop {
        let target = *head.borrow_and_update();
        while position < target {
            let changes = retrying("reading the change feed", || {
                store.changed_memories(position, FEED_BATCH)
            })
            .await;
            let Some(&(last, _)) = changes.last() else {
                break;
            };
            let mut seqs: Vec<i64> = changes.iter().map(|&(_, memory)| memory).collect();
            seqs.sort_unstable();
            seqs.dedup();
            for chunk in seqs.chunks(BATCH) {
                let todo = retrying("finding memories to embed", || {
                    store.unembedded(&model, 0, Some(chunk), chunk.len(), now_micros())
                })
                .await;
                if !todo.is_empty() {
                    embed_and_store(store.as_ref(), &embedder, todo).await;
                }
            }
            position = last;
            progress.embedded_up_to(position);
        }
        if head.changed().await.is_err() {
            return;
        }
    }
}

/// Embeds `batch` and stores the vectors, retrying while the embedder is
/// unavailable; returns how many vectors were stored (fewer when memories
/// changed meanwhile: they come back through the feed). Inputs the embedder
/// refuses (see [`EmbedError::is_refusal`]) are found by halving the batch,
/// and left without a vector — found by their words only — so that one
/// memory never holds up all the others.
async fn embed_and_store(store: &dyn Store, embedder: &Embedder, batch: Vec<Unembedded>) -> usize {
    let model = &embedder.info().id;
    let mut stored = 0;
    let mut todo = vec![batch];
    while let Some(mut batch) = todo.pop() {
        let texts: Vec<String> = batch.iter().map(|m| m.content.clone()).collect();
        let embedded = retry_until(
            "embedding memories",
            || embedder.embed(texts.clone()),
            EmbedError::is_refusal,
        )
        .await;
        match embedded {
            Ok(vectors) => {
                let vectors: Vec<(Unembedded, Vec<f32>)> = batch.into_iter().zip(vectors).collect();
                stored += retrying("storing vectors", || {
                    store.store_vectors(model, vectors.clone())
                })
                .await;
            }
            Err(_) if batch.len() > 1 => {
                let second = batch.split_off(batch.len() / 2);
                todo.extend([second, batch]);
            }
            Err(err) => tracing::warn!(
                memory_seq = batch[0].seq,
                error = %err,
                "the embedder refuses this memory's content; it stays without a vector \
                 (found by its words) until its content changes or the server restarts"
            ),
        }
    }
    stored
}

/// Runs `attempt` until it succeeds, waiting longer after each failure
/// (logged once per failure streak, then again on recovery).
async fn retrying<T, E, F, Fut>(what: &str, attempt: F) -> T
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    match retry_until(what, attempt, |_: &E| false).await {
        Ok(value) => value,
        Err(_) => unreachable!("retry_until gives up on a refusal only"),
    }
}

/// [`retrying`], but gives up at once on an error that `refused` says
/// retrying cannot cure.
async fn retry_until<T, E, F, Fut>(
    what: &str,
    mut attempt: F,
    refused: impl Fn(&E) -> bool,
) -> Result<T, E>
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut wait = FIRST_RETRY;
    let mut failures = 0u32;
    loop {
        match attempt().await {
            Ok(value) => {
                if failures > 0 {
                    tracing::info!(failures, "{what}: recovered");
                }
                return Ok(value);
            }
            Err(err) if refused(&err) => return Err(err),
            Err(err) => {
                if failures == 0 {
                    tracing::warn!(error = %err, retry_in = ?wait, "{what} failed; retrying with backoff");
                } else {
                    tracing::debug!(error = %err, failures, "{what} failed again");
                }
                failures += 1;
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LONGEST_RETRY);
            }
        }
    }
}
