//! The tail: changes applied from the feed but not yet in the committed
//! index. Tantivy commits are expensive (tens of milliseconds), so they run
//! in the background; until one lands, searches read the committed segments
//! *and* this tail, and skip every committed document the tail has replaced
//! or deleted. A search therefore reflects every applied change at once.
//!
//! The tail is small (what arrived since the last commit, bounded by
//! [`super::MAX_TAIL`]), so it is a plain in-memory inverted map per
//! namespace.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use tantivy::fieldnorm::FieldNormReader;

use super::document::IndexedDoc;
use super::filter::{DocView, Rule};
use super::segment::Counts;
use crate::domain::{Micros, dates};

/// The newest uncommitted change of one memory.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The feed sequence number of the change.
    pub feed_seq: i64,
    /// The memory's indexed form; `None` when it is deleted (or expired).
    pub doc: Option<Arc<IndexedDoc>>,
}

/// One namespace's uncommitted documents.
#[derive(Debug, Default)]
pub struct NamespaceTail {
    /// Documents and terms, counted as the committed index will count them.
    pub counts: Counts,
    /// What the tail knows of each term.
    terms: HashMap<String, Postings>,
}

/// The uncommitted documents that contain a term.
#[derive(Debug, Default)]
struct Postings {
    /// How many current documents contain it.
    doc_freq: u64,
    /// Memory sequence numbers. May name a memory whose newer version lacks
    /// the term; [`Tail::candidates`] checks.
    seqs: Vec<i64>,
}

impl NamespaceTail {
    /// How many uncommitted documents of the namespace contain `term`.
    pub fn doc_freq(&self, term: &str) -> u64 {
        self.terms.get(term).map_or(0, |p| p.doc_freq)
    }
}

/// Changes not yet in the committed index.
#[derive(Debug, Default)]
pub struct Tail {
    entries: HashMap<i64, Entry>,
    /// Changes not yet handed to the committer: (feed seq, memory seq).
    pending: VecDeque<(i64, i64)>,
    namespaces: HashMap<String, NamespaceTail>,
    /// Every feed change up to this one has been applied.
    applied: i64,
}

/// What the committer writes: each memory's newest state, and the feed
/// position the commit will stand for.
pub struct Batch {
    pub changes: Vec<(i64, Option<Arc<IndexedDoc>>)>,
    pub watermark: i64,
}

/// The BM25 contribution of one term, for scoring tail documents the way
/// tantivy scores committed ones.
pub struct TermWeight<'a> {
    pub term: &'a str,
    pub weight: tantivy::query::Bm25Weight,
}

impl Tail {
    /// An empty tail that follows on from the feed position `applied`.
    pub fn new(applied: i64) -> Tail {
        Tail {
            applied,
            ..Tail::default()
        }
    }

    /// How many memories have uncommitted changes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many changes wait for the committer.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Applies the feed change `feed_seq` to memory `memory_seq`: its new
    /// state, or its removal.
    pub fn apply(&mut self, feed_seq: i64, memory_seq: i64, doc: Option<Arc<IndexedDoc>>) {
        if let Some(Entry { doc: Some(old), .. }) = self.entries.remove(&memory_seq) {
            self.unindex(&old);
        }
        if let Some(doc) = &doc {
            self.index(doc);
        }
        self.entries.insert(memory_seq, Entry { feed_seq, doc });
        self.pending.push_back((feed_seq, memory_seq));
        self.applied = self.applied.max(feed_seq);
    }

    /// Marks every change up to `feed_seq` applied (a stretch of the feed
    /// with nothing to apply).
    pub fn skip_to(&mut self, feed_seq: i64) {
        self.applied = self.applied.max(feed_seq);
    }

    /// Whether the tail holds a newer state of committed memory `memory_seq`
    /// (so the committed document must not be returned).
    pub fn replaces(&self, memory_seq: i64) -> bool {
        self.entries.contains_key(&memory_seq)
    }

    /// The uncommitted documents of `namespace`, if any.
    pub fn namespace(&self, namespace: &str) -> Option<&NamespaceTail> {
        self.namespaces.get(namespace)
    }

    /// Hands the pending changes to the committer.
    pub fn take_pending(&mut self) -> Batch {
        let mut changes = Vec::with_capacity(self.pending.len());
        for (feed_seq, memory_seq) in self.pending.drain(..) {
            // A later change of the same memory supersedes this one; it is
            // further down the queue.
            if let Some(entry) = self.entries.get(&memory_seq)
                && entry.feed_seq == feed_seq
            {
                changes.push((memory_seq, entry.doc.clone()));
            }
        }
        Batch {
            changes,
            watermark: self.applied,
        }
    }

