//! Command-line flags, each with an `ENGRAM_*` environment equivalent,
//! validated once at start: the server's, and each operator subcommand's
//! (which [`crate::commands`] runs).

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Parser, ValueEnum};

use crate::domain::ContradictionPolicy;
use crate::embed::{EmbedderConfig, EmbedderKind};
use crate::engine::secrets::OnSecret;
use crate::grpc::host_guard::HostPolicy;
use crate::grpc::overload::{DEFAULT_MAX_CONCURRENT_CALLS, KeyShare, Overload, RateLimit};
use crate::grpc::web::{BrowserAccess, BrowserOrigin};
use crate::llm::LlmConfig;
use crate::openai::ApiConfig;
use crate::store::postgres::{self, PostgresUrl};

mod commands;
pub use commands::{BackupArgs, Command, ExportArgs, ImportArgs, MigrateArgs};

/// Engram: long-term memory for AI agents, over gRPC.
#[derive(Debug, Clone, Parser)]
#[command(name = "engram-server", version, about, long_about = None)]
pub struct Config {
    /// What to do instead of serving.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Address to serve gRPC on. Port 0 picks a free port; the chosen address
    /// is printed on standard output as "engram-server listening on ADDR".
    #[arg(long, env = "ENGRAM_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// Database URL: sqlite://PATH (the file is created when missing;
    /// sqlite:///abs/path for an absolute path), or
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE for PostgreSQL, which
    /// several replicas share (each with an --index-dir of its own). The
    /// password may also come from PGPASSWORD or ~/.pgpass; it is never
    /// logged or shown.
    #[arg(
        long,
        env = "ENGRAM_DATABASE",
        default_value = "sqlite://engram.db",
        global = true,
        hide_env_values = true
    )]
    pub database: DatabaseUrl,

    /// PostgreSQL: the most connections this server opens to the database
    /// for its work, besides one that listens for other replicas' changes.
    /// Each replica has a pool of its own, so replicas × (this + 1) must
    /// stay below the database's max_connections. Not used with SQLite (see
    /// --sqlite-readers).
    #[arg(long, env = "ENGRAM_DATABASE_POOL_SIZE", default_value_t = postgres::DEFAULT_POOL_SIZE, value_parser = clap::value_parser!(u32).range(1..=i64::from(postgres::MAX_POOL_SIZE)), global = true)]
    pub database_pool_size: u32,

    /// Folder of the full-text search index, which is derived from the
    /// database (rebuilt when missing). Default: beside the database, named
    /// after it, e.g. engram.db.index for engram.db. One server per folder.
    #[arg(long, env = "ENGRAM_INDEX_DIR", global = true)]
    pub index_dir: Option<PathBuf>,

    /// SQLite durability: "normal" survives a crash of the process; "full"
    /// also survives power loss, at the cost of an fsync per commit.
    #[arg(long, env = "ENGRAM_SQLITE_SYNCHRONOUS", value_enum, default_value_t = Synchronous::Normal)]
    pub sqlite_synchronous: Synchronous,

    /// How long a database operation waits for a lock before the call fails
    /// with UNAVAILABLE, e.g. "5s" or "500ms".
    #[arg(long, env = "ENGRAM_SQLITE_BUSY_TIMEOUT", default_value = "5s", value_parser = parse_duration, global = true)]
    pub sqlite_busy_timeout: Duration,

    /// Number of read-only SQLite connections (reads run in parallel; writes
    /// go through one connection with group commit).
    #[arg(long, env = "ENGRAM_SQLITE_READERS", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub sqlite_readers: u32,

    /// The largest request message accepted, e.g. "8MiB", "512KiB" or a
    /// number of bytes; larger ones fail with OUT_OF_RANGE before any
    /// work is done. (A BatchCreateMemories of many large memories may need
    /// it raised, or to be split.)
    #[arg(long, env = "ENGRAM_MAX_REQUEST_SIZE", default_value = "8MiB", value_parser = parse_size)]
    pub max_request_size: usize,

    /// How long a StreamSteps stream may stay silent before the server ends
    /// it with DEADLINE_EXCEEDED (the steps received are kept), e.g. "60s".
    #[arg(long, env = "ENGRAM_STREAM_IDLE_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    pub stream_idle_timeout: Duration,

    /// The most engram.v1 calls in flight at once (an open StreamSteps
    /// stream counts until it ends); a call beyond it is answered at once,
    /// unread, with RESOURCE_EXHAUSTED and a retry delay
    /// (google.rpc.RetryInfo) instead of waiting in an unbounded queue.
    /// Health and reflection are never refused.
    #[arg(long, env = "ENGRAM_MAX_CONCURRENT_CALLS", default_value_t = DEFAULT_MAX_CONCURRENT_CALLS, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_calls: u32,

    /// With --auth-keys, the most engram.v1 calls one API key may have in
    /// flight at once (its open streams included), so that no key can take
    /// the last of --max-concurrent-calls; beyond it the key's call is
    /// answered at once, unread, with RESOURCE_EXHAUSTED and a retry delay.
    /// Default: half of --max-concurrent-calls.
    #[arg(long, env = "ENGRAM_MAX_CALLS_PER_KEY", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_calls_per_key: Option<u32>,

    /// With --auth-keys, the most streams (WatchMemories watches and
    /// StreamSteps streams) one API key may have open at once; beyond it
    /// the key's next stream is answered RESOURCE_EXHAUSTED. Default: 64,
    /// or the calls a key may have in flight when fewer.
    #[arg(long, env = "ENGRAM_MAX_STREAMS_PER_KEY", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_streams_per_key: Option<u32>,

    /// Limits each API key's calls to the engram.v1 services to a rate, e.g.
    /// "100/s", "6000/m" or "50000/h"; a call over it is answered, unread,
    /// with RESOURCE_EXHAUSTED and the time until the key may call again
    /// (google.rpc.RetryInfo). Needs --auth-keys. Off when not set.
    #[arg(long, env = "ENGRAM_RATE_LIMIT_PER_KEY", requires = "auth_keys", value_parser = RateLimit::parse)]
    pub rate_limit_per_key: Option<RateLimit>,

    /// How many calls a key may make at once, unthrottled, before
    /// --rate-limit-per-key paces it. Default: one second's worth of the
    /// rate (at least 1).
    #[arg(long, env = "ENGRAM_RATE_LIMIT_BURST", requires = "rate_limit_per_key", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_burst: Option<u32>,

    /// On SIGINT/SIGTERM, how long in-flight calls may take to finish before
    /// the server exits anyway, e.g. "10s".
    #[arg(long, env = "ENGRAM_SHUTDOWN_GRACE", default_value = "10s", value_parser = parse_duration)]
    pub shutdown_grace: Duration,

    /// Base URL of an OpenAI-compatible API (e.g. https://api.example.com/v1)
    /// for the LLM classifier, which also judges a new memory's
    /// contradiction candidates; needs --llm-model. The API key is read
    /// from the ENGRAM_LLM_API_KEY environment variable only, and never
    /// logged.
    #[arg(long, env = "ENGRAM_LLM_BASE_URL")]
    pub llm_base_url: Option<String>,

    /// The model the LLM classifier asks; needs --llm-base-url.
    #[arg(long, env = "ENGRAM_LLM_MODEL")]
    pub llm_model: Option<String>,

    /// The most LLM calls in flight at once; more wait for a turn (at most
    /// --llm-timeout, then the safe fallback is used).
    #[arg(long, env = "ENGRAM_LLM_CONCURRENCY", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub llm_concurrency: u32,

    /// How long one LLM call may take before the safe fallback is used, e.g. "20s".
    #[arg(long, env = "ENGRAM_LLM_TIMEOUT", default_value = "20s", value_parser = parse_duration)]
    pub llm_timeout: Duration,

    /// What a write does when its memory contradicts an older valid memory
    /// of the same owner (the same subject and single-valued attribute said
    /// otherwise): "invalidate" (the older one is no longer true from when
    /// the new one is, and is kept), "link" (both stay true, linked to each
    /// other as conflicting) or "off". A request's ContradictionPolicy
    /// overrides it.
    #[arg(long, env = "ENGRAM_CONTRADICTIONS", default_value = "invalidate", value_parser = parse_contradictions)]
    pub contradictions: ContradictionPolicy,

    /// Merge a new memory that repeats a valid memory of the same type and
    /// owner in other words (a near-duplicate: close in meaning, the same
    /// values and polarity) into it — one more sighting, a MERGED revision —
    /// instead of storing it beside it, linked as a near-duplicate. Every
    /// write then reads its closest memories (without it, only writes that
    /// look up contradictions do).
    #[arg(long, env = "ENGRAM_MERGE_NEAR_DUPLICATES", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub merge_near_duplicates: bool,

    /// Keep, in the provenance of each memory Remember stores, the
    /// transcript it was decided from, as screened (secrets and injected
    /// instructions taken out); GetMemory and ExplainMemory show it. Without
    /// it only the transcript's SHA-256 is kept. Deleting the memory
    /// deletes the transcript.
    #[arg(long, env = "ENGRAM_KEEP_TRANSCRIPTS", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub keep_transcripts: bool,

    /// Semantic search: "none" (full text only), "local:DIR" (a
    /// sentence-transformers model folder with config.json, tokenizer.json
    /// and model.safetensors, e.g. all-MiniLM-L6-v2, run in process) or
    /// "openai" (an OpenAI-compatible embeddings API; needs
    /// --embedder-base-url and --embedder-model, key in
    /// ENGRAM_EMBEDDER_API_KEY).
    #[arg(long, env = "ENGRAM_EMBEDDER", default_value = "none", value_parser = crate::embed::parse_kind)]
    pub embedder: EmbedderKind,

    /// Base URL of the embeddings API (e.g. http://localhost:11434/v1);
    /// "/embeddings" is appended. With --embedder openai.
    #[arg(long, env = "ENGRAM_EMBEDDER_BASE_URL")]
    pub embedder_base_url: Option<String>,

    /// The model the embeddings API is asked for. With --embedder openai.
    #[arg(long, env = "ENGRAM_EMBEDDER_MODEL")]
    pub embedder_model: Option<String>,

    /// The vectors' dimensions, sent as the API's `dimensions` parameter.
    /// Without it, the server asks the API for one embedding at start to
    /// learn them (and refuses to start if it cannot).
    #[arg(long, env = "ENGRAM_EMBEDDER_DIMENSIONS", value_parser = clap::value_parser!(u32).range(1..=8192))]
    pub embedder_dimensions: Option<u32>,

    /// How long one call to the embeddings API may take, e.g. "30s". A
    /// search waits for its query's vector at most half the call's deadline
    /// too, then searches by words.
    #[arg(long, env = "ENGRAM_EMBEDDER_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub embedder_timeout: Duration,

    /// Reranking of each search's best candidates: "none", or "api" (an API
    /// speaking the common POST {base}/rerank protocol of
    /// text-embeddings-inference, Cohere and Jina; needs
    /// --reranker-base-url and --reranker-model, key in
    /// ENGRAM_RERANKER_API_KEY). Whenever the API fails or is late, a
    /// search keeps its own order.
    #[arg(long, env = "ENGRAM_RERANKER", default_value = "none", value_parser = ["none", "api"])]
    pub reranker: String,

    /// Base URL of the reranking API (e.g. http://localhost:8080); "/rerank"
    /// is appended. With --reranker api.
    #[arg(long, env = "ENGRAM_RERANKER_BASE_URL")]
    pub reranker_base_url: Option<String>,

    /// The model the reranking API is asked for. With --reranker api.
    #[arg(long, env = "ENGRAM_RERANKER_MODEL")]
    pub reranker_model: Option<String>,

    /// How long a search waits for the reranker, e.g. "2s" (at most half
    /// of what is left of the caller's deadline); past it, the search keeps
    /// its own order.
    #[arg(long, env = "ENGRAM_RERANKER_TIMEOUT", default_value = "2s", value_parser = parse_duration)]
    pub reranker_timeout: Duration,

    /// How many of a search's best candidates the reranker reorders.
    #[arg(long, env = "ENGRAM_RERANKER_DEPTH", default_value_t = 30, value_parser = clap::value_parser!(u32).range(2..=200))]
    pub reranker_depth: u32,

    /// A file of API keys, one a line: `KEY ROLE NAMESPACES`, where ROLE is
    /// read, write or admin and NAMESPACES a comma-separated list of names
    /// and prefixes ending in * (* alone: all); KEY may be sha256:HEX, the
    /// key's digest. When set, every call to the engram.v1 services must send
    /// `authorization: Bearer <key>` (UNAUTHENTICATED otherwise) and stay
    /// within its key's role and namespaces (PERMISSION_DENIED otherwise);
    /// health and reflection stay open. Read again on SIGHUP.
    #[arg(long, env = "ENGRAM_AUTH_KEYS")]
    pub auth_keys: Option<PathBuf>,

    /// The server's TLS certificate chain (PEM). With --tls-key, the server
    /// speaks only TLS; clients connect with https:// URLs.
    #[arg(long, env = "ENGRAM_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM).
    #[arg(long, env = "ENGRAM_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Mutual TLS: the certificate authority (PEM) that client certificates
    /// must be signed by. Clients without such a certificate cannot connect.
    /// Needs --tls-cert and --tls-key.
    #[arg(long, env = "ENGRAM_TLS_CLIENT_CA", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,

    /// Refuse requests that hold a credential (a password, an API key or
    /// token, a private key, a connection string with a password, a card
    /// number) in any free-text field — memory content, tags, metadata,
    /// steps, episodes, outcomes, strategies, lessons, queries — with
    /// INVALID_ARGUMENT naming the field (never the secret).
    /// `--reject-secrets false` takes them as given. Classify and Remember
    /// take secrets out of transcripts whatever this says.
    #[arg(long, env = "ENGRAM_REJECT_SECRETS", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub reject_secrets: bool,

    /// A web page origin allowed to call the server from a browser, over
    /// gRPC-web, e.g. https://app.example.com (scheme, host and port, no
    /// path); repeat the flag (or separate with commas) for several, or
    /// give * for any page. Unset, the server answers no CORS request, so
    /// browsers let only pages of its own origin call it. gRPC-web itself
    /// is always served on --listen, beside gRPC.
    #[arg(long = "cors-allow-origin", env = "ENGRAM_CORS_ALLOW_ORIGIN", value_delimiter = ',', value_parser = BrowserOrigin::parse)]
    pub cors_allow_origins: Vec<BrowserOrigin>,

    /// A host name, besides IP addresses and localhost, that requests over
    /// HTTP/1.1 and from browsers may name in their Host header, e.g.
    /// engram.internal; .example.com allows it and every name under it, *
    /// any name. Repeat the flag (or separate with commas) for several.
    /// Other names are refused with 403 (PERMISSION_DENIED), so that a web
    /// page cannot reach the server by making its own name resolve to the
    /// server's address (DNS rebinding). Plain gRPC over HTTP/2 may use any
    /// name.
    #[arg(long = "allowed-hosts", env = "ENGRAM_ALLOWED_HOSTS", value_delimiter = ',', value_parser = HostPolicy::parse_host, value_name = "HOST")]
    pub allowed_hosts: Vec<String>,

    /// Serve without --auth-keys on an address other machines can reach
    /// (anything but loopback), where anyone who reaches it can read and
    /// write every memory: e.g. behind a proxy that authenticates. Without
    /// this flag such a server refuses to start.
    #[arg(long, env = "ENGRAM_ALLOW_ANONYMOUS", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub allow_anonymous: bool,

    /// How long a browser may keep the server's answer to a CORS preflight
    /// before asking again, e.g. 10m (browsers cap it, Chrome at 2h).
    #[arg(long, env = "ENGRAM_CORS_MAX_AGE", default_value = "2h", value_parser = parse_duration)]
    pub cors_max_age: Duration,

    /// Address to serve Prometheus metrics on, over plain HTTP at /metrics
    /// (e.g. 127.0.0.1:9090); off when not set. No API key guards it, and it
    /// names the largest namespaces: bind it where only monitoring reaches.
    /// Port 0 picks a free port; the chosen address is printed on standard
    /// output as "engram-server metrics on ADDR".
    #[arg(long, env = "ENGRAM_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// How long a request_id is remembered, so that a retry of a write gets
    /// its first answer, e.g. "24h". Older ids are forgotten within
    /// --retention-interval after; reusing one then makes a new request.
    #[arg(long, env = "ENGRAM_REQUEST_ID_TTL", default_value = "24h", value_parser = parse_positive_duration)]
    pub request_id_ttl: Duration,

    /// How often expired memories and request ids older than
    /// --request-id-ttl are purged from the database, e.g. "60s" (the first
    /// purge runs shortly after start).
    #[arg(long, env = "ENGRAM_RETENTION_INTERVAL", default_value = "60s", value_parser = parse_positive_duration)]
    pub retention_interval: Duration,

    /// Log format.
    #[arg(long, env = "ENGRAM_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,

    /// Log filter in tracing's EnvFilter syntax, e.g. "info" or
    /// "engram_server=debug,info".
    #[arg(long, env = "ENGRAM_LOG", default_value = "info", global = true)]
    pub log: String,
}

