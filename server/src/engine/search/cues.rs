//! What a query says beyond its words, lifting the candidates that match
//! it: each lift adds to a candidate's relevance, and every candidate's is
//! scaled back into 0..1 by the largest lift given, `(r + lift) / (1 +
//! largest)` — so a lifted memory can pass one that matched the words
//! better:
//!
//! * the time it speaks of ("on October 13, 2023", "in May 2023", "last
//!   week"): memories of what happened then;
//! * the entities it names, by any of their names (an alias finds the
//!   memories naming the entity by another), by the `entity` weight;
//! * who said something: a memory written as "Name: …" whose speaker the
//!   query names ("What did Melanie paint?");
//! * a question asking when: memories that say when (a time expression).
//!
//! The last two read the text of the best candidates, which the reply
//! reads anyway. The lifts and how they were chosen are in
//! docs/semantic-search-measurements.md.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Ranked, SearchRequest, read_missing, sort};
use crate::domain::{Memory, Micros, dates};
use crate::engine::{entities, unit};
use crate::error::Result;
use crate::store::Store;

/// The lift of a memory of what happened in a time the query names.
const TIME_LIFT: f64 = 0.5;
/// The lift of a memory said by someone the query names.
const SPEAKER_LIFT: f64 = 0.4;
/// The lift, for a query asking when, of a memory that says when.
const WHEN_LIFT: f64 = 0.2;
/// How many of the best candidates are read for the lifts by their text,
/// per requested hit (at least [`MIN_READ`]).
const READ_PER_HIT: usize = 2;
const MIN_READ: usize = 30;
/// The most words of a speaker's name ("Dr. Ana Lopez:").
const MAX_SPEAKER_WORDS: usize = 3;

/// Lifts the candidates `ranked` that happened in a time the query names
/// and, by the `entity` weight, those naming the known entities it names
/// (see [`entities::named_in`]).
pub async fn lift(
    store: &dyn Store,
    request: &SearchRequest,
    ranked: &mut [Ranked],
    now: Micros,
) -> Result<()> {
    if ranked.is_empty() {
        return Ok(());
    }
    let mut lifts: HashMap<i64, f64> = HashMap::new();
    let spans = dates::find(&request.query, now);
    if !spans.is_empty() {
        for r in ranked.iter() {
            if spans.iter().any(|s| s.contains(r.occurred_at)) {
                *lifts.entry(r.seq).or_default() += TIME_LIFT;
            }
        }
    }
    let entity = request.weights.entity;
    if entity > 0.0 {
        let ids = entities::named_in(store, &request.scope.namespace, &request.query).await?;
        if !ids.is_empty() {
            let wanted = ids.len() as f64;
            let seqs: Vec<i64> = ranked.iter().map(|r| r.seq).collect();
            let call = Arc::new((ids, seqs));
            let named = unit::read(store, move |tx| {
                let call = call.clone();
                Box::pin(async move { tx.mentions_among(&call.0, &call.1).await })
            })
            .await?;
            for (seq, count) in named {
                *lifts.entry(seq).or_default() += entity * (count as f64 / wanted).min(1.0);
            }
        }
    }
    apply(ranked, &lifts, request);
    Ok(())
}

/// Reads the best candidates (into `memories`, which the reply reads
/// from) and lifts those said by someone the query names and, when the
/// query asks when, those that say when.
pub async fn lift_by_text(
    store: &dyn Store,
    request: &SearchRequest,
    ranked: &mut [Ranked],
    memories: &mut HashMap<i64, Memory>,
    now: Micros,
) -> Result<()> {
    let words = words(&request.query);
    let when = asks_when(&request.query);
    sort(ranked);
    let depth = (request.limit * READ_PER_HIT)
        .max(MIN_READ)
        .min(ranked.len());
    read_missing(
        store,
        request,
        ranked[..depth].iter().map(|r| r.seq),
        memories,
        now,
    )
    .await?;
    let mut lifts: HashMap<i64, f64> = HashMap::new();
    for r in &ranked[..depth] {
        let Some(memory) = memories.get(&r.seq) else {
            continue;
        };
        let mut lift = 0.0;
        if speaker(&memory.content).is_some_and(|name| name.iter().all(|w| words.contains(w))) {
            lift += SPEAKER_LIFT;
        }
        if when && !dates::find(&memory.content, memory.occurred_at).is_empty() {
            lift += WHEN_LIFT;
        }
        if lift > 0.0 {
            lifts.insert(r.seq, lift);
        }
    }
    apply(ranked, &lifts, request);
    Ok(())
}

/// Gives each of `ranked` its lift, scaling every relevance back into
/// 0..1.
fn apply(ranked: &mut [Ranked], lifts: &HashMap<i64, f64>, request: &SearchRequest) {
    let most = lifts.values().copied().fold(0.0, f64::max);
    if most <= 0.0 {
        return;
    }
    for r in ranked.iter_mut() {
        let lift = lifts.get(&r.seq).copied().unwrap_or(0.0);
        let relevance = (r.relevance + lift) / (1.0 + most);
        *r = Ranked {
            semantic: r.semantic,
            context: r.context,
            ..Ranked::with_relevance(r, relevance, &request.weights)
        };
    }
}

/// The words of `text` in lower case.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `query` asks when something happened.
fn asks_when(query: &str) -> bool {
    let query = query.trim_start().to_lowercase();
    [
        "when ",
        "what date",
        "what day",
        "what month",
        "what year",
        "what time",
        "how long ago",
    ]
    .iter()
    .any(|start| query.starts_with(start))
}

/// Who said a memory written as "Name: what they said": the words of the
/// name, in lower case (one to three capitalised words before a colon).
fn speaker(content: &str) -> Option<Vec<String>> {
    let (name, _) = content.split_once(':')?;
    let name: Vec<&str> = name.split_whitespace().collect();
    let capitalised = |w: &&str| w.chars().next().is_some_and(char::is_uppercase);
    if name.is_empty() || name.len() > MAX_SPEAKER_WORDS || !name.iter().all(capitalised) {
        return None;
    }
    Some(words(&name.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speaker_is_a_capitalised_name_before_a_colon() {
        assert_eq!(
            speaker("Melanie: I painted a lake"),
            Some(vec!["melanie".to_owned()])
        );
        assert_eq!(
            speaker("Dr. Ana: rest for a week"),
            Some(vec!["dr".to_owned(), "ana".to_owned()])
        );
        assert_eq!(speaker("note: the deploy is at 5"), None);
        assert_eq!(speaker("The time was 10:30 when we met"), None);
        assert_eq!(speaker("No colon at all"), None);
    }

    #[test]
    fn questions_asking_when_are_told_apart() {
        assert!(asks_when("When did Caroline go to the support group?"));
        assert!(asks_when("  what year did we move to Postgres"));
        assert!(!asks_when("What did Melanie paint?"));
        assert!(!asks_when("whence the config"));
    }
}
