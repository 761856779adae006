//! `--rate-limit-per-key`: each API key's calls to the engram.v1 services
//! are a token bucket, refilled at the rate up to the burst; a call finding
//! no token is shed with the time until the next one is due.
//!
//! Keyed by the key's id from its [`Grant`], so the layer sits behind
//! authentication, and there are as many buckets as keys in the key file
//! (the flag needs `--auth-keys`: without keys every caller is anonymous,
//! and peer addresses behind a proxy or NAT are shared, so a limit "per
//! caller" would be a guess).

use std::collections::HashMap;
use std::fmt;
use std::future::{Ready, ready};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::future::Either;
use tower::{Layer, Service};

use super::{as_retry_delay, shed_response};
use crate::grpc::auth::Grant;
use crate::metrics::ShedReason;

/// How many keys' buckets are kept before the full ones (indistinguishable
/// from new ones) are forgotten: keys come from the operator's file, but
/// every reload may bring new ones.
const MAX_BUCKETS: usize = 10_000;

/// A rate of calls, with the burst a key may spend at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Calls per `per`.
    pub calls: u32,
    /// The time `calls` are allowed in.
    pub per: Duration,
    /// Calls a key may make at once, its bucket's size.
    pub burst: u32,
}

impl RateLimit {
    /// Parses "100/s", "6000/m" or "50000/h", with a burst of one second's
    /// calls (at least one).
    pub fn parse(text: &str) -> Result<RateLimit, String> {
        let wrong = || format!("{text:?} is not a rate like 100/s, 6000/m or 50000/h");
        let (calls, unit) = text.trim().split_once('/').ok_or_else(wrong)?;
        let calls: u32 = calls.trim().parse().map_err(|_| wrong())?;
        let per = match unit.trim() {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(wrong()),
        };
        if calls == 0 {
            return Err(format!("{text:?}: the rate must allow at least one call"));
        }
        let per_second = f64::from(calls) / per.as_secs_f64();
        Ok(RateLimit {
            calls,
            per,
            // At most `calls`, so it fits a u32.
            burst: per_second.ceil().max(1.0) as u32,
        })
    }

    /// This rate with `burst`, when given.
    pub fn with_burst(self, burst: Option<u32>) -> RateLimit {
        RateLimit {
            burst: burst.unwrap_or(self.burst),
            ..self
        }
    }

    fn per_second(&self) -> f64 {
        f64::from(self.calls) / self.per.as_secs_f64()
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.per.as_secs() {
            1 => "s",
            60 => "m",
            _ => "h",
        };
        write!(f, "{}/{unit}, burst {}", self.calls, self.burst)
    }
}

/// One key's tokens.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    fn full(limit: &RateLimit, now: Instant) -> Bucket {
        Bucket {
            tokens: f64::from(limit.burst),
            updated: now,
        }
    }

    /// The tokens at `now`, refilled since the last update.
    fn refill(&mut self, limit: &RateLimit, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * limit.per_second()).min(f64::from(limit.burst));
        self.updated = now;
    }

    /// Takes a token at `now`, or says how long until one is due.
    fn take(&mut self, limit: &RateLimit, now: Instant) -> Result<(), Duration> {
        self.refill(limit, now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        let wait = (1.0 - self.tokens) / limit.per_second();
        Err(Duration::try_from_secs_f64(wait).unwrap_or(limit.per))
    }

    fn is_full(&self, limit: &RateLimit, now: Instant) -> bool {
        let mut refilled = *self;
        refilled.refill(limit, now);
        refilled.tokens >= f64::from(limit.burst)
    }
}

/// Every key's bucket.
#[derive(Debug)]
struct Limiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Limiter {
    /// Takes a token of `key_id`'s at `now`, or says how long until one is due.
    fn take(&self, key_id: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bucket) = buckets.get_mut(key_id) {
            return bucket.take(&self.limit, now);
        }
        if buckets.len() >= MAX_BUCKETS {
            buckets.retain(|_, bucket| !bucket.is_full(&self.limit, now));
        }
        let mut bucket = Bucket::full(&self.limit, now);
        let taken = bucket.take(&self.limit, now);
        buckets.insert(key_id.to_owned(), bucket);
        taken
    }
}

