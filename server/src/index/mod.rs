//! Derived search indexes (DESIGN §7): the full-text index, a tantivy index
//! that follows the database's change feed.
//!
//! The database is the source of truth; the index can always be rebuilt from
//! it. Each tantivy commit records, in its payload, how far into the feed it
//! got (a [`build::Checkpoint`]), so a restart — after a clean stop, a crash
//! or `kill -9` — replays only what is missing, and an index that is gone,
//! damaged or made from another database is rebuilt.
//!
//! Three parts keep it current:
//! * the follower ([`follow`]) applies each committed change of the feed to
//!   an in-memory tail ([`tail`]) as soon as the database commits it;
//! * the committer ([`commit`]) writes the tail into tantivy in the
//!   background and commits about once a second;
//! * a search ([`TextIndex::search`]) first waits until the follower has
//!   applied everything committed before it began (read your writes), then
//!   reads the committed segments and the tail together.

mod analyzer;
mod build;
mod commit;
mod document;
mod filter;
mod follow;
mod search;
mod segment;
mod tail;
mod vectors;

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use tantivy::Searcher;
use tokio::sync::{Notify, watch};

pub use self::analyzer::STOP_WORDS;
pub use self::build::{FolderLock, Progress};
use self::document::Fields;
use self::segment::SegmentView;
use self::tail::Tail;
pub use self::vectors::{VectorIndex, VectorMatch};
use crate::domain::{MemoryFilter, Micros, Scope, TextMatch};
use crate::error::{Error, Result};
use crate::store::Store;

/// How often the committer commits, at most, while changes arrive.
const COMMIT_INTERVAL: Duration = Duration::from_secs(1);
/// A tail this long is committed without waiting for the interval: a
/// search scores every tail document that has one of its terms (the tail
/// has no skip lists), so the tail is kept short.
const COMMIT_AT: usize = 5_000;
/// The follower waits for a commit before the tail grows past this.
const MAX_TAIL: usize = 20_000;
/// Changes read from the feed at a time.
const FEED_BATCH: usize = 5_000;
/// How long a search waits for the follower before giving up (UNAVAILABLE).
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(10);
/// Memory for tantivy's indexing buffers while serving.
const WRITER_MEMORY: usize = 64 << 20;

/// Where the index lives.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// The index's folder; created when missing.
    pub dir: PathBuf,
}

/// Holds the index folder of `options` as a running server does, so that
/// none starts on it meanwhile; fails while one is running.
pub fn hold(options: &IndexOptions) -> anyhow::Result<FolderLock> {
    build::lock(&options.dir)
}

/// A full-text query, already validated.
#[derive(Debug, Clone, Copy)]
pub struct TextQuery<'a> {
    pub scope: &'a Scope,
    pub filter: &'a MemoryFilter,
    /// Free text.
    pub text: &'a str,
    /// How many matches to return, best first.
    pub limit: usize,
    pub now: Micros,
    /// Search by at most this many of the text's terms that some memory of
    /// the namespace has, the rarest (the most telling): a lookup by a
    /// whole memory's words needs its distinctive ones, and each common
    /// word would visit most of the namespace. `None`: every term.
    pub max_terms: Option<usize>,
    /// Terms searched beside the text's words: those of the times the
    /// query names (`dates::query_terms`).
    pub extra_terms: &'a [String],
}

/// Whether `text` has anything to search for.
pub fn has_terms(text: &str) -> bool {
    !analyzer::query_terms(text).is_empty()
}

/// What searches read: the committed segments and the uncommitted tail.
struct Live {
    searcher: Searcher,
    /// One per segment of `searcher`, in the same order.
    segments: Vec<SegmentView>,
    tail: Tail,
}

/// State shared by searches, the follower and the committer.
struct Shared {
    fields: Fields,
    live: RwLock<Live>,
    /// The feed position the follower has applied (searches wait on it).
    applied: watch::Sender<i64>,
    /// Wakes the committer early (a long tail, or stopping).
    wake: Condvar,
    /// Set when the index is closing; guarded for the condvar.
    stopping: Mutex<bool>,
    /// Signalled after a commit shortens the tail.
    room: Notify,
    /// Told to the follower when the index closes.
    stop_following: Notify,
    /// The vector index the follower keeps current too, if any.
    vectors: Option<Arc<VectorIndex>>,
    /// Whether the disk is full: the committer waits while it is, keeping
    /// the changes in the tail (searches read them there), and reports a
    /// full disk it runs into.
    disk: Arc<crate::disk::DiskSpace>,
}

