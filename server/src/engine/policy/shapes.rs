//! The shapes of a sentence or an exchange that say what it is where no cue
//! phrase does: a standing instruction, a declarative statement, a failure
//! followed by advice, an instruction the assistant agrees to follow.

use super::lexicon::lexicon;
use super::transcript::{Sentence, Speaker};

/// The imperative a user's sentence gives, if it is a standing instruction:
/// it starts with one of the lexicon's imperatives, or with another verb after a
/// lead-in that says when it applies ("For the weekly digest, sort …",
/// "Going forward, draft …"), or ends with "please".
pub(super) fn imperative(lower: &str) -> Option<&'static str> {
    let lexicon = lexicon();
    if let Some(cue) = lexicon
        .imperatives
        .iter()
        .copied()
        .find(|i| lower.starts_with(i))
    {
        return Some(cue);
    }
    // "Plot everything in blue and always label the axes": an instruction
    // that says it always applies.
    const STANDING: &[&str] = &[
        " always ",
        " never ",
        "every time",
        "by default",
        "going forward",
        "from now on",
        " for all ",
        " for every ",
        " for any ",
    ];
    if let Some(verb) = lexicon
        .instruction_verbs
        .iter()
        .copied()
        .find(|v| lower.starts_with(v))
        && STANDING.iter().any(|s| lower.contains(s))
    {
        return Some(verb);
    }
    // "In support replies never promise a date": always or never said of
    // no one in particular (not "I always forget …").
    const SUBJECTS: &[&str] = &[
        "i", "you", "we", "they", "he", "she", "it", "it's", "i'm", "that", "who", "which", "this",
        "almost", "nearly", "have", "has", "had", "was", "were", "is", "are",
    ];
    let words: Vec<&str> = lower.split_whitespace().collect();
    // "aisle seats always, and no red-eyes" counts; punctuation is not a word.
    let bare = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned();
    if let Some(at) = words
        .iter()
        .position(|w| bare(w) == "always" || bare(w) == "never")
        && at > 0
        && at + 1 < words.len()
        && !SUBJECTS
            .contains(&words[at - 1].trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
    {
        return Some(if bare(words[at]) == "always" {
            "always"
        } else {
            "never"
        });
    }
    const LEAD_INS: &[&str] = &[
        "for ",
        "in ",
        "when ",
        "whenever ",
        "going forward",
        "from now on",
        "by default",
        "on ",
        "if ",
        "after ",
        "before ",
    ];
    if LEAD_INS.iter().any(|l| lower.starts_with(l))
        && let Some((_, rest)) = lower.split_once(", ")
        && let Some(verb) = lexicon
            .instruction_verbs
            .iter()
            .chain(&lexicon.imperatives)
            .copied()
            .find(|v| rest.starts_with(v))
    {
        return Some(verb);
    }
    let polite =
        lower.contains(", please") || lower.ends_with("please") || lower.ends_with("please.");
    polite.then_some("please")
}

/// The cue of a sentence that is only a declarative statement.
pub(super) const STATEMENT_CUE: &str = "a statement";

/// A declarative statement about something lasting: "X is/are/uses/… Y",
/// not a pleasantry ("that is great") or a bare acknowledgement.
pub(super) fn is_statement(lower: &str) -> bool {
    const VERBS: &[&str] = &[
        " is ",
        " are ",
        " uses ",
        " runs ",
        " starts ",
        " needs ",
        " has ",
        " owns ",
        " pulls ",
        " means ",
        " goes ",
        " go through ",
        " requires ",
        " require ",
        " contains ",
        " holds ",
        " supports ",
        " handles ",
        " takes ",
        " gets ",
        " have ",
        " costs ",
        " expires ",
        " ends ",
        " talks ",
        " calls ",
        " sends ",
        " reads ",
        " writes ",
        " works ",
        " belongs ",
        " includes ",
        " covers ",
        " expects ",
        " accepts ",
        " happen ",
        " happens ",
        // German, French, Spanish.
        " ist ",
        " sind ",
        " hat ",
        " est ",
        " sont ",
        " es ",
        " son ",
        " está ",
        " están ",
        " tiene ",
    ];
    const VAGUE_SUBJECTS: &[&str] = &[
        "this ",
        "that ",
        "it ",
        "there ",
        "here ",
        "what ",
        "which ",
        "who ",
        "everything ",
        "das ",
        "es ",
        "ce ",
        "c'est ",
        "ça ",
        "eso ",
        "esto ",
    ];
    let words = lower.split_whitespace().count();
    words >= 5
        && VERBS.iter().any(|v| lower.contains(v))
        && !VAGUE_SUBJECTS.iter().any(|s| lower.starts_with(s))
}

/// The cue of an exchange where something went wrong and advice follows.
pub(super) const LESSON_SHAPE_CUE: &str = "a failure and what to do about it";
/// The cue of a user's instruction the assistant agrees to follow from now on.
pub(super) const ACKNOWLEDGED_CUE: &str = "an instruction to follow from now on";

/// The first sentence that says something went wrong, when a sentence from
/// there on says what to do about it ("the import failed because the CSV
/// came with a BOM. Strip the BOM before parsing.").
pub(super) fn lesson_shape(sentences: &[Sentence]) -> Option<usize> {
    const WRONG: &[&str] = &[
        "broke",
        "broken",
        "failed",
        "failing",
        "fails",
        "crashed",
        "never fired",
        "didn't work",
        "did not work",
        "overwrote",
        "went wrong",
        "regression",
        "timed out",
        "out of memory",
        " oom",
        "wasn't the",
        "was not the",
        "locked",
        "corrupted",
        "leaked",
    ];
    const ADVICE: &[&str] = &[
        "from now on",
        "going forward",
        "next time",
        "always ",
        "never ",
        "remember that",
        "make sure",
        "before ",
        " first",
        "should ",
        "instead",
    ];
    let lower: Vec<String> = sentences.iter().map(|s| s.text.to_lowercase()).collect();
    let usable = |i: usize| !sentences[i].hedged && !lower[i].ends_with('?');
    let failed =
        (0..sentences.len()).find(|&i| usable(i) && WRONG.iter().any(|w| lower[i].contains(w)))?;
    (failed..sentences.len())
        .any(|i| {
            usable(i)
                && (ADVICE.iter().any(|a| lower[i].contains(a))
                    || (i > failed && imperative(&lower[i]).is_some()))
        })
        .then_some(failed)
}

/// The first sentence of the user's instruction that the assistant then
/// agrees to follow from now on ("Understood — all future invoices will
/// look like that.").
pub(super) fn acknowledged_instruction(sentences: &[Sentence]) -> Option<usize> {
    const AGREES: &[&str] = &[
        "understood",
        "noted",
        "got it",
        "will do",
        "i'll",
        "i will",
        "sure",
        "ok",
        "okay",
        "switching",
        "setting",
    ];
    const FROM_NOW_ON: &[&str] = &[
        "from now on",
        "going forward",
        "future",
        "every ",
        "always",
        "default",
        "each time",
        "that format",
        "that way",
        "from here on",
        "next time",
        "instead",
    ];
    let agreed = sentences.iter().position(|s| {
        let lower = s.text.to_lowercase();
        s.speaker == Speaker::Assistant
            && AGREES
                .iter()
                .any(|a| lower.starts_with(a) || lower.contains(&format!(" {a}")))
            && FROM_NOW_ON.iter().any(|f| lower.contains(f))
    })?;
    sentences[..agreed]
        .iter()
        .position(|s| s.speaker == Speaker::User && !s.hedged && !s.text.ends_with('?'))
}
