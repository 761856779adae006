//! Episode and learning requests: validated and turned into domain values.

use engram::v1 as pb;

use super::page_token;
use super::request_key::Idempotent as _;
use super::validate::{MAX_ID_CHARS, Violations};
use crate::domain::episode::{
    EpisodeContext, EpisodeQuery, EpisodeStatus, MistakeReport, NewEpisode, Outcome, Step,
    StepWindow,
};
use crate::domain::{Micros, RequestKey, Scope};
use crate::error::Result;

pub const MAX_DESCRIPTION_CHARS: usize = 10_000;
pub const MAX_LABEL_CHARS: usize = 128;
pub const MAX_CONTEXT_TAGS: usize = 32;
pub const MAX_TAG_CHARS: usize = 64;
/// The most steps one AppendSteps call or stream message carries.
pub const MAX_STEPS_PER_CALL: usize = 1000;
pub const MAX_TOOL_CHARS: usize = 256;
pub const MAX_ACTION_CHARS: usize = 4096;
pub const MAX_PARAMETERS_BYTES: usize = 64 * 1024;
/// A step's output is kept up to this many bytes (cut at a character boundary).
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024;
pub const MAX_SUMMARY_CHARS: usize = 10_000;
/// The most mistakes, successes or mistake cards one outcome carries.
pub const MAX_OUTCOME_ITEMS: usize = 100;
pub const MAX_LESSON_CHARS: usize = 1000;
/// The most characters of a mistake card's decision, evidence or lesson as
/// sent (they are kept cut to 300).
pub const MAX_CARD_TEXT_CHARS: usize = 1000;

pub fn start(mut req: pb::StartEpisodeRequest) -> Result<(NewEpisode, Option<RequestKey>)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    v.identifier("task_id", &req.task_id, MAX_ID_CHARS, true);
    v.text("description", &req.description, MAX_DESCRIPTION_CHARS, true);
    v.text("task_type", &req.task_type, MAX_LABEL_CHARS, false);
    v.identifier("request_id", &req.request_id, MAX_ID_CHARS, false);
    let context = req.context.clone().unwrap_or_default();
    for (name, value) in [
        ("language", &context.language),
        ("framework", &context.framework),
        ("domain", &context.domain),
        ("complexity", &context.complexity),
    ] {
        v.text(&format!("context.{name}"), value, MAX_LABEL_CHARS, false);
    }
    v.tags(
        "context.tags",
        &context.tags,
        MAX_CONTEXT_TAGS,
        MAX_TAG_CHARS,
    );
    v.finish(())?;
    let request = req.take_request_key();
    Ok((
        NewEpisode {
            scope,
            task_id: req.task_id,
            description: req.description,
            task_type: req.task_type,
            context: EpisodeContext {
                language: context.language,
                framework: context.framework,
                domain: context.domain,
                complexity: context.complexity,
                tags: context.tags,
            },
        },
        request,
    ))
}

/// Checks one step on its own (its number against the episode is the
/// store's business) and converts it.
pub fn step(v: &mut Violations, field: &str, step: &pb::Step, now: Micros) -> Step {
    if step.step_number < 1 {
        v.add(
            format!("{field}.step_number"),
            format!("must be 1 or more (got {})", step.step_number),
        );
    }
    v.text(&format!("{field}.tool"), &step.tool, MAX_TOOL_CHARS, true);
    v.text(
        &format!("{field}.action"),
        &step.action,
        MAX_ACTION_CHARS,
        true,
    );
    if step.parameters.len() > MAX_PARAMETERS_BYTES {
        v.add(
            format!("{field}.parameters"),
            format!("must be at most {MAX_PARAMETERS_BYTES} bytes"),
        );
    } else if !step.parameters.trim().is_empty()
        && serde_json::from_str::<serde::de::IgnoredAny>(&step.parameters).is_err()
    {
        v.add(format!("{field}.parameters"), "must be empty or valid JSON");
    }
    v.enum_value(&format!("{field}.result"), step.result, |code| {
        pb::StepResult::try_from(code).ok()
    });
    if step.latency_ms < 0 {
        v.add(format!("{field}.latency_ms"), "must not be negative");
    }
    let time = v
        .timestamp(&format!("{field}.time"), step.time.as_ref())
        .unwrap_or(now);
    Step {
        number: step.step_number,
        tool: step.tool.clone(),
        action: step.action.clone(),
        // White space alone is no parameters.
        parameters: if step.parameters.trim().is_empty() {
            String::new()
        } else {
            step.parameters.clone()
        },
        result: step.result,
        output: cut_bytes(&step.output, MAX_OUTPUT_BYTES),
        latency_ms: step.latency_ms,
        time,
    }
}

/// The longest prefix of `text` within `max` bytes that ends on a character.
fn cut_bytes(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// A validated AppendSteps.
pub fn append(req: &pb::AppendStepsRequest, now: Micros) -> Result<(Scope, String, Vec<Step>)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let id = v.uuid("episode_id", &req.episode_id);
    if req.steps.is_empty() || req.steps.len() > MAX_STEPS_PER_CALL {
        v.add(
            "steps",
            format!(
                "must have 1 to {MAX_STEPS_PER_CALL} entries (got {})",
                req.steps.len()
            ),
        );
    }
    let steps = req
        .steps
        .iter()
        .take(MAX_STEPS_PER_CALL)
        .enumerate()
        .map(|(i, s)| step(&mut v, &format!("steps[{i}]"), s, now))
        .collect();
    v.finish((scope, id, steps))
}

