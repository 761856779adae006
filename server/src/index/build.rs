//! Opening the index: trusting it and catching up from its checkpoint, or
//! rebuilding it from the database.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use tantivy::directory::{Directory as _, INDEX_WRITER_LOCK, MmapDirectory};
use tantivy::indexer::IndexWriterOptions;
use tantivy::{Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, TantivyDocument};

use super::document::{self, Fields, IndexedDoc};
use super::{FEED_BATCH, IndexOptions, WRITER_MEMORY};
use crate::domain::{Memory, Micros, now_micros};
use crate::store::Store;

/// Memories read from the database at a time while rebuilding.
const SCAN_BATCH: usize = 10_000;
/// Indexing threads and memory while rebuilding (before serving, so the
/// index may have the whole machine).
const BUILD_THREADS: usize = 2;
const BUILD_MEMORY: usize = 256 << 20;
/// How often progress is logged.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// What a commit's payload records: which database the index was built
/// from, and how far into its change feed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    pub format: u32,
    pub database_id: String,
    /// Every feed change up to this one is in the index.
    pub feed: i64,
}

impl Checkpoint {
    pub fn payload(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// How far a rebuild or a catch-up has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// "indexing memories" or "catching up with the change feed".
    pub phase: &'static str,
    pub done: u64,
    /// The total expected (an estimate while catching up).
    pub total: u64,
}

/// A ready index: its serving writer and reader, and the feed position its
/// last commit stands for.
pub struct Opened {
    pub writer: IndexWriter,
    pub reader: IndexReader,
    pub fields: Fields,
    pub watermark: i64,
    pub checkpoint: Checkpoint,
}

/// Logs progress at most every [`PROGRESS_EVERY`], and when a phase ends.
pub fn log_progress(progress: Progress) {
    use std::sync::Mutex;
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    let finished = progress.done >= progress.total;
    if progress.total == 0 {
        return; // nothing to do, nothing to report
    }
    if finished || last.is_none_or(|at| at.elapsed() >= PROGRESS_EVERY) {
        *last = Some(Instant::now());
        let percent = progress.done * 100 / progress.total;
        tracing::info!(
            done = progress.done,
            total = progress.total,
            "search index: {} ({percent}%)",
            progress.phase
        );
    }
}

/// Opens the index for serving (see [`super::TextIndex::open`]).
pub async fn open(
    options: &IndexOptions,
    store: &dyn Store,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<Opened> {
    prepare(options, store, progress, false).await
}

/// Rebuilds the index whatever state it is in.
pub async fn rebuild(
    options: &IndexOptions,
    store: &dyn Store,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<()> {
    prepare(options, store, progress, true).await.map(drop)
}

async fn prepare(
    options: &IndexOptions,
    store: &dyn Store,
    progress: &mut dyn FnMut(Progress),
    force_rebuild: bool,
) -> anyhow::Result<Opened> {
    let dir = options.dir.as_path();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the index folder {}", dir.display()))?;
    let database_id = store.database_id().await?;
    let head = *store.feed_head().borrow();
    let (_, fields) = document::schema();
    let trusted = match trust(dir, &database_id, head) {
        Ok(_) if force_rebuild => None,
        Ok(found) => Some(found),
        Err(reason) => {
            if dir.join("meta.json").exists() {
                tracing::warn!(index = %dir.display(), "rebuilding the search index: {reason}");
            } else {
                tracing::info!(index = %dir.display(), "building the search index");
            }
            None
        }
    };
    let rebuilding = trusted.is_none();
    let index = match &trusted {
        Some((index, _)) => index.clone(),
        None => create(dir)?,
    };
    let mut writer = writer(&index, dir, BUILD_THREADS, BUILD_MEMORY)?;
    let watermark = match trusted {
        Some((_, watermark)) => watermark,
        None => index_all(&writer, &fields, store, head, progress).await?,
    };
    let caught_up = catch_up(&writer, &fields, store, watermark, progress).await;
    let committed = match caught_up {
        Ok(caught_up) if rebuilding || caught_up != watermark => {
            let checkpoint = Checkpoint {
                format: document::FORMAT,
                database_id: database_id.clone(),
                feed: caught_up,
            };
            writer
                .prepare_commit()
                .and_then(|mut prepared| {
                    prepared.set_payload(&checkpoint.payload());
                    prepared.commit()
                })
                .map(|_| caught_up)
                .map_err(anyhow::Error::from)
        }
        other => other,
    };
    let caught_up = match committed {
        Ok(caught_up) => caught_up,
        // On a full disk a trusted index starts from its checkpoint, and the
        // follower replays the rest into the tail, in memory: the server
        // serves (reads, deletes) rather than fail to start.
        Err(err) if !rebuilding && err.chain().any(crate::disk::is_full_error) => {
            store.disk_space().filled("the search index");
            tracing::warn!(
                index = %dir.display(),
                "the disk is full: the search index catches up in memory, and commits once space is freed"
            );
            watermark
        }
        Err(err) => return Err(err),
    };
    let checkpoint = Checkpoint {
        format: document::FORMAT,
        database_id,
        feed: caught_up,
    };
    // The serving writer uses one thread: the other core serves requests.
    drop(writer);
    let writer = self::writer(&index, dir, 1, WRITER_MEMORY)?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok(Opened {
        writer,
        reader,
        fields,
        watermark: caught_up,
        checkpoint,
    })
}

/// The index in `dir` and its checkpoint's feed position, if it can be
/// trusted; otherwise why not.
fn trust(dir: &Path, database_id: &str, head: i64) -> Result<(Index, i64), String> {
    if !dir.join("meta.json").exists() {
        return Err("there is none yet".into());
    }
    let index = Index::open_in_dir(dir).map_err(|e| format!("it cannot be read ({e})"))?;
    if index.schema() != document::schema().0 {
        return Err("its schema is not this server's".into());
    }
    document::register_tokenizer(&index);
    let metas = index
        .load_metas()
        .map_err(|e| format!("its metadata cannot be read ({e})"))?;
    let checkpoint: Checkpoint = metas
        .payload
        .as_deref()
        .and_then(|p| serde_json::from_str(p).ok())
        .ok_or("it has no checkpoint")?;
    if checkpoint.format != document::FORMAT {
        return Err(format!(
            "it has format {}, this server writes {}",
            checkpoint.format,
            document::FORMAT
        ));
    }
    if checkpoint.database_id != database_id {
        return Err("it was built from another database".into());
    }
    if checkpoint.feed > head {
        return Err(format!(
            "it has changes the database does not (feed {} > {head}): the database was restored or lost its latest writes",
            checkpoint.feed
        ));
    }
    Ok((index, checkpoint.feed))
}

/// A new, empty index in `dir`, replacing whatever index was there.
fn create(dir: &Path) -> anyhow::Result<Index> {
    let directory = MmapDirectory::open(dir)?;
    // Hold the writer lock while clearing, so a running server's index is
    // never pulled from under it.
    let _lock = directory
        .acquire_lock(&INDEX_WRITER_LOCK)
        .map_err(|_| in_use(dir))?;
    let lock_name = INDEX_WRITER_LOCK.filepath.as_os_str();
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == lock_name {
            continue;
        }
        if !is_index_file(&entry) {
            bail!(
                "{} holds {:?}, which is not part of a search index: give --index-dir an empty folder or one made by engram-server",
                dir.display(),
                entry.file_name()
            );
        }
        entries.push(entry.path());
    }
    for path in entries {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
    }
    let (schema, _) = document::schema();
    let index = Index::create(directory, schema, IndexSettings::default())?;
    document::register_tokenizer(&index);
    Ok(index)
}

/// Whether a folder entry is a file tantivy writes: its metadata and locks,
/// or a segment file (a 32-digit hexadecimal id and an extension).
fn is_index_file(entry: &std::fs::DirEntry) -> bool {
    let name = entry.file_name();
    let name = name.to_string_lossy();
    let segment_file = name
        .split_once('.')
        .is_some_and(|(id, _)| id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()));
    entry.file_type().is_ok_and(|t| t.is_file())
        && (segment_file || name == "meta.json" || name.starts_with('.'))
}

/// An index folder's writer lock, held by whoever changes the database
/// behind every server's back (an import): no server can start on the
/// folder meanwhile, and taking it fails while one runs.
pub struct FolderLock {
    _held: tantivy::directory::DirectoryLock,
}

/// Takes the writer lock of the index folder `dir` (created when missing).
pub fn lock(dir: &Path) -> anyhow::Result<FolderLock> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the index folder {}", dir.display()))?;
    let directory = MmapDirectory::open(dir)?;
    let held = directory
        .acquire_lock(&INDEX_WRITER_LOCK)
        .map_err(|_| in_use(dir))?;
    Ok(FolderLock { _held: held })
}

