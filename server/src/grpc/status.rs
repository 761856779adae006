//! The one mapping from the server's [`Error`] to a gRPC status (DESIGN §2).

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt as _};

use crate::error::Error;

impl From<Error> for Status {
    fn from(err: Error) -> Status {
        match err {
            Error::InvalidArgument(violations) => {
                // The message names every problem too, for callers (and
                // grpcurl users) who do not decode the details.
                let message = violations
                    .iter()
                    .map(|v| format!("{}: {}", v.field, v.description))
                    .collect::<Vec<_>>()
                    .join("; ");
                let details = ErrorDetails::with_bad_request(
                    violations
                        .into_iter()
                        .map(|v| FieldViolation::new(v.field, v.description))
                        .collect::<Vec<_>>(),
                );
                Status::with_error_details(
                    Code::InvalidArgument,
                    format!("invalid request: {message}"),
                    details,
                )
            }
            Error::NotFound(message) => Status::not_found(message),
            Error::AlreadyExists(message) => Status::already_exists(message),
            Error::Aborted(message) => Status::aborted(message),
            Error::FailedPrecondition(message) => Status::failed_precondition(message),
            Error::Unavailable(message) => Status::unavailable(message),
            Error::Internal(detail) => {
                // The detail may name tables or paths: it goes to the log only.
                tracing::error!(error = %detail, "internal error");
                Status::internal("internal error; see the server log")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_errors_carry_bad_request_field_violations() {
        let status = Status::from(Error::invalid("memory.content", "must not be empty"));
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(
            status.message(),
            "invalid request: memory.content: must not be empty"
        );
        let bad_request = status
            .get_error_details()
            .bad_request()
            .cloned()
            .expect("BadRequest details");
        assert_eq!(bad_request.field_violations[0].field, "memory.content");
    }

    #[test]
    fn internal_details_never_reach_the_caller() {
        let status = Status::from(Error::Internal("database: no such table: memories".into()));
        assert_eq!(status.code(), Code::Internal);
        assert!(!status.message().contains("memories"));
    }
}
