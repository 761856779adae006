//! Embedding providers (DESIGN §7): none, a local sentence encoder (candle),
//! or an OpenAI-compatible embeddings API.
//!
//! Every vector is L2-normalised, so a dot product is a cosine. A model is
//! known by an id that changes whenever its vectors would (the weights,
//! tokenizer and pooling of a local model; the name and dimensions of an
//! API model); stored vectors carry it, and vectors of another id are
//! embedded again.

mod api;
mod bert;
mod local;
mod progress;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use self::local::LocalModel;
pub use self::progress::BackfillProgress;
use crate::metrics::{self, CallOutcome};
use crate::openai::{ApiClient, ApiConfig, ApiError};

/// Query vectors remembered, so a repeated query skips the model.
const QUERY_CACHE: usize = 1024;

/// Which embedder to use.
#[derive(Debug, Clone)]
pub enum EmbedderConfig {
    /// Lexical search only.
    None,
    /// A model folder (sentence-transformers layout).
    Local(PathBuf),
    /// An OpenAI-compatible API; `dimensions`, when given, is asked for and
    /// enforced, and otherwise learned from a first call at start.
    Api {
        api: ApiConfig,
        dimensions: Option<usize>,
    },
}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over the real tokens (all-MiniLM-L6-v2, e5).
    Mean,
    /// The first token's vector (bge).
    Cls,
}

/// What the vectors are.
#[derive(Debug, Clone)]
pub struct ModelInfo {
    /// Stored with every vector; a new id means re-embedding.
    pub id: String,
    /// For the log: where the model is.
    pub description: String,
    pub dimensions: usize,
    /// Known for local models.
    pub pooling: Option<Pooling>,
    /// The input cap of local models, in tokens.
    pub max_tokens: Option<usize>,
}

/// Why texts could not be embedded (the texts are tried again later).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    #[error("embeddings API: {0}")]
    Api(#[from] ApiError),
    #[error("embeddings API reply refused: {0}")]
    BadReply(String),
    #[error("local model: {0}")]
    Model(String),
    /// Not asked: it failed moments ago (see [`PAUSE_AFTER_FAILURE`]).
    #[error("skipped for {0:.1?} more: the embedder failed moments ago")]
    Paused(Duration),
}

/// After the embedder fails, searches (and outcome recording) do not ask it
/// for this long — they answer by words at once instead of each waiting for
/// an API that is down or hanging — unless a call succeeds sooner (the
/// backfill keeps trying, and its first success ends the pause).
pub const PAUSE_AFTER_FAILURE: Duration = Duration::from_secs(10);

impl EmbedError {
    /// Whether the embedder refuses these inputs, so that asking again
    /// cannot help: the API answered 400, 413 or 422 (too long, or content
    /// it will not take), or the local model failed on them. Everything else
    /// — timeouts, lost connections, 5xx, 401/403/404/408/429, replies of
    /// the wrong size or garbage — says the embedder is unavailable or
    /// misconfigured for now, and is retried.
    pub fn is_refusal(&self) -> bool {
        match self {
            EmbedError::Api(ApiError::Status(status)) => matches!(status, 400 | 413 | 422),
            EmbedError::Model(_) => true,
            EmbedError::Api(_) | EmbedError::BadReply(_) | EmbedError::Paused(_) => false,
        }
    }

    /// How the call that failed with this error ended, for the metrics.
    fn outcome(&self) -> CallOutcome {
        match self {
            EmbedError::Api(err) => CallOutcome::of_api_error(err),
            EmbedError::BadReply(_) => CallOutcome::BadReply,
            EmbedError::Model(_) => CallOutcome::Refused,
            EmbedError::Paused(_) => CallOutcome::Skipped,
        }
    }
}

/// Scales `vector` to length 1; false (and unchanged) when it is zero.
pub fn normalise(vector: &mut [f32]) -> bool {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return false;
    }
    for x in vector.iter_mut() {
        *x /= norm;
    }
    true
}

/// The dot product of two vectors (their cosine when normalised).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

enum Backend {
    Local(Arc<LocalModel>),
    Api {
        client: ApiClient,
        ask_dimensions: bool,
    },
}

/// A configured embedder.
pub struct Embedder {
    backend: Backend,
    info: ModelInfo,
    queries: Mutex<QueryCache>,
    /// When the embedder last failed, unless it succeeded since.
    failed_at: Mutex<Option<Instant>>,
}

