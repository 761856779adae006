//! A unit of work: the storage primitives the engine drives inside one
//! transaction. The engine reads what it needs, decides, and writes exactly
//! what it decided; a backend only stores and finds. A backend may run a
//! unit of work more than once (PostgreSQL retries one that lost a
//! serialization conflict), so a unit of work keeps no state between runs.

use std::any::Any;

use async_trait::async_trait;
use futures_util::future::BoxFuture;

use crate::domain::outcome::{AgentScope, AntiPattern, Heuristic, NewOutcome, Owner, TaskOutcome};
use crate::domain::{Micros, RequestKey};
use crate::error::Result;

/// What a unit of work returns, type-erased so [`crate::store::Store`]
/// stays object safe (`engine::unit::transact` restores the type).
pub type Answer = Box<dyn Any + Send>;

/// A unit of work as a backend runs it: called with the open transaction,
/// possibly more than once.
pub type Work = Box<dyn for<'t> FnMut(&'t mut dyn Tx) -> BoxFuture<'t, Result<Answer>> + Send>;

/// An idempotency key's record: what the first write with a request id was
/// bound to, and what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    pub fingerprint: String,
    /// The first answer, as JSON.
    pub answer: String,
}

/// A heuristic to store for the first time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewHeuristic {
    pub owner: Owner,
    pub task_type: String,
    pub strategy: String,
    /// The strategy as first worded: what later outcomes are compared with.
    pub match_key: String,
    pub confidence: f64,
    pub occurrence_count: i64,
    pub success_count: i64,
}

/// An anti-pattern to store for the first time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAntiPattern {
    pub owner: Owner,
    pub task_type: String,
    pub strategy: String,
    pub error: String,
    pub occurrence_count: i64,
    pub better_alternative: String,
    pub better_alternative_heuristic_id: String,
}

/// The storage primitives of one transaction. Every change is made in the
/// transaction and committed, or rolled back, with the whole unit of work.
#[async_trait]
pub trait Tx: Send {
    /// Serialises the units of work that decide about `key` (e.g. an
    /// outcome's strategy groups) until this transaction ends: where
    /// several writers run at once (PostgreSQL replicas), the second waits
    /// for the first to commit and then reads what it wrote. A backend with
    /// a single writer has nothing to do.
    async fn lock(&mut self, key: &str) -> Result<()>;

    /// The record of request id `id` in `namespace`, if a write with it ran.
    async fn request_record(&mut self, namespace: &str, id: &str) -> Result<Option<RequestRecord>>;

    /// Records what the write with `request`'s id answered.
    async fn record_request(
        &mut self,
        namespace: &str,
        request: &RequestKey,
        answer: &str,
        now: Micros,
    ) -> Result<()>;

    /// The agent's learning scope, or the defaults when none was set.
    async fn agent_scope(&mut self, namespace: &str, agent_id: &str) -> Result<AgentScope>;

    /// Stores an outcome.
    async fn insert_outcome(&mut self, new: &NewOutcome, now: Micros) -> Result<TaskOutcome>;

    /// The owner's latest `limit` outcomes of `task_type`, newest first.
    async fn recent_outcomes(
        &mut self,
        owner: &Owner,
        task_type: &str,
        limit: i64,
    ) -> Result<Vec<TaskOutcome>>;

    /// The owner's heuristics of `task_type`, oldest first, each with its
    /// match key.
    async fn heuristics_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<(Heuristic, String)>>;

    async fn insert_heuristic(&mut self, new: &NewHeuristic, now: Micros) -> Result<Heuristic>;

    /// Writes a heuristic's changed fields (strategy, counts, confidence,
    /// times, version) as given.
    async fn update_heuristic(&mut self, heuristic: &Heuristic) -> Result<Heuristic>;

    /// The owner's anti-patterns of `task_type`, oldest first.
    async fn anti_patterns_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<AntiPattern>>;

    async fn insert_anti_pattern(
        &mut self,
        new: &NewAntiPattern,
        now: Micros,
    ) -> Result<AntiPattern>;

    /// Writes an anti-pattern's changed fields (strategy, error, count,
    /// better alternative, times, version) as given.
    async fn update_anti_pattern(&mut self, anti_pattern: &AntiPattern) -> Result<AntiPattern>;
}
