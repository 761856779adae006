//! `engram.v1.PolicyService`: decide what is worth remembering (the rules
//! classifier, or the configured LLM with a safe fallback) and, for
//! Remember, store it.

use std::sync::Arc;

use engram::v1 as pb;
use tonic::{Request, Response, Status};

use super::memory_requests::{MAX_TAG_CHARS, MAX_TAGS};
use super::request_key::Idempotent as _;
use super::validate::{MAX_ID_CHARS, Violations};
use super::{begin, caller_key, convert};
use crate::domain::{
    Actor, ListQuery, MemoryFilter, MemoryOrder, MemorySource, MemoryType, Micros, NewMemory,
    Scope, now_micros,
};
use crate::engine::examples::LabelledExamples;
use crate::engine::memories::{self, Supersede};
use crate::engine::policy::{self, Decision, DecisionSource, Screened};
use crate::error::{Error, Result};
use crate::llm::LlmClient;
use crate::store::{Remembered, Store};

/// The most stored memories of one type and level a changed preference or
/// decision is compared with (the newest).
const MAX_SUPERSEDE_CANDIDATES: usize = 200;

/// The most bytes of a transcript (64 KiB).
pub const MAX_TRANSCRIPT_BYTES: usize = 64 * 1024;

/// The PolicyService implementation.
pub struct PolicyApi {
    store: Arc<dyn Store>,
    llm: Option<Arc<LlmClient>>,
    /// With an embedder: the labelled examples the rules consult.
    examples: Option<Arc<LabelledExamples>>,
}

impl PolicyApi {
    /// Classifies with the rules, and with `llm` when one is configured.
    pub fn new(
        store: Arc<dyn Store>,
        llm: Option<Arc<LlmClient>>,
        examples: Option<Arc<LabelledExamples>>,
    ) -> Self {
        PolicyApi {
            store,
            llm,
            examples,
        }
    }

    /// The decision on `request`: by the LLM when asked (or AUTO) and one is
    /// configured — falling back to the safe default on any failure — else
    /// by the rules.
    ///
    /// Either reads the transcript screened: secrets and injected
    /// instructions never reach the rules, the model or the decision.
    async fn decide(&self, request: &Classification) -> (Decision, Screened) {
        let transcript = request.transcript.clone();
        let screened = off_runtime(transcript.len(), move || policy::screen(&transcript)).await;
        let decision = self.decide_screened(request, &screened.text).await;
        (screened.finish(decision), screened)
    }

    /// The stored memories `memory` replaces: when the (screened)
    /// transcript says a preference or a decision changed, those of the
    /// same type, level and subject that belong to the same owner as
    /// `memory` (DESIGN §9: a write's side effects stay in its owner scope).
    async fn superseded_by(
        &self,
        memory: &NewMemory,
        transcript: &str,
        now: Micros,
    ) -> Result<Supersede> {
        let replaceable = matches!(
            memory.memory_type,
            MemoryType::Preference | MemoryType::Decision
        );
        if !replaceable || policy::change_cue(transcript).is_none() {
            return Ok(Supersede::default());
        }
        let query = ListQuery {
            scope: memory.scope.clone(),
            filter: MemoryFilter {
                memory_types: vec![memory.memory_type],
                levels: vec![memory.level],
                ..Default::default()
            },
            order: MemoryOrder::CreateTimeDesc,
            page_size: MAX_SUPERSEDE_CANDIDATES,
            after: None,
            max_bytes: None,
        };
        let ids = self
            .store
            .list_memories(&query, now)
            .await?
            .into_iter()
            .filter(|old| {
                old.owned_by(&memory.scope, memory.level)
                    && old.content != memory.content
                    && policy::same_subject(&memory.content, &old.content)
            })
            .map(|old| old.id)
            .collect();
        Ok(Supersede {
            scope: memory.scope.clone(),
            ids,
        })
    }

