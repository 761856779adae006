//! The training-memory learning rules (DESIGN §4, §5): what a completed
//! episode teaches, as plain functions over plain values.

use crate::domain::episode::{Outcome, Rejection, RuleOrigin, Step, StepProblem};

/// The most steps one episode may have.
pub const MAX_STEPS_PER_EPISODE: i32 = 1000;
pub use crate::domain::episode::GLOBAL;
/// How many of the strongest mistake cards GetStats shows.
pub const STATS_TOP_CARDS: usize = 5;
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

/// Steps judged against an episode that has `count` steps, the last
/// numbered `last`: each must number above the one before, and the episode
/// may not pass its step limit — except a step sent again with the number
/// and content of one already stored (one of `stored`), which is counted as
/// repeated, so that a client can resend after a lost stream or call.
#[derive(Debug, Default, PartialEq)]
pub struct JudgedSteps {
    pub accepted: Vec<Step>,
    pub rejections: Vec<Rejection>,
    /// Steps identical to stored ones: acknowledged, not stored again.
    pub repeated: usize,
    /// The episode's last step number and step count with the accepted ones.
    pub last: i32,
    pub count: i32,
}

pub fn judge_steps(last: i32, count: i32, steps: Vec<Step>, stored: &[Step]) -> JudgedSteps {
    let mut judged = JudgedSteps {
        last,
        count,
        ..JudgedSteps::default()
    };
    for (index, step) in steps.into_iter().enumerate() {
        let stored_step = stored.iter().find(|s| s.number == step.number);
        let problem = if step.number <= judged.last {
            match stored_step {
                Some(stored) if stored.same_content(&step) => {
                    judged.repeated += 1;
                    continue;
                }
                Some(_) => Some((
                    StepProblem::Misnumbered,
                    format!(
                        "step {} is already stored with other content (the last stored step is {last})",
                        step.number
                    ),
                )),
                None => Some((
                    StepProblem::Misnumbered,
                    format!(
                        "step_number {} is not above the previous step {}",
                        step.number, judged.last
                    ),
                )),
            }
        } else if judged.count >= MAX_STEPS_PER_EPISODE {
            Some((
                StepProblem::TooMany,
                format!("the episode already has the maximum of {MAX_STEPS_PER_EPISODE} steps"),
            ))
        } else {
            None
        };
        match problem {
            Some((problem, reason)) => judged.rejections.push(Rejection {
                index,
                step_number: step.number,
                problem,
                reason,
            }),
            None => {
                judged.last = step.number;
                judged.count += 1;
                judged.accepted.push(step);
            }
        }
    }
    judged
}

/// How many recent completed episodes an LLM consolidation reads.
pub const LLM_CONSOLIDATION_EPISODES: usize = 30;
/// How many rules it asks for.
pub const LLM_CONSOLIDATION_RULES: usize = 5;
/// A consolidated rule is cut to this many characters.
pub const CONSOLIDATED_RULE_CHARS: usize = 200;
/// The name of the consolidation schema in the request.
pub const LLM_CONSOLIDATION_SCHEMA_NAME: &str = "consolidated_rules";
/// What the model is told.
pub const LLM_CONSOLIDATION_INSTRUCTIONS: &str = "You distil an AI agent's recent task runs into rules it should follow \
next time. Read the episodes (task, score from 0 to 1, summary, what worked, what went wrong) and answer with \
exactly 5 rules, each one short imperative sentence, most useful first.";

