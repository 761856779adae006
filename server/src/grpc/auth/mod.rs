//! API keys as tenant boundaries (`--auth-keys`). Every call to the
//! engram.v1 services must carry `authorization: Bearer <key>` with a key
//! from the key file (see [`key_file`] for its format); the key's role
//! decides which RPCs it may call — checked here, a tower layer in front of
//! each service — and its namespaces which scopes the request may name —
//! checked by each handler once the request is decoded ([`authorize`]).
//! Health and reflection stay open, so load balancers and grpcurl can still
//! check and discover the server. The file is read again on SIGHUP
//! ([`ApiKeys::reload`]).

pub mod key_file;
pub mod revocation;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use anyhow::Context as _;
use tonic::Status;
use tower::{Layer, Service};

pub use key_file::{Grant, KeyIds, Namespaces, Role};
use key_file::{KeyDigest, KeyFile, digest};
pub use revocation::CallNamespace;
use revocation::{RevocableBody, Revocation};

/// The RPCs a `read` key may call (any service): they change nothing.
const READ_RPCS: &[&str] = &[
    "GetMemory",
    "ExplainMemory",
    "ListMemories",
    "ListMemoryRevisions",
    "WatchMemories",
    "SearchMemories",
    "BuildContext",
    "ListEntities",
    "GetEntity",
    "GetEpisode",
    "ListEpisodes",
    "ListOutcomes",
    "ListHeuristics",
    "ListAntiPatterns",
    "ListMistakeCards",
    "ListTaskRules",
    "GetAgentScope",
    "GetStats",
    "Classify",
];

/// The RPCs that need an `admin` key: they remove memories in bulk or
/// change what other agents see (MergeEntities makes two names one for
/// every reader). (Every RPC not listed as read or write needs admin;
/// this list lets a test check that each RPC is placed.)
#[cfg(test)]
const ADMIN_RPCS: &[&str] = &["Forget", "SetAgentScope", "MergeEntities"];

/// The RPCs a `write` key may call besides the read ones. An RPC in none of
/// these lists needs `admin`, so a new RPC is closed until it is placed.
const WRITE_RPCS: &[&str] = &[
    "CreateMemory",
    "BatchCreateMemories",
    "UpdateMemory",
    "DeleteMemory",
    "StartEpisode",
    "AppendSteps",
    "StreamSteps",
    "CompleteEpisode",
    "RecordOutcome",
    "RecordMistake",
    "Consolidate",
    "Remember",
];

/// The RPCs whose calls stream: they outlive one look at the key file, so a
/// reload that takes their key's grant away ends them (see [`revocation`]),
/// through the body that streams (the response of a server stream, the
/// request of a client stream).
const STREAMING_RPCS: &[(&str, Streams)] = &[
    ("WatchMemories", Streams::Response),
    ("StreamSteps", Streams::Request),
];

/// Which body of a call of `method` streams, if any.
fn streams(method: &str) -> Option<Streams> {
    STREAMING_RPCS
        .iter()
        .find(|(name, _)| *name == method)
        .map(|(_, streams)| *streams)
}

/// Whether calls of `method` stream (and so hold a place for long).
pub fn is_streaming(method: &str) -> bool {
    streams(method).is_some()
}

