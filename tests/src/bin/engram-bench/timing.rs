//! Timing calls and summing the times up: latency percentiles, medians, and
//! the pause that lets a server settle between measurements.

use std::time::{Duration, Instant};

/// "median 1.23 ms, p99 4.56 ms (n = 300)".
pub fn summary(latencies: &mut [Duration]) -> String {
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

/// Latencies of one measured call, in milliseconds.
pub struct Latency {
    pub p50: f64,
    pub p99: f64,
}

impl Latency {
    pub fn of(latencies: &mut [Duration]) -> Latency {
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
pub const SETTLE: Duration = Duration::from_secs(3);

/// The median of `values`.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Times `calls` sequential calls of `call`.
pub async fn time_each<F, Fut>(calls: usize, mut call: F) -> anyhow::Result<Latency>
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