/// The episodes as the model reads them, one per line.
pub fn consolidation_prompt(episodes: &[crate::domain::episode::Episode]) -> String {
    episodes
        .iter()
        .map(|e| {
            let outcome = e.outcome.clone().unwrap_or_default();
            format!(
                "- task {}: score {:.2}; {}; worked: {}; went wrong: {}",
                e.task_id,
                outcome.score,
                cut(outcome.summary.trim(), HIGH_SCORE_SUMMARY_CHARS),
                outcome.successes.join(" / "),
                outcome.mistakes.join(" / ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON schema of the model's reply.
pub fn consolidation_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["rules"],
        "properties": {"rules": {"type": "array", "items": {"type": "string"}}},
    })
}

/// The `[CONSOLIDATED]` rules in the model's reply, if it matches the
/// schema: only a `rules` key, 1 to 5 non-blank strings.
pub fn consolidated_rules(reply: &serde_json::Value) -> Result<Vec<String>, String> {
    let object = reply.as_object().ok_or("the reply is not a JSON object")?;
    if let Some(extra) = object.keys().find(|k| k.as_str() != "rules") {
        return Err(format!("unexpected key {extra:?}"));
    }
    let rules = object
        .get("rules")
        .ok_or("missing key \"rules\"")?
        .as_array()
        .ok_or("rules is not an array")?;
    if rules.is_empty() || rules.len() > LLM_CONSOLIDATION_RULES {
        return Err(format!(
            "expected 1 to {LLM_CONSOLIDATION_RULES} rules, got {}",
            rules.len()
        ));
    }
    rules
        .iter()
        .map(|rule| match rule.as_str().map(str::trim) {
            Some(text) if !text.is_empty() && !crate::engine::policy::has_control(text) => {
                Ok(format!(
                    "[CONSOLIDATED] {}",
                    crate::engine::context::one_line(text, CONSOLIDATED_RULE_CHARS)
                ))
            }
            _ => Err("every rule must be a non-blank string without control characters".to_owned()),
        })
        .collect()
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

    fn step(number: i32) -> Step {
        Step {
            number,
            tool: "t".into(),
            action: "a".into(),
            parameters: String::new(),
            result: 0,
            output: String::new(),
            latency_ms: 0,
            time: 0,
        }
    }

    #[test]
    fn steps_must_number_upwards_and_stay_within_the_limit() {
        let judged = judge_steps(2, 2, vec![step(3), step(3), step(1), step(7)], &[]);
        let numbers: Vec<i32> = judged.accepted.iter().map(|s| s.number).collect();
        assert_eq!(numbers, [3, 7]);
        let rejected: Vec<(usize, StepProblem)> = judged
            .rejections
            .iter()
            .map(|r| (r.index, r.problem))
            .collect();
        assert_eq!(
            rejected,
            [(1, StepProblem::Misnumbered), (2, StepProblem::Misnumbered)]
        );
        assert_eq!((judged.last, judged.count), (7, 4));

        let full = judge_steps(
            999,
            MAX_STEPS_PER_EPISODE - 1,
            vec![step(1000), step(1001)],
            &[],
        );
        assert_eq!(full.accepted.len(), 1);
        assert_eq!(full.rejections[0].problem, StepProblem::TooMany);
    }

    #[test]
    fn a_stored_step_sent_again_is_acknowledged_and_a_changed_one_rejected() {
        let stored = [step(1), step(2)];
        let mut later = step(2);
        later.time = 99;
        let mut changed = step(1);
        changed.output = "other".into();
        let judged = judge_steps(2, 2, vec![later, changed, step(3)], &stored);
        assert_eq!(
            judged.repeated, 1,
            "a resent step 2 (only its time differs)"
        );
        let numbers: Vec<i32> = judged.accepted.iter().map(|s| s.number).collect();
        assert_eq!(numbers, [3]);
        assert_eq!(judged.rejections.len(), 1);
        assert_eq!(judged.rejections[0].index, 1);
        assert!(
            judged.rejections[0]
                .reason
                .contains("already stored with other content"),
            "{:?}",
            judged.rejections[0]
        );
        assert_eq!((judged.last, judged.count), (3, 3));
    }

    #[test]
    fn consolidated_rules_must_match_the_schema() {
        let ok = serde_json::json!({"rules": ["Read the logs first.", "Pin versions."]});
        assert_eq!(
            consolidated_rules(&ok).unwrap(),
            [
                "[CONSOLIDATED] Read the logs first.",
                "[CONSOLIDATED] Pin versions."
            ]
        );
        assert!(consolidated_rules(&serde_json::json!({"rules": [], "x": 1})).is_err());
        assert!(
            consolidated_rules(&serde_json::json!({"rules": ["a", "b", "c", "d", "e", "f"]}))
                .is_err()
        );
        assert!(consolidated_rules(&serde_json::json!({"rules": [" "]})).is_err());
    }

    #[test]
    fn consolidation_runs_every_twentieth_completion() {
        let runs: Vec<i64> = (0..=60).filter(|&n| consolidates_at(n)).collect();
        assert_eq!(runs, [20, 40, 60]);
    }
}
