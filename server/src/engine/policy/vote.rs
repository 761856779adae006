//! What the labelled examples' vote (see [`super::examples`]) changes of the
//! rules' verdict: it fills the rules' gaps and overrules their weakest
//! cues when it is clear. The thresholds and how they were chosen are in
//! docs/policy-measurements.md.

use std::collections::BTreeMap;

use super::rules::{self, Cue, Strength};
use super::transcript::Sentence;
use super::{Decision, DecisionSource};
use crate::domain::{MemoryType, Scope};

/// Where the rules found no cue, a vote for a type this likely keeps it.
const VOTE_FILLS: f64 = 0.3;
/// The strongest of the rules' cues a clear vote overrules: a user's
/// imperative (a preference by default) and a plain statement (a fact);
/// cue phrases and explicit markers stand.
const VOTE_OVERRULES: Strength = Strength::Imperative;
/// The least probability of "not worth keeping" that drops a weak cue.
const VOTE_DROPS: f64 = 0.7;
/// The least probability of another type that retypes a weak cue.
const VOTE_RETYPES: f64 = 0.3;

/// What the classifier fitted on the labelled examples says of a transcript.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vote {
    /// The likeliest class: the type to keep it as, or `None` (not worth
    /// keeping).
    pub label: Option<MemoryType>,
    /// How likely that class is, 0 to 1.
    pub probability: f64,
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
    /// The vote as a decision's `vote` metadata says it: "NOTE 0.60".
    pub(super) fn describe(&self) -> String {
        let label = self.label.map_or("NOT_STORED", MemoryType::label);
        format!("{label} {:.2}", self.probability)
    }

    /// What the vote changes of the rules' verdict on a transcript, whose
    /// deciding cue is `ruled` (none when the rules found none), or `None`
    /// when the rules' verdict stands.
    pub(super) fn verdict(&self, ruled: Option<&Cue>) -> Option<Verdict> {
        match (ruled, self.label) {
            (None, Some(memory_type)) if self.probability >= VOTE_FILLS => {
                Some(Verdict::Keep(memory_type))
            }
            (Some(cue), None)
                if cue.strength <= VOTE_OVERRULES && self.probability >= VOTE_DROPS =>
            {
                Some(Verdict::Drop)
            }
            (Some(cue), Some(memory_type))
                if cue.strength <= VOTE_OVERRULES
                    && memory_type != cue.memory_type
                    && self.probability >= VOTE_RETYPES =>
            {
                Some(Verdict::Keep(memory_type))
            }
            _ => None,
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

/// The metadata of a decision the labelled examples' vote made.
fn voted_metadata(task_id: &str) -> BTreeMap<String, String> {
    let mut metadata = rules::rules_metadata(task_id);
    metadata.insert("classifier".to_owned(), "rules+examples".to_owned());
    metadata
}
