//! Domain logic with no I/O of its own: what makes two memories identical,
//! how search hits are ranked, how a context block is assembled, and what a
//! watcher of the change feed is shown.

pub mod context;
pub mod dedup;
pub mod learning;
pub mod outcomes;
pub mod policy;
pub mod search;
pub mod watch;