    async fn decide_screened(&self, request: &Classification, transcript: &str) -> Decision {
        let llm = self.llm.as_ref().filter(|_| request.use_llm);
        let Some(llm) = llm.filter(|_| !transcript.trim().is_empty()) else {
            let vote = match &self.examples {
                Some(examples) => Some(examples.vote(transcript).await),
                None => None,
            };
            let (text, scope, task_id) = (
                transcript.to_owned(),
                request.scope.clone(),
                request.task_id.clone(),
            );
            let voted = vote.as_ref().and_then(|v| v.as_ref().ok()).copied();
            let mut decision = off_runtime(text.len(), move || {
                policy::classify_with_vote(&text, &scope, &task_id, voted.as_ref())
            })
            .await;
            if let Some(Err(no_vote)) = vote {
                decision
                    .metadata
                    .insert("vote".to_owned(), no_vote.describe().to_owned());
            }
            return decision;
        };
        let user = format!("Task: {}\nTranscript:\n{transcript}", request.task_id);
        let reply = llm
            .chat_json(
                policy::LLM_INSTRUCTIONS,
                &user,
                policy::LLM_SCHEMA_NAME,
                policy::llm_schema(),
            )
            .await;
        let decided = reply.map_err(|e| e.to_string()).and_then(|reply| {
            policy::llm_decision(&reply, &request.scope, &request.task_id, llm.model())
        });
        decided.unwrap_or_else(|error| {
            tracing::warn!(%error, "the LLM classifier failed; using the safe fallback");
            policy::fallback(&request.scope, &request.task_id, &error)
        })
    }
}

type Reply<T> = Result<Response<T>, Status>;

/// Transcripts longer than this are screened and classified on a blocking
/// thread: the work is linear in the text, but a long text would still hold
/// one of the runtime's few workers for milliseconds.
const INLINE_TRANSCRIPT_BYTES: usize = 8 * 1024;

/// Runs `work` on a text of `bytes` here when it is short, else on a
/// blocking thread.
async fn off_runtime<T: Send + 'static>(
    bytes: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    if bytes <= INLINE_TRANSCRIPT_BYTES {
        return work();
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(err) => std::panic::resume_unwind(err.into_panic()),
    }
}

/// A validated classification request.
struct Classification {
    scope: Scope,
    task_id: String,
    transcript: String,
    /// LLM or AUTO mode with a model configured.
    use_llm: bool,
    /// LLM mode asked for without a model: FAILED_PRECONDITION, once the
    /// input has been found valid.
    needs_model: bool,
}

impl Classification {
    /// FAILED_PRECONDITION when LLM mode was asked for without a model;
    /// called once the input is known to be valid.
    fn check_model(&self) -> Result<()> {
        if self.needs_model {
            return Err(Error::FailedPrecondition(
                "no LLM is configured on this server; use mode RULES or AUTO".into(),
            ));
        }
        Ok(())
    }
}

fn classification(
    v: &mut Violations,
    has_llm: bool,
    scope: Option<&pb::Scope>,
    task_id: &str,
    transcript: &str,
    mode: i32,
) -> Result<Classification> {
    let scope = v.scope("scope", scope);
    v.identifier("task_id", task_id, MAX_ID_CHARS, false);
    if transcript.len() > MAX_TRANSCRIPT_BYTES {
        v.add(
            "transcript",
            format!(
                "must be at most {MAX_TRANSCRIPT_BYTES} bytes (got {})",
                transcript.len()
            ),
        );
    } else {
        v.text("transcript", transcript, usize::MAX, true);
    }
    let mode = v.enum_value("mode", mode, |code| pb::ClassifyMode::try_from(code).ok());
    let use_llm = match mode {
        Some(pb::ClassifyMode::Rules) => false,
        Some(pb::ClassifyMode::Llm | pb::ClassifyMode::Auto | pb::ClassifyMode::Unspecified)
        | None => has_llm,
    };
    Ok(Classification {
        scope,
        task_id: task_id.to_owned(),
        transcript: transcript.to_owned(),
        use_llm,
        needs_model: mode == Some(pb::ClassifyMode::Llm) && !has_llm,
    })
}

