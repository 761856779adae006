//! The labelled examples' vote (issue 15): with an embedder, the labelled
//! transcripts of the policy's dev split (server/data/policy/dev.json) and
//! its training-only examples (examples.json), both compiled in, are
//! embedded once and a linear classifier is fitted on their vectors: seven
//! classes, one per memory type and one for "not worth keeping". The rules
//! consult its vote (see [`super::classify_with_vote`]). The held-out sets
//! are never among the examples, so they still measure the classifier
//! fairly; the dev split's accuracy with an embedder does not.
//!
//! Deterministic for a given model: the examples and their order are fixed,
//! the fit starts from zero and runs a fixed number of full-batch steps, and
//! a transcript's vector is the same every time. The examples are embedded
//! and fitted in the background from the first call that needs them (not
//! at start: an embedding API is not called for a server that never
//! classifies); until then, and whenever the embedder fails, the rules
//! decide alone and the decision's `vote` metadata says why. A failed fit
//! is tried again at the next call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use candle_core::{DType, Device, Tensor};
use candle_nn::ops::softmax_last_dim;

use super::{Vote, screen};
use crate::domain::MemoryType;
use crate::embed::{Embedder, normalise};

/// The labelled transcripts the classifier learns from: the dev split and
/// the examples written only for it.
const LABELLED: [&str; 2] = [
    include_str!("../../../data/policy/dev.json"),
    include_str!("../../../data/policy/examples.json"),
];

/// The classes: not worth keeping, then the memory types by code.
const CLASSES: usize = 7;

/// The fit: full-batch gradient descent with Nesterov momentum on the mean
/// cross-entropy, with a light L2 penalty; how these were chosen is in
/// docs/policy-measurements.md.
const STEPS: usize = 200;
const STEP_SIZE: f64 = 4.0;
const MOMENTUM: f64 = 0.9;
const L2: f64 = 3e-5;

/// How long a transcript's vector may take; past it, the rules decide alone.
const EMBED_WAIT: Duration = Duration::from_secs(5);

/// The class of a label: 0 for `None` (not worth keeping), else the type's
/// code.
fn class(label: Option<MemoryType>) -> usize {
    label.map_or(0, |t| t.code() as usize)
}

/// The label of a class.
fn label(class: usize) -> Option<MemoryType> {
    MemoryType::from_code(class as i32)
}

/// A linear classifier over normalised vectors: a weight row per class.
#[derive(Debug, Clone, PartialEq)]
struct Linear {
    weights: Vec<[f32; CLASSES]>,
    bias: [f32; CLASSES],
}

impl Linear {
    /// Fits the classifier to `vectors` labelled `classes`, from zero. The
    /// matrix products run on candle (every core): a fit is two products
    /// of the examples' matrix per step.
    fn fit(vectors: &[Vec<f32>], classes: &[usize]) -> candle_core::Result<Linear> {
        let device = Device::Cpu;
        let (n, dimensions) = (vectors.len(), vectors.first().map_or(0, Vec::len));
        let x = Tensor::from_vec(vectors.concat(), (n, dimensions), &device)?;
        let x_t = x.t()?.contiguous()?;
        let mut one_hot = vec![0.0f32; n * CLASSES];
        for (row, &class) in one_hot.chunks_exact_mut(CLASSES).zip(classes) {
            row[class] = 1.0;
        }
        let y = Tensor::from_vec(one_hot, (n, CLASSES), &device)?;
        let zeros = |rows| Tensor::zeros((rows, CLASSES), DType::F32, &device);
        let (mut weights, mut bias) = (zeros(dimensions)?, zeros(1)?);
        let (mut weights_velocity, mut bias_velocity) = (zeros(dimensions)?, zeros(1)?);
        for _ in 0..STEPS {
            // The gradient where the momentum is taking the weights.
            let weights_ahead = (&weights + (&weights_velocity * MOMENTUM)?)?;
            let bias_ahead = (&bias + (&bias_velocity * MOMENTUM)?)?;
            let scores = x.matmul(&weights_ahead)?.broadcast_add(&bias_ahead)?;
            let error = ((softmax_last_dim(&scores)? - &y)? / n.max(1) as f64)?;
            let weights_gradient = (x_t.matmul(&error)? + (&weights_ahead * L2)?)?;
            let bias_gradient = error.sum_keepdim(0)?;
            weights_velocity = ((&weights_velocity * MOMENTUM)? - (weights_gradient * STEP_SIZE)?)?;
            bias_velocity = ((&bias_velocity * MOMENTUM)? - (bias_gradient * STEP_SIZE)?)?;
            weights = (weights + &weights_velocity)?;
            bias = (bias + &bias_velocity)?;
        }
        let weights = weights
            .to_vec2::<f32>()?
            .into_iter()
            .map(|row| std::array::from_fn(|c| row[c]))
            .collect();
        let bias = bias.to_vec2::<f32>()?.remove(0);
        Ok(Linear {
            weights,
            bias: std::array::from_fn(|c| bias[c]),
        })
    }

