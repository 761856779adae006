//! Running a transaction again after it lost a race with another one.
//!
//! Under READ COMMITTED a transaction fails, rather than waits, in three
//! ways when another replica gets there first: a deadlock (40P01), a unique
//! violation on a key the other inserted meanwhile (23505: the same memory
//! identity, the same request id), and a serialization failure (40001).
//! Each rolls back everything the transaction did, so running it again is
//! safe: it then sees what the other committed (the row it collided with)
//! and the engine decides anew — merges, replays the first answer. Nothing
//! is written twice, and nothing is lost: the rolled-back attempt wrote
//! nothing.
//!
//! The pauses between attempts grow and are jittered, so that transactions
//! that collided once do not collide again in lockstep.

use std::hash::{BuildHasher as _, RandomState};
use std::time::Duration;

use crate::error::{Error, Result};

/// How many times a unit of work runs at most.
pub(super) const MAX_ATTEMPTS: u32 = 8;
/// The pause before the first retry, at most (it doubles each time).
const FIRST_PAUSE: Duration = Duration::from_millis(2);
/// The longest pause between two attempts.
const MAX_PAUSE: Duration = Duration::from_millis(200);

/// What [`super::db_error`] makes of a lost race, and what a caller is told
/// once the retries are used up.
pub(super) const CONFLICT: &str =
    "the write conflicted with concurrent writes and was rolled back; retry";

/// Whether `err` is a lost race, after which the transaction is run again.
pub(super) fn is_conflict(err: &Error) -> bool {
    matches!(err, Error::Unavailable(message) if message == CONFLICT)
}

/// The attempts of one unit of work.
#[derive(Debug, Default)]
pub(super) struct Retries {
    done: u32,
}

impl Retries {
    /// After a lost race: waits before the next attempt, or, when the
    /// attempts are used up, fails with the retryable [`CONFLICT`].
    pub(super) async fn pause(&mut self) -> Result<()> {
        self.done += 1;
        if self.done >= MAX_ATTEMPTS {
            tracing::warn!(
                attempts = self.done,
                "a transaction kept conflicting with concurrent writes; giving up"
            );
            return Err(Error::Unavailable(CONFLICT.into()));
        }
        crate::metrics::recorders().transaction_retries.inc();
        tokio::time::sleep(pause(self.done)).await;
        Ok(())
    }
}

/// The pause before attempt `retry + 1`: up to twice the previous, at
/// least half of that bound (so the pauses still grow), at random.
fn pause(retry: u32) -> Duration {
    let bound = FIRST_PAUSE
        .saturating_mul(1 << retry.saturating_sub(1).min(16))
        .min(MAX_PAUSE);
    let half = bound / 2;
    // A fresh RandomState is seeded at random: enough for jitter.
    let random = RandomState::new().hash_one(retry);
    let extra = u128::from(random) % half.as_micros().max(1);
    half + Duration::from_micros(u64::try_from(extra).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_are_jittered_and_bounded() {
        for retry in 1..MAX_ATTEMPTS {
            let bound = FIRST_PAUSE.saturating_mul(1 << (retry - 1)).min(MAX_PAUSE);
            let pauses: Vec<Duration> = (0..50).map(|_| pause(retry)).collect();
            assert!(pauses.iter().all(|p| *p >= bound / 2 && *p <= bound));
            assert!(
                pauses.iter().any(|p| *p != pauses[0]),
                "jittered: {pauses:?}"
            );
        }
    }

    #[tokio::test]
    async fn the_attempts_are_bounded_and_end_in_a_retryable_error() {
        let mut retries = Retries::default();
        for _ in 1..MAX_ATTEMPTS {
            retries.pause().await.expect("another attempt");
        }
        let last = retries.pause().await.expect_err("no more attempts");
        assert!(is_conflict(&last), "{last:?}");
    }
}