/// The RPC's method name in a gRPC request's path:
/// "/engram.v1.MemoryService/CreateMemory" → "CreateMemory".
pub fn rpc_method(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Which body of a call streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Streams {
    Request,
    Response,
}

/// The most characters of a method name echoed in a refusal (an unknown
/// method's name comes from the caller).
const MAX_ECHOED_METHOD_CHARS: usize = 64;

/// The role an RPC needs, by its method name.
fn required_role(method: &str) -> Role {
    if READ_RPCS.contains(&method) {
        Role::Read
    } else if WRITE_RPCS.contains(&method) {
        Role::Write
    } else {
        Role::Admin
    }
}

/// The accepted keys, each with its grant; the file can be read again while
/// serving. Clones share the keys.
#[derive(Debug, Clone, Default)]
pub struct ApiKeys {
    source: Option<Arc<KeySource>>,
}

#[derive(Debug)]
struct KeySource {
    path: PathBuf,
    /// How the database names keys.
    ids: KeyIds,
    /// The keys in use; open streams watch it to learn of reloads.
    current: tokio::sync::watch::Sender<Arc<KeyFile>>,
}

impl ApiKeys {
    /// No authentication: every call is let through, to every namespace.
    pub fn open() -> ApiKeys {
        ApiKeys::default()
    }

    /// The keys in the file at `path`, named by `ids`; an unreadable or
    /// invalid file is an error saying which line is wrong.
    pub fn load(path: &Path, ids: KeyIds) -> anyhow::Result<ApiKeys> {
        let file = read(path, &ids)?;
        Ok(ApiKeys {
            source: Some(Arc::new(KeySource {
                path: path.to_owned(),
                ids,
                current: tokio::sync::watch::Sender::new(Arc::new(file)),
            })),
        })
    }

    /// Reads the key file again and serves its keys from the next call on;
    /// if it cannot be read or used, the keys in use stay and the error is
    /// returned. Returns how many keys are now accepted (`None` when
    /// authentication is off).
    pub fn reload(&self) -> anyhow::Result<Option<usize>> {
        let Some(source) = &self.source else {
            return Ok(None);
        };
        let file = Arc::new(read(&source.path, &source.ids)?);
        let keys = file.grants.len();
        source.current.send_replace(file);
        Ok(Some(keys))
    }

    /// How many keys are accepted (none when authentication is off).
    pub fn len(&self) -> usize {
        self.current().map_or(0, |file| file.grants.len())
    }

    /// Whether authentication is off.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn current(&self) -> Option<Arc<KeyFile>> {
        let source = self.source.as_ref()?;
        Some(source.current.borrow().clone())
    }

    /// Who is calling `method` with these headers: `Ok(None)` when
    /// authentication is off, the key's grant (and digest) when it may call
    /// the method.
    fn authenticate(
        &self,
        headers: &http::HeaderMap,
        method: &str,
    ) -> Result<Option<(Arc<Grant>, KeyDigest)>, Status> {
        let Some(file) = self.current() else {
            return Ok(None);
        };
        let Some(header) = headers.get(http::header::AUTHORIZATION) else {
            return Err(Status::unauthenticated(
                "missing API key: send the header `authorization: Bearer <key>`",
            ));
        };
        // The scheme is case-insensitive (RFC 7235).
        let key = header.to_str().ok().and_then(|value| {
            let (scheme, key) = value.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
        });
        let Some(key) = key else {
            return Err(Status::unauthenticated(
                "malformed authorization header: expected `Bearer <key>`",
            ));
        };
        let digest = digest(key);
        let Some(grant) = file.grants.get(&digest) else {
            return Err(Status::unauthenticated("unknown API key"));
        };
        let needed = required_role(method);
        if grant.role < needed {
            return Err(Status::permission_denied(format!(
                "this API key has the {} role; {} needs {needed}",
                grant.role,
                crate::grpc::status::cut(method, MAX_ECHOED_METHOD_CHARS),
            )));
        }
        Ok(Some((grant.clone(), digest)))
    }

    /// What a streaming call of `method` let in with `digest` checks again
    /// at each reload; `None` when authentication is off.
    fn revocation(
        &self,
        digest: KeyDigest,
        needed: Role,
        namespace: CallNamespace,
    ) -> Option<Revocation> {
        let source = self.source.as_ref()?;
        Some(Revocation {
            changes: source.current.subscribe(),
            digest,
            needed,
            namespace,
        })
    }
}

/// Reads the key file and logs the id each line's key goes by (in history,
/// watch events and the log), so an operator can tell whose it is.
fn read(path: &Path, ids: &KeyIds) -> anyhow::Result<KeyFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the API key file {}", path.display()))?;
    let file =
        KeyFile::parse(&text, ids).with_context(|| format!("API key file {}", path.display()))?;
    for (line, digest) in &file.lines {
        let grant = &file.grants[digest];
        tracing::info!(
            file = %path.display(),
            line,
            key = %grant.key_id,
            role = %grant.role,
            "API key"
        );
    }
    for line in &file.bare_key_lines {
        tracing::warn!(
            file = %path.display(),
            line,
            "a key without a role and namespaces is admin on every namespace; this form is \
             deprecated: write `KEY admin *` to keep that meaning, or narrow it"
        );
    }
    Ok(file)
}

/// Whether the caller may use `namespace` (the request's, with the default
/// one for an empty name). `grant` is what [`AuthLayer`] put in the
/// request's extensions; none when authentication is off. The refusal names
/// neither the key nor the namespaces it may use.
pub fn authorize(grant: Option<&Grant>, namespace: &str) -> Result<(), Status> {
    match grant {
        Some(grant) if !grant.namespaces.allows(namespace) => Err(Status::permission_denied(
            "this API key may not use the namespace named in the request",
        )),
        _ => Ok(()),
    }
}

