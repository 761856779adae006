//! Serving: the gRPC services, health and reflection on one listener, and the
//! graceful shutdown of DESIGN §8.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use engram::v1::learning_service_server::LearningServiceServer;
use engram::v1::memory_service_server::MemoryServiceServer;
use engram::v1::policy_service_server::PolicyServiceServer;
use tokio::net::TcpListener;
use tonic::service::LayerExt as _;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};
use tonic_health::ServingStatus;

use crate::domain::ContradictionPolicy;
use crate::engine::Engine;
use crate::engine::contradictions::Contradictions;
use crate::engine::policy::{LabelledExamples, Policy};
use crate::engine::search::Retrieval;
use crate::engine::secrets::OnSecret;
use crate::grpc::SERVED;
use crate::grpc::auth::{ApiKeys, AuthLayer};
use crate::grpc::host_guard::{HostGuardLayer, HostPolicy};
use crate::grpc::learning::LearningApi;
use crate::grpc::memory::MemoryApi;
use crate::grpc::metrics::RpcMetricsLayer;
use crate::grpc::overload::{ConcurrencyLimitLayer, KeyShareLayer, Overload, RateLimitLayer};
use crate::grpc::policy::PolicyApi;
use crate::grpc::trace::RpcTraceLayer;
use crate::grpc::web::BrowserAccess;
use crate::llm::LlmClient;
use crate::store::Store;

/// How often an idle connection is probed, so dead peers are noticed.
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// The health service's name for writes that add data: SERVING while they
/// are accepted, NOT_SERVING while the disk is full (see [`crate::disk`])
/// or the database cannot be reached.
///
/// A full disk leaves the overall status ("") and the engram.v1 services
/// SERVING: reads, DeleteMemory and Forget still work, and the last two are
/// how space is freed. Reporting the whole server NOT_SERVING would make a
/// load balancer or an orchestrator's readiness check take the only server
/// of this data folder out of rotation — cutting off the very calls that
/// free space — or restart it, which frees nothing. A caller that routes
/// writes checks this name; operators see the `engram_storage_full` gauge
/// and the log.
pub const WRITES_HEALTH: &str = "engram.writes";

/// Reflection over every served service, plus the `google.rpc` error details
/// (so grpcurl can decode a `BadRequest` in an error).
fn reflection() -> tonic_reflection::server::Builder<'static> {
    let builder = tonic_reflection::server::Builder::configure()
        .include_reflection_service(false)
        .register_encoded_file_descriptor_set(engram::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET);
    SERVED
        .iter()
        .fold(builder, |b, name| b.with_service_name(*name))
}

/// Who may call the server, and over what. (No `Debug`: the TLS identity
/// holds the private key.)
#[derive(Default)]
pub struct Security {
    /// The API keys the engram.v1 services accept (all calls when open).
    pub api_keys: ApiKeys,
    /// The certificate and key to serve TLS with; plaintext without.
    pub tls: Option<Identity>,
    /// With TLS, the certificate authority client certificates must be
    /// signed by (mutual TLS); without, clients need no certificate.
    pub client_ca: Option<Certificate>,
    /// The web pages that may call from a browser, over gRPC-web.
    pub browsers: BrowserAccess,
    /// The Host names and page origins the gRPC port answers.
    pub hosts: HostPolicy,
}

impl Security {
    /// The TLS settings, when the server speaks TLS.
    pub fn tls_config(&self) -> Option<ServerTlsConfig> {
        let identity = self.tls.clone()?;
        let config = ServerTlsConfig::new().identity(identity);
        Some(match &self.client_ca {
            Some(ca) => config.client_ca_root(ca.clone()),
            None => config,
        })
    }
}