    /// After a failed commit: hands every change above `committed` to the
    /// committer again.
    pub fn requeue_after(&mut self, committed: i64) {
        let mut again: Vec<(i64, i64)> = self
            .entries
            .iter()
            .filter(|(_, entry)| entry.feed_seq > committed)
            .map(|(&memory_seq, entry)| (entry.feed_seq, memory_seq))
            .collect();
        again.sort_unstable();
        self.pending = again.into();
    }

    /// Forgets the changes the committed index now holds (feed sequence at or
    /// below `watermark`).
    pub fn prune(&mut self, watermark: i64) {
        self.entries.retain(|_, entry| entry.feed_seq > watermark);
        // Rebuilding is cheaper than unindexing one by one: what is left is
        // what arrived during the commit.
        self.namespaces.clear();
        let docs: Vec<Arc<IndexedDoc>> = self
            .entries
            .values()
            .filter_map(|entry| entry.doc.clone())
            .collect();
        for doc in &docs {
            self.index(doc);
        }
    }

    fn index(&mut self, doc: &IndexedDoc) {
        let tail = self.namespaces.entry(doc.namespace.clone()).or_default();
        tail.counts.docs += 1;
        tail.counts.terms += u64::from(normalised_length(doc.terms.length));
        for (term, _) in doc.terms.terms.iter().chain(&doc.times.terms) {
            // Look up before inserting: most terms are there already, and
            // then the term need not be copied.
            let postings = match tail.terms.get_mut(term.as_str()) {
                Some(postings) => postings,
                None => tail.terms.entry(term.clone()).or_default(),
            };
            postings.doc_freq += 1;
            postings.seqs.push(doc.seq);
        }
    }

    fn unindex(&mut self, doc: &IndexedDoc) {
        let Some(tail) = self.namespaces.get_mut(&doc.namespace) else {
            return;
        };
        tail.counts.docs = tail.counts.docs.saturating_sub(1);
        tail.counts.terms = tail
            .counts
            .terms
            .saturating_sub(u64::from(normalised_length(doc.terms.length)));
        for (term, _) in doc.terms.terms.iter().chain(&doc.times.terms) {
            if let Some(postings) = tail.terms.get_mut(term.as_str()) {
                // The sequence number stays; `candidates` skips it.
                postings.doc_freq = postings.doc_freq.saturating_sub(1);
            }
        }
    }

    /// The uncommitted documents of `namespace` that contain one of the
    /// `terms` and pass `rule`, with their BM25 scores.
    pub fn candidates(
        &self,
        namespace: &str,
        terms: &[TermWeight<'_>],
        rule: &Rule<&str>,
    ) -> Vec<(Arc<IndexedDoc>, f32)> {
        let Some(tail) = self.namespaces.get(namespace) else {
            return Vec::new();
        };
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        for term in terms {
            let seqs = tail.terms.get(term.term).map_or(&[][..], |p| &p.seqs[..]);
            for &seq in seqs {
                if !seen.insert(seq) {
                    continue;
                }
                let Some(doc) = self.entries.get(&seq).and_then(|e| e.doc.as_ref()) else {
                    continue;
                };
                if doc.namespace != namespace || !rule.accepts(&TailDoc(doc)) {
                    continue;
                }
                let words = FieldNormReader::fieldnorm_to_id(doc.terms.length);
                let score: f32 = terms
                    .iter()
                    .map(|t| match doc.frequency(t.term) {
                        0 => 0.0,
                        // The times field has no lengths: each reads as 1.
                        frequency if dates::is_term(t.term) => t
                            .weight
                            .score(FieldNormReader::fieldnorm_to_id(1), frequency),
                        frequency => t.weight.score(words, frequency),
                    })
                    .sum();
                if score > 0.0 {
                    found.push((doc.clone(), score));
                }
            }
        }
        found
    }
}

/// A length as tantivy records it: a one-byte code, so the statistics of
/// the tail add up to what the committed index will report.
fn normalised_length(length: u32) -> u32 {
    FieldNormReader::id_to_fieldnorm(FieldNormReader::fieldnorm_to_id(length))
}

/// An uncommitted document as a filter reads it.
struct TailDoc<'a>(&'a IndexedDoc);

fn non_empty(value: &str) -> Option<&str> {
    (!value.is_empty()).then_some(value)
}

