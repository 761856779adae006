//! The nearest labelled examples' vote (issue 15): with an embedder, the
//! labelled transcripts of the policy's dev set (tests/data/policy/dev.json,
//! compiled in) are embedded once, and a transcript the rules find no cue
//! in is judged by its nearest examples. The held-out set is
//! never among them, so it still measures the classifier fairly.
//!
//! Deterministic for a given model: the examples and their order are fixed,
//! a transcript's vector is the same every time, and ties are broken by
//! the examples' order. The examples are embedded at the first call that
//! needs them (it waits; a failure is tried again at the next call); when
//! the embedder fails, the rules decide alone and the decision carries no
//! vote.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::MemoryType;
use crate::embed::{Embedder, dot, normalise};
use crate::engine::policy::{self, Vote};

/// The labelled transcripts the vote draws on: the dev split only.
const EXAMPLES: &str = include_str!("../../../tests/data/policy/dev.json");

/// How many nearest examples vote.
const K: usize = 7;

/// How long a transcript's vector may take; past it, the rules decide alone.
const EMBED_WAIT: Duration = Duration::from_secs(5);

/// The examples' texts, vectors and labels (`None`: not worth keeping).
struct Embedded {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
    labels: Vec<Option<MemoryType>>,
}

/// The labelled examples of an embedder, embedded at the first need.
pub struct LabelledExamples {
    embedder: Arc<Embedder>,
    embedded: tokio::sync::OnceCell<Arc<Embedded>>,
}

impl LabelledExamples {
    pub fn new(embedder: Arc<Embedder>) -> Self {
        LabelledExamples {
            embedder,
            embedded: tokio::sync::OnceCell::new(),
        }
    }

    async fn embedded(&self) -> Result<Arc<Embedded>, String> {
        self.embedded
            .get_or_try_init(|| async {
                let (texts, labels) = examples()?;
                let mut vectors = Vec::with_capacity(texts.len());
                for batch in texts.chunks(32) {
                    let embedded = self
                        .embedder
                        .embed(batch.to_vec())
                        .await
                        .map_err(|e| e.to_string())?;
                    vectors.extend(embedded.into_iter().map(|mut v| {
                        normalise(&mut v);
                        v
                    }));
                }
                tracing::info!(
                    examples = vectors.len(),
                    "embedded the policy's labelled examples"
                );
                Ok(Arc::new(Embedded {
                    texts,
                    vectors,
                    labels,
                }))
            })
            .await
            .cloned()
    }

    /// What the nearest examples say of `transcript` (already screened);
    /// `None` when the embedder could not answer.
    pub async fn vote(&self, transcript: &str) -> Option<Vote> {
        if transcript.trim().is_empty() {
            return None;
        }
        let embedded = match self.embedded().await {
            Ok(embedded) => embedded,
            Err(error) => {
                tracing::warn!(%error, "the labelled examples are not embedded; the rules decide alone");
                return None;
            }
        };
        let query =
            tokio::time::timeout(EMBED_WAIT, self.embedder.embed(vec![transcript.to_owned()]))
                .await;
        let mut vector = match query {
            Ok(Ok(mut vectors)) if !vectors.is_empty() => vectors.remove(0),
            Ok(Ok(_)) => return None,
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not embed a transcript; the rules decide alone");
                return None;
            }
            Err(_) => {
                tracing::warn!(wait = ?EMBED_WAIT, "embedding a transcript took too long; the rules decide alone");
                return None;
            }
        };
        if !normalise(&mut vector) {
            return None;
        }
        // An example never votes on its own text, so the dev split's
        // accuracy is a leave-one-out measure.
        let itself = embedded.texts.iter().position(|t| t == transcript);
        Some(nearest_vote(
            &embedded.vectors,
            &embedded.labels,
            &vector,
            itself,
        ))
    }
}

/// The weighted vote of the `K` examples nearest to `query` (but `skip`).
fn nearest_vote(
    vectors: &[Vec<f32>],
    labels: &[Option<MemoryType>],
    query: &[f32],
    skip: Option<usize>,
) -> Vote {
    let mut scored: Vec<(usize, f32)> = vectors
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != skip)
        .map(|(i, v)| (i, dot(v, query)))
        .collect();
    // Nearest first; equal cosines in the examples' order.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(K);
    let mut weights: Vec<(Option<MemoryType>, f64)> = Vec::new();
    let mut total = 0.0;
    for &(i, cosine) in &scored {
        let weight = f64::from(cosine.max(0.0));
        total += weight;
        match weights.iter_mut().find(|(label, _)| *label == labels[i]) {
            Some((_, w)) => *w += weight,
            None => weights.push((labels[i], weight)),
        }
    }
    // The heaviest label; on a tie, the one whose nearest example is nearer
    // (it was pushed first).
    let (label, weight) =
        weights.iter().copied().fold(
            (None, -1.0),
            |best, (label, w)| if w > best.1 { (label, w) } else { best },
        );
    Vote {
        label,
        share: if total > 0.0 { weight / total } else { 0.0 },
        nearest: scored.first().map_or(0.0, |&(_, c)| f64::from(c)),
    }
}

/// The memory type labelled `label` (e.g. "PREFERENCE").
fn type_of_label(label: &str) -> Option<MemoryType> {
    (1..)
        .map_while(MemoryType::from_code)
        .find(|t| t.label() == label)
}

/// The examples' screened transcripts and labels.
fn examples() -> Result<(Vec<String>, Vec<Option<MemoryType>>), String> {
    let cases: Vec<serde_json::Value> =
        serde_json::from_str(EXAMPLES).map_err(|e| format!("the labelled examples: {e}"))?;
    let mut texts = Vec::new();
    let mut labels = Vec::new();
    for case in cases {
        let Some(transcript) = case["transcript"].as_str() else {
            continue;
        };
        let text = policy::screen(transcript).text;
        if text.trim().is_empty() {
            continue;
        }
        let label = if case["should_store"].as_bool() == Some(true) {
            let Some(memory_type) = case["memory_type"].as_str().and_then(type_of_label) else {
                continue;
            };
            Some(memory_type)
        } else {
            None
        };
        texts.push(text);
        labels.push(label);
    }
    Ok((texts, labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_are_the_dev_split_screened() {
        let (texts, labels) = examples().unwrap();
        assert!(texts.len() >= 200, "{}", texts.len());
        assert_eq!(texts.len(), labels.len());
        assert!(labels.iter().any(Option::is_none));
        assert!(labels.contains(&Some(MemoryType::Preference)));
        assert!(!texts.iter().any(|t| t.contains("hunter2")));
    }

    #[test]
    fn the_nearest_examples_vote_by_weight() {
        let vectors = vec![vec![1.0, 0.0], vec![0.9, 0.436], vec![0.0, 1.0]];
        let labels = vec![
            Some(MemoryType::Preference),
            Some(MemoryType::Preference),
            None,
        ];
        let vote = nearest_vote(&vectors, &labels, &[1.0, 0.0], None);
        assert_eq!(vote.label, Some(MemoryType::Preference));
        assert!((vote.nearest - 1.0).abs() < 1e-6);
        assert!(vote.share > 0.99, "{vote:?}");
        let vote = nearest_vote(&vectors, &labels, &[0.0, 1.0], None);
        assert_eq!(vote.label, None);
        // Without itself, the nearest to the first is the second.
        let vote = nearest_vote(&vectors, &labels, &[1.0, 0.0], Some(0));
        assert!((vote.nearest - 0.9).abs() < 1e-6, "{vote:?}");
    }
}
