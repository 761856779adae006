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

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use futures_util::FutureExt as _;
use sqlx::{Connection as _, Row as _, SqliteConnection};
use tokio::sync::{Notify, mpsc, oneshot, watch};

use super::checkpoint::WriteGate;
use super::db_error;
use super::memories::feed_head_sql;
use crate::error::{Error, Result};
use crate::metrics;

/// The most jobs committed together.
const MAX_GROUP: usize = 256;
/// How many jobs may wait for the writer before senders wait too.
const QUEUE_DEPTH: usize = 1024;

pub(super) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
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
}

/// A handle to the writer task. The task ends once [`Writer::close`] is
/// called (or every handle dropped) and the queue is empty.
#[derive(Clone)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Box<dyn Job>>,
    closing: Arc<Notify>,
}

impl Writer {
    /// Starts the writer task on `conn`; it moves `feed_head` after every
    /// commit that changed a memory, and holds `gate` while it writes.
    ///
    /// The task runs on a thread of its own: every statement it sends is a
    /// round trip to the connection's thread, and on the server's runtime
    /// each answer would wait behind every request ready to run, which made
    /// the writer (and so every write) wait most of its time.
    pub(super) fn spawn(
        conn: SqliteConnection,
        feed_head: watch::Sender<i64>,
        gate: WriteGate,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        let (jobs, queue) = mpsc::channel(QUEUE_DEPTH);
        let closing = Arc::new(Notify::new());
        let (finished, done) = oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let notified = closing.clone();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                runtime.block_on(run(conn, queue, notified, feed_head, gate));
                let _ = finished.send(());
            })?;
        Ok((Writer { jobs, closing }, done))
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
        self.submit(work, true, None).await
    }

    /// Like [`Writer::write`], for work that fails, if at all, before it
    /// writes or with a database error (an `Internal` or `Unavailable`
    /// error, after which the whole group is rolled back and retried by its
    /// callers): it runs without a savepoint of its own.
    pub(super) async fn write_atomic<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.submit(work, false, None).await
    }

    /// Like [`Writer::write_atomic`], and `on_commit` runs with the result
    /// once it is committed, before the change feed's head moves past it.
    pub(super) async fn write_atomic_then<T, F>(&self, work: F, on_commit: OnCommit<T>) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.submit(work, false, Some(on_commit)).await
    }

    async fn submit<T, F>(
        &self,
        work: F,
        savepoint: bool,
        on_commit: Option<OnCommit<T>>,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let waiting = Waiting::start();
        self.jobs
            .send(Box::new(Work {
                work,
                reply,
                savepoint,
                on_commit,
            }))
            .await
            .map_err(|_| shutting_down())?;
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
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    loop {
        tokio::select! {
            received = queue.recv_many(&mut group, MAX_GROUP) => {
                if received == 0 {
                    break; // closed and drained
                }
                let recorders = metrics::recorders();
                recorders.writer_queue.dec_by(i64::try_from(received).unwrap_or(i64::MAX));
                let _writing = gate.lock().await;
                let started = Instant::now();
                commit_group(&mut conn, std::mem::take(&mut group), &feed_head).await;
                recorders.committed(received, started.elapsed());
            }
            () = closing.notified() => queue.close(),
        }
    }
    if let Err(err) = conn.close().await {
        tracing::warn!(error = %err, "closing the write connection failed");
    }
}

/// Runs `jobs` in one transaction, commits, moves the feed's head, and then
/// answers every caller.
async fn commit_group(
    conn: &mut SqliteConnection,
    jobs: Vec<Box<dyn Job>>,
    feed_head: &watch::Sender<i64>,
) {
    if let Err(err) = begin(conn).await {
        tracing::error!(error = %err, "could not begin a write transaction");
        jobs.into_iter().for_each(|job| job.fail(err.clone()));
        return;
    }
    // A job alone in its group needs no savepoint: its transaction is its unit.
    let alone = jobs.len() == 1;
    let mut completions = Vec::with_capacity(jobs.len());
    let mut outcome = Ok(());
    let mut kept = 0;
    // How the savepoint of the previous job ends, not yet sent: it goes with
    // the next statement the writer itself sends.
    let mut closing: Option<Boundary> = None;
    for job in jobs {
        if outcome.is_err() {
            // The transaction is already lost; the jobs that ran will hear its
            // error through their completions.
            job.fail(Error::Unavailable(
                "the write transaction failed; retry".into(),
            ));
            continue;
        }
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
            job.fail(err.clone());
            outcome = Err(err);
            continue;
        }
        let (result, deliver) = job.run(conn).await;
        completions.push(deliver);
        kept += usize::from(result.is_ok());
        match result {
            _ if savepoint => closing = Some(Boundary::after(result.is_ok())),
            Err(Error::Internal(_) | Error::Unavailable(_)) => {
                // Without a savepoint, a database error may have undone more
                // than this job: the transaction is lost.
                outcome = Err(Error::Unavailable(
                    "the write transaction failed; retry".into(),
                ));
            }
            _ => {}
        }
    }
    if outcome.is_ok() && kept == 0 {
        // Nothing to keep: the failed jobs' errors are the answers.
        if let Err(err) = execute(conn, "ROLLBACK").await {
            tracing::warn!(error = %err, "rolling back failed writes failed");
        }
        completions.into_iter().for_each(|ran| ran.deliver(Ok(())));
        return;
    }
    if outcome.is_ok() {
        outcome = match commit(conn, closing).await {
            Ok(head) => {
                completions.iter_mut().for_each(|ran| ran.committed());
                feed_head.send_if_modified(|current| {
                    let moved = head > *current;
                    if moved {
                        *current = head;
                    }
                    moved
                });
                Ok(())
            }
            Err(err) => Err(err),
        };
    }
    if let Err(err) = &outcome {
        tracing::error!(error = %err, jobs = completions.len(), "group commit failed");
        let _ = execute(conn, "ROLLBACK").await;
    }
    for ran in completions {
        ran.deliver(outcome.clone());
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
