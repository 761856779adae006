//! The labelled examples' vote (issues 15 and 28): with an embedder, the
//! labelled transcripts of the policy's dev split (server/data/policy/
//! dev.json) and its training-only examples (examples.json and the varied
//! examples_varied_a.json to examples_varied_d.json), all compiled in, are
//! read and their sentences embedded once, and the learned decider
//! (`decider.rs`) is fitted on their features (`features.rs`): seven
//! classes, one per memory type and one for "not worth keeping". The rules
//! consult its vote (see [`super::classify_with_vote`]). The held-out sets
//! are never among the examples, so they still measure the classifier
//! fairly; the dev split's accuracy with an embedder does not.
//!
//! Deterministic for a given model: the examples and their order are fixed,
//! the fit is seeded and runs a fixed number of full-batch steps, and a
//! sentence's vector is the same every time. The examples are embedded and
//! fitted in the background from the first call that needs them (not at
//! start: an embedding API is not called for a server that never
//! classifies); until then, and whenever the embedder fails, the rules
//! decide alone and the decision's `vote` metadata says why. A failed fit
//! is tried again at the next call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::decider::{self, Decider, FIT};
use super::features::{self, Reading};
use super::{Vote, screen};
use crate::domain::MemoryType;
use crate::embed::{Embedder, normalise};

/// The labelled transcripts the decider learns from: the dev split and
/// the examples written only for it.
const LABELLED: [&str; 6] = [
    include_str!("../../../data/policy/dev.json"),
    include_str!("../../../data/policy/examples.json"),
    include_str!("../../../data/policy/examples_varied_a.json"),
    include_str!("../../../data/policy/examples_varied_b.json"),
    include_str!("../../../data/policy/examples_varied_c.json"),
    include_str!("../../../data/policy/examples_varied_d.json"),
];

/// How long a transcript's vectors may take; past it, the rules decide
/// alone.
const EMBED_WAIT: Duration = Duration::from_secs(5);

/// The labelled examples of an embedder and the decider fitted on them.
pub struct LabelledExamples {
    embedder: Arc<Embedder>,
    fitted: OnceLock<Decider>,
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

    /// The fitted decider; until there is one, starts a fit in the
    /// background (unless one is under way) and says so. A fit that fails
    /// is tried again at the next call.
    fn fitted(self: &Arc<Self>) -> Option<&Decider> {
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
                        tracing::warn!(%error, "could not fit the policy's decider on its labelled examples; the rules decide alone");
                    }
                }
                examples.fitting.store(false, Ordering::Release);
            });
        }
        None
    }

    /// Embeds the labelled examples' sentences and fits the decider on
    /// their features.
    async fn fit(&self) -> Result<Decider, String> {
        let started = std::time::Instant::now();
        let examples = examples()?;
        // One call: a local model sorts them by length, so batches pad
        // little.
        let texts: Vec<String> = examples.iter().flat_map(|e| e.reading.texts()).collect();
        let sentences = texts.len();
        let vectors = self
            .embedder
            .embed(texts)
            .await
            .map_err(|e| e.to_string())?;
        let embedded = started.elapsed();
        let count = examples.len();
        let dimensions = self.embedder.info().dimensions;
        let model = tokio::task::spawn_blocking(move || fit(&examples, vectors, dimensions))
            .await
            .map_err(|e| e.to_string())??;
        tracing::info!(
            examples = count,
            sentences,
            embedded = ?embedded,
            took = ?started.elapsed(),
            "fitted the policy's decider on its labelled examples"
        );
        Ok(model)
    }

    /// What the decider says of `transcript` (already screened), or why
    /// it says nothing.
    pub async fn vote(self: &Arc<Self>, transcript: &str) -> Result<Vote, NoVote> {
        if transcript.trim().is_empty() {
            return Err(NoVote::Empty);
        }
        let model = self.fitted().ok_or(NoVote::WarmingUp)?;
        let reading = features::read(transcript);
        let texts = reading.texts();
        if texts.is_empty() {
            return Err(NoVote::Empty);
        }
        let count = texts.len();
        let query = tokio::time::timeout(EMBED_WAIT, self.embedder.embed(texts)).await;
        let mut vectors = match query {
            Ok(Ok(vectors)) if vectors.len() == count => vectors,
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
        let dimensions = self.embedder.info().dimensions;
        for vector in &mut vectors {
            if !normalise(vector) || vector.len() != dimensions {
                return Err(NoVote::EmbedderFailed);
            }
        }
        // A model swapped for one of other dimensions since the fit.
        if features::width(dimensions) != model.width() {
            return Err(NoVote::EmbedderFailed);
        }
        Ok(vote(model, &reading.features(&vectors, dimensions)))
    }
}

