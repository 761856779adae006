//! The single writer connection and its group commit.
//!
//! SQLite allows one writer at a time, so instead of letting connections
//! contend for the lock, every write is a job sent to one task that owns the
//! write connection. The task takes whatever jobs are waiting, runs them in
//! one transaction, commits once, and only then answers each caller: a write
//! is acknowledged only after it is durable, and many concurrent writes share
//! one commit (one fsync). Between the commit and the answers it moves the
//! change feed's head, so whoever follows the feed (the search indexes) knows
//! of a write before its caller does.
//!
//! A job that fails must leave nothing behind, and the others of its group
//! must not notice. A job that may fail after it has written runs inside a
//! savepoint of its own ([`Writer::write`]). One that fails, if at all,
//! before it writes or with a database error ([`Writer::write_atomic`]) needs
//! none: a database error loses the whole group's transaction anyway, and
//! every job of the group is then told to retry. The distinction matters
//! because each statement is a round trip to the connection's thread, which
//! costs more than most statements do: the writer's throughput is its round
//! trips per job.
//!
//! Under load and faults the writer stays bounded: a caller waits at most
//! [`QUEUE_WAIT`] for room in a full queue (then UNAVAILABLE, retryable); a
//! job whose caller has gone (cancelled, past its deadline) is skipped, not
//! run; and work that can be long (Forget) is cut into jobs of a bounded
//! size by the store, each committed on its own, so that other writes
//! interleave. When the disk is full (see [`crate::disk`]), jobs that add
//! data are refused without running, and jobs that free space run.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use sqlx::{Connection as _, Row as _, SqliteConnection};
use tokio::sync::{Notify, mpsc, oneshot, watch};

use super::checkpoint::WriteGate;
use super::db_error;
use super::dialect::feed_head_sql;
use crate::disk::{DiskSpace, PROBE_EVERY};
use crate::error::{Error, Result};
use crate::metrics;

/// The most jobs committed together.
const MAX_GROUP: usize = 256;
/// How many jobs may wait for the writer before senders wait too.
const QUEUE_DEPTH: usize = 1024;
/// How long a write waits for room in a full queue before it is answered
/// UNAVAILABLE: a client can retry (elsewhere, or later) rather than hang.
const QUEUE_WAIT: Duration = Duration::from_secs(5);

pub(super) use crate::store::sql::store::BoxFuture;
/// Runs with a job's result once its transaction has committed.
pub(super) type OnCommit<T> = Box<dyn FnOnce(&T) + Send>;

/// A unit of work for the write connection.
trait Job: Send {
    /// Runs the work; returns its error, if any (to roll back its writes),
    /// and what to do once the transaction's fate is known.
    fn run<'c>(
        self: Box<Self>,
        conn: &'c mut SqliteConnection,
    ) -> BoxFuture<'c, (Result<()>, Box<dyn Completion>)>;
    /// Answers the caller with `err` without running the work.
    fn fail(self: Box<Self>, err: Error);
    /// Whether a failure may come after the work has written (so it runs in
    /// a savepoint of its own).
    fn needs_savepoint(&self) -> bool;
    /// Whether the work frees space (deletes) rather than adds data: only
    /// such work runs while the disk is full.
    fn frees(&self) -> bool;
    /// Whether the caller has gone, so that nobody awaits the work.
    fn abandoned(&self) -> bool;
}

/// A job that has run, waiting for its transaction's fate.
trait Completion: Send {
    /// The transaction committed. Runs before the feed's head moves, so
    /// before anyone can see the commit.
    fn committed(&mut self);
    /// Answers the caller: the commit's outcome, then the job's.
    fn deliver(self: Box<Self>, commit: Result<()>);
}

struct Work<T, F> {
    work: F,
    reply: oneshot::Sender<Result<T>>,
    savepoint: bool,
    frees: bool,
    on_commit: Option<OnCommit<T>>,
}