impl<'a> DocView<&'a str> for TailDoc<'a> {
    fn seq(&self) -> i64 {
        self.0.seq
    }
    fn level(&self) -> u64 {
        self.0.level
    }
    fn memory_type(&self) -> u64 {
        self.0.memory_type
    }
    fn project(&self) -> Option<&'a str> {
        non_empty(&self.0.project_id)
    }
    fn session(&self) -> Option<&'a str> {
        non_empty(&self.0.session_id)
    }
    fn agent(&self) -> Option<&'a str> {
        non_empty(&self.0.agent_id)
    }
    fn user(&self) -> Option<&'a str> {
        non_empty(&self.0.user_id)
    }
    fn has_tag(&self, tag: &&'a str) -> bool {
        self.0.tags.iter().any(|t| t == tag)
    }
    fn has_metadata(&self, entry: &&'a str) -> bool {
        self.0.metadata.iter().any(|e| e == entry)
    }
    fn importance(&self) -> f64 {
        self.0.importance
    }
    fn create_time(&self) -> Micros {
        self.0.create_time
    }
    fn occurred_at(&self) -> Micros {
        self.0.occurred_at
    }
    fn expire_time(&self) -> Micros {
        self.0.expire_time
    }
    fn validity(&self) -> (Micros, Micros) {
        (self.0.valid_from, self.0.valid_to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Memory, Scope};
    use crate::index::filter::Rule;

    fn doc(seq: i64, namespace: &str, content: &str) -> Arc<IndexedDoc> {
        Arc::new(IndexedDoc::new(&Memory::plain(seq, namespace, content)))
    }

    fn found(tail: &Tail, namespace: &str, term: &str) -> Vec<i64> {
        let rule = Rule::new(
            &Scope {
                namespace: namespace.into(),
                ..Scope::default()
            },
            &Default::default(),
            1,
        );
        let rule = rule.resolve(|_, key| Some(key.as_str())).expect("resolves");
        let weights = [TermWeight {
            term,
            weight: tantivy::query::Bm25Weight::for_one_term(1, 10, 5.0),
        }];
        let mut seqs: Vec<i64> = tail
            .candidates(namespace, &weights, &rule)
            .into_iter()
            .map(|(doc, _)| doc.seq)
            .collect();
        seqs.sort_unstable();
        seqs
    }

    #[test]
    fn the_newest_change_of_a_memory_wins() {
        let mut tail = Tail::new(0);
        tail.apply(1, 7, Some(doc(7, "a", "kafka lag")));
        tail.apply(2, 7, Some(doc(7, "a", "postgres vacuum")));
        assert!(found(&tail, "a", "kafka").is_empty());
        assert_eq!(found(&tail, "a", "postgr"), [7]);
        assert_eq!(tail.namespace("a").map(|t| t.counts.docs), Some(1));
        assert_eq!(tail.namespace("a").map(|t| t.doc_freq("kafka")), Some(0));
        tail.apply(3, 7, None);
        assert!(found(&tail, "a", "postgr").is_empty());
        assert!(
            tail.replaces(7),
            "a deleted memory still hides its committed version"
        );
    }

    #[test]
    fn namespaces_do_not_mix() {
        let mut tail = Tail::new(0);
        tail.apply(1, 1, Some(doc(1, "a", "kafka")));
        tail.apply(2, 2, Some(doc(2, "b", "kafka")));
        assert_eq!(found(&tail, "a", "kafka"), [1]);
        assert_eq!(found(&tail, "b", "kafka"), [2]);
        assert_eq!(tail.namespace("a").map(|t| t.doc_freq("kafka")), Some(1));
    }

    #[test]
    fn the_committer_gets_each_memory_once_and_a_commit_prunes_what_it_holds() {
        let mut tail = Tail::new(0);
        tail.apply(1, 1, Some(doc(1, "a", "one")));
        tail.apply(2, 1, Some(doc(1, "a", "one again")));
        tail.apply(3, 2, Some(doc(2, "a", "two")));
        let batch = tail.take_pending();
        assert_eq!(batch.watermark, 3);
        assert_eq!(
            batch
                .changes
                .iter()
                .map(|(seq, _)| *seq)
                .collect::<Vec<_>>(),
            [1, 2]
        );
        // A change arriving during the commit stays for the next one.
        tail.apply(4, 2, Some(doc(2, "a", "two again")));
        tail.prune(batch.watermark);
        assert!(!tail.replaces(1));
        assert!(tail.replaces(2));
        assert_eq!(found(&tail, "a", "two"), [2]);
        assert_eq!(tail.take_pending().changes.len(), 1);
    }

    #[test]
    fn a_failed_commit_hands_everything_uncommitted_back() {
        let mut tail = Tail::new(0);
        tail.apply(1, 1, Some(doc(1, "a", "one")));
        tail.apply(2, 2, Some(doc(2, "a", "two")));
        assert_eq!(tail.take_pending().changes.len(), 2);
        assert_eq!(tail.pending(), 0);
        tail.requeue_after(0);
        assert_eq!(tail.pending(), 2);
    }
}
