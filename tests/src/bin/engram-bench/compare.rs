//! Two servers measured in alternating rounds, side by side with the
//! ratios: what `metrics`, `overload` and `versions` run.

use std::path::Path;
use std::time::{Duration, Instant};

use engram_tests::Server;

use crate::text::{Queries, Text};
use crate::throughput::{Target, throughput_round};
use crate::timing::{Latency, SETTLE, median};
use crate::{Rounds, start};

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
    one_search: Vec<Duration>,
}

/// Starts a server with each of `servers`' flags and measures them in
/// alternating rounds (throughput at `--concurrency` in flight, then one
/// client's latency), printing each side under its label with the ratios;
/// returns the servers.
pub async fn compare(
    config: &Rounds,
    command: &str,
    servers: [Side<'_>; 2],
) -> anyhow::Result<[Server; 2]> {
    let rounds = usize::from(config.rounds);
    let [base_side, side] = servers;
    let (base_label, label) = (base_side.label, side.label);
    let first = start_side(&base_side).await;
    let second = start_side(&side).await;
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
    // One client, one call at a time, interleaved call by call; each
    // search asks something new (an embedder embeds every query).
    let base = per_round * rounds;
    let queries = Queries::new(0x9e57).fresh(config.sequential);
    let searched = config.searches > 0;
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
            if searched {
                let begun = Instant::now();
                target.search(i, queries[i].clone()).await?;
                measured[which].one_search.push(begun.elapsed());
            }
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
    // Fewer searches than rounds leave the concurrent rounds without any.
    let concurrent = !without.search_rates.is_empty();
    if concurrent {
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
    if concurrent {
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
    if concurrent {
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
    if searched {
        ms_row(
            "SearchMemories, 1 client, p50".into(),
            &mut without.one_search,
            &mut with.one_search,
        );
    }
    Ok([first, second])
}

/// One of the two servers `compare` measures: its label, binary (this
/// workspace's release build when `None`) and flags.
/// A server of `side`, on a fresh database.
async fn start_side(side: &Side<'_>) -> Server {
    match side.database {
        Some(url) => Server::start_on_postgres_server(side.binary, side.args, url).await,
        None => start(side.binary, side.args).await,
    }
}

pub struct Side<'a> {
    pub label: &'a str,
    pub binary: Option<&'a Path>,
    pub args: &'a [&'a str],
    /// The PostgreSQL server to make this side's fresh database on (else a
    /// SQLite file).
    pub database: Option<&'a str>,
}

impl Side<'_> {
    /// The binary and flags, as the header of `compare` shows them.
    fn describe(&self) -> String {
        let binary = self.binary.map_or_else(
            || "engram-server of this workspace (release)".to_owned(),
            |b| b.display().to_string(),
        );
        let on = if self.database.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        };
        if self.args.is_empty() {
            format!("{binary}, no flags, on {on}")
        } else {
            format!("{binary} {}, on {on}", self.args.join(" "))
        }
    }
}
