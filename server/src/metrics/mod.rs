//! Prometheus metrics (DESIGN §8): the conventional gRPC server metrics
//! (`grpc_server_*`, recorded by the layer in [`crate::grpc::metrics`]) and
//! Engram's own (`engram_*`), served by [`http`] when `--metrics-listen` is
//! set.
//!
//! Engram's own are recorded deep inside the store's writer thread, the
//! embedder, the LLM client and the retention task, so they are one
//! process-wide set ([`recorders`]) rather than a handle threaded through
//! every constructor. A record is an atomic add (a histogram's, a short
//! uncontended lock), whether or not anyone scrapes; what is measured only
//! when scraped (database size, memories per namespace, index lag) is read
//! by the [`exporter`].

pub mod exporter;
pub mod http;

use std::sync::LazyLock;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::openai::ApiError;

/// A metric's one label, with a value from a fixed set.
type OneLabel = [(&'static str, &'static str); 1];

/// How a call to a model (the LLM or the embedder) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// It answered usably.
    Ok,
    /// It could not be reached, or answered with an HTTP error.
    Error,
    /// It did not answer in time.
    Timeout,
    /// It refused the input (HTTP 400, 413 or 422; a local model failing on
    /// it): asking again cannot help.
    Refused,
    /// It answered, but not what was asked for (not JSON, wrong shape).
    BadReply,
    /// It was not asked: it had failed moments before (the embedder), or
    /// too many calls were in flight for too long (the LLM).
    Skipped,
}

impl CallOutcome {
    /// The `outcome` label.
    fn label(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Error => "error",
            CallOutcome::Timeout => "timeout",
            CallOutcome::Refused => "refused",
            CallOutcome::BadReply => "bad_reply",
            CallOutcome::Skipped => "skipped",
        }
    }

    /// How a call that failed with `err` ended.
    pub fn of_api_error(err: &ApiError) -> CallOutcome {
        match err {
            ApiError::Timeout(_) => CallOutcome::Timeout,
            ApiError::Status(400 | 413 | 422) => CallOutcome::Refused,
            ApiError::Transport(_) | ApiError::Status(_) => CallOutcome::Error,
            ApiError::BadJson(_) | ApiError::Schema(_) => CallOutcome::BadReply,
            ApiError::Busy(..) => CallOutcome::Skipped,
        }
    }
}

/// Calls of one kind counted by outcome; every possible outcome's series
/// exists from the start, at zero.
#[derive(Debug)]
pub struct CallOutcomes {
    family: Family<OneLabel, Counter>,
}

impl CallOutcomes {
    fn new(possible: &[CallOutcome]) -> CallOutcomes {
        let family = Family::default();
        for outcome in possible {
            family.get_or_create_owned(&[("outcome", outcome.label())]);
        }
        CallOutcomes { family }
    }

    /// Counts one call that ended with `outcome`.
    pub fn record(&self, outcome: CallOutcome) {
        self.family
            .get_or_create(&[("outcome", outcome.label())])
            .inc();
    }
}

/// What the retention task purges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purged {
    /// Memories past their expire time.
    Memory,
    /// Request ids older than `--request-id-ttl`.
    RequestId,
}

/// Why a call was shed (refused unread with RESOURCE_EXHAUSTED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShedReason {
    /// `--max-concurrent-calls` calls were in flight.
    Concurrency,
    /// The caller's API key had used up its `--rate-limit-per-key`.
    RateLimit,
    /// The caller's API key held its share of the server
    /// (`--max-calls-per-key`, `--max-streams-per-key`).
    KeyShare,
}

impl ShedReason {
    /// The `reason` label.
    fn label(self) -> &'static str {
        match self {
            ShedReason::Concurrency => "concurrency",
            ShedReason::RateLimit => "rate_limit",
            ShedReason::KeyShare => "key_share",
        }
    }
}

/// Engram's own metrics that are recorded as things happen.
#[derive(Debug)]
pub struct Recorders {
    /// Writes waiting for the writer: queued, or waiting for room in the queue.
    pub writer_queue: Gauge,
    /// Jobs committed together in one transaction.
    pub writer_batch: Histogram,
    /// One group commit, from BEGIN to COMMIT.
    pub writer_commit: Histogram,
    /// engram.v1 calls in flight, as `--max-concurrent-calls` counts them.
    pub calls_in_flight: Gauge,
    /// 1 while the disk is full and writes that add data are refused.
    pub storage_full: Gauge,
    /// Batches a Forget deleted in, each committed on its own.
    pub forget_batches: Counter,
    /// Writes skipped by the writer because their caller had gone.
    pub writer_abandoned: Counter,
    /// Transactions run again after losing a race with a concurrent one
    /// (PostgreSQL: a deadlock, a unique key inserted meanwhile).
    pub transaction_retries: Counter,
    /// Reads of the change feed by WatchMemories watchers.
    pub watch_reads: Counter,
    /// Calls to the LLM.
    pub llm: CallOutcomes,
    /// Calls to the embedder.
    pub embedder: CallOutcomes,
    purged: Family<OneLabel, Counter>,
    retention_runs: Family<OneLabel, Counter>,
    shed: Family<OneLabel, Counter>,
}

/// The largest group the writer commits (`writer::MAX_GROUP`) is within the
/// last bucket of [`Recorders::writer_batch`]: 1, 2, 4 … 256.
const BATCH_BUCKETS: u16 = 9;
/// Commit time buckets: 100 µs, 200 µs … about 1.6 s.
const COMMIT_BUCKETS: (f64, u16) = (100e-6, 15);

