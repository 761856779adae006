//! Search: full-text matches from the index, ranked by relevance, recency
//! (the age of when the remembered thing happened) and importance (DESIGN §4).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use crate::domain::{Memory, MemoryFilter, Micros, Scope, TextMatch, dates};
use crate::embed::{BackfillProgress, EmbedError, Embedder};
use crate::error::Result;
use crate::index::{TextIndex, TextQuery, VectorIndex, VectorMatch};
use crate::store::Store;

mod cues;
mod reranking;

/// Default weight of full-text relevance.
pub const DEFAULT_RELEVANCE_WEIGHT: f64 = 0.6;
/// Default weight of recency.
pub const DEFAULT_RECENCY_WEIGHT: f64 = 0.2;
/// Default weight of importance.
pub const DEFAULT_IMPORTANCE_WEIGHT: f64 = 0.2;
/// Default weight of meaning (cosine) against words (BM25) within
/// relevance, when an embedder is configured.
pub const DEFAULT_SEMANTIC_WEIGHT: f64 = 0.4;
/// Default share of a conversation neighbour's relevance a memory gets.
pub const DEFAULT_CONTEXT_WEIGHT: f64 = 0.5;
/// How many times the context share the memory after one that asks
/// something (its likely answer) gets, at most all of it.
const ANSWER_CONTEXT: f64 = 2.0;
/// Default lift of a memory naming the entities a query names.
pub const DEFAULT_ENTITY_WEIGHT: f64 = 0.0;
/// Conversation context: the best candidates whose neighbours are looked up,
/// per requested hit (at least [`MIN_LENDERS`]). A candidate further down
/// has too little relevance to lend for its neighbour to make the cut.
const LENDERS_PER_HIT: usize = 2;
const MIN_LENDERS: usize = 20;
/// Default half-life of recency: 30 days.
pub const DEFAULT_HALF_LIFE_MICROS: Micros = 30 * 24 * 3600 * 1_000_000;
/// How many full-text candidates are re-scored per requested hit, so that a
/// recent or important memory slightly lower in BM25 can still make the cut.
const CANDIDATES_PER_HIT: usize = 5;
/// Bounds on the number of re-scored candidates.
const MIN_CANDIDATES: usize = 50;
const MAX_CANDIDATES: usize = 500;
/// The share of the caller's deadline a search waits for its query's vector
/// before it searches by words only: an embedder that hangs must not make
/// the search miss the deadline.
const QUERY_EMBEDDING_SHARE: f64 = 0.5;

/// How hits are ranked: `score = relevance·w + recency·w + importance·w`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub relevance: f64,
    /// Within relevance: `semantic·cosine + (1 − semantic)·bm25`, both
    /// min-max normalised over the candidates (used with an embedder only).
    pub semantic: f64,
    /// Conversation context: a memory's relevance `r` becomes
    /// `r + context·n·(1 − r)`, `n` being the relevance of its best
    /// neighbour (the memory written just before or after it in the same
    /// session) among the best candidates; the memory after one that asks
    /// something gets [`ANSWER_CONTEXT`] times the share.
    pub context: f64,
    /// Entities: a memory naming the entities the query names (by any of
    /// their names) is lifted by `entity·share`, `share` being the
    /// fraction of them it names (see `cues`: relevances are then scaled
    /// back into 0..1 by the largest lift).
    pub entity: f64,
    pub recency: f64,
    pub importance: f64,
    /// Recency halves every `half_life` microseconds of age.
    pub half_life: Micros,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            relevance: DEFAULT_RELEVANCE_WEIGHT,
            semantic: DEFAULT_SEMANTIC_WEIGHT,
            context: DEFAULT_CONTEXT_WEIGHT,
            entity: DEFAULT_ENTITY_WEIGHT,
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
    /// The normalised cosine within relevance (0 without semantic search).
    pub semantic: f64,
    /// The relevance of the best conversation neighbour (0 without one).
    pub context: f64,
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
    /// Stop reading the hits' memories once their text passes this many
    /// bytes (the reply's budget): the hits after are left out, as the
    /// reply would cut them. `None`: read every hit.
    pub max_bytes: Option<usize>,
}