/// SQLite's `synchronous` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Synchronous {
    Normal,
    Full,
}

/// How log lines are written (to standard error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// `--database` as given: parsed by [`Config::database`] rather than by the
/// flag parser, whose errors repeat the value (and so a URL's password).
/// Shown without a password, so that a `Config` may be logged.
#[derive(Clone)]
pub struct DatabaseUrl(String);

impl std::str::FromStr for DatabaseUrl {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<DatabaseUrl, Self::Err> {
        Ok(DatabaseUrl(text.to_owned()))
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match parse_database(&self.0) {
            Ok(database) => write!(f, "{database:?}"),
            Err(_) => f.write_str("DatabaseUrl(<not valid>)"),
        }
    }
}

/// Where the data lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    Sqlite(PathBuf),
    Postgres(PostgresUrl),
}

/// The URL, with a PostgreSQL password hidden.
impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Database::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            Database::Postgres(url) => url.fmt(f),
        }
    }
}

impl Config {
    /// The parsed `--database` URL.
    pub fn database(&self) -> anyhow::Result<Database> {
        parse_database(&self.database.0)
    }

    /// The SQLite database file, for `command`, which works on a SQLite
    /// file only.
    pub fn sqlite_path(&self, command: &str) -> anyhow::Result<PathBuf> {
        match self.database()? {
            Database::Sqlite(path) => Ok(path),
            Database::Postgres(_) => bail!("{command} {}", postgres::SQLITE_ONLY),
        }
    }

