//! Checking a record beyond its types: required text, ranges, keys.

use super::Record;

impl Record {
    /// Checks what the types alone do not: required text, ranges. Returns
    /// the first problem, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        required("namespace", self.namespace())?;
        match self {
            Record::Memory(r) => {
                required("id", &r.id)?;
                required("content", &r.content)?;
                unit("importance", r.importance)?;
                unit("confidence", r.confidence)?;
                at_least("seen_count", r.seen_count, 1)?;
                at_least("access_count", r.access_count, 0)?;
                at_least("version", r.version, 1)
            }
            Record::MemoryLink(r) => {
                required("memory_id", &r.memory_id)?;
                required("other_id", &r.other_id)
            }
            Record::MemoryProvenance(r) => required("memory_id", &r.memory_id),
            Record::MemoryRevision(r) => {
                required("memory_id", &r.memory_id)?;
                at_least("version", r.version, 1)?;
                field_names("changed_fields", &r.changed_fields)
            }
            Record::Episode(r) => {
                required("id", &r.id)?;
                if let Some(outcome) = &r.outcome {
                    unit("outcome.score", outcome.score)?;
                }
                at_least("step_count", r.step_count.into(), 0)?;
                at_least("last_step", r.last_step.into(), 0)?;
                at_least("version", r.version, 1)
            }
            Record::Step(r) => {
                required("episode_id", &r.episode_id)?;
                required("tool", &r.tool)?;
                required("action", &r.action)?;
                at_least("step_number", r.step_number.into(), 1)
            }
            Record::TaskRule(r) => {
                required("id", &r.id)?;
                required("text", &r.text)
            }
            Record::EpisodeLesson(r) => {
                required("id", &r.id)?;
                required("text", &r.text)?;
                at_least("seen_count", r.seen_count, 1)
            }
            Record::MistakeCard(r) => {
                required("id", &r.id)?;
                at_least("seen_count", r.seen_count, 1)?;
                at_least("version", r.version, 1)
            }
            Record::LearningState(r) => {
                at_least("completed_episodes", r.completed_episodes, 0)?;
                at_least("tick", r.tick, 0)
            }
            Record::Outcome(r) => {
                required("id", &r.id)?;
                required("agent_id", &r.agent_id)
            }
            Record::Heuristic(r) => {
                required("id", &r.id)?;
                unit("confidence", r.confidence)?;
                at_least("occurrence_count", r.occurrence_count, 0)?;
                at_least("version", r.version, 1)
            }
            Record::AntiPattern(r) => {
                required("id", &r.id)?;
                at_least("occurrence_count", r.occurrence_count, 0)?;
                at_least("version", r.version, 1)
            }
            Record::AgentScope(r) => {
                required("agent_id", &r.agent_id)?;
                at_least("min_occurrences", r.min_occurrences, 1)?;
                at_least("version", r.version, 1)
            }
            Record::Entity(r) => {
                required("id", &r.id)?;
                required("name", &r.name)?;
                folded("key", &r.key, &r.name)
            }
            Record::EntityName(r) => {
                required("entity_id", &r.entity_id)?;
                required("name", &r.name)?;
                folded("key", &r.key, &r.name)
            }
            Record::MemoryEntity(r) => {
                required("memory_id", &r.memory_id)?;
                required("entity_id", &r.entity_id)
            }
            Record::MemoryRelation(r) => {
                required("memory_id", &r.memory_id)?;
                at_least("position", r.position, 0)?;
                required("subject_key", &r.subject_key)?;
                folded("subject_key", &r.subject_key, &r.subject_key)?;
                required("predicate", &r.predicate)?;
                required("object", &r.object)
            }
        }
    }
}

/// A name's key must be the key the server makes of it, or lookups by
/// name would miss it.
fn folded(field: &str, key: &str, name: &str) -> Result<(), String> {
    if key != crate::domain::entity::key(name) {
        return Err(format!("{field} must be the case-folded name"));
    }
    Ok(())
}

fn required(field: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("{field} must not be empty"));
    }
    Ok(())
}

/// Names of a memory's fields: stored as one comma-separated text, so a
/// name may hold no comma (nor be blank).
fn field_names(field: &str, names: &[String]) -> Result<(), String> {
    match names
        .iter()
        .find(|name| name.trim().is_empty() || name.contains(','))
    {
        Some(bad) => Err(format!("{field} must be field names (got {bad:?})")),
        None => Ok(()),
    }
}

fn unit(field: &str, value: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&value) {
        return Err(format!("{field} must be between 0 and 1 (got {value})"));
    }
    Ok(())
}

fn at_least(field: &str, value: i64, least: i64) -> Result<(), String> {
    if value < least {
        return Err(format!("{field} must be at least {least} (got {value})"));
    }
    Ok(())
}