/// How many hits' memories are read in one query first; the rest follow
/// in one more query when these were small, else a chunk at a time until
/// the reply's budget is full. A search of up to this many hits reads them
/// at once.
const FIRST_READ: usize = 16;

/// Reads the memories of `seqs` (hits in rank order) into `memories`: all
/// of them, or, with a byte budget, as many in rank order as it takes to
/// pass the budget — so a search of large memories never holds a hundred of
/// them only for the reply to be cut to a few.
async fn read_within(
    store: &dyn Store,
    request: &SearchRequest,
    seqs: &[i64],
    memories: &mut HashMap<i64, Memory>,
    now: Micros,
) -> Result<()> {
    let budget = request.max_bytes.unwrap_or(usize::MAX);
    let mut bytes: usize = memories.values().map(Memory::text_bytes).sum();
    let mut rest = seqs;
    while !rest.is_empty() && bytes <= budget {
        // After a first chunk that used little of the budget, the rest in
        // one query.
        let take = if rest.len() == seqs.len() || bytes.saturating_mul(4) > budget {
            FIRST_READ.min(rest.len())
        } else {
            rest.len()
        };
        let (chunk, after) = rest.split_at(take);
        rest = after;
        let read = store
            .memories_by_seq(&request.scope, &request.filter, chunk, now)
            .await?;
        bytes = bytes.saturating_add(read.iter().map(Memory::text_bytes).sum());
        memories.extend(read.into_iter().map(|m| (m.seq, m)));
    }
    Ok(())
}

/// Reads the memories of `seqs` not yet in `memories` into it.
async fn read_missing(
    store: &dyn Store,
    request: &SearchRequest,
    seqs: impl Iterator<Item = i64>,
    memories: &mut HashMap<i64, Memory>,
    now: Micros,
) -> Result<()> {
    let unread: Vec<i64> = seqs.filter(|seq| !memories.contains_key(seq)).collect();
    if !unread.is_empty() {
        let read = store
            .memories_by_seq(&request.scope, &request.filter, &unread, now)
            .await?;
        memories.extend(read.into_iter().map(|m| (m.seq, m)));
    }
    Ok(())
}

/// Semantic retrieval: the embedder for queries, the vector index, and how
/// far the backfill got.
pub struct Semantic {
    pub embedder: Arc<Embedder>,
    pub vectors: Arc<VectorIndex>,
    pub progress: Arc<BackfillProgress>,
    /// Stops the backfill when the server stops.
    pub backfill: tokio::task::AbortHandle,
}

/// Where searches find candidates: the full-text index and, with an
/// embedder, the vector index.
pub struct Retrieval {
    pub text: Arc<TextIndex>,
    pub semantic: Option<Semantic>,
    /// Reorders the best candidates, when configured.
    pub reranker: Option<crate::rerank::Reranker>,
}

/// How a search used meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemanticUse {
    /// No embedder, or a semantic weight of 0: words only.
    Off,
    /// Every stored memory had its vector.
    Complete,
    /// Some memories written recently (or while the embedder was failing)
    /// had no vector yet and could be found by their words only.
    Partial,
    /// The query could not be embedded (in time): words only.
    Unavailable,
}

/// A search's hits and how it used meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct Searched {
    pub hits: Vec<Hit>,
    pub semantic: SemanticUse,
}

/// Runs a search: candidates from the full-text index (and the vector index
/// with an embedder), ranked, then read from the store (which re-checks
/// their visibility). Records the access of the returned memories without
/// waiting for it. `deadline` is how long the caller waits, when it said.
pub async fn search(
    store: &dyn Store,
    retrieval: &Retrieval,
    request: &SearchRequest,
    now: Micros,
    deadline: Option<Duration>,
) -> Result<Searched> {
    let searched = look_up(store, retrieval, request, now, deadline).await?;
    store.record_access(searched.hits.iter().map(|h| h.memory.seq).collect(), now);
    Ok(searched)
}

