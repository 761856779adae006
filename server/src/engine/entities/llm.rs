//! Entities read by the model (DESIGN: knowledge that stays true): with a
//! model configured, the memories are read again in the background, in
//! sequence order, for the entities they name and what they say of them
//! as (subject, predicate, object) — under a strict JSON schema, checked
//! here. The rules' entities were linked when each memory was written; the
//! model's are added to them. Writes never wait for it.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::domain::entity::{EntityType, Mention, StatedRelation, key};
use crate::engine::unit;
use crate::error::Result;
use crate::llm::{LlmClient, LlmError};
use crate::store::Store;

/// Where the model is: it has read the memories up to this sequence
/// number (`engram_meta`).
const READ_AFTER: &str = "entity_llm_after";
/// Memories read per step.
const BATCH: usize = 4;
/// The most of a memory's text the model is shown.
const MAX_TEXT_CHARS: usize = 4000;
/// The most entities and relations kept from one reply.
const MAX_ENTITIES: usize = 32;
const MAX_RELATIONS: usize = 16;
/// The longest name, predicate and object kept.
const MAX_NAME_CHARS: usize = 100;
const MAX_PREDICATE_CHARS: usize = 60;
const MAX_OBJECT_CHARS: usize = 200;

/// Every entity type, as the model names it.
const TYPES: &[(&str, EntityType)] = &[
    ("PERSON", EntityType::Person),
    ("ORGANIZATION", EntityType::Organization),
    ("PROJECT", EntityType::Project),
    ("SERVICE", EntityType::Service),
    ("TOOL", EntityType::Tool),
    ("PLACE", EntityType::Place),
    ("OTHER", EntityType::Other),
];

/// What the model is told.
const INSTRUCTIONS: &str = "You read one memory of an AI agent and list the entities it names: \
people (PERSON), organizations (ORGANIZATION), projects (PROJECT), services and systems (SERVICE), \
tools and technologies (TOOL), places (PLACE), anything else named (OTHER) — each once, as written \
in the memory. Then list what the memory states about them as relations: subject (one of the \
entity names you listed), predicate (a short verb phrase such as \"works at\", \"lives in\", \
\"runs on port\", \"owned by\"), object (the value, as written). List only what the memory states; \
an empty list is fine.";

/// The name of the schema in the request.
const SCHEMA_NAME: &str = "memory_entities";

fn schema() -> Value {
    let types: Vec<&str> = TYPES.iter().map(|(name, _)| *name).collect();
    let object = |properties: Value, required: &[&str]| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": required,
            "properties": properties,
        })
    };
    object(
        json!({
            "entities": {"type": "array", "items": object(
                json!({"name": {"type": "string"}, "type": {"type": "string", "enum": types}}),
                &["name", "type"],
            )},
            "relations": {"type": "array", "items": object(
                json!({
                    "subject": {"type": "string"},
                    "predicate": {"type": "string"},
                    "object": {"type": "string"},
                }),
                &["subject", "predicate", "object"],
            )},
        }),
        &["entities", "relations"],
    )
}

/// What the model read of one memory.
#[derive(Debug, Default, PartialEq)]
pub struct Read {
    pub mentions: Vec<Mention>,
    pub relations: Vec<StatedRelation>,
}

/// Why reading a memory failed: the model could not be asked (try again
/// later), or answered off the schema (the memory keeps the rules'
/// entities).
#[derive(Debug)]
pub enum Failure {
    Unreachable(LlmError),
    BadReply(String),
}

/// What the model reads of `content`.
pub async fn read(llm: &LlmClient, content: &str) -> std::result::Result<Read, Failure> {
    let text: String = content.chars().take(MAX_TEXT_CHARS).collect();
    let reply = llm
        .chat_json(INSTRUCTIONS, &text, SCHEMA_NAME, schema())
        .await
        .map_err(|error| match error {
            // A reply, or a refusal of this memory (too long, say): asking
            // again would answer the same.
            LlmError::BadJson(_) | LlmError::Schema(_) | LlmError::Status(400 | 413 | 422) => {
                Failure::BadReply(error.to_string())
            }
            other => Failure::Unreachable(other),
        })?;
    read_reply(&reply).map_err(Failure::BadReply)
}

