//! The storage primitives of a unit of work on SQLite: a connection inside
//! the writer's transaction. One writer commits everything, so there is
//! nothing to lock.

use crate::store::sql;
use async_trait::async_trait;
use sqlx::SqliteConnection;

use super::{episodes, learning, memories, outcomes, requests};
use crate::domain::episode::{Episode, MistakeCard, NewEpisode, RuleOrigin, Step, TaskRule};
use crate::domain::outcome::{AgentScope, AntiPattern, Heuristic, NewOutcome, Owner, TaskOutcome};
use crate::domain::{Actor, Memory, Micros, RequestKey, Scope};
use crate::error::Result;
use crate::store::tx::{
    CardKey, Identity, LearningProgress, Lesson, MemoryInsert, NewAntiPattern, NewHeuristic,
    NewMistakeCard, RequestRecord, Stale, Tx,
};

/// A unit of work's transaction: the writer's connection, and the memories
/// the unit wrote, handed to the change feed's follower once committed (so
/// that it need not read them back).
pub(super) struct SqliteTx<'c> {
    pub(super) conn: &'c mut SqliteConnection,
    pub(super) written: Vec<Memory>,
}

#[async_trait]
impl Tx for SqliteTx<'_> {
    async fn lock(&mut self, _key: &str) -> Result<()> {
        Ok(())
    }

    async fn request_record(&mut self, namespace: &str, id: &str) -> Result<Option<RequestRecord>> {
        requests::record(self.conn, namespace, id).await
    }

    async fn record_request(
        &mut self,
        namespace: &str,
        request: &RequestKey,
        answer: &str,
        now: Micros,
    ) -> Result<()> {
        requests::remember(self.conn, namespace, request, answer, now).await
    }

    async fn agent_scope(&mut self, namespace: &str, agent_id: &str) -> Result<Option<AgentScope>> {
        outcomes::agent_scope(self.conn, namespace, agent_id).await
    }

    async fn save_agent_scope(&mut self, scope: &AgentScope) -> Result<()> {
        outcomes::save_agent_scope(self.conn, scope).await
    }

    async fn insert_outcome(&mut self, new: &NewOutcome, now: Micros) -> Result<TaskOutcome> {
        outcomes::insert_outcome(self.conn, new, now).await
    }

    async fn recent_outcomes(
        &mut self,
        owner: &Owner,
        task_type: &str,
        limit: i64,
    ) -> Result<Vec<TaskOutcome>> {
        outcomes::recent_outcomes(self.conn, owner, task_type, limit).await
    }

    async fn heuristics_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<(Heuristic, String)>> {
        outcomes::heuristics_of(self.conn, owner, task_type).await
    }

    async fn insert_heuristic(&mut self, new: &NewHeuristic, now: Micros) -> Result<Heuristic> {
        outcomes::insert_heuristic(self.conn, new, now).await
    }

    async fn update_heuristic(&mut self, heuristic: &Heuristic) -> Result<Heuristic> {
        outcomes::update_heuristic(self.conn, heuristic).await
    }

    async fn anti_patterns_of(
        &mut self,
        owner: &Owner,
        task_type: &str,
    ) -> Result<Vec<AntiPattern>> {
        outcomes::anti_patterns_of(self.conn, owner, task_type).await
    }

    async fn insert_anti_pattern(
        &mut self,
        new: &NewAntiPattern,
        now: Micros,
    ) -> Result<AntiPattern> {
        outcomes::insert_anti_pattern(self.conn, new, now).await
    }

    async fn update_anti_pattern(&mut self, anti_pattern: &AntiPattern) -> Result<AntiPattern> {
        outcomes::update_anti_pattern(self.conn, anti_pattern).await
    }

    async fn episode(&mut self, scope: &Scope, id: &str) -> Result<Option<Episode>> {
        episodes::get(self.conn, scope, id).await
    }

    async fn finish_episode(&mut self, episode: &Episode) -> Result<Episode> {
        learning::finish_episode(self.conn, episode).await
    }

    async fn insert_rule(
        &mut self,
        namespace: &str,
        task_id: &str,
        text: &str,
        origin: RuleOrigin,
        now: Micros,
    ) -> Result<Option<TaskRule>> {
        learning::insert_rule(self.conn, namespace, task_id, text, origin, now).await
    }

    async fn trim_rules(&mut self, namespace: &str, task_id: &str, keep: usize) -> Result<()> {
        learning::trim_rules(self.conn, namespace, task_id, keep).await
    }

    async fn tick(&mut self, namespace: &str) -> Result<i64> {
        learning::tick(self.conn, namespace).await
    }

    async fn count_lesson(
        &mut self,
        namespace: &str,
        kind: Lesson,
        text: &str,
        last_seen: i64,
        now: Micros,
    ) -> Result<()> {
        learning::count_lesson(self.conn, namespace, kind, text, last_seen, now).await
    }

    async fn mistake_card(
        &mut self,
        namespace: &str,
        key: &CardKey,
    ) -> Result<Option<MistakeCard>> {
        learning::mistake_card(self.conn, namespace, key).await
    }

    async fn insert_mistake_card(
        &mut self,
        new: &NewMistakeCard,
        now: Micros,
    ) -> Result<MistakeCard> {
        learning::insert_mistake_card(self.conn, new, now).await
    }

    async fn update_mistake_card(&mut self, card: &MistakeCard) -> Result<MistakeCard> {
        learning::update_mistake_card(self.conn, card).await
    }

    async fn trim_mistake_cards(&mut self, namespace: &str, keep: usize) -> Result<()> {
        learning::trim_mistake_cards(self.conn, namespace, keep).await
    }

    async fn mistake_card_exists(&mut self, id: &str) -> Result<bool> {
        learning::mistake_card_exists(self.conn, id).await
    }

    async fn count_completion(&mut self, namespace: &str) -> Result<LearningProgress> {
        learning::count_completion(self.conn, namespace).await
    }

    async fn learning_progress(&mut self, namespace: &str) -> Result<LearningProgress> {
        learning::learning_progress(self.conn, namespace).await
    }

    async fn mark_consolidated(&mut self, namespace: &str) -> Result<()> {
        learning::mark_consolidated(self.conn, namespace).await
    }

    async fn completed_episodes(
        &mut self,
        namespace: &str,
        min_score: f64,
        limit: usize,
    ) -> Result<Vec<Episode>> {
        learning::completed_episodes(self.conn, namespace, Some(min_score), limit).await
    }

    async fn insert_episode(&mut self, new: &NewEpisode, now: Micros) -> Result<Episode> {
        episodes::insert(self.conn, new, now).await
    }

    async fn stored_steps(&mut self, episode_seq: i64, numbers: &[i32]) -> Result<Vec<Step>> {
        episodes::stored_steps(self.conn, episode_seq, numbers).await
    }

    async fn insert_steps(&mut self, episode_seq: i64, steps: &[Step]) -> Result<()> {
        episodes::insert_steps(self.conn, episode_seq, steps).await
    }

    async fn save_step_progress(&mut self, episode: &Episode) -> Result<()> {
        episodes::save_step_progress(self.conn, episode).await
    }

    async fn identical_memories(
        &mut self,
        identities: &[Identity],
    ) -> Result<Vec<(Memory, String)>> {
        memories::identical(self.conn, identities).await
    }

    async fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        let stored = memories::insert(self.conn, inserts, now).await?;
        self.written.extend(stored.iter().cloned());
        Ok(stored)
    }

    async fn reinforce_memory(&mut self, memory: &Memory, actor: &Actor) -> Result<()> {
        sql::memories::reinforce(self.conn, memory, actor).await?;
        self.written.push(memory.clone());
        Ok(())
    }

    async fn update_memory(
        &mut self,
        memory: &Memory,
        content_hash: &str,
        actor: &Actor,
    ) -> Result<()> {
        sql::memories::rewrite(self.conn, memory, content_hash, actor).await?;
        self.written.push(memory.clone());
        Ok(())
    }

    async fn remove_memories(&mut self, seqs: &[i64]) -> Result<()> {
        sql::memories::remove(self.conn, seqs).await
    }

    async fn stamp_actor(&mut self, seq: i64, actor: &Actor) -> Result<()> {
        sql::memories::stamp_actor(self.conn, seq, actor).await
    }

    async fn visible_memory(
        &mut self,
        scope: &Scope,
        id: &str,
        now: Micros,
    ) -> Result<Option<Memory>> {
        sql::memories::get(self.conn, scope, id, now, false).await
    }

    async fn unexpired_memory(&mut self, id: &str, now: Micros) -> Result<Option<Memory>> {
        sql::memories::get_unexpired(self.conn, id, now).await
    }

    async fn count_stale(&mut self, stale: &Stale) -> Result<i64> {
        outcomes::stale(self.conn, stale, None).await
    }

    async fn delete_stale(&mut self, stale: &Stale, limit: usize) -> Result<i64> {
        outcomes::stale(self.conn, stale, Some(limit)).await
    }
}
