//! Overload protection for the engram.v1 services: a limit on the calls in
//! flight ([`concurrency`]), each API key's share of them
//! ([`key_share`]), and an optional per-key rate limit ([`rate_limit`]),
//! all tower layers in front of each service. A call
//! beyond either is answered at once with RESOURCE_EXHAUSTED and a
//! `google.rpc.RetryInfo` delay, before any of its request is read: a shed
//! call did nothing, so any call — a write too — may be sent again (the
//! Rust client does). Health and reflection are never shed, so load
//! balancers still see a busy server as up.

pub mod concurrency;
pub mod key_share;
pub mod rate_limit;

use std::hash::{BuildHasher as _, Hasher as _};
use std::time::Duration;

pub use concurrency::{ConcurrencyLimitLayer, DEFAULT_MAX_CONCURRENT_CALLS};
pub use key_share::{KeyShare, KeyShareLayer};
pub use rate_limit::{RateLimit, RateLimitLayer};

use crate::error::Error;
use crate::metrics::{ShedReason, recorders};

/// What the engram.v1 services take before they shed calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overload {
    /// The most calls in flight at once, over all three services.
    pub max_concurrent_calls: usize,
    /// Each API key's rate, when limited.
    pub rate_limit: Option<RateLimit>,
    /// What one API key may hold of the server.
    pub key_share: KeyShare,
}

/// The trailers-only answer to a call shed for `reason`, counted in
/// `engram_shed_calls_total`. `message` says why, naming no key.
fn shed_response<R: Default>(
    reason: ShedReason,
    message: String,
    retry_after: Duration,
) -> http::Response<R> {
    recorders().shed(reason);
    tonic::Status::from(Error::Overloaded {
        message,
        retry_after,
    })
    .into_http()
}

/// `base` plus a random part of up to `spread`, so that the callers shed
/// together do not all come back together.
fn jittered(base: Duration, spread: Duration) -> Duration {
    // RandomState is seeded afresh each time: all the randomness jitter needs.
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    base + spread.mul_f64((random % 1_000) as f64 / 1_000.0)
}

/// `delay` in whole milliseconds, rounded up: what a retry delay is said in.
fn as_retry_delay(delay: Duration) -> Duration {
    Duration::from_millis(u64::try_from(delay.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_its_spread() {
        let (base, spread) = (Duration::from_millis(200), Duration::from_millis(200));
        for _ in 0..100 {
            let delay = jittered(base, spread);
            assert!(delay >= base && delay < base + spread, "{delay:?}");
        }
    }

    #[test]
    fn retry_delays_round_up_to_milliseconds() {
        assert_eq!(
            as_retry_delay(Duration::from_micros(1)),
            Duration::from_millis(1)
        );
        assert_eq!(
            as_retry_delay(Duration::from_millis(12)),
            Duration::from_millis(12)
        );
        assert_eq!(
            as_retry_delay(Duration::from_micros(12_001)),
            Duration::from_millis(13)
        );
    }
}
