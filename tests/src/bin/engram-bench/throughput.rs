//! Throughput rounds: Check, CreateMemory and SearchMemories with many
//! calls in flight, against one server or replicas in turn.

use std::time::{Duration, Instant};

use engram_client::{Engram, proto};
use engram_tests::scope;

use crate::workload::{create_request, search_request};

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

/// What the throughput rounds call: each replica's health service and
/// memory service through the bare generated stub, and the namespace
/// written to. Call `i` goes to replica `i` modulo their number, as a
/// round-robin load balancer sends it.
#[derive(Clone)]
pub struct Target {
    health: Vec<tonic_health::pb::health_client::HealthClient<tonic::transport::Channel>>,
    stub: Vec<proto::memory_service_client::MemoryServiceClient<tonic::transport::Channel>>,
    pub writes: proto::Scope,
}

impl Target {
    /// The target of the server `engram` is connected to.
    pub fn of(engram: &Engram) -> Target {
        Target::over(std::slice::from_ref(engram))
    }

    /// The target of the replicas `engrams` are connected to. Throughput is
    /// measured through the bare generated stubs, for Check and
    /// CreateMemory alike, so that both carry the same client-side cost
    /// (the client crate adds a deadline and retries).
    pub fn over(engrams: &[Engram]) -> Target {
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
    pub async fn check(&self, i: usize) -> anyhow::Result<()> {
        self.health[i % self.health.len()]
            .clone()
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await?;
        Ok(())
    }

    /// Call `i`'s SearchMemories of `query` in the namespace written to.
    pub async fn search(&self, i: usize, query: String) -> anyhow::Result<()> {
        let request = search_request(&self.writes, &query);
        self.stub[i % self.stub.len()]
            .clone()
            .search_memories(request)
            .await?;
        Ok(())
    }

    /// Call `i`'s CreateMemory of `content`.
    pub async fn create(&self, i: usize, content: String) -> anyhow::Result<()> {
        let request = create_request(&self.writes, content);
        self.stub[i % self.stub.len()]
            .clone()
            .create_memory(request)
            .await?;
        Ok(())
    }
}

/// What one throughput round measured.
pub struct Round {
    pub check_rate: f64,
    pub check_latencies: Vec<Duration>,
    pub create_rate: f64,
    pub create_latencies: Vec<Duration>,
    /// Empty when the round searched nothing.
    pub search_rate: f64,
    pub search_latencies: Vec<Duration>,
}

/// One round against `target`: `checks` grpc.health Check calls, then
/// CreateMemory of `texts[creates]`, then `searches` SearchMemories for
/// three words of those texts in turn, each with `concurrency` in flight.
pub async fn throughput_round(
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
