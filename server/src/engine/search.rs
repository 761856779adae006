//! Search: full-text matches from the index, ranked by relevance, recency
//! and importance (DESIGN §4).

use std::collections::HashMap;

use crate::domain::{Memory, MemoryFilter, Micros, Scope, TextMatch};
use crate::error::Result;
use crate::index::{TextIndex, TextQuery};
use crate::store::Store;

/// Default weight of full-text relevance.
pub const DEFAULT_RELEVANCE_WEIGHT: f64 = 0.6;
/// Default weight of recency.
pub const DEFAULT_RECENCY_WEIGHT: f64 = 0.2;
/// Default weight of importance.
pub const DEFAULT_IMPORTANCE_WEIGHT: f64 = 0.2;
/// Default half-life of recency: 30 days.
pub const DEFAULT_HALF_LIFE_MICROS: Micros = 30 * 24 * 3600 * 1_000_000;
/// How many full-text candidates are re-scored per requested hit, so that a
/// recent or important memory slightly lower in BM25 can still make the cut.
const CANDIDATES_PER_HIT: usize = 5;
/// Bounds on the number of re-scored candidates.
const MIN_CANDIDATES: usize = 50;
const MAX_CANDIDATES: usize = 500;

/// How hits are ranked: `score = relevance·w + recency·w + importance·w`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub relevance: f64,
    pub recency: f64,
    pub importance: f64,
    /// Recency halves every `half_life` microseconds of age.
    pub half_life: Micros,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            relevance: DEFAULT_RELEVANCE_WEIGHT,
            recency: DEFAULT_RECENCY_WEIGHT,
            importance: DEFAULT_IMPORTANCE_WEIGHT,
            half_life: DEFAULT_HALF_LIFE_MICROS,
        }
    }
}

/// A ranked search result with its component scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub memory: Memory,
    pub score: f64,
    pub relevance: f64,
    pub recency: f64,
    pub importance: f64,
}

/// A validated search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub scope: Scope,
    pub query: String,
    pub filter: MemoryFilter,
    pub limit: usize,
    pub weights: Weights,
}

/// Runs a search: full-text candidates from the index, re-ranked, then read
/// from the store (which re-checks their visibility). Records the access of
/// the returned memories without waiting for it.
pub async fn search(
    store: &dyn Store,
    index: &TextIndex,
    request: &SearchRequest,
    now: Micros,
) -> Result<Vec<Hit>> {
    let candidates = (request.limit * CANDIDATES_PER_HIT).clamp(MIN_CANDIDATES, MAX_CANDIDATES);
    let matches = index
        .search(&TextQuery {
            scope: &request.scope,
            filter: &request.filter,
            text: &request.query,
            limit: candidates,
            now,
        })
        .await?;
    let ranked = rank(matches, &request.weights, now, request.limit);
    if ranked.is_empty() {
        return Ok(Vec::new());
    }
    let seqs: Vec<i64> = ranked.iter().map(|r| r.seq).collect();
    let mut memories: HashMap<i64, Memory> = store
        .memories_by_seq(&request.scope, &request.filter, &seqs, now)
        .await?
        .into_iter()
        .map(|m| (m.seq, m))
        .collect();
    // A memory deleted since the index answered is simply left out.
    let hits: Vec<Hit> = ranked
        .into_iter()
        .filter_map(|r| {
            Some(Hit {
                memory: memories.remove(&r.seq)?,
                score: r.score,
                relevance: r.relevance,
                recency: r.recency,
                importance: r.importance,
            })
        })
        .collect();
    store.record_access(hits.iter().map(|h| h.memory.seq).collect(), now);
    Ok(hits)
}

/// `0.5^(age / half_life)`: 1 for a memory changed now, 0.5 after one half-life.
pub fn recency(update_time: Micros, now: Micros, half_life: Micros) -> f64 {
    let age = now.saturating_sub(update_time).max(0) as f64;
    0.5f64.powf(age / half_life.max(1) as f64)
}

/// A match with its score and the components of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub seq: i64,
    pub score: f64,
    pub relevance: f64,
    pub recency: f64,
    pub importance: f64,
}

/// Scores full-text matches and keeps the best `limit`. Relevance is BM25
/// scaled so the best match of this search is 1.
pub fn rank(matches: Vec<TextMatch>, weights: &Weights, now: Micros, limit: usize) -> Vec<Ranked> {
    let best = matches.iter().map(|m| m.bm25).fold(0.0f64, f64::max);
    let mut ranked: Vec<Ranked> = matches
        .into_iter()
        .map(|m| {
            let relevance = if best > 0.0 {
                (m.bm25 / best).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let recency = recency(m.update_time, now, weights.half_life);
            Ranked {
                seq: m.seq,
                score: weights.relevance * relevance
                    + weights.recency * recency
                    + weights.importance * m.importance,
                relevance,
                recency,
                importance: m.importance,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.relevance.total_cmp(&a.relevance))
            .then(b.seq.cmp(&a.seq))
    });
    ranked.truncate(limit);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(seq: i64, bm25: f64, importance: f64, update_time: Micros) -> TextMatch {
        TextMatch {
            seq,
            bm25,
            importance,
            update_time,
        }
    }

    #[test]
    fn recency_halves_every_half_life() {
        assert_eq!(recency(1_000, 1_000, 100), 1.0);
        assert!((recency(0, 100, 100) - 0.5).abs() < 1e-12);
        assert!((recency(0, 200, 100) - 0.25).abs() < 1e-12);
        // A clock that went backwards does not make a memory "newer than now".
        assert_eq!(recency(500, 100, 100), 1.0);
    }

    #[test]
    fn best_bm25_has_relevance_one_and_scores_use_the_weights() {
        let now = 10 * DEFAULT_HALF_LIFE_MICROS;
        let matches = vec![
            matched(1, 2.0, 0.0, now),
            matched(2, 4.0, 1.0, now - DEFAULT_HALF_LIFE_MICROS),
        ];
        let hits = rank(matches, &Weights::default(), now, 10);
        assert_eq!(hits[0].seq, 2);
        assert_eq!(hits[0].relevance, 1.0);
        assert!((hits[0].recency - 0.5).abs() < 1e-12);
        assert!((hits[0].score - (0.6 + 0.2 * 0.5 + 0.2)).abs() < 1e-12);
        assert_eq!(hits[1].relevance, 0.5);
        assert!((hits[1].score - (0.6 * 0.5 + 0.2)).abs() < 1e-12);
    }

    #[test]
    fn weights_can_make_importance_win_over_relevance() {
        let now = 0;
        let matches = vec![matched(1, 10.0, 0.1, now), matched(2, 1.0, 0.9, now)];
        let weights = Weights {
            relevance: 0.0,
            recency: 0.0,
            importance: 1.0,
            ..Weights::default()
        };
        let hits = rank(matches, &weights, now, 1);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].seq, 2);
    }

    #[test]
    fn ties_go_to_the_newer_memory() {
        let hits = rank(
            vec![matched(1, 1.0, 0.5, 0), matched(2, 1.0, 0.5, 0)],
            &Weights::default(),
            0,
            2,
        );
        assert_eq!(hits.iter().map(|h| h.seq).collect::<Vec<_>>(), [2, 1]);
    }
}
