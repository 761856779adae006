//! The LLM tier of contradiction detection (DESIGN §3): with a model
//! configured, the new memory and its closest candidates are judged by the
//! model under a strict JSON schema (`invalidates`: which candidates the
//! new memory makes no longer true, each with a reason). Any failure — no
//! answer in time, a reply that is not the schema, a candidate it was not
//! shown — leaves the rules' verdict in place.

use serde_json::{Value, json};

use super::Contradiction;
use crate::llm::LlmClient;

/// The most candidates the model is shown.
pub const MAX_CANDIDATES: usize = 8;
/// The most of a memory's text the model is shown.
const MAX_TEXT_CHARS: usize = 600;
/// The longest reason kept from the model.
const MAX_REASON_CHARS: usize = 200;

/// What the model is told.
const INSTRUCTIONS: &str = "You maintain an AI agent's long-term memory. A NEW memory was just \
written. Decide which of the EXISTING memories it makes no longer true: only an existing memory \
about the same subject and the same single-valued attribute (where someone works or lives, a \
title, a manager, an email or phone, a port, host, region or version, the tool chosen for a role, \
a preference of one thing over another, a deadline, an owner, a status, a setting, a price, a \
meeting time, a decision reversed) whose value the new memory replaces. Not a contradiction: a \
different attribute, a different subject, an attribute that can have several values (languages \
spoken, hobbies, tools used side by side), an addition (\"also\"), the same value restated, a past \
event beside a present fact. Answer with the ids of the existing memories it invalidates (often \
none) and, for each, a short reason naming the attribute and the new value.";

/// The name of the schema in the request.
const SCHEMA_NAME: &str = "memory_invalidations";

/// The JSON schema the reply must match (strict: every key required, no
/// others).
fn schema(ids: &[String]) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["invalidates"],
        "properties": {
            "invalidates": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["id", "reason"],
                    "properties": {
                        "id": {"type": "string", "enum": ids},
                        "reason": {"type": "string"},
                    },
                },
            },
        },
    })
}

/// A candidate as the model is shown it: a short id of the request's own
/// ("m1", "m2"…, never the memory's id, which it could garble) and its
/// text.
pub struct Shown<'a> {
    pub id: &'a str,
    pub content: &'a str,
}

/// Which of `candidates` the model judges `new` to invalidate; `Err` (with
/// why) on any failure, for the caller to keep the rules' verdict.
pub async fn judge(
    llm: &LlmClient,
    new: &str,
    candidates: &[Shown<'_>],
) -> Result<Vec<Contradiction>, String> {
    let short: Vec<String> = (1..=candidates.len()).map(|n| format!("m{n}")).collect();
    let mut user = format!("NEW: {}\n\nEXISTING:\n", clip(new));
    for (id, candidate) in short.iter().zip(candidates) {
        user.push_str(&format!("{id}: {}\n", clip(candidate.content)));
    }
    let reply = llm
        .chat_json(INSTRUCTIONS, &user, SCHEMA_NAME, schema(&short))
        .await
        .map_err(|e| e.to_string())?;
    read_reply(&reply, &short, candidates)
}

/// The first [`MAX_TEXT_CHARS`] of `text`, on one line.
fn clip(text: &str) -> String {
    text.chars()
        .take(MAX_TEXT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The reply as contradictions, checked against the schema (the server's
/// strict mode is trusted for nothing): exactly the key `invalidates`, a
/// list of objects with exactly `id` (one shown) and `reason` (not empty).
fn read_reply(
    reply: &Value,
    short: &[String],
    candidates: &[Shown<'_>],
) -> Result<Vec<Contradiction>, String> {
    let object = reply.as_object().ok_or("the reply is not a JSON object")?;
    if object.len() != 1 {
        return Err("the reply must have exactly the key invalidates".into());
    }
    let items = object
        .get("invalidates")
        .and_then(Value::as_array)
        .ok_or("invalidates is not a list")?;
    let mut found: Vec<Contradiction> = Vec::new();
    for item in items {
        let item = item.as_object().ok_or("an invalidation is not an object")?;
        if item.len() != 2 {
            return Err("an invalidation must have exactly id and reason".into());
        }
        let id = item.get("id").and_then(Value::as_str).ok_or("no id")?;
        let reason = item
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .ok_or("no reason")?;
        let at = short
            .iter()
            .position(|s| s == id)
            .ok_or_else(|| format!("{id:?} is not a memory it was shown"))?;
        let id = candidates[at].id.to_owned();
        if !found.iter().any(|f| f.id == id) {
            let reason: String = reason.chars().take(MAX_REASON_CHARS).collect();
            found.push(Contradiction {
                id,
                reason: format!("contradicted (judged by the model): {reason}"),
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown() -> Vec<Shown<'static>> {
        vec![
            Shown {
                id: "a",
                content: "Alice works at Acme.",
            },
            Shown {
                id: "b",
                content: "Alice lives in Berlin.",
            },
        ]
    }

    fn short() -> Vec<String> {
        vec!["m1".into(), "m2".into()]
    }

    #[test]
    fn a_reply_of_the_schema_names_the_memories_shown() {
        let reply = json!({"invalidates": [{"id": "m1", "reason": "employer is now Globex"}]});
        let found = read_reply(&reply, &short(), &shown()).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, "a");
        assert!(found[0].reason.ends_with("employer is now Globex"));
        let none = read_reply(&json!({"invalidates": []}), &short(), &shown()).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn anything_else_is_refused() {
        for reply in [
            json!([]),
            json!({}),
            json!({"invalidates": "m1"}),
            json!({"invalidates": [], "extra": 1}),
            json!({"invalidates": [{"id": "m3", "reason": "?"}]}),
            json!({"invalidates": [{"id": "m1"}]}),
            json!({"invalidates": [{"id": "m1", "reason": " "}]}),
            json!({"invalidates": [{"id": "m1", "reason": "x", "why": "y"}]}),
        ] {
            assert!(
                read_reply(&reply, &short(), &shown()).is_err(),
                "accepted {reply}"
            );
        }
    }
}
