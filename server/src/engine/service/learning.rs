//! Learning: task rules, mistake cards, consolidation, outcomes with the
//! heuristics and anti-patterns learned from them, agent scopes,
//! forgetting and statistics.

use super::Engine;
use crate::domain::episode::{MistakeCard, MistakeReport, Stats, TaskRule};
use crate::domain::outcome::{
    AgentScope, AntiPattern, ForgetRequest, Forgotten, Heuristic, LearningFilter, NewOutcome,
    Recorded, TaskOutcome,
};
use crate::domain::{Micros, RequestKey, Scope, now_micros};
use crate::engine::consolidation::{self, ConsolidateMode, Consolidated};
use crate::engine::learning::STATS_TOP_CARDS;
use crate::engine::outcomes::{agent_scope_or_default, infer_task_type};
use crate::engine::{episode_learning, forgetting, outcome_learning};
use crate::error::Result;

impl Engine {
    /// A page of `namespace`'s task rules (of `task_id` when given).
    pub async fn list_task_rules(
        &self,
        namespace: &str,
        task_id: Option<&str>,
        page_size: usize,
        after: Option<i64>,
    ) -> Result<Vec<TaskRule>> {
        self.store
            .list_task_rules(namespace, task_id, page_size, after)
            .await
    }

    /// Records a mistake (see [`episode_learning::record_mistake`]).
    pub async fn record_mistake(
        &self,
        scope: Scope,
        task_id: String,
        report: MistakeReport,
        episode_id: Option<String>,
        request: Option<RequestKey>,
        now: Micros,
    ) -> Result<(MistakeCard, bool)> {
        episode_learning::record_mistake(
            &*self.store,
            scope,
            task_id,
            report,
            episode_id,
            request,
            now,
        )
        .await
    }

    /// `namespace`'s mistake cards, most seen first, at most `limit`.
    pub async fn list_mistake_cards(
        &self,
        namespace: &str,
        task_id: Option<&str>,
        mistake_type: Option<&str>,
        limit: usize,
        after: Option<(i64, i64)>,
    ) -> Result<Vec<MistakeCard>> {
        self.store
            .list_mistake_cards(namespace, task_id, mistake_type, limit, after)
            .await
    }

    /// Consolidates `namespace` (see [`consolidation::consolidate`]).
    pub async fn consolidate(
        &self,
        namespace: &str,
        mode: ConsolidateMode,
        force: bool,
    ) -> Result<Option<Consolidated>> {
        consolidation::consolidate(&*self.store, self.llm.as_deref(), namespace, mode, force).await
    }

    /// Records an outcome and learns from it. An outcome without a task
    /// type gets the one its task suggests; its strategy is compared with
    /// others by meaning too when an embedder is configured.
    pub async fn record_outcome(
        &self,
        mut new: NewOutcome,
        request: Option<RequestKey>,
    ) -> Result<Recorded> {
        if new.task_type.is_empty() {
            new.task_type = infer_task_type(&new.task).to_owned();
            new.task_type_inferred = true;
        }
        let embedder = self.embedder().map(|e| &**e);
        let vectors = outcome_learning::strategy_vectors(&*self.store, embedder, &new).await?;
        outcome_learning::record_outcome(&*self.store, new, request, vectors, now_micros()).await
    }

    /// Outcomes visible from `scope`, newest first, at most `limit`.
    pub async fn list_outcomes(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<i64>,
    ) -> Result<Vec<TaskOutcome>> {
        self.store.list_outcomes(scope, filter, limit, after).await
    }

    /// Heuristics visible from `scope`, most confident first, at most
    /// `limit`.
    pub async fn list_heuristics(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<(f64, i64)>,
    ) -> Result<Vec<Heuristic>> {
        self.store
            .list_heuristics(scope, filter, limit, after)
            .await
    }

    /// Anti-patterns visible from `scope`, most seen first, at most `limit`.
    pub async fn list_anti_patterns(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<(i64, i64)>,
    ) -> Result<Vec<AntiPattern>> {
        self.store
            .list_anti_patterns(scope, filter, limit, after)
            .await
    }

    /// Replaces an agent's learning scope (see
    /// [`outcome_learning::set_agent_scope`]).
    pub async fn set_agent_scope(
        &self,
        wanted: AgentScope,
        etag: Option<String>,
        now: Micros,
    ) -> Result<AgentScope> {
        outcome_learning::set_agent_scope(&*self.store, wanted, etag, now).await
    }

    /// An agent's learning scope: the one set, or the defaults.
    pub async fn get_agent_scope(&self, namespace: &str, agent_id: &str) -> Result<AgentScope> {
        let set = self.store.get_agent_scope(namespace, agent_id).await?;
        Ok(agent_scope_or_default(set, namespace, agent_id))
    }

    /// Forgets what `request` names (see [`forgetting::forget`]).
    pub async fn forget(&self, request: ForgetRequest, now: Micros) -> Result<Forgotten> {
        forgetting::forget(&*self.store, request, now).await
    }

    /// What is stored and learned in `scope`.
    pub async fn stats(&self, scope: &Scope, now: Micros) -> Result<Stats> {
        self.store.stats(scope, STATS_TOP_CARDS, now).await
    }

    /// How many memories of `namespace` wait for the backfill to name
    /// their entities, or for the model (when one is configured) to read
    /// them: the more of the two.
    pub async fn pending_extractions(&self, namespace: &str) -> Result<i64> {
        let rules = crate::engine::entities::pending(&*self.store, namespace).await?;
        let model = match &self.llm {
            Some(_) => crate::engine::entities::llm::pending(&*self.store, namespace).await?,
            None => 0,
        };
        Ok(rules.max(model))
    }

    /// How many of `namespace`'s memories wait for the embedder's vectors
    /// (none without an embedder).
    pub async fn pending_embeddings(&self, namespace: &str, now: Micros) -> Result<i64> {
        match self.embedder() {
            Some(embedder) => {
                self.store
                    .pending_embeddings(namespace, &embedder.info().id, now)
                    .await
            }
            None => Ok(0),
        }
    }
}
