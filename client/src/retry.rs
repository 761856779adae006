//! When a failed call is tried again, and after how long.

use std::hash::{BuildHasher as _, Hasher as _};
use std::time::Duration;

/// How failed calls are tried again. After UNAVAILABLE (server unreachable,
/// restarting or its database busy) only calls that are safe to repeat are
/// retried: reads, and creates that carry a `request_id` (the server answers
/// a repeat with the first result). After the server shed a call
/// (RESOURCE_EXHAUSTED with a retry delay: too many calls in flight, or the
/// API key's rate limit) every call is retried, writes too: the server
/// refused it unread. Waits grow exponentially from `initial_backoff` up to
/// `max_backoff`, each shortened by a random part of up to half so that
/// many clients do not retry in step; a `google.rpc.RetryInfo` from the
/// server replaces the wait, cut to `max_backoff` and the call's timeout.
///
/// ```
/// use std::time::Duration;
/// use engram_client::RetryPolicy;
///
/// let patient = RetryPolicy {
///     max_attempts: 10,
///     max_backoff: Duration::from_secs(5),
///     ..RetryPolicy::default()
/// };
/// assert_eq!(patient.initial_backoff, Duration::from_millis(100));
/// assert_eq!(RetryPolicy::none().max_attempts, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// How many times a call is tried in all, the first try included; 1
    /// turns retries off.
    pub max_attempts: u32,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest wait between two tries.
    pub max_backoff: Duration,
    /// How much each wait grows over the one before.
    pub multiplier: f64,
}

impl Default for RetryPolicy {
    /// Four tries in all, waiting about 0.1 s, 0.2 s and 0.4 s between them.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            multiplier: 2.0,
        }
    }
}

impl RetryPolicy {
    /// Never retry: every failure is returned at once.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// use engram_client::{Engram, RetryPolicy};
    ///
    /// let url = "http://127.0.0.1:50051";
    /// # let url = &std::env::var("ENGRAM_SERVER").unwrap_or(url.into());
    /// let engram = Engram::builder(url).retry(RetryPolicy::none()).connect().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (1 for the first retry).
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let growth = self.multiplier.max(1.0).powi(exponent);
        let full = Duration::try_from_secs_f64(self.initial_backoff.as_secs_f64() * growth)
            .unwrap_or(self.max_backoff)
            .min(self.max_backoff);
        // A random fraction in [0.5, 1.0) of the full wait; RandomState is
        // seeded afresh each time, which is all the randomness jitter needs.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let fraction = 0.5 + (random % 1_000) as f64 / 2_000.0;
        full.mul_f64(fraction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_exponentially_up_to_the_cap_with_jitter_of_at_most_half() {
        let policy = RetryPolicy::default();
        for (retry, full_ms) in [
            (1, 100),
            (2, 200),
            (3, 400),
            (5, 1_600),
            (6, 2_000),
            (40, 2_000),
        ] {
            let full = Duration::from_millis(full_ms);
            for _ in 0..50 {
                let wait = policy.backoff(retry);
                assert!(
                    wait >= full / 2 && wait < full,
                    "retry {retry}: {wait:?} vs {full:?}"
                );
            }
        }
    }
}
