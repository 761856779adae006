//! One tracing span per RPC, with its method, namespace (recorded by the
//! handler), API key id (recorded by the auth layer), gRPC status and
//! latency. A tower layer, so handlers hold no logging code beyond naming
//! their scope.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tower::{Layer, Service};
use tracing::Instrument as _;

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

impl<S, B, R> Service<http::Request<B>> for RpcTrace<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Send + 'static,
{
    type Response = S::Response;
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
        let started = Instant::now();
        let response = span.in_scope(|| self.inner.call(request));
        Box::pin(
            async move {
                let response = response.await;
                let latency_ms = started.elapsed().as_secs_f64() * 1e3;
                match &response {
                    Ok(response) => {
                        // An error is sent as a trailers-only response, with the
                        // status in the headers; a success ends with status 0 in
                        // the trailers, after the body.
                        let code = response
                            .headers()
                            .get("grpc-status")
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.parse::<i32>().ok())
                            .map_or(tonic::Code::Ok, tonic::Code::from_i32);
                        tracing::info!(status = ?code, latency_ms, "rpc finished");
                    }
                    Err(_) => tracing::warn!(latency_ms, "rpc failed in transport"),
                }
                response
            }
            .instrument(span),
        )
    }
}