impl Recorders {
    fn new() -> Recorders {
        let purged = Family::default();
        for kind in [Purged::Memory, Purged::RequestId] {
            purged.get_or_create_owned(&[("kind", purged_label(kind))]);
        }
        let retention_runs = Family::default();
        for outcome in ["ok", "error"] {
            retention_runs.get_or_create_owned(&[("outcome", outcome)]);
        }
        let shed = Family::default();
        for reason in [
            ShedReason::Concurrency,
            ShedReason::RateLimit,
            ShedReason::KeyShare,
        ] {
            shed.get_or_create_owned(&[("reason", reason.label())]);
        }
        Recorders {
            writer_queue: Gauge::default(),
            calls_in_flight: Gauge::default(),
            writer_batch: Histogram::new(exponential_buckets(1.0, 2.0, BATCH_BUCKETS)),
            writer_commit: Histogram::new(exponential_buckets(
                COMMIT_BUCKETS.0,
                2.0,
                COMMIT_BUCKETS.1,
            )),
            storage_full: Gauge::default(),
            forget_batches: Counter::default(),
            writer_abandoned: Counter::default(),
            transaction_retries: Counter::default(),
            watch_reads: Counter::default(),
            llm: CallOutcomes::new(&[
                CallOutcome::Ok,
                CallOutcome::Error,
                CallOutcome::Timeout,
                CallOutcome::Refused,
                CallOutcome::BadReply,
                CallOutcome::Skipped,
            ]),
            embedder: CallOutcomes::new(&[
                CallOutcome::Ok,
                CallOutcome::Error,
                CallOutcome::Timeout,
                CallOutcome::Refused,
                CallOutcome::BadReply,
                CallOutcome::Skipped,
            ]),
            purged,
            retention_runs,
            shed,
        }
    }

    /// Times one group commit of `jobs` jobs.
    pub fn committed(&self, jobs: usize, took: Duration) {
        self.writer_batch.observe(jobs as f64);
        self.writer_commit.observe(took.as_secs_f64());
    }

    /// Counts `count` rows of `kind` purged.
    pub fn purged(&self, kind: Purged, count: usize) {
        self.purged
            .get_or_create(&[("kind", purged_label(kind))])
            .inc_by(count as u64);
    }

    /// Counts one retention run, which failed or not.
    pub fn retention_ran(&self, ok: bool) {
        let outcome = if ok { "ok" } else { "error" };
        self.retention_runs
            .get_or_create(&[("outcome", outcome)])
            .inc();
    }

    /// Counts one call shed for `reason`.
    pub fn shed(&self, reason: ShedReason) {
        self.shed.get_or_create(&[("reason", reason.label())]).inc();
    }

    /// Registers them all (clones share their values) with `registry`.
    fn register(&self, registry: &mut Registry) {
        registry.register(
            "engram_writer_queue_depth",
            "Writes waiting for the database's single writer",
            self.writer_queue.clone(),
        );
        registry.register(
            "engram_writer_batch_size",
            "Writes committed together in one transaction by the single writer (group commit)",
            self.writer_batch.clone(),
        );
        registry.register(
            "engram_writer_commit_seconds",
            "Time of one group commit, from BEGIN to COMMIT",
            self.writer_commit.clone(),
        );
        registry.register(
            "engram_storage_full",
            "1 while the disk is full: writes that add data are refused, reads and deletes served",
            self.storage_full.clone(),
        );
        registry.register(
            "engram_forget_batches",
            "Batches a Forget deleted in, each committed on its own so other writes interleave",
            self.forget_batches.clone(),
        );
        registry.register(
            "engram_writer_abandoned",
            "Writes the writer skipped because their caller had gone (cancelled, deadline passed)",
            self.writer_abandoned.clone(),
        );
        registry.register(
            "engram_transaction_retries",
            "Transactions run again after losing a race with a concurrent writer (PostgreSQL: deadlock, unique key inserted meanwhile, serialization failure)",
            self.transaction_retries.clone(),
        );
        registry.register(
            "engram_watch_feed_reads",
            "Reads of the change feed by WatchMemories watchers (each wakes only on a change of its namespace)",
            self.watch_reads.clone(),
        );
        registry.register(
            "engram_llm_calls",
            "Calls to the LLM by outcome",
            self.llm.family.clone(),
        );
        registry.register(
            "engram_embedder_calls",
            "Calls to the embedder by outcome",
            self.embedder.family.clone(),
        );
        registry.register(
            "engram_retention_purged",
            "Rows purged by retention: expired memories, request ids past their time to live",
            self.purged.clone(),
        );
        registry.register(
            "engram_retention_runs",
            "Retention runs, by whether they finished",
            self.retention_runs.clone(),
        );
        registry.register(
            "engram_calls_in_flight",
            "engram.v1 calls in flight (open streams included), as --max-concurrent-calls counts them",
            self.calls_in_flight.clone(),
        );
        registry.register(
            "engram_shed_calls",
            "Calls refused unread with RESOURCE_EXHAUSTED, by reason: too many in flight, or a key's rate limit",
            self.shed.clone(),
        );
    }
}

fn purged_label(kind: Purged) -> &'static str {
    match kind {
        Purged::Memory => "memory",
        Purged::RequestId => "request_id",
    }
}

/// The process's recorders.
pub fn recorders() -> &'static Recorders {
    static RECORDERS: LazyLock<Recorders> = LazyLock::new(Recorders::new);
    &RECORDERS
}
