//! `engram-server`: config → open store → open index → build services →
//! serve; or an operator command (`reindex`, `backup`, `export`, `import`).

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser as _;
use engram_server::config::{Command, Config, Database, LogFormat, Synchronous};
use engram_server::embed::{Embedder, EmbedderConfig, Pooling, backfill};
use engram_server::engine::search::{Retrieval, Semantic};
use engram_server::grpc::auth::ApiKeys;
use engram_server::index::{IndexOptions, TextIndex, VectorIndex};
use engram_server::llm::LlmClient;
use engram_server::store::Store;
use engram_server::store::sqlite::{SqliteOptions, SqliteStore};
use engram_server::{backup, reindex, server, transfer};
use tokio::net::TcpListener;
use tonic::transport::{Identity, ServerTlsConfig};
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
    if let Some(command) = &config.command {
        return operate(&config, command).await;
    }

    let store = open_store(&config).await?;
    let index_options = IndexOptions {
        dir: config.index_dir()?,
    };

    let llm = match config.llm()? {
        Some(llm) => {
            tracing::info!(base_url = %llm.base_url, model = %llm.model, key = llm.api_key.is_some(), "LLM configured");
            Some(Arc::new(LlmClient::new(llm)?))
        }
        None => None,
    };

    let embedder = open_embedder(&config).await?;
    let security = security(&config)?;
    let vectors = embedder
        .as_ref()
        .map(|e| Arc::new(VectorIndex::new(&e.info().id, e.info().dimensions)));
    let index = Arc::new(
        TextIndex::open(&index_options, store.clone(), vectors.clone())
            .await
            .with_context(|| {
                format!(
                    "opening the search index in {}",
                    index_options.dir.display()
                )
            })?,
    );

    let semantic = embedder.zip(vectors).map(|(embedder, vectors)| {
        let progress = Arc::new(backfill::Progress::default());
        let backfill = tokio::spawn(backfill::run(
            store.clone(),
            embedder.clone(),
            progress.clone(),
        ))
        .abort_handle();
        Semantic {
            embedder,
            vectors,
            progress,
            backfill,
        }
    });
    let retrieval = Arc::new(Retrieval {
        text: index,
        semantic,
    });

    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let address = listener.local_addr()?;
    let shutdown = shutdown_signal()?;
    tracing::info!(
        %address,
        database = %config.database,
        index = %index_options.dir.display(),
        tls = security.tls.is_some(),
        api_keys = security.api_keys.len(),
        "serving"
    );
    // On standard output, for scripts and tests that start the server on port 0.
    println!("engram-server listening on {address}");

    server::serve(
        listener,
        store,
        retrieval,
        llm,
        security,
        shutdown,
        config.shutdown_grace,
    )
    .await
}

/// Runs an operator command instead of serving.
async fn operate(config: &Config, command: &Command) -> anyhow::Result<()> {
    match command {
        Command::Reindex => {
            let store = open_store(config).await?;
            let index_options = IndexOptions {
                dir: config.index_dir()?,
            };
            let rebuilt = reindex::run(&index_options, store.as_ref()).await;
            store.close().await;
            rebuilt
        }
        Command::Backup(args) => backup::run(config, args).await,
        Command::Export(args) => transfer::export::run(config, args).await,
        Command::Import(args) => transfer::import::run(config, args).await,
    }
}

/// The configured embedder, its model described in the log; a model that
/// cannot be loaded stops the server with the reason.
async fn open_embedder(config: &Config) -> anyhow::Result<Option<Arc<Embedder>>> {
    let embedder_config = config.embedder()?;
    let Some(embedder) = Embedder::open(&embedder_config)
        .await
        .with_context(|| format!("--embedder {}", describe(&embedder_config)))?
    else {
        tracing::info!("no embedder: search is full text only");
        return Ok(None);
    };
    let info = embedder.info();
    tracing::info!(
        model = %info.description,
        id = %info.id,
        dimensions = info.dimensions,
        pooling = info.pooling.map_or("the API's", |p| match p {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
        }),
        max_tokens = info.max_tokens,
        "embedder ready"
    );
    Ok(Some(Arc::new(embedder)))
}

/// `--embedder`'s value in words, for errors.
fn describe(config: &EmbedderConfig) -> String {
    match config {
        EmbedderConfig::None => "none".into(),
        EmbedderConfig::Local(dir) => format!("local:{}", dir.display()),
        EmbedderConfig::Api { api, .. } => format!("openai ({} at {})", api.model, api.base_url),
    }
}

async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn Store>> {
    match config.database()? {
        Database::Sqlite(path) => {
            let mut options = SqliteOptions::new(path);
            options.synchronous_full = config.sqlite_synchronous == Synchronous::Full;
            options.busy_timeout = config.sqlite_busy_timeout;
            options.readers = config.sqlite_readers;
            Ok(Arc::new(SqliteStore::open(&options).await?))
        }
    }
}

/// The API keys and TLS identity named by the flags, read at start so a
/// missing or empty file stops the server before it listens.
fn security(config: &Config) -> anyhow::Result<server::Security> {
    let api_keys = match &config.auth_keys {
        Some(path) => ApiKeys::load(path)?,
        None => ApiKeys::open(),
    };
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => {
            let read = |path: &std::path::Path| {
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
            };
            // rustls needs its cryptography chosen once per process.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let identity = Identity::from_pem(read(cert)?, read(key)?);
            // Parse them now, so a bad certificate or key stops the server
            // before it says it is listening.
            tonic::transport::Server::builder()
                .tls_config(ServerTlsConfig::new().identity(identity.clone()))
                .context("--tls-cert and --tls-key are not a usable PEM certificate and key")?;
            Some(identity)
        }
        _ => None,
    };
    Ok(server::Security { api_keys, tls })
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

/// Starts listening for SIGINT and SIGTERM at once, so a signal sent as soon
/// as the server says it is listening is never missed (and never kills it
/// uncleanly); the future resolves on the first one.
fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
        let mut terminate = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => tracing::info!("received SIGINT"),
                _ = terminate.recv() => tracing::info!("received SIGTERM"),
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                tracing::info!("received Ctrl-C");
            }
        })
    }
}
