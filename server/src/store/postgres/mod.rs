//! The PostgreSQL backend (DESIGN §7): several stateless replicas behind a
//! load balancer share one database. Each replica connects ([`connect`]),
//! applies the schema's migrations (`server/migrations/postgres/`,
//! [`migrate`]) and serves through [`PostgresStore`].
//!
//! Units of work run in READ COMMITTED transactions, serialised where the
//! engine asks ([`tx`]: `lock`, row locks on what a unit reads to rewrite)
//! and retried when they lose a race to another replica ([`retry`]).
//!
//! The change feed keeps SQLite's contract, `seq > last` never misses a
//! change, with concurrent writers on several replicas: a change's sequence
//! number is taken at commit under a lock, so numbers become visible in the
//! order they were given. The schema's comment on `memory_changes` says how
//! and what it costs; a commit that appends to it notifies [`FEED_CHANNEL`],
//! which moves every replica's head ([`feed`]).

mod access;
mod dialect;
mod feed;
mod memories;
mod migrate;
mod reachability;
mod retry;
mod rows;
pub mod transfer;
mod tx;
mod url;

#[cfg(test)]
mod schema_tests;

use crate::store::sql::{self, episodes, learning, outcomes, requests, usage, vectors};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection as _, PgConnection, PgPool};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use self::feed::Feed;
pub use self::migrate::{migrate, schema_version};
use self::reachability::{Reachability, UNREACHABLE};
pub use self::url::{InvalidUrl, PostgresUrl};
use super::tx::{Answer, DiskUse, LearningProgress, Work};
use super::{KnowledgeQuery, NamespaceSizes, Store};
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
use crate::error::{Error, Result};
use crate::store::access::{self as gathered, Accesses};
use crate::store::sql::tx::SqlTx;

/// What an operator command that only works on a SQLite file says when
/// given a PostgreSQL database.
pub const SQLITE_ONLY: &str = "works on a SQLite database file only; back up a PostgreSQL database with its own tools (pg_dump, pg_restore), or copy its records with export or migrate-data";

/// The most connections a server opens to the database, unless
/// `--database-pool-size` says otherwise.
pub const DEFAULT_POOL_SIZE: u32 = 10;

/// The largest `--database-pool-size`: far beyond what one replica can use,
/// well below what makes a PostgreSQL server suffer.
pub const MAX_POOL_SIZE: u32 = 1000;

/// The channel that a commit which changed memories notifies (LISTEN/NOTIFY,
/// without a payload): it only wakes followers of the change feed, which
/// then read `memory_changes` after the last sequence number they applied.
pub const FEED_CHANNEL: &str = "engram_changes";

/// How long a call waits for a free connection before it fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);

/// The connections' `application_name` (unless the URL names one), so that
/// `pg_stat_activity` tells Engram's connections from others.
const APPLICATION_NAME: &str = "engram-server";

/// A pool of at most `pool_size` connections to the database at `url`; one
/// is opened now, so a wrong address or password fails here.
pub async fn connect(url: &PostgresUrl, pool_size: u32) -> anyhow::Result<PgPool> {
    let mut options = url.connect_options()?;
    if options.get_application_name().is_none() {
        options = options.application_name(APPLICATION_NAME);
    }
    PgPoolOptions::new()
        .max_connections(pool_size)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .with_context(|| format!("cannot connect to {url}"))
}

/// How to open the PostgreSQL store.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// The database.
    pub url: PostgresUrl,
    /// The most connections to it (`--database-pool-size`).
    pub pool_size: u32,
    /// The folder this replica keeps its search index in: its free space
    /// is what [`Store::disk_space`] watches (the database's own disk is
    /// the database server's).
    pub index_dir: std::path::PathBuf,
}

/// The PostgreSQL implementation of [`Store`].
pub struct PostgresStore {
    pool: PgPool,
    feed: Arc<Feed>,
    /// The task that moves the feed's head on other replicas' commits.
    follower: Mutex<Option<JoinHandle<()>>>,
    accesses: Arc<Accesses>,
    access_flusher: Mutex<Option<JoinHandle<()>>>,
    /// Whether this replica's index folder is full.
    disk: Arc<DiskSpace>,
    /// Whether the database answers (the feed's listener finds out).
    reachability: Arc<Reachability>,
}

