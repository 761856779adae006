//! The single writer connection and its group commit.
//!
//! SQLite allows one writer at a time, so instead of letting connections
//! contend for the lock, every write is a job sent to one task that owns the
//! write connection. The task takes whatever jobs are waiting, runs each inside
//! its own savepoint of one transaction, commits once, and only then answers
//! each caller: a write is acknowledged only after it is durable, and many
//! concurrent writes share one commit (one fsync). Between the commit and the
//! answers it moves the change feed's head, so whoever follows the feed (the
//! search indexes) knows of a write before its caller does.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::FutureExt as _;
use sqlx::{Connection as _, SqliteConnection};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::{db_error, memories};
use crate::error::{Error, Result};

/// The most jobs committed together.
const MAX_GROUP: usize = 256;
/// How many jobs may wait for the writer before senders wait too.
const QUEUE_DEPTH: usize = 1024;

pub(super) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
/// Delivers a job's result once the transaction's fate is known.
type Completion = Box<dyn FnOnce(Result<()>) + Send>;

/// A unit of work for the write connection.
trait Job: Send {
    /// Runs the work; says whether it succeeded (to keep or roll back its
    /// savepoint) and returns how to deliver its result after the commit.
    fn run<'c>(
        self: Box<Self>,
        conn: &'c mut SqliteConnection,
    ) -> BoxFuture<'c, (bool, Completion)>;
    /// Answers the caller with `err` without running the work.
    fn fail(self: Box<Self>, err: Error);
}

struct Work<T, F> {
    work: F,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> Job for Work<T, F>
where
    T: Send + 'static,
    F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
{
    fn run<'c>(
        self: Box<Self>,
        conn: &'c mut SqliteConnection,
    ) -> BoxFuture<'c, (bool, Completion)> {
        let Work { work, reply } = *self;
        Box::pin(async move {
            // A panic in one job must not take the writer (and so every later
            // write) down with it: it fails that job, whose savepoint is then
            // rolled back.
            let outcome = AssertUnwindSafe(async move { work(conn).await })
                .catch_unwind()
                .await
                .unwrap_or_else(|_| Err(Error::Internal("a write job panicked".into())));
            let ok = outcome.is_ok();
            let deliver: Completion = Box::new(move |commit: Result<()>| {
                // The caller may have gone away; its result is then nobody's concern.
                let _ = reply.send(commit.and(outcome));
            });
            (ok, deliver)
        })
    }

    fn fail(self: Box<Self>, err: Error) {
        let _ = self.reply.send(Err(err));
    }
}

/// A handle to the writer task. The task ends once [`Writer::close`] is
/// called (or the handle dropped) and the queue is empty.
pub(super) struct Writer {
    jobs: mpsc::Sender<Box<dyn Job>>,
    closing: Arc<Notify>,
}

impl Writer {
    /// Starts the writer task on `conn`; it moves `feed_head` after every
    /// commit that changed a memory.
    pub(super) fn spawn(
        conn: SqliteConnection,
        feed_head: watch::Sender<i64>,
    ) -> (Writer, JoinHandle<()>) {
        let (jobs, queue) = mpsc::channel(QUEUE_DEPTH);
        let closing = Arc::new(Notify::new());
        let task = tokio::spawn(run(conn, queue, closing.clone(), feed_head));
        (Writer { jobs, closing }, task)
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
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Box::new(Work { work, reply }))
            .await
            .map_err(|_| shutting_down())?;
        answer.await.map_err(|_| shutting_down())?
    }

    /// Queues `work` without waiting for it; drops it when the queue is full.
    /// For bookkeeping that may be lost, such as access counters.
    pub(super) fn write_detached<F>(&self, work: F)
    where
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<()>> + Send + 'static,
    {
        let (reply, _ignored) = oneshot::channel();
        if self.jobs.try_send(Box::new(Work { work, reply })).is_err() {
            tracing::debug!("write queue full; dropped a detached write");
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
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    loop {
        tokio::select! {
            received = queue.recv_many(&mut group, MAX_GROUP) => {
                if received == 0 {
                    break; // closed and drained
                }
                commit_group(&mut conn, group.drain(..), &feed_head).await;
            }
            () = closing.notified() => queue.close(),
        }
    }
    if let Err(err) = conn.close().await {
        tracing::warn!(error = %err, "closing the write connection failed");
    }
}

/// Runs `jobs` in one transaction, each in its own savepoint, commits, moves
/// the feed's head, and then answers every caller.
async fn commit_group(
    conn: &mut SqliteConnection,
    jobs: impl Iterator<Item = Box<dyn Job>>,
    feed_head: &watch::Sender<i64>,
) {
    if let Err(err) = begin(conn).await {
        tracing::error!(error = %err, "could not begin a write transaction");
        jobs.for_each(|job| job.fail(err.clone()));
        return;
    }
    let mut completions = Vec::new();
    let mut outcome = Ok(());
    for job in jobs {
        if outcome.is_err() {
            // The transaction is already lost; the jobs that ran will hear its
            // error through their completions.
            job.fail(Error::Unavailable(
                "the write transaction failed; retry".into(),
            ));
            continue;
        }
        outcome = run_in_savepoint(conn, job, &mut completions).await;
    }
    // What this commit makes the feed's head, read inside the transaction.
    let mut head = 0;
    if outcome.is_ok() {
        outcome = match memories::feed_head(conn).await {
            Ok(read) => {
                head = read;
                execute(conn, "COMMIT").await
            }
            Err(err) => Err(err),
        };
    }
    match &outcome {
        Ok(()) => {
            feed_head.send_if_modified(|current| {
                let moved = head > *current;
                if moved {
                    *current = head;
                }
                moved
            });
        }
        Err(err) => {
            tracing::error!(error = %err, jobs = completions.len(), "group commit failed");
            let _ = execute(conn, "ROLLBACK").await;
        }
    }
    for deliver in completions {
        deliver(outcome.clone());
    }
}

/// Runs one job inside a savepoint that is kept when the job succeeds and
/// rolled back when it fails. An error here is the transaction's, not the job's.
async fn run_in_savepoint(
    conn: &mut SqliteConnection,
    job: Box<dyn Job>,
    completions: &mut Vec<Completion>,
) -> Result<()> {
    if let Err(err) = execute(conn, "SAVEPOINT job").await {
        job.fail(err.clone());
        return Err(err);
    }
    let (ok, deliver) = job.run(conn).await;
    completions.push(deliver);
    if !ok {
        execute(conn, "ROLLBACK TO job").await?;
    }
    execute(conn, "RELEASE job").await
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
