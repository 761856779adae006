//! The LLM classifier of DESIGN §6: what the model is told, the JSON schema
//! its reply must match, the reply read as a decision, and the safe
//! decision when it fails.

use std::collections::BTreeMap;

use super::{Decision, DecisionSource, MAX_SUMMARY_CHARS, allowed_level, nothing_stored};
use crate::domain::{MemoryLevel, MemoryType, Scope};
use crate::llm::LlmClient;

/// The decision of `llm` on the (screened) `transcript`, or the safe
/// default when the model fails or its reply does not match the schema.
pub(super) async fn classify(
    llm: &LlmClient,
    transcript: &str,
    scope: &Scope,
    task_id: &str,
) -> Decision {
    let user = format!("Task: {task_id}\nTranscript:\n{transcript}");
    let reply = llm
        .chat_json(INSTRUCTIONS, &user, SCHEMA_NAME, schema())
        .await;
    let decided = reply
        .map_err(|e| e.to_string())
        .and_then(|reply| reply_decision(&reply, scope, task_id, llm.model()));
    decided.unwrap_or_else(|error| {
        tracing::warn!(%error, "the LLM classifier failed; using the safe fallback");
        fallback(scope, task_id, &error)
    })
}

/// What the LLM classifier is told.
const INSTRUCTIONS: &str = "You decide what an AI agent should remember long-term from a transcript. \
Store only durable knowledge: preferences (how the user wants things done), decisions (choices to keep), \
lessons (learned the hard way), facts (stable statements about the user, project or world), notable events, \
notes. Do not store greetings, chatter, acknowledgements, tool output, questions, hedges or work in progress. \
importance: at least 0.7 for preferences and lessons, at least 0.4 for facts, below 0.4 for events. \
level: GLOBAL for user preferences and system-wide facts, WORKSPACE for project knowledge, CONVERSATION for \
chat-local context. summary: the memory itself in one or two sentences (at most 300 characters).";

/// The name of the decision schema in the request.
const SCHEMA_NAME: &str = "memory_decision";

/// Every memory type, as the model names it (its label).
fn memory_types() -> impl Iterator<Item = MemoryType> {
    (1..).map_while(MemoryType::from_code)
}

/// Every level, as the model names it.
const LEVELS: &[(&str, MemoryLevel)] = &[
    ("GLOBAL", MemoryLevel::Global),
    ("WORKSPACE", MemoryLevel::Workspace),
    ("CONVERSATION", MemoryLevel::Conversation),
];

/// The keys of a reply: all of them, and no other.
const KEYS: &[&str] = &[
    "should_store",
    "memory_type",
    "summary",
    "importance",
    "level",
    "reason",
];

/// The JSON schema the model's reply must match (strict: every key required,
/// no others).
fn schema() -> serde_json::Value {
    let types: Vec<&str> = memory_types().map(MemoryType::label).collect();
    let levels: Vec<&str> = LEVELS.iter().map(|(n, _)| *n).collect();
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": KEYS,
        "properties": {
            "should_store": {"type": "boolean"},
            "memory_type": {"type": "string", "enum": types},
            "summary": {"type": "string"},
            "importance": {"type": "number"},
            "level": {"type": "string", "enum": levels},
            "reason": {"type": "string"},
        },
    })
}

/// The model's reply as a decision, if it matches the schema exactly:
/// every key, no other, enums and types as declared. Importance is clamped
/// to 0..1, the summary cut to 300 characters, and the level never narrower
/// than the scope allows.
fn reply_decision(
    reply: &serde_json::Value,
    scope: &Scope,
    task_id: &str,
    model: &str,
) -> Result<Decision, String> {
    let object = reply.as_object().ok_or("the reply is not a JSON object")?;
    if let Some(extra) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unexpected key {:?}", quoted(extra)));
    }
    if let Some(missing) = KEYS.iter().find(|k| !object.contains_key(**k)) {
        return Err(format!("missing key {missing:?}"));
    }
    let text = |key: &str| {
        object[key]
            .as_str()
            .ok_or_else(|| format!("{key} is not a string"))
    };
    let should_store = object["should_store"]
        .as_bool()
        .ok_or("should_store is not a boolean")?;
    let memory_type = text("memory_type")?;
    let memory_type = MemoryType::from_label(memory_type).ok_or_else(|| {
        format!(
            "memory_type {:?} is not one of the allowed values",
            quoted(memory_type)
        )
    })?;
    let level = text("level")?;
    let level = LEVELS
        .iter()
        .find(|(name, _)| *name == level)
        .map(|(_, l)| *l)
        .ok_or_else(|| format!("level {:?} is not one of the allowed values", quoted(level)))?;
    let importance = object["importance"]
        .as_f64()
        .ok_or("importance is not a number")?;
    let summary = crate::engine::context::one_line(text("summary")?, MAX_SUMMARY_CHARS);
    let reason = crate::engine::context::one_line(text("reason")?, MAX_SUMMARY_CHARS);
    if should_store && summary.is_empty() {
        return Err("summary is blank although should_store is true".into());
    }
    if has_control(&summary) || has_control(&reason) {
        return Err("summary or reason contains control characters".into());
    }
    let mut metadata = BTreeMap::new();
    if !task_id.is_empty() {
        metadata.insert("task_id".to_owned(), task_id.to_owned());
    }
    metadata.insert("classifier".to_owned(), "llm".to_owned());
    metadata.insert("model".to_owned(), model.to_owned());
    Ok(Decision {
        should_store,
        memory_type,
        summary,
        importance: importance.clamp(0.0, 1.0),
        level: allowed_level(level, scope),
        metadata,
        source: DecisionSource::Llm,
        reason,
    })
}

/// At most 40 characters of a value the model sent, for an error message.
fn quoted(value: &str) -> String {
    value.chars().take(40).collect()
}

/// Whether text has control characters other than white space.
pub fn has_control(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && !c.is_whitespace())
}

/// The safe decision when the LLM failed: store nothing, and say why.
fn fallback(scope: &Scope, task_id: &str, error: &str) -> Decision {
    let mut metadata = BTreeMap::new();
    metadata.insert("task_id".to_owned(), task_id.to_owned());
    metadata.insert("source".to_owned(), "llm".to_owned());
    metadata.insert("error".to_owned(), error.to_owned());
    nothing_stored(
        scope,
        metadata,
        DecisionSource::Fallback,
        format!("the LLM classifier failed ({error}); nothing is stored"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_llm_reply_must_match_the_schema_exactly() {
        let good = serde_json::json!({
            "should_store": true, "memory_type": "FACT", "summary": "x", "importance": 3.5,
            "level": "WORKSPACE", "reason": "r"
        });
        let d = reply_decision(&good, &Scope::default(), "t", "m").unwrap();
        assert_eq!(d.importance, 1.0, "clamped");
        assert_eq!(d.level, MemoryLevel::Global, "no project: widened");
        let mut extra = good.clone();
        extra["confidence"] = serde_json::json!(1);
        assert_eq!(
            reply_decision(&extra, &Scope::default(), "", "m").unwrap_err(),
            "unexpected key \"confidence\""
        );
        let mut wrong = good.clone();
        wrong["memory_type"] = serde_json::json!("OPINION");
        assert!(reply_decision(&wrong, &Scope::default(), "", "m").is_err());
        let mut missing = good;
        missing.as_object_mut().unwrap().remove("reason");
        assert_eq!(
            reply_decision(&missing, &Scope::default(), "", "m").unwrap_err(),
            "missing key \"reason\""
        );
    }
}
