//! The conventional gRPC server metrics, as go-grpc-prometheus and the
//! grpc-ecosystem middlewares name them: `grpc_server_started_total`,
//! `grpc_server_handled_total` (by status code) and the
//! `grpc_server_handling_seconds` histogram, each labelled with
//! `grpc_type` (`unary`, `client_stream`, `server_stream`, `bidi_stream`),
//! `grpc_service` and `grpc_method`. A tower layer, so every service
//! counts, health and reflection included.
//!
//! The status of a call is its `grpc-status`: in the response headers of a
//! trailers-only response (how an error is sent before any message), else
//! in the trailers that end the body. A call whose response or body is
//! dropped before a status (the client went away) counts as `Canceled`.
//!
//! Cheap on the hot path: the series of every served method are resolved
//! once, when metrics are turned on ([`register`]); a call looks its method
//! up by path and touches only atomics and a histogram's short lock, with
//! no allocation. Without `--metrics-listen` the layer does nothing. Paths
//! that name no served method are not counted, so a client cannot grow the
//! label sets.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

use http::HeaderMap;
use pin_project_lite::pin_project;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use prost::Message as _;
use tower::{Layer, Service};

use crate::grpc::watched_body::{BodyWatcher, WatchedBody, status_code};

/// The status codes' names in the `grpc_code` label, as gRPC's Go
/// implementation spells them (`codes.Code.String()`), which the other
/// exporters follow; indexed by code number.
const CODE_NAMES: [&str; 17] = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];
/// `Canceled`'s number.
const CANCELED: usize = 1;
/// `Unknown`'s number: a status that is missing or not a code.
const UNKNOWN: usize = 2;

/// Prometheus' default buckets, which go-grpc-prometheus uses too: 5 ms to 10 s.
const HANDLING_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The encoded descriptors of every served service, from which the methods
/// and their streaming kinds are read.
const DESCRIPTOR_SETS: [&[u8]; 4] = [
    engram::FILE_DESCRIPTOR_SET,
    tonic_health::pb::FILE_DESCRIPTOR_SET,
    tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
    tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
];

