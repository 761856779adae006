//! The outcome-learning rules of DESIGN §5 as plain functions: task-type
//! inference, strategy and error similarity, and agent learning scopes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::domain::outcome::AgentScope;
use crate::index::STOP_WORDS;

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
/// With an embedder, two strategies are also similar when the cosine of
/// their vectors is at least this.
pub const SIMILAR_STRATEGY_COSINE: f32 = 0.75;

/// An agent's learning scope: the one set, or the defaults (learn from
/// everything) for an agent that never had one.
pub fn agent_scope_or_default(
    set: Option<AgentScope>,
    namespace: &str,
    agent_id: &str,
) -> AgentScope {
    set.unwrap_or_else(|| AgentScope {
        namespace: namespace.to_owned(),
        agent_id: agent_id.to_owned(),
        can_learn: Vec::new(),
        cannot_learn: Vec::new(),
        min_occurrences: DEFAULT_MIN_OCCURRENCES,
        set: None,
    })
}

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
/// when it is a cue or its plural ("endpoints", "queries") or, for "test" and
/// "validat", starts with one ("tests", "validation").
pub fn infer_task_type(task: &str) -> &'static str {
    let words: Vec<String> = words(task).collect();
    let is_cue = |word: &str, cue: &str| match cue {
        "test" | "validat" => word.starts_with(cue),
        _ => {
            word == cue
                || word.strip_suffix('s') == Some(cue)
                || cue
                    .strip_suffix('y')
                    .is_some_and(|stem| word.strip_suffix("ies") == Some(stem))
        }
    };
    for (cues, task_type) in INFERENCE {
        if words.iter().any(|w| cues.iter().any(|cue| is_cue(w, cue))) {
            return task_type;
        }
    }
    GENERAL
}

/// Words that change a strategy's meaning although they are stop words.
const NEGATIONS: &[&str] = &["no", "not", "nor", "never", "without", "don", "t"];