    /// The search index's folder: `--index-dir`, or beside a SQLite
    /// database.
    pub fn index_dir(&self) -> anyhow::Result<PathBuf> {
        if let Some(dir) = &self.index_dir {
            return Ok(dir.clone());
        }
        match self.database()? {
            Database::Sqlite(path) => Ok(beside(&path)),
            Database::Postgres(_) => bail!(
                "--index-dir is needed with a PostgreSQL database: each replica keeps a search index of its own"
            ),
        }
    }

    /// The embedder to use.
    pub fn embedder(&self) -> anyhow::Result<EmbedderConfig> {
        let api_flags = self.embedder_base_url.is_some()
            || self.embedder_model.is_some()
            || self.embedder_dimensions.is_some();
        match &self.embedder {
            EmbedderKind::None | EmbedderKind::Local(_) if api_flags => {
                bail!(
                    "--embedder-base-url, --embedder-model and --embedder-dimensions go with --embedder openai"
                )
            }
            EmbedderKind::None => Ok(EmbedderConfig::None),
            EmbedderKind::Local(dir) => Ok(EmbedderConfig::Local(dir.clone())),
            EmbedderKind::Api => {
                let (Some(base_url), Some(model)) = (&self.embedder_base_url, &self.embedder_model)
                else {
                    bail!("--embedder openai needs --embedder-base-url and --embedder-model");
                };
                Ok(EmbedderConfig::Api {
                    api: ApiConfig::new(
                        "--embedder-base-url",
                        base_url,
                        model,
                        EMBEDDER_API_KEY_ENV,
                        self.embedder_timeout,
                    )?,
                    dimensions: self.embedder_dimensions.map(|d| d as usize),
                })
            }
        }
    }

