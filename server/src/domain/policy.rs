//! What the policy service decides about a transcript (DESIGN §6).

use std::collections::BTreeMap;

use super::{MemoryLevel, MemoryType};

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
