//! `engram.v1.PolicyService`: validates a request, hands it to the
//! engine's policy (which decides what is worth remembering and, for
//! Remember, stores it) and converts its answer.

use engram::v1 as pb;
use tonic::{Request, Response, Status};

use super::memory_requests::{MAX_TAG_CHARS, MAX_TAGS};
use super::request_key::Idempotent as _;
use super::validate::{MAX_ID_CHARS, Violations};
use super::{begin, caller_key, convert, memory_requests};
use crate::domain::ContradictionPolicy;
use crate::engine::policy::{
    ClassifyMode, ClassifyRequest, Decision, DecisionSource, Policy, RememberRequest, Remembered,
};

/// The most bytes of a transcript (64 KiB).
pub const MAX_TRANSCRIPT_BYTES: usize = 64 * 1024;

/// The PolicyService implementation.
pub struct PolicyApi {
    policy: Policy,
}

impl PolicyApi {
    pub fn new(policy: Policy) -> Self {
        PolicyApi { policy }
    }
}

type Reply<T> = Result<Response<T>, Status>;

/// A classification request, validated into `v`.
fn classification(
    v: &mut Violations,
    scope: Option<&pb::Scope>,
    task_id: &str,
    transcript: &str,
    mode: i32,
) -> ClassifyRequest {
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
    ClassifyRequest {
        scope,
        task_id: task_id.to_owned(),
        transcript: transcript.to_owned(),
        mode: match mode {
            Some(pb::ClassifyMode::Rules) => ClassifyMode::Rules,
            Some(pb::ClassifyMode::Llm) => ClassifyMode::Llm,
            Some(pb::ClassifyMode::Auto | pb::ClassifyMode::Unspecified) | None => {
                ClassifyMode::Auto
            }
        },
    }
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
            req.scope.as_ref(),
            &req.task_id,
            &req.transcript,
            req.mode,
        );
        v.finish(())?;
        let decided = self.policy.classify(&request).await?;
        Ok(Response::new(pb::ClassifyResponse {
            decision: Some(decision(decided)),
        }))
    }

    async fn remember(&self, request: Request<pb::RememberRequest>) -> Reply<pb::RememberResponse> {
        let key_id = caller_key(&request);
        let mut req = begin(request)?;
        let mut v = Violations::default();
        let classify = classification(
            &mut v,
            req.scope.as_ref(),
            &req.task_id,
            &req.transcript,
            req.mode,
        );
        v.identifier("request_id", &req.request_id, MAX_ID_CHARS, false);
        v.tags("tags", &req.tags, MAX_TAGS, MAX_TAG_CHARS);
        let contradictions = v.enum_value(
            "contradictions",
            req.contradictions,
            ContradictionPolicy::from_code,
        );
        let episode_id = memory_requests::episode_id(&mut v, "episode_id", &req.episode_id);
        v.finish(())?;
        // Fingerprinted as the client sent it, before anything is taken out.
        let request_key = req.take_request_key();
        let request = RememberRequest {
            classify,
            key_id,
            tags: std::mem::take(&mut req.tags),
            request_key,
            contradictions,
            episode_id,
        };
        Ok(Response::new(remembered(
            self.policy.remember(request).await?,
        )))
    }
}
