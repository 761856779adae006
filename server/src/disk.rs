//! Running out of disk space.
//!
//! A full disk must not cost an acknowledged write, must not stop reads, and
//! must not lock the operator out of the calls that free space (DeleteMemory,
//! Forget). So the data folder holds a reserve file (`<database>.reserve`)
//! of [`RESERVE_BYTES`]. The first write that fails for want of space — in
//! the database, its log, or the search index — puts the storage in the
//! *full* state: the reserve is deleted, which gives the writes that free
//! space room to commit (a delete grows the write-ahead log before it
//! shrinks anything), and writes that add data are refused with
//! RESOURCE_EXHAUSTED instead of being tried and eating that room. While
//! full, [`DiskSpace::try_resume`] runs every [`PROBE_EVERY`]: once the
//! folder has the reserve and [`HEADROOM_BYTES`] more free, the reserve is
//! written again and writes resume, with no restart.
//!
//! The state is visible as the `engram_storage_full` gauge, in the log (one
//! line when it fills, one when it resumes) and in the health service
//! ([`crate::server::WRITES_HEALTH`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;

use crate::metrics;

/// The space kept back for the writes that free space.
pub const RESERVE_BYTES: u64 = 4 << 20;
/// Free space needed, besides the reserve, before writes resume: without
/// it, the first writes after resuming would fill the disk again at once.
pub const HEADROOM_BYTES: u64 = 4 << 20;
/// How often a full storage checks whether space is back.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);
/// The reserve is written in pieces of this size.
const WRITE_CHUNK: usize = 64 << 10;

/// What the caller of a refused write is told: why, and what to do.
pub const FULL_MESSAGE: &str = "storage is full: writes are refused until space is freed \
     (reads, DeleteMemory and Forget still work; the operator should free or add disk space \
     in the data folder); writes resume by themselves";

/// The storage's fullness, shared by the store's writer, the search index
/// and the health service.
#[derive(Debug)]
pub struct DiskSpace {
    reserve: PathBuf,
    folder: PathBuf,
    full: watch::Sender<bool>,
}

impl DiskSpace {
    /// The state for the database at `database` (its reserve beside it),
    /// not full.
    pub fn new(database: &Path) -> DiskSpace {
        let mut reserve = database.as_os_str().to_owned();
        reserve.push(".reserve");
        let folder = match database.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        DiskSpace {
            reserve: PathBuf::from(reserve),
            folder,
            full: watch::Sender::new(false),
        }
    }

    /// The reserve file.
    pub fn reserve_path(&self) -> &Path {
        &self.reserve
    }

    /// Gives the reserve back before the database is opened, so that opening
    /// (its shared-memory file, its log) has room on a full disk; the caller
    /// then calls [`DiskSpace::start`].
    pub fn release_for_start(&self) {
        release(&self.reserve);
    }

    /// After the database is open: writes the reserve, or, when there is no
    /// room for it, starts in the full state with one log line.
    pub fn start(&self) {
        if !self.try_resume() && !self.is_full() {
            self.full.send_replace(true);
            metrics::recorders().storage_full.set(1);
            tracing::error!(
                folder = %self.folder.display(),
                "storage is full at start: serving reads, DeleteMemory and Forget; other writes \
                 are refused until space is freed in the data folder"
            );
        }
    }

    /// Whether the storage is full (writes that add data are refused).
    pub fn is_full(&self) -> bool {
        *self.full.borrow()
    }

