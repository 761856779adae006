//! The caller's deadline, from the `grpc-timeout` header its client sends:
//! work that may wait on something slow (the embeddings API) gives up in
//! time to answer rather than let the call fail.

use std::time::Duration;

/// The most digits of a `grpc-timeout` value (gRPC over HTTP/2 spec).
const MAX_TIMEOUT_DIGITS: usize = 8;

/// How long the caller of `request` waits for the answer, when it said.
pub(super) fn deadline<T>(request: &tonic::Request<T>) -> Option<Duration> {
    parse(request.metadata().get("grpc-timeout")?.to_str().ok()?)
}

/// Parses a `grpc-timeout` value: up to 8 digits and a unit (`H`, `M`, `S`,
/// `m`, `u` or `n`); `None` for anything else.
fn parse(value: &str) -> Option<Duration> {
    let digits = value.get(..value.len().checked_sub(1)?)?;
    if digits.is_empty()
        || digits.len() > MAX_TIMEOUT_DIGITS
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    match value.get(digits.len()..)? {
        "H" => Some(Duration::from_secs(amount * 3600)),
        "M" => Some(Duration::from_secs(amount * 60)),
        "S" => Some(Duration::from_secs(amount)),
        "m" => Some(Duration::from_millis(amount)),
        "u" => Some(Duration::from_micros(amount)),
        "n" => Some(Duration::from_nanos(amount)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_of_the_spec_is_understood() {
        assert_eq!(parse("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse("3M"), Some(Duration::from_secs(180)));
        assert_eq!(parse("30S"), Some(Duration::from_secs(30)));
        assert_eq!(parse("2999m"), Some(Duration::from_millis(2999)));
        assert_eq!(parse("15u"), Some(Duration::from_micros(15)));
        assert_eq!(parse("99999999n"), Some(Duration::from_nanos(99_999_999)));
    }

    #[test]
    fn anything_else_is_no_deadline() {
        for value in [
            "",
            "S",
            "5",
            "5s",
            "5x",
            "-5S",
            "+5S",
            "123456789S",
            "5é",
            "é",
        ] {
            assert_eq!(parse(value), None, "{value:?}");
        }
    }

    #[test]
    fn the_header_is_read_from_the_request() {
        let mut request = tonic::Request::new(());
        assert_eq!(deadline(&request), None);
        request
            .metadata_mut()
            .insert("grpc-timeout", "1500m".parse().unwrap());
        assert_eq!(deadline(&request), Some(Duration::from_millis(1500)));
    }
}