    /// The reranker to use, if any.
    pub fn reranker(&self) -> anyhow::Result<Option<crate::rerank::Reranker>> {
        let flags = self.reranker_base_url.is_some() || self.reranker_model.is_some();
        if self.reranker == "none" {
            if flags {
                bail!("--reranker-base-url and --reranker-model go with --reranker api");
            }
            return Ok(None);
        }
        let (Some(base_url), Some(model)) = (&self.reranker_base_url, &self.reranker_model) else {
            bail!("--reranker api needs --reranker-base-url and --reranker-model");
        };
        let api = ApiConfig::new(
            "--reranker-base-url",
            base_url,
            model,
            crate::rerank::RERANKER_API_KEY_ENV,
            self.reranker_timeout,
        )?;
        Ok(Some(crate::rerank::Reranker::new(
            api,
            self.reranker_depth as usize,
        )?))
    }

    /// When engram.v1 calls are shed.
    pub fn overload(&self) -> Overload {
        Overload {
            max_concurrent_calls: self.max_concurrent_calls as usize,
            key_share: self.key_share(),
            rate_limit: self
                .rate_limit_per_key
                .map(|limit| limit.with_burst(self.rate_limit_burst)),
        }
    }

    /// What one API key may hold of the server: the flags, else the
    /// defaults of [`KeyShare::default_for`].
    fn key_share(&self) -> KeyShare {
        let default = KeyShare::default_for(self.max_concurrent_calls as usize);
        let max_calls = self
            .max_calls_per_key
            .map_or(default.max_calls, |n| n as usize);
        KeyShare {
            max_calls,
            max_streams: self
                .max_streams_per_key
                .map_or(default.max_streams.min(max_calls), |n| n as usize),
        }
    }

