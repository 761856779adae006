//! `--max-concurrent-calls`: when that many engram.v1 calls are in flight,
//! a new one is shed at once rather than queued without bound — a queue
//! longer than the server can work off only makes every call late and holds
//! every waiting request in memory.
//!
//! A call is in flight from the moment its headers reach the layer until
//! its response body ends (or is dropped, when the client goes away):
//! a StreamSteps stream holds its slot while it is open, and so would a
//! server-streaming RPC while it sends. For a unary call this is the
//! handler and the sending of its one message — both work the server does.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use prometheus_client::metrics::gauge::Gauge;
use tower::{Layer, Service};

use super::{jittered, shed_response};
use crate::grpc::watched_body::{BodyWatcher, WatchedBody};
use crate::metrics::ShedReason;

/// The default `--max-concurrent-calls`. Far above what the server works
/// on at once (a few cores, 4 readers, one writer committing up to 256
/// writes together) and above the 64 in flight the benchmarks drive, so a
/// healthy server never sheds; low enough that a flood is turned away in
/// microseconds instead of queueing thousands of requests in memory.
pub const DEFAULT_MAX_CONCURRENT_CALLS: u32 = 1024;

/// The shortest retry delay a shed call carries: long enough for a few
/// calls in flight to finish, short enough that a client barely notices.
const RETRY_DELAY: Duration = Duration::from_millis(200);
/// Up to this much is added at random, so that the clients shed in one
/// burst come back spread out.
const RETRY_JITTER: Duration = Duration::from_millis(200);

/// The calls in flight, shared by the services of one server.
#[derive(Debug)]
struct Slots {
    max: i64,
    /// The count itself, so the metrics endpoint reports it at no cost.
    in_flight: Gauge,
}

impl Slots {
    /// A slot for one more call, or the number in flight when none is free.
    fn take(self: &Arc<Self>) -> Result<Slot, i64> {
        self.in_flight
            .inner()
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .map(|_| Slot(self.clone()))
    }
}

/// One call's place in flight, given back when dropped.
#[derive(Debug)]
pub struct Slot(Arc<Slots>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.in_flight.inner().fetch_sub(1, Ordering::AcqRel);
    }
}

/// Sheds calls beyond `max` in flight. One layer, cloned or applied to
/// several services, shares one count.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimitLayer {
    slots: Arc<Slots>,
}

impl ConcurrencyLimitLayer {
    /// At most `max` calls in flight, counted in `in_flight` (which should
    /// start at zero and count nothing else).
    pub fn new(max: usize, in_flight: Gauge) -> ConcurrencyLimitLayer {
        ConcurrencyLimitLayer {
            slots: Arc::new(Slots {
                max: i64::try_from(max).unwrap_or(i64::MAX),
                in_flight,
            }),
        }
    }

    /// The calls in flight now.
    pub fn in_flight(&self) -> i64 {
        self.slots.in_flight.get()
    }
}

impl<S> Layer<S> for ConcurrencyLimitLayer {
    type Service = ConcurrencyLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ConcurrencyLimit {
            inner,
            slots: self.slots.clone(),
        }
    }
}

/// The service [`ConcurrencyLimitLayer`] makes.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit<S> {
    inner: S,
    slots: Arc<Slots>,
}

impl<S, B, R> Service<http::Request<B>> for ConcurrencyLimit<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    R: Default,
{
    type Response = http::Response<SlotBody<R>>;
    type Error = S::Error;
    type Future = Limited<S::Future, R>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        match self.slots.take() {
            Ok(slot) => Limited::Admitted {
                inner: self.inner.call(request),
                slot: Some(slot),
            },
            Err(in_flight) => {
                let retry_after = super::as_retry_delay(jittered(RETRY_DELAY, RETRY_JITTER));
                let message = format!(
                    "the server is busy: {in_flight} calls in flight; retry after {} ms",
                    retry_after.as_millis()
                );
                Limited::Shed {
                    response: Some(shed_response(ShedReason::Concurrency, message, retry_after)),
                }
            }
        }
    }
}

pin_project! {
    /// The response of a call: the service's, holding the call's slot, or
    /// the answer to a shed one.
    #[project = LimitedProjection]
    pub enum Limited<F, R> {
        Admitted {
            #[pin]
            inner: F,
            slot: Option<Slot>,
        },
        Shed {
            response: Option<http::Response<R>>,
        },
    }
}

impl<F, R, E> Future for Limited<F, R>
where
    F: Future<Output = Result<http::Response<R>, E>>,
{
    type Output = Result<http::Response<SlotBody<R>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            LimitedProjection::Admitted { inner, slot } => {
                let response = std::task::ready!(inner.poll(cx));
                // The slot moves into the body, which ends the call.
                let slot = slot.take();
                Poll::Ready(
                    response.map(|response| response.map(|inner| SlotBody::new(inner, slot))),
                )
            }
            LimitedProjection::Shed { response } => Poll::Ready(Ok(response
                .take()
                .expect("a shed response is polled once")
                .map(|inner| SlotBody::new(inner, None)))),
        }
    }
}

/// A response body that gives its call's slot back when it ends.
pub type SlotBody<B> = WatchedBody<B, Slot>;

impl BodyWatcher for Slot {
    /// The slot is given back as it is dropped.
    fn ended(self, _trailers: Option<&http::HeaderMap>) {}
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http_body_util::{BodyExt as _, Full};
    use tonic_types::StatusExt as _;

    use super::*;

    /// A response body of one message.
    fn body() -> Full<Bytes> {
        Full::new(Bytes::from_static(b"message"))
    }

    #[test]
    fn slots_are_taken_up_to_the_limit_and_given_back_when_dropped() {
        let layer = ConcurrencyLimitLayer::new(2, Gauge::default());
        let first = layer.slots.take().expect("first");
        let _second = layer.slots.take().expect("second");
        assert_eq!(layer.slots.take().map(|_| ()), Err(2));
        drop(first);
        assert!(layer.slots.take().is_ok());
        assert_eq!(
            layer.in_flight(),
            1,
            "the slot taken last was dropped at once"
        );
    }

    #[tokio::test]
    async fn a_call_holds_its_slot_until_its_body_ends() {
        let layer = ConcurrencyLimitLayer::new(1, Gauge::default());
        let mut service = layer.layer(tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(body()))
        }));
        let response = service
            .call(http::Request::new(()))
            .await
            .expect("admitted");
        assert_eq!(layer.in_flight(), 1, "the body is still to be sent");

        let shed = service
            .call(http::Request::new(()))
            .await
            .expect("answered");
        let status = tonic::Status::from_header_map(shed.headers()).expect("a status");
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        let delay = status
            .get_details_retry_info()
            .and_then(|retry| retry.retry_delay)
            .expect("a retry delay");
        assert!(
            delay >= RETRY_DELAY && delay <= RETRY_DELAY + RETRY_JITTER,
            "{delay:?}"
        );

        response.into_body().collect().await.expect("body");
        assert_eq!(layer.in_flight(), 0);
        assert!(service.call(http::Request::new(())).await.is_ok());
    }
}
