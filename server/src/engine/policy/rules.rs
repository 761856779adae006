//! The rules classifier of DESIGN §6: deterministic, no network. It reads a
//! transcript sentence by sentence, ignores sentences that are questions,
//! hedged, negated or transient, and looks for the cue phrases of the
//! lexicon and the shapes of durable knowledge. The strongest cue found
//! decides.

use std::collections::BTreeMap;

use super::lexicon::{Kind, lexicon};
use super::shapes::{self, ACKNOWLEDGED_CUE, LESSON_SHAPE_CUE, STATEMENT_CUE};
use super::timing::{self, EVENT_CUE, FOR_LATER_CUE};
use super::transcript::{Sentence, Speaker};
use super::{Decision, DecisionSource, MAX_SUMMARY_CHARS, allowed_level, nothing_stored};
use crate::domain::{MemoryLevel, MemoryType, Scope};

/// How strongly a cue says what a sentence is: a stronger cue decides over
/// a weaker one of any kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Strength {
    /// A plain declarative statement (a fact).
    Statement,
    /// A user's imperative (a preference).
    Imperative,
    /// A cue phrase of a kind, or the shape of a sentence or an exchange.
    Phrase,
    /// An explicit marker of a kind.
    Marker,
}

/// What a cue says a sentence is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Cue {
    pub strength: Strength,
    pub memory_type: MemoryType,
    /// The phrase found (a `^` anchor and all), or the shape's name.
    pub phrase: &'static str,
}

impl Cue {
    fn new(strength: Strength, memory_type: MemoryType, phrase: &'static str) -> Self {
        Cue {
            strength,
            memory_type,
            phrase,
        }
    }

    /// Whether it decides over `other`: it is stronger, or as strong and of
    /// an earlier kind.
    fn beats(&self, other: &Cue) -> bool {
        let rank = |cue: &Cue| lexicon().rank(cue.memory_type);
        self.strength > other.strength
            || (self.strength == other.strength && rank(self) < rank(other))
    }

    /// The phrase without its `^` anchor.
    fn text(&self) -> &'static str {
        self.phrase.trim_start_matches('^').trim()
    }
}

/// The cue that decides a transcript, and the index of its sentence.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deciding {
    pub cue: Cue,
    pub sentence: usize,
}

