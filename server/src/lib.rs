//! The Engram server: gRPC services over a domain engine and a storage layer.
//!
//! Data flows one way: request → [`grpc`] (validate, convert) → [`engine`]
//! (decide) → [`store`] (persist) → back.

pub mod archive;
pub mod commands;
pub mod config;
pub mod disk;
pub mod domain;
pub mod embed;
pub mod engine;
pub mod error;
pub mod grpc;
pub mod index;
pub mod jobs;
pub mod llm;
pub mod metrics;
pub mod openai;
pub mod server;
pub mod store;

/// TEMPORARY: the store's transfer modules still name the archive by its
/// old name; goes once they name `crate::archive` (store branch, issue 26).
#[doc(hidden)]
pub use archive as transfer;