    /// The probability of each class for `vector` (a softmax).
    fn probabilities(&self, vector: &[f32]) -> [f32; CLASSES] {
        let mut scores = self.bias;
        for (row, &x) in self.weights.iter().zip(vector) {
            for (s, w) in scores.iter_mut().zip(row) {
                *s += x * w;
            }
        }
        let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut total = 0.0;
        for s in &mut scores {
            *s = (*s - top).exp();
            total += *s;
        }
        scores.map(|s| s / total)
    }

    /// The vote on `vector`: the likeliest class and how likely it is.
    fn vote(&self, vector: &[f32]) -> Vote {
        let probabilities = self.probabilities(vector);
        // The likeliest; on a tie, the lower class.
        let best = (0..CLASSES).fold(0, |best, c| {
            if probabilities[c] > probabilities[best] {
                c
            } else {
                best
            }
        });
        Vote {
            label: label(best),
            probability: f64::from(probabilities[best]),
        }
    }
}

/// The labelled examples of an embedder and the classifier fitted on them.
pub struct LabelledExamples {
    embedder: Arc<Embedder>,
    fitted: OnceLock<Linear>,
    /// A fit is under way.
    fitting: AtomicBool,
}

/// Why a transcript has no vote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoVote {
    /// The examples are still being embedded (since the first call that
    /// needed them); the rules decide alone until they are.
    WarmingUp,
    /// The embedder did not answer for this transcript.
    EmbedderFailed,
    /// Nothing is left of the transcript once screened.
    Empty,
}

impl NoVote {
    /// What a decision's `vote` metadata says.
    pub fn describe(self) -> &'static str {
        match self {
            NoVote::WarmingUp => "none yet: the labelled examples are being embedded",
            NoVote::EmbedderFailed => "none: the embedder did not answer",
            NoVote::Empty => "none: nothing left to classify",
        }
    }
}

impl LabelledExamples {
    pub fn new(embedder: Arc<Embedder>) -> Self {
        LabelledExamples {
            embedder,
            fitted: OnceLock::new(),
            fitting: AtomicBool::new(false),
        }
    }

    /// The fitted classifier; until there is one, starts a fit in the
    /// background (unless one is under way) and says so. A fit that fails
    /// is tried again at the next call.
    fn fitted(self: &Arc<Self>) -> Option<&Linear> {
        if let Some(model) = self.fitted.get() {
            return Some(model);
        }
        if !self.fitting.swap(true, Ordering::AcqRel) {
            let examples = self.clone();
            tokio::spawn(async move {
                match examples.fit().await {
                    Ok(model) => {
                        let _ = examples.fitted.set(model);
                    }
                    Err(error) => {
                        tracing::warn!(%error, "could not fit the policy's classifier on its labelled examples; the rules decide alone");
                    }
                }
                examples.fitting.store(false, Ordering::Release);
            });
        }
        None
    }