struct Ran<T> {
    outcome: Result<T>,
    reply: oneshot::Sender<Result<T>>,
    on_commit: Option<OnCommit<T>>,
}

impl<T: Send> Completion for Ran<T> {
    fn committed(&mut self) {
        if let (Ok(value), Some(on_commit)) = (&self.outcome, self.on_commit.take()) {
            on_commit(value);
        }
    }

    fn deliver(self: Box<Self>, commit: Result<()>) {
        // The caller may have gone away; its result is then nobody's concern.
        let _ = self.reply.send(commit.and(self.outcome));
    }
}

impl<T, F> Job for Work<T, F>
where
    T: Send + 'static,
    F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
{
    fn run<'c>(
        self: Box<Self>,
        conn: &'c mut SqliteConnection,
    ) -> BoxFuture<'c, (Result<()>, Box<dyn Completion>)> {
        let Work {
            work,
            reply,
            on_commit,
            ..
        } = *self;
        Box::pin(async move {
            // A panic in one job must not take the writer (and so every later
            // write) down with it: it fails that job, whose savepoint is then
            // rolled back.
            let outcome = AssertUnwindSafe(async move { work(conn).await })
                .catch_unwind()
                .await
                .unwrap_or_else(|_| Err(Error::Internal("a write job panicked".into())));
            let result = outcome.as_ref().map(|_| ()).map_err(Clone::clone);
            let ran: Box<dyn Completion> = Box::new(Ran {
                outcome,
                reply,
                on_commit,
            });
            (result, ran)
        })
    }

    fn fail(self: Box<Self>, err: Error) {
        let _ = self.reply.send(Err(err));
    }

    fn needs_savepoint(&self) -> bool {
        self.savepoint
    }

    fn frees(&self) -> bool {
        self.frees
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

/// A handle to the writer task. The task ends once [`Writer::close`] is
/// called (or every handle dropped) and the queue is empty.
#[derive(Clone)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Box<dyn Job>>,
    closing: Arc<Notify>,
    disk: Arc<DiskSpace>,
}

impl Writer {
    /// Starts the writer task on `conn`; it moves `feed_head` after every
    /// commit that changed a memory, holds `gate` while it writes, and
    /// keeps `disk` informed of a full disk (and checks when space is back).
    ///
    /// The task runs on a thread of its own: every statement it sends is a
    /// round trip to the connection's thread, and on the server's runtime
    /// each answer would wait behind every request ready to run, which made
    /// the writer (and so every write) wait most of its time.
    pub(super) fn spawn(
        conn: SqliteConnection,
        feed_head: watch::Sender<i64>,
        gate: WriteGate,
        disk: Arc<DiskSpace>,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        let (jobs, queue) = mpsc::channel(QUEUE_DEPTH);
        let closing = Arc::new(Notify::new());
        let (finished, done) = oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let notified = closing.clone();
        let space = disk.clone();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                runtime.block_on(run(conn, queue, notified, feed_head, gate, space));
                let _ = finished.send(());
            })?;
        Ok((
            Writer {
                jobs,
                closing,
                disk,
            },
            done,
        ))
    }

    /// Stops accepting jobs; the task commits the queued ones and ends.
    pub(super) fn close(&self) {
        self.closing.notify_one();
    }

    /// Runs `work` in the next group commit and returns its result once the
    /// group is committed. If `work` fails, its changes are rolled back and the
    /// other jobs of the group are unaffected.
    pub(super) async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.submit(work, true, false, None).await
    }

    /// Like [`Writer::write_atomic_freeing`], refused on a full disk (the
    /// tests' way to run jobs without savepoints).
    #[cfg(test)]
    pub(super) async fn write_atomic<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.submit(work, false, false, None).await
    }

    /// Runs `work` in the next group commit without a savepoint of its own:
    /// for work that fails, if at all, before it writes or with a database
    /// error (after which the whole group is rolled back and its unrun jobs
    /// carried over), and that frees space (it runs while the disk is full).
    pub(super) async fn write_atomic_freeing<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.submit(work, false, true, None).await
    }

    /// Like [`Writer::write`] (for work that frees space and so runs while
    /// the disk is full, when `frees`), and `on_commit` runs with the result once it is committed, before
    /// the change feed's head moves past it.
    pub(super) async fn write_then<T, F>(
        &self,
        work: F,
        frees: bool,
        on_commit: OnCommit<T>,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.submit(work, true, frees, Some(on_commit)).await
    }

    async fn submit<T, F>(
        &self,
        work: F,
        savepoint: bool,
        frees: bool,
        on_commit: Option<OnCommit<T>>,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        if !frees && self.disk.is_full() {
            return Err(Error::storage_full());
        }
        let (reply, answer) = oneshot::channel();
        let waiting = Waiting::start();
        let job = Box::new(Work {
            work,
            reply,
            savepoint,
            frees,
            on_commit,
        });
        match tokio::time::timeout(QUEUE_WAIT, self.jobs.send(job)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(shutting_down()),
            Err(_) => {
                return Err(Error::Unavailable(
                    "too many writes are waiting for the database; retry".into(),
                ));
            }
        }
        waiting.queued();
        answer.await.map_err(|_| shutting_down())?
    }
}