impl PostgresStore {
    /// Connects, brings the schema up to date (under the migrations' lock,
    /// so replicas may start together) and starts following the feed.
    pub async fn open(options: &PostgresOptions) -> anyhow::Result<PostgresStore> {
        let pool = connect(&options.url, options.pool_size).await?;
        migrate(&pool)
            .await
            .with_context(|| format!("migrating {}", options.url))?;
        let feed = Arc::new(Feed::new(feed::read_head(&pool).await?));
        // The listener holds a connection of its own for as long as it
        // runs, outside the pool that units of work share.
        let listener_pool = connect(&options.url, 1).await?;
        let reachability = Arc::new(Reachability::default());
        let follower = feed::spawn_listener(
            feed.clone(),
            listener_pool,
            pool.clone(),
            reachability.clone(),
        )
        .await?;
        // The reserve goes beside the index folder, never inside it (the
        // folder is the index's own): `<index dir>.reserve`.
        let disk = Arc::new(DiskSpace::new(&options.index_dir));
        disk.release_for_start();
        disk.start();
        let accesses = Arc::new(Accesses::default());
        let access_flusher = gathered::spawn_flusher(accesses.clone(), {
            let pool = pool.clone();
            move |batch| {
                let pool = pool.clone();
                async move { access::write_with_retries(&pool, &batch).await }
            }
        });
        Ok(PostgresStore {
            pool,
            feed,
            follower: Mutex::new(Some(follower)),
            accesses,
            access_flusher: Mutex::new(Some(access_flusher)),
            disk,
            reachability,
        })
    }

    /// A connection of the pool: UNAVAILABLE at once while the database is
    /// known to be unreachable, or as soon as it is found so while waiting.
    async fn connection(&self) -> Result<sqlx::pool::PoolConnection<sqlx::Postgres>> {
        if !self.reachability.reachable() {
            return Err(Error::Unavailable(UNREACHABLE.into()));
        }
        tokio::select! {
            acquired = self.pool.acquire() => acquired.map_err(|err| match err {
                sqlx::Error::PoolTimedOut if !self.reachability.reachable() => {
                    Error::Unavailable(UNREACHABLE.into())
                }
                err => db_error(err),
            }),
            () = self.reachability.lost() => Err(Error::Unavailable(UNREACHABLE.into())),
        }
    }

    /// Runs `work` once in a READ COMMITTED transaction; commits it, and
    /// when it changed memories moves the feed's head past its changes
    /// before returning (read your writes on this replica).
    async fn attempt(&self, work: &mut Work) -> Result<Answer> {
        let mut conn = self.connection().await?;
        let began = std::time::Instant::now();
        let (answer, changed) = {
            let mut tx = conn
                .begin_with("BEGIN ISOLATION LEVEL READ COMMITTED")
                .await
                .map_err(db_error)?;
            let mut unit = SqlTx::writing(&mut *tx);
            let done = work(&mut unit).await;
            let changed = unit.changed_memories();
            match done {
                Ok(answer) => {
                    tx.commit().await.map_err(db_error)?;
                    // One unit of work per transaction: the writer metrics'
                    // "group" is of one here.
                    crate::metrics::recorders().committed(1, began.elapsed());
                    (answer, changed)
                }
                Err(err) => {
                    // The transaction may be aborted already; either way
                    // nothing of it is kept.
                    let _ = tx.rollback().await;
                    return Err(err);
                }
            }
        };
        if changed {
            self.advance_after_commit(&mut conn).await;
        }
        Ok(answer)
    }

    /// Moves the feed's head to include this replica's commit that has just
    /// returned. The commit is kept whatever happens here: should the head
    /// not be readable, the listener catches up, and the write is still
    /// acknowledged (answering an error for a committed write would invite
    /// the caller to write it twice).
    async fn advance_after_commit(&self, conn: &mut PgConnection) {
        match feed::read_head(&mut *conn).await {
            Ok(head) => self.feed.advance(head),
            Err(err) => {
                tracing::warn!(error = %err, "reading the change feed's head after a commit failed");
            }
        }
    }

