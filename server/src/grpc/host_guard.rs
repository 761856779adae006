//! Protected by default (DESIGN §9): no web page can reach the server
//! unless the operator says so.
//!
//! A browser sends whatever a page asks to any address it can resolve, so a
//! server on 127.0.0.1 is reachable from every page its user visits in two
//! ways, both refused here before any service sees the request:
//!
//! - **DNS rebinding**: a page of `evil.example:50051` makes its name
//!   resolve to 127.0.0.1 and calls "its own" origin. The request carries
//!   `Host: evil.example:50051`. Only Hosts that cannot be rebound are
//!   served: IP addresses (the listen address among them), `localhost` and
//!   `*.localhost`, plus the names given with `--allowed-hosts`.
//! - **Cross-site requests**: a page of another origin posts to
//!   `http://127.0.0.1:50051/…`. A browser skips the CORS preflight for a
//!   `text/plain` body, and the call would run before the browser refused
//!   the page its answer. A request with an `Origin` is served only from
//!   the server's own origin or one given with `--cors-allow-origin`.
//!
//! Every HTTP/1.x request is checked, and any request a browser sent
//! (gRPC-web, or one carrying `Origin`) whatever its HTTP version. Plain
//! gRPC over HTTP/2 without `Origin` is not: browsers cannot send it in
//! clear text, and services in a mesh name the server by whatever name
//! their DNS gives it.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, Version, header};
use tower::{Layer, Service};

use crate::grpc::web::BrowserOrigin;

/// The most characters of a refused Host or Origin written to the log.
const MAX_LOGGED_CHARS: usize = 128;

/// Which Host names and page origins may reach the server.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// `--allowed-hosts`, lower case: a name, `.example.com` for the name
    /// and every name under it, or `*` for any.
    pub allowed_hosts: Vec<String>,
    /// `--cors-allow-origin`.
    pub origins: Vec<BrowserOrigin>,
}

/// Why a request is refused.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    Host(String),
    Origin(String),
}

impl HostPolicy {
    /// Parses one `--allowed-hosts` value: a host name (no port, no
    /// scheme), `.example.com`, or `*`.
    pub fn parse_host(text: &str) -> Result<String, String> {
        let host = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let name = host.strip_prefix('.').unwrap_or(&host);
        let valid = host == "*"
            || (!name.is_empty()
                && name.split('.').all(|label| {
                    !label.is_empty()
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                }));
        if valid {
            Ok(host)
        } else {
            Err(format!(
                "{text:?} is not a host name: expected a name such as engram.internal (no scheme \
                 or port), .example.com for it and every name under it, or *"
            ))
        }
    }

    /// Whether the host part of a `Host` header may be served.
    fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.parse::<IpAddr>().is_ok() || host == "localhost" || host.ends_with(".localhost") {
            return true;
        }
        self.allowed_hosts.iter().any(|allowed| {
            allowed == "*"
                || *allowed == host
                || allowed
                    .strip_prefix('.')
                    .is_some_and(|domain| host == domain || host.ends_with(allowed.as_str()))
        })
    }

    /// Whether `origin` may call: the server's own (same scheme-less
    /// authority as the Host it was sent to) or one of `--cors-allow-origin`.
    fn origin_allowed(&self, origin: &HeaderValue, host: Option<&str>) -> bool {
        let Ok(text) = origin.to_str() else {
            return false;
        };
        let text = text.to_ascii_lowercase();
        let own = host.is_some_and(|host| {
            text.split_once("://")
                .is_some_and(|(scheme, authority)| same_authority(scheme, authority, host))
        });
        own || self.origins.iter().any(|allowed| match allowed {
            BrowserOrigin::Any => true,
            BrowserOrigin::Exact(value) => value.as_bytes() == text.as_bytes(),
        })
    }

    /// Checks a request's Host and Origin (see the module docs for which
    /// requests are checked).
    fn check<B>(&self, request: &Request<B>) -> Result<(), Refusal> {
        let headers = request.headers();
        let origin = headers.get(header::ORIGIN);
        let grpc_web = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/grpc-web"));
        let http1 = request.version() <= Version::HTTP_11;
        if !(http1 || grpc_web || origin.is_some()) {
            return Ok(());
        }
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .or_else(|| request.uri().authority().map(|a| a.as_str()));
        if let Some(host) = host
            && !self.host_allowed(host_name(host))
        {
            return Err(Refusal::Host(host.to_owned()));
        }
        if let Some(origin) = origin
            && !self.origin_allowed(origin, host)
        {
            return Err(Refusal::Origin(
                String::from_utf8_lossy(origin.as_bytes()).into_owned(),
            ));
        }
        Ok(())
    }
}

