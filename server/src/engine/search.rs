//! Search: turning free text into a safe FTS5 query, and ranking full-text
//! matches by relevance, recency and importance (DESIGN §4).

use crate::domain::{Memory, MemoryFilter, Micros, Scope, TextMatch};
use crate::error::Result;
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
/// The most query terms used; longer queries keep their first terms.
const MAX_TERMS: usize = 64;

/// English words too common to say anything about relevance.
pub const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

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

/// Runs a search: full-text candidates from the store, re-ranked. Records the
/// access of the returned memories without waiting for it.
pub async fn search(store: &dyn Store, request: &SearchRequest, now: Micros) -> Result<Vec<Hit>> {
    let Some(fts) = fts_query(&request.query) else {
        return Ok(Vec::new());
    };
    let candidates = (request.limit * CANDIDATES_PER_HIT).clamp(MIN_CANDIDATES, MAX_CANDIDATES);
    let matches = store
        .search_memories(&request.scope, &fts, &request.filter, candidates, now)
        .await?;
    let hits = rank(matches, &request.weights, now, request.limit);
    store.record_access(hits.iter().map(|h| h.memory.id.clone()).collect(), now);
    Ok(hits)
}

/// The words of `text` as an FTS5 query that matches any of them, or `None`
/// when the text has no words. Every term is quoted, so FTS5 syntax in the
/// input (`AND`, `NEAR`, `*`, `"`, column filters) is taken literally. Stop
/// words are left out unless nothing else remains.
pub fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let content: Vec<&String> = words
        .iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect();
    let chosen = if content.is_empty() {
        words.iter().collect()
    } else {
        content
    };
    let mut terms: Vec<&str> = Vec::new();
    for word in chosen {
        if !terms.contains(&word.as_str()) {
            terms.push(word);
        }
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// `0.5^(age / half_life)`: 1 for a memory changed now, 0.5 after one half-life.
pub fn recency(update_time: Micros, now: Micros, half_life: Micros) -> f64 {
    let age = now.saturating_sub(update_time).max(0) as f64;
    0.5f64.powf(age / half_life.max(1) as f64)
}

/// Scores full-text matches and keeps the best `limit`. Relevance is BM25
/// scaled so the best match of this search is 1 (FTS5 reports BM25 negated:
/// lower is better).
pub fn rank(matches: Vec<TextMatch>, weights: &Weights, now: Micros, limit: usize) -> Vec<Hit> {
    let best = matches.iter().map(|m| m.bm25).fold(0.0f64, f64::min);
    let mut hits: Vec<Hit> = matches
        .into_iter()
        .map(|m| {
            let relevance = if best < 0.0 {
                (m.bm25 / best).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let recency = recency(m.memory.update_time, now, weights.half_life);
            let importance = m.memory.importance;
            Hit {
                score: weights.relevance * relevance
                    + weights.recency * recency
                    + weights.importance * importance,
                relevance,
                recency,
                importance,
                memory: m.memory,
            }
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.relevance.total_cmp(&a.relevance))
            .then(b.memory.seq.cmp(&a.memory.seq))
    });
    hits.truncate(limit);
    hits
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::domain::{MemoryLevel, MemorySource, MemoryType};

    fn memory(seq: i64, importance: f64, update_time: Micros) -> Memory {
        Memory {
            id: format!("m{seq}"),
            scope: Scope::default(),
            level: MemoryLevel::Global,
            memory_type: MemoryType::Fact,
            content: String::new(),
            summary: String::new(),
            tags: Vec::new(),
            metadata: BTreeMap::new(),
            importance,
            confidence: 1.0,
            source: MemorySource::Explicit,
            seen_count: 1,
            access_count: 0,
            create_time: update_time,
            update_time,
            last_access_time: None,
            expire_time: None,
            version: 1,
            seq,
        }
    }

    #[test]
    fn fts_query_quotes_every_term_and_drops_stop_words() {
        assert_eq!(
            fts_query("What is the user's favourite DB?").as_deref(),
            Some("\"user\" OR \"s\" OR \"favourite\" OR \"db\"")
        );
    }

    #[test]
    fn fts_syntax_in_the_input_is_taken_literally() {
        assert_eq!(
            fts_query("content:rust NEAR(\"a\" b*)").as_deref(),
            Some("\"content\" OR \"rust\" OR \"near\" OR \"b\"")
        );
    }

    #[test]
    fn a_query_of_only_stop_words_still_searches_them() {
        assert_eq!(fts_query("the THE").as_deref(), Some("\"the\""));
    }

    #[test]
    fn a_query_without_words_searches_nothing() {
        assert_eq!(fts_query(" ?! -- "), None);
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
            TextMatch {
                memory: memory(1, 0.0, now),
                bm25: -2.0,
            },
            TextMatch {
                memory: memory(2, 1.0, now - DEFAULT_HALF_LIFE_MICROS),
                bm25: -4.0,
            },
        ];
        let hits = rank(matches, &Weights::default(), now, 10);
        assert_eq!(hits[0].memory.id, "m2");
        assert_eq!(hits[0].relevance, 1.0);
        assert!((hits[0].recency - 0.5).abs() < 1e-12);
        assert!((hits[0].score - (0.6 + 0.2 * 0.5 + 0.2)).abs() < 1e-12);
        assert_eq!(hits[1].relevance, 0.5);
        assert!((hits[1].score - (0.6 * 0.5 + 0.2)).abs() < 1e-12);
    }

    #[test]
    fn weights_can_make_importance_win_over_relevance() {
        let now = 0;
        let matches = vec![
            TextMatch {
                memory: memory(1, 0.1, now),
                bm25: -10.0,
            },
            TextMatch {
                memory: memory(2, 0.9, now),
                bm25: -1.0,
            },
        ];
        let weights = Weights {
            relevance: 0.0,
            recency: 0.0,
            importance: 1.0,
            ..Weights::default()
        };
        let hits = rank(matches, &weights, now, 1);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].memory.id, "m2");
    }
}