/// A write counted in `engram_writer_queue_depth` from before it waits for
/// room in the queue; once queued, the writer uncounts it when it takes it,
/// and a write that never got in (the caller gave up, or the writer is
/// closed) uncounts itself.
struct Waiting {
    queued: bool,
}

impl Waiting {
    fn start() -> Waiting {
        metrics::recorders().writer_queue.inc();
        Waiting { queued: false }
    }

    fn queued(mut self) {
        self.queued = true;
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.queued {
            metrics::recorders().writer_queue.dec();
        }
    }
}

fn shutting_down() -> Error {
    Error::Unavailable("the server is shutting down".into())
}

async fn run(
    mut conn: SqliteConnection,
    mut queue: mpsc::Receiver<Box<dyn Job>>,
    closing: Arc<Notify>,
    feed_head: watch::Sender<i64>,
    gate: WriteGate,
    disk: Arc<DiskSpace>,
) {
    let recorders = metrics::recorders();
    // Jobs to run next: received, or carried over from a lost transaction.
    let mut group = Vec::with_capacity(MAX_GROUP);
    let mut probed = Instant::now();
    loop {
        if group.is_empty() {
            tokio::select! {
                received = queue.recv_many(&mut group, MAX_GROUP) => {
                    if received == 0 {
                        break; // closed and drained
                    }
                    recorders.writer_queue.dec_by(i64::try_from(received).unwrap_or(i64::MAX));
                }
                () = closing.notified() => {
                    queue.close();
                    continue;
                }
                () = tokio::time::sleep_until((probed + PROBE_EVERY).into()), if disk.is_full() => {}
            }
        }
        if !group.is_empty() {
            let jobs = group.len();
            let _writing = gate.lock().await;
            let started = Instant::now();
            group = commit_group(&mut conn, std::mem::take(&mut group), &feed_head, &disk).await;
            recorders.committed(jobs - group.len(), started.elapsed());
        }
        if disk.is_full() && probed.elapsed() >= PROBE_EVERY {
            disk.try_resume();
            probed = Instant::now();
        }
    }
    if let Err(err) = conn.close().await {
        tracing::warn!(error = %err, "closing the write connection failed");
    }
}

/// A job that has run, with how it went.
struct Attempt {
    completion: Box<dyn Completion>,
    /// Whether the job itself failed (its own error is its answer).
    failed: bool,
    /// Its answer instead of its own error: a full disk, which its error
    /// did not say.
    full: bool,
}

