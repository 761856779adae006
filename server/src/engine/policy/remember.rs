//! Classify and Remember as the engine runs them: which classifier decides
//! (the model when asked for and configured, else the rules with the
//! labelled examples' vote), always on the screened transcript, and what a
//! Remember stores and supersedes.

use std::sync::Arc;

use super::examples::LabelledExamples;
use super::{Decision, DecisionSource, Screened, classify_with_vote, llm, screen, supersede};
use crate::domain::identity::sha256_hex;
use crate::domain::policy::ClassifyMode;
/// What a Remember answers: the decision, the memory it stored and the
/// ones that memory superseded.
pub use crate::domain::policy::Remembered;
use crate::domain::provenance::{Origin, WriteMethod};
use crate::domain::{
    Actor, ContradictionPolicy, MemorySource, NewMemory, RequestKey, Scope, now_micros,
};
use crate::engine::contradictions::Contradictions;
use crate::engine::episodes;
use crate::engine::memories;
use crate::engine::write_plan;
use crate::error::{Error, Result};
use crate::llm::LlmClient;
use crate::store::Store;

/// Transcripts longer than this are screened and classified on a blocking
/// thread: the work is linear in the text, but a long text would still hold
/// one of the runtime's few workers for milliseconds.
const INLINE_TRANSCRIPT_BYTES: usize = 8 * 1024;

/// A transcript to classify, for whom and by which classifier.
#[derive(Debug, Clone)]
pub struct ClassifyRequest {
    pub scope: Scope,
    pub task_id: String,
    pub transcript: String,
    pub mode: ClassifyMode,
}

/// A Remember: a classification and what the memory is stored with.
#[derive(Debug, Clone)]
pub struct RememberRequest {
    pub classify: ClassifyRequest,
    /// The caller's API key id (empty without authentication).
    pub key_id: String,
    pub tags: Vec<String>,
    /// A retry with this key gets the first answer, without classifying
    /// (or asking the model) again.
    pub request_key: Option<RequestKey>,
    /// What its memory's contradictions do; `None`: the server's default.
    pub contradictions: Option<ContradictionPolicy>,
    /// The episode the transcript comes from (empty: none), kept in the
    /// memory's provenance.
    pub episode_id: String,
}

/// The memory policy over a store: the rules, and the model and the
/// labelled examples when the server has them.
pub struct Policy {
    store: Arc<dyn Store>,
    llm: Option<Arc<LlmClient>>,
    /// With an embedder: the labelled examples the rules consult.
    examples: Option<Arc<LabelledExamples>>,
    /// What a remembered memory contradicts.
    contradictions: Arc<Contradictions>,
    /// Whether a stored memory's provenance keeps the screened transcript.
    keep_transcripts: bool,
}

impl Policy {
    pub fn new(
        store: Arc<dyn Store>,
        llm: Option<Arc<LlmClient>>,
        examples: Option<Arc<LabelledExamples>>,
        contradictions: Arc<Contradictions>,
        keep_transcripts: bool,
    ) -> Self {
        Policy {
            store,
            llm,
            examples,
            contradictions,
            keep_transcripts,
        }
    }

    /// The decision on `request`.
    pub async fn classify(&self, request: &ClassifyRequest) -> Result<Decision> {
        let model = self.model(request.mode)?;
        Ok(self.decide(request, model).await.0)
    }

