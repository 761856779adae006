//! The metrics endpoint: `GET /metrics` over plain HTTP/1.1, on the
//! address of `--metrics-listen`, served by hyper (which tonic already
//! brings). Every other path is 404.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::exporter::{CONTENT_TYPE, Exporter};

/// Where the metrics are.
pub const METRICS_PATH: &str = "/metrics";
/// Connections served at once; more wait to be accepted. Scrapers are few.
const MAX_CONNECTIONS: usize = 16;
/// How long a client may take to send a request's headers: a connection
/// that sends nothing must not hold one of [`MAX_CONNECTIONS`] for ever.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long to wait before accepting again after accepting failed (e.g.
/// out of file descriptors).
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Serves the metrics on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, exporter: Arc<Exporter>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return; // the semaphore is never closed
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(err) => {
                tracing::warn!(error = %err, "metrics: accepting a connection failed");
                tokio::time::sleep(ACCEPT_RETRY).await;
                continue;
            }
        };
        let exporter = exporter.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let exporter = exporter.clone();
                async move { Ok::<_, Infallible>(respond(&exporter, &request).await) }
            });
            let served = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(err) = served {
                tracing::debug!(error = %err, "metrics: a connection failed");
            }
            drop(slot);
        });
    }
}

/// The answer to one request.
async fn respond(exporter: &Exporter, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.uri().path() != METRICS_PATH {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n");
        response
            .headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let mut response = Response::new(Full::new(Bytes::from(exporter.render().await)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(CONTENT_TYPE),
    );
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
