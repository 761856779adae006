//! What a remembered preference or decision supersedes: when its transcript
//! says something changed, the stored memories of the same owner, type,
//! level and subject.

use std::collections::BTreeSet;

use super::lexicon::lexicon;
use crate::domain::{ListQuery, MemoryFilter, MemoryOrder, MemoryType, Micros, NewMemory};
use crate::engine::contradictions::Contradiction;
use crate::engine::memories::SUPERSEDED;
use crate::error::Result;
use crate::store::Store;

/// The most stored memories of one type and level a changed preference or
/// decision is compared with (the newest).
const MAX_SUPERSEDE_CANDIDATES: usize = 200;

/// The stored memories `memory` replaces: when the (screened) `transcript`
/// says a preference or a decision changed, those of the same type, level
/// and subject that belong to the same owner as `memory` (DESIGN §9: a
/// write's side effects stay in its owner scope).
pub(super) async fn superseded_by(
    store: &dyn Store,
    memory: &NewMemory,
    transcript: &str,
    now: Micros,
) -> Result<Vec<Contradiction>> {
    let replaceable = matches!(
        memory.memory_type,
        MemoryType::Preference | MemoryType::Decision
    );
    if !replaceable || change_cue(transcript).is_none() {
        return Ok(Vec::new());
    }
    let query = ListQuery {
        scope: memory.scope.clone(),
        filter: MemoryFilter {
            memory_types: vec![memory.memory_type],
            levels: vec![memory.level],
            ..Default::default()
        },
        order: MemoryOrder::CreateTimeDesc,
        page_size: MAX_SUPERSEDE_CANDIDATES,
        after: None,
        max_bytes: None,
    };
    Ok(store
        .list_memories(&query, now)
        .await?
        .into_iter()
        .filter(|old| {
            old.owned_by(&memory.scope, memory.level)
                && old.content != memory.content
                && same_subject(&memory.content, &old.content)
        })
        .map(|old| Contradiction {
            id: old.id,
            reason: SUPERSEDED.to_owned(),
        })
        .collect())
}

/// The change cue of `text`, if it says something changed.
pub fn change_cue(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    lexicon()
        .change_cues
        .iter()
        .find(|cue| lower.contains(*cue))
        .copied()
}

/// The words of `text` that name what it is about, lower-cased, without
/// a plural's s.
fn subject_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .map(|w| w.trim_matches(['\'', '-']).to_lowercase())
        .filter(|w| w.chars().count() > 1 && !lexicon().not_subject.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.chars().count() > 2 && !stem.ends_with('s') => stem.to_owned(),
            _ => w,
        })
        .collect()
}

/// Whether a new memory `new` is about the same subject as the stored
/// `old`: at least two subject words in common, or one when either names
/// only one or two.
pub fn same_subject(new: &str, old: &str) -> bool {
    let (new, old) = (subject_words(new), subject_words(old));
    let shared = new.intersection(&old).count();
    shared >= 2 || (shared == 1 && new.len().min(old.len()) <= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_preference_is_about_the_same_subject_as_the_old_one() {
        let new = "I no longer prefer dark mode; switch me back to light mode.";
        assert_eq!(change_cue(new), Some("no longer"));
        assert!(same_subject(new, "I prefer dark mode in every editor."));
        assert!(!same_subject(
            new,
            "I prefer concise answers with code first."
        ));
        let decision = "We switched the event bus to Kafka instead of RabbitMQ.";
        assert!(same_subject(
            decision,
            "The team chose RabbitMQ for the event bus."
        ));
        assert!(!same_subject(decision, "We decided to deploy on Tuesdays."));
        assert_eq!(
            change_cue("Please use tabs for indentation in this repo."),
            None
        );
    }
}
