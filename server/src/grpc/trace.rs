//! One tracing span per RPC, with its method, namespace (recorded by the
//! handler), API key id (recorded by the auth layer), gRPC status and
//! latency. A tower layer, so handlers hold no logging code beyond naming
//! their scope.
//!
//! A call ends at its status: in the response headers of a trailers-only
//! response (how an error is sent before any message), else in the trailers
//! after the body, which for a stream is long after the handler returned. So
//! the end is logged when the body reaches its trailers, with the status they
//! carry (a stream that fails midway is logged with its error, not as OK),
//! and a body dropped before them is logged as cancelled.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use http::HeaderMap;
use tower::{Layer, Service};
use tracing::{Instrument as _, Span};

use crate::grpc::watched_body::{BodyWatcher, WatchedBody, status_code};

/// Wraps every RPC in an `rpc` span and logs its end.
#[derive(Debug, Clone, Copy, Default)]
pub struct RpcTraceLayer;

impl<S> Layer<S> for RpcTraceLayer {
    type Service = RpcTrace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RpcTrace { inner }
    }
}

#[derive(Debug, Clone)]
pub struct RpcTrace<S> {
    inner: S,
}

/// A response body that logs its call's end.
pub type TracedBody<B> = WatchedBody<B, CallEnd>;

impl<S, B, R> Service<http::Request<B>> for RpcTrace<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Send + 'static,
{
    type Response = http::Response<TracedBody<R>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let span = tracing::info_span!(
            "rpc",
            method = %request.uri().path(),
            namespace = tracing::field::Empty,
            key = tracing::field::Empty,
        );
        let end = CallEnd {
            span: span.clone(),
            started: Instant::now(),
            logged: false,
        };
        let response = span.in_scope(|| self.inner.call(request));
        Box::pin(
            async move {
                match response.await {
                    Ok(response) => {
                        let end = match status_code(response.headers()) {
                            Some(code) => {
                                end.log(Some(code));
                                None
                            }
                            None => Some(end),
                        };
                        Ok(response.map(|body| TracedBody::new(body, end)))
                    }
                    Err(err) => {
                        end.failed_in_transport();
                        Err(err)
                    }
                }
            }
            .instrument(span),
        )
    }
}

/// A call whose end is still to be logged: at its status, or when dropped
/// before one (the client went away).
pub struct CallEnd {
    span: Span,
    started: Instant,
    logged: bool,
}

impl CallEnd {
    /// Logs the end with the status code number (`None`: the body ended or
    /// failed without a status).
    fn log(mut self, code: Option<usize>) {
        self.logged = true;
        let latency_ms = self.started.elapsed().as_secs_f64() * 1e3;
        let _entered = self.span.enter();
        match code {
            Some(code) => {
                let status = tonic::Code::from_i32(i32::try_from(code).unwrap_or(2));
                tracing::info!(status = ?status, latency_ms, "rpc finished");
            }
            None => tracing::warn!(latency_ms, "rpc ended without a status"),
        }
    }

    fn failed_in_transport(mut self) {
        self.logged = true;
        let latency_ms = self.started.elapsed().as_secs_f64() * 1e3;
        let _entered = self.span.enter();
        tracing::warn!(latency_ms, "rpc failed in transport");
    }
}

impl BodyWatcher for CallEnd {
    fn ended(self, trailers: Option<&HeaderMap>) {
        self.log(trailers.and_then(status_code));
    }
}

impl Drop for CallEnd {
    fn drop(&mut self) {
        if !self.logged {
            let latency_ms = self.started.elapsed().as_secs_f64() * 1e3;
            let _entered = self.span.enter();
            tracing::info!(status = ?tonic::Code::Cancelled, latency_ms, "rpc cancelled by the client");
        }
    }
}
