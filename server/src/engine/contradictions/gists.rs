//! What memories say, as the contradiction rules and the near-duplicate
//! check read them, kept by content for the memories in use: a busy
//! owner's memories are candidates of one write after another, and
//! reading one runs every rule's patterns.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::near_duplicates::Gist;

/// The readings of the memories read lately, in two generations. When the
/// newer one is full it becomes the older one, so the memories still in
/// use stay read (a hit in the older generation moves to the newer one).
#[derive(Default)]
pub struct Gists(Mutex<Generations>);

#[derive(Default)]
struct Generations {
    newer: Generation,
    older: Generation,
}

/// One generation of [`Gists`].
type Generation = HashMap<Box<str>, Arc<Gist>>;

/// The most memories a generation holds.
const GENERATION: usize = 4096;

impl Gists {
    /// What a memory saying `content` says, if it is kept.
    pub fn kept(&self, content: &str) -> Option<Arc<Gist>> {
        let (found, dropped) = self.with(|generations| generations.get(content));
        drop(dropped);
        found
    }

    /// Keeps `gist`, what a memory saying `content` says.
    pub fn keep(&self, content: &str, gist: Gist) -> Arc<Gist> {
        let gist = Arc::new(gist);
        let dropped = self.with(|generations| generations.insert(content, gist.clone()));
        drop(dropped);
        gist
    }

    /// Runs `use_it` on the generations under the lock (a poisoned lock
    /// only means a reader panicked: the cache itself is whole). What it
    /// returns is dropped by the caller, after the lock is released.
    fn with<T>(&self, use_it: impl FnOnce(&mut Generations) -> T) -> T {
        let mut generations = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        use_it(&mut generations)
    }
}

impl Generations {
    /// The gist of `content` if kept, and the generation a hit in the
    /// older one let go of (see [`Generations::insert`]).
    fn get(&mut self, content: &str) -> (Option<Arc<Gist>>, Option<Generation>) {
        if let Some(found) = self.newer.get(content) {
            return (Some(found.clone()), None);
        }
        let Some(found) = self.older.remove(content) else {
            return (None, None);
        };
        let dropped = self.insert(content, found.clone());
        (Some(found), dropped)
    }

    /// Keeps `gist`; returns the generation it let go of, if any, for the
    /// caller to drop once the lock is released (thousands of readings
    /// are freed, which the other writes must not wait for).
    #[must_use]
    fn insert(&mut self, content: &str, gist: Arc<Gist>) -> Option<Generation> {
        let mut dropped = None;
        if self.newer.len() >= GENERATION {
            dropped = Some(std::mem::replace(
                &mut self.older,
                std::mem::take(&mut self.newer),
            ));
        }
        self.newer.insert(content.into(), gist);
        dropped
    }
}