/// `grpc_type`, `grpc_service`, `grpc_method`.
type MethodLabels = [(&'static str, Arc<str>); 3];
/// The method's labels and `grpc_code`.
type HandledLabels = [(&'static str, Arc<str>); 4];
type HistogramFamily = Family<MethodLabels, Histogram, fn() -> Histogram>;

/// One served method: its series, resolved once.
struct MethodSeries {
    started: Counter,
    handling: Histogram,
    /// `grpc_server_handled_total` by code number, made on a code's first use.
    handled: [OnceLock<Counter>; CODE_NAMES.len()],
    labels: MethodLabels,
    handled_family: Family<HandledLabels, Counter>,
}

impl MethodSeries {
    /// Counts a call that ended with code number `code` after `started`.
    fn finish(&self, code: usize, started: Instant) {
        let code = if code < CODE_NAMES.len() {
            code
        } else {
            UNKNOWN
        };
        self.handled[code]
            .get_or_init(|| {
                let [kind, service, method] = self.labels.clone();
                self.handled_family.get_or_create_owned(&[
                    kind,
                    service,
                    method,
                    ("grpc_code", Arc::from(CODE_NAMES[code])),
                ])
            })
            .inc();
        self.handling.observe(started.elapsed().as_secs_f64());
    }
}

/// The three families, and every served method's series by its path.
struct Served {
    started: Family<MethodLabels, Counter>,
    handling: HistogramFamily,
    handled: Family<HandledLabels, Counter>,
    methods: HashMap<String, MethodSeries>,
}

impl Served {
    fn new() -> Served {
        let started: Family<MethodLabels, Counter> = Family::default();
        let handling: HistogramFamily =
            Family::new_with_constructor(|| Histogram::new(HANDLING_BUCKETS));
        let handled: Family<HandledLabels, Counter> = Family::default();
        let methods = served_methods()
            .into_iter()
            .map(|m| {
                let labels: MethodLabels = [
                    ("grpc_type", Arc::from(m.kind)),
                    ("grpc_service", Arc::from(m.service)),
                    ("grpc_method", Arc::from(m.method)),
                ];
                let series = MethodSeries {
                    started: started.get_or_create_owned(&labels),
                    handling: handling.get_or_create_owned(&labels),
                    handled: Default::default(),
                    labels,
                    handled_family: handled.clone(),
                };
                (m.path, series)
            })
            .collect();
        Served {
            started,
            handling,
            handled,
            methods,
        }
    }
}

/// Set once metrics are turned on.
static SERVED: OnceLock<Served> = OnceLock::new();

/// A served method, as its descriptor describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Method {
    /// `/package.Service/Method`.
    path: String,
    kind: &'static str,
    service: String,
    method: String,
}

/// Every method of every service in [`DESCRIPTOR_SETS`].
fn served_methods() -> Vec<Method> {
    let mut methods = Vec::new();
    for encoded in DESCRIPTOR_SETS {
        // Descriptors compiled into the binary: one that does not decode
        // is a build defect, and its services are only not counted.
        let Ok(set) = prost_types::FileDescriptorSet::decode(encoded) else {
            tracing::error!("metrics: a compiled-in descriptor set does not decode");
            continue;
        };
        for file in &set.file {
            for service in &file.service {
                let service_name = match file.package() {
                    "" => service.name().to_owned(),
                    package => format!("{package}.{}", service.name()),
                };
                for method in &service.method {
                    methods.push(Method {
                        path: format!("/{service_name}/{}", method.name()),
                        kind: grpc_type(method.client_streaming(), method.server_streaming()),
                        service: service_name.clone(),
                        method: method.name().to_owned(),
                    });
                }
            }
        }
    }
    methods
}

/// The `grpc_type` of a method that streams requests and/or responses.
fn grpc_type(client_streaming: bool, server_streaming: bool) -> &'static str {
    match (client_streaming, server_streaming) {
        (false, false) => "unary",
        (true, false) => "client_stream",
        (false, true) => "server_stream",
        (true, true) => "bidi_stream",
    }
}

/// Turns the layer on and registers its three families with `registry`,
/// every method's `started` and `handling` series there from the start, at
/// zero.
pub fn register(registry: &mut Registry) {
    let served = SERVED.get_or_init(Served::new);
    registry.register(
        "grpc_server_started",
        "Total number of RPCs started on the server",
        served.started.clone(),
    );
    registry.register(
        "grpc_server_handled",
        "Total number of RPCs completed on the server, regardless of success or failure",
        served.handled.clone(),
    );
    registry.register(
        "grpc_server_handling_seconds",
        "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server",
        served.handling.clone(),
    );
}

/// Counts every call to a served method, once [`register`] has turned
/// metrics on.
#[derive(Debug, Clone, Copy, Default)]
pub struct RpcMetricsLayer;

impl<S> Layer<S> for RpcMetricsLayer {
    type Service = RpcMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RpcMetrics { inner }
    }
}

#[derive(Debug, Clone)]
pub struct RpcMetrics<S> {
    inner: S,
}

impl<S, B, R> Service<http::Request<B>> for RpcMetrics<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
{
    type Response = http::Response<MeteredBody<R>>;
    type Error = S::Error;
    type Future = MeteredResponse<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let call = SERVED
            .get()
            .and_then(|served| served.methods.get(request.uri().path()))
            .map(Call::start);
        MeteredResponse {
            inner: self.inner.call(request),
            call,
        }
    }
}

/// A call in flight: counted as `Canceled` if dropped before its status.
pub struct Call {
    series: Option<&'static MethodSeries>,
    started: Instant,
}

impl Call {
    fn start(series: &'static MethodSeries) -> Call {
        series.started.inc();
        Call {
            series: Some(series),
            started: Instant::now(),
        }
    }

    /// Counts the call as ended with code number `code`.
    fn finish(mut self, code: usize) {
        if let Some(series) = self.series.take() {
            series.finish(code, self.started);
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Some(series) = self.series.take() {
            series.finish(CANCELED, self.started);
        }
    }
}

pin_project! {
    /// The response of a counted call: finishes it when the response is a
    /// trailers-only one, else hands it on to the body.
    pub struct MeteredResponse<F> {
        #[pin]
        inner: F,
        call: Option<Call>,
    }
}

impl<F, R, E> Future for MeteredResponse<F>
where
    F: Future<Output = Result<http::Response<R>, E>>,
{
    type Output = Result<http::Response<MeteredBody<R>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = match this.inner.poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(response) => response,
        };
        let mut call = this.call.take();
        Poll::Ready(match response {
            Ok(response) => {
                if let Some(code) = status_code(response.headers())
                    && let Some(call) = call.take()
                {
                    call.finish(code);
                }
                Ok(response.map(|inner| MeteredBody::new(inner, call)))
            }
            Err(err) => {
                if let Some(call) = call {
                    call.finish(UNKNOWN);
                }
                Err(err)
            }
        })
    }
}

