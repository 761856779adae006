//! The vector index: each namespace's memory vectors, quantised to 8 bits,
//! searched by an exact scan that checks visibility and filters as it goes.
//!
//! Why a scan rather than a graph (HNSW): a namespace's cost is its own size
//! (one contiguous array per namespace), the filter is exact (a graph walk
//! with a selective filter loses recall), deletes are immediate, and at
//! 100k vectors of 384 dimensions a scan is about a millisecond — less than
//! embedding the query. Quantising each vector to i8 with its own scale
//! keeps cosines within about 0.005 and makes 1M vectors of 384 dimensions
//! take 440 MB rather than 1.5 GB. A large namespace is scanned in two
//! passes: every row's sign bits (an eighth of its codes' memory) estimate
//! its cosine, and the best few hundred are re-scored from the codes
//! (see `engram_kernels::codes`).
//!
//! Derived like the full-text index: loaded from the database at start,
//! then kept current by the same follower, from changes that carry each
//! memory's current state (and its vector, for a change that stored one).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use super::document::{NEVER, code, metadata_entry};
use super::filter::{DocView, Rule};
use crate::domain::identity::content_hash;
use crate::domain::{Embedding, Memory, MemoryFilter, Micros, Scope};
use crate::store::Store;
use engram_kernels::codes::{QueryCodes, QueryPlanes, quantise, sign_words, signs};

/// A match of the vector index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorMatch {
    pub seq: i64,
    pub cosine: f32,
    pub importance: f64,
    pub occurred_at: Micros,
}

/// What a filter reads of a memory, with strings shared within a namespace.
#[derive(Debug, Clone)]
struct Attrs {
    level: u64,
    memory_type: u64,
    project: Option<Arc<str>>,
    session: Option<Arc<str>>,
    agent: Option<Arc<str>>,
    user: Option<Arc<str>>,
    tags: Box<[Arc<str>]>,
    metadata: Box<[Arc<str>]>,
    importance: f64,
    create_time: Micros,
    occurred_at: Micros,
    expire_time: Micros,
    valid_from: Micros,
    valid_to: Micros,
    /// The content hash the vector was made from.
    content_hash: Box<str>,
}

/// One namespace's vectors: parallel arrays, a row per memory.
#[derive(Default)]
struct Namespace {
    seqs: Vec<i64>,
    attrs: Vec<Attrs>,
    /// `dimensions` codes per row.
    codes: Vec<i8>,
    /// Each row's scale: value ≈ code × scale.
    scales: Vec<f32>,
    /// `sign_words(dimensions)` words of sign bits per row, what a first
    /// pass over a large namespace reads (see [`VectorIndex::search`]).
    signs: Vec<u64>,
    /// Each row's count of positive values, and its mean absolute value.
    ones: Vec<u32>,
    lengths: Vec<f32>,
    rows: HashMap<i64, usize>,
    strings: HashSet<Arc<str>>,
}

impl Namespace {
    fn intern(&mut self, value: &str) -> Arc<str> {
        if let Some(shared) = self.strings.get(value) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(value);
        self.strings.insert(shared.clone());
        shared
    }

    fn optional(&mut self, value: &str) -> Option<Arc<str>> {
        (!value.is_empty()).then(|| self.intern(value))
    }

    fn describe(&mut self, memory: &Memory, content_hash: String) -> Attrs {
        let scope = &memory.scope;
        let project = self.optional(&scope.project_id);
        let session = self.optional(&scope.session_id);
        let agent = self.optional(&scope.agent_id);
        let user = self.optional(&scope.user_id);
        let tags = memory.tags.iter().map(|t| self.intern(t)).collect();
        let metadata = memory
            .metadata
            .iter()
            .map(|(k, v)| self.intern(&metadata_entry(k, v)))
            .collect();
        Attrs {
            level: code(memory.level.code()),
            memory_type: code(memory.memory_type.code()),
            project,
            session,
            agent,
            user,
            tags,
            metadata,
            importance: memory.importance,
            create_time: memory.create_time,
            occurred_at: memory.occurred_at,
            expire_time: memory.expire_time.unwrap_or(NEVER),
            valid_from: memory.valid_from,
            valid_to: memory.valid_to.unwrap_or(NEVER),
            content_hash: content_hash.into(),
        }
    }

