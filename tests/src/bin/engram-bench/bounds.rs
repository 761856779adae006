//! `bounds`: the server's peak memory over large pages and searches at the
//! size limits, and Classify's time on an adversarial line.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, input, scope};

use crate::footprint::rss_mib;
use crate::text::Text;
use crate::timing::median;

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

pub async fn bounds(
    memories: usize,
    classifies: usize,
    binary: Option<&Path>,
) -> anyhow::Result<()> {
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
                ..Default::default()
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
