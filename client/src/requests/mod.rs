//! Builders for the requests with many optional fields. Each converts into
//! its request message, so it can be passed wherever the message can.
//!
//! One file per kind of request: `memory` creates a memory, `query` lists
//! and searches them (their shared filter setters in `filter`), `context`
//! builds a context block, `episode` starts an episode, `outcome` records
//! one, `transcript` classifies or remembers a transcript, and `watch`
//! follows the changes.

/// Implements `From<Builder> for proto::Request` for builders that wrap
/// their request message.
macro_rules! into_request {
    ($($builder:ident => $request:ident),* $(,)?) => {
        $(impl From<$builder> for proto::$request {
            fn from(builder: $builder) -> proto::$request {
                builder.0
            }
        })*
    };
}

#[macro_use]
mod filter;

mod context;
mod episode;
mod memory;
mod outcome;
mod query;
mod transcript;
mod watch;

pub use context::BuildContext;
pub use episode::StartEpisode;
pub use memory::CreateMemory;
pub use outcome::RecordOutcome;
pub use query::{ListMemories, SearchMemories};
pub use transcript::{Classify, Remember};
pub use watch::WatchMemories;
