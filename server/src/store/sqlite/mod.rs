//! The embedded SQLite backend (DESIGN §7): one file, created on first start,
//! migrations embedded and applied at start; WAL; one writer connection with
//! group commit (see [`writer`]) and a pool of read-only connections.

mod access;
pub mod backup;
mod checkpoint;
mod dialect;
pub mod transfer;
mod writer;

use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions as _, Connection as _, Sqlite, SqliteConnection};
use tokio::sync::{Mutex, Notify, oneshot, watch};
use tokio::task::JoinHandle;

use self::writer::{OnCommit, Writer};
use super::tx::{Answer, DiskUse, Work};
use crate::disk::DiskSpace;
use crate::domain::Memory;
use crate::error::{Error, Result};
use crate::store::access::Gatherer;
use crate::store::sql::feed::Written;
use crate::store::sql::migrations::{self, Migration};
use crate::store::sql::store::{Backend, Statements, Write};
use crate::store::sql::tx::SqlTx;

/// The schema, in order.
pub const MIGRATIONS: &[Migration] = &[
    (
        1,
        "memories",
        include_str!("../../../migrations/sqlite/0001_memories.sql"),
    ),
    (
        2,
        "episodes",
        include_str!("../../../migrations/sqlite/0002_episodes.sql"),
    ),
    (
        3,
        "outcomes",
        include_str!("../../../migrations/sqlite/0003_outcomes.sql"),
    ),
    (
        4,
        "change_feed",
        include_str!("../../../migrations/sqlite/0004_change_feed.sql"),
    ),
    (
        5,
        "vectors",
        include_str!("../../../migrations/sqlite/0005_vectors.sql"),
    ),
    (
        6,
        "occurred_at",
        include_str!("../../../migrations/sqlite/0006_occurred_at.sql"),
    ),
    (
        7,
        "origin_session",
        include_str!("../../../migrations/sqlite/0007_origin_session.sql"),
    ),
    (
        8,
        "retention",
        include_str!("../../../migrations/sqlite/0008_retention.sql"),
    ),
    (
        9,
        "memory_revisions",
        include_str!("../../../migrations/sqlite/0009_memory_revisions.sql"),
    ),
    (
        10,
        "watch",
        include_str!("../../../migrations/sqlite/0010_watch.sql"),
    ),
    (
        11,
        "key_ids",
        include_str!("../../../migrations/sqlite/0011_key_ids.sql"),
    ),
    (
        12,
        "validity",
        include_str!("../../../migrations/sqlite/0012_validity.sql"),
    ),
    (
        13,
        "entities",
        include_str!("../../../migrations/sqlite/0013_entities.sql"),
    ),
    (
        14,
        "memory_links",
        include_str!("../../../migrations/sqlite/0014_memory_links.sql"),
    ),
    (
        15,
        "memory_relations",
        include_str!("../../../migrations/sqlite/0015_memory_relations.sql"),
    ),
    (
        16,
        "memory_provenance",
        include_str!("../../../migrations/sqlite/0016_memory_provenance.sql"),
    ),
];

/// The schema version this server brings a database to.
fn schema_version() -> i64 {
    migrations::newest(MIGRATIONS)
}

/// Prepared statements the write connection keeps: besides its few dozen
/// fixed statements, a lookup of identities and a multi-row insert of every
/// size up to [`dialect::MAX_UPSERT_ROWS`] (concurrent creates share one
/// of each, of as many rows as they are), each parsed once rather than
/// every time.
const WRITER_STATEMENTS: usize = 3 * dialect::MAX_UPSERT_ROWS;
/// SQLite's page cache per connection, in KiB.
const CACHE_KIB: u32 = 32 * 1024;
/// How much of the database file each connection may memory-map.
const MMAP_BYTES: u64 = 1 << 30;

/// How to open the SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// The database file; created when missing.
    pub path: PathBuf,
    /// `synchronous=FULL` instead of NORMAL: survives power loss, not only
    /// process crashes, at the cost of an fsync per commit.
    pub synchronous_full: bool,
    /// How long a statement waits for a lock before failing with UNAVAILABLE.
    pub busy_timeout: Duration,
    /// How many read-only connections to keep.
    pub readers: u32,
}