/// [`search`] without recording an access: for the server's own lookups
/// (a write's contradictions), which no caller reads.
pub async fn look_up(
    store: &dyn Store,
    retrieval: &Retrieval,
    request: &SearchRequest,
    now: Micros,
    deadline: Option<Duration>,
) -> Result<Searched> {
    let started = std::time::Instant::now();
    let embedding_wait = deadline.map(|d| d.mul_f64(QUERY_EMBEDDING_SHARE));
    let candidates = (request.limit * CANDIDATES_PER_HIT).clamp(MIN_CANDIDATES, MAX_CANDIDATES);
    // The times the query names find the memories that mention them,
    // whatever words those use.
    let times = dates::query_terms(&dates::find(&request.query, now));
    let semantic = retrieval
        .semantic
        .as_ref()
        .filter(|_| request.weights.semantic > 0.0);
    // The query is embedded while the words are looked up: embedding it
    // is most of a hybrid search's time.
    let embedded = async {
        match semantic {
            Some(semantic) => Some(
                semantic
                    .embedder
                    .embed_query(&request.query, embedding_wait)
                    .await,
            ),
            None => None,
        }
    };
    // The word lookup first waits until every acknowledged write is
    // applied, to the vector index too.
    let (matches, embedded) = futures_util::future::join(
        retrieval.text.search(&TextQuery {
            scope: &request.scope,
            filter: &request.filter,
            text: &request.query,
            limit: candidates,
            now,
            max_terms: None,
            extra_terms: &times,
        }),
        embedded,
    )
    .await;
    let matches = matches?;
    let (mut ranked, used) = match semantic.zip(embedded) {
        None => (rank(matches, &request.weights, now), SemanticUse::Off),
        Some((semantic, embedded)) => match embedded {
            Err(err) => {
                if matches!(err, EmbedError::Paused(_)) {
                    tracing::debug!(error = %err, "searching by words only");
                } else {
                    tracing::warn!(error = %err, "embedding the query failed; searching by words only");
                }
                (
                    rank(matches, &request.weights, now),
                    SemanticUse::Unavailable,
                )
            }
            Ok(query) => {
                let vectors = &semantic.vectors;
                let near = vectors.search(&request.scope, &request.filter, now, &query, candidates);
                let found: HashSet<i64> = near.iter().map(|n| n.seq).collect();
                let missing: Vec<i64> = matches
                    .iter()
                    .map(|m| m.seq)
                    .filter(|seq| !found.contains(seq))
                    .collect();
                let cosines = vectors.cosines(&request.scope.namespace, &query, &missing);
                let head = *store.feed_head().borrow();
                let used = if semantic.progress.caught_up(head) {
                    SemanticUse::Complete
                } else {
                    SemanticUse::Partial
                };
                let fused = fuse(matches, near, &cosines, &request.weights, now);
                (fused, used)
            }
        },
    };
    cues::lift(store, request, &mut ranked, now).await?;
    let mut memories = add_context(store, request, &mut ranked, now).await?;
    cues::lift_by_text(store, request, &mut ranked, &mut memories, now).await?;
    if let Some(reranker) = &retrieval.reranker {
        // Half of what is left: the reply still has memories to read.
        let left = deadline.map(|d| d.saturating_sub(started.elapsed()).mul_f64(0.5));
        reranking::rerank(
            store,
            reranker,
            request,
            &mut ranked,
            &mut memories,
            now,
            left,
        )
        .await?;
    }
    sort_and_cut(&mut ranked, request.limit);
    if ranked.is_empty() {
        return Ok(Searched {
            hits: Vec::new(),
            semantic: used,
        });
    }
    let unread: Vec<i64> = ranked
        .iter()
        .map(|r| r.seq)
        .filter(|seq| !memories.contains_key(seq))
        .collect();
    read_within(store, request, &unread, &mut memories, now).await?;
    // A memory deleted since the index answered is simply left out.
    let hits: Vec<Hit> = ranked
        .into_iter()
        .filter_map(|r| {
            Some(Hit {
                memory: memories.remove(&r.seq)?,
                score: r.score,
                relevance: r.relevance,
                semantic: r.semantic,
                context: r.context,
                recency: r.recency,
                importance: r.importance,
            })
        })
        .collect();
    Ok(Searched {
        hits,
        semantic: used,
    })
}

