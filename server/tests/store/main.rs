//! The store's suites, through its public interface: the conformance suite
//! (the same checks of every [`engram_server::store::Store`] and
//! [`engram_server::store::tx::Tx`] primitive on SQLite and on PostgreSQL),
//! the PostgreSQL schema's triggers, and what SQLite's change feed does on
//! its own. The PostgreSQL checks need the throwaway server the test command
//! starts (`scripts/postgres.sh`).

mod conformance;
mod postgres_schema;
mod sqlite_feed;
mod sqlite_store;
