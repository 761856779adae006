//! A typed Rust client for Engram, the long-term memory service for AI agents.
//!
//! ```no_run
//! # async fn demo() -> Result<(), engram_client::Error> {
//! use engram_client::{Engram, proto};
//!
//! let engram = Engram::connect("http://127.0.0.1:50051").await?;
//! let created = engram
//!     .memory()
//!     .create_memory(proto::CreateMemoryRequest {
//!         scope: Some(proto::Scope { namespace: "demo".into(), ..Default::default() }),
//!         memory: Some(proto::MemoryInput {
//!             content: "The user prefers tabs over spaces".into(),
//!             memory_type: proto::MemoryType::Preference.into(),
//!             ..Default::default()
//!         }),
//!         ..Default::default()
//!     })
//!     .await?
//!     .into_inner();
//! println!("stored {}", created.memory.unwrap().id);
//! # Ok(())
//! # }
//! ```

use tonic::transport::{Channel, Endpoint};
use tonic_types::StatusExt as _;

/// The generated `engram.v1` messages and enums, re-exported so callers need
/// no other crate (and no `protoc`).
pub use engram::v1 as proto;
pub use tonic::{Code, Status};

/// The largest response accepted. A batch create echoes every memory it
/// stored, which can be far above gRPC's default of 4 MiB.
pub const MAX_RESPONSE_BYTES: usize = 256 * 1024 * 1024;

/// The memory service's generated client over a shared connection.
pub type MemoryClient = proto::memory_service_client::MemoryServiceClient<Channel>;
/// The learning service's generated client over a shared connection.
pub type LearningClient = proto::learning_service_client::LearningServiceClient<Channel>;
/// The policy service's generated client over a shared connection.
pub type PolicyClient = proto::policy_service_client::PolicyServiceClient<Channel>;

/// What can go wrong talking to Engram.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL is not a valid endpoint.
    #[error("invalid server URL {url:?}: {source}")]
    InvalidUrl {
        url: String,
        #[source]
        source: tonic::transport::Error,
    },
    /// The connection could not be made. (A connection lost during a call
    /// surfaces as a `Status` with code UNAVAILABLE.)
    #[error("cannot reach the Engram server: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The server answered with an error status.
    #[error("{}: {}", .0.code(), .0.message())]
    Status(#[from] Status),
}

impl Error {
    /// The gRPC status code, when the server answered.
    pub fn code(&self) -> Option<Code> {
        match self {
            Error::Status(status) => Some(status.code()),
            _ => None,
        }
    }

    /// The `(field, description)` pairs of an INVALID_ARGUMENT answer.
    pub fn field_violations(&self) -> Vec<(String, String)> {
        match self {
            Error::Status(status) => field_violations(status),
            _ => Vec::new(),
        }
    }
}

/// The `(field, description)` pairs of the `google.rpc.BadRequest` carried by
/// `status`, if any.
pub fn field_violations(status: &Status) -> Vec<(String, String)> {
    status
        .get_error_details()
        .bad_request()
        .map(|bad| {
            bad.field_violations
                .iter()
                .map(|v| (v.field.clone(), v.description.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// A connection to an Engram server. Cheap to clone; clones share the
/// connection.
#[derive(Debug, Clone)]
pub struct Engram {
    channel: Channel,
}

impl Engram {
    /// Connects to the server at `url`, e.g. `http://127.0.0.1:50051`.
    pub async fn connect(url: impl Into<String>) -> Result<Engram, Error> {
        let url = url.into();
        let endpoint = Endpoint::from_shared(url.clone())
            .map_err(|source| Error::InvalidUrl { url, source })?;
        Ok(Engram {
            channel: endpoint.connect().await?,
        })
    }

    /// The memory service: memories, search and context.
    pub fn memory(&self) -> MemoryClient {
        MemoryClient::new(self.channel.clone()).max_decoding_message_size(MAX_RESPONSE_BYTES)
    }

    /// The learning service: outcomes, heuristics, anti-patterns, task
    /// rules, mistake cards, consolidation, forgetting and statistics.
    pub fn learning(&self) -> LearningClient {
        LearningClient::new(self.channel.clone()).max_decoding_message_size(MAX_RESPONSE_BYTES)
    }

    /// The policy service: decide what is worth remembering, and remember it.
    pub fn policy(&self) -> PolicyClient {
        PolicyClient::new(self.channel.clone()).max_decoding_message_size(MAX_RESPONSE_BYTES)
    }

    /// The underlying channel, for services this client does not wrap (such
    /// as `grpc.health.v1.Health`).
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }
}
