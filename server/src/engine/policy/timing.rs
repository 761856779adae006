//! What a sentence says about time: something done at a given time (an
//! event), a to-do for later, work going on as it is said, or something
//! about the next few minutes (nothing to keep).

use super::lexicon::lexicon;
use crate::domain::dates::MONTHS;
/// The months' short names.
const SHORT_MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
];

/// The cue of a to-do for a later time.
pub(super) const FOR_LATER_CUE: &str = "a to-do for later";

/// A to-do for a later time: an instruction (not a standing one) tied to a
/// time ahead ("ask the landlord about the deposit in March", "before the
/// next review, pull the numbers").
pub(super) fn for_later(lower: &str) -> bool {
    /// To-do verbs beside the lexicon's instruction verbs.
    const TODO_VERBS: &[&str] = &[
        "buy ",
        "clean up",
        "fix ",
        "follow up",
        "look at ",
        "prepare ",
        "renew ",
        "review ",
        "talk to ",
        "tell ",
        "text ",
        "update ",
    ];
    const LATER: &[&str] = &[
        "next week",
        "next month",
        "next quarter",
        "next year",
        "next time",
        "the next ",
        "tomorrow",
        "later",
        "someday",
        "when he's back",
        "when she's back",
        "when they're back",
        "before signing",
        "before we ",
        "before the ",
        "after the ",
        "at the ",
        "by the end of",
    ];
    let clause = lower.split_once(", ").map_or(lower, |(lead, rest)| {
        if LATER.iter().any(|l| lead.contains(l)) {
            rest
        } else {
            lower
        }
    });
    let instruction = lexicon()
        .instruction_verbs
        .iter()
        .chain(TODO_VERBS)
        .any(|v| lower.starts_with(v) || clause.starts_with(v));
    // "May" is as often the verb ("we may need") as the month.
    let in_a_month = MONTHS
        .iter()
        .filter(|m| **m != "may")
        .any(|m| lower.contains(m));
    instruction && (LATER.iter().any(|l| lower.contains(l)) || in_a_month)
}

/// The cue of a sentence that says something happened at a given time.
pub(super) const EVENT_CUE: &str = "something done at a given time";

