//! Assertions about the server's answers: refusals, scores and ids.

use engram_client::{Code, Error};

/// Asserts `status` is INVALID_ARGUMENT with a violation of `field`, named in
/// the message too.
pub fn assert_rejects(status: &Error, field: &str) {
    assert!(
        matches!(status, Error::Status(_)),
        "the server's answer, not a transport failure: {status:?}"
    );
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let violations = status.field_violations();
    assert!(
        violations.iter().any(|(f, _)| f == field),
        "expected a violation of {field}, got {violations:?}"
    );
    assert!(
        status.message().contains(field),
        "the message names {field}: {}",
        status.message()
    );
}

/// Asserts two scores are equal but for rounding.
pub fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "{what}: {actual} is not {expected}"
    );
}

/// Asserts `id` is a UUIDv7, the form of every server-assigned id.
pub fn uuid_v7(id: &str) {
    let parts: Vec<&str> = id.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{id} is not a UUID"
    );
    assert!(
        id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()),
        "{id} is not a UUID"
    );
    assert!(parts[2].starts_with('7'), "{id} is not a UUIDv7");
}