impl SqliteOptions {
    /// Options for the database at `path` with the defaults.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        SqliteOptions {
            path: path.into(),
            synchronous_full: false,
            busy_timeout: Duration::from_secs(5),
            readers: 4,
        }
    }
}

/// The SQLite implementation of [`Store`].
pub struct SqliteStore {
    writer: Writer,
    /// Resolves when the writer's thread has finished.
    writer_done: Mutex<Option<oneshot::Receiver<()>>>,
    accesses: Gatherer,
    /// Just-written memories, for the change feed (see [`Written`]).
    written: Arc<Written>,
    checkpointer: Mutex<Option<JoinHandle<()>>>,
    stop_checkpointing: Arc<Notify>,
    readers: SqlitePool,
    /// The change feed's head, moved by the writer after each commit.
    feed_head: watch::Receiver<i64>,
    /// Whether the disk is full.
    disk: Arc<DiskSpace>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database and brings its schema up to date.
    pub async fn open(options: &SqliteOptions) -> anyhow::Result<SqliteStore> {
        let disk = Arc::new(DiskSpace::new(&options.path));
        // Opening needs a little room (the log, its shared memory), which
        // a full disk has only once the reserve is given back.
        disk.release_for_start();
        let connect = connect_options(&options.path, options)?;
        let mut conn = connect
            .clone()
            .create_if_missing(true)
            .statement_cache_capacity(WRITER_STATEMENTS)
            // Checkpoints are the checkpointer's (see `checkpoint`).
            .pragma("wal_autocheckpoint", "0")
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", options.path.display()))?;
        migrate(&mut conn).await?;
        let head = dialect::feed_head(&mut conn).await?;
        let (feed_head_tx, feed_head) = watch::channel(head);
        let readers = SqlitePoolOptions::new()
            .max_connections(options.readers.max(1))
            .min_connections(1)
            .acquire_timeout(options.busy_timeout)
            .connect_with(connect.clone().read_only(true))
            .await?;
        let gate = checkpoint::WriteGate::default();
        let stop_checkpointing = Arc::new(Notify::new());
        let checkpointer = checkpoint::spawn(
            connect.clone().connect().await?,
            gate.clone(),
            stop_checkpointing.clone(),
            disk.clone(),
        );
        disk.start();
        let (writer, writer_done) = Writer::spawn(conn, feed_head_tx, gate, disk.clone())?;
        let accesses = Gatherer::start({
            let writer = writer.clone();
            move |batch| {
                let writer = writer.clone();
                async move { access::write_through(&writer, batch).await }
            }
        });
        Ok(SqliteStore {
            writer,
            writer_done: Mutex::new(Some(writer_done)),
            accesses,
            written: Arc::default(),
            checkpointer: Mutex::new(Some(checkpointer)),
            stop_checkpointing,
            readers,
            feed_head,
            disk,
        })
    }
}

fn connect_options(path: &Path, options: &SqliteOptions) -> anyhow::Result<SqliteConnectOptions> {
    let synchronous = if options.synchronous_full {
        SqliteSynchronous::Full
    } else {
        SqliteSynchronous::Normal
    };
    // busy_timeout is applied when the connection is established, before the
    // journal-mode pragma, so switching to WAL waits for other openers too.
    Ok(SqliteConnectOptions::from_str("sqlite:")?
        .filename(path)
        .busy_timeout(options.busy_timeout)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(synchronous)
        .foreign_keys(true)
        // Keep hot pages in SQLite's own cache, and read the rest through a
        // memory map rather than a read() per page.
        .pragma("cache_size", format!("-{}", CACHE_KIB))
        .pragma("mmap_size", MMAP_BYTES.to_string())
        .pragma("temp_store", "memory"))
}

