//! Browsers: gRPC-web on the gRPC port, and the CORS answers that let a
//! page of another origin call it.
//!
//! Every server accepts gRPC-web (`application/grpc-web`, binary or text,
//! over HTTP/1.1 or HTTP/2): tonic-web turns each call into an ordinary gRPC
//! call, so API keys, overload protection, metrics and logs treat it as any
//! other. A browser only lets a page call an origin other than its own when
//! that origin answers CORS; the server does for the origins named with
//! `--cors-allow-origin`, and for no page otherwise (callers outside a
//! browser, and pages served from the server's own origin, need none).

use std::time::Duration;

use http::{HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// A page origin allowed to call the server from a browser: `*` (any), or
/// `scheme://host[:port]` as a browser sends it in `Origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserOrigin {
    /// Any page.
    Any,
    /// Pages of this origin only.
    Exact(HeaderValue),
}

impl BrowserOrigin {
    /// Parses a `--cors-allow-origin` value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text == "*" {
            return Ok(Self::Any);
        }
        let (scheme, rest) = text.split_once("://").ok_or_else(|| {
            format!("{text:?} is not an origin: expected * or scheme://host[:port], e.g. https://app.example.com")
        })?;
        let host_ok = !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c));
        if !matches!(scheme, "http" | "https") || !host_ok {
            return Err(format!(
                "{text:?} is not an origin: expected * or http(s)://host[:port] with no path, \
                 e.g. https://app.example.com"
            ));
        }
        // Browsers send the scheme and host in lower case.
        let origin = text.to_ascii_lowercase();
        HeaderValue::from_str(&origin)
            .map(Self::Exact)
            .map_err(|_| format!("{text:?} is not a valid origin"))
    }
}

/// Which browser pages may call the server, and how long a browser may
/// keep the answer to its preflight request.
#[derive(Debug, Clone, Default)]
pub struct BrowserAccess {
    /// The origins allowed (`--cors-allow-origin`); none: no CORS answers.
    pub origins: Vec<BrowserOrigin>,
    /// How long a preflight answer may be cached (`--cors-max-age`).
    pub max_age: Duration,
}

/// The request headers a gRPC-web call from a page may carry: what gRPC-web
/// clients send (Connect's and grpc-web's), and the API key.
const ALLOWED_HEADERS: [&str; 7] = [
    "authorization",
    "content-type",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "connect-protocol-version",
    "connect-timeout-ms",
];

/// The response headers a page may read: the status of the call, its
/// message and its details (a `google.rpc.BadRequest` among them). They
/// arrive as headers when a call fails before any message.
const EXPOSED_HEADERS: [&str; 3] = ["grpc-status", "grpc-message", "grpc-status-details-bin"];

impl BrowserAccess {
    /// The CORS layer for the allowed origins; `None` when there are none.
    pub fn cors_layer(&self) -> Option<CorsLayer> {
        if self.origins.is_empty() {
            return None;
        }
        let allow_origin = if self.origins.contains(&BrowserOrigin::Any) {
            AllowOrigin::any()
        } else {
            AllowOrigin::list(self.origins.iter().filter_map(|origin| match origin {
                BrowserOrigin::Exact(value) => Some(value.clone()),
                BrowserOrigin::Any => None,
            }))
        };
        Some(
            CorsLayer::new()
                .allow_origin(allow_origin)
                .allow_methods([Method::POST])
                .allow_headers(ALLOWED_HEADERS.map(HeaderName::from_static))
                .expose_headers(EXPOSED_HEADERS.map(HeaderName::from_static))
                .max_age(self.max_age),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_as_browsers_send_them() {
        assert_eq!(BrowserOrigin::parse("*"), Ok(BrowserOrigin::Any));
        assert_eq!(
            BrowserOrigin::parse("https://App.Example.com:8443"),
            Ok(BrowserOrigin::Exact(HeaderValue::from_static(
                "https://app.example.com:8443"
            )))
        );
        assert_eq!(
            BrowserOrigin::parse("http://[::1]:3000"),
            Ok(BrowserOrigin::Exact(HeaderValue::from_static(
                "http://[::1]:3000"
            )))
        );
        for bad in [
            "app.example.com",
            "https://app.example.com/",
            "https://app.example.com/path",
            "ftp://app.example.com",
            "https://",
            "https://a b",
        ] {
            let error = BrowserOrigin::parse(bad).expect_err(bad);
            assert!(error.contains("not an origin"), "{bad}: {error}");
        }
    }

    #[test]
    fn no_origins_no_cors() {
        assert!(BrowserAccess::default().cors_layer().is_none());
        let access = BrowserAccess {
            origins: vec![BrowserOrigin::parse("https://a.example").unwrap()],
            max_age: Duration::from_secs(60),
        };
        assert!(access.cors_layer().is_some());
    }
}
