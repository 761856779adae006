//! Benchmarks of the real server, printing numbers (never asserting timings):
//!
//! * `locomo`: retrieval quality, evidence recall@k on the LoCoMo dev split in
//!   `../shared/eval/locomo-dev`, as its README defines it;
//! * `load`: throughput and latency beside the empty-call baseline
//!   (grpc.health Check): creates at 1 and 64 in flight, search and
//!   BuildContext latency as a namespace grows (10k, 100k, optionally 1M),
//!   beside a small and an empty namespace, restart time and memory; on
//!   SQLite, or on PostgreSQL with one server or several replicas (then
//!   also the cross-replica visibility lag);
//! * `metrics`: the cost of `--metrics-listen`, Check and CreateMemory on a
//!   server with metrics beside one without, and the cost of a scrape.
//! * `transfer`: backup (under writes), export, import and the first start on
//!   the import, for a database of 100k memories.
//!
//! Run it in release mode; it builds and starts a release `engram-server`:
//! `cargo run --release -p engram-tests --bin engram-bench -- locomo`.
//!
//! One module per subcommand (`locomo`, `load`, `metrics`, `overload`,
//! `versions`, `transfer`, `bounds`, `cli`); `compare` runs two servers in
//! alternating rounds for `metrics`, `overload` and `versions`, and
//! `throughput` the rounds themselves. Shared: synthetic `text`, the
//! `workload` requests, `timing` statistics, the server's `footprint` and
//! waiting for its `embedding`.

mod bounds;
mod cli;
mod compare;
mod embedding;
mod footprint;
mod load;
mod locomo;
mod metrics;
mod overload;
mod text;
mod throughput;
mod timing;
mod transfer;
mod versions;
mod workload;

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Parser, Subcommand};
use engram_client::proto::MemoryType;
use engram_tests::Server;

use crate::bounds::bounds;
use crate::cli::cli;
use crate::load::{Load, load};
use crate::locomo::locomo;
use crate::metrics::metrics_cost;
use crate::overload::overload_cost;
use crate::transfer::transfer;
use crate::versions::versions;