impl Attempt {
    /// Answers the caller: `group` when the job succeeded (the commit's
    /// outcome), its own failure otherwise.
    fn deliver(self, group: Result<()>) {
        if self.full {
            self.completion.deliver(Err(Error::storage_full()));
        } else if self.failed {
            self.completion.deliver(Ok(()));
        } else {
            self.completion.deliver(group);
        }
    }
}

/// `err` as a full disk when the disk is low: SQLite reports a full disk as
/// SQLITE_FULL (already [`Error::StorageFull`]) when a write runs out of
/// room, but as an I/O error when growing its log index or syncing does.
fn full_or(err: Error, disk: &DiskSpace) -> Error {
    match err {
        Error::Internal(_) if disk.is_low() => Error::storage_full(),
        other => other,
    }
}

/// Runs `jobs` in one transaction, commits, moves the feed's head, and then
/// answers every caller. Returns the jobs that did not run because the
/// transaction was lost before their turn: they run in the next one.
async fn commit_group(
    conn: &mut SqliteConnection,
    jobs: Vec<Box<dyn Job>>,
    feed_head: &watch::Sender<i64>,
    disk: &DiskSpace,
) -> Vec<Box<dyn Job>> {
    let recorders = metrics::recorders();
    let full = disk.is_full();
    let jobs: Vec<Box<dyn Job>> = jobs
        .into_iter()
        .filter_map(|job| {
            if job.abandoned() {
                // Nobody awaits it: running it would only delay the others.
                recorders.writer_abandoned.inc();
                None
            } else if full && !job.frees() {
                job.fail(Error::storage_full());
                None
            } else {
                Some(job)
            }
        })
        .collect();
    if jobs.is_empty() {
        return Vec::new();
    }
    if let Err(err) = begin(conn).await {
        let err = full_or(err, disk);
        tracing::error!(error = %err, "could not begin a write transaction");
        if matches!(err, Error::StorageFull(_)) {
            disk.filled("the database");
        }
        let answer = rolled_back(err);
        jobs.into_iter().for_each(|job| job.fail(answer.clone()));
        return Vec::new();
    }
    // A job alone in its group needs no savepoint: its transaction is its unit.
    let alone = jobs.len() == 1;
    let mut ran: Vec<Attempt> = Vec::with_capacity(jobs.len());
    // Set once the transaction is lost: the error that lost it.
    let mut lost: Option<Error> = None;
    let mut saw_full = false;
    let mut kept = 0;
    let mut carried = Vec::new();
    // How the savepoint of the previous job ends, not yet sent: it goes with
    // the next statement the writer itself sends.
    let mut closing: Option<Boundary> = None;
    let mut jobs = jobs.into_iter();
    for job in jobs.by_ref() {
        let savepoint = job.needs_savepoint() && !alone;
        let before = match (closing.take(), savepoint) {
            (None, false) => None,
            (None, true) => Some("SAVEPOINT job"),
            (Some(end), false) => Some(end.sql()),
            (Some(end), true) => Some(end.then_open()),
        };
        if let Some(sql) = before
            && let Err(err) = execute(conn, sql).await
        {
            // The job has not run: it goes on to the next transaction.
            carried.push(job);
            lost = Some(full_or(err, disk));
            break;
        }
        let (result, completion) = job.run(conn).await;
        let (failed, full) = match &result {
            Ok(()) => (false, false),
            Err(err) => {
                let is_full = matches!(full_or(err.clone(), disk), Error::StorageFull(_));
                (true, is_full && !matches!(err, Error::StorageFull(_)))
            }
        };
        saw_full |= full || matches!(result, Err(Error::StorageFull(_)));
        ran.push(Attempt {
            completion,
            failed,
            full,
        });
        kept += usize::from(!failed);
        match result {
            _ if savepoint => closing = Some(Boundary::after(!failed)),
            Err(err @ (Error::Internal(_) | Error::Unavailable(_) | Error::StorageFull(_))) => {
                // Without a savepoint, a database error may have undone more
                // than this job: the transaction is lost.
                lost = Some(err);
                break;
            }
            _ => {}
        }
    }
    carried.extend(jobs);
    if ran.is_empty()
        && let Some(err) = &lost
    {
        // Not one job could start: carrying them over could go on forever.
        let _ = execute(conn, "ROLLBACK").await;
        let answer = rolled_back(err.clone());
        carried.into_iter().for_each(|job| job.fail(answer.clone()));
        return Vec::new();
    }
    if lost.is_none() && kept == 0 {
        // Nothing to keep: the failed jobs' errors are the answers.
        if let Err(err) = execute(conn, "ROLLBACK").await {
            tracing::warn!(error = %err, "rolling back failed writes failed");
        }
        ran.into_iter().for_each(|ran| ran.deliver(Ok(())));
        return carried;
    }
    if lost.is_none() {
        match commit(conn, closing).await {
            Ok(head) => {
                ran.iter_mut().for_each(|ran| ran.completion.committed());
                feed_head.send_if_modified(|current| {
                    let moved = head > *current;
                    if moved {
                        *current = head;
                    }
                    moved
                });
            }
            Err(err) => lost = Some(full_or(err, disk)),
        }
    }
    let outcome = match lost {
        None => Ok(()),
        Some(err) => {
            saw_full |= matches!(err, Error::StorageFull(_));
            if saw_full {
                // Expected until space is freed; `disk` says so once.
                tracing::warn!(jobs = ran.len(), "a write found the disk full; rolled back");
            } else {
                tracing::error!(error = %err, jobs = ran.len(), carried = carried.len(), "group commit failed; rolled back");
            }
            let _ = execute(conn, "ROLLBACK").await;
            Err(if saw_full {
                Error::storage_full()
            } else {
                rolled_back(err)
            })
        }
    };
    if saw_full {
        disk.filled("the database");
    }
    for ran in ran {
        ran.deliver(outcome.clone());
    }
    carried
}

