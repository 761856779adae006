//! The training-memory learning rules (DESIGN §4, §5): what a completed
//! episode teaches, as plain functions over plain values.

use crate::domain::episode::{Outcome, RuleOrigin};

/// A success becomes a `[WORKS]` rule from this score up.
pub const WORKS_MIN_SCORE: f64 = 0.85;
/// A mistake becomes an `[AVOID]` rule below this score.
pub const AVOID_BELOW_SCORE: f64 = 0.50;
/// Rules kept per task: the newest.
pub const RULES_KEPT_PER_TASK: usize = 10;
/// Mistake cards kept per namespace: the strongest.
pub const CARDS_KEPT: usize = 30;
/// Evidence and lessons of mistake cards are cut to this many characters.
pub const CARD_TEXT_CHARS: usize = 300;
/// Consolidation runs after every this many completed episodes.
pub const CONSOLIDATE_EVERY: i64 = 20;
/// Episodes from this score up become `[HIGH SCORE]` global rules.
pub const HIGH_SCORE: f64 = 0.85;
/// Global rules kept per namespace: the newest; also how many high-scoring
/// episodes one consolidation considers.
pub const GLOBAL_RULES_KEPT: usize = 20;
/// A `[HIGH SCORE]` rule quotes this many characters of the summary.
pub const HIGH_SCORE_SUMMARY_CHARS: usize = 120;

/// The task rules an outcome teaches, in outcome order: its successes when it
/// scored high, its mistakes when it scored low.
pub fn rules_from(outcome: &Outcome) -> Vec<(String, RuleOrigin)> {
    if outcome.score >= WORKS_MIN_SCORE {
        lines(&outcome.successes, "[WORKS]", RuleOrigin::Works)
    } else if outcome.score < AVOID_BELOW_SCORE {
        lines(&outcome.mistakes, "[AVOID]", RuleOrigin::Avoid)
    } else {
        Vec::new()
    }
}

fn lines(texts: &[String], tag: &str, origin: RuleOrigin) -> Vec<(String, RuleOrigin)> {
    texts
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .map(|t| (format!("{tag} {t}"), origin))
        .collect()
}

/// The global rule a high-scoring episode becomes.
pub fn high_score_rule(score: f64, summary: &str) -> String {
    format!(
        "[HIGH SCORE {score:.2}] {}",
        cut(summary.trim(), HIGH_SCORE_SUMMARY_CHARS)
    )
}

/// Whether the `completed`-th completion in a namespace runs consolidation.
pub fn consolidates_at(completed: i64) -> bool {
    completed > 0 && completed % CONSOLIDATE_EVERY == 0
}

/// The first `max_chars` characters of `text`.
pub fn cut(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(score: f64) -> Outcome {
        Outcome {
            score,
            successes: vec!["checked the logs first".into(), "  ".into()],
            mistakes: vec!["blamed the network".into()],
            ..Outcome::default()
        }
    }

    #[test]
    fn high_scores_teach_their_successes() {
        assert_eq!(
            rules_from(&outcome(0.85)),
            [(
                "[WORKS] checked the logs first".to_owned(),
                RuleOrigin::Works
            )]
        );
    }

    #[test]
    fn low_scores_teach_their_mistakes() {
        assert_eq!(
            rules_from(&outcome(0.49)),
            [("[AVOID] blamed the network".to_owned(), RuleOrigin::Avoid)]
        );
    }

    #[test]
    fn middling_scores_teach_no_rule() {
        assert!(rules_from(&outcome(0.5)).is_empty());
        assert!(rules_from(&outcome(0.84)).is_empty());
    }

    #[test]
    fn high_score_rules_quote_the_summary_briefly() {
        assert_eq!(
            high_score_rule(0.914, "fixed it"),
            "[HIGH SCORE 0.91] fixed it"
        );
        let long = "é".repeat(200);
        assert_eq!(
            high_score_rule(1.0, &long).chars().count(),
            "[HIGH SCORE 1.00] ".len() + 120
        );
    }

    #[test]
    fn consolidation_runs_every_twentieth_completion() {
        let runs: Vec<i64> = (0..=60).filter(|&n| consolidates_at(n)).collect();
        assert_eq!(runs, [20, 40, 60]);
    }
}
