//! `metrics`: the cost of `--metrics-listen`, and of a scrape.

use std::time::Instant;

use anyhow::Context as _;

use crate::Rounds;
use crate::compare::{Side, compare};
use crate::timing::Latency;

/// Scrapes timed by `metrics`.
const SCRAPES: usize = 200;

pub async fn metrics_cost(config: &Rounds) -> anyhow::Result<()> {
    let binary = config.server_binary.as_deref();
    let [_, metered] = compare(
        config,
        "metrics",
        [
            Side {
                label: "without",
                binary,
                args: &[],
                database: None,
            },
            Side {
                label: "with metrics",
                binary,
                args: &["--metrics-listen", "127.0.0.1:0"],
                database: None,
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
