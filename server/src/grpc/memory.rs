//! `engram.v1.MemoryService`: validate, call the engine, convert.

use std::sync::Arc;
use std::time::Duration;

use engram::v1 as pb;
use tonic::{Request, Response, Status, Streaming};

use super::auth::{CallNamespace, Grant};
use super::deadline::deadline;
use super::entity_requests;
use super::episode_requests::{self, MAX_STEPS_PER_CALL};
use super::status::cut;
use super::validate::Violations;
use super::{
    begin, caller_key, convert, enter_namespace, memory_requests as requests, page_token, watch,
};
use crate::domain::{Actor, Created, Micros, NewMemory, PageCursor, Scope, now_micros};
use crate::engine::Engine;
use crate::engine::search::SemanticUse;
use crate::error::Error;

/// The MemoryService implementation.
pub struct MemoryApi {
    engine: Arc<Engine>,
    /// How long a StreamSteps stream may go without a message.
    stream_idle_timeout: Duration,
    /// Turns true when the server starts to shut down: open watches end
    /// then, so that draining does not wait for them.
    stopping: tokio::sync::watch::Receiver<bool>,
}

impl MemoryApi {
    pub fn new(
        engine: Arc<Engine>,
        stream_idle_timeout: Duration,
        stopping: tokio::sync::watch::Receiver<bool>,
    ) -> Self {
        MemoryApi {
            engine,
            stream_idle_timeout,
            stopping,
        }
    }

    /// Stores a validated create.
    async fn store_memories(
        &self,
        create: requests::Create,
        now: Micros,
    ) -> Result<Vec<Created>, Error> {
        self.engine
            .create_memories(
                create.scope.namespace,
                create.request,
                create.memories,
                create.contradictions,
                now,
            )
            .await
    }

    /// Refuses memories that name an episode the scope does not see.
    async fn check_episodes(
        &self,
        create: &requests::Create,
        field: impl Fn(usize) -> String,
    ) -> Result<(), Error> {
        let ids: Vec<&str> = create
            .memories
            .iter()
            .map(|m| m.origin.episode_id.as_str())
            .collect();
        self.engine.check_episodes(&create.scope, &ids, field).await
    }

    /// Appends one streamed message's steps, recording each accepted or
    /// rejected step in `response`. Nothing about a message ends the stream:
    /// bad input, an unknown or completed episode, and even a storage failure
    /// (the message's steps are then not stored) become rejections, so the
    /// caller always learns what was stored.
    async fn append_streamed(
        &self,
        scope: &Scope,
        message: pb::StreamStepsRequest,
        response: &mut StreamTally,
    ) {
        let now = now_micros();
        let episode = message.episode_id.as_str();
        let mut v = Violations::default();
        let id = v.uuid("episode_id", episode);
        if let Err(err) = v.finish(()) {
            response.reject_all(episode, &message.steps, &describe(&err));
            return;
        }
        if message.steps.len() > MAX_STEPS_PER_CALL {
            let reason = format!(
                "more than {MAX_STEPS_PER_CALL} steps in one message; none of them was stored"
            );
            response.reject_all(episode, &message.steps, &reason);
            return;
        }
        let mut forwarded = Vec::with_capacity(message.steps.len());
        for (i, step) in message.steps.iter().enumerate() {
            let mut v = Violations::default();
            let checked = episode_requests::step(&mut v, &format!("steps[{i}]"), step, now);
            match v.finish(checked) {
                Ok(checked) => forwarded.push(checked),
                Err(err) => response.reject(episode, step.step_number, describe(&err)),
            }
        }
        if forwarded.is_empty() {
            return;
        }
        let numbers: Vec<i32> = forwarded.iter().map(|s| s.number).collect();
        match self
            .engine
            .append_steps(scope.clone(), id.clone(), forwarded, false, now)
            .await
        {
            Ok(appended) => {
                let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
                response.0.accepted = response.0.accepted.saturating_add(count(appended.accepted));
                response.0.already_stored = response
                    .0
                    .already_stored
                    .saturating_add(count(appended.repeated));
                for rejection in appended.rejections {
                    response.reject(episode, rejection.step_number, rejection.reason);
                }
            }
            Err(err) => {
                let reason = match &err {
                    Error::NotFound(reason) | Error::FailedPrecondition(reason) => reason.clone(),
                    Error::Internal(_) => {
                        tracing::error!(error = %err, "storing streamed steps failed");
                        "not stored: internal error; send these steps again".to_owned()
                    }
                    other => format!("not stored: {other}; send these steps again"),
                };
                for number in numbers {
                    response.reject(episode, number, reason.clone());
                }
            }
        }
    }
}