/// A Remember's response.
fn remembered(answer: Remembered) -> pb::RememberResponse {
    let (memory, result) = match answer.created {
        Some(created) => {
            let created = convert::created(created);
            (created.memory, created.result)
        }
        None => (None, pb::WriteResult::Unspecified.into()),
    };
    pb::RememberResponse {
        decision: Some(decision(answer.decision)),
        memory,
        result,
        superseded_memory_ids: answer.superseded,
    }
}

fn decision(decision: Decision) -> pb::MemoryDecision {
    pb::MemoryDecision {
        should_store: decision.should_store,
        memory_type: decision.memory_type.code(),
        summary: decision.summary,
        importance: decision.importance,
        level: decision.level.code(),
        metadata: decision.metadata.into_iter().collect(),
        source: match decision.source {
            DecisionSource::Rules => pb::DecisionSource::Rules,
            DecisionSource::Llm => pb::DecisionSource::Llm,
            DecisionSource::Fallback => pb::DecisionSource::Fallback,
        }
        .into(),
        reason: decision.reason,
    }
}

#[tonic::async_trait]
impl pb::policy_service_server::PolicyService for PolicyApi {
    async fn classify(&self, request: Request<pb::ClassifyRequest>) -> Reply<pb::ClassifyResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let request = classification(
            &mut v,
            self.llm.is_some(),
            req.scope.as_ref(),
            &req.task_id,
            &req.transcript,
            req.mode,
        )?;
        v.finish(())?;
        request.check_model()?;
        Ok(Response::new(pb::ClassifyResponse {
            decision: Some(decision(self.decide(&request).await.0)),
        }))
    }

    async fn remember(&self, request: Request<pb::RememberRequest>) -> Reply<pb::RememberResponse> {
        let key_id = caller_key(&request);
        let mut req = begin(request)?;
        let mut v = Violations::default();
        let request = classification(
            &mut v,
            self.llm.is_some(),
            req.scope.as_ref(),
            &req.task_id,
            &req.transcript,
            req.mode,
        )?;
        v.identifier("request_id", &req.request_id, MAX_ID_CHARS, false);
        v.tags("tags", &req.tags, MAX_TAGS, MAX_TAG_CHARS);
        v.finish(())?;
        request.check_model()?;
        // A retry with the same request id gets the first answer, without
        // classifying (or asking the model) again.
        let request_key = req.take_request_key();
        if let Some(key) = &request_key
            && let Some(first) = memories::replay_remember(
                &*self.store,
                request.scope.namespace.clone(),
                key.clone(),
            )
            .await?
        {
            return Ok(Response::new(remembered(first)));
        }
        let (decided, screened) = self.decide(&request).await;
        let now = now_micros();
        let memory = decided.should_store.then(|| NewMemory {
            scope: request.scope.for_level(decided.level),
            actor: Actor {
                key_id: key_id.clone(),
                agent_id: request.scope.agent_id.clone(),
            },
            level: decided.level,
            memory_type: decided.memory_type,
            content: decided.summary.clone(),
            summary: String::new(),
            tags: req.tags.clone(),
            metadata: decided.metadata.clone(),
            importance: decided.importance,
            confidence: 1.0,
            source: match decided.source {
                DecisionSource::Llm => MemorySource::PolicyLlm,
                DecisionSource::Rules | DecisionSource::Fallback => MemorySource::PolicyRules,
            },
            expire_time: None,
            occurred_at: None,
            origin_session_id: request.scope.session_id.clone(),
        });
        // A fallback is not an answer worth pinning to the request id: a
        // retry after the model recovers should be classified again.
        let pinned = request_key.filter(|_| decided.source != DecisionSource::Fallback);
        let supersede = match &memory {
            Some(memory) => self.superseded_by(memory, &screened.text, now).await?,
            None => Supersede::default(),
        };
        let stored = memories::remember(
            &*self.store,
            request.scope.namespace.clone(),
            pinned,
            decided,
            memory,
            supersede,
            now,
        )
        .await?;
        Ok(Response::new(remembered(stored)))
    }
}