/// Conversation context (DESIGN §4): the neighbours of the best candidates
/// — the memories written just before and after them in the same session —
/// get a share of their relevance, found by words and meaning or not; a
/// neighbour that was no candidate joins the ranking if the reader may see
/// it and it passes the filter. Returns the memories read for that.
async fn add_context(
    store: &dyn Store,
    request: &SearchRequest,
    ranked: &mut Vec<Ranked>,
    now: Micros,
) -> Result<HashMap<i64, Memory>> {
    let weights = &request.weights;
    if weights.context <= 0.0 || ranked.is_empty() {
        return Ok(HashMap::new());
    }
    let lenders = (request.limit * LENDERS_PER_HIT).max(MIN_LENDERS);
    let mut best: Vec<(i64, f64)> = ranked
        .iter()
        .filter(|r| r.relevance > 0.0)
        .map(|r| (r.seq, r.relevance))
        .collect();
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    best.truncate(lenders);
    let seqs: Vec<i64> = best.iter().map(|&(seq, _)| seq).collect();
    let neighbours = store
        .conversation_neighbours(&request.scope.namespace, &seqs)
        .await?;
    if neighbours.is_empty() {
        return Ok(HashMap::new());
    }
    let relevance: HashMap<i64, f64> = best.into_iter().collect();
    // Each receiver's best lender, as a share of relevance: the answer
    // after a question gets more.
    let answer = (weights.context * ANSWER_CONTEXT).min(1.0);
    let mut lent: HashMap<i64, (f64, f64)> = HashMap::new();
    for n in &neighbours {
        let Some(&given) = relevance.get(&n.seq) else {
            continue;
        };
        let after = if n.asks { answer } else { weights.context };
        for (receiver, share) in [(n.before, weights.context), (n.after, after)] {
            let Some(receiver) = receiver else { continue };
            let best = lent.entry(receiver).or_default();
            if share * given > best.0 * best.1 {
                *best = (share, given);
            }
        }
    }
    let known: HashSet<i64> = ranked.iter().map(|r| r.seq).collect();
    let joining: Vec<i64> = lent
        .keys()
        .copied()
        .filter(|seq| !known.contains(seq))
        .collect();
    let memories: HashMap<i64, Memory> = if joining.is_empty() {
        HashMap::new()
    } else {
        store
            .memories_by_seq(&request.scope, &request.filter, &joining, now)
            .await?
            .into_iter()
            .map(|m| (m.seq, m))
            .collect()
    };
    ranked.extend(
        memories
            .values()
            .map(|m| Ranked::scored(m.seq, 0.0, m.importance, m.occurred_at, weights, now)),
    );
    for r in ranked.iter_mut() {
        if let Some(&(share, neighbour)) = lent.get(&r.seq) {
            let relevance = r.relevance + share * neighbour * (1.0 - r.relevance);
            *r = Ranked {
                context: neighbour,
                semantic: r.semantic,
                ..Ranked::with_relevance(r, relevance, weights)
            };
        }
    }
    Ok(memories)
}

/// A candidate of either index.
struct Candidate {
    seq: i64,
    bm25: f64,
    cosine: Option<f64>,
    importance: f64,
    occurred_at: Micros,
}