    /// Runs `work`, a unit of one statement or a few that needs no engine
    /// decision, in a transaction of its own with the same retries as a
    /// unit of work, moving the head afterwards when `feed` says it writes
    /// the feed.
    async fn write<T, F>(&self, feed: bool, mut work: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnMut(&'c mut PgConnection) -> retry::BoxFuture<'c, Result<T>> + Send,
    {
        let mut retries = retry::Retries::default();
        loop {
            match self.write_once(feed, &mut work).await {
                Err(err) if retry::is_conflict(&err) => retries.pause().await?,
                done => return done,
            }
        }
    }

    async fn write_once<T, F>(&self, feed: bool, work: &mut F) -> Result<T>
    where
        F: for<'c> FnMut(&'c mut PgConnection) -> retry::BoxFuture<'c, Result<T>> + Send,
    {
        let mut conn = self.connection().await?;
        let began = std::time::Instant::now();
        let value = {
            let mut tx = conn.begin().await.map_err(db_error)?;
            match work(&mut tx).await {
                Ok(value) => {
                    tx.commit().await.map_err(db_error)?;
                    crate::metrics::recorders().committed(1, began.elapsed());
                    value
                }
                Err(err) => {
                    let _ = tx.rollback().await;
                    return Err(err);
                }
            }
        };
        if feed {
            self.advance_after_commit(&mut conn).await;
        }
        Ok(value)
    }
}

/// SQLSTATEs of a unit of work that lost a race with another transaction:
/// run again, it sees what the other committed and decides anew.
const RETRYABLE: &[&str] = &[
    "40001", // serialization_failure
    "40P01", // deadlock_detected
    "23505", // unique_violation: another replica inserted the same key first
];

/// SQLSTATE classes of a database that cannot take the work now: out of
/// connections or resources, shutting down, or cancelled.
const UNAVAILABLE_CLASSES: &[&str] = &["53", "57", "08"];

/// Maps a database error to the server's error: a lost race is
/// [`retry::CONFLICT`] (the unit of work is run again; past the retries the
/// caller is told to retry); a database out of resources or reach is
/// UNAVAILABLE; a full disk is [`Error::StorageFull`]; anything else is
/// INTERNAL, with the detail kept for the log.
pub(crate) fn db_error(err: sqlx::Error) -> Error {
    match &err {
        sqlx::Error::PoolTimedOut => Error::Unavailable(format!(
            "the database is busy: no connection came free within {ACQUIRE_TIMEOUT:?}; retry"
        )),
        sqlx::Error::PoolClosed => Error::Unavailable("the server is shutting down".into()),
        sqlx::Error::Io(_) => Error::Unavailable("the database cannot be reached; retry".into()),
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            if RETRYABLE.contains(&code.as_ref()) {
                Error::Unavailable(retry::CONFLICT.into())
            } else if code == "53100" {
                // disk_full, on the database server
                Error::storage_full()
            } else if UNAVAILABLE_CLASSES
                .iter()
                .any(|class| code.starts_with(class))
            {
                Error::Unavailable("the database cannot take the request now; retry".into())
            } else {
                Error::Internal(format!("database: {err}"))
            }
        }
        _ => Error::Internal(format!("database: {err}")),
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn transact(&self, mut work: Work, _disk: DiskUse) -> Result<Answer> {
        // The database is on the database server's disk, which reports a
        // full disk by itself (53100): nothing here is refused beforehand.
        let mut retries = retry::Retries::default();
        loop {
            match self.attempt(&mut work).await {
                Err(err) if retry::is_conflict(&err) => retries.pause().await?,
                done => return done,
            }
        }
    }

    async fn read(&self, mut work: Work) -> Result<Answer> {
        let mut conn = self.connection().await?;
        // One snapshot for the whole unit, as a SQLite read transaction has.
        let mut snapshot = conn
            .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await
            .map_err(db_error)?;
        let answer = work(&mut SqlTx::reading(&mut *snapshot)).await;
        let _ = snapshot.rollback().await;
        answer
    }

    async fn get_memory(&self, scope: &Scope, id: &str, now: Micros) -> Result<Option<Memory>> {
        let mut conn = self.connection().await?;
        sql::memories::get(&mut *conn, scope, id, now, false).await
    }

    async fn list_memory_revisions(
        &self,
        namespace: &str,
        id: &str,
        page_size: usize,
        after_seq: Option<i64>,
    ) -> Result<Vec<Revision>> {
        let mut conn = self.connection().await?;
        sql::memories::revisions(&mut *conn, namespace, id, page_size + 1, after_seq).await
    }

    async fn list_memories(&self, query: &ListQuery, now: Micros) -> Result<Vec<Memory>> {
        let mut conn = self.connection().await?;
        sql::memories::list(&mut *conn, query, now).await
    }

    async fn conversation_neighbours(
        &self,
        namespace: &str,
        seqs: &[i64],
    ) -> Result<Vec<Neighbours>> {
        let mut conn = self.connection().await?;
        memories::conversation_neighbours(&mut conn, namespace, seqs).await
    }

    async fn memories_by_seq(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        seqs: &[i64],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        let mut conn = self.connection().await?;
        sql::memories::by_seq(&mut *conn, scope, filter, seqs, now).await
    }

    fn record_access(&self, seqs: Vec<i64>, now: Micros) {
        self.accesses.record(seqs, now);
    }

    async fn get_episode(
        &self,
        scope: &Scope,
        id: &str,
        steps: StepWindow,
    ) -> Result<Option<Episode>> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot(&mut conn).await?;
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
        let mut snapshot = snapshot(&mut conn).await?;
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
        let mut snapshot = snapshot(&mut conn).await?;
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
        self.feed.subscribe()
    }