/// A strategy's content words: stop words dropped, negations kept.
pub fn strategy_words(text: &str) -> HashSet<String> {
    words(text)
        .filter(|w| NEGATIONS.contains(&w.as_str()) || !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// How many content words two strategies share, if that makes them similar:
/// at least min(3, ⌈n/2⌉) shared words, n being the shorter one's word count.
/// A negation on one side only makes them different. Strategies of stop
/// words only are similar when their words are the same.
/// The one place strategy similarity is decided (an embedding option can
/// replace it later).
pub fn strategy_overlap(a: &HashSet<String>, b: &HashSet<String>) -> Option<usize> {
    let n = a.len().min(b.len());
    // "use the cache" and "do not use the cache" are opposite strategies.
    let negated = |words: &HashSet<String>| NEGATIONS.iter().any(|n| words.contains(*n));
    if n == 0 || negated(a) != negated(b) {
        return None;
    }
    let shared = a.intersection(b).count();
    (shared >= MAX_SHARED_WORDS_NEEDED.min(n.div_ceil(2))).then_some(shared)
}

/// Strategy vectors, when an embedder is configured: two strategies are
/// similar when they are worded alike ([`similar_strategies`]) or, when
/// both have a vector, mean alike (cosine ≥ [`SIMILAR_STRATEGY_COSINE`]) —
/// unless one is negated and the other not ("use the cache" and "do not
/// use the cache" embed close but are opposite strategies).
#[derive(Debug, Clone, Default)]
pub struct StrategyVectors(HashMap<String, Arc<[f32]>>);

impl StrategyVectors {
    /// L2-normalised vectors of strategies, by their text.
    pub fn new(vectors: HashMap<String, Arc<[f32]>>) -> Self {
        StrategyVectors(vectors)
    }

    /// Words only.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether strategies `a` and `b` are similar.
    pub fn similar(&self, a: &str, b: &str) -> bool {
        similar_strategies(a, b) || self.mean_alike(a, b)
    }

    fn mean_alike(&self, a: &str, b: &str) -> bool {
        let (Some(va), Some(vb)) = (self.0.get(a), self.0.get(b)) else {
            return false;
        };
        let negated = |text: &str| NEGATIONS.iter().any(|n| strategy_words(text).contains(*n));
        negated(a) == negated(b) && crate::embed::dot(va, vb) >= SIMILAR_STRATEGY_COSINE
    }

    /// Of `candidates` (an id and the wording it is matched by), the one a
    /// strategy belongs to: the most shared words (a match by meaning alone
    /// shares none), then the lowest id.
    pub fn best_match<'a, Id: Ord + Copy>(
        &self,
        strategy: &str,
        candidates: impl IntoIterator<Item = (Id, &'a str)>,
    ) -> Option<Id> {
        let words = strategy_words(strategy);
        candidates
            .into_iter()
            .filter(|(_, key)| self.similar(strategy, key))
            .map(|(id, key)| {
                let shared = if similar_strategies(strategy, key) {
                    strategy_overlap(&words, &strategy_words(key)).unwrap_or(usize::MAX)
                } else {
                    0
                };
                (shared, id)
            })
            .max_by(|(sa, ia), (sb, ib)| sa.cmp(sb).then(ib.cmp(ia)))
            .map(|(_, id)| id)
    }
}

/// Whether two strategies are worded alike (see [`strategy_overlap`]).
pub fn similar_strategies(a: &str, b: &str) -> bool {
    let (wa, wb) = (strategy_words(a), strategy_words(b));
    if wa.is_empty() && wb.is_empty() {
        let normalise = |s: &str| words(s).collect::<Vec<_>>();
        return !normalise(a).is_empty() && normalise(a) == normalise(b);
    }
    strategy_overlap(&wa, &wb).is_some()
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
        assert!(
            similar_strategies("do it again", "Do it again"),
            "stop words only: the same words"
        );
        assert!(
            !similar_strategies("use the cache", "do not use the cache"),
            "negations count"
        );
    }

    #[test]
    fn a_strategy_belongs_to_the_closest_group() {
        let groups = [
            (1, "retry with backoff"),
            (2, "retry with exponential backoff and jitter"),
        ];
        let words = StrategyVectors::none();
        assert_eq!(
            words.best_match("exponential backoff with jitter then retry", groups),
            Some(2)
        );
        assert_eq!(words.best_match("cache responses in redis", groups), None);
    }

    fn unit(values: &[f32]) -> Arc<[f32]> {
        let mut values = values.to_vec();
        crate::embed::normalise(&mut values);
        values.into()
    }

    #[test]
    fn with_vectors_strategies_that_mean_alike_are_similar() {
        let (a, b, c) = (
            "roll back the release",
            "revert to the previous version",
            "page the on-call engineer",
        );
        let negated = "do not revert to the previous version";
        let vectors = StrategyVectors::new(HashMap::from([
            (a.to_owned(), unit(&[1.0, 0.1, 0.0])),
            (b.to_owned(), unit(&[0.9, 0.3, 0.0])),
            (c.to_owned(), unit(&[0.0, 0.2, 1.0])),
            (negated.to_owned(), unit(&[0.9, 0.3, 0.0])),
        ]));
        assert!(!similar_strategies(a, b), "no shared words");
        assert!(vectors.similar(a, b) && vectors.similar(b, a));
        assert!(!vectors.similar(a, c), "far apart");
        assert!(!vectors.similar(a, negated), "a negation on one side only");
        assert!(
            !vectors.similar(a, "unknown wording"),
            "no vector: words only"
        );
        // A group matched by words wins over one matched by meaning alone.
        let groups = [(1, b), (2, "roll back the release quickly")];
        assert_eq!(vectors.best_match(a, groups), Some(2));
        assert_eq!(vectors.best_match(a, [(7, b), (3, c)]), Some(7));
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
