//! [`Store`], written once for both databases over a [`Backend`]: every
//! read takes a connection of the backend's pool and runs the shared SQL;
//! every write goes the backend's way (SQLite's group-commit writer,
//! PostgreSQL's retried transaction).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use tokio::sync::watch;

use super::feed::Written;
use super::{Columns, Dialect, Sql, episodes, learning, memories, outcomes, requests, usage};
use super::{tx::SqlTx, vectors};
use crate::disk::DiskSpace;
use crate::domain::episode::{
    Episode, EpisodeQuery, MistakeCard, Stats, StepWindow, TaskKnowledge, TaskRule,
};
use crate::domain::outcome::{
    AgentScope, AntiPattern, Heuristic, LearningFilter, Owner, TaskOutcome,
};
use crate::domain::{
    Embedding, FeedBounds, FeedEvent, ListQuery, Memory, MemoryChange, MemoryFilter, Micros,
    Neighbours, Revision, Scope, Unembedded,
};
use crate::error::Result;
use crate::store::access::Gatherer;
use crate::store::tx::{Answer, DiskUse, LearningProgress, Work};
use crate::store::{KnowledgeQuery, NamespaceSizes, Store};

/// A future of a write's statements.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The statements of a small write ([`Backend::write`]): run on the
/// connection given, possibly more than once (a retried transaction).
pub type Statements<C, T> = Box<dyn for<'c> FnMut(&'c mut C) -> BoxFuture<'c, Result<T>> + Send>;

/// What a small write does, for the backend to run it right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    /// It only deletes, and fails, if at all, with a database error: it
    /// runs while the disk is full, and on SQLite without a savepoint of
    /// its own.
    pub frees: bool,
    /// It appends to the change feed: PostgreSQL moves this replica's head
    /// past it before answering (read your writes).
    pub feeds: bool,
}

/// A database: what [`Store`] needs besides the shared SQL.
#[async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Its connections, which speak the shared SQL.
    type Conn: Dialect;

    /// A connection of the pool, for reads.
    async fn connection(
        &self,
    ) -> Result<PoolConnection<<Self::Conn as sqlx::Connection>::Database>>;

    /// Runs a unit of work in one transaction and commits it
    /// ([`Store::transact`]).
    async fn run_unit(&self, work: Work, disk: DiskUse) -> Result<Answer>;

    /// Runs a write of a statement or a few that needs no decision of the
    /// engine, committed when this returns.
    async fn write<T: Send + 'static>(
        &self,
        kind: Write,
        work: Statements<Self::Conn, T>,
    ) -> Result<T>;

    /// The change feed's head ([`Store::feed_head`]).
    fn head(&self) -> watch::Receiver<i64>;

    /// The memories this server has just written, when the backend keeps
    /// them for the change feed's follower.
    fn written(&self) -> Option<&Written> {
        None
    }

    /// Where searches' accesses are gathered.
    fn accesses(&self) -> &Gatherer;

    /// Whether the disk this server writes to is full.
    fn disk(&self) -> Arc<DiskSpace>;

    /// Whether the database answers ([`Store::database_reachable`]).
    fn reachable(&self) -> watch::Receiver<bool> {
        watch::channel(true).1
    }

    /// Stops what the backend runs; called once the accesses are written.
    async fn shut_down(&self);
}

type Conn<B> = PoolConnection<<<B as Backend>::Conn as sqlx::Connection>::Database>;

/// A read-only transaction on one snapshot of `conn`, for reads of several
/// statements that must agree with each other; rolled back when dropped.
async fn snapshot<B: Backend>(
    conn: &mut Conn<B>,
) -> Result<sqlx::Transaction<'_, <B::Conn as sqlx::Connection>::Database>> {
    sqlx::Connection::begin_with(&mut **conn, <B::Conn as Dialect>::BEGIN_SNAPSHOT)
        .await
        .map_err(<B::Conn as Dialect>::db_error)
}

#[async_trait]
impl<B: Backend> Store for B {
    async fn transact(&self, work: Work, disk: DiskUse) -> Result<Answer> {
        self.run_unit(work, disk).await
    }

