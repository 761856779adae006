//! A search's best candidates reordered by a reranking API (see
//! [`crate::rerank`]), within a deadline; on any failure they keep the
//! fused order.

use std::collections::HashMap;
use std::time::Duration;

use super::{Ranked, SearchRequest, read_missing, sort};
use crate::domain::{Memory, Micros};
use crate::error::Result;
use crate::rerank::Reranker;
use crate::store::Store;

/// Reorders the best `reranker.depth` of `ranked` by the reranker's scores
/// of their text: they take the fused scores of those places in its
/// order, so the reply's scores still fall hit by hit and every candidate
/// below keeps its place. Reads their memories into `memories` first.
/// `deadline` bounds the wait beside the reranker's own timeout.
pub async fn rerank(
    store: &dyn Store,
    reranker: &Reranker,
    request: &SearchRequest,
    ranked: &mut [Ranked],
    memories: &mut HashMap<i64, Memory>,
    now: Micros,
    deadline: Option<Duration>,
) -> Result<()> {
    sort(ranked);
    let depth = reranker.depth.min(ranked.len());
    if depth < 2 {
        return Ok(());
    }
    read_missing(
        store,
        request,
        ranked[..depth].iter().map(|r| r.seq),
        memories,
        now,
    )
    .await?;
    // A candidate deleted since the index answered is not sent; it stays
    // where it is and the reply leaves it out.
    let (sent, texts): (Vec<usize>, Vec<&str>) = ranked[..depth]
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, memories.get(&r.seq)?.content.as_str())))
        .unzip();
    if sent.len() < 2 {
        return Ok(());
    }
    let wait = deadline.map_or(reranker.timeout(), |d| d.min(reranker.timeout()));
    let scores = match tokio::time::timeout(wait, reranker.scores(&request.query, &texts)).await {
        Ok(Ok(scores)) => scores,
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "reranking failed; the fused order stands");
            return Ok(());
        }
        Err(_) => {
            tracing::warn!(?wait, "reranking took too long; the fused order stands");
            return Ok(());
        }
    };
    let mut order: Vec<(usize, f64)> = sent.iter().copied().zip(scores).collect();
    // Best score first; ties keep the fused order.
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let places: Vec<f64> = sent.iter().map(|&i| ranked[i].score).collect();
    let reordered: Vec<Ranked> = order
        .iter()
        .zip(&places)
        .map(|(&(i, _), &score)| Ranked { score, ..ranked[i] })
        .collect();
    for (&i, r) in sent.iter().zip(reordered) {
        ranked[i] = r;
    }
    Ok(())
}
