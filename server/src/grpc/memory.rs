//! `engram.v1.MemoryService`: validate, call the engine or store, convert.
//! The episode RPCs answer UNIMPLEMENTED until episodes land.

use std::sync::Arc;

use engram::v1 as pb;
use prost::Message as _;
use tonic::{Request, Response, Status};

use super::{begin, convert, memory_requests as requests, page_token};
use crate::domain::{PageCursor, now_micros};
use crate::engine::{context, search};
use crate::error::Error;
use crate::store::Store;

/// The most bytes of memories in one list page: a page may hold fewer than
/// page_size memories, so that it fits the 4 MiB a gRPC client accepts by default.
const MAX_PAGE_BYTES: usize = 3 * 1024 * 1024;

/// The MemoryService implementation.
pub struct MemoryApi {
    store: Arc<dyn Store>,
}

impl MemoryApi {
    pub fn new(store: Arc<dyn Store>) -> Self {
        MemoryApi { store }
    }
}

type Reply<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl pb::memory_service_server::MemoryService for MemoryApi {
    async fn create_memory(
        &self,
        request: Request<pb::CreateMemoryRequest>,
    ) -> Reply<pb::CreateMemoryResponse> {
        let now = now_micros();
        let create = requests::create(begin(request), now)?;
        let created = self
            .store
            .create_memories(
                &create.scope.namespace,
                create.request_id.as_deref(),
                create.memories,
                now,
            )
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Internal("create returned no memory".into()))?;
        Ok(Response::new(convert::created(created)))
    }

    async fn batch_create_memories(
        &self,
        request: Request<pb::BatchCreateMemoriesRequest>,
    ) -> Reply<pb::BatchCreateMemoriesResponse> {
        let now = now_micros();
        let create = requests::batch_create(begin(request), now)?;
        let created = self
            .store
            .create_memories(
                &create.scope.namespace,
                create.request_id.as_deref(),
                create.memories,
                now,
            )
            .await?;
        Ok(Response::new(pb::BatchCreateMemoriesResponse {
            results: created.into_iter().map(convert::created).collect(),
        }))
    }

    async fn get_memory(&self, request: Request<pb::GetMemoryRequest>) -> Reply<pb::Memory> {
        let req = begin(request);
        let (scope, id) = requests::id_and_scope(req.scope.as_ref(), &req.id)?;
        let memory = self
            .store
            .get_memory(&scope, &id, now_micros())
            .await?
            .ok_or_else(|| Error::NotFound(format!("memory {id} not found")))?;
        Ok(Response::new(convert::memory(memory)))
    }

    async fn update_memory(&self, request: Request<pb::UpdateMemoryRequest>) -> Reply<pb::Memory> {
        let now = now_micros();
        let update = requests::update(begin(request), now)?;
        let memory = self
            .store
            .update_memory(
                &update.scope,
                &update.id,
                update.patch,
                update.etag.as_deref(),
                now,
            )
            .await?;
        Ok(Response::new(convert::memory(memory)))
    }

    async fn delete_memory(
        &self,
        request: Request<pb::DeleteMemoryRequest>,
    ) -> Reply<pb::DeleteMemoryResponse> {
        let (scope, id, etag) = requests::delete(&begin(request))?;
        self.store
            .delete_memory(&scope, &id, etag.as_deref(), now_micros())
            .await?;
        Ok(Response::new(pb::DeleteMemoryResponse {}))
    }

    async fn list_memories(
        &self,
        request: Request<pb::ListMemoriesRequest>,
    ) -> Reply<pb::ListMemoriesResponse> {
        let (query, fingerprint) = requests::list(&begin(request))?;
        let mut memories = self.store.list_memories(&query, now_micros()).await?;
        let mut more = memories.len() > query.page_size;
        memories.truncate(query.page_size);
        // A page also ends before it outgrows what a client accepts by default.
        let mut page = Vec::with_capacity(memories.len());
        let (mut bytes, mut last) = (0, None);
        for memory in memories {
            let cursor = PageCursor::after(&memory);
            let memory = convert::memory(memory);
            bytes += memory.encoded_len();
            if !page.is_empty() && bytes > MAX_PAGE_BYTES {
                more = true;
                break;
            }
            page.push(memory);
            last = Some(cursor);
        }
        let next_page_token = match last {
            Some(cursor) if more => page_token::encode(cursor, fingerprint),
            _ => String::new(),
        };
        Ok(Response::new(pb::ListMemoriesResponse {
            memories: page,
            next_page_token,
        }))
    }

    async fn search_memories(
        &self,
        request: Request<pb::SearchMemoriesRequest>,
    ) -> Reply<pb::SearchMemoriesResponse> {
        let search = requests::search(&begin(request))?;
        let hits = search::search(self.store.as_ref(), &search, now_micros()).await?;
        Ok(Response::new(pb::SearchMemoriesResponse {
            hits: hits.into_iter().map(convert::hit).collect(),
        }))
    }

    async fn build_context(
        &self,
        request: Request<pb::BuildContextRequest>,
    ) -> Reply<pb::BuildContextResponse> {
        let context = requests::build_context(&begin(request))?;
        let block = context::build(self.store.as_ref(), &context, now_micros()).await?;
        Ok(Response::new(convert::context(block)))
    }
}
