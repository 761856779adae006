//! Background jobs the server runs beside the gRPC services, each until it
//! is aborted: [`retention`] purges what is no longer kept,
//! [`embedding_backfill`] gives every stored memory its vector, and
//! [`entity_backfill`] links memories stored before entities existed to
//! theirs. (The search index follows the change feed by itself: see
//! [`crate::index`].)

pub mod embedding_backfill;
pub mod entity_backfill;
pub mod entity_llm;
pub mod retention;