/// A response body that finishes its call at the trailers that end it.
pub type MeteredBody<B> = WatchedBody<B, Call>;

impl BodyWatcher for Call {
    fn ended(self, trailers: Option<&HeaderMap>) {
        // A body that fails, or ends without a status, leaves the client
        // without one.
        self.finish(trailers.map_or(UNKNOWN, |t| status_code(t).unwrap_or(UNKNOWN)));
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http_body::Frame;
    use http_body_util::{BodyExt as _, StreamBody};

    use super::*;

    /// One method's series, on families of their own (not the process's).
    fn series(path: &str) -> &'static MethodSeries {
        let served: &'static Served = Box::leak(Box::new(Served::new()));
        &served.methods[path]
    }

    fn handled(series: &MethodSeries, code: usize) -> u64 {
        series.handled[code].get().map_or(0, Counter::get)
    }

    fn grpc_status(code: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("grpc-status", http::HeaderValue::from_static(code));
        headers
    }

    /// A response body of one message and then `trailers`.
    fn body(
        trailers: HeaderMap,
    ) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, std::io::Error>>> {
        StreamBody::new(futures_util::stream::iter([
            Ok(Frame::data(Bytes::from_static(b"message"))),
            Ok(Frame::trailers(trailers)),
        ]))
    }

    #[test]
    fn every_served_service_is_known_with_the_streaming_kind_of_each_method() {
        let methods = served_methods();
        let kind = |path: &str| methods.iter().find(|m| m.path == path).map(|m| m.kind);
        assert_eq!(kind("/engram.v1.MemoryService/CreateMemory"), Some("unary"));
        assert_eq!(
            kind("/engram.v1.MemoryService/StreamSteps"),
            Some("client_stream")
        );
        assert_eq!(kind("/grpc.health.v1.Health/Watch"), Some("server_stream"));
        for version in ["v1", "v1alpha"] {
            assert_eq!(
                kind(&format!(
                    "/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
                )),
                Some("bidi_stream")
            );
        }
        for service in crate::grpc::SERVED {
            assert!(
                methods.iter().any(|m| m.service == *service),
                "{service} has no methods"
            );
        }
    }

    #[test]
    fn codes_are_named_as_grpc_go_names_them() {
        for (number, name) in CODE_NAMES.iter().enumerate() {
            let code = tonic::Code::from_i32(i32::try_from(number).expect("small"));
            // tonic spells two of them differently.
            let tonic_name = match format!("{code:?}").as_str() {
                "Ok" => "OK".to_owned(),
                "Cancelled" => "Canceled".to_owned(),
                other => other.to_owned(),
            };
            assert_eq!(*name, tonic_name);
        }
    }

    #[tokio::test]
    async fn a_status_in_the_trailers_of_a_body_counts_when_the_body_ends() {
        let series = series("/engram.v1.MemoryService/CreateMemory");
        let call = Call::start(series);
        let metered = MeteredBody::new(body(grpc_status("5")), Some(call));
        assert_eq!(series.started.get(), 1);
        assert_eq!(handled(series, 5), 0, "not before the trailers");
        metered.collect().await.expect("body");
        assert_eq!(handled(series, 5), 1);
        assert_eq!(handled(series, CANCELED), 0);
    }

    #[tokio::test]
    async fn a_trailers_only_response_counts_at_once_and_once() {
        let series = series("/engram.v1.MemoryService/GetMemory");
        let mut response = http::Response::new(body(grpc_status("0")));
        *response.headers_mut() = grpc_status("3");
        let metered = MeteredResponse {
            inner: std::future::ready(Ok::<_, std::io::Error>(response)),
            call: Some(Call::start(series)),
        }
        .await
        .expect("response");
        assert_eq!(handled(series, 3), 1);
        metered.into_body().collect().await.expect("body");
        assert_eq!(handled(series, 3), 1);
        assert_eq!(handled(series, 0), 0, "counted once");
    }

    #[tokio::test]
    async fn a_call_dropped_before_its_status_is_canceled() {
        let series = series("/engram.v1.MemoryService/StreamSteps");
        drop(MeteredBody::new(
            body(grpc_status("0")),
            Some(Call::start(series)),
        ));
        assert_eq!(handled(series, CANCELED), 1);
        let garbled =
            MeteredBody::new(body(grpc_status("not a number")), Some(Call::start(series)));
        garbled.collect().await.expect("body");
        assert_eq!(handled(series, UNKNOWN), 1);
    }
}
