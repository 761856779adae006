//! One search: the namespace's terms scored by BM25 with block-max WAND over
//! the committed segments, filtered inside the index, plus the uncommitted
//! tail, keeping the best `limit`.
//!
//! BM25's statistics (how many documents, their mean length, how many
//! contain a term) are the namespace's own, not the whole index's: a tenant's
//! scores, and so its ranking, depend on nothing another tenant stores. Term
//! frequencies come per namespace from the namespaced terms; documents and
//! lengths from counts kept per segment ([`super::segment::Counts`]). The
//! idf is FTS5's (see [`idf_boost`]).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use tantivy::query::{
    Bm25StatisticsProvider, Bm25Weight, BooleanQuery, BoostQuery, EnableScoring, Occur, Query,
    TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, Score, Searcher, Term};

use super::document::Fields;
use super::filter::{KeyField, Rule};
use super::segment::{Counts, SegmentView};
use super::tail::{NamespaceTail, TermWeight};
use super::{Live, TextQuery};
use crate::domain::TextMatch;

/// The smallest inverse document frequency a term gets.
const MIN_IDF: Score = 1e-6;

/// Turns tantivy's (Lucene's) idf, `ln(1 + odds)`, into the Robertson–Spärck
/// Jones idf, `ln(odds)` with `odds = (N − n + ½) / (n + ½)`, floored at
/// [`MIN_IDF`] — the idf SQLite FTS5 scored with before this index, kept so
/// relevance means what it meant. A term in half the namespace's memories
/// or more carries no evidence and weighs (almost) nothing, where Lucene's
/// idf would still give it ln 2: in agent memory such terms are the user's
/// or project's name, in every memory. Block-max WAND then skips them cheaply.
fn idf_boost(doc_freq: u64, docs: u64) -> Score {
    let (n, total) = (doc_freq as Score, docs as Score);
    let odds = (total - n + 0.5) / (n + 0.5);
    odds.ln().max(MIN_IDF) / odds.ln_1p()
}

/// The namespace's BM25 statistics: committed segments plus the tail.
struct Statistics<'a> {
    searcher: &'a Searcher,
    /// The field of time terms, which has no lengths.
    times: Field,
    segments: &'a [SegmentView],
    tail: Option<&'a NamespaceTail>,
    namespace: &'a str,
    counts: Counts,
}

impl Statistics<'_> {
    /// The bare term of a namespaced index term.
    fn tail_term<'t>(&self, term: &'t Term) -> Option<&'t str> {
        std::str::from_utf8(term.serialized_value_bytes())
            .ok()?
            .strip_prefix(self.namespace)?
            .strip_prefix('\0')
    }
}

impl Bm25StatisticsProvider for Statistics<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        // Without lengths every document's is 1, and so is the mean.
        Ok(if field == self.times {
            self.counts.docs
        } else {
            self.counts.terms
        })
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.counts.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        // Only segments that hold the namespace can hold its terms.
        let mut committed = 0;
        for (reader, segment) in self.searcher.segment_readers().iter().zip(self.segments) {
            if segment.counts(self.namespace).docs > 0 {
                committed += u64::from(reader.inverted_index(term.field())?.doc_freq(term)?);
            }
        }
        let uncommitted = match (self.tail, self.tail_term(term)) {
            (Some(tail), Some(bare)) => tail.doc_freq(bare),
            _ => 0,
        };
        // BM25's idf needs df ≤ N; they are counted alike, but never panic on it.
        Ok((committed + uncommitted).min(self.counts.docs))
    }
}

/// A candidate in the running top k: ordered by score, then by newer memory.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ranked {
    score: Score,
    seq: i64,
    importance: f64,
    occurred_at: i64,
}

impl Eq for Ranked {}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then(self.seq.cmp(&other.seq))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The best `limit` candidates seen so far.
struct TopK {
    limit: usize,
    heap: BinaryHeap<Reverse<Ranked>>,
}

