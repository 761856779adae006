//! The memory policy of DESIGN §6: whether a transcript holds something
//! worth remembering, as what, how important and how widely seen.
//!
//! A transcript is first screened (`screen.rs`: secrets out, injected
//! instructions dropped). Then either the model decides (`llm.rs`) or the
//! rules do: `transcript.rs` reads its sentences, `rules.rs` finds their
//! strongest cue — a phrase of the lexicon (`lexicon.rs`, over
//! `server/data/policy/cues.txt`) or one of the shapes of durable knowledge
//! (`shapes.rs`, `timing.rs`) — and the labelled examples' vote (a learned
//! decider, `decider.rs`, over what `features.rs` reads of the transcript,
//! fitted in `examples.rs` and heeded as `vote.rs` says) fills the rules'
//! gaps and decides their weak cues. [`Policy`]
//! (`remember.rs`) chooses the classifier and stores what it decides,
//! superseding what a changed preference or decision replaces
//! (`supersede.rs`).

mod decider;
mod examples;
mod features;
mod lexicon;
mod llm;
mod remember;
mod rules;
mod screen;
mod shapes;
mod supersede;
mod timing;
mod transcript;
mod vote;

#[cfg(test)]
mod evaluation;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tuning;

use std::collections::BTreeMap;

pub use crate::domain::policy::{ClassifyMode, Decision, DecisionSource};
use crate::domain::{MemoryLevel, MemoryType, Scope};
pub use examples::{LabelledExamples, NoVote};
pub use llm::has_control;
pub use remember::{ClassifyRequest, Policy, RememberRequest, Remembered};
pub use screen::{Screened, screen};
pub use supersede::change_cue;
use vote::Verdict;
pub use vote::Vote;

/// The most characters of a decision's summary.
pub const MAX_SUMMARY_CHARS: usize = 300;

/// The rules' decision on `transcript`, with the labelled examples' `vote`
/// filling the rules' gaps (no cue at all), deciding their weakest cues (a
/// bare imperative or statement) and overruling a cue phrase only when it
/// is nearly sure; explicit markers always stand (see [`vote::HEEDED`]).
pub fn classify_with_vote(
    transcript: &str,
    scope: &Scope,
    task_id: &str,
    vote: Option<&Vote>,
) -> Decision {
    classify_heeding(transcript, scope, task_id, vote, &vote::HEEDED)
}

/// [`classify_with_vote`], heeding the vote as `heeded` says.
fn classify_heeding(
    transcript: &str,
    scope: &Scope,
    task_id: &str,
    vote: Option<&Vote>,
    heeded: &vote::Heeded,
) -> Decision {
    let sentences = transcript::sentences(transcript);
    let deciding = rules::deciding_cue(&sentences);
    // The rules' deciding sentence, or the first one not said by the
    // assistant.
    let index = deciding.map(|d| d.sentence).or_else(|| {
        sentences
            .iter()
            .position(|s| s.speaker != transcript::Speaker::Assistant && !s.hedged)
    });
    let verdict = vote
        .and_then(|vote| {
            Some((
                vote,
                vote.verdict(deciding.as_ref().map(|d| &d.cue), heeded)?,
            ))
        })
        // The vote keeps nothing that names a credential the rules would
        // not keep: the secret screen may have missed its value.
        .filter(|(_, verdict)| match (verdict, index) {
            (Verdict::Keep(_), Some(index)) => {
                deciding.is_some() || !vote::names_a_credential(&sentences[index..])
            }
            _ => true,
        });
    let mut decision = match (verdict, index) {
        (Some((vote, Verdict::Keep(memory_type))), Some(index)) => {
            vote.keep(&sentences[index..], memory_type, scope, task_id)
        }
        (Some((vote, Verdict::Drop)), _) => vote.discard(scope, task_id),
        _ => rules::ruled(&sentences, deciding, scope, task_id),
    };
    if let Some(vote) = vote {
        decision.metadata.insert("vote".to_owned(), vote.describe());
    }
    decision
}

/// A decision to store nothing.
fn nothing_stored(
    scope: &Scope,
    metadata: BTreeMap<String, String>,
    source: DecisionSource,
    reason: String,
) -> Decision {
    Decision {
        should_store: false,
        memory_type: MemoryType::Event,
        summary: String::new(),
        importance: 0.0,
        level: scope.narrowest_level(),
        metadata,
        source,
        reason,
    }
}

/// `level`, widened until the scope can address it.
fn allowed_level(level: MemoryLevel, scope: &Scope) -> MemoryLevel {
    match level {
        MemoryLevel::Conversation if !scope.session_id.is_empty() => MemoryLevel::Conversation,
        MemoryLevel::Conversation | MemoryLevel::Workspace if !scope.project_id.is_empty() => {
            MemoryLevel::Workspace
        }
        _ => MemoryLevel::Global,
    }
}