    /// Embeds the labelled examples and fits the classifier on them.
    async fn fit(&self) -> Result<Linear, String> {
        let started = std::time::Instant::now();
        let (texts, classes) = examples()?;
        // One call: a local model sorts them by length, so batches pad
        // little.
        let mut vectors = self
            .embedder
            .embed(texts)
            .await
            .map_err(|e| e.to_string())?;
        for vector in &mut vectors {
            normalise(vector);
        }
        let count = vectors.len();
        let model = tokio::task::spawn_blocking(move || Linear::fit(&vectors, &classes))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("fitting the classifier: {e}"))?;
        tracing::info!(
            examples = count,
            took = ?started.elapsed(),
            "fitted the policy's classifier on its labelled examples"
        );
        Ok(model)
    }

    /// What the classifier says of `transcript` (already screened), or why
    /// it says nothing.
    pub async fn vote(self: &Arc<Self>, transcript: &str) -> Result<Vote, NoVote> {
        if transcript.trim().is_empty() {
            return Err(NoVote::Empty);
        }
        let model = self.fitted().ok_or(NoVote::WarmingUp)?;
        let query =
            tokio::time::timeout(EMBED_WAIT, self.embedder.embed(vec![transcript.to_owned()]))
                .await;
        let mut vector = match query {
            Ok(Ok(mut vectors)) if !vectors.is_empty() => vectors.remove(0),
            Ok(Ok(_)) => return Err(NoVote::EmbedderFailed),
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not embed a transcript; the rules decide alone");
                return Err(NoVote::EmbedderFailed);
            }
            Err(_) => {
                tracing::warn!(wait = ?EMBED_WAIT, "embedding a transcript took too long; the rules decide alone");
                return Err(NoVote::EmbedderFailed);
            }
        };
        if !normalise(&mut vector) || vector.len() != model.weights.len() {
            return Err(NoVote::EmbedderFailed);
        }
        Ok(model.vote(&vector))
    }
}

/// The examples' screened transcripts and classes.
fn examples() -> Result<(Vec<String>, Vec<usize>), String> {
    let mut texts = Vec::new();
    let mut classes = Vec::new();
    for file in LABELLED {
        let cases: Vec<serde_json::Value> =
            serde_json::from_str(file).map_err(|e| format!("the labelled examples: {e}"))?;
        for case in cases {
            let Some(transcript) = case["transcript"].as_str() else {
                continue;
            };
            let text = screen(transcript).text;
            if text.trim().is_empty() {
                continue;
            }
            let label = if case["should_store"].as_bool() == Some(true) {
                let Some(memory_type) = case["memory_type"]
                    .as_str()
                    .and_then(MemoryType::from_label)
                else {
                    continue;
                };
                Some(memory_type)
            } else {
                None
            };
            texts.push(text);
            classes.push(class(label));
        }
    }
    Ok((texts, classes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_are_the_dev_split_and_the_training_set_screened() {
        let (texts, classes) = examples().unwrap();
        assert!(texts.len() >= 2000, "{}", texts.len());
        assert_eq!(texts.len(), classes.len());
        for class in 0..CLASSES {
            assert!(classes.contains(&class), "no example of class {class}");
        }
        assert!(!texts.iter().any(|t| t.contains("hunter2")));
    }

    #[test]
    fn the_classifier_learns_its_examples_and_fits_the_same_way_every_time() {
        // Three clusters on a circle: preferences, decisions, nothing.
        let at = |angle: f32| vec![angle.cos(), angle.sin()];
        let vectors = vec![at(0.0), at(0.2), at(2.0), at(2.2), at(4.0), at(4.2)];
        let classes = [
            class(Some(MemoryType::Preference)),
            class(Some(MemoryType::Preference)),
            class(Some(MemoryType::Decision)),
            class(Some(MemoryType::Decision)),
            class(None),
            class(None),
        ];
        let model = Linear::fit(&vectors, &classes).unwrap();
        assert_eq!(model, Linear::fit(&vectors, &classes).unwrap());
        let vote = model.vote(&at(0.1));
        assert_eq!(vote.label, Some(MemoryType::Preference), "{vote:?}");
        assert!(vote.probability > 0.5, "{vote:?}");
        assert_eq!(model.vote(&at(2.1)).label, Some(MemoryType::Decision));
        let vote = model.vote(&at(4.1));
        assert_eq!(vote.label, None, "{vote:?}");
        assert!(vote.probability > 0.5, "{vote:?}");
        let total: f32 = model.probabilities(&at(1.0)).iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "{total}");
    }

    #[test]
    fn a_fit_of_the_examples_size_is_the_same_every_time() {
        // As many vectors as the examples, of MiniLM's size: the matrix
        // products run on every core, and must not change the weights.
        let vectors: Vec<Vec<f32>> = (0..1155)
            .map(|i| {
                let mut v: Vec<f32> = (0..384)
                    .map(|j| ((i * 31 + j * 17) % 97) as f32 / 97.0 - 0.5)
                    .collect();
                normalise(&mut v);
                v
            })
            .collect();
        let classes: Vec<usize> = (0..vectors.len()).map(|i| i % CLASSES).collect();
        let model = Linear::fit(&vectors, &classes).unwrap();
        assert_eq!(model, Linear::fit(&vectors, &classes).unwrap());
        assert!(model.weights.iter().flatten().all(|w| w.is_finite()));
    }
}
