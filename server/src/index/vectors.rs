//! The vector index: each namespace's memory vectors, quantised to 8 bits,
//! searched by an exact scan that checks visibility and filters as it goes.
//!
//! Why a scan rather than a graph (HNSW): a namespace's cost is its own size
//! (one contiguous array per namespace), the filter is exact (a graph walk
//! with a selective filter loses recall), deletes are immediate, and at
//! 100k vectors of 384 dimensions a scan is a few milliseconds — less than
//! embedding the query. Quantising each vector to i8 with its own scale
//! keeps cosines within about 0.005 and makes 1M vectors of 384 dimensions
//! take 390 MB rather than 1.5 GB.
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
        match self.rows.get(&seq) {
            Some(&row) => {
                let dimensions = codes.len();
                self.codes[row * dimensions..(row + 1) * dimensions].copy_from_slice(&codes);
                self.scales[row] = scale;
                self.attrs[row] = attrs;
            }
            None => {
                self.rows.insert(seq, self.seqs.len());
                self.seqs.push(seq);
                self.attrs.push(attrs);
                self.codes.extend_from_slice(&codes);
                self.scales.push(scale);
            }
        }
    }

    fn remove(&mut self, seq: i64, dimensions: usize) {
        let Some(row) = self.rows.remove(&seq) else {
            return;
        };
        let last = self.seqs.len() - 1;
        if row != last {
            let moved = self.seqs[last];
            self.rows.insert(moved, row);
            self.codes
                .copy_within(last * dimensions..(last + 1) * dimensions, row * dimensions);
        }
        self.seqs.swap_remove(row);
        self.attrs.swap_remove(row);
        self.scales.swap_remove(row);
        self.codes.truncate(last * dimensions);
    }

    fn cosine(&self, row: usize, query: &Query) -> f32 {
        let dimensions = query.codes.len();
        let codes = &self.codes[row * dimensions..(row + 1) * dimensions];
        dot_codes(&query.codes, codes) as f32 * query.scale * self.scales[row]
    }
}

/// `values` as i8 codes and the scale that maps them back.
fn quantise(values: &[f32]) -> (Vec<i8>, f32) {
    let largest = values.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 || !largest.is_finite() {
        return (vec![0; values.len()], 0.0);
    }
    let scale = largest / 127.0;
    let codes = values
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (codes, scale)
}

/// A query vector as integers, so that a row's cosine is an integer dot
/// product (a few times faster than converting each code to a float).
struct Query {
    codes: Vec<i16>,
    /// value ≈ code × scale.
    scale: f32,
}

impl Query {
    /// `values` in as many bits as keep a dot product with any row of i8
    /// codes within an i32 (15 bits up to 516 dimensions, about 13 at
    /// 1,536): the query's own rounding error stays far below the rows'.
    fn new(values: &[f32]) -> Query {
        let most = (i32::MAX as usize / (127 * values.len().max(1))).min(i16::MAX as usize);
        let largest = values.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if largest == 0.0 || !largest.is_finite() || most == 0 {
            return Query {
                codes: vec![0; values.len()],
                scale: 0.0,
            };
        }
        let scale = largest / most as f32;
        let limit = most as f32;
        let codes = values
            .iter()
            .map(|x| (x / scale).round().clamp(-limit, limit) as i16)
            .collect();
        Query { codes, scale }
    }
}

/// The dot product of a query's and a row's codes, in the widest SIMD the
/// CPU has.
fn dot_codes(query: &[i16], codes: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has just been found to support AVX2.
        return unsafe { dot_codes_avx2(query, codes) };
    }
    dot_codes_portable(query, codes)
}

/// Sixteen codes at a time: widened to 16 bits, multiplied with the
/// query's in pairs and summed into eight 32-bit lanes (`vpmaddwd`), which
/// the compiler does not find in the portable loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_codes_avx2(query: &[i16], codes: &[i8]) -> i32 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_hadd_epi32, _mm_loadu_si128,
        _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepi8_epi16, _mm256_extracti128_si256,
        _mm256_loadu_si256, _mm256_madd_epi16, _mm256_setzero_si256,
    };
    let (query_chunks, query_rest) = query.as_chunks::<16>();
    let (code_chunks, code_rest) = codes.as_chunks::<16>();
    let mut sums = _mm256_setzero_si256();
    for (q, c) in query_chunks.iter().zip(code_chunks) {
        // SAFETY: each chunk is 16 i8 (16 bytes) or 16 i16 (32 bytes), and
        // the loads are unaligned.
        let (q, c) = unsafe {
            (
                _mm256_loadu_si256(q.as_ptr().cast::<__m256i>()),
                _mm_loadu_si128(c.as_ptr().cast::<__m128i>()),
            )
        };
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(_mm256_cvtepi8_epi16(c), q));
    }
    let half = _mm_add_epi32(
        _mm256_castsi256_si128(sums),
        _mm256_extracti128_si256::<1>(sums),
    );
    let quarter = _mm_hadd_epi32(half, half);
    let total = _mm_cvtsi128_si32(_mm_hadd_epi32(quarter, quarter));
    let rest: i32 = query_rest
        .iter()
        .zip(code_rest)
        .map(|(q, c)| i32::from(*q) * i32::from(*c))
        .sum();
    total + rest
}