    async fn read(&self, mut work: Work) -> Result<Answer> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot::<B>(&mut conn).await?;
        let answer = work(&mut SqlTx::reading(&mut *snapshot)).await;
        // Nothing to keep: the snapshot only read.
        let _ = snapshot.rollback().await;
        answer
    }

    async fn get_memory(&self, scope: &Scope, id: &str, now: Micros) -> Result<Option<Memory>> {
        let mut conn = self.connection().await?;
        memories::get(&mut *conn, scope, id, now, false).await
    }

    async fn list_memory_revisions(
        &self,
        namespace: &str,
        id: &str,
        page_size: usize,
        after_seq: Option<i64>,
    ) -> Result<Vec<Revision>> {
        let mut conn = self.connection().await?;
        memories::revisions(&mut *conn, namespace, id, page_size + 1, after_seq).await
    }

    async fn list_memories(&self, query: &ListQuery, now: Micros) -> Result<Vec<Memory>> {
        let mut conn = self.connection().await?;
        memories::list(&mut *conn, query, now).await
    }

    async fn conversation_neighbours(
        &self,
        namespace: &str,
        seqs: &[i64],
    ) -> Result<Vec<Neighbours>> {
        let mut conn = self.connection().await?;
        memories::conversation_neighbours(&mut *conn, namespace, seqs).await
    }

    async fn memories_by_seq(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        seqs: &[i64],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        let mut conn = self.connection().await?;
        memories::by_seq(&mut *conn, scope, filter, seqs, now).await
    }

    async fn memories_changed_after(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        after: i64,
        limit: usize,
        now: Micros,
    ) -> Result<Vec<Memory>> {
        let mut conn = self.connection().await?;
        memories::changed_after(&mut *conn, scope, filter, after, limit, now).await
    }

    fn record_access(&self, seqs: Vec<i64>, now: Micros) {
        self.accesses().record(seqs, now);
    }

    async fn get_episode(
        &self,
        scope: &Scope,
        id: &str,
        steps: StepWindow,
    ) -> Result<Option<Episode>> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot::<B>(&mut conn).await?;
        episodes::get_with_steps(&mut *snapshot, scope, id, steps).await
    }

    async fn list_episodes(&self, query: &EpisodeQuery) -> Result<Vec<Episode>> {
        let mut conn = self.connection().await?;
        episodes::list(&mut *conn, query).await
    }

    async fn list_task_rules(
        &self,
        namespace: &str,
        task_id: Option<&str>,
        page_size: usize,
        after_seq: Option<i64>,
    ) -> Result<Vec<TaskRule>> {
        let mut conn = self.connection().await?;
        learning::list_rules(&mut *conn, namespace, task_id, page_size, after_seq).await
    }

    async fn list_mistake_cards(
        &self,
        namespace: &str,
        task_id: Option<&str>,
        mistake_type: Option<&str>,
        limit: usize,
        after: Option<(i64, i64)>,
    ) -> Result<Vec<MistakeCard>> {
        let mut conn = self.connection().await?;
        learning::list_cards(&mut *conn, namespace, task_id, mistake_type, limit, after).await
    }

    async fn learning_progress(&self, namespace: &str) -> Result<LearningProgress> {
        let mut conn = self.connection().await?;
        learning::learning_progress(&mut *conn, namespace).await
    }

    async fn recent_completed_episodes(
        &self,
        namespace: &str,
        limit: usize,
    ) -> Result<Vec<Episode>> {
        let mut conn = self.connection().await?;
        learning::completed_episodes(&mut *conn, namespace, None, limit).await
    }

    async fn stats(&self, scope: &Scope, top_cards: usize, now: Micros) -> Result<Stats> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot::<B>(&mut conn).await?;
        learning::stats(&mut *snapshot, scope, top_cards, now).await
    }

    async fn task_knowledge(
        &self,
        scope: &Scope,
        task_id: &str,
        task_type: &str,
        query: &KnowledgeQuery,
    ) -> Result<TaskKnowledge> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot::<B>(&mut conn).await?;
        learning::knowledge(&mut *snapshot, scope, task_id, task_type, query).await
    }

    async fn compared_strategies(
        &self,
        owner: &Owner,
        task_type: &str,
        recent: i64,
    ) -> Result<Vec<String>> {
        let mut conn = self.connection().await?;
        outcomes::compared_strategies(&mut *conn, owner, task_type, recent).await
    }

    async fn get_agent_scope(&self, namespace: &str, agent_id: &str) -> Result<Option<AgentScope>> {
        let mut conn = self.connection().await?;
        outcomes::agent_scope(&mut *conn, namespace, agent_id).await
    }

    async fn list_outcomes(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<i64>,
    ) -> Result<Vec<TaskOutcome>> {
        let mut conn = self.connection().await?;
        outcomes::list_outcomes(&mut *conn, scope, filter, limit, after).await
    }

    async fn list_heuristics(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<(f64, i64)>,
    ) -> Result<Vec<Heuristic>> {
        let mut conn = self.connection().await?;
        outcomes::list_heuristics(&mut *conn, scope, filter, limit, after).await
    }

    async fn list_anti_patterns(
        &self,
        scope: &Scope,
        filter: &LearningFilter,
        limit: usize,
        after: Option<(i64, i64)>,
    ) -> Result<Vec<AntiPattern>> {
        let mut conn = self.connection().await?;
        outcomes::list_anti_patterns(&mut *conn, scope, filter, limit, after).await
    }

    fn feed_head(&self) -> watch::Receiver<i64> {
        self.head()
    }

    async fn changes_after(&self, after: i64, limit: usize) -> Result<Vec<MemoryChange>> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot::<B>(&mut conn).await?;
        super::feed::changes_after(&mut *snapshot, after, limit, self.written()).await
    }

    async fn feed_bounds(&self) -> Result<FeedBounds> {
        let mut conn = self.connection().await?;
        super::feed::bounds(&mut *conn).await
    }

    async fn memory_events(
        &self,
        namespace: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<FeedEvent>> {
        let mut conn = self.connection().await?;
        super::feed::events(&mut *conn, namespace, after, limit).await
    }

    async fn changed_namespaces(&self, after: i64, upto: i64) -> Result<Vec<String>> {
        let mut conn = self.connection().await?;
        super::feed::changed_namespaces(&mut *conn, after, upto).await
    }

    async fn scan_memories(&self, after_seq: i64, limit: usize) -> Result<Vec<Memory>> {
        let mut conn = self.connection().await?;
        memories::scan(&mut *conn, after_seq, limit).await
    }

    async fn unembedded(
        &self,
        model: &str,
        after_seq: i64,
        among: Option<&[i64]>,
        limit: usize,
        now: Micros,
    ) -> Result<Vec<Unembedded>> {
        let mut conn = self.connection().await?;
        vectors::unembedded(&mut *conn, model, after_seq, among, limit, now).await
    }

    async fn store_vectors(
        &self,
        model: &str,
        stored: Vec<(Unembedded, Vec<f32>)>,
    ) -> Result<usize> {
        let (model, stored) = (Arc::<str>::from(model), Arc::new(stored));
        let kind = Write {
            frees: false,
            feeds: true,
        };
        self.write(
            kind,
            Box::new(move |conn| {
                let (model, stored) = (model.clone(), stored.clone());
                Box::pin(async move { vectors::store(conn, &model, &stored).await })
            }),
        )
        .await
    }

    async fn pending_embeddings(&self, namespace: &str, model: &str, now: Micros) -> Result<i64> {
        let mut conn = self.connection().await?;
        vectors::pending(&mut *conn, namespace, model, now).await
    }

    async fn scan_embedded(
        &self,
        model: &str,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<(Memory, Embedding)>> {
        let mut conn = self.connection().await?;
        vectors::scan(&mut *conn, model, after_seq, limit).await
    }

    async fn changed_memories(&self, after: i64, limit: usize) -> Result<Vec<(i64, i64)>> {
        let mut conn = self.connection().await?;
        vectors::changed(&mut *conn, after, limit).await
    }

    async fn count_memories(&self) -> Result<i64> {
        let mut conn = self.connection().await?;
        let sql = Sql::new("SELECT count(*) AS n FROM memories");
        super::fetch_one(&mut *conn, sql, |row| Columns::<B::Conn>::of(row).get("n")).await
    }

    async fn meta(&self, key: &str) -> Result<String> {
        let mut conn = self.connection().await?;
        let mut sql = Sql::new("SELECT value FROM engram_meta WHERE key = ");
        sql.bind(key);
        super::fetch_one(&mut *conn, sql, |row| {
            Columns::<B::Conn>::of(row).get("value")
        })
        .await
    }

    async fn purge_expired_memories(&self, now: Micros, limit: usize) -> Result<usize> {
        let kind = Write {
            frees: true,
            feeds: true,
        };
        self.write(
            kind,
            Box::new(move |conn| Box::pin(memories::purge_expired(conn, now, limit))),
        )
        .await
    }

    async fn purge_request_ids(&self, before: Micros, limit: usize) -> Result<usize> {
        let kind = Write {
            frees: true,
            feeds: false,
        };
        self.write(
            kind,
            Box::new(move |conn| Box::pin(requests::purge(conn, before, limit))),
        )
        .await
    }

    async fn database_bytes(&self) -> Result<i64> {
        let mut conn = self.connection().await?;
        usage::database_bytes(&mut *conn).await
    }

    async fn namespace_sizes(&self, limit: usize) -> Result<NamespaceSizes> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot::<B>(&mut conn).await?;
        usage::namespace_sizes(&mut *snapshot, limit).await
    }

    fn disk_space(&self) -> Arc<DiskSpace> {
        self.disk()
    }

    fn database_reachable(&self) -> watch::Receiver<bool> {
        self.reachable()
    }

    async fn close(&self) {
        self.accesses().close().await;
        self.shut_down().await;
    }
}
