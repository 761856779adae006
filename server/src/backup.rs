//! `engram-server backup`: a consistent copy of the database, taken while a
//! server is running and writing (see [`crate::store::sqlite::backup`]).

use std::path::PathBuf;
use std::time::Instant;

use crate::config::Config;
use crate::files::{WholeFile, human_size};
use crate::store::sqlite::backup;

/// `backup`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub struct BackupArgs {
    /// The file to write the backup to: a SQLite database, which a server
    /// can be started on as it is. It is written under a temporary name in
    /// the same folder and renamed once complete and synced, so FILE is
    /// never a partial copy.
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,

    /// Replace FILE if it already exists (by default an existing file is
    /// left alone and the backup refused).
    #[arg(long)]
    pub force: bool,
}

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