impl TopK {
    fn new(limit: usize) -> TopK {
        TopK {
            limit,
            heap: BinaryHeap::with_capacity(limit + 1),
        }
    }

    /// The score a candidate must beat to enter.
    fn threshold(&self) -> Score {
        if self.heap.len() < self.limit {
            Score::MIN
        } else {
            self.heap.peek().map_or(Score::MIN, |worst| worst.0.score)
        }
    }

    fn push(&mut self, candidate: Ranked) {
        if self.heap.len() < self.limit {
            self.heap.push(Reverse(candidate));
        } else if let Some(mut worst) = self.heap.peek_mut()
            && candidate > worst.0
        {
            *worst = Reverse(candidate);
        }
    }

    fn into_sorted(self) -> Vec<Ranked> {
        let mut ranked: Vec<Ranked> = self.heap.into_iter().map(|r| r.0).collect();
        ranked.sort_by(|a, b| b.cmp(a));
        ranked
    }
}

/// Runs `query` over `live`.
pub(super) fn run(
    live: &Live,
    fields: &Fields,
    query: &TextQuery,
) -> tantivy::Result<Vec<TextMatch>> {
    let namespace = query.scope.namespace.as_str();
    let mut terms = super::analyzer::query_terms(query.text);
    for extra in query.extra_terms {
        if !terms.contains(extra) {
            terms.push(extra.clone());
        }
    }
    if terms.is_empty() || query.limit == 0 {
        return Ok(Vec::new());
    }
    let tail = live.tail.namespace(namespace);
    let mut counts = tail.map(|t| t.counts).unwrap_or_default();
    for segment in &live.segments {
        let c = segment.counts(namespace);
        counts.docs += c.docs;
        counts.terms += c.terms;
    }
    if counts.docs == 0 {
        // Nothing was ever stored in this namespace.
        return Ok(Vec::new());
    }
    let statistics = Statistics {
        searcher: &live.searcher,
        times: fields.times,
        segments: &live.segments,
        tail,
        namespace,
        counts,
    };
    let rule = Rule::new(query.scope, query.filter, query.now);
    let mut top = TopK::new(query.limit);

    let mut index_terms: Vec<(Term, &str, u64)> = terms
        .iter()
        .map(|t| {
            let term = fields.term(namespace, t);
            let doc_freq = statistics.doc_freq(&term)?;
            Ok((term, t.as_str(), doc_freq))
        })
        .collect::<tantivy::Result<_>>()?;
    if let Some(max) = query.max_terms {
        // The rarest of those some memory has (a term none has finds
        // nothing); ties keep the text's order.
        index_terms.retain(|(_, _, doc_freq)| *doc_freq > 0);
        index_terms.sort_by_key(|(_, _, doc_freq)| *doc_freq);
        index_terms.truncate(max);
    }
    let boosts: Vec<Score> = index_terms
        .iter()
        .map(|(_, _, doc_freq)| idf_boost(*doc_freq, counts.docs))
        .collect();
    let (index_terms, terms): (Vec<Term>, Vec<&str>) = index_terms
        .into_iter()
        .map(|(term, bare, _)| (term, bare))
        .unzip();
    let clauses: Vec<(Occur, Box<dyn Query>)> = index_terms
        .iter()
        .zip(&boosts)
        .map(|(term, &boost)| {
            let term = TermQuery::new(term.clone(), IndexRecordOption::WithFreqs);
            let query: Box<dyn Query> = Box::new(BoostQuery::new(Box::new(term), boost));
            (Occur::Should, query)
        })
        .collect();
    let weight = BooleanQuery::new(clauses).weight(
        EnableScoring::enabled_from_statistics_provider(&statistics, &live.searcher),
    )?;
    for (reader, segment) in live.searcher.segment_readers().iter().zip(&live.segments) {
        if segment.counts(namespace).docs == 0 {
            continue;
        }
        let Some(rule) = resolve(&rule, segment) else {
            continue;
        };
        let alive = reader.alive_bitset();
        let threshold = top.threshold();
        let mut visit = |doc: DocId, score: Score| -> Score {
            if alive.is_some_and(|a| a.is_deleted(doc)) {
                return top.threshold();
            }
            let Some(seq) = segment.seq.first(doc) else {
                return top.threshold();
            };
            if live.tail.replaces(seq) || !rule.accepts(&segment.doc(doc)) {
                return top.threshold();
            }
            top.push(Ranked {
                score,
                seq,
                importance: segment.importance.first(doc).unwrap_or(0.0),
                occurred_at: segment.occurred_at.first(doc).unwrap_or(0),
            });
            top.threshold()
        };
        weight.for_each_pruning(threshold, reader, &mut visit)?;
    }

    if tail.is_some() {
        let weights = index_terms
            .iter()
            .zip(&terms)
            .zip(&boosts)
            .map(|((term, bare), &boost)| {
                Ok(TermWeight {
                    term: bare,
                    weight: Bm25Weight::for_terms(&statistics, std::slice::from_ref(term))?
                        .boost_by(boost),
                })
            })
            .collect::<tantivy::Result<Vec<_>>>()?;
        // Every key maps to itself, so the rule always resolves.
        let rule = rule.resolve(|_, key| Some(key.as_str()));
        for (doc, score) in rule
            .iter()
            .flat_map(|rule| live.tail.candidates(namespace, &weights, rule))
        {
            top.push(Ranked {
                score,
                seq: doc.seq,
                importance: doc.importance,
                occurred_at: doc.occurred_at,
            });
        }
    }

    Ok(top
        .into_sorted()
        .into_iter()
        .map(|r| TextMatch {
            seq: r.seq,
            bm25: f64::from(r.score),
            importance: r.importance,
            occurred_at: r.occurred_at,
        })
        .collect())
}

