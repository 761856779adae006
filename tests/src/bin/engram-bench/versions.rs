//! `versions`: another build beside this one.

use std::path::Path;

use crate::Rounds;
use crate::compare::{Side, compare};

/// Another build (`baseline`) beside this workspace's (or
/// `--server-binary`), with default flags (and `embedder`, when given),
/// each on a fresh database of the
/// PostgreSQL server `database` names or else a SQLite file: the before
/// and after of a change.
pub async fn versions(
    config: &Rounds,
    baseline: &Path,
    database: Option<&str>,
    embedder: Option<&str>,
) -> anyhow::Result<()> {
    let args: Vec<&str> = embedder.map(|e| vec!["--embedder", e]).unwrap_or_default();
    compare(
        config,
        "versions",
        [
            Side {
                label: "baseline",
                binary: Some(baseline),
                args: &args,
                database,
            },
            Side {
                label: "this build",
                binary: config.server_binary.as_deref(),
                args: &args,
                database,
            },
        ],
    )
    .await?;
    Ok(())
}
