//! The server's one error type. `grpc/status.rs` maps it to `tonic::Status`;
//! nothing else decides a status code.

/// A request field that failed validation, reported to the caller as a
/// `google.rpc.BadRequest.FieldViolation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldViolation {
    /// The field's path in the request, e.g. `memory.content` or `memories[3].tags[0]`.
    pub field: String,
    /// What is wrong with it, in words a caller can act on.
    pub description: String,
}

/// Everything that can go wrong while serving a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The request is malformed; nothing was changed.
    #[error("invalid request: {} field violation(s)", .0.len())]
    InvalidArgument(Vec<FieldViolation>),
    /// The named resource does not exist or is not visible from the scope.
    #[error("{0}")]
    NotFound(String),
    /// The write would create a resource that already exists.
    #[error("{0}")]
    AlreadyExists(String),
    /// A concurrency check failed (stale etag).
    #[error("{0}")]
    Aborted(String),
    /// The resource is not in the state the operation needs.
    #[error("{0}")]
    FailedPrecondition(String),
    /// The database stayed busy past its timeout, or the server is shutting down.
    #[error("{0}")]
    Unavailable(String),
    /// The call was refused before any of it was read (too many calls in
    /// flight, or the caller's rate limit): nothing was done, so any call,
    /// a write too, may be sent again after `retry_after`.
    #[error("{message}")]
    Overloaded {
        message: String,
        retry_after: std::time::Duration,
    },
    /// The disk is full: nothing was written. The message says what the
    /// operator should do (see [`crate::disk`]).
    #[error("{0}")]
    StorageFull(String),
    /// A bug or an unexpected storage failure. The message is for logs only;
    /// the caller sees a generic one.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// A write refused, or rolled back, because the disk is full.
    pub fn storage_full() -> Self {
        Error::StorageFull(crate::disk::FULL_MESSAGE.into())
    }

    /// A validation error about a single field.
    pub fn invalid(field: impl Into<String>, description: impl Into<String>) -> Self {
        Error::InvalidArgument(vec![FieldViolation {
            field: field.into(),
            description: description.into(),
        }])
    }
}

/// The server's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
