//! A typed Rust client for Engram, the long-term memory service for AI
//! agents.
//!
//! Connect once with [`Engram::connect`] (or [`Engram::builder`] for an API
//! key, timeouts, retries and TLS), then call the three services through
//! [`Engram::memory`], [`Engram::learning`] and [`Engram::policy`]. Every RPC
//! takes its request message from [`proto`] or a builder such as
//! [`CreateMemory`], returns the response message, and fails with an
//! [`Error`] that tells transport failures from the server's answers and
//! carries `google.rpc.BadRequest` field violations. Reads, and creates that
//! carry a `request_id`, are retried with backoff when the server is
//! unavailable; a [`MemoryWatch`] resumes where it was.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), engram_client::Error> {
//! use engram_client::{BuildContext, CreateMemory, Engram, SearchMemories};
//! use engram_client::proto::{MemoryType, Scope};
//!
//! let url = "http://127.0.0.1:50051";
//! # let url = &std::env::var("ENGRAM_SERVER").unwrap_or(url.into());
//! let engram = Engram::connect(url).await?;
//! let scope = Scope::new("demo").with_user("alice").with_project("shop");
//!
//! let preference = CreateMemory::new(scope.clone(), MemoryType::Preference, "Alice prefers concise answers")
//!     .importance(0.9);
//! engram.memory().create_memory(preference).await?;
//!
//! let hits = engram.memory().search_memories(SearchMemories::new(scope.clone(), "concise answers")).await?.hits;
//! assert_eq!(hits.len(), 1);
//!
//! let context = engram.memory().build_context(BuildContext::new(scope).token_budget(200)).await?;
//! assert!(context.text.contains("Alice prefers concise answers"));
//! # Ok(())
//! # }
//! ```
//!
//! The examples in this documentation run against a live server: the test
//! command starts one and sets `ENGRAM_SERVER` to its address.

mod builder;
mod connection;
mod error;
mod learning;
mod memory;
mod policy;
mod requests;
mod retry;
mod watch;

pub use builder::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, EngramBuilder};
pub use error::{Error, field_violations};
pub use learning::LearningClient;
pub use memory::MemoryClient;
pub use policy::PolicyClient;
pub use requests::{
    BuildContext, Classify, CreateMemory, ListMemories, RecordOutcome, Remember, SearchMemories,
    StartEpisode, WatchMemories,
};
pub use retry::RetryPolicy;
pub use watch::MemoryWatch;

/// The generated `engram.v1` messages, enums and service stubs, re-exported
/// so callers need no other crate (and no `protoc`).
///
/// ```
/// use engram_client::proto::{MemoryInput, MemoryType};
///
/// let input = MemoryInput { memory_type: MemoryType::Lesson.into(), content: "Test first".into(), ..Default::default() };
/// assert_eq!(input.memory_type(), MemoryType::Lesson);
/// ```
pub use engram::v1 as proto;
/// A gRPC status code, as [`Error::code`] returns it.
///
/// ```
/// use engram_client::{Code, Error, Status};
///
/// assert_eq!(Error::Status(Status::not_found("gone")).code(), Code::NotFound);
/// ```
pub use tonic::Code;
/// A gRPC status, as [`Error::status`] returns it.
///
/// ```
/// use engram_client::{Error, Status};
///
/// let error = Error::Status(Status::aborted("stale etag"));
/// assert_eq!(error.status().unwrap().message(), "stale etag");
/// ```
pub use tonic::Status;

use connection::Connection;

/// The largest response accepted. A batch create echoes every memory it
/// stored, which can be far above gRPC's default of 4 MiB.
///
/// ```
/// assert_eq!(engram_client::MAX_RESPONSE_BYTES, 256 << 20);
/// ```
pub const MAX_RESPONSE_BYTES: usize = 256 * 1024 * 1024;

/// The server [`Engram::from_env`] connects to when `ENGRAM_SERVER` is unset.
///
/// ```
/// assert_eq!(engram_client::DEFAULT_SERVER, "http://127.0.0.1:50051");
/// ```
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:50051";

