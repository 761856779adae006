//! `engram.v1.MemoryService`: validate, call the engine or store, convert.

use std::sync::Arc;

use engram::v1 as pb;
use prost::Message as _;
use tonic::{Request, Response, Status, Streaming};

use super::episode_requests::{self, MAX_STEPS_PER_CALL};
use super::learning::next_token;
use super::validate::Violations;
use super::{begin, convert, memory_requests as requests, page_token, record_namespace};
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

    /// Appends one streamed message's steps, recording each accepted or
    /// rejected step in `response`. Only storage failures end the stream;
    /// everything about the message itself becomes a rejection.
    async fn append_streamed(
        &self,
        scope: Option<&pb::Scope>,
        message: pb::StreamStepsRequest,
        response: &mut pb::StreamStepsResponse,
    ) -> Result<(), Status> {
        let now = now_micros();
        let mut reject = |step_number: i32, reason: String| {
            response.rejected += 1;
            response.rejections.push(pb::RejectedStep {
                episode_id: message.episode_id.clone(),
                step_number,
                reason,
            });
        };
        let mut v = Violations::default();
        let scope = v.scope("scope", scope);
        let id = v.uuid("episode_id", &message.episode_id);
        if let Err(err) = v.finish(()) {
            for step in &message.steps {
                reject(step.step_number, err.to_string());
            }
            return Ok(());
        }
        let mut forwarded = Vec::with_capacity(message.steps.len());
        for (i, step) in message.steps.iter().enumerate() {
            let mut v = Violations::default();
            let checked = episode_requests::step(&mut v, &format!("steps[{i}]"), step, now);
            let problems = v.into_violations();
            if i >= MAX_STEPS_PER_CALL {
                reject(
                    step.step_number,
                    format!("more than {MAX_STEPS_PER_CALL} steps in one message"),
                );
            } else if problems.is_empty() {
                forwarded.push(checked);
            } else {
                let reasons: Vec<String> = problems
                    .into_iter()
                    .map(|p| format!("{}: {}", p.field, p.description))
                    .collect();
                reject(step.step_number, reasons.join("; "));
            }
        }
        if forwarded.is_empty() {
            return Ok(());
        }
        let numbers: Vec<i32> = forwarded.iter().map(|s| s.number).collect();
        match self
            .store
            .append_steps(&scope, &id, forwarded, false, now)
            .await
        {
            Ok(appended) => {
                response.accepted += i32::try_from(appended.accepted).unwrap_or(i32::MAX);
                for rejection in appended.rejections {
                    reject(rejection.step_number, rejection.reason);
                }
            }
            Err(Error::NotFound(reason) | Error::FailedPrecondition(reason)) => {
                for number in numbers {
                    reject(number, reason.clone());
                }
            }
            Err(err) => return Err(err.into()),
        }
        Ok(())
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
            Some(cursor) if more => {
                page_token::encode(&page_token::memory_key(cursor), fingerprint)
            }
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

    async fn start_episode(&self, request: Request<pb::StartEpisodeRequest>) -> Reply<pb::Episode> {
        let (new, request_id) = episode_requests::start(&begin(request))?;
        let episode = self
            .store
            .start_episode(new, request_id.as_deref(), now_micros())
            .await?;
        Ok(Response::new(convert::episode(episode)))
    }

    async fn append_steps(
        &self,
        request: Request<pb::AppendStepsRequest>,
    ) -> Reply<pb::AppendStepsResponse> {
        let now = now_micros();
        let (scope, id, steps) = episode_requests::append(&begin(request), now)?;
        let appended = self
            .store
            .append_steps(&scope, &id, steps, true, now)
            .await?;
        Ok(Response::new(pb::AppendStepsResponse {
            step_count: appended.step_count,
        }))
    }

    async fn stream_steps(
        &self,
        request: Request<Streaming<pb::StreamStepsRequest>>,
    ) -> Reply<pb::StreamStepsResponse> {
        let mut stream = request.into_inner();
        let mut response = pb::StreamStepsResponse::default();
        let mut stream_scope: Option<pb::Scope> = None;
        while let Some(message) = stream.message().await? {
            if stream_scope.is_none() {
                record_namespace(message.scope.as_ref());
            }
            // A message without a scope uses the one the stream started with.
            if message.scope.is_some() {
                stream_scope = message.scope.clone();
            }
            self.append_streamed(stream_scope.as_ref(), message, &mut response)
                .await?;
        }
        Ok(Response::new(response))
    }

    async fn complete_episode(
        &self,
        request: Request<pb::CompleteEpisodeRequest>,
    ) -> Reply<pb::CompleteEpisodeResponse> {
        let (scope, id, outcome) = episode_requests::complete(&begin(request))?;
        let (episode, learned) = self
            .store
            .complete_episode(&scope, &id, outcome, now_micros())
            .await?;
        Ok(Response::new(pb::CompleteEpisodeResponse {
            episode: Some(convert::episode(episode)),
            learned: Some(convert::learned(learned)),
        }))
    }

    async fn get_episode(&self, request: Request<pb::GetEpisodeRequest>) -> Reply<pb::Episode> {
        let req = begin(request);
        let (scope, id) = requests::id_and_scope(req.scope.as_ref(), &req.id)?;
        let episode = self
            .store
            .get_episode(&scope, &id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("episode {id} not found")))?;
        Ok(Response::new(convert::episode(episode)))
    }

    async fn list_episodes(
        &self,
        request: Request<pb::ListEpisodesRequest>,
    ) -> Reply<pb::ListEpisodesResponse> {
        let (query, fingerprint) = episode_requests::list(&begin(request))?;
        let mut episodes = self.store.list_episodes(&query).await?;
        let next_page_token = next_token(
            &mut episodes,
            query.page_size,
            |e| vec![e.create_time, e.seq],
            fingerprint,
        );
        Ok(Response::new(pb::ListEpisodesResponse {
            episodes: episodes.into_iter().map(convert::episode).collect(),
            next_page_token,
        }))
    }
}