    fn upsert(&mut self, seq: i64, attrs: Attrs, values: &[f32]) {
        let (codes, scale) = quantise(values);
        let (bits, length) = signs(values);
        let ones = bits.iter().map(|w| w.count_ones()).sum();
        match self.rows.get(&seq) {
            Some(&row) => {
                let (dimensions, words) = (codes.len(), bits.len());
                self.codes[row * dimensions..(row + 1) * dimensions].copy_from_slice(&codes);
                self.signs[row * words..(row + 1) * words].copy_from_slice(&bits);
                self.scales[row] = scale;
                self.ones[row] = ones;
                self.lengths[row] = length;
                self.attrs[row] = attrs;
            }
            None => {
                self.rows.insert(seq, self.seqs.len());
                self.seqs.push(seq);
                self.attrs.push(attrs);
                self.codes.extend_from_slice(&codes);
                self.signs.extend_from_slice(&bits);
                self.scales.push(scale);
                self.ones.push(ones);
                self.lengths.push(length);
            }
        }
    }

    fn remove(&mut self, seq: i64, dimensions: usize) {
        let Some(row) = self.rows.remove(&seq) else {
            return;
        };
        let last = self.seqs.len() - 1;
        let words = sign_words(dimensions);
        if row != last {
            let moved = self.seqs[last];
            self.rows.insert(moved, row);
            self.codes
                .copy_within(last * dimensions..(last + 1) * dimensions, row * dimensions);
            self.signs
                .copy_within(last * words..(last + 1) * words, row * words);
        }
        self.seqs.swap_remove(row);
        self.attrs.swap_remove(row);
        self.scales.swap_remove(row);
        self.ones.swap_remove(row);
        self.lengths.swap_remove(row);
        self.codes.truncate(last * dimensions);
        self.signs.truncate(last * words);
    }

    /// A row's cosine with the query, from its codes (within about 0.005).
    fn cosine(&self, row: usize, query: &QueryCodes) -> f32 {
        let dimensions = query.codes.len();
        query.dot(
            &self.codes[row * dimensions..(row + 1) * dimensions],
            self.scales[row],
        )
    }

    /// The `limit` rows with the best coarse estimates of their cosines,
    /// from their sign bits, that `accepts` takes, computed a block of rows
    /// at a time.
    fn shortlist(
        &self,
        query: &QueryPlanes,
        words: usize,
        limit: usize,
        accepts: impl Fn(usize) -> bool,
    ) -> Vec<(f32, usize)> {
        const BLOCK: usize = 256;
        let mut best = Best::new(limit);
        let mut block = [0.0f32; BLOCK];
        for start in (0..self.seqs.len()).step_by(BLOCK) {
            let end = (start + BLOCK).min(self.seqs.len());
            let block = &mut block[..end - start];
            query.estimates(
                &self.signs[start * words..end * words],
                &self.ones[start..end],
                &self.lengths[start..end],
                block,
            );
            for (row, score) in (start..end).zip(block.iter()) {
                best.offer(row, *score, &accepts);
            }
        }
        best.into_sorted()
    }

    /// The `limit` best-scored of `scored` rows that `accepts` takes, best
    /// first.
    fn best(
        scored: impl Iterator<Item = (usize, f32)>,
        limit: usize,
        accepts: impl Fn(usize) -> bool,
    ) -> Vec<(f32, usize)> {
        let mut best = Best::new(limit);
        for (row, score) in scored {
            best.offer(row, score, &accepts);
        }
        best.into_sorted()
    }
}

/// The best-scored rows so far, at most `limit`: a min-heap with the worst
/// on top.
struct Best {
    heap: std::collections::BinaryHeap<Worst>,
    limit: usize,
}