    /// What CreateMemory and its kin do with a credential.
    pub fn on_secret(&self) -> OnSecret {
        if self.reject_secrets {
            OnSecret::Reject
        } else {
            OnSecret::Allow
        }
    }

    /// Which Host names and page origins may reach the gRPC port.
    pub fn host_policy(&self) -> HostPolicy {
        HostPolicy {
            allowed_hosts: self.allowed_hosts.clone(),
            origins: self.cors_allow_origins.clone(),
        }
    }

    /// Refuses to serve where anyone could read and write every memory
    /// without the operator having said so (Redis's protected mode): a
    /// listener other machines reach, or every web page allowed to call,
    /// with no API keys.
    pub fn check_protected(&self) -> anyhow::Result<()> {
        if self.auth_keys.is_some() {
            return Ok(());
        }
        if self.cors_allow_origins.contains(&BrowserOrigin::Any) {
            bail!(
                "--cors-allow-origin * without --auth-keys would let every web page its users \
                 visit read and write this server's memories: name the origins that may call, or \
                 set --auth-keys"
            );
        }
        if !self.listen.ip().is_loopback() && !self.allow_anonymous {
            bail!(
                "--listen {} is reachable from other machines, and without --auth-keys anyone who \
                 reaches it can read and write every memory: set --auth-keys, listen on \
                 127.0.0.1, or add --allow-anonymous to serve anyway (e.g. behind a proxy that \
                 authenticates)",
                self.listen
            );
        }
        Ok(())
    }