impl Embedder {
    /// Opens the embedder of `config`: loads a local model (refusing one it
    /// cannot load, saying why), or reaches the API once to learn its
    /// dimensions when they are not given. `None` when none is configured.
    pub async fn open(config: &EmbedderConfig) -> anyhow::Result<Option<Embedder>> {
        let (backend, info) = match config {
            EmbedderConfig::None => return Ok(None),
            EmbedderConfig::Local(dir) => {
                let dir = dir.clone();
                let model = tokio::task::spawn_blocking(move || LocalModel::load(&dir))
                    .await
                    .context("loading the model")??;
                let info = model.info().clone();
                (Backend::Local(Arc::new(model)), info)
            }
            EmbedderConfig::Api { api, dimensions } => {
                let client = ApiClient::new(api.clone())?;
                let dimensions = match dimensions {
                    Some(dimensions) => *dimensions,
                    None => api::embed(&client, &["dimensions".to_owned()], None, false)
                        .await
                        .map(|vectors| vectors[0].len())
                        .with_context(|| {
                            format!(
                                "asking {} for a first embedding to learn the model's dimensions \
                                 (give --embedder-dimensions to start without it)",
                                api.base_url
                            )
                        })?,
                };
                let id = format!("api:{}:{dimensions}", api.model);
                let info = ModelInfo {
                    description: format!("{} at {}", api.model, api.base_url),
                    id,
                    dimensions,
                    pooling: None,
                    max_tokens: None,
                };
                let backend = Backend::Api {
                    client,
                    ask_dimensions: matches!(
                        config,
                        EmbedderConfig::Api {
                            dimensions: Some(_),
                            ..
                        }
                    ),
                };
                (backend, info)
            }
        };
        Ok(Some(Embedder {
            backend,
            info,
            queries: Mutex::new(QueryCache::default()),
            failed_at: Mutex::new(None),
        }))
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The vectors of `texts`, in order.
    pub async fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let embedded = self.embed_with_backend(texts).await;
        match &embedded {
            Ok(_) => self.note(true),
            // Inputs it will not take say nothing of its health.
            Err(err) if !err.is_refusal() => self.note(false),
            Err(_) => {}
        }
        metrics::recorders().embedder.record(match &embedded {
            Ok(_) => CallOutcome::Ok,
            Err(err) => err.outcome(),
        });
        embedded
    }

    async fn embed_with_backend(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        match &self.backend {
            Backend::Local(model) => {
                let model = model.clone();
                tokio::task::spawn_blocking(move || model.embed(&texts))
                    .await
                    .map_err(|err| EmbedError::Model(err.to_string()))?
                    .map_err(|err| EmbedError::Model(format!("{err:#}")))
            }
            Backend::Api {
                client,
                ask_dimensions,
            } => {
                let mut vectors = Vec::with_capacity(texts.len());
                for batch in texts.chunks(api::API_BATCH) {
                    let dimensions = Some(self.info.dimensions);
                    vectors.extend(api::embed(client, batch, dimensions, *ask_dimensions).await?);
                }
                Ok(vectors)
            }
        }
    }

    /// The vector of a search query; recent queries are remembered. Gives
    /// up after `within`, when given (the API's own timeout holds too).
    pub async fn embed_query(
        &self,
        query: &str,
        within: Option<Duration>,
    ) -> Result<Arc<[f32]>, EmbedError> {
        let texts = [query.to_owned()];
        let embedding = self.embed_cached(&texts);
        let vectors = match within {
            Some(within) => tokio::time::timeout(within, embedding).await.map_err(|_| {
                // The call was dropped unfinished: it counts here.
                self.note(false);
                metrics::recorders().embedder.record(CallOutcome::Timeout);
                EmbedError::Api(ApiError::Timeout(within))
            })?,
            None => embedding.await,
        };
        vectors?
            .pop()
            .ok_or_else(|| EmbedError::Model("no vector for the query".into()))
    }

