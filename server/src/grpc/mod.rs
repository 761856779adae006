//! The gRPC edge: one file per service (validate the request, convert proto ↔
//! domain, call the engine or store), the error → status mapping, and the
//! per-RPC tracing layer.

mod convert;
pub mod memory;
mod memory_requests;
mod page_token;
mod status;
pub mod trace;
mod validate;

use crate::domain::Scope;

/// Names the request's namespace on the current RPC span.
fn record_scope(scope: &Scope) {
    tracing::Span::current().record("namespace", scope.namespace.as_str());
}