impl Best {
    fn new(limit: usize) -> Best {
        Best {
            heap: std::collections::BinaryHeap::with_capacity(limit + 1),
            limit,
        }
    }

    /// Keeps `row` if its score makes the best so far and `accepts` takes
    /// it. The filter is read only then: for few rows once there are
    /// `limit`, and the attributes are far more memory than the codes.
    #[inline]
    fn offer(&mut self, row: usize, score: f32, accepts: impl Fn(usize) -> bool) {
        let full = self.heap.len() == self.limit;
        if full
            && self
                .heap
                .peek()
                .is_some_and(|Worst(worst, _)| score <= *worst)
        {
            return;
        }
        if !accepts(row) {
            return;
        }
        if full {
            self.heap.pop();
        }
        self.heap.push(Worst(score, row));
    }

    /// Best first; equal scores by row.
    fn into_sorted(self) -> Vec<(f32, usize)> {
        let mut best: Vec<(f32, usize)> = self
            .heap
            .into_iter()
            .map(|Worst(s, row)| (s, row))
            .collect();
        best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        best
    }
}

/// A search over more rows than this many times its shortlist scans sign
/// bits first (an eighth of the codes' memory) and re-scores the shortlist
/// from the codes; a smaller one scans the codes.
const FIRST_PASS_ABOVE: usize = 8;
/// Rows a first pass keeps per match asked for, and at least.
const SHORTLIST_PER_MATCH: usize = 4;
const MIN_SHORTLIST: usize = 400;

/// A row's attributes with its memory's sequence number.
struct AttrsView<'a>(&'a Attrs, i64);