/// The rule over `segment`'s ordinals; `None` when nothing there can match.
fn resolve(rule: &Rule<String>, segment: &SegmentView) -> Option<Rule<u64>> {
    rule.resolve(|field, key| {
        let column = match field {
            KeyField::Project => &segment.project_id,
            KeyField::Session => &segment.session_id,
            KeyField::Agent => &segment.agent_id,
            KeyField::User => &segment.user_id,
            KeyField::Tags => &segment.tags,
            KeyField::Metadata => &segment.metadata,
        };
        SegmentView::ordinal(column, key)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_keep_their_idf_and_ubiquitous_ones_lose_it() {
        // Lucene's idf times the boost is the Robertson–Spärck Jones idf.
        let lucene = |n: f32, total: f32| ((total - n + 0.5) / (n + 0.5)).ln_1p();
        let rsj = |n: u64, total: u64| lucene(n as f32, total as f32) * idf_boost(n, total);
        assert!((rsj(1, 1000) - (999.5f32 / 1.5).ln()).abs() < 1e-4);
        assert!((rsj(100, 1000) - (900.5f32 / 100.5).ln()).abs() < 1e-4);
        // In half the memories or more: next to nothing.
        assert!(rsj(500, 1000) <= 1e-5);
        assert!(rsj(900, 1000) <= 1e-5);
        assert!(rsj(1, 1) > 0.0);
    }

    #[test]
    fn the_top_k_keeps_the_best_and_breaks_ties_by_newer_memory() {
        let mut top = TopK::new(2);
        let ranked = |score: Score, seq: i64| Ranked {
            score,
            seq,
            importance: 0.0,
            occurred_at: 0,
        };
        assert_eq!(top.threshold(), Score::MIN);
        top.push(ranked(1.0, 1));
        top.push(ranked(3.0, 2));
        assert_eq!(top.threshold(), 1.0);
        top.push(ranked(2.0, 3));
        top.push(ranked(2.0, 4));
        let seqs: Vec<i64> = top.into_sorted().iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [2, 4]);
    }
}
