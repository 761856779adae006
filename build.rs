//! Compiles `proto/` into Rust with protox (a pure-Rust protobuf compiler, so no
//! system `protoc` is needed) and tonic-prost-build, and writes the encoded
//! descriptor set that the server's reflection service serves.

use std::{env, fs, path::PathBuf};

use protox::prost::Message as _;

const PROTO_ROOT: &str = "proto";
const PROTOS: &[&str] = &[
    "proto/engram/v1/common.proto",
    "proto/engram/v1/memory.proto",
    "proto/engram/v1/learning.proto",
    "proto/engram/v1/policy.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={PROTO_ROOT}");
    let descriptors = protox::compile(PROTOS, [PROTO_ROOT])?;
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(
        out_dir.join("engram_descriptor.bin"),
        descriptors.encode_to_vec(),
    )?;
    tonic_prost_build::configure()
        // Services implemented in a later step answer UNIMPLEMENTED by default
        // instead of failing to compile.
        .generate_default_stubs(true)
        // Our codec: an undecodable request is INVALID_ARGUMENT, not INTERNAL.
        .codec_path("crate::codec::Codec")
        // `prost::Name` on every message, so tools (the `engram` command's
        // JSON output, `google.protobuf.Any` packing) can look a message up
        // by its full name.
        .compile_fds_with_config(descriptors, {
            let mut config = tonic_prost_build::Config::new();
            config.enable_type_names();
            // Maps in key order: a message encodes the same bytes every
            // time, which request-id fingerprints rely on (and JSON output
            // reads the same from run to run).
            config.btree_map(["."]);
            config
        })?;
    Ok(())
}
