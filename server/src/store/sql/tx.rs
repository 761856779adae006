//! The storage primitives of a unit of work ([`Tx`]), for both databases:
//! a connection inside the unit's transaction, with the dialect's own ways
//! of serialising decisions ([`Dialect::lock`]) and of creating memories
//! ([`Dialect::insert_memories`], [`Dialect::identical_memories`]).
//!
//! On SQLite the connection is the one writer's, inside its group commit:
//! nothing else writes, so locks cost nothing. On PostgreSQL it is a READ
//! COMMITTED transaction shared with other replicas' writers; why that
//! suffices:
//! * decisions about a key (an outcome's strategy groups, a namespace's
//!   rules, cards and consolidation, an episode's steps) take
//!   [`Tx::lock`], a transaction-scoped advisory lock: the second unit
//!   waits for the first to commit, and its statements, which start after
//!   that, read what the first wrote;
//! * rows read to be rewritten (a memory reinforced, updated or deleted)
//!   are read `FOR UPDATE`, which waits for a writer of the row and then
//!   reads the row as it committed it;
//! * counters are single upserts (`tick`, `count_completion`), exact under
//!   their row locks;
//! * what two replicas may insert at once (the same memory identity, the
//!   same request id) has a unique key: the second insert fails, and the
//!   unit of work runs again and finds the first's.
//!
//! SERIALIZABLE would give the same guarantees without the locks, at the
//! price of retrying every unit of work whose reads overlap another's
//! writes — under write load most of them — so the explicit locks cost
//! less.

use async_trait::async_trait;

use super::{
    Columns, Dialect, Sql, entities, episodes, learning, links, memories, outcomes, provenance,
    relations, requests,
};
use crate::domain::entity::{Entity, EntityQuery, Mention, StatedRelation};
use crate::domain::episode::{Episode, MistakeCard, NewEpisode, RuleOrigin, Step, TaskRule};
use crate::domain::outcome::{AgentScope, AntiPattern, Heuristic, NewOutcome, Owner, TaskOutcome};
use crate::domain::provenance::Provenance;
use crate::domain::{Actor, LinkKind, Memory, MemoryLink, Micros, RequestKey, Scope, Validity};
use crate::error::{Error, Result};
use crate::store::tx::{
    CardKey, Identity, LearningProgress, Lesson, MemoryInsert, NewAntiPattern, NewHeuristic,
    NewMistakeCard, RequestRecord, Stale, Tx,
};

/// A unit of work's transaction.
pub struct SqlTx<'c, D: Dialect> {
    conn: &'c mut D,
    /// Whether the unit may write (a read-only unit takes no locks).
    writing: bool,
    /// Whether the unit changed a memory, so that its commit wrote the
    /// change feed.
    changed: bool,
    /// The memories the unit created or changed, as it left them: SQLite's
    /// writer hands them to the change feed's follower once committed, so
    /// that it need not read them back.
    written: Vec<Memory>,
}

