//! `engram.v1.LearningService`, the episode part: task rules, mistake cards,
//! consolidation and statistics. The outcome RPCs (heuristics,
//! anti-patterns, agent scopes, forgetting) answer UNIMPLEMENTED until they land.

use std::sync::Arc;

use engram::v1 as pb;
use tonic::{Request, Response, Status};

use super::episode_requests::{self as requests, MAX_LABEL_CHARS};
use super::validate::{MAX_ID_CHARS, Violations};
use super::{begin, convert, page_token};
use crate::domain::now_micros;
use crate::store::Store;

/// The LearningService implementation.
pub struct LearningApi {
    store: Arc<dyn Store>,
}

impl LearningApi {
    pub fn new(store: Arc<dyn Store>) -> Self {
        LearningApi { store }
    }
}

type Reply<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl pb::learning_service_server::LearningService for LearningApi {
    async fn list_task_rules(
        &self,
        request: Request<pb::ListTaskRulesRequest>,
    ) -> Reply<pb::ListTaskRulesResponse> {
        let req = begin(request);
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        if let Some(task_id) = &req.task_id {
            v.identifier("task_id", task_id, MAX_ID_CHARS, false);
        }
        let page_size = v.page_size("page_size", req.page_size);
        let fingerprint = page_token::fingerprint(&(&scope.namespace, &req.task_id));
        let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint).map(|[seq]| seq);
        v.finish(())?;
        let mut rules = self
            .store
            .list_task_rules(&scope.namespace, req.task_id.as_deref(), page_size, after)
            .await?;
        let next_page_token = next_token(&mut rules, page_size, |r| vec![r.seq], fingerprint);
        Ok(Response::new(pb::ListTaskRulesResponse {
            task_rules: rules.into_iter().map(convert::task_rule).collect(),
            next_page_token,
        }))
    }

    async fn record_mistake(
        &self,
        request: Request<pb::RecordMistakeRequest>,
    ) -> Reply<pb::RecordMistakeResponse> {
        let req = begin(request);
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
        let request_id = (!req.request_id.is_empty()).then_some(req.request_id.as_str());
        let (card, kept) = self
            .store
            .record_mistake(
                &scope,
                &req.task_id,
                report,
                episode_id.as_deref(),
                request_id,
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
        let req = begin(request);
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
        let mut cards = self
            .store
            .list_mistake_cards(
                &scope.namespace,
                filter(&req.task_id).as_deref(),
                filter(&req.mistake_type).as_deref(),
                page_size + 1,
                after,
            )
            .await?;
        let next_page_token = next_token(
            &mut cards,
            page_size,
            |c| vec![c.seen_count, c.last_seen],
            fingerprint,
        );
        Ok(Response::new(pb::ListMistakeCardsResponse {
            mistake_cards: cards.into_iter().map(convert::mistake_card).collect(),
            next_page_token,
        }))
    }

    async fn consolidate(
        &self,
        request: Request<pb::ConsolidateRequest>,
    ) -> Reply<pb::ConsolidateResponse> {
        let req = begin(request);
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        let mode = v.enum_value("mode", req.mode, |code| {
            pb::ConsolidateMode::try_from(code).ok()
        });
        v.finish(())?;
        if mode == Some(pb::ConsolidateMode::Llm) {
            return Err(Status::failed_precondition(
                "no LLM is configured on this server; use mode RULES or AUTO",
            ));
        }
        let ran = self
            .store
            .consolidate(&scope.namespace, req.force, now_micros())
            .await?;
        let Some(consolidation) = ran else {
            return Ok(Response::new(pb::ConsolidateResponse::default()));
        };
        Ok(Response::new(pb::ConsolidateResponse {
            mode: pb::ConsolidateMode::Rules.into(),
            fell_back: false,
            fallback_reason: String::new(),
            rules: consolidation
                .rules
                .into_iter()
                .rev()
                .map(convert::task_rule)
                .collect(),
            episodes_considered: i32::try_from(consolidation.episodes_considered)
                .unwrap_or(i32::MAX),
        }))
    }

    async fn get_stats(
        &self,
        request: Request<pb::GetStatsRequest>,
    ) -> Reply<pb::GetStatsResponse> {
        let req = begin(request);
        let mut v = Violations::default();
        let scope = v.scope("scope", req.scope.as_ref());
        v.finish(())?;
        let stats = self.store.stats(&scope, now_micros()).await?;
        Ok(Response::new(convert::stats(stats)))
    }
}

/// Trims a fetched page of `page_size + 1` items to `page_size` and returns
/// the token for the next page (empty on the last).
pub(super) fn next_token<T>(
    items: &mut Vec<T>,
    page_size: usize,
    key: impl Fn(&T) -> Vec<i64>,
    fingerprint: String,
) -> String {
    if items.len() <= page_size {
        return String::new();
    }
    items.truncate(page_size);
    items
        .last()
        .map(|last| page_token::encode(&key(last), fingerprint))
        .unwrap_or_default()
}