/// Where the CPU has no AVX2: sixteen independent sums, which the compiler
/// vectorises as far as the target allows. [`Query::new`] keeps every sum
/// within an i32.
#[inline(always)]
fn dot_codes_portable(query: &[i16], codes: &[i8]) -> i32 {
    let mut sums = [0i32; 16];
    let (query_chunks, query_rest) = query.as_chunks::<16>();
    let (code_chunks, code_rest) = codes.as_chunks::<16>();
    for (q, c) in query_chunks.iter().zip(code_chunks) {
        for lane in 0..16 {
            sums[lane] += i32::from(q[lane]) * i32::from(c[lane]);
        }
    }
    let rest: i32 = query_rest
        .iter()
        .zip(code_rest)
        .map(|(q, c)| i32::from(*q) * i32::from(*c))
        .sum();
    sums.iter().sum::<i32>() + rest
}

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
        let query = Query::new(query);
        // A bounded min-heap of the best so far. A row's filter is read only
        // when its cosine would make the heap: few rows once it is full,
        // and the attributes are far more memory than the codes.
        let mut best = std::collections::BinaryHeap::with_capacity(limit + 1);
        for row in 0..rows.seqs.len() {
            let cosine = rows.cosine(row, &query);
            if best.len() == limit && best.peek().is_some_and(|Worst(worst, _)| cosine <= *worst) {
                continue;
            }
            if !rule.accepts(&AttrsView(&rows.attrs[row], rows.seqs[row])) {
                continue;
            }
            if best.len() == limit {
                best.pop();
            }
            best.push(Worst(cosine, row));
        }
        let mut matches: Vec<VectorMatch> = best
            .into_iter()
            .map(|Worst(cosine, row)| VectorMatch {
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
        let query = Query::new(query);
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

    #[test]
    #[ignore = "prints the time of a search over 100k vectors; run in an optimised profile"]
    fn scan_cost() {
        const ROWS: i64 = 100_000;
        let index = VectorIndex::new("m", 384);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut random = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        for seq in 1..=ROWS {
            let values: Vec<f32> = (0..384).map(|_| random()).collect();
            index.apply(
                seq,
                Some(&memory(seq, "a", "x")),
                Some(&vector("m", &values)),
            );
        }
        for seq in 1..=ROWS / 10 {
            let values: Vec<f32> = (0..384).map(|_| random()).collect();
            let seq = ROWS + seq;
            index.apply(
                seq,
                Some(&memory(seq, "b", "x")),
                Some(&vector("m", &values)),
            );
        }
        for (namespace, rows) in [("a", ROWS), ("b", ROWS / 10)] {
            let mut times = Vec::new();
            for _ in 0..51 {
                let query: Vec<f32> = (0..384).map(|_| random()).collect();
                let started = std::time::Instant::now();
                let found = near(&index, namespace, &query, 100);
                times.push(started.elapsed());
                assert_eq!(found.len(), 100);
            }
            times.sort();
            println!(
                "search over {rows} vectors: median {:?}",
                times[times.len() / 2]
            );
        }
    }

    #[test]
    fn quantised_cosines_stay_close() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 7.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0)
            .collect();
        let (a, b) = (vector("m", &a), vector("m", &b));
        let exact = crate::embed::dot(&a.values, &b.values);
        let (codes, scale) = quantise(&b.values);
        let query = Query::new(&a.values);
        let approximate = dot_codes(&query.codes, &codes) as f32 * query.scale * scale;
        assert!(
            (exact - approximate).abs() < 0.005,
            "{exact} vs {approximate}"
        );
        assert_eq!(
            dot_codes_portable(&query.codes, &codes),
            dot_codes(&query.codes, &codes)
        );
        // However many dimensions, the largest codes cannot overflow.
        for dimensions in [3, 384, 1536, 4096] {
            let query = Query::new(&vec![-1.0; dimensions]);
            let row = vec![127i8; dimensions];
            let exact: i64 = query.codes.iter().map(|&q| i64::from(q) * 127).sum();
            assert_eq!(
                i64::from(dot_codes(&query.codes, &row)),
                exact,
                "{dimensions}"
            );
            assert!(query.codes[0] <= -4096, "{dimensions}: 13 bits or more");
        }
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