    /// The decision on `request`, and the memory it stores when it is worth
    /// keeping (superseding what it replaces), in one transaction.
    pub async fn remember(&self, request: RememberRequest) -> Result<Remembered> {
        let RememberRequest {
            classify,
            key_id,
            tags,
            request_key,
            contradictions,
            episode_id,
        } = request;
        let model = self.model(classify.mode)?;
        let namespace = &classify.scope.namespace;
        if let Some(key) = &request_key
            && let Some(first) =
                memories::replay_remember(&*self.store, namespace.clone(), key.clone()).await?
        {
            return Ok(first);
        }
        let field = |_| "episode_id".to_owned();
        episodes::check_named(&*self.store, &classify.scope, &[&episode_id], field).await?;
        let (decided, screened) = self.decide(&classify, model).await;
        let now = now_micros();
        let scope = &classify.scope;
        let memory = decided.should_store.then(|| NewMemory {
            scope: scope.for_level(decided.level),
            actor: Actor {
                key_id,
                agent_id: scope.agent_id.clone(),
            },
            level: decided.level,
            memory_type: decided.memory_type,
            content: decided.summary.clone(),
            summary: String::new(),
            tags,
            metadata: decided.metadata.clone(),
            importance: decided.importance,
            confidence: 1.0,
            source: match decided.source {
                DecisionSource::Llm => MemorySource::PolicyLlm,
                DecisionSource::Rules | DecisionSource::Fallback => MemorySource::PolicyRules,
            },
            expire_time: None,
            occurred_at: None,
            origin_session_id: scope.session_id.clone(),
            origin: Origin {
                method: WriteMethod::Remember,
                episode_id,
                transcript_hash: sha256_hex(classify.transcript.as_bytes()),
                transcript: match self.keep_transcripts {
                    true => screened.text.clone(),
                    false => String::new(),
                },
            },
        });
        // A fallback is not an answer worth pinning to the request id: a
        // retry after the model recovers should be classified again.
        let pinned = request_key.filter(|_| decided.source != DecisionSource::Fallback);
        let write = match memory {
            Some(memory) => {
                let superseded =
                    supersede::superseded_by(&*self.store, &memory, &screened.text, now).await?;
                let policy = self.contradictions.policy(contradictions);
                write_plan::plan(&self.contradictions, vec![memory], superseded, policy, now)
                    .await?
                    .pop()
            }
            None => None,
        };
        memories::remember(&*self.store, namespace.clone(), pinned, decided, write, now).await
    }

    /// The model that decides in `mode`: none for RULES, the configured one
    /// (if any) for AUTO; LLM mode without one is FAILED_PRECONDITION.
    fn model(&self, mode: ClassifyMode) -> Result<Option<&LlmClient>> {
        match (mode, self.llm.as_deref()) {
            (ClassifyMode::Rules, _) => Ok(None),
            (ClassifyMode::Llm, None) => Err(Error::FailedPrecondition(
                "no LLM is configured on this server; use mode RULES or AUTO".into(),
            )),
            (ClassifyMode::Llm | ClassifyMode::Auto, llm) => Ok(llm),
        }
    }

    /// The decision on `request`: by `model` when there is one — falling
    /// back to the safe default on any failure — else by the rules.
    ///
    /// Either reads the transcript screened: secrets and injected
    /// instructions never reach the rules, the model or the decision.
    async fn decide(
        &self,
        request: &ClassifyRequest,
        model: Option<&LlmClient>,
    ) -> (Decision, Screened) {
        let transcript = request.transcript.clone();
        let screened = off_runtime(transcript.len(), move || screen(&transcript)).await;
        let decision = match model.filter(|_| !screened.text.trim().is_empty()) {
            Some(llm) => llm::classify(llm, &screened.text, &request.scope, &request.task_id).await,
            None => self.rules(request, &screened.text).await,
        };
        (screened.finish(decision), screened)
    }

    /// The rules' decision on the screened `transcript`, with the labelled
    /// examples' vote when there are examples; the decision's `vote`
    /// metadata says why there is none when they could not vote.
    async fn rules(&self, request: &ClassifyRequest, transcript: &str) -> Decision {
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
            classify_with_vote(&text, &scope, &task_id, voted.as_ref())
        })
        .await;
        if let Some(Err(no_vote)) = vote {
            decision
                .metadata
                .insert("vote".to_owned(), no_vote.describe().to_owned());
        }
        decision
    }
}

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