/// Puts [`ApiKeys`] in front of a service: a call without an accepted key
/// is answered UNAUTHENTICATED, one above the key's role PERMISSION_DENIED,
/// both before the request is read; an accepted call carries the key's
/// [`Grant`] in its extensions for the handler's namespace check.
#[derive(Debug, Clone)]
pub struct AuthLayer {
    keys: ApiKeys,
}

impl AuthLayer {
    pub fn new(keys: ApiKeys) -> AuthLayer {
        AuthLayer { keys }
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Authenticate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authenticate {
            inner,
            keys: self.keys.clone(),
        }
    }
}

/// The service [`AuthLayer`] makes.
#[derive(Debug, Clone)]
pub struct Authenticate<S> {
    inner: S,
    keys: ApiKeys,
}

impl<S, B, R> Service<http::Request<B>> for Authenticate<S>
where
    S: Service<http::Request<RevocableBody<B>>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = http::Response<RevocableBody<R>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = rpc_method(request.uri().path());
        let (needed, streams) = (required_role(method), streams(method));
        let grant = match self.keys.authenticate(request.headers(), method) {
            Ok(grant) => grant,
            Err(status) => {
                return Box::pin(std::future::ready(Ok(status
                    .into_http::<R>()
                    .map(RevocableBody::plain))));
            }
        };
        let (mut parts, body) = request.into_parts();
        let mut revoked = None;
        let key_id = grant.as_ref().map(|(grant, _)| grant.key_id.clone());
        if let Some((grant, digest)) = grant {
            if let Some(streams) = streams {
                let namespace = CallNamespace::default();
                parts.extensions.insert(namespace.clone());
                revoked = self
                    .keys
                    .revocation(digest, needed, namespace)
                    .map(|revocation| (streams, revocation.revoked()));
            }
            parts.extensions.insert(grant);
        }
        // A client stream reads the refusal as its next message; a server
        // stream sends it as its status.
        let (body, response_revoked) = match revoked {
            Some((Streams::Request, revoked)) => (RevocableBody::request(body, revoked), None),
            Some((Streams::Response, revoked)) => (RevocableBody::plain(body), Some(revoked)),
            None => (RevocableBody::plain(body), None),
        };
        let response = self.inner.call(http::Request::from_parts(parts, body));
        Box::pin(async move {
            if let Some(key_id) = key_id {
                tracing::Span::current().record("key", key_id.as_str());
            }
            let response = response.await?;
            Ok(match response_revoked {
                Some(revoked) => response.map(|body| RevocableBody::response(body, revoked)),
                None => response.map(RevocableBody::plain),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;
    use std::io::Write as _;
    use tonic::Code;

    fn call(keys: &ApiKeys, method: &str, authorization: Option<&str>) -> Result<Role, Code> {
        let mut headers = http::HeaderMap::new();
        if let Some(value) = authorization {
            headers.insert("authorization", value.parse().expect("ascii"));
        }
        keys.authenticate(&headers, method)
            .map(|grant| grant.map_or(Role::Admin, |(grant, _)| grant.role))
            .map_err(|status| status.code())
    }

    fn keys(text: &str) -> (tempfile::NamedTempFile, ApiKeys) {
        let mut file = tempfile::NamedTempFile::new().expect("temp file");
        file.write_all(text.as_bytes()).expect("write");
        let keys = ApiKeys::load(file.path(), KeyIds::new(b"test")).expect("load");
        (file, keys)
    }

    #[test]
    fn without_a_key_file_every_call_passes() {
        assert_eq!(call(&ApiKeys::open(), "Forget", None), Ok(Role::Admin));
        assert_eq!(
            call(&ApiKeys::open(), "Forget", Some("Bearer x")),
            Ok(Role::Admin)
        );
    }

    #[test]
    fn only_listed_keys_pass_as_bearer_tokens() {
        let (_file, keys) = keys("# staging agents\nalpha-key write *\n\n  beta-key  \n");
        assert_eq!(keys.len(), 2);
        assert_eq!(
            call(&keys, "GetStats", Some("Bearer alpha-key")),
            Ok(Role::Write)
        );
        assert_eq!(
            call(&keys, "GetStats", Some("Bearer beta-key")),
            Ok(Role::Admin)
        );
        assert_eq!(
            call(&keys, "GetStats", Some("bearer beta-key")),
            Ok(Role::Admin)
        );
        for bad in [
            None,
            Some("Bearer gamma-key"),
            Some("alpha-key"),
            Some("Basic alpha-key"),
            Some("Bearer # staging agents"),
        ] {
            assert_eq!(
                call(&keys, "GetStats", bad),
                Err(Code::Unauthenticated),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn each_role_calls_what_it_may() {
        let (_file, keys) = keys("r read *\nw write *\na admin *\n");
        for (key, method, allowed) in [
            ("r", "SearchMemories", true),
            ("r", "Classify", true),
            ("r", "CreateMemory", false),
            ("r", "Remember", false),
            ("w", "CreateMemory", true),
            ("w", "GetStats", true),
            ("w", "Forget", false),
            ("w", "SetAgentScope", false),
            ("a", "Forget", true),
            ("a", "SetAgentScope", true),
        ] {
            let answer = call(&keys, method, Some(&format!("Bearer {key}")));
            assert_eq!(answer.is_ok(), allowed, "{key} {method}: {answer:?}");
            if !allowed {
                assert_eq!(answer, Err(Code::PermissionDenied));
            }
        }
    }

    #[test]
    fn namespaces_are_checked_against_the_grant() {
        let (_file, keys) = keys("k read shop,team-*\n");
        let grant = keys.current().expect("keys").grants[&digest("k")].clone();
        assert!(authorize(Some(&grant), "shop").is_ok());
        assert!(authorize(Some(&grant), "team-a").is_ok());
        let refused = authorize(Some(&grant), "default").expect_err("other namespace");
        assert_eq!(refused.code(), Code::PermissionDenied);
        assert!(!refused.message().contains("shop"), "{refused:?}");
        assert!(authorize(None, "default").is_ok());
    }

    #[test]
    fn a_reload_takes_the_new_keys_and_keeps_the_old_ones_on_error() {
        let (file, keys) = keys("old read *\n");
        std::fs::write(file.path(), "new write *\n").expect("rewrite");
        assert_eq!(keys.reload().expect("reload"), Some(1));
        assert_eq!(call(&keys, "GetStats", Some("Bearer new")), Ok(Role::Write));
        assert_eq!(
            call(&keys, "GetStats", Some("Bearer old")),
            Err(Code::Unauthenticated)
        );
        std::fs::write(file.path(), "new wrong *\n").expect("rewrite");
        assert!(keys.reload().is_err());
        assert_eq!(call(&keys, "GetStats", Some("Bearer new")), Ok(Role::Write));
        assert_eq!(ApiKeys::open().reload().expect("open"), None);
    }

    #[test]
    fn every_rpc_has_exactly_one_role() {
        let set = prost_types::FileDescriptorSet::decode(engram::FILE_DESCRIPTOR_SET)
            .expect("descriptor set");
        let methods: Vec<String> = set
            .file
            .iter()
            .flat_map(|file| &file.service)
            .flat_map(|service| &service.method)
            .map(|method| method.name().to_owned())
            .collect();
        assert!(methods.len() >= 28, "{methods:?}");
        for method in &methods {
            let lists = [READ_RPCS, WRITE_RPCS, ADMIN_RPCS]
                .iter()
                .filter(|list| list.contains(&method.as_str()))
                .count();
            assert_eq!(lists, 1, "{method} must be in exactly one role list");
        }
        let streaming: Vec<(String, Streams)> = set
            .file
            .iter()
            .flat_map(|file| &file.service)
            .flat_map(|service| &service.method)
            .filter(|m| m.client_streaming() || m.server_streaming())
            .map(|m| {
                let streams = if m.client_streaming() {
                    Streams::Request
                } else {
                    Streams::Response
                };
                (m.name().to_owned(), streams)
            })
            .collect();
        let listed: Vec<(String, Streams)> = STREAMING_RPCS
            .iter()
            .map(|(name, streams)| ((*name).to_owned(), *streams))
            .collect();
        assert_eq!(
            listed, streaming,
            "every streaming RPC, by the body that streams"
        );
        for listed in READ_RPCS.iter().chain(WRITE_RPCS).chain(ADMIN_RPCS) {
            assert!(methods.iter().any(|m| m == listed), "{listed} is no RPC");
        }
    }
}
