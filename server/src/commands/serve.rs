//! `engram-server` without a subcommand: opens the store, the search
//! indexes, the embedder and the LLM, starts the background jobs and the
//! metrics endpoint, and serves gRPC until SIGINT or SIGTERM.

use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tonic::transport::{Certificate, Identity};

use crate::config::Config;
use crate::embed::{BackfillProgress, Embedder, EmbedderConfig, Pooling};
use crate::engine::search::{Retrieval, Semantic};
use crate::grpc::auth::{ApiKeys, KeyIds};
use crate::index::{IndexOptions, TextIndex, VectorIndex};
use crate::jobs::embedding_backfill;
use crate::jobs::retention::{self, Retention};
use crate::jobs::{entity_backfill, entity_llm};
use crate::llm::LlmClient;
use crate::metrics::exporter::{Exporter, Measured, NamespaceSizes};
use crate::metrics::{self, http::METRICS_PATH};
use crate::server;
use crate::store::Store;

/// Serves until a signal says to stop.
pub async fn run(config: &Config) -> anyhow::Result<()> {
    config.check_protected()?;
    let store = super::open_store(config).await?;
    let index_options = IndexOptions {
        dir: config.index_dir()?,
    };

    let llm = match config.llm()? {
        Some(llm) => {
            tracing::info!(base_url = %llm.base_url, model = %llm.model, key = llm.api_key.is_some(), "LLM configured");
            Some(Arc::new(LlmClient::new(
                llm,
                config.llm_concurrency as usize,
            )?))
        }
        None => None,
    };

    let embedder = open_embedder(config).await?;
    let security = security(config, &*store).await?;
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
        let progress = Arc::new(BackfillProgress::default());
        let backfill = tokio::spawn(embedding_backfill::run(
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
        reranker: config.reranker()?,
    });

    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let address = listener.local_addr()?;
    let shutdown = shutdown_signal()?;
    reload_keys_on_hangup(security.api_keys.clone())?;
    let shutdown = start_operations(config, &store, &retrieval.text, llm.clone(), shutdown).await?;
    tracing::info!(
        %address,
        database = %config.database()?,
        index = %index_options.dir.display(),
        tls = security.tls.is_some(),
        client_certificates = security.client_ca.is_some(),
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
        server::Limits {
            max_request_bytes: config.max_request_size,
            shutdown_grace: config.shutdown_grace,
            stream_idle_timeout: config.stream_idle_timeout,
            overload: config.overload(),
            on_secret: config.on_secret(),
            contradictions: config.contradictions,
            merge_near_duplicates: config.merge_near_duplicates,
            keep_transcripts: config.keep_transcripts,
        },
    )
    .await
}

/// Starts what runs beside the gRPC services: retention, the entity
/// backfill, the model's reading of entities (with `llm`), and the metrics
/// endpoint with `--metrics-listen` (its address printed on standard
/// output, for scripts and tests). Returns `shutdown`, which now also
/// stops those jobs, so that none writes to a store being closed.
async fn start_operations<S: Future<Output = ()>>(
    config: &Config,
    store: &Arc<dyn Store>,
    index: &Arc<TextIndex>,
    llm: Option<Arc<LlmClient>>,
    shutdown: S,
) -> anyhow::Result<impl Future<Output = ()> + use<S>> {
    if let Some(listen) = config.metrics_listen {
        let listener = TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen} (--metrics-listen)"))?;
        let address = listener.local_addr()?;
        let measured = Box::new(Measures {
            store: store.clone(),
            index: index.clone(),
        });
        let exporter = Arc::new(Exporter::new(measured, crate::grpc::metrics::register));
        tokio::spawn(metrics::http::serve(listener, exporter));
        tracing::info!(%address, "serving metrics at http://{address}{METRICS_PATH}");
        println!("engram-server metrics on {address}");
    }
    let retention = tokio::spawn(retention::run(
        store.clone(),
        Retention {
            interval: config.retention_interval,
            request_id_ttl: config.request_id_ttl,
        },
    ));
    let entity_backfill = tokio::spawn(entity_backfill::run(store.clone()));
    tokio::task::spawn_blocking(crate::engine::contradictions::warm_up);
    let entity_llm = llm.map(|model| tokio::spawn(entity_llm::run(store.clone(), model)));
    Ok(async move {
        shutdown.await;
        retention.abort();
        entity_backfill.abort();
        if let Some(job) = entity_llm {
            job.abort();
        }
    })
}

/// What a scrape reads of the store and the index.
struct Measures {
    store: Arc<dyn Store>,
    index: Arc<TextIndex>,
}

#[async_trait::async_trait]
impl Measured for Measures {
    async fn database_bytes(&self) -> crate::error::Result<i64> {
        self.store.database_bytes().await
    }

    async fn namespace_sizes(&self, limit: usize) -> crate::error::Result<NamespaceSizes> {
        let sizes = self.store.namespace_sizes(limit).await?;
        Ok(NamespaceSizes {
            largest: sizes.largest,
            memories: sizes.memories,
            namespaces: sizes.namespaces,
        })
    }

    fn index_lag(&self) -> i64 {
        self.index.lag()
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

/// The API keys and TLS identity named by the flags, read at start so a
/// missing or empty file stops the server before it listens. Keys are named
/// with `store`'s secret.
async fn security(config: &Config, store: &dyn Store) -> anyhow::Result<server::Security> {
    let api_keys = match &config.auth_keys {
        Some(path) => {
            let secret = store
                .key_id_secret()
                .await
                .context("reading the database's secret for API key ids")?;
            ApiKeys::load(path, KeyIds::new(&secret))?
        }
        None => ApiKeys::open(),
    };
    let read = |path: &std::path::Path| {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let (tls, client_ca) = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => {
            // rustls needs its cryptography chosen once per process.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let identity = Identity::from_pem(read(cert)?, read(key)?);
            let client_ca = config
                .tls_client_ca
                .as_deref()
                .map(|path| read(path).map(Certificate::from_pem))
                .transpose()?;
            (Some(identity), client_ca)
        }
        _ => (None, None),
    };
    let security = server::Security {
        api_keys,
        tls,
        client_ca,
        browsers: config.browser_access(),
        hosts: config.host_policy(),
    };
    // Parse the certificates now, so a bad one stops the server before it
    // says it is listening.
    if let Some(tls) = security.tls_config() {
        let flags = if security.client_ca.is_some() {
            "--tls-cert, --tls-key and --tls-client-ca are not a usable PEM certificate, key and CA"
        } else {
            "--tls-cert and --tls-key are not a usable PEM certificate and key"
        };
        tonic::transport::Server::builder()
            .tls_config(tls)
            .context(flags)?;
    }
    Ok(security)
}

/// Reads the API key file again on each SIGHUP; a file that cannot be used
/// leaves the keys in force, and says why.
fn reload_keys_on_hangup(keys: ApiKeys) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangups = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                match keys.reload() {
                    Ok(Some(count)) => tracing::info!(keys = count, "SIGHUP: API keys reloaded"),
                    Ok(None) => tracing::info!("SIGHUP: no --auth-keys file to reload"),
                    Err(error) => tracing::error!(
                        error = format!("{error:#}"),
                        "SIGHUP: the API key file cannot be used; the keys in force stay"
                    ),
                }
            }
        });
    }
    #[cfg(not(unix))]
    drop(keys);
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
