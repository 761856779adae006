//! What the policy service decides about a transcript (DESIGN §6).

use std::collections::BTreeMap;

use super::{Created, MemoryLevel, MemoryType};

/// Who made a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DecisionSource {
    Rules,
    Llm,
    Fallback,
}

/// Whether and how to remember a transcript.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Decision {
    pub should_store: bool,
    pub memory_type: MemoryType,
    pub summary: String,
    pub importance: f64,
    pub level: MemoryLevel,
    pub metadata: BTreeMap<String, String>,
    pub source: DecisionSource,
    pub reason: String,
}

/// Which classifier a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClassifyMode {
    /// The model when one is configured, else the rules.
    #[default]
    Auto,
    /// The rules, whether or not a model is configured.
    Rules,
    /// The model; refused when none is configured.
    Llm,
}

/// A Remember's answer: the decision and the memory it stored or reinforced.
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    pub decision: Decision,
    pub created: Option<Created>,
    /// The ids of the memories the created one superseded.
    pub superseded: Vec<String>,
}
