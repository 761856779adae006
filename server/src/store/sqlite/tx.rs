//! The storage primitives of a unit of work on SQLite: a connection inside
//! the writer's transaction. One writer commits everything, so there is
//! nothing to lock.

use async_trait::async_trait;
use sqlx::SqliteConnection;

use super::{outcomes, requests};
use crate::domain::outcome::{AgentScope, AntiPattern, Heuristic, NewOutcome, Owner, TaskOutcome};
use crate::domain::{Micros, RequestKey};
use crate::error::Result;
use crate::store::tx::{NewAntiPattern, NewHeuristic, RequestRecord, Tx};

#[async_trait]
impl Tx for SqliteConnection {
    async fn lock(&mut self, _key: &str) -> Result<()> {
        Ok(())
    }

    async fn request_record(&mut self, namespace: &str, id: &str) -> Result<Option<RequestRecord>> {
        requests::record(self, namespace, id).await
    }

    async fn record_request(
        &mut self,
        namespace: &str,
        request: &RequestKey,
        answer: &str,
        now: Micros,
    ) -> Result<()> {
        requests::remember(self, namespace, request, answer, now).await
    }

    async fn agent_scope(&mut self, namespace: &str, agent_id: &str) -> Result<AgentScope> {
        outcomes::agent_scope(self, namespace, agent_id).await
    }

    async fn insert_outcome(&mut self, new: &NewOutcome, now: Micros) -> Result<TaskOutcome> {
        outcomes::insert_outcome(self, new, now).await
    }

    async fn recent_outcomes(
        &mut self,
        owner: &Owner,
        task_type: &str,
        limit: i64,
    ) -> Result<Vec<TaskOutcome>> {
        outcomes::recent_outcomes(self, owner, task_type, limit).await
    }

    async fn heuristics_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<(Heuristic, String)>> {
        outcomes::heuristics_of(self, owner, task_type).await
    }

    async fn insert_heuristic(&mut self, new: &NewHeuristic, now: Micros) -> Result<Heuristic> {
        outcomes::insert_heuristic(self, new, now).await
    }

    async fn update_heuristic(&mut self, heuristic: &Heuristic) -> Result<Heuristic> {
        outcomes::update_heuristic(self, heuristic).await
    }

    async fn anti_patterns_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<AntiPattern>> {
        outcomes::anti_patterns_of(self, owner, task_type).await
    }

    async fn insert_anti_pattern(
        &mut self,
        new: &NewAntiPattern,
        now: Micros,
    ) -> Result<AntiPattern> {
        outcomes::insert_anti_pattern(self, new, now).await
    }

    async fn update_anti_pattern(&mut self, anti_pattern: &AntiPattern) -> Result<AntiPattern> {
        outcomes::update_anti_pattern(self, anti_pattern).await
    }
}
