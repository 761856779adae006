//! The gRPC edge: one file per service (validate the request, convert proto ↔
//! domain, call [`crate::engine::Engine`]), the error → status mapping, the
//! per-RPC tracing and metrics layers, API-key authentication and overload
//! protection.

pub mod auth;
mod convert;
mod deadline;
mod entity_requests;
mod episode_requests;
pub mod host_guard;
pub mod learning;
pub mod memory;
mod memory_requests;
pub mod metrics;
pub mod overload;
mod page_token;
pub mod policy;
mod request_key;
pub mod secret_screen;
mod status;
pub mod trace;
mod validate;
mod watch;
mod watch_cursor;
mod watched_body;
pub mod web;

use std::sync::Arc;

use auth::{CallNamespace, Grant};
use engram::v1 as pb;
use engram::v1::learning_service_server::LearningServiceServer;
use engram::v1::memory_service_server::MemoryServiceServer;
use engram::v1::policy_service_server::PolicyServiceServer;
use learning::LearningApi;
use memory::MemoryApi;
use policy::PolicyApi;
use tonic::server::NamedService;

/// The services this server answers, as advertised by reflection. A service
/// is listed once its RPCs work.
pub(crate) const SERVED: &[&str] = &[
    <MemoryServiceServer<MemoryApi> as NamedService>::NAME,
    <LearningServiceServer<LearningApi> as NamedService>::NAME,
    <PolicyServiceServer<PolicyApi> as NamedService>::NAME,
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// A request that names a scope.
trait Scoped {
    fn scope(&self) -> Option<&pb::Scope>;
}

macro_rules! scoped {
    ($($request:ident),+ $(,)?) => {
        $(impl Scoped for pb::$request {
            fn scope(&self) -> Option<&pb::Scope> {
                self.scope.as_ref()
            }
        })+
    };
}

scoped!(
    CreateMemoryRequest,
    BatchCreateMemoriesRequest,
    GetMemoryRequest,
    ExplainMemoryRequest,
    UpdateMemoryRequest,
    DeleteMemoryRequest,
    ListMemoriesRequest,
    ListMemoryRevisionsRequest,
    WatchMemoriesRequest,
    SearchMemoriesRequest,
    BuildContextRequest,
    ListEntitiesRequest,
    GetEntityRequest,
    MergeEntitiesRequest,
    StartEpisodeRequest,
    AppendStepsRequest,
    StreamStepsRequest,
    CompleteEpisodeRequest,
    GetEpisodeRequest,
    ListEpisodesRequest,
    ListTaskRulesRequest,
    RecordMistakeRequest,
    ListMistakeCardsRequest,
    ConsolidateRequest,
    GetStatsRequest,
    RecordOutcomeRequest,
    ListOutcomesRequest,
    ListHeuristicsRequest,
    ListAntiPatternsRequest,
    SetAgentScopeRequest,
    GetAgentScopeRequest,
    ForgetRequest,
    ClassifyRequest,
    RememberRequest,
);

/// The most characters of a namespace written to the log.
const MAX_LOGGED_NAMESPACE_CHARS: usize = 128;

/// Unwraps a request after naming its namespace on the current RPC span (so
/// that even a request that fails validation is logged with its tenant) and
/// checking that the caller's API key may use that namespace.
fn begin<T: Scoped>(request: tonic::Request<T>) -> Result<T, tonic::Status> {
    let grant = request.extensions().get::<Arc<Grant>>().cloned();
    let call = request.extensions().get::<CallNamespace>().cloned();
    let request = request.into_inner();
    enter_namespace(grant.as_deref(), call.as_ref(), request.scope())?;
    Ok(request)
}

/// The id of the API key the caller authenticated with (empty without
/// `--auth-keys`), for the history of what it writes.
fn caller_key<T>(request: &tonic::Request<T>) -> String {
    request
        .extensions()
        .get::<Arc<Grant>>()
        .map_or_else(String::new, |grant| grant.key_id.clone())
}

/// Names a scope's namespace on the current RPC span and checks that the
/// caller's key (`grant`, none without authentication) may use it; a
/// streaming call records it (`call`), so that a reload of the keys that
/// narrows the key's namespaces ends the stream.
fn enter_namespace(
    grant: Option<&Grant>,
    call: Option<&CallNamespace>,
    scope: Option<&pb::Scope>,
) -> Result<(), tonic::Status> {
    let namespace = match scope.map_or("", |s| s.namespace.as_str()) {
        "" => engram::DEFAULT_NAMESPACE,
        named => named,
    };
    let logged: String = namespace.chars().take(MAX_LOGGED_NAMESPACE_CHARS).collect();
    tracing::Span::current().record("namespace", logged.as_str());
    if let Some(call) = call {
        call.record(namespace);
    }
    auth::authorize(grant, namespace)
}
