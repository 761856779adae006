//! `engram-server backup`: a consistent copy of the database, taken while a
//! server is running and writing (see [`crate::store::sqlite::backup`]).

use std::time::Instant;

use super::files::{WholeFile, human_size};
use crate::config::{BackupArgs, Config};
use crate::store::sqlite::backup;

/// Copies `--database` into `--to`, reporting on standard error.
pub async fn run(config: &Config, args: &BackupArgs) -> anyhow::Result<()> {
    let source = config.sqlite_path("backup")?;
    let file = WholeFile::prepare(&args.to, args.force)?;
    let started = Instant::now();
    eprintln!("backing up {} to {}", source.display(), args.to.display());
    let copied = backup::copy(&source, file.temp_path(), config.sqlite_busy_timeout).await?;
    let size = file.commit()?;
    eprintln!(
        "backed up {} memories ({}) to {} in {:.1}s",
        copied.memories,
        human_size(size),
        args.to.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