impl<'c, D: Dialect> SqlTx<'c, D> {
    /// A unit of work that may write.
    pub fn writing(conn: &'c mut D) -> SqlTx<'c, D> {
        SqlTx {
            conn,
            writing: true,
            changed: false,
            written: Vec::new(),
        }
    }

    /// A unit of work that only reads, on a read-only snapshot.
    pub fn reading(conn: &'c mut D) -> SqlTx<'c, D> {
        SqlTx {
            writing: false,
            ..SqlTx::writing(conn)
        }
    }

    /// Whether the unit changed a memory.
    pub fn changed_memories(&self) -> bool {
        self.changed
    }

    /// The memories the unit created or changed.
    pub fn into_written(self) -> Vec<Memory> {
        self.written
    }

    /// Fails a write primitive called in a read-only unit, before the
    /// database does (with a less telling error).
    fn may_write(&self) -> Result<()> {
        if self.writing {
            Ok(())
        } else {
            Err(Error::Internal(
                "a read-only unit of work tried to write".into(),
            ))
        }
    }
}

#[async_trait]
impl<D: Dialect> Tx for SqlTx<'_, D> {
    async fn lock(&mut self, key: &str) -> Result<()> {
        if !self.writing {
            // A snapshot decides nothing; there is nothing to serialise.
            return Ok(());
        }
        self.conn.lock(key).await
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
        self.may_write()?;
        requests::remember(self.conn, namespace, request, answer, now).await
    }

    async fn agent_scope(&mut self, namespace: &str, agent_id: &str) -> Result<Option<AgentScope>> {
        outcomes::agent_scope(self.conn, namespace, agent_id).await
    }

    async fn save_agent_scope(&mut self, scope: &AgentScope) -> Result<()> {
        self.may_write()?;
        outcomes::save_agent_scope(self.conn, scope).await
    }

    async fn insert_outcome(&mut self, new: &NewOutcome, now: Micros) -> Result<TaskOutcome> {
        self.may_write()?;
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
        self.may_write()?;
        outcomes::insert_heuristic(self.conn, new, now).await
    }

    async fn update_heuristic(&mut self, heuristic: &Heuristic) -> Result<Heuristic> {
        self.may_write()?;
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
        self.may_write()?;
        outcomes::insert_anti_pattern(self.conn, new, now).await
    }

    async fn update_anti_pattern(&mut self, anti_pattern: &AntiPattern) -> Result<AntiPattern> {
        self.may_write()?;
        outcomes::update_anti_pattern(self.conn, anti_pattern).await
    }

    async fn episode(&mut self, scope: &Scope, id: &str) -> Result<Option<Episode>> {
        episodes::get(self.conn, scope, id).await
    }

    async fn finish_episode(&mut self, episode: &Episode) -> Result<Episode> {
        self.may_write()?;
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
        self.may_write()?;
        learning::insert_rule(self.conn, namespace, task_id, text, origin, now).await
    }

    async fn trim_rules(&mut self, namespace: &str, task_id: &str, keep: usize) -> Result<()> {
        self.may_write()?;
        learning::trim_rules(self.conn, namespace, task_id, keep).await
    }

    async fn tick(&mut self, namespace: &str) -> Result<i64> {
        self.may_write()?;
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
        self.may_write()?;
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
        self.may_write()?;
        learning::insert_mistake_card(self.conn, new, now).await
    }

    async fn update_mistake_card(&mut self, card: &MistakeCard) -> Result<MistakeCard> {
        self.may_write()?;
        learning::update_mistake_card(self.conn, card).await
    }

    async fn trim_mistake_cards(&mut self, namespace: &str, keep: usize) -> Result<()> {
        self.may_write()?;
        learning::trim_mistake_cards(self.conn, namespace, keep).await
    }

    async fn mistake_card_exists(&mut self, id: &str) -> Result<bool> {
        learning::mistake_card_exists(self.conn, id).await
    }

    async fn count_completion(&mut self, namespace: &str) -> Result<LearningProgress> {
        self.may_write()?;
        learning::count_completion(self.conn, namespace).await
    }

    async fn learning_progress(&mut self, namespace: &str) -> Result<LearningProgress> {
        learning::learning_progress(self.conn, namespace).await
    }

    async fn mark_consolidated(&mut self, namespace: &str) -> Result<()> {
        self.may_write()?;
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
        self.may_write()?;
        episodes::insert(self.conn, new, now).await
    }

    async fn stored_steps(&mut self, episode_seq: i64, numbers: &[i32]) -> Result<Vec<Step>> {
        episodes::stored_steps(self.conn, episode_seq, numbers).await
    }

    async fn insert_steps(&mut self, episode_seq: i64, steps: &[Step]) -> Result<()> {
        self.may_write()?;
        episodes::insert_steps(self.conn, episode_seq, steps).await
    }

    async fn save_step_progress(&mut self, episode: &Episode) -> Result<()> {
        self.may_write()?;
        episodes::save_step_progress(self.conn, episode).await
    }

    async fn identical_memories(
        &mut self,
        identities: &[Identity],
    ) -> Result<Vec<(Memory, String)>> {
        self.conn.identical_memories(identities, self.writing).await
    }

    async fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        self.may_write()?;
        self.changed |= !inserts.is_empty();
        let stored = self.conn.insert_memories(inserts, now).await?;
        provenance::insert(self.conn, inserts, &stored).await?;
        self.written.extend(stored.iter().cloned());
        Ok(stored)
    }

    async fn reinforce_memory(&mut self, memory: &Memory, actor: &Actor) -> Result<()> {
        self.may_write()?;
        self.changed = true;
        memories::reinforce(self.conn, memory, actor).await?;
        self.written.push(memory.clone());
        Ok(())
    }

    async fn update_memory(
        &mut self,
        memory: &Memory,
        content_hash: &str,
        actor: &Actor,
    ) -> Result<()> {
        self.may_write()?;
        self.changed = true;
        memories::rewrite(self.conn, memory, content_hash, actor).await?;
        self.written.push(memory.clone());
        Ok(())
    }

    async fn remove_memories(&mut self, seqs: &[i64]) -> Result<()> {
        self.may_write()?;
        self.changed |= !seqs.is_empty();
        memories::remove(self.conn, seqs).await
    }

    async fn stamp_actor(&mut self, seq: i64, actor: &Actor) -> Result<()> {
        self.may_write()?;
        memories::stamp_actor(self.conn, seq, actor).await
    }

    async fn visible_memory(
        &mut self,
        scope: &Scope,
        id: &str,
        now: Micros,
    ) -> Result<Option<Memory>> {
        // The engine reads it to update or delete it.
        memories::get(self.conn, scope, id, now, self.writing).await
    }

