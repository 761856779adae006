//! The one mapping from the server's [`Error`] to a gRPC status (DESIGN §2).

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt as _};

use crate::error::Error;

/// Bounds on what an INVALID_ARGUMENT carries, so that its trailers stay
/// well under 8 KiB — what every gRPC client accepts — however many
/// violations a request has or however long the text it echoes: the
/// message (percent-encoded on the wire, up to 3× for non-ASCII text) and
/// the BadRequest details (base64, 4/3×) hold the first violations, each
/// cut to these lengths, and the message counts the rest.
const MAX_FIELD_CHARS: usize = 128;
const MAX_DESCRIPTION_CHARS: usize = 256;
const MAX_MESSAGE_BYTES: usize = 1_200;
const MAX_DETAILS_BYTES: usize = 2_400;

/// `text` cut to `max` characters, marked with "…" when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

impl From<Error> for Status {
    fn from(err: Error) -> Status {
        match err {
            Error::InvalidArgument(violations) => {
                // The message names the problems too, for callers (and
                // grpcurl users) who do not decode the details.
                let total = violations.len();
                let mut message = String::from("invalid request: ");
                let mut shown = Vec::new();
                let mut details_bytes = 0;
                for v in violations {
                    let (field, description) = (
                        cut(&v.field, MAX_FIELD_CHARS),
                        cut(&v.description, MAX_DESCRIPTION_CHARS),
                    );
                    let named = format!("{field}: {description}");
                    let fits = message.len() + named.len() + 2 <= MAX_MESSAGE_BYTES
                        && details_bytes + field.len() + description.len() + 8 <= MAX_DETAILS_BYTES;
                    if !fits && !shown.is_empty() {
                        break;
                    }
                    if !shown.is_empty() {
                        message.push_str("; ");
                    }
                    message.push_str(&named);
                    details_bytes += field.len() + description.len() + 8;
                    shown.push(FieldViolation::new(field, description));
                }
                if shown.len() < total {
                    message.push_str(&format!(
                        "; and {} more (fix these and send again)",
                        total - shown.len()
                    ));
                }
                Status::with_error_details(
                    Code::InvalidArgument,
                    message,
                    ErrorDetails::with_bad_request(shown),
                )
            }
            Error::NotFound(message) => Status::not_found(message),
            Error::AlreadyExists(message) => Status::already_exists(message),
            Error::Aborted(message) => Status::aborted(message),
            Error::FailedPrecondition(message) => Status::failed_precondition(message),
            Error::Unavailable(message) => Status::unavailable(message),
            // RetryInfo is the promise that the call was shed unread: the
            // Rust client repeats any call, a write too, on that promise.
            Error::Overloaded {
                message,
                retry_after,
            } => Status::with_error_details(
                Code::ResourceExhausted,
                message,
                ErrorDetails::with_retry_info(Some(retry_after)),
            ),
            // Not retryable at once: space comes back when someone frees it.
            Error::StorageFull(message) => Status::resource_exhausted(message),
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
    fn many_or_long_violations_stay_small_enough_for_any_client() {
        let violations = (0..1_000)
            .map(|i| crate::error::FieldViolation {
                field: format!("kinds[{i}]"),
                description: format!("{} is not a kind", "é".repeat(1_000)),
            })
            .collect();
        let status = Status::from(Error::InvalidArgument(violations));
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(
            status.message().len() <= MAX_MESSAGE_BYTES + 64,
            "{}",
            status.message().len()
        );
        assert!(
            status.details().len() <= MAX_DETAILS_BYTES + 64,
            "{}",
            status.details().len()
        );
        let shown = status
            .get_details_bad_request()
            .expect("details")
            .field_violations;
        assert!(!shown.is_empty() && shown.len() < 1_000);
        assert_eq!(shown[0].field, "kinds[0]");
        assert!(shown[0].description.ends_with('…'));
        assert!(
            status
                .message()
                .contains(&format!("and {} more", 1_000 - shown.len())),
            "{}",
            status.message()
        );
    }

    #[test]
    fn a_shed_call_carries_its_retry_delay() {
        let status = Status::from(Error::Overloaded {
            message: "the server is busy".into(),
            retry_after: std::time::Duration::from_millis(250),
        });
        assert_eq!(status.code(), Code::ResourceExhausted);
        let retry = status.get_details_retry_info().expect("RetryInfo");
        assert_eq!(
            retry.retry_delay,
            Some(std::time::Duration::from_millis(250))
        );
    }

    #[test]
    fn a_full_disk_is_resource_exhausted_and_says_what_to_do() {
        let status = Status::from(Error::storage_full());
        assert_eq!(status.code(), Code::ResourceExhausted);
        assert!(
            status.message().starts_with("storage is full"),
            "{}",
            status.message()
        );
        assert!(status.message().contains("free"), "{}", status.message());
    }

    #[test]
    fn internal_details_never_reach_the_caller() {
        let status = Status::from(Error::Internal("database: no such table: memories".into()));
        assert_eq!(status.code(), Code::Internal);
        assert!(!status.message().contains("memories"));
    }
}