/// Benchmarks of the Engram server.
#[derive(Parser)]
#[command(name = "engram-bench", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// How two servers are compared, round by round (`metrics`, `overload`).
#[derive(clap::Args)]
struct Rounds {
    /// Check calls per server, over all rounds.
    #[arg(long, default_value_t = 100_000)]
    checks: usize,
    /// Creates per server at `--concurrency` in flight, over all rounds.
    #[arg(long, default_value_t = 40_000)]
    concurrent_writes: usize,
    /// Rounds per server; the medians are reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
    rounds: u16,
    /// SearchMemories per server at `--concurrency` in flight (10 hits
    /// among the memories written so far), over all rounds; 0 for none.
    /// When not 0, the one-client calls search too, a new query each.
    #[arg(long, default_value_t = 0)]
    searches: usize,
    /// Calls of each kind measured one at a time per server.
    #[arg(long, default_value_t = 2_000)]
    sequential: usize,
    /// Requests in flight in the throughput rounds.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Run this engram-server binary instead of the workspace's.
    #[arg(long)]
    server_binary: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Evidence recall@1/5/10/20 of SearchMemories on the LoCoMo dev split.
    Locomo {
        /// Folder holding the LoCoMo conversation files (*.json).
        #[arg(long, default_value = "../shared/eval/locomo-dev")]
        data: PathBuf,
        /// Search by meaning too, with this `--embedder` of the server (e.g.
        /// `local:target/models/all-MiniLM-L6-v2`): prints lexical, dense-only
        /// and hybrid rows, and the embedding rate.
        #[arg(long)]
        embedder: Option<String>,
        /// Run this engram-server binary instead of the workspace's.
        #[arg(long)]
        server_binary: Option<PathBuf>,
        /// Store the turns as FACTs rather than EVENTs (which contradiction
        /// detection never touches), so that a turn saying otherwise than
        /// an earlier one invalidates it and search leaves it out.
        #[arg(long)]
        as_facts: bool,
        /// Write each question's ranking to this file, a JSON object per
        /// line (mode, category, question, evidence ranks and contents, the
        /// top ten hits): what the misses look like.
        #[arg(long)]
        rankings: Option<PathBuf>,
    },
    /// Throughput and latency against one server, side by side with the
    /// empty-call baseline (grpc.health Check): creates at 1 and at
    /// `--concurrency` in flight, then search and BuildContext latency as one
    /// namespace grows through `--sizes`, beside a small and an empty
    /// namespace, and restart time and memory at the largest size.
    Load {
        /// Sizes of the big namespace at which latency is measured.
        #[arg(long, value_delimiter = ',', default_values_t = [10_000, 100_000])]
        sizes: Vec<usize>,
        /// Also measure at 1,000,000 memories.
        #[arg(long)]
        million: bool,
        /// Memories in the small namespace beside the big one.
        #[arg(long, default_value_t = 100)]
        small: usize,
        /// grpc.health Check calls measured at `--concurrency` in flight, over
        /// all rounds.
        #[arg(long, default_value_t = 150_000)]
        checks: usize,
        /// Rounds of Check, then creates, alternating; the medians are reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
        rounds: u16,
        /// Creates measured one at a time.
        #[arg(long, default_value_t = 2_000)]
        sequential_writes: usize,
        /// Creates measured with `--concurrency` in flight, over all rounds.
        #[arg(long, default_value_t = 100_000)]
        concurrent_writes: usize,
        /// Requests in flight in the concurrent phases.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
        /// Searches measured per namespace and size (one client).
        #[arg(long, default_value_t = 500)]
        searches: usize,
        /// BuildContext calls measured per size (one client).
        #[arg(long, default_value_t = 200)]
        contexts: usize,
        /// Search by meaning too, with this `--embedder` of the server (e.g.
        /// `local:target/models/all-MiniLM-L6-v2`): after each fill the bench
        /// waits until every memory is embedded and prints the rate; each
        /// query is embedded by its first search in the big namespace (the
        /// small and empty ones and BuildContext find its vector cached).
        /// Embedding is slow next to writing: pair it with fewer writes, e.g.
        /// `--concurrent-writes 10000 --sequential-writes 1000`.
        #[arg(long)]
        embedder: Option<String>,
        /// Run this engram-server binary instead of the workspace's (e.g. an
        /// older build, for before/after numbers from one bench).
        #[arg(long)]
        server_binary: Option<PathBuf>,
        /// Keep the data in PostgreSQL instead of a SQLite file: the URL of
        /// a PostgreSQL server and a role that may create databases
        /// (`postgres://user@host:port/postgres`); the bench makes a fresh
        /// database there and drops it at the end. `scripts/postgres.sh`
        /// starts a throwaway server and puts its URL in
        /// $ENGRAM_TEST_POSTGRES_URL.
        #[arg(long, value_name = "POSTGRES_URL")]
        database: Option<String>,
        /// Servers on the one PostgreSQL database, as replicas behind a
        /// round-robin load balancer: calls and fills go to each in turn,
        /// and the bench measures how soon a write through one is found by
        /// search through another. More than 1 needs `--database`.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=16))]
        replicas: u16,
        /// Writes timed for the cross-replica visibility lag.
        #[arg(long, default_value_t = 200)]
        lag_writes: usize,
        /// Fill the big and small namespaces with EVENTs instead of FACTs.
        /// An EVENT is never checked for contradictions, so with
        /// `--embedder` the fill is not slowed by embedding each write for
        /// the check: use it to reach 100,000 embedded memories in minutes
        /// (the searches read the same kind of index either way).
        #[arg(long)]
        fill_events: bool,
    },
    /// The cost of metrics: grpc.health Check and CreateMemory on a server
    /// with `--metrics-listen` beside one without, in alternating rounds
    /// (throughput at `--concurrency` in flight, then latency with one
    /// client), with the ratios; then the time of one scrape.
    Metrics(Rounds),
    /// The cost of overload protection on the hot path: grpc.health Check
    /// (never shed: the control) and CreateMemory on a server with
    /// `--max-concurrent-calls` at its default beside one with the limit
    /// effectively off (never reached), in alternating rounds as `metrics`
    /// runs them, with the ratios.
    Overload(Rounds),
    /// Another build beside this one: grpc.health Check, CreateMemory and
    /// SearchMemories at `--concurrency` in flight (then one client's
    /// latency) on a server of each, in alternating rounds, with the ratios
    /// and each call's share of its server's Check. Build the baseline
    /// from another commit (e.g. in a `git worktree` with its own
    /// CARGO_TARGET_DIR) and pass its engram-server.
    Versions {
        #[command(flatten)]
        rounds: Rounds,
        /// The other build's engram-server binary.
        #[arg(long)]
        baseline: PathBuf,
        /// Run both builds on PostgreSQL, each on a fresh database made on
        /// this server (a role that may create databases:
        /// `postgres://user@host:port/postgres`) and dropped at the end;
        /// else each on a SQLite file.
        #[arg(long, value_name = "POSTGRES_URL")]
        database: Option<String>,
        /// Give both servers this `--embedder` (e.g.
        /// `local:target/models/all-MiniLM-L6-v2`); with `--searches` the
        /// one-client searches then embed each query. Creates embed their
        /// content for the contradiction check: pair it with fewer writes.
        #[arg(long)]
        embedder: Option<String>,
    },
    /// The operator commands on a database of `--memories` memories: a
    /// backup while `--concurrency` creates stay in flight (and how many of
    /// them went through meanwhile), an export, an import into a fresh
    /// database, and the start of a server on it (which indexes the import);
    /// time and size of each.
    Transfer {
        /// Memories in the database, spread over `--namespaces`.
        #[arg(long, default_value_t = 100_000)]
        memories: usize,
        /// Namespaces they are spread over.
        #[arg(long, default_value_t = 4)]
        namespaces: usize,
        /// Creates in flight during the backup.
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
    },
    /// What the hardening issue bounds: the server's peak memory (VmHWM)
    /// growth over 4 concurrent ListMemories (page_size 1000) and then 4
    /// concurrent SearchMemories (limit 100) across 1,000 memories at the
    /// size limits; and the time of Classify on a 64 KiB single line of
    /// "pw 1234 " beside 64 KiB of prose, with the ratio.
    Bounds {
        /// Memories at the size limits in the namespace.
        #[arg(long, default_value_t = 1_000)]
        memories: usize,
        /// Classify calls timed per text.
        #[arg(long, default_value_t = 20)]
        classifies: usize,
        /// Run this engram-server binary instead of the workspace's (e.g. an
        /// older build, for before/after numbers).
        #[arg(long)]
        server_binary: Option<PathBuf>,
    },
    /// One command-line call, end to end (process start, connect, call,
    /// print): the `engram` command beside grpcurl, the operator's baseline.
    /// Needs tests/interop/setup.sh for grpcurl.
    Cli {
        /// Invocations of each command measured.
        #[arg(long, default_value_t = 40)]
        runs: usize,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Locomo {
            data,
            embedder,
            server_binary,
            as_facts,
            rankings,
        } => {
            let memory_type = if as_facts {
                engram_client::proto::MemoryType::Fact
            } else {
                engram_client::proto::MemoryType::Event
            };
            locomo(
                &data,
                embedder.as_deref(),
                server_binary.as_deref(),
                memory_type,
                rankings.as_deref(),
            )
            .await
        }
        Command::Cli { runs } => cli(runs).await,
        Command::Bounds {
            memories,
            classifies,
            server_binary,
        } => bounds(memories, classifies.max(1), server_binary.as_deref()).await,
        Command::Metrics(rounds) => metrics_cost(&rounds).await,
        Command::Overload(rounds) => overload_cost(&rounds).await,
        Command::Versions {
            rounds,
            baseline,
            database,
            embedder,
        } => versions(&rounds, &baseline, database.as_deref(), embedder.as_deref()).await,
        Command::Transfer {
            memories,
            namespaces,
            concurrency,
        } => transfer(memories, namespaces.max(1), concurrency.max(1)).await,
        Command::Load {
            sizes,
            million,
            small,
            checks,
            rounds,
            sequential_writes,
            concurrent_writes,
            concurrency,
            searches,
            contexts,
            embedder,
            server_binary,
            database,
            replicas,
            lag_writes,
            fill_events,
        } => {
            if replicas > 1 && database.is_none() {
                bail!(
                    "--replicas {replicas} needs --database postgres://…: replicas share a PostgreSQL database"
                );
            }
            if let Some(url) = &database
                && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
            {
                bail!(
                    "--database {url:?}: expected a postgres:// URL (without it the bench uses a SQLite file)"
                );
            }
            let mut sizes = sizes;
            if million {
                sizes.push(1_000_000);
            }
            sizes.sort_unstable();
            sizes.dedup();
            load(Load {
                sizes,
                small,
                checks,
                rounds: usize::from(rounds),
                sequential_writes,
                concurrent_writes,
                concurrency,
                searches,
                contexts,
                embedder,
                server_binary,
                database,
                replicas: usize::from(replicas),
                lag_writes,
                fill_type: if fill_events {
                    MemoryType::Event
                } else {
                    MemoryType::Fact
                },
            })
            .await
        }
    }
}

/// A server of `binary`, or of this workspace.
async fn start(binary: Option<&Path>, args: &[&str]) -> Server {
    match binary {
        Some(binary) => Server::start_binary(binary, args).await,
        None => Server::start_with_args(args).await,
    }
}
