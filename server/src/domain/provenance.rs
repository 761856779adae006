//! Where a memory came from: how it was first written, by whom, and from
//! which episode or transcript — what `GetMemory` and `ExplainMemory`
//! answer with.

use super::{Actor, Micros};

/// How a memory was first written (`engram.v1.WriteMethod` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMethod {
    CreateMemory = 1,
    BatchCreateMemories = 2,
    Remember = 3,
}

impl WriteMethod {
    pub fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            1 => Some(WriteMethod::CreateMemory),
            2 => Some(WriteMethod::BatchCreateMemories),
            3 => Some(WriteMethod::Remember),
            _ => None,
        }
    }
}

/// What a write says of a new memory's source, beside its actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub method: WriteMethod,
    /// The episode the writer said the memory came from; empty when none.
    pub episode_id: String,
    /// For a Remember, the hex SHA-256 of the transcript as sent; else empty.
    pub transcript_hash: String,
    /// For a Remember on a server that keeps transcripts, the transcript as
    /// screened (secrets and injected instructions out); else empty.
    pub transcript: String,
}

impl Origin {
    /// A memory written by `method`, naming `episode_id` (may be empty).
    pub fn written(method: WriteMethod, episode_id: String) -> Origin {
        Origin {
            method,
            episode_id,
            transcript_hash: String::new(),
            transcript: String::new(),
        }
    }
}

/// A stored memory's provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub origin: Origin,
    /// Who first wrote it.
    pub actor: Actor,
    pub create_time: Micros,
}
