//! The end-to-end test harness: starts the real `engram-server` binary on an
//! ephemeral port with a temporary database and connects the client crate to it.
//!
//! [`Server`] runs one server process (`server/`), on the database
//! [`Backend`] says; `binaries` builds the workspace's programs the tests
//! run, `operator` runs the operator's scripts, `interop` and `model` find
//! what the test command installs first. `memories` makes the common calls
//! in one line, `embedding` waits for the background embedding,
//! `assertions` checks answers, `keys` computes a key's digest.

pub mod fake_embeddings;
pub mod fake_llm;
pub mod fake_openai;
pub mod fake_rerank;
pub mod postgres;
pub mod scrape;
pub mod tcp_proxy;

mod assertions;
mod backend;
mod binaries;
mod embedding;
mod interop;
mod keys;
mod memories;
mod model;
mod operator;
mod server;

pub use assertions::{assert_close, assert_rejects, uuid_v7};
pub use backend::{BACKEND_VAR, Backend};
pub use binaries::{cli_binary, server_binary};
pub use embedding::{embedded, pending_embeddings};
pub use interop::{interop_dir, interop_tool};
pub use keys::sha256_hex;
pub use memories::{
    create, create_batch, hit_contents, input, list_all, listed_ids, scope, search, search_meaning,
};
pub use model::test_model;
pub use operator::{
    engram_server, import_into, run_operator_script, run_operator_script_with_env, sqlite_url,
};
pub use server::{DATABASE_FILE, Server, refuses_to_start};