    /// Which browser pages may call the server (CORS).
    pub fn browser_access(&self) -> BrowserAccess {
        BrowserAccess {
            origins: self.cors_allow_origins.clone(),
            max_age: self.cors_max_age,
        }
    }

    /// The LLM to use, if one is configured.
    pub fn llm(&self) -> anyhow::Result<Option<LlmConfig>> {
        match (&self.llm_base_url, &self.llm_model) {
            (None, None) => Ok(None),
            (Some(base_url), Some(model)) => Ok(Some(ApiConfig::new(
                "--llm-base-url",
                base_url,
                model,
                LLM_API_KEY_ENV,
                self.llm_timeout,
            )?)),
            _ => bail!("--llm-base-url and --llm-model go together"),
        }
    }
}

/// The environment variable holding the embeddings API key.
pub const EMBEDDER_API_KEY_ENV: &str = "ENGRAM_EMBEDDER_API_KEY";

/// The environment variable holding the LLM API key.
pub const LLM_API_KEY_ENV: &str = "ENGRAM_LLM_API_KEY";

fn parse_database(url: &str) -> anyhow::Result<Database> {
    parse_database_flag("--database", url)
}

/// The database a flag (`--database`, `migrate-data --from`, …) names:
/// `sqlite://PATH` or `postgres://…`; errors name the flag.
pub fn parse_database_flag(flag: &str, url: &str) -> anyhow::Result<Database> {
    if let Some(rest) = url.strip_prefix("sqlite:") {
        let path = rest.strip_prefix("//").unwrap_or(rest);
        let path = path.split('?').next().unwrap_or(path);
        if path.is_empty() || path == ":memory:" {
            bail!(
                "{flag} {url:?}: give a file path, e.g. sqlite://engram.db (in-memory databases are not supported)"
            );
        }
        return Ok(Database::Sqlite(PathBuf::from(path)));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return PostgresUrl::parse(url)
            .map(Database::Postgres)
            .map_err(|e| anyhow::anyhow!("{flag}: {e}"));
    }
    // Only the scheme: the rest may hold a password.
    match url.split_once(':') {
        Some((scheme, _)) => {
            bail!("{flag}: expected sqlite://PATH or postgres://…, not a {scheme:?} URL")
        }
        None => bail!("{flag} {url:?}: expected sqlite://PATH or postgres://…"),
    }
}

