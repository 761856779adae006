//! The client's one error type.

use std::error::Error as _;
use std::time::Duration;

use tonic::{Code, Status};
use tonic_types::StatusExt as _;

/// What can go wrong talking to Engram: a client that was set up wrongly, a
/// server that cannot be reached or stopped answering, or an error status the
/// server answered with.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), engram_client::Error> {
/// use engram_client::{Code, Engram, Error, proto};
///
/// let engram = Engram::from_env().await?;
/// let bad = proto::CreateMemoryRequest {
///     memory: Some(proto::MemoryInput { content: "  ".into(), ..Default::default() }),
///     ..Default::default()
/// };
/// match engram.memory().create_memory(bad).await {
///     Err(error @ Error::Status(_)) => {
///         assert_eq!(error.code(), Code::InvalidArgument);
///         assert!(error.field_violations().iter().any(|(field, _)| field == "memory.content"));
///     }
///     other => panic!("expected INVALID_ARGUMENT, got {other:?}"),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client's own settings are wrong (a malformed URL, an API key that
    /// cannot be sent as a header, a CA file without a PEM certificate).
    /// Nothing was sent.
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// No connection could be made to the server.
    #[error("cannot reach the Engram server: {}", source_chain(.0))]
    Connect(#[source] tonic::transport::Error),
    /// The call failed on its way: the connection was refused or broke, or no
    /// answer came in time. The server may or may not have acted on it.
    #[error("call to the Engram server failed: {}: {}", code_name(.0.code()), transport_message(.0))]
    Transport(Status),
    /// The server answered with an error status.
    #[error("{}: {}", code_name(.0.code()), .0.message())]
    Status(Status),
}

impl Error {
    /// Sorts a failed call's status into a transport failure (made by the
    /// client library, with the I/O error as its source, or a deadline that
    /// ran out) or the server's own answer.
    pub(crate) fn from_call(status: Status) -> Error {
        if status.source().is_none() {
            return Error::Status(status);
        }
        // tonic reports its own deadline as CANCELLED ("Timeout expired");
        // say what happened, as the client's own timer does.
        let mut cause = status.source();
        let mut timed_out = false;
        while let Some(error) = cause {
            timed_out |= error.is::<tonic::TimeoutExpired>();
            cause = error.source();
        }
        if timed_out && status.code() == Code::Cancelled {
            let mut deadline = Status::new(Code::DeadlineExceeded, status.message());
            deadline.set_source(std::sync::Arc::new(tonic::TimeoutExpired(())));
            return Error::Transport(deadline);
        }
        Error::Transport(status)
    }

    /// The gRPC code of the failure: the server's code for [`Error::Status`],
    /// the client library's for [`Error::Transport`] (usually UNAVAILABLE or
    /// DEADLINE_EXCEEDED), UNAVAILABLE for [`Error::Connect`] and
    /// INVALID_ARGUMENT for [`Error::Config`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use engram_client::{Code, Engram};
    ///
    /// // Nothing listens on port 1.
    /// let error = Engram::connect("http://127.0.0.1:1").await.unwrap_err();
    /// assert_eq!(error.code(), Code::Unavailable);
    /// # }
    /// ```
    pub fn code(&self) -> Code {
        match self {
            Error::Config(_) => Code::InvalidArgument,
            Error::Connect(_) => Code::Unavailable,
            Error::Transport(status) | Error::Status(status) => status.code(),
        }
    }

