//! The outcome-learning rules of DESIGN §5 as plain functions: task-type
//! inference, strategy and error similarity, and agent learning scopes.

use std::collections::HashSet;

use crate::engine::search::STOP_WORDS;

/// Heuristics need this many similar outcomes unless the agent's scope says otherwise.
pub const DEFAULT_MIN_OCCURRENCES: i64 = 3;
/// A heuristic is created only above this success rate.
pub const MIN_SUCCESS_RATE: f64 = 0.5;
/// An anti-pattern needs this many similar failures.
pub const MIN_FAILURES: i64 = 2;
/// How many of an agent's latest outcomes for a task type are weighed.
pub const RECENT_OUTCOMES: i64 = 200;
/// Two strategies are similar when they share at least this many words
/// (or half the words of the shorter one, whichever is less).
const MAX_SHARED_WORDS_NEEDED: usize = 3;

/// Task types inferred from task words, first match wins: the specific ones
/// before the general "testing".
const INFERENCE: &[(&[&str], &str)] = &[
    (&["api", "endpoint"], "api_testing"),
    (&["form", "input"], "form_testing"),
    (&["database", "query"], "database_validation"),
    (&["test", "validat"], "testing"),
];
/// The task type when no rule matches.
pub const GENERAL: &str = "general";

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The task type of a task described as `task` (DESIGN §5). A word counts
/// when it is a cue or, for "test" and "validat", starts with one ("tests",
/// "validation").
pub fn infer_task_type(task: &str) -> &'static str {
    let words: Vec<String> = words(task).collect();
    for (cues, task_type) in INFERENCE {
        let hit = words.iter().any(|w| {
            cues.iter().any(|cue| match *cue {
                "test" | "validat" => w.starts_with(cue),
                _ => w == cue,
            })
        });
        if hit {
            return task_type;
        }
    }
    GENERAL
}

fn content_words(text: &str) -> HashSet<String> {
    words(text)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Whether two strategies are worded alike: they share at least
/// min(3, ⌈n/2⌉) content words, n being the shorter one's word count.
/// The one place strategy similarity is decided (an embedding option can
/// replace it later).
pub fn similar_strategies(a: &str, b: &str) -> bool {
    let (a, b) = (content_words(a), content_words(b));
    let n = a.len().min(b.len());
    if n == 0 {
        return false;
    }
    let needed = MAX_SHARED_WORDS_NEEDED.min(n.div_ceil(2));
    a.intersection(&b).count() >= needed
}

/// Whether two errors are the same error: one contains the other, ignoring case.
pub fn similar_errors(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim().to_lowercase(), b.trim().to_lowercase());
    !a.is_empty() && !b.is_empty() && (a.contains(&b) || b.contains(&a))
}

/// Whether an agent with these lists may learn from a task: nothing in
/// `cannot_learn` matches, and `can_learn` is empty or something in it
/// matches. An entry matches the task type, or a whole word of the task,
/// ignoring case.
pub fn may_learn(
    can_learn: &[String],
    cannot_learn: &[String],
    task_type: &str,
    task: &str,
) -> bool {
    let words: HashSet<String> = words(task).collect();
    let matches = |entry: &String| {
        let entry = entry.trim().to_lowercase();
        entry == task_type || words.contains(&entry)
    };
    !cannot_learn.iter().any(matches) && (can_learn.is_empty() || can_learn.iter().any(matches))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_types_are_inferred_from_task_words() {
        assert_eq!(infer_task_type("Test the login page"), "testing");
        assert_eq!(infer_task_type("Validation of totals"), "testing");
        assert_eq!(infer_task_type("Call the orders API"), "api_testing");
        assert_eq!(infer_task_type("Fill in the signup form"), "form_testing");
        assert_eq!(
            infer_task_type("Check the database migration"),
            "database_validation"
        );
        assert_eq!(
            infer_task_type("Test the /users endpoint"),
            "api_testing",
            "specific wins"
        );
        assert_eq!(infer_task_type("Write release notes"), "general");
        assert_eq!(
            infer_task_type("Fix the formatter"),
            "general",
            "whole words only"
        );
    }

    #[test]
    fn reworded_strategies_are_similar() {
        assert!(similar_strategies(
            "retry with exponential backoff",
            "use exponential backoff retry"
        ));
        assert!(!similar_strategies(
            "retry with exponential backoff",
            "cache responses in redis"
        ));
        assert!(
            !similar_strategies("deploy via ci", "deploy manually by hand"),
            "one shared word of three"
        );
        assert!(similar_strategies("bisect", "Bisect!"));
        assert!(!similar_strategies("", "anything"));
    }

    #[test]
    fn errors_match_by_containment_ignoring_case() {
        assert!(similar_errors(
            "Connection reset by peer",
            "connection reset by peer while uploading"
        ));
        assert!(!similar_errors("timeout", "permission denied"));
        assert!(!similar_errors("", "timeout"));
    }

    #[test]
    fn cannot_learn_wins_and_can_learn_narrows() {
        let list = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(may_learn(&[], &[], "general", "anything"));
        assert!(!may_learn(
            &[],
            &list(&["database_validation"]),
            "database_validation",
            "Check it"
        ));
        assert!(!may_learn(
            &[],
            &list(&["Billing"]),
            "general",
            "fix billing totals"
        ));
        assert!(may_learn(&list(&["testing"]), &[], "testing", "Test login"));
        assert!(!may_learn(
            &list(&["testing"]),
            &[],
            "api_testing",
            "Call the API"
        ));
        assert!(!may_learn(
            &list(&["testing"]),
            &list(&["testing"]),
            "testing",
            "Test login"
        ));
    }
}