/// What the caller of a write rolled back by `err` is told: retry, unless
/// the disk is full (retrying at once would not help).
fn rolled_back(err: Error) -> Error {
    match err {
        Error::StorageFull(_) => err,
        Error::Unavailable(message) => Error::Unavailable(message),
        _ => Error::Unavailable("the write was rolled back; retry".into()),
    }
}

/// How a job's savepoint ends: kept when the job succeeded, rolled back
/// when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Boundary {
    Keep,
    Undo,
}

impl Boundary {
    fn after(ok: bool) -> Boundary {
        if ok { Boundary::Keep } else { Boundary::Undo }
    }

    fn sql(self) -> &'static str {
        match self {
            Boundary::Keep => "RELEASE job",
            Boundary::Undo => "ROLLBACK TO job; RELEASE job",
        }
    }

    /// Ends this savepoint and opens the next job's, in one round trip.
    fn then_open(self) -> &'static str {
        match self {
            Boundary::Keep => "RELEASE job; SAVEPOINT job",
            Boundary::Undo => "ROLLBACK TO job; RELEASE job; SAVEPOINT job",
        }
    }
}

/// Ends the last savepoint, reads the feed's head as this commit makes it
/// and commits, in one round trip; returns the head (0 before any change).
async fn commit(conn: &mut SqliteConnection, closing: Option<Boundary>) -> Result<i64> {
    let sql = match closing {
        None => concat!(feed_head_sql!(), "; COMMIT"),
        Some(Boundary::Keep) => concat!("RELEASE job; ", feed_head_sql!(), "; COMMIT"),
        Some(Boundary::Undo) => concat!(
            "ROLLBACK TO job; RELEASE job; ",
            feed_head_sql!(),
            "; COMMIT"
        ),
    };
    let rows = sqlx::raw_sql(sql)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?;
    match rows.first() {
        Some(row) => row.try_get::<i64, _>(0).map_err(db_error),
        None => Ok(0),
    }
}

