//! Files the operator commands write (backups, exports): whole or not at
//! all. A file is written under a temporary name in its own folder, synced,
//! and only then given its name, so a crash or a failure never leaves a
//! partial file under the name asked for — whoever finds the file can trust
//! it is complete.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// A file being written under a temporary name; [`WholeFile::commit`] gives
/// it its name, and dropping it uncommitted removes it.
#[derive(Debug)]
pub struct WholeFile {
    target: PathBuf,
    temp: PathBuf,
    force: bool,
    committed: bool,
}

impl WholeFile {
    /// Prepares to write `target`. An existing `target` is refused unless
    /// `force` (then it is replaced, atomically, on commit). Nothing is
    /// created yet: the caller writes [`WholeFile::temp_path`].
    pub fn prepare(target: &Path, force: bool) -> anyhow::Result<WholeFile> {
        if !force && target.symlink_metadata().is_ok() {
            bail!(
                "{} already exists; choose another name, or pass --force to replace it",
                target.display()
            );
        }
        let name = target
            .file_name()
            .with_context(|| format!("{} does not name a file", target.display()))?;
        let folder = folder_of(target);
        if !folder.is_dir() {
            bail!("the folder {} does not exist", folder.display());
        }
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.partial", std::process::id()));
        let temp = folder.join(temp_name);
        // A leftover of an earlier run that had this process id.
        let _ = std::fs::remove_file(&temp);
        Ok(WholeFile {
            target: target.to_owned(),
            temp,
            force,
            committed: false,
        })
    }

    /// Creates the temporary file for writing.
    pub fn create(&self) -> anyhow::Result<File> {
        File::options()
            .write(true)
            .create_new(true)
            .open(&self.temp)
            .with_context(|| format!("cannot create {}", self.temp.display()))
    }

    /// Where the content goes until it is complete.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Syncs the complete file to disk and gives it its name (refusing, as
    /// [`WholeFile::prepare`] did, a file that appeared there meanwhile
    /// unless `force`); returns its size in bytes.
    pub fn commit(mut self) -> anyhow::Result<u64> {
        let file = File::open(&self.temp)
            .with_context(|| format!("cannot open {}", self.temp.display()))?;
        file.sync_all()
            .with_context(|| format!("cannot sync {}", self.temp.display()))?;
        let size = file.metadata()?.len();
        drop(file);
        if self.force {
            std::fs::rename(&self.temp, &self.target)
        } else {
            // A hard link, unlike a rename, never replaces an existing file.
            std::fs::hard_link(&self.temp, &self.target)
                .and_then(|()| std::fs::remove_file(&self.temp))
        }
        .with_context(|| format!("cannot name the file {}", self.target.display()))?;
        self.committed = true;
        // The new name is durable once the folder is synced too.
        File::open(folder_of(&self.target))
            .and_then(|folder| folder.sync_all())
            .with_context(|| format!("cannot sync the folder of {}", self.target.display()))?;
        Ok(size)
    }
}

impl Drop for WholeFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// The folder a file is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// A size for people: `532 B`, `48.2 KB`, `1.3 GB` (powers of 1000).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn a_file_appears_only_when_committed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("out.jsonl");
        let file = WholeFile::prepare(&target, false).expect("prepare");
        file.create()
            .expect("create")
            .write_all(b"hello")
            .expect("write");
        assert!(!target.exists(), "not before the commit");
        assert_eq!(file.commit().expect("commit"), 5);
        assert_eq!(std::fs::read(&target).expect("read"), b"hello");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            1,
            "no temporary file is left"
        );
    }

    #[test]
    fn an_abandoned_file_leaves_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("out.jsonl");
        let file = WholeFile::prepare(&target, false).expect("prepare");
        file.create().expect("create");
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
    }

    #[test]
    fn an_existing_file_is_replaced_only_by_force() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("out.jsonl");
        std::fs::write(&target, "old").expect("write");
        let refused = WholeFile::prepare(&target, false).expect_err("exists");
        assert!(refused.to_string().contains("--force"), "{refused}");
        let file = WholeFile::prepare(&target, true).expect("prepare");
        file.create()
            .expect("create")
            .write_all(b"new")
            .expect("write");
        file.commit().expect("commit");
        assert_eq!(std::fs::read(&target).expect("read"), b"new");
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_size(532), "532 B");
        assert_eq!(human_size(48_200), "48.2 KB");
        assert_eq!(human_size(1_300_000_000), "1.3 GB");
    }
}