/// Whether a sentence says something was done at a given time: a verb in
/// the past tense and a time ("on Monday", "this afternoon", "at 16:05 UTC",
/// "2024-05-02", "on 3 June").
pub(super) fn happened_at_a_time(lower: &str) -> bool {
    const IRREGULAR_PAST: &[&str] = &[
        "went", "got", "took", "left", "began", "won", "lost", "made", "came", "became", "broke",
        "ran", "sold", "bought", "paid", "met", "quit", "fell", "grew", "wrote", "gave", "flew",
        "drove", "spent", "sent", "built", "held", "brought", "found", "hit", "shut", "rode",
        "struck", "swapped", "upgraded",
    ];
    /// -ed words that are rarely a verb done at a time.
    const NOT_PAST: &[&str] = &[
        "need",
        "feed",
        "speed",
        "seed",
        "bed",
        "red",
        "shed",
        "indeed",
        "based",
        "used",
        "interested",
        "tired",
        "bored",
        "excited",
        "supposed",
        "scheduled",
        "planned",
        "expected",
        "required",
        "sacred",
        "wicked",
        "naked",
        "beloved",
        "aged",
        "skilled",
        "talented",
        "detailed",
        "advanced",
        "limited",
        "related",
        "allowed",
    ];
    const TIMES: &[&str] = &[
        "today",
        "yesterday",
        "this morning",
        "this afternoon",
        "this evening",
        "this week",
        "last week",
        "last night",
        "last month",
        "last year",
        "earlier today",
        "on monday",
        "on tuesday",
        "on wednesday",
        "on thursday",
        "on friday",
        "on saturday",
        "on sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        " utc",
        " cet",
    ];
    let lower = lower.replace("got it", "");
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && !matches!(c, ':' | '-' | '\'' | '’'))
        .filter(|w| !w.is_empty())
        .collect();
    // A past participle after "is" or "are" is a state ("is refreshed
    // nightly", "mornings are sacred"), not something done.
    let past = words.iter().enumerate().any(|(at, w)| {
        let w = w.trim_matches(['-', ':']);
        let state = at > 0
            && matches!(
                words[at - 1],
                "is" | "are" | "am" | "be" | "isn't" | "aren't"
            );
        !state
            && (IRREGULAR_PAST.contains(&w)
                || (w.len() > 4
                    && w.ends_with("ed")
                    && w.chars().all(|c| c.is_ascii_alphabetic())
                    && !NOT_PAST.contains(&w)))
    });
    // What happens nightly or every week is a schedule.
    const HABITUAL: &[&str] = &[
        "nightly", "daily", "weekly", "monthly", "hourly", "every", "each",
    ];
    if !past || words.iter().any(|w| HABITUAL.contains(w)) {
        return false;
    }
    // What is to be done by a time is a to-do, not an event ("follow up
    // with their legal team by Friday, we can't send data until it's
    // signed").
    const AHEAD: &[&str] = &["remind", "reminder", "follow-up"];
    let deadline = |pair: &[&str]| {
        (pair[0] == "by" || pair[0] == "before")
            && (TIMES.contains(&pair[1])
                || MONTHS.contains(&pair[1])
                || matches!(pair[1], "end" | "eod" | "tomorrow" | "the"))
    };
    if words.iter().any(|w| AHEAD.contains(w))
        || words
            .windows(2)
            .any(|pair| deadline(pair) || pair == ["follow", "up"])
    {
        return false;
    }
    let clock = |w: &str| {
        let mut parts = w.split(':');
        matches!((parts.next(), parts.next(), parts.next()),
            (Some(h), Some(m), None) if (1..=2).contains(&h.len()) && m.len() == 2
                && h.chars().chain(m.chars()).all(|c| c.is_ascii_digit()))
    };
    let date = |w: &str| {
        let parts: Vec<&str> = w.split('-').collect();
        parts.len() == 3
            && parts[0].len() == 4
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    };
    let day_of_month = |pair: &[&str]| {
        let day = |w: &str| w.len() <= 2 && w.chars().all(|c| c.is_ascii_digit());
        let month = |w: &str| MONTHS.contains(&w) || SHORT_MONTHS.contains(&w);
        (day(pair[0]) && month(pair[1])) || (month(pair[0]) && day(pair[1]))
    };
    TIMES.iter().any(|t| lower.contains(t))
        || words.iter().any(|w| clock(w) || date(w))
        || words.windows(2).any(day_of_month)
}

/// "Running the migration now.": work going on as it is said (not "Priya
/// is our DBA now.").
pub(super) fn in_progress_now(lower: &str) -> bool {
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    words.last() == Some(&"now")
        && words.iter().any(|w| {
            w.len() > 4
                && w.ends_with("ing")
                && !matches!(
                    *w,
                    "thing" | "nothing" | "everything" | "something" | "morning" | "evening"
                )
        })
}

/// Whether a sentence is about the next few minutes or hours ("remind me
/// in 10 minutes", "for lunch", "tonight"): nothing to keep.
pub(super) fn is_ephemeral(lower: &str) -> bool {
    let words: Vec<&str> = lower.split_whitespace().collect();
    let within_minutes = words.windows(3).any(|w| {
        w[0] == "in" && w[2].trim_end_matches(['.', ',', '!']).starts_with("min")
            || w[1] == "few" && w[2].starts_with("min")
    });
    const SOON: &[&str] = &[
        "between the two",
        "the first one",
        "the second one",
        "this one",
        "that one",
        "the other one",
        "for lunch",
        "for dinner",
        "tonight",
        "this slide",
    ];
    (within_minutes || SOON.iter().any(|s| lower.contains(s))) && !lower.contains("every ")
}
