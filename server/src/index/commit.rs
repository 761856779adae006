//! The committer: writes the tail into tantivy and commits in the
//! background, on a thread of its own.
//!
//! It commits at most every [`COMMIT_INTERVAL`] while changes arrive (sooner
//! when the tail grows long), each commit carrying its checkpoint; then it
//! reloads the reader, swaps in the new segments and drops from the tail
//! what the segments now hold. When idle it picks up segments that
//! background merges have produced.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tantivy::index::SegmentId;
use tantivy::{IndexReader, IndexWriter, Searcher};

use super::build::Checkpoint;
use super::document::Fields;
use super::segment::{Counts, SegmentView};
use super::tail::Batch;
use super::{COMMIT_AT, COMMIT_INTERVAL, Shared};

/// How long to wait after a failed commit before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

type KnownCounts = Vec<(SegmentId, Arc<HashMap<String, Counts>>)>;

/// Commits until the index closes, then commits what is left.
pub(super) fn run(
    shared: Arc<Shared>,
    mut writer: IndexWriter,
    reader: IndexReader,
    mut checkpoint: Checkpoint,
) {
    loop {
        let mut stopping = wait(&shared);
        if shared.disk.is_full() && !stopping {
            // A commit would fail, and could take the room that the writes
            // freeing space need; the tail keeps the changes meanwhile.
            // (Stopping, it tries one last time.)
            stopping = pause(&shared);
            if !stopping {
                continue;
            }
        }
        let batch = shared.write().tail.take_pending();
        if batch.changes.is_empty() && batch.watermark <= checkpoint.feed {
            if let Err(err) = pick_up_merges(&shared, &writer, &reader) {
                tracing::warn!(error = %err, "reloading the search index failed");
            }
        } else {
            let watermark = batch.watermark;
            match commit(&mut writer, &shared.fields, batch, &checkpoint, watermark) {
                Ok(()) => {
                    checkpoint.feed = watermark;
                    if let Err(err) = install(&shared, &reader, Some(watermark)) {
                        tracing::error!(error = %err, "reloading the search index failed");
                    }
                }
                Err(err) => {
                    if crate::disk::is_full_error(&err) {
                        shared.disk.filled("the search index");
                    } else {
                        tracing::error!(error = %err, "committing the search index failed; retrying");
                    }
                    if let Err(err) = writer.rollback() {
                        tracing::error!(error = %err, "rolling back the search index failed");
                    }
                    shared.write().tail.requeue_after(checkpoint.feed);
                    if !stopping {
                        std::thread::sleep(RETRY_AFTER);
                    }
                }
            }
        }
        if stopping {
            break;
        }
    }
}

/// Waits for work: the interval, a long tail, or the index closing (then
/// returns true).
fn wait(shared: &Shared) -> bool {
    let stopping = shared
        .stopping
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if *stopping || shared.read().tail.pending() >= COMMIT_AT {
        return *stopping;
    }
    let (stopping, _) = shared
        .wake
        .wait_timeout(stopping, COMMIT_INTERVAL)
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *stopping
}

/// Waits one interval, or until the index closes (then returns true).
fn pause(shared: &Shared) -> bool {
    let stopping = shared
        .stopping
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if *stopping {
        return true;
    }
    let (stopping, _) = shared
        .wake
        .wait_timeout(stopping, COMMIT_INTERVAL)
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *stopping
}

fn commit(
    writer: &mut IndexWriter,
    fields: &Fields,
    batch: Batch,
    checkpoint: &Checkpoint,
    watermark: i64,
) -> tantivy::Result<()> {
    for (seq, doc) in batch.changes {
        writer.delete_term(fields.seq_term(seq));
        if let Some(doc) = doc {
            writer.add_document(fields.document(&doc))?;
        }
    }
    let mut prepared = writer.prepare_commit()?;
    prepared.set_payload(
        &Checkpoint {
            feed: watermark,
            ..checkpoint.clone()
        }
        .payload(),
    );
    prepared.commit()?;
    Ok(())
}

/// Installs the reader's current segments for searches; with a watermark,
/// also drops from the tail what they now hold.
fn install(shared: &Shared, reader: &IndexReader, watermark: Option<i64>) -> tantivy::Result<()> {
    reader.reload()?;
    let searcher = reader.searcher();
    let known: KnownCounts = shared
        .read()
        .segments
        .iter()
        .map(|s| (s.id, s.namespaces.clone()))
        .collect();
    let segments = views(&searcher, &shared.fields, &known)?;
    {
        let mut live = shared.write();
        live.searcher = searcher;
        live.segments = segments;
        if let Some(watermark) = watermark {
            live.tail.prune(watermark);
        }
    }
    shared.room.notify_waiters();
    Ok(())
}

/// Reloads when merges have replaced segments since the last reload.
fn pick_up_merges(
    shared: &Shared,
    writer: &IndexWriter,
    reader: &IndexReader,
) -> tantivy::Result<()> {
    let current = writer.index().searchable_segment_ids()?;
    let changed = {
        let live = shared.read();
        current.len() != live.segments.len()
            || current
                .iter()
                .any(|id| live.segments.iter().all(|s| s.id != *id))
    };
    if changed {
        install(shared, reader, None)?;
    }
    Ok(())
}

/// The views of `searcher`'s segments, reusing the counts of segments
/// already `known`.
pub(super) fn views(
    searcher: &Searcher,
    fields: &Fields,
    known: &[(SegmentId, Arc<HashMap<String, Counts>>)],
) -> tantivy::Result<Vec<SegmentView>> {
    searcher
        .segment_readers()
        .iter()
        .map(|reader| {
            let counted = known
                .iter()
                .find(|(id, _)| *id == reader.segment_id())
                .map(|(_, counts)| counts.clone());
            SegmentView::open(reader, fields, counted)
        })
        .collect()
}
