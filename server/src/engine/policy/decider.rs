//! The learned decider (issue 28): a small neural network over a
//! transcript's features (`features.rs`) — the features standardised, one
//! hidden layer of rectified units, a softmax over seven classes (not worth
//! keeping, then the memory types by code).
//!
//! Fitted deterministically: the weights start from a fixed-seed generator,
//! and a fixed number of full-batch AdamW steps runs over the examples in a
//! fixed order. The products run on candle (every core), whose results do
//! not depend on how the work is split. How the sizes and steps were chosen
//! is in docs/policy-measurements.md.

use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::optim::{AdamW, Optimizer, ParamsAdamW};

use crate::domain::MemoryType;

/// The classes: not worth keeping, then the memory types by code.
pub(super) const CLASSES: usize = 7;

/// How a decider is fitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fit {
    /// Rectified units in the hidden layer; 0 fits a linear softmax.
    pub hidden: usize,
    pub steps: usize,
    pub learning_rate: f64,
    pub weight_decay: f64,
    pub seed: u64,
}

/// The fit the server uses; chosen in folds of the training examples.
pub(super) const FIT: Fit = Fit {
    hidden: 64,
    steps: 300,
    learning_rate: 1e-3,
    weight_decay: 1e-2,
    seed: 28,
};

/// The class of a label: 0 for `None` (not worth keeping), else the type's
/// code.
pub(super) fn class(label: Option<MemoryType>) -> usize {
    label.map_or(0, |t| t.code() as usize)
}

/// The label of a class.
pub(super) fn label(class: usize) -> Option<MemoryType> {
    MemoryType::from_code(class as i32)
}

/// A layer's weights (`inputs` rows of `outputs`) and biases.
#[derive(Debug, Clone, PartialEq)]
struct Layer {
    weights: Vec<f32>,
    bias: Vec<f32>,
    outputs: usize,
}

impl Layer {
    fn apply(&self, input: &[f32]) -> Vec<f32> {
        let mut out = self.bias.clone();
        for (row, &x) in self.weights.chunks_exact(self.outputs).zip(input) {
            if x != 0.0 {
                for (o, w) in out.iter_mut().zip(row) {
                    *o += x * w;
                }
            }
        }
        out
    }
}

/// A fitted decider.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Decider {
    /// Each feature's mean and reciprocal spread over the examples.
    centre: Vec<f32>,
    scale: Vec<f32>,
    hidden: Option<Layer>,
    output: Layer,
}

/// A small, seeded generator (xorshift64*) for the starting weights.
struct Seeded(u64);

impl Seeded {
    /// Uniform in `[-bound, bound)`.
    fn uniform(&mut self, bound: f32) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        (bits as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * bound
    }

    /// A layer's starting weights (Glorot's uniform range) and zero biases.
    fn layer(&mut self, inputs: usize, outputs: usize) -> candle_core::Result<(Var, Var)> {
        let bound = (6.0 / (inputs + outputs) as f32).sqrt();
        let weights: Vec<f32> = (0..inputs * outputs).map(|_| self.uniform(bound)).collect();
        let device = Device::Cpu;
        Ok((
            Var::from_tensor(&Tensor::from_vec(weights, (inputs, outputs), &device)?)?,
            Var::zeros((1, outputs), DType::F32, &device)?,
        ))
    }
}

impl Decider {
    /// The number of features it reads.
    pub fn width(&self) -> usize {
        self.centre.len()
    }

    /// Fits a decider to `rows` (features of one width) labelled `classes`.
    pub fn fit(rows: &[Vec<f32>], classes: &[usize], fit: Fit) -> candle_core::Result<Decider> {
        let (n, width) = (rows.len(), rows.first().map_or(0, Vec::len));
        let (centre, scale) = standardisation(rows, width);
        let mut standard = Vec::with_capacity(n * width);
        for row in rows {
            standard.extend(standardised(row, &centre, &scale));
        }
        let device = Device::Cpu;
        let x = Tensor::from_vec(standard, (n, width), &device)?;
        let targets: Vec<u32> = classes.iter().map(|&c| c as u32).collect();
        let y = Tensor::from_vec(targets, n, &device)?;
        let mut seeded = Seeded(fit.seed.max(1));
        let hidden = (fit.hidden > 0)
            .then(|| seeded.layer(width, fit.hidden))
            .transpose()?;
        let output = seeded.layer(if fit.hidden > 0 { fit.hidden } else { width }, CLASSES)?;
        let mut vars = vec![output.0.clone(), output.1.clone()];
        if let Some((w, b)) = &hidden {
            vars.extend([w.clone(), b.clone()]);
        }
        let mut optimiser = AdamW::new(
            vars,
            ParamsAdamW {
                lr: fit.learning_rate,
                weight_decay: fit.weight_decay,
                ..Default::default()
            },
        )?;
        let forward = || -> candle_core::Result<Tensor> {
            let inner = match &hidden {
                Some((w, b)) => x
                    .matmul(w.as_tensor())?
                    .broadcast_add(b.as_tensor())?
                    .relu()?,
                None => x.clone(),
            };
            inner
                .matmul(output.0.as_tensor())?
                .broadcast_add(output.1.as_tensor())
        };
        for _ in 0..fit.steps {
            let loss = candle_nn::loss::cross_entropy(&forward()?, &y)?;
            optimiser.backward_step(&loss)?;
        }
        let layer = |(w, b): &(Var, Var)| -> candle_core::Result<Layer> {
            Ok(Layer {
                outputs: b.as_tensor().dim(D::Minus1)?,
                weights: w.as_tensor().flatten_all()?.to_vec1()?,
                bias: b.as_tensor().flatten_all()?.to_vec1()?,
            })
        };
        Ok(Decider {
            centre,
            scale,
            hidden: hidden.as_ref().map(layer).transpose()?,
            output: layer(&output)?,
        })
    }

