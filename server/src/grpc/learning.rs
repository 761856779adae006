//! `engram.v1.LearningService`: outcomes with the heuristics and
//! anti-patterns learned from them, agent scopes, forgetting, task rules,
//! mistake cards, consolidation and statistics.

use std::sync::Arc;

use engram::v1 as pb;
use tonic::{Request, Response, Status};

use super::episode_requests::{self as requests, MAX_LABEL_CHARS};
use super::memory_requests::MAX_TASK_TYPE_CHARS;
use super::request_key::Idempotent as _;
use super::validate::{MAX_ID_CHARS, Violations};
use super::{begin, convert, page_token};
use crate::domain::now_micros;
use crate::domain::outcome::{AgentScope, ForgetKind, ForgetRequest, LearningFilter, NewOutcome};
use crate::engine::Engine;
use crate::engine::consolidation::{ConsolidateMode, Consolidated};
use crate::engine::outcomes::DEFAULT_MIN_OCCURRENCES;

pub const MAX_TASK_CHARS: usize = 1000;
pub const MAX_STRATEGY_CHARS: usize = 2000;
pub const MAX_ERROR_CHARS: usize = 4000;
/// The most entries of can_learn or cannot_learn, and their length.
pub const MAX_SCOPE_ENTRIES: usize = 100;
pub const MAX_SCOPE_ENTRY_CHARS: usize = 64;
pub const MAX_MIN_OCCURRENCES: usize = 100;
/// Forget's default age for stale outcomes and anti-patterns: 90 days.
pub const DEFAULT_FORGET_AFTER_MICROS: i64 = 90 * 24 * 3600 * 1_000_000;
/// Forget's default confidence below which a heuristic is weak.
pub const DEFAULT_WEAK_CONFIDENCE: f64 = 0.3;
/// The most bytes of GetStats' per-task and per-task-type lists, each: with
/// the rest they stay well within a response a default client accepts.
const MAX_STATS_LIST_BYTES: usize = 1024 * 1024;

/// The LearningService implementation.
pub struct LearningApi {
    engine: Arc<Engine>,
}

impl LearningApi {
    pub fn new(engine: Arc<Engine>) -> Self {
        LearningApi { engine }
    }
}

/// A consolidation's response (empty when none ran).
fn consolidated(ran: Option<Consolidated>) -> pb::ConsolidateResponse {
    let Some(ran) = ran else {
        return pb::ConsolidateResponse::default();
    };
    let mode = match ran.mode {
        ConsolidateMode::Llm => pb::ConsolidateMode::Llm,
        ConsolidateMode::Rules | ConsolidateMode::Auto => pb::ConsolidateMode::Rules,
    };
    pb::ConsolidateResponse {
        mode: mode.into(),
        fell_back: ran.fallback.is_some(),
        fallback_reason: ran.fallback.unwrap_or_default(),
        // Newest first.
        rules: ran
            .consolidation
            .rules
            .into_iter()
            .rev()
            .map(convert::task_rule)
            .collect(),
        episodes_considered: i32::try_from(ran.consolidation.episodes_considered)
            .unwrap_or(i32::MAX),
    }
}

