//! `engram-server`: parses the flags, starts logging, and runs the command
//! they name (see [`engram_server::commands`]): the server by default.

use std::io::IsTerminal;

use anyhow::Context as _;
use clap::Parser as _;
use engram_server::commands;
use engram_server::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

/// mimalloc rather than the C library's allocator: the server allocates
/// small, short-lived buffers on many threads, where glibc's malloc spent a
/// tenth of the CPU of a write-heavy load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    init_logging(&config)?;
    commands::run(&config).await
}

fn init_logging(config: &Config) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(&config.log)
        .with_context(|| format!("--log {:?} is not a valid filter", config.log))?;
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match config.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    Ok(())
}