/// Applies the migrations the database has not seen, each in its own transaction.
async fn migrate(conn: &mut SqliteConnection) -> anyhow::Result<()> {
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_time INTEGER NOT NULL)",
    )
    .execute(&mut *conn)
    .await?;
    let newest = schema_version();
    for &migration in MIGRATIONS {
        // Take the write lock before reading the version, so two servers
        // starting together cannot both apply the same migration.
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        migrations::apply(&mut *tx, migration, newest).await?;
        tx.commit().await?;
    }
    Ok(())
}

/// Maps a database error to the server's error: a lock held past the busy
/// timeout is UNAVAILABLE (retryable); a full disk is [`Error::StorageFull`];
/// anything else is INTERNAL, with the detail kept for the log.
pub(crate) fn db_error(err: sqlx::Error) -> Error {
    match &err {
        sqlx::Error::PoolTimedOut => Error::Unavailable("the database is busy; retry".into()),
        sqlx::Error::PoolClosed => Error::Unavailable("the server is shutting down".into()),
        sqlx::Error::Database(db)
            if db
                .code()
                .and_then(|code| code.parse::<i32>().ok())
                // SQLITE_BUSY = 5, SQLITE_LOCKED = 6, and their extended codes.
                .is_some_and(|code| matches!(code & 0xff, 5 | 6)) =>
        {
            Error::Unavailable("the database is busy; retry".into())
        }
        sqlx::Error::Database(db)
            if db
                .code()
                .and_then(|code| code.parse::<i32>().ok())
                // SQLITE_FULL = 13.
                .is_some_and(|code| code & 0xff == 13) =>
        {
            Error::storage_full()
        }
        sqlx::Error::Io(io) if crate::disk::is_full_error(io) => Error::storage_full(),
        _ => Error::Internal(format!("database: {err}")),
    }
}

#[async_trait]
impl Backend for SqliteStore {
    type Conn = SqliteConnection;

    async fn connection(&self) -> Result<PoolConnection<Sqlite>> {
        self.readers.acquire().await.map_err(db_error)
    }

    async fn run_unit(&self, mut work: Work, disk: DiskUse) -> Result<Answer> {
        // The writer runs each unit of work once, with a savepoint of its
        // own inside the group commit; the memories it wrote go to the
        // change feed's follower once they are committed.
        let written = self.written.clone();
        let keep: OnCommit<(Answer, Vec<Memory>)> =
            Box::new(move |(_, memories)| written.keep(memories));
        self.writer
            .write_then(
                move |conn| {
                    Box::pin(async move {
                        let mut tx = SqlTx::writing(conn);
                        let answer = work(&mut tx).await?;
                        Ok((answer, tx.into_written()))
                    })
                },
                disk == DiskUse::Frees,
                keep,
            )
            .await
            .map(|(answer, _)| answer)
    }

    /// In the next group commit; work that frees space without a savepoint
    /// of its own (it fails, if at all, with a database error) and even on
    /// a full disk.
    async fn write<T: Send + 'static>(
        &self,
        kind: Write,
        work: Statements<SqliteConnection, T>,
    ) -> Result<T> {
        if kind.frees {
            self.writer.write_atomic_freeing(work).await
        } else {
            self.writer.write(work).await
        }
    }

    fn head(&self) -> watch::Receiver<i64> {
        self.feed_head.clone()
    }

    fn written(&self) -> Option<&Written> {
        Some(&self.written)
    }

    fn accesses(&self) -> &Gatherer {
        &self.accesses
    }

    fn disk(&self) -> Arc<DiskSpace> {
        self.disk.clone()
    }

    async fn shut_down(&self) {
        self.readers.close().await;
        self.stop_checkpointing.notify_one();
        let checkpointer = self.checkpointer.lock().await.take();
        if let Some(checkpointer) = checkpointer
            && let Err(err) = checkpointer.await
        {
            tracing::error!(error = %err, "the checkpointer failed");
        }
        let done = self.writer_done.lock().await.take();
        if let Some(done) = done {
            // The writer finishes the queued jobs once every sender is gone;
            // ours goes when the store is dropped, so close the queue explicitly.
            self.writer.close();
            if done.await.is_err() {
                tracing::error!("the writer thread failed");
            }
        }
    }
}