/// The reply checked against the schema (the server's strict mode is
/// trusted for nothing), names and values trimmed and bounded; a relation
/// whose subject is no entity it listed is dropped.
fn read_reply(reply: &Value) -> std::result::Result<Read, String> {
    let object = reply.as_object().ok_or("the reply is not a JSON object")?;
    if object.len() != 2 {
        return Err("the reply must have exactly entities and relations".into());
    }
    let list = |name: &str| {
        object
            .get(name)
            .and_then(Value::as_array)
            .ok_or(format!("{name} is not a list"))
    };
    let field = |item: &serde_json::Map<String, Value>, name: &str, max: usize| {
        item.get(name)
            .and_then(Value::as_str)
            .map(|s| s.trim().chars().take(max).collect::<String>())
            .filter(|s| !s.is_empty())
            .ok_or(format!("no {name}"))
    };
    let mut read = Read::default();
    for item in list("entities")? {
        let item = item.as_object().ok_or("an entity is not an object")?;
        if item.len() != 2 {
            return Err("an entity must have exactly name and type".into());
        }
        let name = field(item, "name", MAX_NAME_CHARS)?;
        let label = field(item, "type", 20)?;
        let entity_type = TYPES
            .iter()
            .find(|(n, _)| *n == label)
            .map(|(_, t)| *t)
            .ok_or(format!("unknown entity type {label:?}"))?;
        if read.mentions.len() < MAX_ENTITIES
            && !read.mentions.iter().any(|m| key(&m.name) == key(&name))
        {
            read.mentions.push(Mention { name, entity_type });
        }
    }
    for item in list("relations")? {
        let item = item.as_object().ok_or("a relation is not an object")?;
        if item.len() != 3 {
            return Err("a relation must have exactly subject, predicate and object".into());
        }
        let subject = key(&field(item, "subject", MAX_NAME_CHARS)?);
        let predicate = field(item, "predicate", MAX_PREDICATE_CHARS)?;
        let object = field(item, "object", MAX_OBJECT_CHARS)?;
        let named = read.mentions.iter().any(|m| key(&m.name) == subject);
        if named && read.relations.len() < MAX_RELATIONS {
            read.relations.push(StatedRelation {
                subject_key: subject,
                predicate,
                object,
            });
        }
    }
    Ok(read)
}

/// What one step did.
#[derive(Debug)]
pub enum Step {
    /// It read this many memories; more may follow.
    Read(usize),
    /// Every memory has been read.
    Done,
    /// The model could not be asked; nothing moved on.
    Unreachable(LlmError),
}

/// One step: the next [`BATCH`] memories read by the model, their
/// entities linked and relations stored, and the position moved past them
/// (past a memory the model answered off the schema for, too, logged), in
/// one transaction.
pub async fn step(store: &dyn Store, llm: &LlmClient) -> Result<Step> {
    let after = unit::read(store, |tx| {
        Box::pin(async move { tx.meta(READ_AFTER).await })
    })
    .await?
    .and_then(|v| v.parse::<i64>().ok())
    .unwrap_or(0);
    let memories = store.scan_memories(after, BATCH).await?;
    let Some(last) = memories.last().map(|m| m.seq) else {
        return Ok(Step::Done);
    };
    let mut reads = Vec::with_capacity(memories.len());
    for memory in &memories {
        match read(llm, &memory.content).await {
            Ok(read) => reads.push((memory.scope.namespace.clone(), memory.seq, read)),
            Err(Failure::Unreachable(error)) => return Ok(Step::Unreachable(error)),
            Err(Failure::BadReply(error)) => {
                tracing::warn!(%error, seq = memory.seq, "the model's entities of a memory were off the schema; it keeps the rules' entities");
            }
        }
    }
    let reads = Arc::new(reads);
    let now = crate::domain::now_micros();
    unit::transact(store, move |tx| {
        let reads = reads.clone();
        Box::pin(async move {
            for (namespace, seq, read) in reads.iter() {
                tx.link_entities(namespace, &[(*seq, read.mentions.clone())], now)
                    .await?;
                tx.set_relations(*seq, &read.relations).await?;
            }
            tx.set_meta(READ_AFTER, &last.to_string()).await
        })
    })
    .await?;
    Ok(Step::Read(memories.len()))
}

/// How many memories of `namespace` the model has yet to read.
pub async fn pending(store: &dyn Store, namespace: &str) -> Result<i64> {
    let namespace = Arc::new(namespace.to_owned());
    unit::read(store, move |tx| {
        let namespace = namespace.clone();
        Box::pin(async move {
            let after = tx
                .meta(READ_AFTER)
                .await?
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0);
            tx.count_memories_between(&namespace, after, i64::MAX).await
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_of_the_schema_is_read_and_bounded() {
        let reply = json!({
            "entities": [
                {"name": " Priya Raman ", "type": "PERSON"},
                {"name": "Stripe", "type": "ORGANIZATION"},
                {"name": "priya  raman", "type": "PERSON"},
            ],
            "relations": [
                {"subject": "Priya Raman", "predicate": "works at", "object": "Stripe"},
                {"subject": "Nobody", "predicate": "is", "object": "unnamed"},
            ],
        });
        let read = read_reply(&reply).unwrap();
        assert_eq!(
            read.mentions,
            [
                Mention {
                    name: "Priya Raman".into(),
                    entity_type: EntityType::Person
                },
                Mention {
                    name: "Stripe".into(),
                    entity_type: EntityType::Organization
                },
            ]
        );
        assert_eq!(
            read.relations,
            [StatedRelation {
                subject_key: "priya raman".into(),
                predicate: "works at".into(),
                object: "Stripe".into(),
            }]
        );
    }

    #[test]
    fn anything_off_the_schema_is_refused() {
        for reply in [
            json!([]),
            json!({"entities": []}),
            json!({"entities": [], "relations": [], "extra": 1}),
            json!({"entities": [{"name": "X", "type": "ROBOT"}], "relations": []}),
            json!({"entities": [{"name": " ", "type": "TOOL"}], "relations": []}),
            json!({"entities": [{"name": "X"}], "relations": []}),
            json!({"entities": [], "relations": [{"subject": "X", "predicate": "is"}]}),
        ] {
            assert!(read_reply(&reply).is_err(), "accepted {reply}");
        }
    }
}
