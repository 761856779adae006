//! `engram-server`: config → open store → build services → serve.

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser as _;
use engram_server::config::{Config, Database, LogFormat, Synchronous};
use engram_server::llm::LlmClient;
use engram_server::server;
use engram_server::store::sqlite::{SqliteOptions, SqliteStore};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    init_logging(&config)?;

    let store = match config.database()? {
        Database::Sqlite(path) => {
            let mut options = SqliteOptions::new(path);
            options.synchronous_full = config.sqlite_synchronous == Synchronous::Full;
            options.busy_timeout = config.sqlite_busy_timeout;
            options.readers = config.sqlite_readers;
            Arc::new(SqliteStore::open(&options).await?)
        }
    };

    let llm = match config.llm()? {
        Some(llm) => {
            tracing::info!(base_url = %llm.base_url, model = %llm.model, key = llm.api_key.is_some(), "LLM configured");
            Some(Arc::new(LlmClient::new(llm)?))
        }
        None => None,
    };

    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let address = listener.local_addr()?;
    tracing::info!(%address, database = %config.database, "serving");
    // On standard output, for scripts and tests that start the server on port 0.
    println!("engram-server listening on {address}");

    server::serve(
        listener,
        store,
        llm,
        shutdown_signal(),
        config.shutdown_grace,
    )
    .await
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

/// Resolves on the first SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::error!(error = %err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => tracing::info!("received SIGINT"),
        () = terminate => tracing::info!("received SIGTERM"),
    }
}
