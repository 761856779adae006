//! `versions`: another build beside this one.

use std::path::Path;

use crate::Rounds;
use crate::compare::{Side, compare};

/// Another build (`baseline`) beside this workspace's (or
/// `--server-binary`), with default flags: the before and after of a change.
pub async fn versions(config: &Rounds, baseline: &Path) -> anyhow::Result<()> {
    compare(
        config,
        "versions",
        [
            Side {
                label: "baseline",
                binary: Some(baseline),
                args: &[],
            },
            Side {
                label: "this build",
                binary: config.server_binary.as_deref(),
                args: &[],
            },
        ],
    )
    .await?;
    Ok(())
}
