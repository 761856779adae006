//! Each API key's share of the server (DESIGN §9): with `--auth-keys`, one
//! key may have at most `--max-calls-per-key` calls in flight (half of
//! `--max-concurrent-calls` by default) and at most `--max-streams-per-key`
//! streams open (WatchMemories watches and StreamSteps streams, which also
//! count as calls), so no key can take the last slot and starve the others
//! — however many watches it opens, the other keys' calls still get in.
//!
//! A call over its key's share is shed like one over the server's limit:
//! answered at once, unread, with RESOURCE_EXHAUSTED and a retry delay.
//! Without keys, callers cannot be told apart, and the server's limit is
//! the only one.

use std::collections::HashMap;
use std::future::{Future, ready};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tower::{Layer, Service};

use super::{as_retry_delay, jittered, shed_response};
use crate::grpc::auth::{Grant, is_streaming, rpc_method};
use crate::grpc::watched_body::{BodyWatcher, WatchedBody};
use crate::metrics::ShedReason;

/// The default `--max-streams-per-key`: many more watchers than one agent
/// fleet's services need, far fewer than the server's calls in flight.
pub const DEFAULT_MAX_STREAMS_PER_KEY: u32 = 64;

/// The shortest retry delay of a call shed for its key's share: the time
/// for a few of the key's own calls to finish.
const RETRY_DELAY: Duration = Duration::from_millis(200);
/// Up to this much is added at random.
const RETRY_JITTER: Duration = Duration::from_millis(200);

/// How much of the server one key may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyShare {
    /// Calls in flight (streams included).
    pub max_calls: usize,
    /// Streams open.
    pub max_streams: usize,
}

impl KeyShare {
    /// The default share of a server taking `max_concurrent_calls`: half
    /// of them (at least one), and [`DEFAULT_MAX_STREAMS_PER_KEY`] streams
    /// but never more than the calls.
    pub fn default_for(max_concurrent_calls: usize) -> KeyShare {
        let max_calls = (max_concurrent_calls / 2).max(1);
        KeyShare {
            max_calls,
            max_streams: (DEFAULT_MAX_STREAMS_PER_KEY as usize).min(max_calls),
        }
    }
}

/// What each key holds now.
#[derive(Debug, Default)]
struct Held {
    calls: usize,
    streams: usize,
}

#[derive(Debug)]
struct Ledger {
    share: KeyShare,
    held: Mutex<HashMap<String, Held>>,
}

/// Why a call was not let in.
#[derive(Debug, PartialEq, Eq)]
enum OverShare {
    Calls(usize),
    Streams(usize),
}

impl Ledger {
    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a call (a stream when `stream`) of `key`'s share, or says
    /// which part of the share is used up.
    fn take(self: &Arc<Self>, key: &str, stream: bool) -> Result<KeySlot, OverShare> {
        let mut held = self.held();
        let entry = held.entry(key.to_owned()).or_default();
        if entry.calls >= self.share.max_calls {
            return Err(OverShare::Calls(entry.calls));
        }
        if stream && entry.streams >= self.share.max_streams {
            return Err(OverShare::Streams(entry.streams));
        }
        entry.calls += 1;
        entry.streams += usize::from(stream);
        Ok(KeySlot {
            ledger: self.clone(),
            key: key.to_owned(),
            stream,
        })
    }
}

/// One call's place in its key's share, given back when dropped.
#[derive(Debug)]
pub struct KeySlot {
    ledger: Arc<Ledger>,
    key: String,
    stream: bool,
}

impl Drop for KeySlot {
    fn drop(&mut self) {
        let mut held = self.ledger.held();
        if let Some(entry) = held.get_mut(&self.key) {
            entry.calls -= 1;
            entry.streams -= usize::from(self.stream);
            if entry.calls == 0 {
                held.remove(&self.key);
            }
        }
    }
}

impl BodyWatcher for KeySlot {
    /// The slot is given back as it is dropped.
    fn ended(self, _trailers: Option<&http::HeaderMap>) {}
}