    /// The canonical name of [`Error::code`], as gRPC tools print it
    /// (e.g. `INVALID_ARGUMENT`).
    ///
    /// ```
    /// use engram_client::Error;
    ///
    /// let error = Error::Config("no URL".into());
    /// assert_eq!(error.code_name(), "INVALID_ARGUMENT");
    /// ```
    pub fn code_name(&self) -> &'static str {
        code_name(self.code())
    }

    /// The status of a failed call, if the call was made.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::{Code, Engram, proto};
    ///
    /// let engram = Engram::from_env().await?;
    /// let missing = proto::GetMemoryRequest {
    ///     id: "0196d1a4-2b6e-7c3d-9e1f-0a1b2c3d4e5f".into(),
    ///     ..Default::default()
    /// };
    /// let error = engram.memory().get_memory(missing).await.unwrap_err();
    /// assert_eq!(error.status().map(|s| s.code()), Some(Code::NotFound));
    /// # Ok(())
    /// # }
    /// ```
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Transport(status) | Error::Status(status) => Some(status),
            Error::Config(_) | Error::Connect(_) => None,
        }
    }

    /// The human-readable message: the server's status message for
    /// [`Error::Status`], else the whole error.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::{Engram, proto};
    ///
    /// let engram = Engram::from_env().await?;
    /// let error = engram
    ///     .memory()
    ///     .get_memory(proto::GetMemoryRequest { id: "not-a-uuid".into(), ..Default::default() })
    ///     .await
    ///     .unwrap_err();
    /// assert!(error.message().contains("id"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn message(&self) -> String {
        match self {
            Error::Status(status) => status.message().to_owned(),
            other => other.to_string(),
        }
    }

    /// The `(field, description)` pairs of an INVALID_ARGUMENT answer's
    /// `google.rpc.BadRequest`, one per offending field; empty otherwise.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::{Engram, proto};
    ///
    /// let engram = Engram::from_env().await?;
    /// let error = engram
    ///     .memory()
    ///     .create_memory(proto::CreateMemoryRequest {
    ///         memory: Some(proto::MemoryInput {
    ///             content: "".into(),
    ///             importance: Some(3.0),
    ///             ..Default::default()
    ///         }),
    ///         ..Default::default()
    ///     })
    ///     .await
    ///     .unwrap_err();
    /// let fields: Vec<String> = error.field_violations().into_iter().map(|(f, _)| f).collect();
    /// assert!(fields.contains(&"memory.content".to_owned()));
    /// assert!(fields.contains(&"memory.importance".to_owned()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn field_violations(&self) -> Vec<(String, String)> {
        match self {
            Error::Status(status) => field_violations(status),
            _ => Vec::new(),
        }
    }

    /// How long the server asked the client to wait before trying again
    /// (`google.rpc.RetryInfo`), if it said.
    ///
    /// ```
    /// use engram_client::{Error, Status};
    ///
    /// let error = Error::Status(Status::unavailable("database busy"));
    /// assert_eq!(error.retry_after(), None);
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        let Error::Status(status) = self else {
            return None;
        };
        let delay = status.get_error_details().retry_info()?.retry_delay?;
        Some(delay)
    }

    /// Whether trying the same call again may succeed: the server was
    /// unreachable or busy (UNAVAILABLE), or it shed the call ([`Error::is_shed`]).
    ///
    /// ```
    /// use engram_client::{Error, Status};
    ///
    /// assert!(Error::Status(Status::unavailable("database busy")).is_retryable());
    /// assert!(!Error::Status(Status::not_found("no such memory")).is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        let unavailable = matches!(self, Error::Transport(_) | Error::Status(_))
            && self.code() == Code::Unavailable;
        unavailable || self.is_shed()
    }

    /// Whether the server shed the call: RESOURCE_EXHAUSTED with a retry
    /// delay (`google.rpc.RetryInfo`), which Engram sends only for a call it
    /// refused before reading it (too many calls in flight, or the API key's
    /// rate limit). Nothing was done, so any call — a write too — may be sent
    /// again after [`Error::retry_after`]; the client's retries do. A
    /// RESOURCE_EXHAUSTED without a delay (say, a message too large for the
    /// client) is not shed, and not retried.
    ///
    /// ```
    /// use std::time::Duration;
    /// use engram_client::{Code, Error, Status};
    /// use tonic_types::{ErrorDetails, StatusExt as _};
    ///
    /// let busy = Status::with_error_details(
    ///     Code::ResourceExhausted,
    ///     "the server is busy",
    ///     ErrorDetails::with_retry_info(Some(Duration::from_millis(250))),
    /// );
    /// let shed = Error::Status(busy);
    /// assert!(shed.is_shed() && shed.is_retryable());
    /// assert_eq!(shed.retry_after(), Some(Duration::from_millis(250)));
    /// let too_large = Error::Status(Status::resource_exhausted("message too large"));
    /// assert!(!too_large.is_shed() && !too_large.is_retryable());
    /// ```
    pub fn is_shed(&self) -> bool {
        matches!(self, Error::Status(status) if status.code() == Code::ResourceExhausted)
            && self.retry_after().is_some()
    }
}

/// The `(field, description)` pairs of the `google.rpc.BadRequest` carried by
/// `status`, if any.
///
/// ```
/// use engram_client::{Status, field_violations};
///
/// assert!(field_violations(&Status::not_found("no such memory")).is_empty());
/// ```
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

/// The canonical name of a gRPC code, as other gRPC tools print it.
fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The message of a transport failure with its causes, which say what
/// actually went wrong ("Connection refused").
fn transport_message(status: &Status) -> String {
    with_causes(status.message().to_owned(), status.source())
}

/// `error` with its causes, which say what actually went wrong.
pub(crate) fn source_chain(error: &tonic::transport::Error) -> String {
    with_causes(error.to_string(), error.source())
}

fn with_causes(
    mut message: String,
    mut source: Option<&(dyn std::error::Error + 'static)>,
) -> String {
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = cause.source();
    }
    message
}
