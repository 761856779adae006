//! The end-to-end tests: the real `engram-server` binary over a real
//! socket, through the client crate, real generated stubs in other
//! languages, grpcurl and the `engram` command line. One test binary, a
//! module per area: one link instead of one per file, and the tests of all
//! areas share the test threads (a long test of one area no longer leaves
//! the other cores idle while the next binary waits). `cargo test --test
//! e2e -- watch::` runs one area.

mod backup;
mod bounded;
mod cli;
mod client;
mod contradiction_judge;
mod contradictions;
mod conversation_context;
mod embedder_api;
mod entities;
mod entity_model;
mod episodes;
mod hardening;
mod history;
mod interop;
mod llm;
mod mcp;
mod memories;
mod metrics;
mod near_duplicates;
mod occurred_at;
mod outcomes;
mod overload;
mod policy;
mod postgres;
mod provenance;
mod readme;
mod replicas;
mod reranker;
mod retention;
mod scopes;
mod search_and_context;
mod search_cues;
mod search_index;
mod secrets;
mod security;
mod semantic_search;
mod server;
mod storage_full;
mod strategy_similarity;
mod supersede;
mod tenancy;
mod transfer;
mod validation;
mod watch;
mod writer_limits;