pub fn complete(req: &pb::CompleteEpisodeRequest) -> Result<(Scope, String, Outcome)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let id = v.uuid("episode_id", &req.episode_id);
    let Some(outcome) = &req.outcome else {
        v.add("outcome", "is required");
        return v.finish((scope, id, Outcome::default()));
    };
    v.unit_interval("outcome.score", outcome.score);
    v.text(
        "outcome.summary",
        &outcome.summary,
        MAX_SUMMARY_CHARS,
        false,
    );
    for (name, items) in [
        ("mistakes", &outcome.mistakes),
        ("successes", &outcome.successes),
    ] {
        if items.len() > MAX_OUTCOME_ITEMS {
            v.add(
                format!("outcome.{name}"),
                format!("must have at most {MAX_OUTCOME_ITEMS} entries"),
            );
        }
        for (i, item) in items.iter().enumerate().take(MAX_OUTCOME_ITEMS) {
            v.text(
                &format!("outcome.{name}[{i}]"),
                item,
                MAX_LESSON_CHARS,
                true,
            );
        }
    }
    if outcome.mistake_cards.len() > MAX_OUTCOME_ITEMS {
        v.add(
            "outcome.mistake_cards",
            format!("must have at most {MAX_OUTCOME_ITEMS} entries"),
        );
    }
    let mistake_cards = outcome
        .mistake_cards
        .iter()
        .take(MAX_OUTCOME_ITEMS)
        .enumerate()
        .map(|(i, card)| mistake(&mut v, &format!("outcome.mistake_cards[{i}]"), card))
        .collect();
    v.finish((
        scope,
        id,
        Outcome {
            score: outcome.score,
            success: outcome.success,
            summary: outcome.summary.clone(),
            mistakes: outcome.mistakes.clone(),
            successes: outcome.successes.clone(),
            mistake_cards,
        },
    ))
}

/// Checks a mistake card input.
pub fn mistake(v: &mut Violations, field: &str, card: &pb::MistakeCardInput) -> MistakeReport {
    v.text(
        &format!("{field}.mistake_type"),
        &card.mistake_type,
        MAX_LABEL_CHARS,
        true,
    );
    v.text(
        &format!("{field}.worker_id"),
        &card.worker_id,
        MAX_ID_CHARS,
        false,
    );
    v.text(
        &format!("{field}.correct_decision"),
        &card.correct_decision,
        MAX_CARD_TEXT_CHARS,
        true,
    );
    v.text(
        &format!("{field}.evidence"),
        &card.evidence,
        MAX_CARD_TEXT_CHARS,
        false,
    );
    v.text(
        &format!("{field}.lesson"),
        &card.lesson,
        MAX_CARD_TEXT_CHARS,
        false,
    );
    MistakeReport {
        mistake_type: card.mistake_type.clone(),
        worker_id: card.worker_id.clone(),
        correct_decision: card.correct_decision.clone(),
        evidence: card.evidence.clone(),
        lesson: card.lesson.clone(),
    }
}

/// A validated ListEpisodes and the fingerprint its page tokens carry.
/// The most steps GetEpisode returns at once, and the default.
pub const MAX_STEP_PAGE_SIZE: usize = 1000;

/// A validated GetEpisode: scope, id, the steps to read (one more than the
/// page, to tell whether more follow) and the step token's fingerprint.
pub fn get(req: &pb::GetEpisodeRequest) -> Result<(Scope, String, StepWindow, String)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let id = v.uuid("id", &req.id);
    let page_size = v.count_or_default(
        "step_page_size",
        req.step_page_size,
        MAX_STEP_PAGE_SIZE,
        1,
        MAX_STEP_PAGE_SIZE,
    );
    let fingerprint = page_token::fingerprint(&(&scope.namespace, &id, "steps"));
    let after = page_token::decode_field(
        &mut v,
        "step_page_token",
        &req.step_page_token,
        &fingerprint,
    )
    .map_or(i32::MIN, |[number]| {
        i32::try_from(number).unwrap_or(i32::MAX)
    });
    let window = StepWindow {
        after,
        limit: page_size + 1,
    };
    v.finish((scope, id, window, fingerprint))
}

pub fn list(req: &pb::ListEpisodesRequest) -> Result<(EpisodeQuery, String)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    v.identifier("task_id", &req.task_id, MAX_ID_CHARS, false);
    let status = v.enum_value("status", req.status, EpisodeStatus::from_code);
    let started_after = v.timestamp("started_after", req.started_after.as_ref());
    let started_before = v.timestamp("started_before", req.started_before.as_ref());
    let page_size = v.page_size("page_size", req.page_size);
    let task_id = (!req.task_id.is_empty()).then(|| req.task_id.clone());
    let fingerprint =
        page_token::fingerprint(&(&scope, &task_id, status, started_after, started_before));
    let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint)
        .map(|[time, seq]| (time, seq));
    v.finish((
        EpisodeQuery {
            scope,
            task_id,
            status,
            started_after,
            started_before,
            page_size,
            after,
        },
        fingerprint,
    ))
}
