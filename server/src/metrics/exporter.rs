//! What a scrape reads: every metric in one registry, and the values that
//! are measured only when asked for (the database's size, memories per
//! namespace, the search index's lag) through [`Measured`], which the
//! server implements over its store and index.

use std::time::{Duration, Instant};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::error::Result;

/// The media type of the exposition: the OpenMetrics text format, which
/// Prometheus asks for first and which is what the registry encodes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How many namespaces are named in `engram_namespace_memories`: the
/// largest. A series per tenant would grow with the tenants; the totals
/// cover the rest.
pub const TOP_NAMESPACES: usize = 20;

/// Memories per namespace are counted at most this often (scrapes in
/// between see the last count): counting reads an index entry of every
/// memory, which takes a while at a million.
const COUNT_EVERY: Duration = Duration::from_secs(5);

/// What a scrape measures when it is asked for.
#[async_trait::async_trait]
pub trait Measured: Send + Sync {
    /// The database's size in bytes.
    async fn database_bytes(&self) -> Result<i64>;

    /// How many memories the `limit` largest namespaces hold, and the
    /// totals of all (expensive: not for every scrape).
    async fn namespace_sizes(&self, limit: usize) -> Result<NamespaceSizes>;

    /// Changes committed to the database that the full-text index has not
    /// applied yet.
    fn index_lag(&self) -> i64;
}

/// Memories per namespace, as [`Measured::namespace_sizes`] counts them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceSizes {
    /// The largest namespaces with their memories, largest first.
    pub largest: Vec<(String, i64)>,
    /// Memories of all namespaces.
    pub memories: i64,
    /// Namespaces that hold a memory.
    pub namespaces: i64,
}

/// Renders the metrics for a scrape.
pub struct Exporter {
    registry: Registry,
    measured: Box<dyn Measured>,
    database_bytes: Gauge,
    memories: Gauge,
    namespaces: Gauge,
    namespace_memories: Family<[(&'static str, String); 1], Gauge>,
    index_lag: Gauge,
    /// When memories per namespace were last counted. Held by a scrape while
    /// it renders, so that scrapes take turns and a count runs once.
    counted: tokio::sync::Mutex<Option<Instant>>,
}

impl Exporter {
    /// The exporter of every metric: those `register_recorded` adds
    /// (recorded by layers above this one, such as the gRPC layer's), the
    /// process-wide [`super::recorders`], and what is read on demand from
    /// `measured`.
    pub fn new(
        measured: Box<dyn Measured>,
        register_recorded: impl FnOnce(&mut Registry),
    ) -> Exporter {
        let mut registry = Registry::default();
        register_recorded(&mut registry);
        super::recorders().register(&mut registry);
        let (database_bytes, memories, namespaces, index_lag) = Default::default();
        let namespace_memories = Family::default();
        registry.register(
            "engram_database_size_bytes",
            "Size of the database",
            Gauge::clone(&database_bytes),
        );
        registry.register(
            "engram_memories",
            "Memories stored, of all namespaces (expired ones until they are purged)",
            Gauge::clone(&memories),
        );
        registry.register(
            "engram_namespaces",
            "Namespaces that hold memories",
            Gauge::clone(&namespaces),
        );
        registry.register(
            "engram_namespace_memories",
            format!(
                "Memories stored per namespace (expired ones until they are purged), \
                 of the {TOP_NAMESPACES} largest namespaces, counted at most every {} s",
                COUNT_EVERY.as_secs()
            ),
            namespace_memories.clone(),
        );
        registry.register(
            "engram_search_index_lag_changes",
            "Changes committed to the database that the full-text index has not applied yet",
            Gauge::clone(&index_lag),
        );
        Exporter {
            registry,
            measured,
            database_bytes,
            memories,
            namespaces,
            namespace_memories,
            index_lag,
            counted: tokio::sync::Mutex::new(None),
        }
    }

    /// Every metric, in the text format of [`CONTENT_TYPE`]. A value that
    /// cannot be read now keeps its last one (the failure is logged): a
    /// scrape answers whatever else fails.
    pub async fn render(&self) -> String {
        let mut counted = self.counted.lock().await;
        match self.measured.database_bytes().await {
            Ok(bytes) => {
                self.database_bytes.set(bytes);
            }
            Err(err) => tracing::warn!(error = %err, "metrics: reading the database's size failed"),
        }
        if counted.is_none_or(|at| at.elapsed() >= COUNT_EVERY) {
            match self.measured.namespace_sizes(TOP_NAMESPACES).await {
                Ok(sizes) => {
                    self.namespace_memories.clear();
                    for (namespace, count) in sizes.largest {
                        self.namespace_memories
                            .get_or_create(&[("namespace", namespace)])
                            .set(count);
                    }
                    self.memories.set(sizes.memories);
                    self.namespaces.set(sizes.namespaces);
                    *counted = Some(Instant::now());
                }
                Err(err) => {
                    tracing::warn!(error = %err, "metrics: counting memories per namespace failed");
                }
            }
        }
        self.index_lag.set(self.measured.index_lag());
        let mut text = String::new();
        // Writing to a String cannot fail; an encoder error would be a bug
        // in a metric, which must not take the scrape down.
        if let Err(err) = encode(&mut text, &self.registry) {
            tracing::error!(error = %err, "metrics: encoding failed");
        }
        text
    }
}
