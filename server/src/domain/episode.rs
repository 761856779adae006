//! Episodes (task runs, step by step, with their outcome) and what is learned
//! from them.

use serde::{Deserialize, Serialize};

use super::{Micros, Scope};

/// An episode's lifecycle (`engram.v1.EpisodeStatus` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpisodeStatus {
    Running = 1,
    Completed = 2,
    Abandoned = 3,
}

impl EpisodeStatus {
    pub fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            1 => Some(EpisodeStatus::Running),
            2 => Some(EpisodeStatus::Completed),
            3 => Some(EpisodeStatus::Abandoned),
            _ => None,
        }
    }
}

/// What a task was about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EpisodeContext {
    pub language: String,
    pub framework: String,
    pub domain: String,
    pub complexity: String,
    pub tags: Vec<String>,
}

/// One action of an episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub number: i32,
    pub tool: String,
    pub action: String,
    /// JSON text, or empty.
    pub parameters: String,
    /// The `engram.v1.StepResult` number (0 when not reported).
    pub result: i32,
    pub output: String,
    pub latency_ms: i64,
    pub time: Micros,
}

impl Step {
    /// Whether `other` is this step sent again: the same number and content.
    /// The time is left out, since a client that does not set it gets the
    /// time of each sending.
    pub fn same_content(&self, other: &Step) -> bool {
        self.number == other.number
            && self.tool == other.tool
            && self.action == other.action
            && self.parameters == other.parameters
            && self.result == other.result
            && self.output == other.output
            && self.latency_ms == other.latency_ms
    }
}

/// Which of an episode's steps to read: those numbered above `after`, at
/// most `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepWindow {
    pub after: i32,
    pub limit: usize,
}

impl StepWindow {
    /// Every step.
    pub const ALL: StepWindow = StepWindow {
        after: i32::MIN,
        limit: usize::MAX,
    };
}

/// A mistake as reported, before it is merged into a card.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MistakeReport {
    pub mistake_type: String,
    pub worker_id: String,
    pub correct_decision: String,
    pub evidence: String,
    pub lesson: String,
}

/// How an episode ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub score: f64,
    pub success: bool,
    pub summary: String,
    pub mistakes: Vec<String>,
    pub successes: Vec<String>,
    pub mistake_cards: Vec<MistakeReport>,
}

/// A stored episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    pub id: String,
    pub scope: Scope,
    pub task_id: String,
    pub description: String,
    pub task_type: String,
    pub context: EpisodeContext,
    pub status: EpisodeStatus,
    /// Filled only when the steps were asked for.
    pub steps: Vec<Step>,
    pub step_count: i32,
    pub last_step: i32,
    pub outcome: Option<Outcome>,
    pub create_time: Micros,
    pub update_time: Micros,
    pub complete_time: Option<Micros>,
    pub version: i64,
    pub seq: i64,
}

impl Episode {
    pub fn etag(&self) -> String {
        format!("v{}", self.version)
    }
}

/// An episode to start, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEpisode {
    pub scope: Scope,
    pub task_id: String,
    pub description: String,
    pub task_type: String,
    pub context: EpisodeContext,
}

/// A request for one page of episodes, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeQuery {
    pub scope: Scope,
    pub task_id: Option<String>,
    pub status: Option<EpisodeStatus>,
    pub started_after: Option<Micros>,
    pub started_before: Option<Micros>,
    pub page_size: usize,
    /// (create_time, seq) of the last episode of the previous page.
    pub after: Option<(Micros, i64)>,
}

/// Which rule a step broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepProblem {
    /// Its number is not above the step before it.
    Misnumbered,
    /// The episode already has as many steps as it may.
    TooMany,
}

/// Why a step was not stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The step's index in the call.
    pub index: usize,
    pub step_number: i32,
    pub problem: StepProblem,
    pub reason: String,
}

/// What an append stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    /// Steps stored by this append, and steps identical to stored ones.
    pub accepted: usize,
    /// Of `accepted`, the steps that were stored before (sent again).
    pub repeated: usize,
    pub rejections: Vec<Rejection>,
    /// The episode's step count afterwards.
    pub step_count: i32,
}

/// The task_id of global rules (those of no one task).
pub const GLOBAL: &str = "";

/// Whether a rule came from a success, a mistake or a consolidation
/// (`engram.v1.TaskRuleOrigin` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOrigin {
    Works = 1,
    Avoid = 2,
    HighScore = 3,
    Consolidated = 4,
}

impl RuleOrigin {
    pub fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            1 => Some(RuleOrigin::Works),
            2 => Some(RuleOrigin::Avoid),
            3 => Some(RuleOrigin::HighScore),
            4 => Some(RuleOrigin::Consolidated),
            _ => None,
        }
    }
}

/// A learned rule: for one task, or global (empty `task_id`).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRule {
    pub id: String,
    pub namespace: String,
    pub task_id: String,
    pub text: String,
    pub origin: RuleOrigin,
    pub create_time: Micros,
    pub seq: i64,
}

/// A recurring mistake and the decision that should have been made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MistakeCard {
    pub id: String,
    pub namespace: String,
    pub mistake_type: String,
    pub task_id: String,
    pub worker_id: String,
    pub correct_decision: String,
    pub evidence: String,
    pub lesson: String,
    pub seen_count: i64,
    pub first_seen_episode_id: String,
    pub last_seen_episode_id: String,
    /// Orders sightings: a later sighting has a larger value.
    pub last_seen: i64,
    pub create_time: Micros,
    pub update_time: Micros,
    pub version: i64,
}

impl MistakeCard {
    pub fn etag(&self) -> String {
        format!("v{}", self.version)
    }
}

/// A mistake reported by episodes, once per namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedMistake {
    pub id: String,
    pub text: String,
}

/// What completing an episode taught.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Learned {
    pub rules_added: Vec<String>,
    pub mistake_cards_merged: usize,
    pub consolidated: bool,
}

/// What a consolidation run wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Consolidation {
    pub rules: Vec<TaskRule>,
    pub episodes_considered: usize,
}

/// One task's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskStats {
    pub task_id: String,
    pub rules: i64,
    pub scored_episodes: i64,
    pub mean_score: f64,
}

/// What the learning service knows about a namespace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub total_episodes: i64,
    pub global_rules: i64,
    pub tasks: Vec<TaskStats>,
    pub mistakes: i64,
    pub mistake_cards: i64,
    pub top_mistake_cards: Vec<MistakeCard>,
    /// (memory type code, count) of the memories true now, by type.
    pub memories_per_type: Vec<(i32, i64)>,
    /// The memories kept but no longer true.
    pub invalidated_memories: i64,
    /// Outcome learning per task type, by task type.
    pub task_types: Vec<crate::domain::outcome::TaskTypeStats>,
}

/// What BuildContext shows about a task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskKnowledge {
    pub task_rules: Vec<TaskRule>,
    pub global_rules: Vec<TaskRule>,
    pub mistakes: Vec<ReportedMistake>,
    pub mistake_cards: Vec<MistakeCard>,
    /// The most recent completed episodes of the task, newest first.
    pub recent_episodes: Vec<Episode>,
    /// Mean score and count of all completed episodes of the task.
    pub mean_score: Option<(f64, i64)>,
    /// The most confident heuristics of the task type.
    pub heuristics: Vec<crate::domain::outcome::Heuristic>,
    /// The most frequent anti-patterns of the task type.
    pub anti_patterns: Vec<crate::domain::outcome::AntiPattern>,
}