    /// The vectors of short texts (queries, strategies), in order: those
    /// embedded recently from the cache, the others in one batch.
    pub async fn embed_cached(&self, texts: &[String]) -> Result<Vec<Arc<[f32]>>, EmbedError> {
        let cached: Vec<Option<Arc<[f32]>>> = {
            let cache = self.cache();
            texts.iter().map(|t| cache.get(t)).collect()
        };
        let missing: Vec<String> = texts
            .iter()
            .zip(&cached)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| t.clone())
            .collect();
        let mut fresh = if missing.is_empty() {
            Vec::new()
        } else if let Some(left) = self.paused() {
            metrics::recorders().embedder.record(CallOutcome::Skipped);
            return Err(EmbedError::Paused(left));
        } else {
            self.embed(missing).await?
        }
        .into_iter()
        .map(Arc::<[f32]>::from);
        let mut vectors = Vec::with_capacity(texts.len());
        for (text, vector) in texts.iter().zip(cached) {
            let vector = match vector {
                Some(vector) => vector,
                None => {
                    let vector = fresh.next().ok_or_else(|| {
                        EmbedError::Model(format!("no vector for {} texts", texts.len()))
                    })?;
                    self.cache().insert(text.clone(), vector.clone());
                    vector
                }
            };
            vectors.push(vector);
        }
        Ok(vectors)
    }

    /// Records whether a call succeeded, for [`PAUSE_AFTER_FAILURE`].
    fn note(&self, succeeded: bool) {
        *self
            .failed_at
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = (!succeeded).then(Instant::now);
    }

    /// How much longer callers of [`Self::embed_cached`] skip the embedder.
    fn paused(&self) -> Option<Duration> {
        let failed_at = (*self
            .failed_at
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()))?;
        PAUSE_AFTER_FAILURE.checked_sub(failed_at.elapsed())
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, QueryCache> {
        self.queries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The most recent [`QUERY_CACHE`] query vectors (oldest forgotten first).
#[derive(Default)]
struct QueryCache {
    vectors: HashMap<String, Arc<[f32]>>,
    order: VecDeque<String>,
}

impl QueryCache {
    fn get(&self, query: &str) -> Option<Arc<[f32]>> {
        self.vectors.get(query).cloned()
    }

    fn insert(&mut self, query: String, vector: Arc<[f32]>) {
        if self.vectors.insert(query.clone(), vector).is_none() {
            self.order.push_back(query);
        }
        while self.order.len() > QUERY_CACHE {
            if let Some(oldest) = self.order.pop_front() {
                self.vectors.remove(&oldest);
            }
        }
    }
}

/// Parses `--embedder`: `none`, `local:DIR` or `openai`.
pub fn parse_kind(text: &str) -> anyhow::Result<EmbedderKind> {
    match text {
        "none" | "" => Ok(EmbedderKind::None),
        "openai" => Ok(EmbedderKind::Api),
        _ => match text.strip_prefix("local:") {
            Some(dir) if !dir.is_empty() => Ok(EmbedderKind::Local(PathBuf::from(dir))),
            _ => bail!("expected none, local:DIR or openai"),
        },
    }
}

/// The `--embedder` flag's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedderKind {
    None,
    Local(PathBuf),
    Api,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_names_a_kind() {
        assert_eq!(parse_kind("none").unwrap(), EmbedderKind::None);
        assert_eq!(parse_kind("openai").unwrap(), EmbedderKind::Api);
        assert_eq!(
            parse_kind("local:/models/minilm").unwrap(),
            EmbedderKind::Local("/models/minilm".into())
        );
        assert!(parse_kind("local:").is_err());
        assert!(parse_kind("cohere").is_err());
    }

    #[test]
    fn only_inputs_the_embedder_will_never_take_are_refusals() {
        let status = |code| EmbedError::Api(ApiError::Status(code));
        for refused in [
            status(400),
            status(413),
            status(422),
            EmbedError::Model("x".into()),
        ] {
            assert!(refused.is_refusal(), "{refused}");
        }
        for unavailable in [
            status(401),
            status(404),
            status(429),
            status(503),
            EmbedError::Api(ApiError::Timeout(Duration::from_secs(1))),
            EmbedError::Api(ApiError::Transport("reset".into())),
            EmbedError::BadReply("3 vectors for 2 inputs".into()),
        ] {
            assert!(!unavailable.is_refusal(), "{unavailable}");
        }
    }

    #[test]
    fn vectors_are_normalised_unless_zero() {
        let mut v = [3.0, 4.0];
        assert!(normalise(&mut v));
        assert_eq!(v, [0.6, 0.8]);
        let mut zero = [0.0, 0.0];
        assert!(!normalise(&mut zero));
        let mut nan = [f32::NAN, 1.0];
        assert!(!normalise(&mut nan));
    }

    #[tokio::test]
    async fn a_query_gives_up_within_the_time_it_is_given() {
        // An API that takes the connection and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let config = EmbedderConfig::Api {
            api: ApiConfig {
                base_url: format!("http://{}/v1", listener.local_addr().unwrap()),
                model: "hanging".into(),
                api_key: None,
                timeout: Duration::from_secs(600),
            },
            dimensions: Some(4),
        };
        let embedder = Embedder::open(&config).await.unwrap().unwrap();
        let within = Duration::from_millis(50);
        let err = embedder.embed_query("q", Some(within)).await.unwrap_err();
        assert_eq!(err, EmbedError::Api(ApiError::Timeout(within)));

        // The next query does not wait again: the embedder is skipped for a
        // while (the hanging API never sees it)…
        let err = embedder
            .embed_query("another", Some(within))
            .await
            .unwrap_err();
        assert!(
            matches!(err, EmbedError::Paused(left) if left <= PAUSE_AFTER_FAILURE),
            "{err}"
        );
        // …until a call succeeds, or the pause is over.
        embedder.note(true);
        let err = embedder
            .embed_query("again", Some(within))
            .await
            .unwrap_err();
        assert_eq!(err, EmbedError::Api(ApiError::Timeout(within)));
        *embedder.failed_at.lock().unwrap() = Some(Instant::now() - PAUSE_AFTER_FAILURE);
        let err = embedder
            .embed_query("later", Some(within))
            .await
            .unwrap_err();
        assert_eq!(err, EmbedError::Api(ApiError::Timeout(within)));
    }

    #[test]
    fn the_query_cache_forgets_the_oldest() {
        let mut cache = QueryCache::default();
        for n in 0..=QUERY_CACHE {
            cache.insert(format!("q{n}"), Arc::from(vec![n as f32]));
        }
        assert!(cache.get("q0").is_none());
        assert_eq!(cache.get("q1").as_deref(), Some(&[1.0][..]));
        assert_eq!(cache.vectors.len(), QUERY_CACHE);
    }
}
