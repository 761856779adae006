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
pub mod rerank;
pub mod server;
pub mod store;