/// A validation error as one line: "field: problem; field: problem".
fn describe(err: &Error) -> String {
    match err {
        Error::InvalidArgument(violations) => violations
            .iter()
            .map(|v| format!("{}: {}", v.field, v.description))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// The most rejections a StreamSteps response lists one by one; beyond it
/// they are only counted, so a stream of garbage cannot grow the response
/// (or the server's memory) without bound.
pub const MAX_REPORTED_REJECTIONS: usize = 1000;

/// What a rejection echoes of the request at most, in characters: an
/// episode id (a UUID has 36), and the reason. With
/// [`MAX_REPORTED_REJECTIONS`] this bounds the response (under 1 MiB),
/// however large the request's text.
const MAX_ECHOED_ID_CHARS: usize = 64;
const MAX_REASON_CHARS: usize = 512;

/// The StreamSteps response being built.
#[derive(Default)]
struct StreamTally(pb::StreamStepsResponse);

impl StreamTally {
    fn reject(&mut self, episode_id: &str, step_number: i32, reason: String) {
        self.0.rejected = self.0.rejected.saturating_add(1);
        if self.0.rejections.len() < MAX_REPORTED_REJECTIONS {
            self.0.rejections.push(pb::RejectedStep {
                episode_id: cut(episode_id, MAX_ECHOED_ID_CHARS),
                step_number,
                reason: cut(&reason, MAX_REASON_CHARS),
            });
        }
    }

    fn reject_all(&mut self, episode_id: &str, steps: &[pb::Step], reason: &str) {
        for step in steps {
            self.reject(episode_id, step.step_number, reason.to_owned());
        }
    }
}

type Reply<T> = Result<Response<T>, Status>;

/// Names the caller's API key on memories to be written.
fn stamp(memories: &mut [NewMemory], key_id: &str) {
    for memory in memories {
        memory.actor.key_id = key_id.to_owned();
    }
}

/// Who makes a change: the caller's key and the agent its scope names.
fn actor(key_id: String, scope: &Scope) -> Actor {
    Actor {
        key_id,
        agent_id: scope.agent_id.clone(),
    }
}

#[tonic::async_trait]
impl pb::memory_service_server::MemoryService for MemoryApi {
    async fn create_memory(
        &self,
        request: Request<pb::CreateMemoryRequest>,
    ) -> Reply<pb::CreateMemoryResponse> {
        let now = now_micros();
        let key_id = caller_key(&request);
        let mut create = requests::create(begin(request)?, now)?;
        stamp(&mut create.memories, &key_id);
        self.check_episodes(&create, |_| "memory.episode_id".into())
            .await?;
        let created = self
            .store_memories(create, now)
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
        let key_id = caller_key(&request);
        let mut create = requests::batch_create(begin(request)?, now)?;
        stamp(&mut create.memories, &key_id);
        self.check_episodes(&create, |i| format!("memories[{i}].episode_id"))
            .await?;
        let created = self.store_memories(create, now).await?;
        Ok(Response::new(pb::BatchCreateMemoriesResponse {
            results: created.into_iter().map(convert::created).collect(),
        }))
    }

    async fn get_memory(&self, request: Request<pb::GetMemoryRequest>) -> Reply<pb::Memory> {
        let req = begin(request)?;
        let (scope, id) = requests::id_and_scope(req.scope.as_ref(), &req.id)?;
        let detailed = self
            .engine
            .get_memory_detailed(scope, id, now_micros())
            .await?;
        Ok(Response::new(convert::detailed(detailed)))
    }

    async fn explain_memory(
        &self,
        request: Request<pb::ExplainMemoryRequest>,
    ) -> Reply<pb::ExplainMemoryResponse> {
        let req = begin(request)?;
        let (scope, id) = requests::id_and_scope(req.scope.as_ref(), &req.id)?;
        let explained = self.engine.explain_memory(scope, id, now_micros()).await?;
        Ok(Response::new(pb::ExplainMemoryResponse {
            memory: Some(convert::detailed(explained.detailed)),
            episode: explained.episode.map(convert::episode),
            revisions: explained
                .revisions
                .into_iter()
                .map(convert::revision)
                .collect(),
            replaced_by: explained.replaced_by.map(convert::memory),
            explanation: explained.sentences,
        }))
    }

    async fn update_memory(&self, request: Request<pb::UpdateMemoryRequest>) -> Reply<pb::Memory> {
        let now = now_micros();
        let key_id = caller_key(&request);
        let update = requests::update(begin(request)?, now)?;
        let actor = actor(key_id, &update.scope);
        let memory = self
            .engine
            .update_memory(
                update.scope,
                update.id,
                update.patch,
                update.etag,
                actor,
                now,
            )
            .await?;
        Ok(Response::new(convert::memory(memory)))
    }

    async fn delete_memory(
        &self,
        request: Request<pb::DeleteMemoryRequest>,
    ) -> Reply<pb::DeleteMemoryResponse> {
        let key_id = caller_key(&request);
        let (scope, id, etag) = requests::delete(&begin(request)?)?;
        let actor = actor(key_id, &scope);
        self.engine
            .delete_memory(scope, id, etag, actor, now_micros())
            .await?;
        Ok(Response::new(pb::DeleteMemoryResponse {}))
    }

    async fn list_memories(
        &self,
        request: Request<pb::ListMemoriesRequest>,
    ) -> Reply<pb::ListMemoriesResponse> {
        let (query, fingerprint) = requests::list(&begin(request)?)?;
        let memories = self.engine.list_memories(&query, now_micros()).await?;
        let (memories, next_page_token) = page_token::page(
            memories,
            query.page_size,
            |memory| page_token::memory_key(PageCursor::after(memory)).to_vec(),
            fingerprint,
            convert::memory,
        );
        Ok(Response::new(pb::ListMemoriesResponse {
            memories,
            next_page_token,
        }))
    }

    async fn list_memory_revisions(
        &self,
        request: Request<pb::ListMemoryRevisionsRequest>,
    ) -> Reply<pb::ListMemoryRevisionsResponse> {
        let requests::Revisions {
            namespace,
            id,
            page_size,
            after,
            fingerprint,
        } = requests::revisions(&begin(request)?)?;
        let revisions = self
            .engine
            .list_memory_revisions(&namespace, &id, page_size, after)
            .await?;
        let (revisions, next_page_token) = page_token::page(
            revisions,
            page_size,
            |revision| vec![revision.seq],
            fingerprint,
            convert::revision,
        );
        Ok(Response::new(pb::ListMemoryRevisionsResponse {
            revisions,
            next_page_token,
        }))
    }

    async fn watch_memories(
        &self,
        request: Request<pb::WatchMemoriesRequest>,
    ) -> Reply<watch::WatchStream> {
        let req = begin(request)?;
        // A watch started now would only hold up the drain.
        if *self.stopping.borrow() {
            return Err(Status::unavailable(watch::SHUTTING_DOWN));
        }
        let (request, cursors) = requests::watch(&req, self.engine.database_id().await?)?;
        let started = self.engine.watch(request).await?;
        Ok(Response::new(watch::stream(
            started,
            cursors,
            watch::heartbeat_interval(self.stream_idle_timeout),
            self.stopping.clone(),
        )))
    }

    async fn search_memories(
        &self,
        request: Request<pb::SearchMemoriesRequest>,
    ) -> Reply<pb::SearchMemoriesResponse> {
        let deadline = deadline(&request);
        let search = requests::search(&begin(request)?)?;
        let searched = self.engine.search(&search, now_micros(), deadline).await?;
        let (hits, truncated) = page_token::keep_within(
            searched.hits.into_iter().map(convert::hit),
            page_token::MAX_PAGE_BYTES,
        );
        Ok(Response::new(pb::SearchMemoriesResponse {
            hits,
            truncated,
            semantic: match searched.semantic {
                SemanticUse::Off => pb::SemanticSearch::Off,
                SemanticUse::Complete => pb::SemanticSearch::Complete,
                SemanticUse::Partial => pb::SemanticSearch::Partial,
                SemanticUse::Unavailable => pb::SemanticSearch::Unavailable,
            }
            .into(),
        }))
    }

    async fn build_context(
        &self,
        request: Request<pb::BuildContextRequest>,
    ) -> Reply<pb::BuildContextResponse> {
        let deadline = deadline(&request);
        let context = requests::build_context(&begin(request)?)?;
        let block = self
            .engine
            .build_context(&context, now_micros(), deadline)
            .await?;
        Ok(Response::new(convert::context(block)))
    }

    async fn start_episode(&self, request: Request<pb::StartEpisodeRequest>) -> Reply<pb::Episode> {
        let (new, request) = episode_requests::start(begin(request)?)?;
        let episode = self
            .engine
            .start_episode(new, request, now_micros())
            .await?;
        Ok(Response::new(convert::episode(episode)))
    }

    async fn append_steps(
        &self,
        request: Request<pb::AppendStepsRequest>,
    ) -> Reply<pb::AppendStepsResponse> {
        let now = now_micros();
        let (scope, id, steps) = episode_requests::append(&begin(request)?, now)?;
        let appended = self
            .engine
            .append_steps(scope, id, steps, true, now)
            .await?;
        Ok(Response::new(pb::AppendStepsResponse {
            step_count: appended.step_count,
        }))
    }

    async fn stream_steps(
        &self,
        request: Request<Streaming<pb::StreamStepsRequest>>,
    ) -> Reply<pb::StreamStepsResponse> {
        let grant = request.extensions().get::<Arc<Grant>>().cloned();
        let call = request.extensions().get::<CallNamespace>().cloned();
        let mut stream = request.into_inner();
        let mut tally = StreamTally::default();
        // The first message's scope is the stream's; later messages may leave
        // it unset, and one naming another scope has its steps rejected.
        let mut stream_scope: Option<(pb::Scope, Result<Scope, String>)> = None;
        loop {
            // A stream that went silent holds a task and a connection: end it.
            let Ok(next) = tokio::time::timeout(self.stream_idle_timeout, stream.message()).await
            else {
                return Err(Status::deadline_exceeded(format!(
                    "no message for {:?}: the stream was ended; the steps already received \
                     are stored (GetEpisode's last_step_number says where to go on)",
                    self.stream_idle_timeout
                )));
            };
            let Some(message) = next? else {
                break;
            };
            let (first, scope) = match &mut stream_scope {
                Some(known) => known,
                None => {
                    // A namespace the key may not use ends the stream.
                    enter_namespace(grant.as_deref(), call.as_ref(), message.scope.as_ref())?;
                    let given = message.scope.clone().unwrap_or_default();
                    let mut v = Violations::default();
                    let scope = v.scope("scope", Some(&given));
                    stream_scope.insert((given, v.finish(scope).map_err(|err| describe(&err))))
                }
            };
            let scope = match &message.scope {
                Some(other) if other != first => {
                    Err("a stream keeps the scope of its first message".to_owned())
                }
                _ => scope.clone(),
            };
            match scope {
                Ok(scope) => self.append_streamed(&scope, message, &mut tally).await,
                Err(reason) => tally.reject_all(&message.episode_id, &message.steps, &reason),
            }
        }
        Ok(Response::new(tally.0))
    }

    async fn complete_episode(
        &self,
        request: Request<pb::CompleteEpisodeRequest>,
    ) -> Reply<pb::CompleteEpisodeResponse> {
        let (scope, id, outcome) = episode_requests::complete(&begin(request)?)?;
        let (episode, learned) = self
            .engine
            .complete_episode(scope, id, outcome, now_micros())
            .await?;
        Ok(Response::new(pb::CompleteEpisodeResponse {
            episode: Some(convert::episode(episode)),
            learned: Some(convert::learned(learned)),
        }))
    }

    async fn get_episode(&self, request: Request<pb::GetEpisodeRequest>) -> Reply<pb::Episode> {
        let req = begin(request)?;
        let (scope, id, window, fingerprint) = episode_requests::get(&req)?;
        let mut episode = self.engine.get_episode(&scope, &id, window).await?;
        // One step more than the page was read, to know whether more follow.
        let steps = std::mem::take(&mut episode.steps);
        let (steps, next_step_page_token) = page_token::page(
            steps,
            window.limit - 1,
            |step| vec![i64::from(step.number)],
            fingerprint,
            convert::step,
        );
        Ok(Response::new(pb::Episode {
            steps,
            next_step_page_token,
            ..convert::episode(episode)
        }))
    }

    async fn list_episodes(
        &self,
        request: Request<pb::ListEpisodesRequest>,
    ) -> Reply<pb::ListEpisodesResponse> {
        let (query, fingerprint) = episode_requests::list(&begin(request)?)?;
        let episodes = self.engine.list_episodes(&query).await?;
        let (episodes, next_page_token) = page_token::page(
            episodes,
            query.page_size,
            |e| vec![e.create_time, e.seq],
            fingerprint,
            convert::episode,
        );
        Ok(Response::new(pb::ListEpisodesResponse {
            episodes,
            next_page_token,
        }))
    }

    async fn list_entities(
        &self,
        request: Request<pb::ListEntitiesRequest>,
    ) -> Reply<pb::ListEntitiesResponse> {
        let (query, fingerprint) = entity_requests::list(&begin(request)?)?;
        let entities = self.engine.list_entities(&query, now_micros()).await?;
        let (entities, next_page_token) = page_token::page_by_text(
            entities,
            query.page_size,
            |e| (e.key.clone(), vec![e.seq]),
            fingerprint,
            convert::entity,
        );
        Ok(Response::new(pb::ListEntitiesResponse {
            entities,
            next_page_token,
        }))
    }

    async fn get_entity(
        &self,
        request: Request<pb::GetEntityRequest>,
    ) -> Reply<pb::GetEntityResponse> {
        let lookup = entity_requests::get(&begin(request)?)?;
        let view = self.engine.get_entity(lookup, now_micros()).await?;
        let (memories, cut) = page_token::keep_within(
            view.memories.into_iter().map(convert::memory),
            page_token::MAX_PAGE_BYTES,
        );
        Ok(Response::new(pb::GetEntityResponse {
            entity: Some(convert::entity(view.entity)),
            memories,
            relations: view
                .relations
                .into_iter()
                .map(|r| pb::EntityRelation {
                    predicate: r.predicate,
                    object: r.object,
                    memory_id: r.memory_id,
                })
                .collect(),
            truncated: view.truncated || cut,
        }))
    }

    async fn merge_entities(
        &self,
        request: Request<pb::MergeEntitiesRequest>,
    ) -> Reply<pb::MergeEntitiesResponse> {
        let (scope, kept, duplicate) = entity_requests::merge(&begin(request)?)?;
        let entity = self
            .engine
            .merge_entities(scope, kept, duplicate, now_micros())
            .await?;
        Ok(Response::new(pb::MergeEntitiesResponse {
            entity: Some(convert::entity(entity)),
        }))
    }
}
