//! The tools of `tests/interop/`, which the interop tests drive.

use std::path::{Path, PathBuf};

/// A tool that `tests/interop/setup.sh` installs (the test command runs it
/// first), by its path under `tests/interop/`.
pub fn interop_tool(relative: &str) -> PathBuf {
    let path = interop_dir().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run tests/interop/setup.sh first (./scripts/test.sh does)",
        path.display()
    );
    path
}

/// `tests/interop/`.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop")
}
