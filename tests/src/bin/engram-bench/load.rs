//! `load`: throughput and latency against one server or replicas as a
//! namespace grows, restart time, memory, and the cross-replica lag.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::bail;
use engram_client::proto::MemoryType;
use engram_client::{Engram, MemoryClient, proto};
use engram_tests::{Server, scope};

use crate::embedding::wait_embedded;
use crate::footprint::{disk_mib, rss_mib};
use crate::start;
use crate::text::{Queries, Text};
use crate::throughput::{Target, throughput_round};
use crate::timing::{Latency, SETTLE, median, time_each};
use crate::workload::{create_request, fill, search_request};

/// What `load` measures.
pub struct Load {
    pub sizes: Vec<usize>,
    pub small: usize,
    pub checks: usize,
    pub rounds: usize,
    pub sequential_writes: usize,
    pub concurrent_writes: usize,
    pub concurrency: usize,
    pub searches: usize,
    pub contexts: usize,
    pub embedder: Option<String>,
    pub server_binary: Option<PathBuf>,
    /// The PostgreSQL server to make the database on (else SQLite).
    pub database: Option<String>,
    pub replicas: usize,
    pub lag_writes: usize,
    /// The type of the memories the namespaces are filled with.
    pub fill_type: MemoryType,
}

pub async fn load(config: Load) -> anyhow::Result<()> {
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
    fill(
        &clients,
        &small,
        config.fill_type,
        &mut rng,
        0,
        config.small,
    )
    .await?;
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
    // Every measured search asks something not asked before (see Queries).
    let mut asked = Queries::new(0x9e57);
    println!(
        "latency in ms, p50 / p99, one client; queries of 2-4 words, each asked once; the small namespace has {} memories",
        config.small
    );
    println!(
        "{:>9}  {:>8}  {:>17}  {:>17}  {:>17}  {:>17}",
        "memories", "stored/s", "search", "search small", "search empty", "context (512)"
    );
    let mut stored = 0;
    for &size in &config.sizes {
        let started = Instant::now();
        fill(
            &clients,
            &big,
            config.fill_type,
            &mut rng,
            stored,
            size - stored,
        )
        .await?;
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
        let search_in = |namespace: proto::Scope, queries: Vec<String>| {
            time_each(config.searches, move |i| {
                let request = search_request(&namespace, &queries[i]);
                let client = client_of(i);
                async move {
                    client.search_memories(request).await?;
                    Ok(())
                }
            })
        };
        let in_big = search_in(big.clone(), asked.fresh(config.searches)).await?;
        let in_small = search_in(small.clone(), asked.fresh(config.searches)).await?;
        let in_empty = search_in(empty.clone(), asked.fresh(config.searches)).await?;
        let queries = asked.fresh(config.contexts);
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
    // The first search after the start asks something of its own.
    let queries = asked.fresh(config.searches + 1);
    let first = Instant::now();
    client
        .clone()
        .search_memories(search_request(&big, &queries[config.searches]))
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