/// `engram.db` → `engram.db.index`, in the same folder.
pub fn beside(database: &std::path::Path) -> PathBuf {
    let mut name = database.file_name().unwrap_or_default().to_os_string();
    name.push(".index");
    database.with_file_name(name)
}

/// The smallest `--max-request-size`: room for any single record.
const MIN_REQUEST_SIZE: usize = 1024 * 1024;
/// The largest: what a gRPC message can be at all (its length is 32 bits).
const MAX_REQUEST_SIZE: usize = u32::MAX as usize;

/// Parses "8MiB", "512KiB", "1GiB" or a plain number of bytes, between
/// [`MIN_REQUEST_SIZE`] and [`MAX_REQUEST_SIZE`].
fn parse_size(text: &str) -> anyhow::Result<usize> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit())
        .map_or((text, ""), |at| text.split_at(at));
    let value: usize = number
        .parse()
        .with_context(|| format!("{text:?} is not a size like 8MiB or 4194304"))?;
    let unit_bytes: usize = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => bail!("{text:?}: unknown unit {other:?} (use B, KiB, MiB or GiB)"),
    };
    let bytes = value
        .checked_mul(unit_bytes)
        .with_context(|| format!("{text:?} is too large"))?;
    if !(MIN_REQUEST_SIZE..=MAX_REQUEST_SIZE).contains(&bytes) {
        bail!("{text:?} must be between 1MiB and 4GiB - 1");
    }
    Ok(bytes)
}

/// Parses "invalidate", "link" or "off".
fn parse_contradictions(text: &str) -> Result<ContradictionPolicy, String> {
    match text {
        "invalidate" => Ok(ContradictionPolicy::Invalidate),
        "link" => Ok(ContradictionPolicy::Link),
        "off" => Ok(ContradictionPolicy::Off),
        _ => Err(format!(
            "expected \"invalidate\", \"link\" or \"off\", got {text:?}"
        )),
    }
}