/// Sheds the calls of a key beyond its rate; lets everything through when
/// there is no limit or the call carries no [`Grant`].
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    limiter: Option<Arc<Limiter>>,
}

impl RateLimitLayer {
    pub fn new(limit: Option<RateLimit>) -> RateLimitLayer {
        RateLimitLayer {
            limiter: limit.map(|limit| {
                Arc::new(Limiter {
                    limit,
                    buckets: Mutex::default(),
                })
            }),
        }
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimited {
            inner,
            limiter: self.limiter.clone(),
        }
    }
}

/// The service [`RateLimitLayer`] makes.
#[derive(Debug, Clone)]
pub struct RateLimited<S> {
    inner: S,
    limiter: Option<Arc<Limiter>>,
}

impl<S, B, R> Service<http::Request<B>> for RateLimited<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    R: Default,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Either<S::Future, Ready<Result<S::Response, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if let Some(limiter) = &self.limiter
            && let Some(grant) = request.extensions().get::<Arc<Grant>>()
            && let Err(wait) = limiter.take(&grant.key_id, Instant::now())
        {
            let retry_after = as_retry_delay(wait);
            let message = format!(
                "this API key's rate limit ({}) is used up; retry after {} ms",
                limiter.limit,
                retry_after.as_millis()
            );
            return Either::Right(ready(Ok(shed_response(
                ShedReason::RateLimit,
                message,
                retry_after,
            ))));
        }
        Either::Left(self.inner.call(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(text: &str) -> RateLimit {
        RateLimit::parse(text).expect("a rate")
    }

    #[test]
    fn rates_take_a_unit_and_default_to_a_burst_of_one_second() {
        assert_eq!(
            limit("100/s"),
            RateLimit {
                calls: 100,
                per: Duration::from_secs(1),
                burst: 100
            }
        );
        assert_eq!(limit("6000/m").burst, 100);
        assert_eq!(limit("10/h").burst, 1);
        assert_eq!(limit("10/h").with_burst(Some(5)).burst, 5);
        assert_eq!(limit("10/h").to_string(), "10/h, burst 1");
        for bad in ["100", "0/s", "-1/s", "5/d", "x/s", "5/ s/"] {
            assert!(RateLimit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bucket_spends_its_burst_then_says_when_the_next_token_is_due() {
        let limit = limit("5/s");
        let start = Instant::now();
        let limiter = Limiter {
            limit,
            buckets: Mutex::default(),
        };
        for _ in 0..5 {
            assert_eq!(limiter.take("a", start), Ok(()));
        }
        assert_eq!(limiter.take("a", start), Err(Duration::from_millis(200)));
        let later = start + Duration::from_millis(150);
        let wait = limiter.take("a", later).expect_err("no token yet");
        assert!(
            wait > Duration::from_millis(49) && wait < Duration::from_millis(51),
            "{wait:?}"
        );
        assert_eq!(limiter.take("b", later), Ok(()), "another key has its own");
        assert_eq!(
            limiter.take("a", start + Duration::from_millis(200)),
            Ok(())
        );
    }

    #[test]
    fn buckets_stay_bounded_by_forgetting_full_ones() {
        let limiter = Limiter {
            limit: limit("1/s"),
            buckets: Mutex::default(),
        };
        let now = Instant::now();
        for key in 0..MAX_BUCKETS {
            let _ = limiter.take(&key.to_string(), now);
        }
        let later = now + Duration::from_secs(1);
        assert_eq!(limiter.take("new", later), Ok(()));
        assert_eq!(limiter.buckets.lock().expect("lock").len(), 1);
    }
}
