//! Engram's own numeric kernels: the loops over every value of a tensor
//! that the embedding model runs, and over every stored vector that a
//! vector search reads ([`codes`]), in a crate of their own so that the
//! workspace compiles them optimised even in debug builds (see the root
//! Cargo.toml), where the tests and `cargo run` embed thousands of texts.

pub mod codes;

/// Exact GELU of each value, `x·Φ(x) = x·(1 + erf(x/√2))/2`, with erf by
/// a rational approximation accurate to float precision (Eigen's and XLA's).
pub fn gelu_erf(values: &[f32]) -> Vec<f32> {
    values
        .iter()
        .map(|&x| 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2)))
        .collect()
}

/// erf(x) as `x·p(x²)/q(x²)` on [-4, 4] (±1 beyond, in single precision).
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ]
    .iter()
    .fold(0.0f32, |acc, &c| acc * x2 + c);
    let q = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_473_9e-2,
    ]
    .iter()
    .fold(0.0f32, |acc, &c| acc * x2 + c);
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_odd_and_bounded_and_gelu_is_half_at_zero_slope() {
        for x in [0.1f32, 0.5, 1.0, 2.0, 3.5, 10.0] {
            assert!((erf(x) + erf(-x)).abs() < 1e-7, "{x}");
            assert!(erf(x) <= 1.0 && erf(x) > 0.0, "{x}");
        }
        assert!((erf(1.0) - 0.842_700_8).abs() < 1e-6);
        assert_eq!(gelu_erf(&[0.0]), [0.0]);
        assert!((gelu_erf(&[1.0])[0] - 0.841_344_7).abs() < 1e-6);
    }
}