fn in_use(dir: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "the search index in {} is in use by another engram-server (one index folder serves one server; see --index-dir)",
        dir.display()
    )
}

fn writer(index: &Index, dir: &Path, threads: usize, memory: usize) -> anyhow::Result<IndexWriter> {
    let options = IndexWriterOptions::builder()
        .num_worker_threads(threads)
        .memory_budget_per_thread(memory / threads)
        .num_merge_threads(1)
        .build();
    index.writer_with_options(options).map_err(|err| match err {
        tantivy::TantivyError::LockFailure(..) => in_use(dir),
        other => other.into(),
    })
}

/// Whether a memory can ever be found again: an expired one cannot.
fn searchable(memory: &Memory, now: Micros) -> bool {
    memory.expire_time.is_none_or(|t| t > now)
}

/// The tantivy documents of the searchable memories of `page`, analysed on a
/// blocking thread (analysis is the CPU-heavy part of indexing).
async fn documents(fields: Fields, page: Vec<Memory>) -> anyhow::Result<Vec<TantivyDocument>> {
    let now = now_micros();
    Ok(tokio::task::spawn_blocking(move || {
        page.iter()
            .filter(|m| searchable(m, now))
            .map(|m| fields.document(&IndexedDoc::new(m)))
            .collect()
    })
    .await?)
}