/// The decider's vote on a transcript's `features`.
pub(super) fn vote(model: &Decider, features: &[f32]) -> Vote {
    Vote {
        probabilities: model.probabilities(features).map(f64::from),
    }
}

/// A labelled transcript, screened and read.
pub(super) struct Example {
    pub reading: Reading,
    pub class: usize,
    /// Which of the labelled files (in [`LABELLED`]'s order) it is from;
    /// read by the tuning tools (`tuning.rs`), which score each file.
    #[cfg_attr(not(test), allow(dead_code))]
    pub file: usize,
}

/// Fits the decider on `examples`, whose embedded sentences' `vectors`
/// (of `dimensions`) follow one another in order.
pub(super) fn fit(
    examples: &[Example],
    vectors: Vec<Vec<f32>>,
    dimensions: usize,
) -> Result<Decider, String> {
    let (rows, classes) = rows(examples, vectors, dimensions);
    Decider::fit(&rows, &classes, FIT).map_err(|e| format!("fitting the decider: {e}"))
}

/// The features and classes of `examples`, given their sentences' vectors
/// in order.
pub(super) fn rows(
    examples: &[Example],
    mut vectors: Vec<Vec<f32>>,
    dimensions: usize,
) -> (Vec<Vec<f32>>, Vec<usize>) {
    vectors.iter_mut().for_each(|v| {
        normalise(v);
    });
    let mut rest = vectors.as_slice();
    let mut rows = Vec::with_capacity(examples.len());
    for example in examples {
        let (own, after) = rest.split_at(example.reading.embedded.len().min(rest.len()));
        rows.push(example.reading.features(own, dimensions));
        rest = after;
    }
    (rows, examples.iter().map(|e| e.class).collect())
}

/// The labelled examples, screened and read, in order.
pub(super) fn examples() -> Result<Vec<Example>, String> {
    let mut examples = Vec::new();
    for (index, file) in LABELLED.iter().enumerate() {
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
            examples.push(Example {
                reading: features::read(&text),
                class: decider::class(label),
                file: index,
            });
        }
    }
    Ok(examples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_are_the_dev_split_and_the_training_sets_screened() {
        let examples = examples().unwrap();
        assert!(examples.len() >= 2900, "{}", examples.len());
        for class in 0..decider::CLASSES {
            assert!(
                examples.iter().any(|e| e.class == class),
                "no example of class {class}"
            );
        }
        assert!(
            !examples
                .iter()
                .flat_map(|e| e.reading.texts())
                .any(|t| t.contains("hunter2"))
        );
    }

    #[test]
    fn each_example_reads_its_own_vectors() {
        let examples: Vec<Example> = ["User: I prefer tabs.", "ok. thanks. bye."]
            .iter()
            .map(|t| Example {
                reading: features::read(t),
                class: 0,
                file: 0,
            })
            .collect();
        let vectors = vec![
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![0.0, 2.0],
            vec![3.0, 0.0],
        ];
        let (rows, classes) = rows(&examples, vectors, 2);
        assert_eq!(classes, [0, 0]);
        // The first has one sentence, the second the next three.
        assert_eq!(rows[0][..2], [1.0, 0.0]);
        assert_eq!(rows[1][..2], [1.0 / 3.0, 2.0 / 3.0]);
    }
}
