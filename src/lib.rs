//! Engram's gRPC API, `engram.v1`: the generated messages, the client and
//! server stubs of `MemoryService`, `LearningService` and `PolicyService`, and
//! the encoded file descriptor set used for server reflection.
//!
//! The `.proto` files in `proto/engram/v1/` are the contract; this crate is
//! compiled from them without a system `protoc`.

/// The `engram.v1` package.
pub mod v1 {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("engram.v1");
}

/// The encoded `FileDescriptorSet` of every `engram.v1` file, for gRPC server
/// reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("engram_descriptor");

/// The default namespace, used when a request's scope leaves it empty.
pub const DEFAULT_NAMESPACE: &str = "default";