/// Indexes every memory of the database; returns the feed position the
/// scan started from (what changes during it is caught up afterwards).
async fn index_all(
    writer: &IndexWriter,
    fields: &Fields,
    store: &dyn Store,
    head: i64,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<i64> {
    writer.delete_all_documents()?;
    let total = u64::try_from(store.count_memories().await?).unwrap_or(0);
    let (mut after, mut done) = (0, 0u64);
    let mut report = |done: u64| {
        progress(Progress {
            phase: "indexing memories",
            done,
            total,
        })
    };
    report(0);
    loop {
        let page = store.scan_memories(after, SCAN_BATCH).await?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        done += page.len() as u64;
        for doc in documents(*fields, page).await? {
            writer.add_document(doc)?;
        }
        report(done.min(total));
    }
    if done < total {
        // Memories deleted during the scan: the phase is over all the same.
        report(total);
    }
    Ok(head)
}

/// Applies the feed's changes after `watermark`; returns the new position.
async fn catch_up(
    writer: &IndexWriter,
    fields: &Fields,
    store: &dyn Store,
    mut watermark: i64,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<i64> {
    let start = watermark;
    let head = (*store.feed_head().borrow()).max(start);
    let total = u64::try_from(head - start).unwrap_or(0);
    loop {
        let changes = store.changes_after(watermark, FEED_BATCH).await?;
        let Some(last) = changes.last() else { break };
        watermark = last.seq;
        // Every change carries its memory's current state, so only one
        // change per memory counts (else the memory would be added twice).
        let mut seen = HashSet::new();
        let mut present = Vec::new();
        for change in changes.into_iter().rev() {
            if seen.insert(change.memory_seq) {
                writer.delete_term(fields.seq_term(change.memory_seq));
                present.extend(change.memory);
            }
        }
        for doc in documents(*fields, present).await? {
            writer.add_document(doc)?;
        }
        let done = u64::try_from(watermark - start).unwrap_or(0);
        progress(Progress {
            phase: "catching up with the change feed",
            done: done.min(total),
            total: total.max(done),
        });
    }
    Ok(watermark)
}
