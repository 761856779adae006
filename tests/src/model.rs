//! The embedding model of the tests of semantic search.

use std::path::{Path, PathBuf};

/// all-MiniLM-L6-v2 for `--embedder local:DIR`: the folder in
/// `ENGRAM_TEST_MODEL`, else the one `scripts/fetch-model.sh` (run by the
/// test command) fetches into the workspace's target folder.
pub fn test_model() -> PathBuf {
    let dir = std::env::var_os("ENGRAM_TEST_MODEL").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/models/all-MiniLM-L6-v2"),
        PathBuf::from,
    );
    assert!(
        dir.join("model.safetensors").exists(),
        "no test model in {}: run scripts/fetch-model.sh",
        dir.display()
    );
    dir
}