/// How much the server takes and how long it waits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest request message decoded (`--max-request-size`); larger
    /// ones fail with OUT_OF_RANGE before any work is done.
    pub max_request_bytes: usize,
    /// How long in-flight calls may take to finish after a shutdown signal.
    pub shutdown_grace: Duration,
    /// How long a StreamSteps stream may go without a message (a watch
    /// sends one at least every half of it).
    pub stream_idle_timeout: Duration,
    /// When engram.v1 calls are shed.
    pub overload: Overload,
    /// Whether memories holding a credential are refused (`--reject-secrets`).
    pub on_secret: OnSecret,
    /// What a write's contradictions do by default (`--contradictions`).
    pub contradictions: ContradictionPolicy,
    /// Whether near-duplicates merge into the memory they repeat
    /// (`--merge-near-duplicates`) rather than being linked to it.
    pub merge_near_duplicates: bool,
    /// Whether Remember keeps its screened transcript in the stored
    /// memory's provenance (`--keep-transcripts`).
    pub keep_transcripts: bool,
}

/// Serves on `listener` until `shutdown` resolves, then reports NOT_SERVING,
/// lets in-flight calls finish for at most the grace period, and closes the index
/// (committing what it has applied) and the store (finishing queued writes).
pub async fn serve(
    listener: TcpListener,
    store: Arc<dyn Store>,
    retrieval: Arc<Retrieval>,
    llm: Option<Arc<LlmClient>>,
    security: Security,
    shutdown: impl Future<Output = ()> + Send + 'static,
    limits: Limits,
) -> anyhow::Result<()> {
    let (max_request_bytes, grace) = (limits.max_request_bytes, limits.shutdown_grace);
    // The secrets detector's patterns, compiled before the first write;
    // with --reject-secrets, every free-text field of every request is
    // screened for credentials as it is decoded.
    crate::engine::secrets::prepare();
    crate::grpc::secret_screen::install(limits.on_secret);
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<MemoryServiceServer<MemoryApi>>().await;
    health
        .set_serving::<LearningServiceServer<LearningApi>>()
        .await;
    health.set_serving::<PolicyServiceServer<PolicyApi>>().await;
    health.set_service_status("", ServingStatus::Serving).await;
    let writes_health = tokio::spawn(report_writes(
        health.clone(),
        store.disk_space().subscribe(),
        store.database_reachable(),
    ));

    let reflection_v1 = reflection()
        .build_v1()
        .context("building the reflection service")?;
    // grpcurl 1.8 and other older tools speak only v1alpha.
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .context("building the v1alpha reflection service")?;

    // API keys and overload protection guard the engram.v1 services only:
    // health and reflection stay open for load balancers and for
    // discovering the API. Outermost the limit on calls in flight (shared
    // by the three services), so a flood is turned away before keys are
    // checked; each key's share of it and its rate limit behind
    // authentication, which names the key.
    // The metrics layer (on the server) sits outside them all, so shed calls
    // count as RESOURCE_EXHAUSTED in grpc_server_handled_total.
    let guard = (
        ConcurrencyLimitLayer::new(
            limits.overload.max_concurrent_calls,
            crate::metrics::recorders().calls_in_flight.clone(),
        ),
        AuthLayer::new(security.api_keys.clone()),
        KeyShareLayer::new(limits.overload.key_share),
        RateLimitLayer::new(limits.overload.rate_limit),
    );
    // Open watches never finish by themselves: told when the server starts
    // to stop, they end (UNAVAILABLE, so clients resume elsewhere or later)
    // instead of holding the drain up for the whole grace period.
    let (stop_watches, watches_stopping) = tokio::sync::watch::channel(false);
    let contradictions = Arc::new(Contradictions::new(
        store.clone(),
        retrieval.clone(),
        limits.contradictions,
        limits.merge_near_duplicates,
        llm.clone(),
    ));
    let engine = Arc::new(Engine::new(
        store.clone(),
        retrieval.clone(),
        llm.clone(),
        contradictions.clone(),
    ));
    let memory = guard.named_layer(
        MemoryServiceServer::new(MemoryApi::new(
            engine.clone(),
            limits.stream_idle_timeout,
            watches_stopping,
        ))
        .max_decoding_message_size(max_request_bytes),
    );
    let learning = guard.named_layer(
        LearningServiceServer::new(LearningApi::new(engine))
            .max_decoding_message_size(max_request_bytes),
    );
    let embedder = retrieval.semantic.as_ref().map(|s| s.embedder.clone());
    // With an embedder, the policy's labelled examples, embedded and fitted
    // in the background from the first Classify or Remember that consults
    // them (not at start: an embedding API is not called for a server that
    // never classifies).
    let examples = embedder
        .clone()
        .map(|embedder| Arc::new(LabelledExamples::new(embedder)));
    let policy = guard.named_layer(
        PolicyServiceServer::new(PolicyApi::new(Policy::new(
            store.clone(),
            llm,
            examples,
            contradictions,
            limits.keep_transcripts,
        )))
        .max_decoding_message_size(max_request_bytes),
    );

    let (draining_tx, draining) = tokio::sync::oneshot::channel::<()>();
    let stopping = {
        let health = health.clone();
        async move {
            shutdown.await;
            tracing::info!("shutting down: no longer serving; finishing in-flight calls");
            writes_health.abort();
            health
                .set_service_status(WRITES_HEALTH, ServingStatus::NotServing)
                .await;
            health
                .set_service_status("", ServingStatus::NotServing)
                .await;
            health
                .set_not_serving::<MemoryServiceServer<MemoryApi>>()
                .await;
            health
                .set_not_serving::<LearningServiceServer<LearningApi>>()
                .await;
            health
                .set_not_serving::<PolicyServiceServer<PolicyApi>>()
                .await;
            stop_watches.send_replace(true);
            let _ = draining_tx.send(());
        }
    };

    let mut builder = Server::builder();
    if let Some(tls) = security.tls_config() {
        builder = builder
            .tls_config(tls)
            .context("configuring TLS with --tls-cert, --tls-key and --tls-client-ca")?;
    }
    // A request for a Host or from a page origin that is not allowed is
    // refused first (DNS rebinding, cross-site requests). gRPC-web is then
    // translated into gRPC before anything else sees the call, so keys,
    // overload, metrics and logs treat it as any other; CORS preflights are
    // answered before that, without reaching a service.
    let server = builder
        .accept_http1(true)
        .layer(HostGuardLayer::new(security.hosts))
        .layer(tower::util::option_layer(security.browsers.cors_layer()))
        .layer(tonic_web::GrpcWebLayer::new())
        .layer(RpcTraceLayer)
        .layer(RpcMetricsLayer)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(memory)
        .add_service(learning)
        .add_service(policy)
        .serve_with_incoming_shutdown(
            // Small request/response messages must not wait for Nagle's algorithm.
            TcpIncoming::from(listener)
                .with_nodelay(Some(true))
                .with_keepalive(Some(TCP_KEEPALIVE)),
            stopping,
        );

    let deadline = async move {
        if draining.await.is_ok() {
            tokio::time::sleep(grace).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let served = tokio::select! {
        served = server => served.context("serving gRPC"),
        () = deadline => {
            tracing::warn!(?grace, "in-flight calls did not finish within the grace period; stopping them");
            Ok(())
        }
    };
    // Whatever ended serving, commit what the index has applied and the
    // writes still queued (the index catches up with those at next start).
    if let Some(semantic) = &retrieval.semantic {
        // Vectors are stored in transactions: stopping mid-batch loses
        // nothing but the batch, which the next start embeds again.
        semantic.backfill.abort();
    }
    retrieval.text.close().await;
    store.close().await;
    tracing::info!("stopped");
    served
}

/// Reports [`WRITES_HEALTH`] as the disk fills and frees and as the
/// database stops and starts answering, until aborted.
async fn report_writes(
    health: tonic_health::server::HealthReporter,
    mut full: tokio::sync::watch::Receiver<bool>,
    mut reachable: tokio::sync::watch::Receiver<bool>,
) {
    // A database that always answers never says otherwise.
    let mut follow_reachable = reachable.has_changed().is_ok();
    loop {
        let serving = !*full.borrow_and_update() && *reachable.borrow_and_update();
        let status = if serving {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        };
        health.set_service_status(WRITES_HEALTH, status).await;
        tokio::select! {
            changed = full.changed() => if changed.is_err() { return },
            changed = reachable.changed(), if follow_reachable => {
                follow_reachable = changed.is_ok();
            }
        }
    }
}
