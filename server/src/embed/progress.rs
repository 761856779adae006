//! How far the embedding backfill (see [`crate::jobs::embedding_backfill`])
//! got, for searches to tell whether every stored memory has its vector.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// How far the backfill got.
#[derive(Debug, Default)]
pub struct BackfillProgress {
    /// Set once everything stored before the start is embedded.
    scanned: AtomicBool,
    /// The feed position whose changes are all embedded.
    position: AtomicI64,
}

impl BackfillProgress {
    /// Whether every memory written up to the feed position `head` has its
    /// vector (as far as the embedder could make one).
    pub fn caught_up(&self, head: i64) -> bool {
        self.scanned.load(Ordering::Acquire) && self.position.load(Ordering::Acquire) >= head
    }

    /// Everything stored before the start is embedded, and the changes up
    /// to the feed position `position`.
    pub fn scanned(&self, position: i64) {
        self.position.store(position, Ordering::Release);
        self.scanned.store(true, Ordering::Release);
    }

    /// The changes up to the feed position `position` are embedded.
    pub fn embedded_up_to(&self, position: i64) {
        self.position.store(position, Ordering::Release);
    }
}
