//! What the labelled examples' vote (see [`super::examples`]) changes of the
//! rules' verdict: it fills the rules' gaps, decides their weakest cues (a
//! bare imperative or statement) and overrules a cue phrase only when it is
//! nearly sure; explicit markers stand. The thresholds and how they were
//! chosen are in docs/policy-measurements.md.

use std::collections::BTreeMap;

use super::decider::{CLASSES, label};
use super::rules::{self, Cue, Strength};
use super::transcript::Sentence;
use super::{Decision, DecisionSource};
use crate::domain::{MemoryType, Scope};

/// When the learned decider's vote is heeded, by the strength of the rules'
/// deciding cue. Explicit markers always stand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Heeded {
    /// Where the rules found no cue, the least probability of being worth
    /// keeping that keeps the transcript.
    pub fills: f64,
    /// Under a weak cue (a bare imperative or statement), the least
    /// probability of being worth keeping that keeps it.
    pub keeps_weak: f64,
    /// Under a cue phrase or a shape, the probability of being worth
    /// keeping below which it is dropped.
    pub drops_phrase: f64,
    /// Under a cue phrase or a shape, the least probability of another
    /// type (among the types) that retypes it; above 1, never.
    pub retypes_phrase: f64,
}

/// The thresholds the server uses, chosen in folds of the training
/// examples (docs/policy-measurements.md).
pub(super) const HEEDED: Heeded = Heeded {
    fills: 0.3,
    keeps_weak: 0.3,
    drops_phrase: 0.05,
    retypes_phrase: 0.7,
};

/// What the decider fitted on the labelled examples says of a transcript.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vote {
    /// The probability of each class: not worth keeping, then the memory
    /// types by code.
    pub probabilities: [f64; CLASSES],
}

/// What a vote changes of the rules' verdict, when it changes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Keep the transcript as this type.
    Keep(MemoryType),
    /// Keep nothing.
    Drop,
}

impl Vote {
    /// The likeliest class and its probability; on a tie, the lower class.
    pub fn likeliest(&self) -> (Option<MemoryType>, f64) {
        let best = (0..CLASSES).fold(0, |best, c| {
            if self.probabilities[c] > self.probabilities[best] {
                c
            } else {
                best
            }
        });
        (label(best), self.probabilities[best])
    }

    /// The probability that the transcript is worth keeping at all.
    pub fn worth_keeping(&self) -> f64 {
        1.0 - self.probabilities[0]
    }

    /// The likeliest type, and its probability among the types.
    fn likeliest_type(&self) -> (MemoryType, f64) {
        let best = (2..CLASSES).fold(1, |best, c| {
            if self.probabilities[c] > self.probabilities[best] {
                c
            } else {
                best
            }
        });
        let memory_type = label(best).unwrap_or(MemoryType::Fact);
        (
            memory_type,
            self.probabilities[best] / self.worth_keeping().max(1e-9),
        )
    }

    /// The vote as a decision's `vote` metadata says it: "NOTE 0.60".
    pub(super) fn describe(&self) -> String {
        let (label, probability) = self.likeliest();
        let label = label.map_or("NOT_STORED", MemoryType::label);
        format!("{label} {probability:.2}")
    }

    /// What the vote changes of the rules' verdict on a transcript, whose
    /// deciding cue is `ruled` (none when the rules found none), or `None`
    /// when the rules' verdict stands.
    pub(super) fn verdict(&self, ruled: Option<&Cue>, heeded: &Heeded) -> Option<Verdict> {
        let (memory_type, typed) = self.likeliest_type();
        let keep = self.worth_keeping();
        match ruled {
            Some(cue) if cue.strength == Strength::Marker => None,
            None if keep >= heeded.fills => Some(Verdict::Keep(memory_type)),
            None => None,
            Some(cue) if cue.strength < Strength::Phrase => Some(if keep >= heeded.keeps_weak {
                Verdict::Keep(memory_type)
            } else {
                Verdict::Drop
            }),
            Some(_) if keep < heeded.drops_phrase => Some(Verdict::Drop),
            Some(cue) if memory_type != cue.memory_type && typed >= heeded.retypes_phrase => {
                Some(Verdict::Keep(memory_type))
            }
            Some(_) => None,
        }
    }

    /// The decision to keep `memory_type` the vote made, summarised from
    /// the first of `sentences`.
    pub(super) fn keep(
        &self,
        sentences: &[Sentence],
        memory_type: MemoryType,
        scope: &Scope,
        task_id: &str,
    ) -> Decision {
        let kind = super::lexicon::lexicon().kind(memory_type);
        Decision {
            should_store: true,
            memory_type,
            summary: rules::summary(sentences),
            importance: kind.importance,
            level: rules::level(memory_type, &sentences[0].text.to_lowercase(), scope),
            metadata: voted_metadata(task_id),
            source: DecisionSource::Rules,
            reason: format!(
                "the labelled examples say {} ({})",
                memory_type.label().to_lowercase(),
                self.describe()
            ),
        }
    }

    /// The decision to keep nothing the vote made.
    pub(super) fn discard(&self, scope: &Scope, task_id: &str) -> Decision {
        rules::not_worth_keeping(
            scope,
            voted_metadata(task_id),
            format!(
                "the labelled examples say it is not worth keeping ({})",
                self.describe()
            ),
        )
    }
}

/// Whether any of `sentences` (those a kept summary would start from)
/// names a credential.
pub(super) fn names_a_credential(sentences: &[Sentence]) -> bool {
    let credentials = &super::lexicon::lexicon().credentials;
    sentences.iter().take(3).any(|s| {
        let lower = format!(" {} ", s.text.to_lowercase());
        credentials.iter().any(|c| lower.contains(c))
    })
}

/// The metadata of a decision the labelled examples' vote made.
fn voted_metadata(task_id: &str) -> BTreeMap<String, String> {
    let mut metadata = rules::rules_metadata(task_id);
    metadata.insert("classifier".to_owned(), "rules+examples".to_owned());
    metadata
}
