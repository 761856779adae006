//! Vectors as small integers and bits, and the products a vector search
//! computes over them for every stored row.
//!
//! A stored vector is kept twice: as i8 codes with one scale (a cosine
//! within about 0.005 of the exact one), and as one sign bit a dimension
//! (48 bytes at 384 dimensions, an eighth of the codes). A search over many
//! rows reads only the bits for every row, estimating each cosine against
//! the query's four bit planes, and re-scores its best few hundred from
//! the codes: the scan is bound by the memory it reads, not by arithmetic.

/// `values` as i8 codes and the scale that maps them back
/// (value ≈ code × scale).
pub fn quantise(values: &[f32]) -> (Vec<i8>, f32) {
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
pub struct QueryCodes {
    pub codes: Vec<i16>,
    /// value ≈ code × scale.
    pub scale: f32,
}

impl QueryCodes {
    /// `values` in as many bits as keep a dot product with any row of i8
    /// codes within an i32 (15 bits up to 516 dimensions, about 13 at
    /// 1,536): the query's own rounding error stays far below the rows'.
    pub fn new(values: &[f32]) -> QueryCodes {
        let most = (i32::MAX as usize / (127 * values.len().max(1))).min(i16::MAX as usize);
        let largest = values.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if largest == 0.0 || !largest.is_finite() || most == 0 {
            return QueryCodes {
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
        QueryCodes { codes, scale }
    }

    /// The dot product with a row quantised by [`quantise`].
    pub fn dot(&self, codes: &[i8], scale: f32) -> f32 {
        dot_codes(&self.codes, codes) as f32 * self.scale * scale
    }
}

/// The dot product of a query's and a row's codes, in the widest SIMD the
/// CPU has.
pub fn dot_codes(query: &[i16], codes: &[i8]) -> i32 {
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
/// vectorises as far as the target allows. [`QueryCodes::new`] keeps every
/// sum within an i32.
#[inline(always)]
pub fn dot_codes_portable(query: &[i16], codes: &[i8]) -> i32 {
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

/// 64-bit words of sign bits a vector of `dimensions` takes.
pub fn sign_words(dimensions: usize) -> usize {
    dimensions.div_ceil(64)
}

/// A row's sign bits (bit `i` set when value `i` is positive) and the
/// length that, times the signs (±1), best approximates the row: the mean
/// of its absolute values.
pub fn signs(values: &[f32]) -> (Vec<u64>, f32) {
    let mut words = vec![0u64; sign_words(values.len())];
    for (i, value) in values.iter().enumerate() {
        if *value > 0.0 {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    let mean = values.iter().map(|v| v.abs()).sum::<f32>() / values.len().max(1) as f32;
    (words, if mean.is_finite() { mean } else { 0.0 })
}

/// Bit planes of the query (each value as four bits above its smallest),
/// against which a row's sign bits give an estimate of its dot product in
/// four population counts a word.
pub struct QueryPlanes {
    /// For each word of the vector, that word of each plane.
    planes: Vec<[u64; PLANES]>,
    /// The same, for AVX-512: for each eight words, each plane's.
    lanes: Vec<[u64; 8]>,
    words: usize,
    dimensions: f32,
    /// value ≈ lowest + step × (its four bits).
    lowest: f32,
    step: f32,
    /// The sum of every value's four bits.
    bits_total: f32,
}

/// The levels a query value is rounded to in [`QueryPlanes`].
const PLANES: usize = 4;

impl QueryPlanes {
    pub fn new(values: &[f32]) -> QueryPlanes {
        let words = sign_words(values.len());
        let mut planes = vec![[0u64; PLANES]; words];
        let lowest = values.iter().copied().fold(f32::INFINITY, f32::min);
        let highest = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let top = ((1 << PLANES) - 1) as f32;
        let step = (highest - lowest) / top;
        if !step.is_finite() || step <= 0.0 {
            return QueryPlanes {
                lanes: lanes(&planes),
                planes,
                words,
                dimensions: values.len() as f32,
                lowest: if lowest.is_finite() { lowest } else { 0.0 },
                step: 0.0,
                bits_total: 0.0,
            };
        }
        let mut bits_total = 0u32;
        for (i, value) in values.iter().enumerate() {
            let level = ((value - lowest) / step).round().clamp(0.0, top) as u32;
            bits_total += level;
            for (plane, word) in planes[i / 64].iter_mut().enumerate() {
                *word |= u64::from(level >> plane & 1) << (i % 64);
            }
        }
        QueryPlanes {
            lanes: lanes(&planes),
            planes,
            words,
            dimensions: values.len() as f32,
            lowest,
            step,
            bits_total: bits_total as f32,
        }
    }

    /// [`QueryPlanes::estimates`] of one row.
    #[cfg(test)]
    fn estimate(&self, bits: &[u64], ones: u32, length: f32) -> f32 {
        let mut estimate = [0.0];
        self.estimates(bits, &[ones], &[length], &mut estimate);
        estimate[0]
    }

    /// An estimate of the dot product with each of consecutive rows given
    /// by [`signs`]: `bits` holds their words one row after another, `ones`
    /// and `lengths` their counts of ones and lengths, and `out` receives
    /// an estimate a row.
    ///
    /// With the query's values `q = lowest + step·u` and the row's signs
    /// `s = 2·bit − 1`, `Σ q·s = lowest·(2·ones − d) + step·(2·Σ_{bit} u − Σ u)`,
    /// and `Σ_{bit} u` is a population count per plane.
    pub fn estimates(&self, bits: &[u64], ones: &[u32], lengths: &[f32], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512vpopcntdq") {
                // SAFETY: the CPU has just been found to count the bits of
                // eight words in one instruction.
                return unsafe { self.estimates_avx512(bits, ones, lengths, out) };
            }
            if std::arch::is_x86_feature_detected!("popcnt") {
                // SAFETY: the CPU has just been found to count a word's
                // bits in one instruction.
                return unsafe { self.estimates_popcnt(bits, ones, lengths, out) };
            }
        }
        self.estimates_portable(bits, ones, lengths, out);
    }

    /// The estimate from a row's count of the query's levels where its
    /// bits are set (`Σ_{bit} u`).
    #[inline(always)]
    fn finish(&self, counted: u32, ones: u32, length: f32) -> f32 {
        let signs_sum = 2.0 * ones as f32 - self.dimensions;
        let levels_sum = 2.0 * counted as f32 - self.bits_total;
        length * (self.lowest * signs_sum + self.step * levels_sum)
    }

    /// Eight words of a row at a time: masked to the row's, and against
    /// each plane, counted in eight lanes (`vpopcntq`), weighted by shifts.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    fn estimates_avx512(&self, bits: &[u64], ones: &[u32], lengths: &[f32], out: &mut [f32]) {
        use std::arch::x86_64::{
            __m512i, _mm512_add_epi64, _mm512_and_si512, _mm512_loadu_si512,
            _mm512_maskz_loadu_epi64, _mm512_popcnt_epi64, _mm512_reduce_add_epi64,
            _mm512_setzero_si512, _mm512_slli_epi64,
        };
        let words = self.words;
        let load = |lane: &[u64; 8]| {
            // SAFETY: eight u64 are 64 bytes, and the load is unaligned.
            unsafe { _mm512_loadu_si512(lane.as_ptr().cast::<__m512i>()) }
        };
        let rows = bits.chunks_exact(words.max(1)).zip(ones).zip(lengths);
        for (((row, &ones), &length), out) in rows.zip(out) {
            let mut sums = _mm512_setzero_si512();
            for (chunk, planes) in self.lanes.chunks_exact(PLANES).enumerate() {
                let taken = (words - chunk * 8).min(8);
                // SAFETY: the mask loads only the row's `taken` words from
                // the chunk's start; the others read nothing and are zero.
                let row = unsafe {
                    _mm512_maskz_loadu_epi64(
                        (1u16 << taken).wrapping_sub(1) as u8,
                        row.as_ptr().add(chunk * 8).cast::<i64>(),
                    )
                };
                let count =
                    |plane: &[u64; 8]| _mm512_popcnt_epi64(_mm512_and_si512(row, load(plane)));
                sums = _mm512_add_epi64(sums, count(&planes[0]));
                sums = _mm512_add_epi64(sums, _mm512_slli_epi64::<1>(count(&planes[1])));
                sums = _mm512_add_epi64(sums, _mm512_slli_epi64::<2>(count(&planes[2])));
                sums = _mm512_add_epi64(sums, _mm512_slli_epi64::<3>(count(&planes[3])));
            }
            *out = self.finish(_mm512_reduce_add_epi64(sums) as u32, ones, length);
        }
    }

    /// The portable loop, compiled where counting a word's bits is one
    /// instruction (otherwise a dozen).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn estimates_popcnt(&self, bits: &[u64], ones: &[u32], lengths: &[f32], out: &mut [f32]) {
        self.estimates_portable(bits, ones, lengths, out);
    }

    #[inline(always)]
    fn estimates_portable(&self, bits: &[u64], ones: &[u32], lengths: &[f32], out: &mut [f32]) {
        let words = self.words;
        let rows = bits.chunks_exact(words.max(1)).zip(ones).zip(lengths);
        for (((row, &ones), &length), out) in rows.zip(out) {
            let mut counted = 0u32;
            for (planes, &bits) in self.planes.iter().zip(row) {
                counted += (planes[0] & bits).count_ones()
                    + ((planes[1] & bits).count_ones() << 1)
                    + ((planes[2] & bits).count_ones() << 2)
                    + ((planes[3] & bits).count_ones() << 3);
            }
            *out = self.finish(counted, ones, length);
        }
    }
}

/// `planes` regrouped for [`QueryPlanes::estimates_avx512`]: for each eight
/// words, each plane's eight (zero past the vector's end).
fn lanes(planes: &[[u64; PLANES]]) -> Vec<[u64; 8]> {
    let mut lanes = Vec::new();
    for chunk in planes.chunks(8) {
        for plane in 0..PLANES {
            let mut lane = [0u64; 8];
            for (word, planes) in chunk.iter().enumerate() {
                lane[word] = planes[plane];
            }
            lanes.push(lane);
        }
    }
    lanes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(dimensions: usize, a: usize, b: usize) -> Vec<f32> {
        let values: Vec<f32> = (0..dimensions)
            .map(|i| ((i * a % b) as f32 - b as f32 / 2.0) / b as f32)
            .collect();
        let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
        values.iter().map(|v| v / norm).collect()
    }

    fn exact(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn quantised_cosines_stay_close() {
        let (a, b) = (wave(384, 7, 13), wave(384, 5, 11));
        let (codes, scale) = quantise(&b);
        let query = QueryCodes::new(&a);
        let approximate = query.dot(&codes, scale);
        let exact = exact(&a, &b);
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
            let query = QueryCodes::new(&vec![-1.0; dimensions]);
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
    fn the_estimate_from_signs_is_the_product_with_the_rounded_query_and_the_signs() {
        for dimensions in [3, 64, 100, 384] {
            let (query, row) = (wave(dimensions, 7, 13), wave(dimensions, 5, 11));
            let planes = QueryPlanes::new(&query);
            let (bits, length) = signs(&row);
            let ones = bits.iter().map(|w| w.count_ones()).sum();
            // The same sum computed directly, from the rounded query.
            let top = 15.0;
            let lowest = query.iter().copied().fold(f32::INFINITY, f32::min);
            let step = (query.iter().copied().fold(f32::NEG_INFINITY, f32::max) - lowest) / top;
            let direct: f32 = query
                .iter()
                .zip(&row)
                .map(|(q, r)| {
                    let rounded = lowest + step * ((q - lowest) / step).round();
                    rounded * if *r > 0.0 { 1.0 } else { -1.0 }
                })
                .sum::<f32>()
                * length;
            let estimate = planes.estimate(&bits, ones, length);
            assert!(
                (estimate - direct).abs() < 1e-4,
                "{dimensions}: {estimate} vs {direct}"
            );
        }
        // The estimate ranks a vector's near neighbour above a far one.
        let query = wave(384, 7, 13);
        let near: Vec<f32> = query.iter().map(|v| v + 0.01).collect();
        let far = wave(384, 5, 11);
        let planes = QueryPlanes::new(&query);
        let score = |row: &[f32]| {
            let (bits, length) = signs(row);
            planes.estimate(&bits, bits.iter().map(|w| w.count_ones()).sum(), length)
        };
        assert!(score(&near) > score(&far) + 0.1);
        // Every kernel the CPU has counts the same, over rows of one word
        // to more than eight.
        for dimensions in [3, 64, 100, 384, 600, 1024] {
            let planes = QueryPlanes::new(&wave(dimensions, 7, 13));
            let rows: Vec<Vec<f32>> = (0..5).map(|i| wave(dimensions, 3 + 2 * i, 17)).collect();
            let mut bits = Vec::new();
            let (mut ones, mut lengths) = (Vec::new(), Vec::new());
            for row in &rows {
                let (words, length) = signs(row);
                ones.push(words.iter().map(|w| w.count_ones()).sum());
                lengths.push(length);
                bits.extend(words);
            }
            let mut portable = [0.0; 5];
            planes.estimates_portable(&bits, &ones, &lengths, &mut portable);
            let mut dispatched = [0.0; 5];
            planes.estimates(&bits, &ones, &lengths, &mut dispatched);
            assert_eq!(portable, dispatched, "{dimensions}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("popcnt") {
                let mut counted = [0.0; 5];
                // SAFETY: the CPU has the instruction.
                unsafe { planes.estimates_popcnt(&bits, &ones, &lengths, &mut counted) };
                assert_eq!(portable, counted, "{dimensions}");
            }
        }
        // A constant query (no spread) or an empty one estimates without NaN.
        assert!(
            QueryPlanes::new(&[0.5; 8])
                .estimate(&[0xff], 8, 0.5)
                .is_finite()
        );
        assert_eq!(QueryPlanes::new(&[]).estimate(&[], 0, 0.0), 0.0);
    }
}