/// A cue phrase found at a word boundary; a cue that begins with `^` only
/// at the start of the sentence ("note:" labels a note, "support macro
/// note:" the source of a fact).
fn find_cue(sentence: &str, cues: &[&'static str]) -> Option<&'static str> {
    cues.iter()
        .copied()
        .find(|cue| match cue.strip_prefix('^') {
            Some(start) => sentence.starts_with(start),
            None => sentence.match_indices(cue).any(|(at, _)| {
                let before = sentence[..at].chars().next_back();
                before.is_none_or(|c| !c.is_alphanumeric())
            }),
        })
}

/// The strongest cue of a sentence. A question or a hedge is knowledge only
/// when it is marked as a note ("open question: …", "… for later").
pub(super) fn strongest_cue(sentence: &Sentence) -> Option<Cue> {
    let lexicon = lexicon();
    let lower = sentence.text.to_lowercase();
    // "thanks, …", not "Thanksgiving is …".
    let courtesy = lexicon.thanks.iter().any(|t| {
        lower.strip_prefix(t).is_some_and(|rest| {
            t.ends_with(' ') || rest.chars().next().is_none_or(|c| !c.is_alphanumeric())
        })
    });
    if sentence.hedged || lower.ends_with('?') || courtesy {
        let note = lexicon.kind(MemoryType::Note);
        return find_cue(&lower, &note.markers)
            .map(|phrase| Cue::new(Strength::Marker, MemoryType::Note, phrase));
    }
    if timing::is_ephemeral(&lower) {
        return None;
    }
    let transient =
        lexicon.transient.iter().any(|t| lower.contains(t)) || timing::in_progress_now(&lower);
    let weak = |kind: &Kind| {
        matches!(
            kind.memory_type,
            MemoryType::Event | MemoryType::Note | MemoryType::Fact
        )
    };
    // An assistant narrating its own work ("I decided to read the file in
    // chunks") decides nothing worth keeping.
    let narrated = |kind: &Kind, cue: &str| {
        kind.memory_type == MemoryType::Decision
            && sentence.speaker == Speaker::Assistant
            && cue.starts_with("i")
    };
    let mut best: Option<Cue> = None;
    for kind in &lexicon.kinds {
        if transient && weak(kind) {
            continue;
        }
        for (strength, cues) in [
            (Strength::Marker, &kind.markers),
            (Strength::Phrase, &kind.cues),
        ] {
            if let Some(phrase) = find_cue(&lower, cues)
                && !narrated(kind, phrase)
                && best.is_none_or(|b| strength > b.strength)
            {
                best = Some(Cue::new(strength, kind.memory_type, phrase));
            }
        }
        if kind.memory_type == MemoryType::Event
            && !transient
            && best.is_none_or(|b| b.strength < Strength::Phrase)
            && (sentence.speaker == Speaker::Assistant || shapes::imperative(&lower).is_none())
            && timing::happened_at_a_time(&lower)
        {
            best = Some(Cue::new(Strength::Phrase, MemoryType::Event, EVENT_CUE));
        }
    }
    if best.is_some() {
        return best;
    }
    if sentence.speaker != Speaker::Assistant {
        // After a label such as "Contract review: …".
        let body = match lower.split_once(": ") {
            Some((label, body)) if label.split_whitespace().count() <= 3 => body,
            _ => &lower,
        };
        if !transient && (timing::for_later(&lower) || timing::for_later(body)) {
            return Some(Cue::new(Strength::Phrase, MemoryType::Note, FOR_LATER_CUE));
        }
        if let Some(phrase) = shapes::imperative(&lower).or_else(|| shapes::imperative(body)) {
            return Some(Cue::new(
                Strength::Imperative,
                MemoryType::Preference,
                phrase,
            ));
        }
        if !transient && shapes::is_statement(&lower) {
            return Some(Cue::new(
                Strength::Statement,
                MemoryType::Fact,
                STATEMENT_CUE,
            ));
        }
    }
    None
}

/// The strongest cue of `sentences` and its sentence: stronger cues win;
/// among equals, the earlier kind.
pub(super) fn deciding_cue(sentences: &[Sentence]) -> Option<Deciding> {
    let mut best: Option<Deciding> = None;
    // Where a user takes back what was said ("forget it, that was the old
    // invite"), only what follows counts.
    let from = sentences
        .iter()
        .rposition(retracts)
        .map_or(0, |retraction| retraction + 1);
    for (index, sentence) in sentences.iter().enumerate().skip(from) {
        if let Some(cue) = strongest_cue(sentence)
            && best.is_none_or(|b| cue.beats(&b.cue))
        {
            best = Some(Deciding {
                cue,
                sentence: index,
            });
        }
    }
    // Below an explicit marker, the shape of the whole exchange decides:
    // something went wrong and advice follows (a lesson), or the assistant
    // agrees to do something from now on (the user's preference).
    let below = |strength| best.is_none_or(|b| b.cue.strength < strength);
    if below(Strength::Marker) {
        if let Some(sentence) = shapes::lesson_shape(&sentences[from..]) {
            let cue = Cue::new(Strength::Phrase, MemoryType::Lesson, LESSON_SHAPE_CUE);
            let sentence = from + sentence;
            return Some(Deciding { cue, sentence });
        }
        if below(Strength::Phrase)
            && let Some(sentence) = shapes::acknowledged_instruction(&sentences[from..])
        {
            let cue = Cue::new(Strength::Phrase, MemoryType::Preference, ACKNOWLEDGED_CUE);
            let sentence = from + sentence;
            return Some(Deciding { cue, sentence });
        }
    }
    best
}

/// Whether a user's (not the assistant's) sentence takes back what was
/// said before it: a retraction as a whole phrase ("forget it", not
/// "forget it's due"), not negated ("don't forget it").
fn retracts(sentence: &Sentence) -> bool {
    const NEGATIONS: &[&str] = &["don't ", "dont ", "do not ", "never ", "not "];
    let lower = sentence.text.to_lowercase();
    sentence.speaker != Speaker::Assistant
        && lexicon().retractions.iter().any(|phrase| {
            lower.match_indices(phrase).any(|(at, _)| {
                let before = &lower[..at];
                let after = lower[at + phrase.len()..].chars().next();
                before
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_alphanumeric())
                    && after.is_none_or(|c| !c.is_alphanumeric() && c != '\'' && c != '’')
                    && !NEGATIONS.iter().any(|n| before.ends_with(n))
            })
        })
}

/// The rules' decision: the kind of the deciding cue, or nothing.
pub(super) fn ruled(
    sentences: &[Sentence],
    deciding: Option<Deciding>,
    scope: &Scope,
    task_id: &str,
) -> Decision {
    let mut metadata = rules_metadata(task_id);
    let Some(Deciding { cue, sentence }) = deciding else {
        return not_worth_keeping(
            scope,
            metadata,
            "no cue of durable knowledge: chatter, tool output, a question, a hedge or work in progress"
                .into(),
        );
    };
    let kind = lexicon().kind(cue.memory_type);
    metadata.insert("cue".to_owned(), cue.text().to_owned());
    let deciding = &sentences[sentence].text;
    Decision {
        should_store: true,
        memory_type: kind.memory_type,
        summary: summary(&sentences[sentence..]),
        importance: kind.importance,
        level: level(kind.memory_type, &deciding.to_lowercase(), scope),
        metadata,
        source: DecisionSource::Rules,
        reason: format!(
            "matched {} cue '{}'",
            kind.memory_type.label().to_lowercase(),
            cue.text()
        ),
    }
}

/// The metadata every rules decision carries.
pub(super) fn rules_metadata(task_id: &str) -> BTreeMap<String, String> {
    let mut metadata = BTreeMap::new();
    if !task_id.is_empty() {
        metadata.insert("task_id".to_owned(), task_id.to_owned());
    }
    metadata.insert("classifier".to_owned(), "rules".to_owned());
    metadata
}

/// The rules' decision to store nothing, and why.
pub(super) fn not_worth_keeping(
    scope: &Scope,
    metadata: BTreeMap<String, String>,
    reason: String,
) -> Decision {
    nothing_stored(scope, metadata, DecisionSource::Rules, reason)
}

/// The deciding sentence (first of `sentences`), followed by the next ones
/// while they fit in 300 characters; one sentence alone is cut at a word.
pub(super) fn summary(sentences: &[Sentence]) -> String {
    let mut summary = String::new();
    for sentence in sentences {
        let joined = if summary.is_empty() {
            sentence.text.clone()
        } else {
            format!("{summary} {}", sentence.text)
        };
        if joined.chars().count() > MAX_SUMMARY_CHARS {
            break;
        }
        summary = joined;
    }
    if summary.is_empty() {
        summary = sentences
            .first()
            .map(|s| crate::engine::context::one_line(&s.text, MAX_SUMMARY_CHARS))
            .unwrap_or_default();
    }
    summary
}

/// User preferences and personal facts are GLOBAL; project knowledge is
/// WORKSPACE when the scope has a project; events and notes belong to the
/// conversation when there is one. Never narrower than the scope allows.
pub(super) fn level(memory_type: MemoryType, sentence: &str, scope: &Scope) -> MemoryLevel {
    let about_project = lexicon().project_words.iter().any(|w| sentence.contains(w));
    let wanted = match memory_type {
        MemoryType::Preference => MemoryLevel::Global,
        MemoryType::Fact if !about_project => MemoryLevel::Global,
        MemoryType::Fact | MemoryType::Decision | MemoryType::Lesson => MemoryLevel::Workspace,
        MemoryType::Event | MemoryType::Note => MemoryLevel::Conversation,
    };
    allowed_level(wanted, scope)
}