/// The host of a `Host` value: without its port, an IPv6 address without
/// its brackets.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(address, _)| address);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Whether an origin's `authority` (of `scheme`) names the same host and
/// port as the request's `Host`, default ports included.
fn same_authority(scheme: &str, authority: &str, host: &str) -> bool {
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return false,
    };
    let normal = |a: &str| {
        let a = a.to_ascii_lowercase();
        a.strip_suffix(default_port).map(str::to_owned).unwrap_or(a)
    };
    normal(authority) == normal(host)
}

/// Puts a [`HostPolicy`] in front of everything served on the gRPC port.
#[derive(Debug, Clone)]
pub struct HostGuardLayer {
    policy: std::sync::Arc<HostPolicy>,
}

impl HostGuardLayer {
    pub fn new(policy: HostPolicy) -> HostGuardLayer {
        HostGuardLayer {
            policy: std::sync::Arc::new(policy),
        }
    }
}

impl<S> Layer<S> for HostGuardLayer {
    type Service = HostGuard<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HostGuard {
            inner,
            policy: self.policy.clone(),
        }
    }
}

/// The service [`HostGuardLayer`] makes.
#[derive(Debug, Clone)]
pub struct HostGuard<S> {
    inner: S,
    policy: std::sync::Arc<HostPolicy>,
}

impl<S, B, R> Service<Request<B>> for HostGuard<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: http_body::Body<Data = Bytes> + Send + 'static,
    R::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match self.policy.check(&request) {
            Ok(()) => {
                let response = self.inner.call(request);
                Box::pin(async move { Ok(response.await?.map(tonic::body::Body::new)) })
            }
            Err(refusal) => Box::pin(std::future::ready(Ok(refuse(&refusal)))),
        }
    }
}