    /// Follows the state: `true` while full.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.full.subscribe()
    }

    /// Notes that a write failed for want of space (`what` failed: the
    /// database, the search index): enters the full state, releasing the
    /// reserve. Once per filling: later calls change nothing.
    pub fn filled(&self, what: &str) {
        if self.full.send_replace(true) {
            return;
        }
        release(&self.reserve);
        metrics::recorders().storage_full.set(1);
        tracing::error!(
            failed = what,
            folder = %self.folder.display(),
            reserve = %self.reserve.display(),
            "storage is full: writes are refused until space is freed; reads, DeleteMemory and \
             Forget still work (the reserve is released for them); writes resume by themselves"
        );
    }

    /// Whether the folder's free space is below the reserve's size, so that
    /// an I/O error of a write is taken for a full disk.
    pub fn is_low(&self) -> bool {
        available(&self.folder).is_some_and(|free| free < RESERVE_BYTES)
    }

    /// When full, checks whether space is back: with the reserve and
    /// [`HEADROOM_BYTES`] free, writes the reserve again and leaves the full
    /// state. Returns whether the storage is (now) not full.
    pub fn try_resume(&self) -> bool {
        if !self.is_full() && self.reserve.exists() {
            return true;
        }
        let Some(free) = available(&self.folder) else {
            return false;
        };
        if free < RESERVE_BYTES + HEADROOM_BYTES {
            return false;
        }
        if let Err(err) = write_reserve(&self.reserve) {
            release(&self.reserve);
            tracing::debug!(error = %err, "writing the storage reserve failed");
            return false;
        }
        if self.full.send_replace(false) {
            metrics::recorders().storage_full.set(0);
            tracing::info!(
                folder = %self.folder.display(),
                "storage has room again: writes resume"
            );
        }
        true
    }
}

/// Whether `err`, or an error it was caused by, says that the disk is full
/// (ENOSPC; SQLite reports its own SQLITE_FULL, see the store).
pub fn is_full_error(err: &(dyn std::error::Error + 'static)) -> bool {
    let enospc = rustix::io::Errno::NOSPC.raw_os_error();
    let mut next = Some(err);
    while let Some(err) = next {
        let io = err.downcast_ref::<std::io::Error>().or_else(|| {
            err.downcast_ref::<std::sync::Arc<std::io::Error>>()
                .map(AsRef::as_ref)
        });
        if io.is_some_and(|io| {
            io.kind() == std::io::ErrorKind::StorageFull || io.raw_os_error() == Some(enospc)
        }) {
            return true;
        }
        // Some libraries (tantivy's indexing threads) pass an I/O error on as
        // text only.
        if err.to_string().contains(&format!("(os error {enospc})")) {
            return true;
        }
        next = err.source();
    }
    false
}

/// Free space for unprivileged writers in `folder`, in bytes.
fn available(folder: &Path) -> Option<u64> {
    match rustix::fs::statvfs(folder) {
        Ok(stat) => Some(stat.f_bavail.saturating_mul(stat.f_frsize)),
        Err(err) => {
            tracing::warn!(folder = %folder.display(), error = %err, "cannot read free disk space");
            None
        }
    }
}

/// Writes the reserve with real blocks (a file merely set to a length would
/// be sparse and hold nothing back).
fn write_reserve(path: &Path) -> std::io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    let chunk = vec![0u8; WRITE_CHUNK];
    let mut written = 0u64;
    while written < RESERVE_BYTES {
        file.write_all(&chunk)?;
        written += WRITE_CHUNK as u64;
    }
    file.sync_all()
}

fn release(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => {
            tracing::warn!(reserve = %path.display(), error = %err, "cannot release the storage reserve");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_is_found_through_wrappers_and_text() {
        let enospc = std::io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error());
        assert!(is_full_error(&enospc));
        let wrapped = tantivy::TantivyError::from(std::io::Error::from_raw_os_error(
            rustix::io::Errno::NOSPC.raw_os_error(),
        ));
        assert!(is_full_error(&wrapped), "{wrapped:?}");
        let text = tantivy::TantivyError::ErrorInThread(format!("{enospc}"));
        assert!(is_full_error(&text), "{text}");
        let other = std::io::Error::from_raw_os_error(rustix::io::Errno::ACCESS.raw_os_error());
        assert!(!is_full_error(&other));
    }

    #[test]
    fn a_storage_with_room_writes_its_reserve_and_is_not_full() {
        let dir = tempfile::tempdir().expect("temp dir");
        let disk = DiskSpace::new(&dir.path().join("engram.db"));
        disk.release_for_start();
        disk.start();
        assert!(!disk.is_full());
        let reserve = std::fs::metadata(disk.reserve_path()).expect("the reserve");
        assert_eq!(reserve.len(), RESERVE_BYTES);

        disk.filled("a test");
        assert!(disk.is_full());
        assert!(!disk.reserve_path().exists(), "released when full");
        assert!(disk.try_resume(), "the temp dir has room");
        assert!(!disk.is_full());
        assert!(disk.reserve_path().exists(), "written again");
    }
}