impl<'a> DocView<&'a str> for AttrsView<'a> {
    fn seq(&self) -> i64 {
        self.1
    }
    fn level(&self) -> u64 {
        self.0.level
    }
    fn memory_type(&self) -> u64 {
        self.0.memory_type
    }
    fn project(&self) -> Option<&'a str> {
        self.0.project.as_deref()
    }
    fn session(&self) -> Option<&'a str> {
        self.0.session.as_deref()
    }
    fn agent(&self) -> Option<&'a str> {
        self.0.agent.as_deref()
    }
    fn user(&self) -> Option<&'a str> {
        self.0.user.as_deref()
    }
    fn has_tag(&self, tag: &&'a str) -> bool {
        self.0.tags.iter().any(|t| &**t == *tag)
    }
    fn has_metadata(&self, entry: &&'a str) -> bool {
        self.0.metadata.iter().any(|e| &**e == *entry)
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

#[derive(Default)]
struct State {
    namespaces: HashMap<String, Namespace>,
    /// Which namespace each memory's row is in.
    located: HashMap<i64, String>,
}

/// The vectors of one model.
pub struct VectorIndex {
    model: String,
    dimensions: usize,
    state: RwLock<State>,
}

impl VectorIndex {
    /// An empty index of `model`'s vectors.
    pub fn new(model: &str, dimensions: usize) -> VectorIndex {
        VectorIndex {
            model: model.to_owned(),
            dimensions,
            state: RwLock::default(),
        }
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Applies a memory's current state (`None`: deleted or expired) and,
    /// when the change stored one, its current vector. A memory whose
    /// content changed loses its vector until the new one is stored.
    pub fn apply(&self, memory_seq: i64, memory: Option<&Memory>, vector: Option<&Embedding>) {
        let mut state = self.write();
        let State {
            namespaces,
            located,
        } = &mut *state;
        let Some(memory) = memory else {
            if let Some(namespace) = located.remove(&memory_seq)
                && let Some(rows) = namespaces.get_mut(&namespace)
            {
                rows.remove(memory_seq, self.dimensions);
            }
            return;
        };
        let hash = content_hash(&memory.content);
        let vector = vector.filter(|v| v.model == self.model && v.values.len() == self.dimensions);
        let rows = namespaces
            .entry(memory.scope.namespace.clone())
            .or_default();
        match (vector, rows.rows.get(&memory_seq).copied()) {
            (Some(vector), _) => {
                let attrs = rows.describe(memory, hash);
                rows.upsert(memory_seq, attrs, &vector.values);
                located.insert(memory_seq, memory.scope.namespace.clone());
            }
            (None, Some(row)) if *rows.attrs[row].content_hash == *hash => {
                let attrs = rows.describe(memory, hash);
                rows.attrs[row] = attrs;
            }
            (None, Some(_)) => {
                rows.remove(memory_seq, self.dimensions);
                located.remove(&memory_seq);
            }
            (None, None) => {}
        }
    }

    /// How many memories of `namespace` have a vector.
    pub fn len(&self, namespace: &str) -> usize {
        self.read()
            .namespaces
            .get(namespace)
            .map_or(0, |rows| rows.seqs.len())
    }

    /// The `limit` memories most similar to `query` that are visible from
    /// `scope` and pass `filter` at `now`, most similar first.
    pub fn search(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        now: Micros,
        query: &[f32],
        limit: usize,
    ) -> Vec<VectorMatch> {
        self.search_scanning(scope, filter, now, query, limit, FIRST_PASS_ABOVE)
    }

    /// [`VectorIndex::search`], scanning sign bits first when the namespace
    /// has more rows than `first_pass_above` times the shortlist.
    fn search_scanning(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        now: Micros,
        query: &[f32],
        limit: usize,
        first_pass_above: usize,
    ) -> Vec<VectorMatch> {
        let rule = Rule::new(scope, filter, now);
        let state = self.read();
        let Some(rows) = state.namespaces.get(&scope.namespace) else {
            return Vec::new();
        };
        if query.len() != self.dimensions || limit == 0 {
            return Vec::new();
        }
        let Some(rule) = rule.resolve(|_, key| Some(key.as_str())) else {
            return Vec::new();
        };
        let codes = QueryCodes::new(query);
        let accepts = |row: usize| rule.accepts(&AttrsView(&rows.attrs[row], rows.seqs[row]));
        let shortlist = (limit * SHORTLIST_PER_MATCH).max(MIN_SHORTLIST);
        let cosine = |row| (row, rows.cosine(row, &codes));
        let best = if rows.seqs.len() > shortlist.saturating_mul(first_pass_above) {
            let planes = QueryPlanes::new(query);
            let words = sign_words(self.dimensions);
            let shortlisted = rows.shortlist(&planes, words, shortlist, accepts);
            let rescored = shortlisted.into_iter().map(|(_, row)| cosine(row));
            Namespace::best(rescored, limit, |_| true)
        } else {
            Namespace::best((0..rows.seqs.len()).map(cosine), limit, accepts)
        };
        let mut matches: Vec<VectorMatch> = best
            .into_iter()
            .map(|(cosine, row)| VectorMatch {
                seq: rows.seqs[row],
                cosine,
                importance: rows.attrs[row].importance,
                occurred_at: rows.attrs[row].occurred_at,
            })
            .collect();
        matches.sort_by(|a, b| b.cosine.total_cmp(&a.cosine).then(b.seq.cmp(&a.seq)));
        matches
    }

    /// The cosines of these memories of `namespace` that have a vector.
    pub fn cosines(&self, namespace: &str, query: &[f32], seqs: &[i64]) -> HashMap<i64, f32> {
        let state = self.read();
        let Some(rows) = state.namespaces.get(namespace) else {
            return HashMap::new();
        };
        if query.len() != self.dimensions {
            return HashMap::new();
        }
        let query = QueryCodes::new(query);
        seqs.iter()
            .filter_map(|seq| {
                let row = *rows.rows.get(seq)?;
                Some((*seq, rows.cosine(row, &query)))
            })
            .collect()
    }
}

/// Vectors read from the database at a time while loading.
const LOAD_BATCH: usize = 5_000;
/// How often loading reports progress.
const LOAD_PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Fills `index` with every stored vector of its model (progress in the log).
pub async fn load(index: &VectorIndex, store: &dyn Store) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let mut reported = started;
    let (mut after, mut loaded) = (0, 0usize);
    loop {
        let batch = store
            .scan_embedded(&index.model, after, LOAD_BATCH)
            .await
            .map_err(|err| anyhow::anyhow!("loading vectors: {err}"))?;
        let Some(last) = batch.last().map(|(m, _)| m.seq) else {
            break;
        };
        let now = crate::domain::now_micros();
        for (memory, vector) in &batch {
            let live = memory.expire_time.is_none_or(|t| t > now);
            index.apply(memory.seq, live.then_some(memory), Some(vector));
        }
        loaded += batch.len();
        after = last;
        if reported.elapsed() >= LOAD_PROGRESS_EVERY {
            tracing::info!(loaded, "loading the vector index");
            reported = std::time::Instant::now();
        }
    }
    tracing::info!(
        vectors = loaded,
        model = %index.model,
        seconds = started.elapsed().as_secs_f64(),
        "vector index loaded"
    );
    Ok(())
}

/// A heap entry ordered so the smallest cosine is on top.
struct Worst(f32, usize);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::TimeRange;

    fn memory(seq: i64, namespace: &str, content: &str) -> Memory {
        Memory {
            tags: vec!["t".into()],
            ..Memory::plain(seq, namespace, content)
        }
    }

    fn vector(model: &str, values: &[f32]) -> Embedding {
        let mut values = values.to_vec();
        crate::embed::normalise(&mut values);
        Embedding {
            model: model.into(),
            values: values.into(),
        }
    }

    fn near(index: &VectorIndex, namespace: &str, query: &[f32], limit: usize) -> Vec<VectorMatch> {
        let scope = Scope {
            namespace: namespace.into(),
            ..Scope::default()
        };
        index.search(&scope, &MemoryFilter::default(), 1, query, limit)
    }

    fn seqs(matches: &[VectorMatch]) -> Vec<i64> {
        matches.iter().map(|m| m.seq).collect()
    }

    /// A deterministic stream of values in [-0.5, 0.5).
    fn random_values(seed: u64) -> impl FnMut() -> f32 {
        let mut state = seed.max(1);
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        }
    }

    fn index_of(vectors: &[Vec<f32>], namespace: &str) -> VectorIndex {
        let index = VectorIndex::new("m", vectors[0].len());
        for (seq, values) in (1..).zip(vectors) {
            let memory = memory(seq, namespace, "x");
            index.apply(seq, Some(&memory), Some(&vector("m", values)));
        }
        index
    }

    /// The median time of a search for each query, and the share of the
    /// exact scan's best `k` that the first pass finds, for k = 10 and 100.
    fn compare(index: &VectorIndex, queries: &[Vec<f32>]) -> [f64; 4] {
        let scope = Scope {
            namespace: "a".into(),
            ..Scope::default()
        };
        let (mut found, mut times) = ([0usize; 2], [Vec::new(), Vec::new()]);
        for query in queries {
            let mut answers = Vec::new();
            for (way, above) in [FIRST_PASS_ABOVE, usize::MAX].into_iter().enumerate() {
                let started = std::time::Instant::now();
                let filter = MemoryFilter::default();
                answers.push(index.search_scanning(&scope, &filter, 1, query, 100, above));
                times[way].push(started.elapsed().as_secs_f64() * 1e3);
            }
            for (at, k) in [10, 100].into_iter().enumerate() {
                let exact: HashSet<i64> = answers[1].iter().take(k).map(|m| m.seq).collect();
                found[at] += answers[0]
                    .iter()
                    .take(k)
                    .filter(|m| exact.contains(&m.seq))
                    .count();
            }
        }
        let median = |times: &mut Vec<f64>| {
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        };
        [
            median(&mut times[0]),
            median(&mut times[1]),
            found[0] as f64 / (10 * queries.len()) as f64,
            found[1] as f64 / (100 * queries.len()) as f64,
        ]
    }

    #[test]
    #[ignore = "prints the time and recall of searches over 100k vectors; run in an optimised profile"]
    fn scan_cost() {
        let mut random = random_values(0x2545_f491_4f6c_dd1d);
        let mut vectors = |n: usize| -> Vec<Vec<f32>> {
            (0..n)
                .map(|_| (0..384).map(|_| random()).collect())
                .collect()
        };
        for rows in [10_000, 100_000] {
            let index = index_of(&vectors(rows), "a");
            let [first, exact, at_10, at_100] = compare(&index, &vectors(51));
            println!(
                "{rows} random vectors: first pass {first:.2} ms, exact scan {exact:.2} ms; \
                 the exact best 10 found {at_10:.3}, best 100 {at_100:.3}"
            );
        }
        // The model's vectors of the policy's sentences, where a run of
        // `policy::tuning` has kept them: real neighbourhoods, not noise.
        let mut real: Vec<Vec<f32>> = crate::engine::policy::tuning::cached_sentence_vectors()
            .into_values()
            .collect();
        real.sort_by(|a, b| {
            a.iter()
                .map(|x| x.to_bits())
                .cmp(b.iter().map(|x| x.to_bits()))
        });
        if real.len() > 1_000 {
            let queries: Vec<Vec<f32>> = real.iter().step_by(real.len() / 200).cloned().collect();
            let rows: Vec<Vec<f32>> = real.iter().skip(1).step_by(2).cloned().collect();
            let index = index_of(&rows, "a");
            let [first, exact, at_10, at_100] = compare(&index, &queries);
            println!(
                "{} sentence vectors, {} queries: first pass {first:.2} ms, exact scan {exact:.2} ms; \
                 the exact best 10 found {at_10:.3}, best 100 {at_100:.3}",
                rows.len(),
                queries.len()
            );
        }
    }

    #[test]
    fn a_large_namespace_finds_the_same_nearest_through_its_first_pass() {
        // 5,000 rows around 50 centres: more than the first pass needs.
        let mut random = random_values(7);
        let centres: Vec<Vec<f32>> = (0..50)
            .map(|_| (0..64).map(|_| random()).collect())
            .collect();
        let mut around =
            |centre: &Vec<f32>| -> Vec<f32> { centre.iter().map(|c| c + 0.3 * random()).collect() };
        let rows: Vec<Vec<f32>> = (0..5_000).map(|i| around(&centres[i % 50])).collect();
        let queries: Vec<Vec<f32>> = (0..20).map(|i| around(&centres[i * 2])).collect();
        let index = index_of(&rows, "a");
        let minimum = MIN_SHORTLIST * FIRST_PASS_ABOVE;
        assert!(rows.len() > minimum, "the first pass is taken");
        let [_, _, at_10, at_100] = compare(&index, &queries);
        assert!(at_10 >= 0.99, "best 10: {at_10}");
        assert!(at_100 >= 0.97, "best 100: {at_100}");
        // Filters still apply in the first pass: an expired memory is never
        // found, however near.
        let mut expired = memory(1, "a", "x");
        expired.expire_time = Some(1);
        index.apply(1, Some(&expired), Some(&vector("m", &rows[0])));
        assert!(!seqs(&near(&index, "a", &rows[0], 10)).contains(&1));
        assert_eq!(near(&index, "a", &rows[0], 10).len(), 10);
    }

    #[test]
    fn the_nearest_come_first_and_other_namespaces_never() {
        let index = VectorIndex::new("m", 3);
        index.apply(
            1,
            Some(&memory(1, "a", "x")),
            Some(&vector("m", &[1.0, 0.0, 0.0])),
        );
        index.apply(
            2,
            Some(&memory(2, "a", "y")),
            Some(&vector("m", &[0.0, 1.0, 0.0])),
        );
        index.apply(
            3,
            Some(&memory(3, "a", "z")),
            Some(&vector("m", &[1.0, 1.0, 0.0])),
        );
        index.apply(
            4,
            Some(&memory(4, "b", "w")),
            Some(&vector("m", &[1.0, 0.0, 0.0])),
        );
        let found = near(&index, "a", &[1.0, 0.0, 0.0], 2);
        assert_eq!(seqs(&found), [1, 3]);
        assert!((found[0].cosine - 1.0).abs() < 0.01);
        assert_eq!(seqs(&near(&index, "b", &[1.0, 0.0, 0.0], 10)), [4]);
        assert!(near(&index, "c", &[1.0, 0.0, 0.0], 10).is_empty());
        assert_eq!(index.len("a"), 3);
    }

    #[test]
    fn deletes_content_changes_and_other_models_take_vectors_out() {
        let index = VectorIndex::new("m", 2);
        for seq in 1..=4 {
            index.apply(
                seq,
                Some(&memory(seq, "a", "x")),
                Some(&vector("m", &[1.0, seq as f32])),
            );
        }
        index.apply(1, None, None);
        // A new content without its vector yet: out until it comes.
        index.apply(2, Some(&memory(2, "a", "changed")), None);
        // The same content, e.g. a new importance: kept.
        let mut reinforced = memory(3, "a", "x");
        reinforced.importance = 0.9;
        index.apply(3, Some(&reinforced), None);
        // A vector of another model is not this index's.
        index.apply(
            5,
            Some(&memory(5, "a", "x")),
            Some(&vector("other", &[1.0, 0.0])),
        );
        let found = near(&index, "a", &[1.0, 0.0], 10);
        assert_eq!(seqs(&found).len(), 2);
        assert!(seqs(&found).contains(&3) && seqs(&found).contains(&4));
        let three = found.iter().find(|m| m.seq == 3).unwrap();
        assert_eq!(three.importance, 0.9);
        // Every row still answers for its own memory after the swaps.
        let cosines = index.cosines("a", &[1.0, 0.0], &[1, 2, 3, 4]);
        assert_eq!(cosines.len(), 2);
        assert!((cosines[&4] - 1.0 / 17f32.sqrt()).abs() < 0.01);
    }

    #[test]
    fn filters_apply_inside_the_scan() {
        let index = VectorIndex::new("m", 2);
        let mut tagged = memory(1, "a", "x");
        tagged.tags = vec!["deploy".into()];
        index.apply(1, Some(&tagged), Some(&vector("m", &[1.0, 0.0])));
        let mut expired = memory(2, "a", "y");
        expired.expire_time = Some(1);
        index.apply(2, Some(&expired), Some(&vector("m", &[1.0, 0.0])));
        index.apply(
            3,
            Some(&memory(3, "a", "z")),
            Some(&vector("m", &[0.0, 1.0])),
        );
        let filter = MemoryFilter {
            tags: vec!["deploy".into()],
            ..MemoryFilter::default()
        };
        let scope = Scope {
            namespace: "a".into(),
            ..Scope::default()
        };
        assert_eq!(
            seqs(&index.search(&scope, &filter, 1, &[0.0, 1.0], 10)),
            [1]
        );
        // The expired memory is never found.
        assert_eq!(seqs(&near(&index, "a", &[1.0, 0.0], 10)), [1, 3]);
    }

    #[test]
    fn matches_carry_when_it_happened_and_the_occurred_range_applies_inside_the_scan() {
        let index = VectorIndex::new("m", 2);
        for (seq, occurred_at) in [(1, 10), (2, 50)] {
            let mut happened = memory(seq, "a", "x");
            happened.occurred_at = occurred_at;
            index.apply(seq, Some(&happened), Some(&vector("m", &[1.0, 0.0])));
        }
        let scope = Scope {
            namespace: "a".into(),
            ..Scope::default()
        };
        let since_20 = MemoryFilter {
            occurred: TimeRange {
                after: Some(20),
                before: None,
            },
            ..MemoryFilter::default()
        };
        let found = index.search(&scope, &since_20, 1, &[1.0, 0.0], 10);
        assert_eq!(seqs(&found), [2]);
        assert_eq!(found[0].occurred_at, 50);
        let all = near(&index, "a", &[1.0, 0.0], 10);
        assert_eq!(all.iter().find(|m| m.seq == 1).unwrap().occurred_at, 10);
    }
}