/// Parses "250ms", "5s", "2m", "24h" or a plain number of seconds.
fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .map_or((text, "s"), |at| text.split_at(at));
    let value: f64 = number
        .parse()
        .with_context(|| format!("{text:?} is not a duration like 5s or 500ms"))?;
    let seconds = match unit {
        "ms" => value / 1e3,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => bail!("{text:?}: unknown unit {unit:?} (use ms, s, m or h)"),
    };
    Duration::try_from_secs_f64(seconds)
        .with_context(|| format!("{text:?} is not a valid duration"))
}

/// Like [`parse_duration`], refusing zero (an interval of nothing would
/// spin; a time to live of nothing would make retries unsafe).
fn parse_positive_duration(text: &str) -> anyhow::Result<Duration> {
    let duration = parse_duration(text)?;
    if duration.is_zero() {
        bail!("{text:?}: must be longer than zero");
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_name_a_file() {
        assert_eq!(
            parse_database("sqlite://engram.db").unwrap(),
            Database::Sqlite("engram.db".into())
        );
        assert_eq!(
            parse_database("sqlite:///var/lib/e.db").unwrap(),
            Database::Sqlite("/var/lib/e.db".into())
        );
        assert_eq!(
            parse_database("sqlite:data/e.db").unwrap(),
            Database::Sqlite("data/e.db".into())
        );
    }

    #[test]
    fn unsupported_databases_are_refused_with_a_reason() {
        assert!(parse_database("sqlite::memory:").is_err());
        assert!(parse_database("mysql://x").is_err());
        assert!(parse_database("engram.db").is_err());
    }

    #[test]
    fn postgres_urls_are_taken_and_shown_without_their_password() {
        for url in [
            "postgres://engram:s3cret@db:5432/engram",
            "postgresql://engram:s3cret@db/engram",
        ] {
            let database = parse_database(url).unwrap();
            assert!(matches!(database, Database::Postgres(_)), "{database:?}");
            assert!(database.to_string().contains("engram:***@db"), "{database}");
            assert!(!format!("{database:?}").contains("s3cret"));
        }
        let config = Config::try_parse_from([
            "engram-server",
            "--database",
            "postgres://engram:s3cret@db/engram",
        ])
        .unwrap();
        assert!(!format!("{config:?}").contains("s3cret"));
        assert_eq!(config.database_pool_size, postgres::DEFAULT_POOL_SIZE);
        let error = config.index_dir().unwrap_err().to_string();
        assert!(error.contains("--index-dir"), "{error}");
    }

    #[test]
    fn bad_database_urls_are_refused_without_their_password() {
        for url in [
            "postgres://engram:s3cret@db:port/engram",
            "postgress://engram:s3cret@db/engram",
        ] {
            let error = parse_database(url).unwrap_err().to_string();
            assert!(!error.contains("s3cret"), "{error}");
        }
    }

    #[test]
    fn the_pool_size_is_bounded() {
        let parse = |size: &str| {
            Config::try_parse_from(["engram-server", "--database-pool-size", size])
                .map(|c| c.database_pool_size)
        };
        assert_eq!(parse("32").unwrap(), 32);
        assert!(parse("0").is_err());
        assert!(parse("1001").is_err());
    }

    #[test]
    fn the_index_sits_beside_the_database() {
        assert_eq!(
            beside(std::path::Path::new("data/engram.db")),
            PathBuf::from("data/engram.db.index")
        );
        assert_eq!(
            beside(std::path::Path::new("engram.db")),
            PathBuf::from("engram.db.index")
        );
    }

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("8MiB").unwrap(), 8 << 20);
        assert_eq!(parse_size("1536KiB").unwrap(), 1536 << 10);
        assert_eq!(parse_size("2097152").unwrap(), 2 << 20);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert!(parse_size("8MB").is_err(), "decimal units are ambiguous");
        assert!(parse_size("1KiB").is_err(), "below 1 MiB");
        assert!(parse_size("4GiB").is_err(), "above a gRPC message's size");
        assert!(parse_size("many").is_err());
    }

    #[test]
    fn durations_take_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("24h").unwrap(), Duration::from_secs(86_400));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_positive_duration("0s").is_err());
        assert!(parse_positive_duration("1s").is_ok());
    }
}
