//! Persistence. [`Store`] is what the rest of the server sees; each backend
//! lives in its own module with its own migrations.

pub mod sqlite;

use async_trait::async_trait;

use crate::domain::{
    Created, ListQuery, Memory, MemoryFilter, MemoryPatch, Micros, NewMemory, Scope, TextMatch,
};
use crate::error::Result;

/// Where memories live. Every method takes the caller's scope and never reads
/// or writes outside it (DESIGN §3); expired memories are invisible to all of them.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Stores `memories` in one transaction, merging each into an identical
    /// memory when one exists (same owner scope, level, type and normalised
    /// content). With a `request_id` already used in the namespace for the
    /// same request, returns the first call's result and writes nothing; for
    /// a different request, fails with `AlreadyExists`.
    async fn create_memories(
        &self,
        namespace: &str,
        request_id: Option<&str>,
        memories: Vec<NewMemory>,
        now: Micros,
    ) -> Result<Vec<Created>>;

    /// The memory `id` if it is visible from `scope`.
    async fn get_memory(&self, scope: &Scope, id: &str, now: Micros) -> Result<Option<Memory>>;

    /// Applies `patch` to the memory `id` visible from `scope`; with an `etag`,
    /// only if it is still current (else `Aborted`).
    async fn update_memory(
        &self,
        scope: &Scope,
        id: &str,
        patch: MemoryPatch,
        etag: Option<&str>,
        now: Micros,
    ) -> Result<Memory>;

    /// Deletes the memory `id` visible from `scope`; with an `etag`, only if it
    /// is still current (else `Aborted`).
    async fn delete_memory(
        &self,
        scope: &Scope,
        id: &str,
        etag: Option<&str>,
        now: Micros,
    ) -> Result<()>;

    /// One page of memories (at most `page_size + 1`, so the caller can tell
    /// whether another page follows).
    async fn list_memories(&self, query: &ListQuery, now: Micros) -> Result<Vec<Memory>>;

    /// Up to `limit` memories matching the FTS5 query `fts_query`, best BM25 first.
    async fn search_memories(
        &self,
        scope: &Scope,
        fts_query: &str,
        filter: &MemoryFilter,
        limit: usize,
        now: Micros,
    ) -> Result<Vec<TextMatch>>;

    /// Records that a search returned these memories. Fire and forget: it
    /// queues the write and returns at once; under overload it may drop it.
    fn record_access(&self, ids: Vec<String>, now: Micros);

    /// Finishes queued writes and closes the database.
    async fn close(&self);
}
