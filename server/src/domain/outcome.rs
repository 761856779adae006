//! Outcomes agents report, and what is learned from them: heuristics
//! (strategies that work), anti-patterns (strategies that fail), and each
//! agent's learning scope.

use serde::{Deserialize, Serialize};

use super::{Micros, Scope};

/// One reported attempt at a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOutcome {
    pub id: String,
    /// namespace, agent_id and project_id.
    pub namespace: String,
    pub agent_id: String,
    pub project_id: String,
    pub task: String,
    pub task_type: String,
    pub task_type_inferred: bool,
    pub success: bool,
    pub strategy: String,
    pub duration_ms: Option<i64>,
    pub error: String,
    pub feedback: String,
    pub create_time: Micros,
    pub seq: i64,
}

impl TaskOutcome {
    /// Whose learning the outcome feeds.
    pub fn owner(&self) -> Owner {
        Owner {
            namespace: self.namespace.clone(),
            agent_id: self.agent_id.clone(),
            project_id: self.project_id.clone(),
        }
    }
}

/// Who learning records belong to: exactly this namespace, agent and
/// project (an empty agent or project is one of its own, not a wildcard).
/// What an outcome learns into, and what Forget may delete.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Owner {
    pub namespace: String,
    pub agent_id: String,
    pub project_id: String,
}

impl From<&Scope> for Owner {
    /// The owner a scope names (its user and session play no part).
    fn from(scope: &Scope) -> Owner {
        Owner {
            namespace: scope.namespace.clone(),
            agent_id: scope.agent_id.clone(),
            project_id: scope.project_id.clone(),
        }
    }
}

/// An outcome to record, validated; `task_type` already inferred if needed.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOutcome {
    pub scope: Scope,
    pub task: String,
    pub task_type: String,
    pub task_type_inferred: bool,
    pub success: bool,
    pub strategy: String,
    pub duration_ms: Option<i64>,
    pub error: String,
    pub feedback: String,
}

/// A strategy that tends to work for a task type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heuristic {
    pub id: String,
    pub namespace: String,
    pub agent_id: String,
    pub project_id: String,
    pub task_type: String,
    pub strategy: String,
    pub confidence: f64,
    pub occurrence_count: i64,
    pub success_count: i64,
    pub last_validated_time: Micros,
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
    pub seq: i64,
}

/// A strategy that keeps failing the same way for a task type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AntiPattern {
    pub id: String,
    pub namespace: String,
    pub agent_id: String,
    pub project_id: String,
    pub task_type: String,
    pub strategy: String,
    pub error: String,
    pub occurrence_count: i64,
    pub better_alternative: String,
    pub better_alternative_heuristic_id: String,
    pub last_seen_time: Micros,
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
    pub seq: i64,
}

/// Whether a learning record was made or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Change {
    Created,
    Updated,
}

/// What recording an outcome stored and changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub outcome: TaskOutcome,
    pub heuristic: Option<(Heuristic, Change)>,
    pub anti_pattern: Option<(AntiPattern, Change)>,
}

/// What an agent may learn from.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentScope {
    pub namespace: String,
    pub agent_id: String,
    pub can_learn: Vec<String>,
    pub cannot_learn: Vec<String>,
    pub min_occurrences: i64,
    /// `None` for an agent that never had a scope set (the defaults).
    pub set: Option<AgentScopeSet>,
}

/// When and how often an agent scope was set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AgentScopeSet {
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
}

impl AgentScope {
    pub fn etag(&self) -> String {
        self.set
            .map(|s| format!("v{}", s.version))
            .unwrap_or_default()
    }
}

/// Filters of the outcome-learning lists; `None` matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LearningFilter {
    pub task_type: Option<String>,
    pub success: Option<bool>,
    pub min_confidence: f64,
}

/// Which kinds Forget deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForgetKind {
    Outcomes,
    Heuristics,
    AntiPatterns,
    Memories,
}

/// A validated Forget.
#[derive(Debug, Clone, PartialEq)]
pub struct ForgetRequest {
    pub scope: Scope,
    /// Outcomes created and anti-patterns last seen before this are stale.
    pub stale_before: Micros,
    pub below_confidence: f64,
    pub kinds: Vec<ForgetKind>,
    pub dry_run: bool,
}

/// How many of each kind Forget deleted (or would delete).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Forgotten {
    pub outcomes: i64,
    pub heuristics: i64,
    pub anti_patterns: i64,
    pub memories: i64,
}

/// One task type's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskTypeStats {
    pub task_type: String,
    pub outcomes: i64,
    pub successes: i64,
    pub heuristics: i64,
    pub anti_patterns: i64,
}