impl Shared {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Live> {
        self.live
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Live> {
        self.live
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The full-text index of the memories.
pub struct TextIndex {
    shared: Arc<Shared>,
    feed_head: watch::Receiver<i64>,
    follower: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    committer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl TextIndex {
    /// Opens the index in `options.dir` for `store`: rebuilt when it is
    /// missing, unreadable, of another format or of another database, and
    /// caught up with the feed otherwise (progress in the log). Fails when
    /// another server holds the folder.
    pub async fn open(
        options: &IndexOptions,
        store: Arc<dyn Store>,
        vectors: Option<Arc<VectorIndex>>,
    ) -> anyhow::Result<TextIndex> {
        let opened = build::open(options, store.as_ref(), &mut build::log_progress).await?;
        if let Some(vectors) = &vectors {
            // Loaded before the follower starts from the full-text index's
            // watermark: replaying changes the load already saw is harmless,
            // as every change carries the memory's current state.
            vectors::load(vectors, store.as_ref()).await?;
        }
        let build::Opened {
            writer,
            reader,
            fields,
            watermark,
            checkpoint,
        } = opened;
        let searcher = reader.searcher();
        let segments = commit::views(&searcher, &fields, &[])?;
        let (applied, _) = watch::channel(watermark);
        let shared = Arc::new(Shared {
            fields,
            live: RwLock::new(Live {
                searcher,
                segments,
                tail: Tail::new(watermark),
            }),
            applied,
            wake: Condvar::new(),
            stopping: Mutex::new(false),
            room: Notify::new(),
            stop_following: Notify::new(),
            vectors,
            disk: store.disk_space(),
        });
        let feed_head = store.feed_head();
        let follower = tokio::spawn(follow::run(shared.clone(), store, watermark));
        let committer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("index-committer".into())
                .spawn(move || commit::run(shared, writer, reader, checkpoint))?
        };
        Ok(TextIndex {
            shared,
            feed_head,
            follower: tokio::sync::Mutex::new(Some(follower)),
            committer: Mutex::new(Some(committer)),
        })
    }

    /// Rebuilds the index in `options.dir` from `store`, reporting progress;
    /// for the `reindex` command (the server must not be running).
    pub async fn rebuild(
        options: &IndexOptions,
        store: &dyn Store,
        progress: &mut dyn FnMut(Progress),
    ) -> anyhow::Result<()> {
        build::rebuild(options, store, progress).await
    }

    /// The best `query.limit` matches, best first. Reflects every write
    /// committed before the call began.
    pub async fn search(&self, query: &TextQuery<'_>) -> Result<Vec<TextMatch>> {
        self.catch_up().await?;
        let live = self.shared.read();
        search::run(&live, &self.shared.fields, query)
            .map_err(|err| Error::Internal(format!("full-text search: {err}")))
    }

    /// The best `query.limit` matches among the changes applied so far,
    /// without waiting for the others, and the feed position they reach:
    /// the changes after it are the caller's to read (from the feed).
    pub fn search_applied(&self, query: &TextQuery<'_>) -> Result<(Vec<TextMatch>, i64)> {
        let applied = *self.shared.applied.borrow();
        let live = self.shared.read();
        let matches = search::run(&live, &self.shared.fields, query)
            .map_err(|err| Error::Internal(format!("full-text search: {err}")))?;
        Ok((matches, applied))
    }

    /// How many changes the database has committed beyond feed position
    /// `applied`, as far as this server knows.
    pub fn lag_behind(&self, applied: i64) -> i64 {
        (*self.feed_head.borrow() - applied).max(0)
    }

    /// How many changes the database has committed that the index has not
    /// applied yet (a search waits for them).
    pub fn lag(&self) -> i64 {
        let head = *self.feed_head.borrow();
        (head - *self.shared.applied.borrow()).max(0)
    }

    /// Waits until the follower has applied every change committed so far.
    async fn catch_up(&self) -> Result<()> {
        let target = *self.feed_head.borrow();
        let mut applied = self.shared.applied.subscribe();
        if *applied.borrow() >= target {
            return Ok(());
        }
        match tokio::time::timeout(CATCH_UP_TIMEOUT, applied.wait_for(|a| *a >= target)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(Error::Unavailable("the server is shutting down".into())),
            Err(_) => Err(Error::Unavailable(
                "the search index is catching up with recent writes; retry".into(),
            )),
        }
    }

    /// Stops following the feed and commits what was applied, so the next
    /// start has nothing to replay.
    pub async fn close(&self) {
        self.shared.stop_following.notify_one();
        if let Some(follower) = self.follower.lock().await.take()
            && let Err(err) = follower.await
        {
            tracing::error!(error = %err, "the index follower failed");
        }
        *self
            .shared
            .stopping
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = true;
        self.shared.wake.notify_all();
        let committer = self
            .committer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(committer) = committer {
            let joined = tokio::task::spawn_blocking(move || committer.join()).await;
            if !matches!(joined, Ok(Ok(()))) {
                tracing::error!("the index committer failed");
            }
        }
    }
}