/// Begins the group's transaction. Should an earlier failure have left a
/// transaction open, it is rolled back and the begin tried once more.
async fn begin(conn: &mut SqliteConnection) -> Result<()> {
    if execute(conn, "BEGIN IMMEDIATE").await.is_ok() {
        return Ok(());
    }
    let _ = execute(conn, "ROLLBACK").await;
    execute(conn, "BEGIN IMMEDIATE").await
}

async fn execute(conn: &mut SqliteConnection, sql: &'static str) -> Result<()> {
    sqlx::raw_sql(sql)
        .execute(&mut *conn)
        .await
        .map(|_| ())
        .map_err(db_error)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::pin::Pin;
    use std::task::Poll;

    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};

    use super::*;

    /// A writer on a fresh database in `dir`, with a table `t (x PRIMARY KEY)`.
    async fn writer_in(dir: &Path) -> (Writer, Arc<DiskSpace>) {
        let path = dir.join("engram.db");
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        let mut conn = SqliteConnection::connect_with(&options)
            .await
            .expect("open");
        super::super::migrate(&mut conn).await.expect("migrate");
        sqlx::raw_sql("CREATE TABLE t (x INTEGER PRIMARY KEY)")
            .execute(&mut conn)
            .await
            .expect("table");
        let disk = Arc::new(DiskSpace::new(&path));
        let (head, _) = watch::channel(0);
        let (writer, _done) =
            Writer::spawn(conn, head, WriteGate::default(), disk.clone()).expect("writer");
        (writer, disk)
    }

    /// Work that inserts `x` into `t`.
    fn insert(
        x: i64,
    ) -> impl for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<i64>> + Send + 'static
    {
        move |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO t (x) VALUES (?)")
                    .bind(x)
                    .execute(&mut *conn)
                    .await
                    .map_err(db_error)?;
                Ok(x)
            })
        }
    }

    /// The rows of `t`, read through the writer.
    async fn rows(writer: &Writer) -> Vec<i64> {
        writer
            .write(|conn| {
                Box::pin(async move {
                    sqlx::query_scalar("SELECT x FROM t ORDER BY x")
                        .fetch_all(&mut *conn)
                        .await
                        .map_err(db_error)
                })
            })
            .await
            .expect("read t")
    }

    /// Occupies the writer until the returned sender is used (or dropped),
    /// so that what is submitted meanwhile is committed as one group.
    async fn hold(writer: &Writer) -> (oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
        let (started_tx, started) = oneshot::channel();
        let (release, released) = oneshot::channel::<()>();
        let held = writer.clone();
        let task = tokio::spawn(async move {
            held.write(move |_conn| {
                Box::pin(async move {
                    let _ = started_tx.send(());
                    let _ = released.await;
                    Ok(())
                })
            })
            .await
            .expect("the holding job");
        });
        started.await.expect("the writer runs the holding job");
        (release, task)
    }

    /// Polls `future` once, so that a write is queued, and hands it back.
    async fn queued<F: Future + Unpin>(mut future: F) -> F {
        std::future::poll_fn(|cx| {
            let _ = Pin::new(&mut future).poll(cx);
            Poll::Ready(())
        })
        .await;
        future
    }

    #[tokio::test]
    async fn a_job_failing_with_a_constraint_error_mid_group_leaves_the_others_committed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (writer, _disk) = writer_in(dir.path()).await;
        let (release, held) = hold(&writer).await;
        let first = queued(Box::pin(writer.write(insert(1)))).await;
        let duplicate = queued(Box::pin(writer.write(insert(1)))).await;
        let third = queued(Box::pin(writer.write(insert(2)))).await;
        release.send(()).expect("release");
        held.await.expect("held");

        assert_eq!(first.await, Ok(1));
        let failed = duplicate.await.expect_err("a duplicate key");
        assert!(matches!(failed, Error::Internal(_)), "{failed:?}");
        assert_eq!(third.await, Ok(2));
        assert_eq!(rows(&writer).await, vec![1, 2]);
        writer.close();
    }

    #[tokio::test]
    async fn a_lost_group_tells_the_jobs_that_ran_to_retry_and_runs_the_rest_in_a_new_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (writer, _disk) = writer_in(dir.path()).await;
        let (release, held) = hold(&writer).await;
        // Without savepoints, the failing job loses the whole transaction.
        let innocent = queued(Box::pin(writer.write_atomic(insert(1)))).await;
        let culprit = queued(Box::pin(writer.write_atomic(insert(1)))).await;
        let later = queued(Box::pin(writer.write_atomic(insert(3)))).await;
        release.send(()).expect("release");
        held.await.expect("held");

        let rolled_back = innocent.await.expect_err("rolled back with the culprit");
        assert!(
            matches!(rolled_back, Error::Unavailable(_)),
            "retryable, never INTERNAL: {rolled_back:?}"
        );
        let own = culprit.await.expect_err("the culprit's own error");
        assert!(matches!(own, Error::Internal(_)), "{own:?}");
        assert_eq!(later.await, Ok(3), "run again in a fresh transaction");
        assert_eq!(rows(&writer).await, vec![3]);

        // The innocent write, retried, succeeds.
        assert_eq!(writer.write_atomic(insert(1)).await, Ok(1));
        assert_eq!(rows(&writer).await, vec![1, 3]);
        writer.close();
    }

    #[tokio::test]
    async fn a_write_whose_caller_has_gone_is_skipped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (writer, _disk) = writer_in(dir.path()).await;
        let (release, held) = hold(&writer).await;
        let abandoned = queued(Box::pin(writer.write(insert(7)))).await;
        let kept = queued(Box::pin(writer.write(insert(8)))).await;
        drop(abandoned);
        release.send(()).expect("release");
        held.await.expect("held");

        assert_eq!(kept.await, Ok(8));
        assert_eq!(rows(&writer).await, vec![8], "7 was never written");
        writer.close();
    }

    #[tokio::test]
    async fn a_write_finding_the_queue_full_is_unavailable_after_a_bounded_wait() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (writer, _disk) = writer_in(dir.path()).await;
        let (release, held) = hold(&writer).await;
        let mut waiting = Vec::with_capacity(QUEUE_DEPTH);
        for x in 0..QUEUE_DEPTH {
            let x = i64::try_from(x).expect("small");
            waiting.push(queued(Box::pin(writer.write(insert(x)))).await);
        }
        // The queue is full: this one waits QUEUE_WAIT, then gives up.
        let turned_away = writer.write(insert(-1)).await.expect_err("no room");
        assert!(
            matches!(&turned_away, Error::Unavailable(m) if m.contains("too many writes")),
            "{turned_away:?}"
        );
        release.send(()).expect("release");
        held.await.expect("held");
        for write in waiting {
            write.await.expect("a queued write commits");
        }
        assert_eq!(rows(&writer).await.len(), QUEUE_DEPTH, "-1 was not written");
        writer.close();
    }

    #[tokio::test]
    async fn on_a_full_disk_writes_that_add_are_refused_and_deletes_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (writer, disk) = writer_in(dir.path()).await;
        assert_eq!(writer.write(insert(1)).await, Ok(1));
        disk.filled("a test");

        let refused = writer.write(insert(2)).await.expect_err("full");
        assert!(matches!(refused, Error::StorageFull(_)), "{refused:?}");
        let deleted = writer
            .write_then(
                |conn| {
                    Box::pin(async move {
                        sqlx::query("DELETE FROM t WHERE x = 1")
                            .execute(&mut *conn)
                            .await
                            .map_err(db_error)
                            .map(|done| done.rows_affected())
                    })
                },
                true,
                Box::new(|_| {}),
            )
            .await;
        assert_eq!(deleted, Ok(1));

        // The temp dir has room: the writer notices and takes writes again.
        assert!(disk.try_resume());
        assert_eq!(writer.write(insert(2)).await, Ok(2));
        writer.close();
    }
}
