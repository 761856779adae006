//! Domain logic with no I/O of its own: what makes two memories identical,
//! how search hits are ranked, how a context block is assembled, and what a
//! watcher of the change feed is shown. [`Engine`] gathers the operations
//! the gRPC services call.

pub mod consolidation;
pub mod context;
pub mod contradictions;
pub mod create_batch;
pub mod dedup;
pub mod entities;
pub mod episode_learning;
pub mod episodes;
pub mod explain;
pub mod forgetting;
pub mod injection;
pub mod learning;
pub mod memories;
pub mod outcome_learning;
pub mod outcomes;
pub mod policy;
pub mod search;
pub mod secrets;
pub mod service;
pub mod text;
pub mod unit;
pub mod watch;
pub mod write_plan;

pub use service::Engine;