/// A connection to an Engram server. Cheap to clone; clones share the
/// connection (HTTP/2 multiplexes concurrent calls over it) and reconnect
/// by themselves after the server restarts.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), engram_client::Error> {
/// use engram_client::{Engram, proto::{GetStatsRequest, Scope}};
///
/// let engram = Engram::from_env().await?;
/// let stats = engram.learning().get_stats(GetStatsRequest { scope: Some(Scope::new("docs-engram")) }).await?;
/// assert_eq!(stats.total_episodes, 0);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Engram {
    connection: Connection,
}

impl Engram {
    /// Connects to the server at `url` (`http://host:port`, or `https://`
    /// for TLS) with the default settings: no API key, 30 s per call, 5 s
    /// to connect, [`RetryPolicy::default`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::Engram;
    ///
    /// let url = "http://127.0.0.1:50051";
    /// # let url = &std::env::var("ENGRAM_SERVER").unwrap_or(url.into());
    /// let engram = Engram::connect(url).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: impl Into<String>) -> Result<Engram, Error> {
        Engram::builder(url).connect().await
    }

    /// Connects to `$ENGRAM_SERVER` (default [`DEFAULT_SERVER`]) with the
    /// API key in `$ENGRAM_API_KEY`, if set — the variables the `engram`
    /// command reads too.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// let engram = engram_client::Engram::from_env().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn from_env() -> Result<Engram, Error> {
        let url = std::env::var("ENGRAM_SERVER").unwrap_or_else(|_| DEFAULT_SERVER.to_owned());
        let mut builder = Engram::builder(url);
        if let Some(api_key) = std::env::var("ENGRAM_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
        {
            builder = builder.api_key(api_key);
        }
        builder.connect().await
    }

    /// Starts configuring a connection to `url`; finish with
    /// [`EngramBuilder::connect`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use std::time::Duration;
    /// use engram_client::{Engram, RetryPolicy};
    ///
    /// let url = "http://127.0.0.1:50051";
    /// # let url = &std::env::var("ENGRAM_SERVER").unwrap_or(url.into());
    /// let engram = Engram::builder(url)
    ///     .api_key("secret-key")
    ///     .timeout(Duration::from_secs(10))
    ///     .connect_timeout(Duration::from_secs(2))
    ///     .retry(RetryPolicy { max_attempts: 6, ..RetryPolicy::default() })
    ///     .connect()
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder(url: impl Into<String>) -> EngramBuilder {
        EngramBuilder::new(url.into())
    }

    /// The memory service: memories, search, context and episodes.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::{Engram, ListMemories, proto::Scope};
    ///
    /// let engram = Engram::from_env().await?;
    /// let page = engram.memory().list_memories(ListMemories::new(Scope::new("docs-nothing"))).await?;
    /// assert!(page.memories.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn memory(&self) -> MemoryClient {
        MemoryClient::new(self.connection.clone())
    }

    /// The learning service: outcomes, heuristics, anti-patterns, task
    /// rules, mistake cards, consolidation, forgetting and statistics.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::{Engram, proto::{GetStatsRequest, Scope}};
    ///
    /// let engram = Engram::from_env().await?;
    /// let stats = engram.learning().get_stats(GetStatsRequest { scope: Some(Scope::new("docs-nothing")) }).await?;
    /// assert_eq!(stats.outcomes, 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn learning(&self) -> LearningClient {
        LearningClient::new(self.connection.clone())
    }

    /// The policy service: decide what is worth remembering, and remember it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::{Classify, Engram, proto::Scope};
    ///
    /// let engram = Engram::from_env().await?;
    /// let answer = engram.policy().classify(Classify::new(Scope::new("docs-nothing"), "User: hi!")).await?;
    /// assert!(!answer.decision.unwrap().should_store);
    /// # Ok(())
    /// # }
    /// ```
    pub fn policy(&self) -> PolicyClient {
        PolicyClient::new(self.connection.clone())
    }

    /// The underlying channel, for services this client does not wrap (such
    /// as `grpc.health.v1.Health`). Calls made on it carry no API key.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::proto::memory_service_client::MemoryServiceClient;
    ///
    /// let engram = engram_client::Engram::from_env().await?;
    /// let raw = MemoryServiceClient::new(engram.channel());
    /// # drop(raw);
    /// # Ok(())
    /// # }
    /// ```
    pub fn channel(&self) -> tonic::transport::Channel {
        self.connection.channel.clone()
    }
}
