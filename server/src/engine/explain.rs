//! Why Engram holds a memory: where it came from, what it was learned
//! from, how it changed since and whether it is still true — the chain of
//! sources `ExplainMemory` answers with, as records and as sentences.

use crate::domain::episode::{Episode, EpisodeStatus, StepWindow};
use crate::domain::provenance::WriteMethod;
use crate::domain::{ChangeAction, Memory, MemorySource, Micros, Revision, Scope};
use crate::engine::memories::{self, Detailed};
use crate::error::{Error, Result};
use crate::store::Store;

/// The most revisions an explanation lists (the oldest first).
const REVISIONS_SHOWN: usize = 100;

/// A memory and the records that explain it.
#[derive(Debug, Clone)]
pub struct Explanation {
    pub detailed: Detailed,
    /// The episode its writer named, when the caller's scope sees it.
    pub episode: Option<Episode>,
    /// Its history, oldest first (at most [`REVISIONS_SHOWN`]).
    pub revisions: Vec<Revision>,
    /// The memory that replaced it, when one did and the scope sees it.
    pub replaced_by: Option<Memory>,
    /// The same, said in sentences, the first source first.
    pub sentences: Vec<String>,
}

/// Explains the memory `id` visible from `scope` (`NotFound` otherwise).
pub async fn explain(
    store: &dyn Store,
    scope: Scope,
    id: String,
    now: Micros,
) -> Result<Explanation> {
    let detailed = memories::get_detailed(store, scope.clone(), id.clone(), now).await?;
    let namespace = &scope.namespace;
    let episode_id = detailed
        .provenance
        .as_ref()
        .map(|p| p.origin.episode_id.as_str())
        .filter(|e| !e.is_empty());
    let episode = match episode_id {
        Some(episode_id) => {
            let none = StepWindow { after: 0, limit: 0 };
            store.get_episode(&scope, episode_id, none).await?
        }
        None => None,
    };
    let revisions = store
        .list_memory_revisions(namespace, &id, REVISIONS_SHOWN, None)
        .await?;
    let replaced_by = match detailed.memory.invalidated_by.as_str() {
        "" => None,
        other => match store.get_memory(&scope, other, now).await {
            Ok(found) => found,
            Err(Error::NotFound(_)) => None,
            Err(err) => return Err(err),
        },
    };
    let mut explanation = Explanation {
        detailed,
        episode,
        revisions,
        replaced_by,
        sentences: Vec::new(),
    };
    explanation.sentences = sentences(&explanation);
    Ok(explanation)
}

/// What the records of `explanation` say, a sentence each.
fn sentences(explanation: &Explanation) -> Vec<String> {
    let memory = &explanation.detailed.memory;
    let mut said = Vec::new();
    match &explanation.detailed.provenance {
        Some(provenance) => {
            let method = match provenance.origin.method {
                WriteMethod::CreateMemory => "CreateMemory",
                WriteMethod::BatchCreateMemories => "BatchCreateMemories",
                WriteMethod::Remember => "Remember",
            };
            let mut by = Vec::new();
            if !provenance.actor.key_id.is_empty() {
                by.push(format!("API key {}", provenance.actor.key_id));
            }
            if !provenance.actor.agent_id.is_empty() {
                by.push(format!("agent {:?}", provenance.actor.agent_id));
            }
            let by = match by.is_empty() {
                true => String::new(),
                false => format!(" by {}", by.join(" for ")),
            };
            said.push(format!(
                "Written with {method}{by} on {}.",
                crate::domain::dates::day_label(provenance.create_time)
            ));
            if provenance.origin.method == WriteMethod::Remember {
                let decider = match memory.source {
                    MemorySource::PolicyLlm => "the configured model",
                    _ => "the rules classifier",
                };
                let kept = match provenance.origin.transcript.is_empty() {
                    true => "not kept",
                    false => "kept as screened",
                };
                said.push(format!(
                    "Decided by {decider} from a transcript whose SHA-256 is {} (its text {kept}).",
                    provenance.origin.transcript_hash
                ));
            }
            if !provenance.origin.episode_id.is_empty() {
                said.push(match &explanation.episode {
                    Some(episode) => episode_sentence(episode),
                    None => format!(
                        "From episode {}, which this scope does not see (or which is gone).",
                        provenance.origin.episode_id
                    ),
                });
            }
        }
        None => said.push(
            "Written before this server kept provenance: no record of how or by whom.".into(),
        ),
    }
    if memory.seen_count > 1 {
        said.push(format!(
            "Written {} times: identical writes were merged into it.",
            memory.seen_count
        ));
    }
    let updates = explanation
        .revisions
        .iter()
        .filter(|r| r.action == ChangeAction::Updated.code())
        .count();
    if updates > 0 {
        said.push(format!("Updated {updates} times since (see revisions)."));
    }
    if let Some(valid_to) = memory.valid_to {
        let replaced = match &explanation.replaced_by {
            Some(other) => format!(", replaced by memory {} ({:?})", other.id, other.content),
            None if !memory.invalidated_by.is_empty() => {
                format!(", replaced by memory {}", memory.invalidated_by)
            }
            None => String::new(),
        };
        let reason = match memory.invalidation_reason.is_empty() {
            true => String::new(),
            false => format!(": {}", memory.invalidation_reason),
        };
        said.push(format!(
            "No longer true since {}{replaced}{reason}.",
            crate::domain::dates::day_label(valid_to)
        ));
    }
    let links = explanation.detailed.links.len();
    if links > 0 {
        said.push(format!(
            "Linked to {links} memories that say otherwise and stay valid beside it."
        ));
    }
    said
}

fn episode_sentence(episode: &Episode) -> String {
    let outcome = match &episode.outcome {
        Some(outcome) => format!(", scored {:.2}", outcome.score),
        None => String::new(),
    };
    format!(
        "From episode {} ({:?}, {}{outcome}).",
        episode.id,
        episode.description,
        match episode.status {
            EpisodeStatus::Running => "still running",
            EpisodeStatus::Completed => "completed",
            EpisodeStatus::Abandoned => "abandoned",
        }
    )
}