    async fn changes_after(&self, after: i64, limit: usize) -> Result<Vec<MemoryChange>> {
        let mut conn = self.connection().await?;
        // The changes and the memories they name, from one snapshot.
        let mut snapshot = snapshot(&mut conn).await?;
        memories::changes_after(&mut snapshot, after, limit).await
    }

    async fn feed_bounds(&self) -> Result<FeedBounds> {
        let mut conn = self.connection().await?;
        sql::feed::bounds(&mut *conn).await
    }

    async fn memory_events(
        &self,
        namespace: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<FeedEvent>> {
        let mut conn = self.connection().await?;
        sql::feed::events(&mut *conn, namespace, after, limit).await
    }

    async fn changed_namespaces(&self, after: i64, upto: i64) -> Result<Vec<String>> {
        let mut conn = self.connection().await?;
        sql::feed::changed_namespaces(&mut *conn, after, upto).await
    }

    async fn scan_memories(&self, after_seq: i64, limit: usize) -> Result<Vec<Memory>> {
        let mut conn = self.connection().await?;
        sql::memories::scan(&mut *conn, after_seq, limit).await
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
        let (model, stored) = (model.to_owned(), Arc::new(stored));
        self.write(true, move |conn| {
            let (model, stored) = (model.clone(), stored.clone());
            Box::pin(async move { vectors::store(conn, &model, &stored).await })
        })
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
        sqlx::query_scalar("SELECT count(*) FROM memories")
            .fetch_one(&self.pool)
            .await
            .map_err(db_error)
    }

    async fn meta(&self, key: &str) -> Result<String> {
        sqlx::query_scalar("SELECT value FROM engram_meta WHERE key = $1")
            .bind(key)
            .fetch_one(&self.pool)
            .await
            .map_err(db_error)
    }

    async fn purge_expired_memories(&self, now: Micros, limit: usize) -> Result<usize> {
        self.write(true, move |conn| {
            Box::pin(sql::memories::purge_expired(conn, now, limit))
        })
        .await
    }

    async fn purge_request_ids(&self, before: Micros, limit: usize) -> Result<usize> {
        self.write(false, move |conn| {
            Box::pin(requests::purge(conn, before, limit))
        })
        .await
    }

    async fn database_bytes(&self) -> Result<i64> {
        let mut conn = self.connection().await?;
        usage::database_bytes(&mut *conn).await
    }

    async fn namespace_sizes(&self, limit: usize) -> Result<NamespaceSizes> {
        let mut conn = self.connection().await?;
        let mut snapshot = snapshot(&mut conn).await?;
        usage::namespace_sizes(&mut *snapshot, limit).await
    }

    fn disk_space(&self) -> Arc<DiskSpace> {
        self.disk.clone()
    }

    fn database_reachable(&self) -> watch::Receiver<bool> {
        self.reachability.subscribe()
    }

    async fn close(&self) {
        self.accesses.close();
        let flusher = self.access_flusher.lock().await.take();
        if let Some(flusher) = flusher
            && let Err(err) = flusher.await
        {
            tracing::error!(error = %err, "the access flusher failed");
        }
        if let Some(follower) = self.follower.lock().await.take() {
            follower.abort();
        }
        self.pool.close().await;
    }
}

/// A read-only transaction on one snapshot, for reads of several
/// statements that must agree with each other; rolled back when dropped.
async fn snapshot(conn: &mut PgConnection) -> Result<sqlx::Transaction<'_, sqlx::Postgres>> {
    conn.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .map_err(db_error)
}