/// `value` scaled to 0..1 between `low` and `high` (1 when they are equal).
fn min_max(value: f64, low: f64, high: f64) -> f64 {
    if high > low {
        ((value - low) / (high - low)).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// Combines full-text and vector candidates (DESIGN §4): over all of them,
/// BM25 (0 where the words did not match) and cosine (the lowest where a
/// memory has no vector) are min-max normalised and mixed by the semantic
/// weight into relevance; then scored as [`rank`] does. Keeps the best
/// Best first.
pub fn fuse(
    lexical: Vec<TextMatch>,
    near: Vec<VectorMatch>,
    cosines: &HashMap<i64, f32>,
    weights: &Weights,
    now: Micros,
) -> Vec<Ranked> {
    let mut candidates: Vec<Candidate> = lexical
        .into_iter()
        .map(|m| Candidate {
            seq: m.seq,
            bm25: m.bm25,
            cosine: cosines.get(&m.seq).map(|&c| f64::from(c)),
            importance: m.importance,
            occurred_at: m.occurred_at,
        })
        .collect();
    let at: HashMap<i64, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.seq, i))
        .collect();
    for n in near {
        match at.get(&n.seq) {
            Some(&i) => candidates[i].cosine = Some(f64::from(n.cosine)),
            None => candidates.push(Candidate {
                seq: n.seq,
                bm25: 0.0,
                cosine: Some(f64::from(n.cosine)),
                importance: n.importance,
                occurred_at: n.occurred_at,
            }),
        }
    }
    let bounds = |values: &mut dyn Iterator<Item = f64>| {
        values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
    };
    let (bm25_low, bm25_high) = bounds(&mut candidates.iter().map(|c| c.bm25));
    let (cosine_low, cosine_high) = bounds(&mut candidates.iter().filter_map(|c| c.cosine));
    let semantic_weight = weights.semantic.clamp(0.0, 1.0);
    let mut ranked: Vec<Ranked> = candidates
        .into_iter()
        .map(|c| {
            let lexical = if bm25_high > 0.0 {
                min_max(c.bm25, bm25_low, bm25_high)
            } else {
                0.0
            };
            let semantic = c
                .cosine
                .map_or(0.0, |x| min_max(x, cosine_low, cosine_high));
            let relevance = semantic_weight * semantic + (1.0 - semantic_weight) * lexical;
            let mut ranked =
                Ranked::scored(c.seq, relevance, c.importance, c.occurred_at, weights, now);
            ranked.semantic = semantic;
            ranked
        })
        .collect();
    sort(&mut ranked);
    ranked
}

/// `0.5^(age / half_life)` of the age of `occurred_at`: 1 for what happened
/// now (or is to happen), 0.5 after one half-life.
pub fn recency(occurred_at: Micros, now: Micros, half_life: Micros) -> f64 {
    let age = now.saturating_sub(occurred_at).max(0) as f64;
    0.5f64.powf(age / half_life.max(1) as f64)
}

/// A match with its score and the components of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub seq: i64,
    pub score: f64,
    pub relevance: f64,
    pub semantic: f64,
    pub context: f64,
    pub recency: f64,
    pub importance: f64,
    /// When the remembered thing happened.
    pub occurred_at: Micros,
}

impl Ranked {
    /// `ranked` with another relevance, scored again (its other
    /// components kept).
    fn with_relevance(ranked: &Ranked, relevance: f64, weights: &Weights) -> Ranked {
        Ranked {
            relevance,
            score: weights.relevance * relevance
                + weights.recency * ranked.recency
                + weights.importance * ranked.importance,
            ..*ranked
        }
    }

    /// A candidate of this `relevance` scored with `weights` at `now`.
    fn scored(
        seq: i64,
        relevance: f64,
        importance: f64,
        occurred_at: Micros,
        weights: &Weights,
        now: Micros,
    ) -> Ranked {
        let recency = recency(occurred_at, now, weights.half_life);
        Ranked {
            seq,
            score: weights.relevance * relevance
                + weights.recency * recency
                + weights.importance * importance,
            relevance,
            semantic: 0.0,
            context: 0.0,
            recency,
            importance,
            occurred_at,
        }
    }
}

/// Scores full-text matches, best first. Relevance is BM25 scaled so the
/// best match of this search is 1.
pub fn rank(matches: Vec<TextMatch>, weights: &Weights, now: Micros) -> Vec<Ranked> {
    let best = matches.iter().map(|m| m.bm25).fold(0.0f64, f64::max);
    let mut ranked: Vec<Ranked> = matches
        .into_iter()
        .map(|m| {
            let relevance = if best > 0.0 {
                (m.bm25 / best).clamp(0.0, 1.0)
            } else {
                1.0
            };
            Ranked::scored(m.seq, relevance, m.importance, m.occurred_at, weights, now)
        })
        .collect();
    sort(&mut ranked);
    ranked
}

/// Best score first, then relevance, then the newer memory.
fn sort(ranked: &mut [Ranked]) {
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.relevance.total_cmp(&a.relevance))
            .then(b.seq.cmp(&a.seq))
    });
}