/// Sheds a key's calls beyond its share. One layer, cloned or applied to
/// several services, keeps one ledger.
#[derive(Debug, Clone)]
pub struct KeyShareLayer {
    ledger: Arc<Ledger>,
}

impl KeyShareLayer {
    pub fn new(share: KeyShare) -> KeyShareLayer {
        KeyShareLayer {
            ledger: Arc::new(Ledger {
                share,
                held: Mutex::default(),
            }),
        }
    }
}

impl<S> Layer<S> for KeyShareLayer {
    type Service = KeyShareLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        KeyShareLimit {
            inner,
            ledger: self.ledger.clone(),
        }
    }
}

/// The service [`KeyShareLayer`] makes.
#[derive(Debug, Clone)]
pub struct KeyShareLimit<S> {
    inner: S,
    ledger: Arc<Ledger>,
}

/// A response body that gives its call's place in its key's share back
/// when it ends.
pub type KeySlotBody<B> = WatchedBody<B, KeySlot>;

impl<S, B, R> Service<http::Request<B>> for KeyShareLimit<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = http::Response<KeySlotBody<R>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let slot = match request.extensions().get::<Arc<Grant>>() {
            None => None,
            Some(grant) => {
                let method = rpc_method(request.uri().path());
                match self.ledger.take(&grant.key_id, is_streaming(method)) {
                    Ok(slot) => Some(slot),
                    Err(over) => {
                        let shed: http::Response<R> = self.ledger.shed(over);
                        return Box::pin(ready(Ok(shed.map(|body| WatchedBody::new(body, None)))));
                    }
                }
            }
        };
        let response = self.inner.call(request);
        // The slot moves into the body, which ends the call.
        Box::pin(async move { Ok(response.await?.map(|body| WatchedBody::new(body, slot))) })
    }
}

impl Ledger {
    /// The answer to a call over its key's share.
    fn shed<R: Default>(&self, over: OverShare) -> http::Response<R> {
        let retry_after = as_retry_delay(jittered(RETRY_DELAY, RETRY_JITTER));
        let message = match over {
            OverShare::Calls(held) => format!(
                "this API key has {held} calls in flight, its share of the server \
                 (--max-calls-per-key {}); retry after {} ms",
                self.share.max_calls,
                retry_after.as_millis()
            ),
            OverShare::Streams(held) => format!(
                "this API key has {held} streams open, its share of the server \
                 (--max-streams-per-key {}): end one, or retry after {} ms",
                self.share.max_streams,
                retry_after.as_millis()
            ),
        };
        shed_response(ShedReason::KeyShare, message, retry_after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_takes_up_to_its_share_and_other_keys_are_untouched() {
        let ledger = Arc::new(Ledger {
            share: KeyShare {
                max_calls: 3,
                max_streams: 2,
            },
            held: Mutex::default(),
        });
        let first = ledger.take("a", true).expect("a stream");
        let _second = ledger.take("a", true).expect("a second stream");
        assert_eq!(
            ledger.take("a", true).map(|_| ()),
            Err(OverShare::Streams(2))
        );
        let _call = ledger.take("a", false).expect("a unary call");
        assert_eq!(
            ledger.take("a", false).map(|_| ()),
            Err(OverShare::Calls(3))
        );
        let _other = ledger.take("b", true).expect("another key");
        drop(first);
        assert!(ledger.take("a", true).is_ok());
    }

    #[test]
    fn the_ledger_forgets_a_key_that_holds_nothing() {
        let ledger = Arc::new(Ledger {
            share: KeyShare::default_for(8),
            held: Mutex::default(),
        });
        drop(ledger.take("a", false).expect("a call"));
        assert!(ledger.held().is_empty());
    }

    #[test]
    fn the_default_share_is_half_the_server() {
        assert_eq!(
            KeyShare::default_for(1024),
            KeyShare {
                max_calls: 512,
                max_streams: 64
            }
        );
        assert_eq!(
            KeyShare::default_for(1),
            KeyShare {
                max_calls: 1,
                max_streams: 1
            }
        );
    }
}