    async fn unexpired_memory(&mut self, id: &str, now: Micros) -> Result<Option<Memory>> {
        memories::get_unexpired(self.conn, id, now).await
    }

    async fn count_stale(&mut self, stale: &Stale) -> Result<i64> {
        outcomes::stale(self.conn, stale, None).await
    }

    async fn delete_stale(&mut self, stale: &Stale, limit: usize) -> Result<i64> {
        self.may_write()?;
        let deleted = outcomes::stale(self.conn, stale, Some(limit)).await?;
        if matches!(stale, Stale::ExpiredMemories { .. }) {
            self.changed |= deleted > 0;
        }
        Ok(deleted)
    }

    async fn link_entities(
        &mut self,
        namespace: &str,
        links: &[(i64, Vec<Mention>)],
        now: Micros,
    ) -> Result<()> {
        self.may_write()?;
        entities::link(self.conn, namespace, links, now).await
    }

    async fn unlink_entities(&mut self, seq: i64) -> Result<()> {
        self.may_write()?;
        entities::unlink(self.conn, seq).await
    }

    async fn find_entity(&mut self, namespace: &str, entity: &str) -> Result<Option<String>> {
        entities::find(self.conn, namespace, entity).await
    }

    async fn entities_named(
        &mut self,
        namespace: &str,
        keys: &[&str],
    ) -> Result<Vec<(String, String)>> {
        entities::named_loosely(self.conn, namespace, keys).await
    }

    async fn entity_name(&mut self, id: &str) -> Result<Option<String>> {
        entities::name(self.conn, id).await
    }

    async fn entity(&mut self, scope: &Scope, id: &str, now: Micros) -> Result<Option<Entity>> {
        entities::get(self.conn, scope, id, now).await
    }

    async fn list_entities(&mut self, query: &EntityQuery, now: Micros) -> Result<Vec<Entity>> {
        entities::list(self.conn, query, now).await
    }

    async fn entity_memories(
        &mut self,
        scope: &Scope,
        id: &str,
        validity: Validity,
        limit: usize,
        now: Micros,
    ) -> Result<Vec<Memory>> {
        entities::memories(self.conn, scope, id, validity, limit, now).await
    }

    async fn mentioning(&mut self, ids: &[String]) -> Result<Vec<i64>> {
        entities::mentioning(self.conn, ids).await
    }

    async fn mentions_among(&mut self, ids: &[String], seqs: &[i64]) -> Result<Vec<(i64, i64)>> {
        entities::mentions_among(self.conn, ids, seqs).await
    }

    async fn merge_entities(&mut self, into: &str, from: &str) -> Result<()> {
        self.may_write()?;
        entities::merge(self.conn, into, from).await
    }

    async fn link_memories(
        &mut self,
        namespace: &str,
        pair: (&str, &str),
        kind: LinkKind,
        reason: &str,
        now: Micros,
    ) -> Result<()> {
        self.may_write()?;
        links::link(self.conn, namespace, pair, kind, reason, now).await
    }

    async fn memory_links(&mut self, id: &str, limit: usize) -> Result<Vec<MemoryLink>> {
        links::of(self.conn, id, limit).await
    }

    async fn provenance(&mut self, id: &str) -> Result<Option<Provenance>> {
        provenance::of(self.conn, id).await
    }

    async fn set_relations(&mut self, seq: i64, relations: &[StatedRelation]) -> Result<()> {
        self.may_write()?;
        self.changed = true;
        relations::set(self.conn, seq, relations).await
    }

    async fn relations(&mut self, seqs: &[i64]) -> Result<Vec<(i64, StatedRelation)>> {
        relations::of(self.conn, seqs).await
    }

    async fn meta(&mut self, key: &str) -> Result<Option<String>> {
        let mut sql = Sql::new("SELECT value FROM engram_meta WHERE key = ");
        sql.bind(key.to_owned());
        let row = self.conn.fetch_optional(sql).await?;
        row.map(|row| Columns::<D>::of(&row).get("value"))
            .transpose()
    }

    async fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.may_write()?;
        let mut sql = Sql::new("INSERT INTO engram_meta (key, value) VALUES (");
        sql.values(|v| {
            v.bind(key.to_owned()).bind(value.to_owned());
        })
        .push(") ON CONFLICT (key) DO UPDATE SET value = excluded.value");
        self.conn.execute(sql).await?;
        Ok(())
    }

    async fn count_memories_between(
        &mut self,
        namespace: &str,
        after: i64,
        through: i64,
    ) -> Result<i64> {
        let mut sql = Sql::new("SELECT count(*) AS n FROM memories WHERE namespace = ");
        sql.bind(namespace.to_owned())
            .push(" AND seq > ")
            .bind(after)
            .push(" AND seq <= ")
            .bind(through);
        let row = self.conn.fetch_optional(sql).await?;
        row.map_or(Ok(0), |row| Columns::<D>::of(&row).get("n"))
    }
}
