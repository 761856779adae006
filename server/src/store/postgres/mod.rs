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
mod migrate;
mod reachability;
mod retry;
pub mod transfer;
mod tx;
mod url;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection as _, PgConnection, PgPool, Postgres};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use self::feed::Feed;
pub use self::migrate::{migrate, schema_version};
use self::reachability::{Reachability, UNREACHABLE};
pub use self::url::{InvalidUrl, PostgresUrl};
use super::tx::{Answer, DiskUse, Work};
use crate::disk::DiskSpace;
use crate::error::{Error, Result};
use crate::store::access::Gatherer;
use crate::store::sql::store::{Backend, Statements, Write};
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
    accesses: Gatherer,
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
        let accesses = Gatherer::start({
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
            disk,
            reachability,
        })
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

    /// Runs the statements of a small write once in a transaction of its
    /// own, moving the head afterwards when they wrote the feed.
    async fn write_once<T>(&self, feed: bool, work: &mut Statements<PgConnection, T>) -> Result<T> {
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
impl Backend for PostgresStore {
    type Conn = PgConnection;

    /// UNAVAILABLE at once while the database is known to be unreachable,
    /// or as soon as it is found so while waiting.
    async fn connection(&self) -> Result<PoolConnection<Postgres>> {
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

    async fn run_unit(&self, mut work: Work, _disk: DiskUse) -> Result<Answer> {
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

    /// In a transaction of its own with the same retries as a unit of work.
    async fn write<T: Send + 'static>(
        &self,
        kind: Write,
        mut work: Statements<PgConnection, T>,
    ) -> Result<T> {
        let mut retries = retry::Retries::default();
        loop {
            match self.write_once(kind.feeds, &mut work).await {
                Err(err) if retry::is_conflict(&err) => retries.pause().await?,
                done => return done,
            }
        }
    }

    fn head(&self) -> watch::Receiver<i64> {
        self.feed.subscribe()
    }

    fn accesses(&self) -> &Gatherer {
        &self.accesses
    }

    fn disk(&self) -> Arc<DiskSpace> {
        self.disk.clone()
    }

    fn reachable(&self) -> watch::Receiver<bool> {
        self.reachability.subscribe()
    }

    async fn shut_down(&self) {
        if let Some(follower) = self.follower.lock().await.take() {
            follower.abort();
        }
        self.pool.close().await;
    }
}