/// 403, with a gRPC status for gRPC clients (PERMISSION_DENIED) and the
/// same words as text for everyone else.
fn refuse(refusal: &Refusal) -> Response<tonic::body::Body> {
    let message = match refusal {
        Refusal::Host(host) => {
            let shown = crate::grpc::status::cut(host, MAX_LOGGED_CHARS);
            tracing::warn!(host = %shown, "refused a request for a Host that is not allowed (DNS rebinding?); --allowed-hosts names the ones to serve");
            "this server does not answer requests for that Host name; start it with \
             --allowed-hosts NAME to serve a name other than an IP address or localhost"
        }
        Refusal::Origin(origin) => {
            let shown = crate::grpc::status::cut(origin, MAX_LOGGED_CHARS);
            tracing::warn!(origin = %shown, "refused a request from a web page of another origin; --cors-allow-origin names the ones to serve");
            "this server does not answer web pages of that origin; start it with \
             --cors-allow-origin ORIGIN to let them call"
        }
    };
    let mut response = Response::new(tonic::body::Body::new(http_body_util::Full::new(
        Bytes::from_static(message.as_bytes()),
    )));
    *response.status_mut() = StatusCode::FORBIDDEN;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "grpc-status",
        HeaderValue::from(tonic::Code::PermissionDenied as i32),
    );
    headers.insert("grpc-message", HeaderValue::from_static(message));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(version: Version, headers: &[(&str, &str)]) -> Request<()> {
        let mut builder = Request::builder()
            .method("POST")
            .uri("/engram.v1.MemoryService/ListMemories")
            .version(version);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).expect("request")
    }

    fn policy(hosts: &[&str], origins: &[&str]) -> HostPolicy {
        HostPolicy {
            allowed_hosts: hosts
                .iter()
                .map(|h| HostPolicy::parse_host(h).expect("host"))
                .collect(),
            origins: origins
                .iter()
                .map(|o| BrowserOrigin::parse(o).expect("origin"))
                .collect(),
        }
    }

    #[test]
    fn a_rebound_host_is_refused_and_addresses_and_localhost_pass() {
        let open = policy(&[], &[]);
        let rebound = request(
            Version::HTTP_11,
            &[
                ("host", "evil.example:50051"),
                ("origin", "http://evil.example:50051"),
                ("content-type", "application/grpc-web+proto"),
            ],
        );
        assert_eq!(
            open.check(&rebound),
            Err(Refusal::Host("evil.example:50051".into()))
        );
        for host in [
            "127.0.0.1:50051",
            "[::1]:50051",
            "localhost:50051",
            "LOCALHOST",
            "app.localhost:3000",
            "10.1.2.3:50051",
            "localhost.:50051",
        ] {
            assert_eq!(
                open.check(&request(Version::HTTP_11, &[("host", host)])),
                Ok(()),
                "{host}"
            );
        }
        let named = policy(&["engram.internal", ".corp.example"], &[]);
        for (host, allowed) in [
            ("engram.internal:50051", true),
            ("ENGRAM.internal", true),
            ("corp.example", true),
            ("a.b.corp.example:1", true),
            ("evilcorp.example", false),
            ("engram.internal.evil.example", false),
        ] {
            let answer = named.check(&request(Version::HTTP_11, &[("host", host)]));
            assert_eq!(answer.is_ok(), allowed, "{host}: {answer:?}");
        }
        assert!(
            policy(&["*"], &[])
                .check(&request(Version::HTTP_11, &[("host", "anything.example")]))
                .is_ok()
        );
    }

    #[test]
    fn plain_grpc_over_http2_may_use_any_name_but_browsers_may_not() {
        let open = policy(&[], &[]);
        let mesh = request(
            Version::HTTP_2,
            &[
                ("host", "engram.mesh.svc:50051"),
                ("content-type", "application/grpc"),
            ],
        );
        assert_eq!(open.check(&mesh), Ok(()));
        let web = request(
            Version::HTTP_2,
            &[
                ("host", "engram.mesh.svc:50051"),
                ("content-type", "application/grpc-web"),
            ],
        );
        assert!(open.check(&web).is_err());
    }

    #[test]
    fn another_origin_needs_cors_and_the_own_origin_does_not() {
        let open = policy(&[], &[]);
        let cross = request(
            Version::HTTP_11,
            &[
                ("host", "127.0.0.1:50051"),
                ("origin", "https://evil.example"),
                ("content-type", "text/plain"),
            ],
        );
        assert_eq!(
            open.check(&cross),
            Err(Refusal::Origin("https://evil.example".into()))
        );
        assert!(policy(&[], &["https://evil.example"]).check(&cross).is_ok());
        assert!(policy(&[], &["*"]).check(&cross).is_ok());
        for (host, origin) in [
            ("127.0.0.1:50051", "http://127.0.0.1:50051"),
            ("localhost", "http://localhost:80"),
            ("LOCALHOST:8443", "https://localhost:8443"),
        ] {
            let own = request(Version::HTTP_11, &[("host", host), ("origin", origin)]);
            assert_eq!(open.check(&own), Ok(()), "{host} {origin}");
        }
        let null = request(
            Version::HTTP_11,
            &[("host", "127.0.0.1:50051"), ("origin", "null")],
        );
        assert!(open.check(&null).is_err());
    }

    #[test]
    fn allowed_hosts_parse_as_names() {
        assert_eq!(
            HostPolicy::parse_host("Engram.Internal."),
            Ok("engram.internal".into())
        );
        assert_eq!(
            HostPolicy::parse_host(".corp.example"),
            Ok(".corp.example".into())
        );
        assert_eq!(HostPolicy::parse_host("*"), Ok("*".into()));
        for bad in ["", "http://a.example", "a.example:80", "a..b", "a b", "."] {
            assert!(HostPolicy::parse_host(bad).is_err(), "{bad}");
        }
    }
}