type Reply<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl pb::learning_service_server::LearningService for LearningApi {
    async fn list_task_rules(
        &self,
        request: Request<pb::ListTaskRulesRequest>,
    ) -> Reply<pb::ListTaskRulesResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        if let Some(task_id) = &req.task_id {
            v.identifier("task_id", task_id, MAX_ID_CHARS, false);
        }
        let page_size = v.page_size("page_size", req.page_size);
        let fingerprint = page_token::fingerprint(&(&scope.namespace, &req.task_id));
        let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint).map(|[seq]| seq);
        v.finish(())?;
        let rules = self
            .engine
            .list_task_rules(&scope.namespace, req.task_id.as_deref(), page_size, after)
            .await?;
        let (task_rules, next_page_token) = page_token::page(
            rules,
            page_size,
            |r| vec![r.seq],
            fingerprint,
            convert::task_rule,
        );
        Ok(Response::new(pb::ListTaskRulesResponse {
            task_rules,
            next_page_token,
        }))
    }

    async fn record_mistake(
        &self,
        request: Request<pb::RecordMistakeRequest>,
    ) -> Reply<pb::RecordMistakeResponse> {
        let mut req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        v.identifier("task_id", &req.task_id, MAX_ID_CHARS, true);
        let report = match &req.card {
            Some(card) => requests::mistake(&mut v, "card", card),
            None => {
                v.add("card", "is required");
                Default::default()
            }
        };
        let episode_id =
            (!req.episode_id.is_empty()).then(|| v.uuid("episode_id", &req.episode_id));
        v.identifier("request_id", &req.request_id, MAX_ID_CHARS, false);
        v.finish(())?;
        let request = req.take_request_key();
        let (card, kept) = self
            .engine
            .record_mistake(
                scope,
                req.task_id.clone(),
                report,
                episode_id,
                request,
                now_micros(),
            )
            .await?;
        let change = if card.seen_count == 1 {
            pb::LearningChange::Created
        } else {
            pb::LearningChange::Updated
        };
        Ok(Response::new(pb::RecordMistakeResponse {
            card: Some(convert::mistake_card(card)),
            change: change.into(),
            kept,
        }))
    }

    async fn list_mistake_cards(
        &self,
        request: Request<pb::ListMistakeCardsRequest>,
    ) -> Reply<pb::ListMistakeCardsResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        v.identifier("task_id", &req.task_id, MAX_ID_CHARS, false);
        v.text("mistake_type", &req.mistake_type, MAX_LABEL_CHARS, false);
        let page_size = v.page_size("page_size", req.page_size);
        let fingerprint =
            page_token::fingerprint(&(&scope.namespace, &req.task_id, &req.mistake_type));
        let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint)
            .map(|[seen, last]| (seen, last));
        v.finish(())?;
        let filter = |text: &str| (!text.is_empty()).then(|| text.to_owned());
        let cards = self
            .engine
            .list_mistake_cards(
                &scope.namespace,
                filter(&req.task_id).as_deref(),
                filter(&req.mistake_type).as_deref(),
                page_size + 1,
                after,
            )
            .await?;
        let (mistake_cards, next_page_token) = page_token::page(
            cards,
            page_size,
            |c| vec![c.seen_count, c.last_seen],
            fingerprint,
            convert::mistake_card,
        );
        Ok(Response::new(pb::ListMistakeCardsResponse {
            mistake_cards,
            next_page_token,
        }))
    }

    async fn consolidate(
        &self,
        request: Request<pb::ConsolidateRequest>,
    ) -> Reply<pb::ConsolidateResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        let mode = v.enum_value("mode", req.mode, |code| {
            pb::ConsolidateMode::try_from(code).ok()
        });
        v.finish(())?;
        let mode = match mode {
            Some(pb::ConsolidateMode::Rules) => ConsolidateMode::Rules,
            Some(pb::ConsolidateMode::Llm) => ConsolidateMode::Llm,
            _ => ConsolidateMode::Auto,
        };
        let ran = self
            .engine
            .consolidate(&scope.namespace, mode, req.force)
            .await?;
        Ok(Response::new(consolidated(ran)))
    }

    async fn record_outcome(
        &self,
        request: Request<pb::RecordOutcomeRequest>,
    ) -> Reply<pb::RecordOutcomeResponse> {
        let mut req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        if scope.agent_id.is_empty() {
            v.add(
                "scope.agent_id",
                "is required: an outcome belongs to an agent",
            );
        }
        v.text("task", &req.task, MAX_TASK_CHARS, true);
        v.text("task_type", &req.task_type, MAX_TASK_TYPE_CHARS, false);
        v.text("strategy", &req.strategy, MAX_STRATEGY_CHARS, true);
        if req.duration_ms.is_some_and(|d| d < 0) {
            v.add("duration_ms", "must not be negative");
        }
        v.text("error", &req.error, MAX_ERROR_CHARS, false);
        v.text("feedback", &req.feedback, MAX_ERROR_CHARS, false);
        v.identifier("request_id", &req.request_id, MAX_ID_CHARS, false);
        v.finish(())?;
        let request = req.take_request_key();
        let new = NewOutcome {
            scope,
            // An empty one is inferred from the task by the engine.
            task_type: req.task_type.trim().to_lowercase(),
            task_type_inferred: false,
            task: req.task,
            success: req.success,
            strategy: req.strategy,
            duration_ms: req.duration_ms,
            error: req.error,
            feedback: req.feedback,
        };
        let recorded = self.engine.record_outcome(new, request).await?;
        Ok(Response::new(convert::recorded(recorded)))
    }

    async fn list_outcomes(
        &self,
        request: Request<pb::ListOutcomesRequest>,
    ) -> Reply<pb::ListOutcomesResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        let filter = LearningFilter {
            task_type: task_type_filter(&mut v, &req.task_type),
            success: req.success,
            min_confidence: 0.0,
        };
        let page_size = v.page_size("page_size", req.page_size);
        let fingerprint = page_token::fingerprint(&(&scope, &filter));
        let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint).map(|[seq]| seq);
        v.finish(())?;
        let outcomes = self
            .engine
            .list_outcomes(&scope, &filter, page_size + 1, after)
            .await?;
        let (outcomes, next_page_token) = page_token::page(
            outcomes,
            page_size,
            |o| vec![o.seq],
            fingerprint,
            convert::task_outcome,
        );
        Ok(Response::new(pb::ListOutcomesResponse {
            outcomes,
            next_page_token,
        }))
    }

    async fn list_heuristics(
        &self,
        request: Request<pb::ListHeuristicsRequest>,
    ) -> Reply<pb::ListHeuristicsResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        v.unit_interval("min_confidence", req.min_confidence);
        let filter = LearningFilter {
            task_type: task_type_filter(&mut v, &req.task_type),
            success: None,
            min_confidence: req.min_confidence,
        };
        let page_size = v.page_size("page_size", req.page_size);
        let fingerprint = page_token::fingerprint(&(&scope, &filter));
        let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint)
            .map(|[confidence, seq]| (f64::from_bits(confidence as u64), seq));
        v.finish(())?;
        let heuristics = self
            .engine
            .list_heuristics(&scope, &filter, page_size + 1, after)
            .await?;
        let (heuristics, next_page_token) = page_token::page(
            heuristics,
            page_size,
            |h| vec![h.confidence.to_bits() as i64, h.seq],
            fingerprint,
            convert::heuristic,
        );
        Ok(Response::new(pb::ListHeuristicsResponse {
            heuristics,
            next_page_token,
        }))
    }

    async fn list_anti_patterns(
        &self,
        request: Request<pb::ListAntiPatternsRequest>,
    ) -> Reply<pb::ListAntiPatternsResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        let filter = LearningFilter {
            task_type: task_type_filter(&mut v, &req.task_type),
            ..LearningFilter::default()
        };
        let page_size = v.page_size("page_size", req.page_size);
        let fingerprint = page_token::fingerprint(&(&scope, &filter));
        let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint)
            .map(|[count, seq]| (count, seq));
        v.finish(())?;
        let patterns = self
            .engine
            .list_anti_patterns(&scope, &filter, page_size + 1, after)
            .await?;
        let (anti_patterns, next_page_token) = page_token::page(
            patterns,
            page_size,
            |p| vec![p.occurrence_count, p.seq],
            fingerprint,
            convert::anti_pattern,
        );
        Ok(Response::new(pb::ListAntiPatternsResponse {
            anti_patterns,
            next_page_token,
        }))
    }

    async fn set_agent_scope(
        &self,
        request: Request<pb::SetAgentScopeRequest>,
    ) -> Reply<pb::SetAgentScopeResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        if scope.agent_id.is_empty() {
            v.add("scope.agent_id", "is required");
        }
        let can_learn = scope_entries(&mut v, "can_learn", &req.can_learn);
        let cannot_learn = scope_entries(&mut v, "cannot_learn", &req.cannot_learn);
        let min_occurrences = v.count_or_default(
            "min_occurrences",
            req.min_occurrences,
            DEFAULT_MIN_OCCURRENCES as usize,
            1,
            MAX_MIN_OCCURRENCES,
        );
        let etag = v.etag("etag", &req.etag);
        v.finish(())?;
        let wanted = AgentScope {
            namespace: scope.namespace,
            agent_id: scope.agent_id,
            can_learn,
            cannot_learn,
            min_occurrences: min_occurrences as i64,
            set: None,
        };
        let stored = self
            .engine
            .set_agent_scope(wanted, etag, now_micros())
            .await?;
        Ok(Response::new(pb::SetAgentScopeResponse {
            agent_scope: Some(convert::agent_scope(stored)),
        }))
    }

    async fn get_agent_scope(
        &self,
        request: Request<pb::GetAgentScopeRequest>,
    ) -> Reply<pb::GetAgentScopeResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        if scope.agent_id.is_empty() {
            v.add("scope.agent_id", "is required");
        }
        v.finish(())?;
        let stored = self
            .engine
            .get_agent_scope(&scope.namespace, &scope.agent_id)
            .await?;
        Ok(Response::new(pb::GetAgentScopeResponse {
            agent_scope: Some(convert::agent_scope(stored)),
        }))
    }

    async fn forget(&self, request: Request<pb::ForgetRequest>) -> Reply<pb::ForgetResponse> {
        let req = begin(request)?;
        let now = now_micros();
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        let older_than = v
            .positive_duration("older_than", req.older_than.as_ref())
            .unwrap_or(DEFAULT_FORGET_AFTER_MICROS);
        let below_confidence = req.below_confidence.unwrap_or(DEFAULT_WEAK_CONFIDENCE);
        v.unit_interval("below_confidence", below_confidence);
        let mut kinds = Vec::new();
        for (i, &code) in req.kinds.iter().enumerate() {
            let kind = match pb::ForgetKind::try_from(code) {
                Ok(pb::ForgetKind::Outcomes) => ForgetKind::Outcomes,
                Ok(pb::ForgetKind::Heuristics) => ForgetKind::Heuristics,
                Ok(pb::ForgetKind::AntiPatterns) => ForgetKind::AntiPatterns,
                Ok(pb::ForgetKind::Memories) => ForgetKind::Memories,
                Ok(pb::ForgetKind::Unspecified) | Err(_) => {
                    v.add(format!("kinds[{i}]"), format!("unknown kind {code}"));
                    continue;
                }
            };
            if kinds.contains(&kind) {
                v.add(format!("kinds[{i}]"), "is repeated");
            }
            kinds.push(kind);
        }
        if kinds.is_empty() {
            kinds = vec![
                ForgetKind::Outcomes,
                ForgetKind::Heuristics,
                ForgetKind::AntiPatterns,
                ForgetKind::Memories,
            ];
        }
        v.finish(())?;
        let request = ForgetRequest {
            scope,
            stale_before: now.saturating_sub(older_than),
            below_confidence,
            kinds,
            dry_run: req.dry_run,
        };
        let forgotten = self.engine.forget(request, now).await?;
        Ok(Response::new(pb::ForgetResponse {
            outcomes: forgotten.outcomes,
            heuristics: forgotten.heuristics,
            anti_patterns: forgotten.anti_patterns,
            memories: forgotten.memories,
            dry_run: req.dry_run,
        }))
    }

    async fn get_stats(
        &self,
        request: Request<pb::GetStatsRequest>,
    ) -> Reply<pb::GetStatsResponse> {
        let req = begin(request)?;
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        v.finish(())?;
        let now = now_micros();
        let stats = self.engine.stats(&scope, now).await?;
        let pending_embeddings = self
            .engine
            .pending_embeddings(&scope.namespace, now)
            .await?;
        let pending_extractions = self.engine.pending_extractions(&scope.namespace).await?;
        let mut stats = convert::stats(stats);
        // A namespace can have any number of task families and types; the
        // response keeps the first ones (by name) that fit.
        let (tasks, tasks_cut) = page_token::keep_within(stats.tasks, MAX_STATS_LIST_BYTES);
        let (task_types, types_cut) =
            page_token::keep_within(stats.task_types, MAX_STATS_LIST_BYTES);
        stats.tasks = tasks;
        stats.task_types = task_types;
        Ok(Response::new(pb::GetStatsResponse {
            pending_embeddings,
            pending_extractions,
            truncated: tasks_cut || types_cut,
            ..stats
        }))
    }
}

/// Checks an agent scope list: task types or single words (letters, digits,
/// '_'), compared lower-cased; returns it lower-cased without repeats.
fn scope_entries(v: &mut Violations, field: &str, entries: &[String]) -> Vec<String> {
    v.tags(field, entries, MAX_SCOPE_ENTRIES, MAX_SCOPE_ENTRY_CHARS);
    let mut normalised: Vec<String> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let entry = entry.trim().to_lowercase();
        if !entry.chars().all(|c| c.is_alphanumeric() || c == '_') {
            v.add(
                format!("{field}[{i}]"),
                "must be a task type or a single word (letters, digits and '_')",
            );
        } else if !normalised.contains(&entry) {
            normalised.push(entry);
        }
    }
    normalised
}

/// A task-type filter: `None` when empty, lower-cased otherwise.
fn task_type_filter(v: &mut Violations, task_type: &str) -> Option<String> {
    v.text("task_type", task_type, MAX_TASK_TYPE_CHARS, false);
    let task_type = task_type.trim().to_lowercase();
    (!task_type.is_empty()).then_some(task_type)
}
