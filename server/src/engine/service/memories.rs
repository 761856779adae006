//! Memories: writing them, reading and listing them, their history,
//! searching, building a context block, and watching for changes.

use std::time::Duration;

use super::Engine;
use crate::domain::entity::{Entity, EntityLookup, EntityQuery, EntityView};
use crate::domain::{
    Actor, ContradictionPolicy, Created, ListQuery, Memory, MemoryPatch, Micros, NewMemory,
    RequestKey, Revision, Scope,
};
use crate::engine::context::{self, ContextBlock, ContextRequest};
use crate::engine::entities;
use crate::engine::explain;
use crate::engine::memories;
use crate::engine::search::{self, SearchRequest, Searched};
use crate::engine::watch::{Watch, WatchRequest};
use crate::engine::write_plan;
use crate::error::{Error, Result};

impl Engine {
    /// Stores new memories of `namespace`, each invalidating what it
    /// contradicts under `contradictions` (`None`: the server's default):
    /// with a request id in a unit of work of its own (to replay the first
    /// answer), else with whatever other creates are waiting.
    pub async fn create_memories(
        &self,
        namespace: String,
        request: Option<RequestKey>,
        new: Vec<NewMemory>,
        contradictions: Option<ContradictionPolicy>,
        now: Micros,
    ) -> Result<Vec<Created>> {
        let policy = self.contradictions.policy(contradictions);
        let writes = write_plan::plan(&self.contradictions, new, Vec::new(), policy, now).await?;
        match request {
            Some(request) => {
                memories::create_with_request(&*self.store, namespace, request, writes, now).await
            }
            None => self.creates.create(self.store.clone(), writes, now).await,
        }
    }

    /// The memory `id` visible from `scope` (`NotFound` otherwise).
    pub async fn get_memory(&self, scope: &Scope, id: &str, now: Micros) -> Result<Memory> {
        self.store
            .get_memory(scope, id, now)
            .await?
            .ok_or_else(|| Error::NotFound(format!("memory {id} not found")))
    }

    /// The memory `id` visible from `scope` with its first links to other
    /// memories and its provenance, read on one snapshot (`NotFound` when
    /// it is not visible).
    pub async fn get_memory_detailed(
        &self,
        scope: Scope,
        id: String,
        now: Micros,
    ) -> Result<memories::Detailed> {
        memories::get_detailed(&*self.store, scope, id, now).await
    }

    /// Why the memory `id` visible from `scope` is held (see
    /// [`explain::explain`]).
    pub async fn explain_memory(
        &self,
        scope: Scope,
        id: String,
        now: Micros,
    ) -> Result<explain::Explanation> {
        explain::explain(&*self.store, scope, id, now).await
    }

    /// Applies `patch` to a memory (see [`memories::update_memory`]).
    pub async fn update_memory(
        &self,
        scope: Scope,
        id: String,
        patch: MemoryPatch,
        etag: Option<String>,
        actor: Actor,
        now: Micros,
    ) -> Result<Memory> {
        memories::update_memory(&*self.store, scope, id, patch, etag, actor, now).await
    }

    /// Deletes a memory (see [`memories::delete_memory`]).
    pub async fn delete_memory(
        &self,
        scope: Scope,
        id: String,
        etag: Option<String>,
        actor: Actor,
        now: Micros,
    ) -> Result<()> {
        memories::delete_memory(&*self.store, scope, id, etag, actor, now).await
    }

    /// A page of the memories `query` asks for.
    pub async fn list_memories(&self, query: &ListQuery, now: Micros) -> Result<Vec<Memory>> {
        if query.filter.entities.is_empty() {
            return self.store.list_memories(query, now).await;
        }
        let mut query = query.clone();
        entities::resolve_filter(&*self.store, &query.scope.namespace, &mut query.filter).await?;
        self.store.list_memories(&query, now).await
    }

    /// A page of the entities `query` asks for (see [`entities::list`]).
    pub async fn list_entities(&self, query: &EntityQuery, now: Micros) -> Result<Vec<Entity>> {
        entities::list(&*self.store, query, now).await
    }

    /// An entity and what is known of it (see [`entities::get`]).
    pub async fn get_entity(&self, lookup: EntityLookup, now: Micros) -> Result<EntityView> {
        entities::get(&*self.store, lookup, now).await
    }

    /// Makes two entities one (see [`entities::merge`]).
    pub async fn merge_entities(
        &self,
        scope: Scope,
        kept: String,
        duplicate: String,
        now: Micros,
    ) -> Result<Entity> {
        entities::merge(&*self.store, scope, kept, duplicate, now).await
    }

    /// A page of the history of memory `id` in `namespace`, after the
    /// revision `after` when given; a memory with no history at all is
    /// `NotFound`.
    pub async fn list_memory_revisions(
        &self,
        namespace: &str,
        id: &str,
        page_size: usize,
        after: Option<i64>,
    ) -> Result<Vec<Revision>> {
        let revisions = self
            .store
            .list_memory_revisions(namespace, id, page_size, after)
            .await?;
        if revisions.is_empty() && after.is_none() {
            return Err(Error::NotFound(format!(
                "no history of memory {id} in this namespace"
            )));
        }
        Ok(revisions)
    }

    /// The database's id, which watch cursors are bound to.
    pub async fn database_id(&self) -> Result<&str> {
        let id = self
            .database_id
            .get_or_try_init(|| self.store.database_id())
            .await?;
        Ok(id)
    }

    /// Starts a watch of the change feed (see [`Watch::start`]).
    pub async fn watch(&self, request: WatchRequest) -> Result<Watch> {
        Watch::start(self.store.clone(), &self.wakeups, request).await
    }

    /// Runs a search (see [`search::search`]).
    pub async fn search(
        &self,
        request: &SearchRequest,
        now: Micros,
        deadline: Option<Duration>,
    ) -> Result<Searched> {
        if request.filter.entities.is_empty() {
            return search::search(self.store.as_ref(), &self.retrieval, request, now, deadline)
                .await;
        }
        let mut request = request.clone();
        entities::resolve_filter(&*self.store, &request.scope.namespace, &mut request.filter)
            .await?;
        search::search(
            self.store.as_ref(),
            &self.retrieval,
            &request,
            now,
            deadline,
        )
        .await
    }

    /// Builds a context block (see [`context::build`]).
    pub async fn build_context(
        &self,
        request: &ContextRequest,
        now: Micros,
        deadline: Option<Duration>,
    ) -> Result<ContextBlock> {
        context::build(self.store.as_ref(), &self.retrieval, request, now, deadline).await
    }
}
