//! The engine as the gRPC services call it: one [`Engine`] holding what the
//! decisions need — the store, the search indexes, the embedder, the LLM —
//! with an operation for each thing a service does. Handlers validate and
//! convert, then call it; they never hold the store.
//!
//! The operations are grouped as the services are: [`memories`] (memories,
//! search, context, watches), [`episodes`] and [`learning`].

mod episodes;
mod learning;
mod memories;

use std::sync::Arc;

use crate::embed::Embedder;
use crate::engine::contradictions::Contradictions;
use crate::engine::create_batch::CreateBatch;
use crate::engine::search::Retrieval;
use crate::engine::watch::Wakeups;
use crate::llm::LlmClient;
use crate::store::Store;

/// Every operation of the engine, over one store and its indexes.
pub struct Engine {
    store: Arc<dyn Store>,
    retrieval: Arc<Retrieval>,
    /// The LLM consolidation asks, when one is configured.
    llm: Option<Arc<LlmClient>>,
    /// What new memories contradict.
    contradictions: Arc<Contradictions>,
    /// Creates without a request id, stored together.
    creates: Arc<CreateBatch>,
    /// Wakes WatchMemories watchers on changes of their namespace.
    wakeups: Arc<Wakeups>,
    /// The database's id, which watch cursors are bound to (read once: it
    /// does not change while the server runs).
    database_id: tokio::sync::OnceCell<String>,
}

impl Engine {
    /// The engine over `store`, searching with `retrieval` and consolidating
    /// with `llm` when one is configured, finding contradictions with
    /// `contradictions`. Starts following the store's
    /// change feed for watchers (so it runs in a Tokio runtime).
    pub fn new(
        store: Arc<dyn Store>,
        retrieval: Arc<Retrieval>,
        llm: Option<Arc<LlmClient>>,
        contradictions: Arc<Contradictions>,
    ) -> Engine {
        Engine {
            wakeups: Wakeups::spawn(&store),
            store,
            retrieval,
            llm,
            contradictions,
            creates: Arc::default(),
            database_id: tokio::sync::OnceCell::new(),
        }
    }

    /// The embedder, when one is configured: GetStats counts what waits for
    /// its vectors, and RecordOutcome compares strategies by meaning too.
    fn embedder(&self) -> Option<&Arc<Embedder>> {
        self.retrieval.semantic.as_ref().map(|s| &s.embedder)
    }
}