    /// The probability of each class for a transcript's `features`.
    pub fn probabilities(&self, features: &[f32]) -> [f32; CLASSES] {
        let standard: Vec<f32> = standardised(features, &self.centre, &self.scale).collect();
        let inner = match &self.hidden {
            Some(layer) => layer
                .apply(&standard)
                .into_iter()
                .map(|h| h.max(0.0))
                .collect(),
            None => standard,
        };
        let scores = self.output.apply(&inner);
        let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = scores.iter().map(|s| (s - top).exp()).collect();
        let total: f32 = exps.iter().sum();
        std::array::from_fn(|c| exps[c] / total)
    }
}

/// `row`, each feature centred and scaled.
fn standardised<'a>(
    row: &'a [f32],
    centre: &'a [f32],
    scale: &'a [f32],
) -> impl Iterator<Item = f32> + 'a {
    row.iter()
        .zip(centre)
        .zip(scale)
        .map(|((x, c), s)| (x - c) * s)
}

/// Each feature's mean over `rows` and the reciprocal of its standard
/// deviation (1 for a constant feature).
fn standardisation(rows: &[Vec<f32>], width: usize) -> (Vec<f32>, Vec<f32>) {
    let n = rows.len().max(1) as f64;
    let mut sum = vec![0.0f64; width];
    let mut squares = vec![0.0f64; width];
    for row in rows {
        for ((s, q), &x) in sum.iter_mut().zip(squares.iter_mut()).zip(row) {
            *s += f64::from(x);
            *q += f64::from(x) * f64::from(x);
        }
    }
    let centre: Vec<f32> = sum.iter().map(|s| (s / n) as f32).collect();
    let scale = sum
        .iter()
        .zip(&squares)
        .map(|(s, q)| {
            let variance = (q / n - (s / n).powi(2)).max(0.0);
            if variance > 1e-12 {
                (1.0 / variance.sqrt()) as f32
            } else {
                1.0
            }
        })
        .collect();
    (centre, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three clusters on a circle, a few points each, with a constant and
    /// a noisy feature beside them.
    fn clusters() -> (Vec<Vec<f32>>, Vec<usize>) {
        let mut rows = Vec::new();
        let mut classes = Vec::new();
        for (i, (angle, class)) in [(0.0f32, 2), (2.0, 4), (4.0, 0)].into_iter().enumerate() {
            for k in 0..8 {
                let a = angle + k as f32 * 0.05;
                rows.push(vec![a.cos(), a.sin(), 1.0, ((i * 8 + k) % 5) as f32]);
                classes.push(class);
            }
        }
        (rows, classes)
    }

    #[test]
    fn a_decider_learns_its_examples_and_fits_the_same_way_every_time() {
        let (rows, classes) = clusters();
        for fit in [FIT, Fit { hidden: 0, ..FIT }] {
            let fit = Fit { steps: 1000, ..fit };
            let decider = Decider::fit(&rows, &classes, fit).unwrap();
            assert_eq!(decider, Decider::fit(&rows, &classes, fit).unwrap());
            assert_eq!(decider.width(), 4);
            for (row, &class) in rows.iter().zip(&classes) {
                let p = decider.probabilities(row);
                let best = (0..CLASSES).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap();
                assert_eq!(best, class, "{fit:?}: {p:?}");
                assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            }
        }
        let other = Decider::fit(&rows, &classes, Fit { seed: 29, ..FIT }).unwrap();
        assert_ne!(other, Decider::fit(&rows, &classes, FIT).unwrap());
    }

    #[test]
    fn a_fit_of_the_examples_size_is_the_same_every_time() {
        // As many rows as the examples, of the features' size: the matrix
        // products run on every core, and must not change the weights.
        let rows: Vec<Vec<f32>> = (0..2000)
            .map(|i| {
                (0..super::super::features::width(384))
                    .map(|j| ((i * 31 + j * 17) % 97) as f32 / 97.0 - 0.5)
                    .collect()
            })
            .collect();
        let classes: Vec<usize> = (0..rows.len()).map(|i| i % CLASSES).collect();
        let fit = Fit { steps: 5, ..FIT };
        let decider = Decider::fit(&rows, &classes, fit).unwrap();
        assert_eq!(decider, Decider::fit(&rows, &classes, fit).unwrap());
        assert!(
            decider
                .probabilities(&rows[0])
                .iter()
                .all(|p| p.is_finite())
        );
    }

    #[test]
    fn classes_are_not_worth_keeping_then_the_types_by_code() {
        assert_eq!(class(None), 0);
        for c in 1..CLASSES {
            assert_eq!(class(label(c)), c);
        }
    }
}