/// The best `limit`, best first.
fn sort_and_cut(ranked: &mut Vec<Ranked>, limit: usize) {
    sort(ranked);
    ranked.truncate(limit);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(seq: i64, bm25: f64, importance: f64, occurred_at: Micros) -> TextMatch {
        TextMatch {
            seq,
            bm25,
            importance,
            occurred_at,
        }
    }

    #[test]
    fn recency_halves_every_half_life() {
        assert_eq!(recency(1_000, 1_000, 100), 1.0);
        assert!((recency(0, 100, 100) - 0.5).abs() < 1e-12);
        assert!((recency(0, 200, 100) - 0.25).abs() < 1e-12);
        // What is still to happen (an occurred_at up to a day ahead, or a
        // clock that went backwards) is not "newer than now".
        assert_eq!(recency(500, 100, 100), 1.0);
    }

    #[test]
    fn of_equally_relevant_matches_what_happened_recently_ranks_first() {
        let now = 1_000 * DEFAULT_HALF_LIFE_MICROS;
        let ninety_days_ago = now - 3 * DEFAULT_HALF_LIFE_MICROS;
        let hits = rank(
            // The newer memory (seq 2) is about what happened long ago.
            vec![
                matched(1, 1.0, 0.5, now),
                matched(2, 1.0, 0.5, ninety_days_ago),
            ],
            &Weights::default(),
            now,
        );
        assert_eq!(hits.iter().map(|h| h.seq).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(hits[0].recency, 1.0);
        assert!((hits[1].recency - 0.125).abs() < 1e-12);
    }

    #[test]
    fn best_bm25_has_relevance_one_and_scores_use_the_weights() {
        let now = 10 * DEFAULT_HALF_LIFE_MICROS;
        let matches = vec![
            matched(1, 2.0, 0.0, now),
            matched(2, 4.0, 1.0, now - DEFAULT_HALF_LIFE_MICROS),
        ];
        let hits = rank(matches, &Weights::default(), now);
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
        let mut hits = rank(matches, &weights, now);
        sort_and_cut(&mut hits, 1);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].seq, 2);
    }

    fn near(seq: i64, cosine: f32) -> VectorMatch {
        VectorMatch {
            seq,
            cosine,
            importance: 0.5,
            occurred_at: 0,
        }
    }

    #[test]
    fn fusion_normalises_both_scores_over_all_candidates() {
        // 1 matches the words best but means little; 2 only means; 3 both.
        let lexical = vec![matched(1, 4.0, 0.5, 0), matched(3, 2.0, 0.5, 0)];
        let close = vec![near(2, 0.9), near(3, 0.7)];
        let cosines = HashMap::from([(1, 0.1)]);
        let weights = Weights {
            relevance: 1.0,
            semantic: 0.5,
            recency: 0.0,
            importance: 0.0,
            ..Weights::default()
        };
        let fused = fuse(lexical.clone(), close.clone(), &cosines, &weights, 0);
        let by_seq = |seq: i64| fused.iter().find(|r| r.seq == seq).unwrap();
        // bm25 over {4, 0, 2} and cosine over {0.1, 0.9, 0.7}, mixed half and half.
        assert!((by_seq(1).relevance - 0.5).abs() < 1e-6);
        assert!((by_seq(2).relevance - 0.5).abs() < 1e-6);
        assert!((by_seq(3).relevance - (0.25 + 0.5 * 0.75)).abs() < 1e-6);
        assert_eq!(fused[0].seq, 3);
        assert_eq!(by_seq(2).semantic, 1.0);
        // Words only: the dense-only candidate falls to the bottom.
        let words = Weights {
            semantic: 0.0,
            ..weights
        };
        let fused = fuse(lexical, close, &cosines, &words, 0);
        assert_eq!(fused.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 3, 2]);
    }

    #[test]
    fn ties_go_to_the_newer_memory() {
        let hits = rank(
            vec![matched(1, 1.0, 0.5, 0), matched(2, 1.0, 0.5, 0)],
            &Weights::default(),
            0,
        );
        assert_eq!(hits.iter().map(|h| h.seq).collect::<Vec<_>>(), [2, 1]);
    }
}
