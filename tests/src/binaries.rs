//! The workspace's programs the tests run, built once per test process in
//! the profile the tests were built in.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `engram-server`, built (with every binary of the workspace, see
/// [`binaries_dir`]) in the profile this program was built in — debug for
/// tests, release for benchmarks — so a stale binary is never run.
pub fn server_binary() -> PathBuf {
    binary("engram-server")
}

/// The `engram` command, built like the server.
pub fn cli_binary() -> PathBuf {
    binary("engram")
}

fn binary(name: &str) -> PathBuf {
    let path = binaries_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} not found", path.display());
    path
}

/// What `cargo test` sets for a test program besides `CARGO_PKG_*`.
const CARGO_TEST_VARS: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
];

/// Builds every binary of the workspace once per process and returns the
/// directory they are in. One `cargo build --workspace --bins` resolves
/// dependency features as `cargo test --workspace` does, so the two share
/// their compiled artifacts instead of rebuilding each other's.
pub(crate) fn binaries_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // Tests run from target/<profile>/deps/, binaries from target/<profile>/.
        let exe = std::env::current_exe().expect("current_exe");
        let mut profile_dir = exe.parent().expect("target/<profile>");
        if profile_dir.ends_with("deps") {
            profile_dir = profile_dir.parent().expect("target/<profile>");
        }
        let mut build = vec!["build", "--quiet", "--workspace", "--bins"];
        if profile_dir.ends_with("release") {
            build.push("--release");
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = std::process::Command::new(cargo);
        // Without what `cargo test` sets for this test program: build
        // scripts (ring's, through the `cc` crate) name some of these as
        // inputs, and a build that sees other values than the shell's
        // rebuilds them and all that depends on them — once here, and once
        // more at the next cargo command of the shell.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("CARGO_PKG_") || CARGO_TEST_VARS.contains(&name.as_ref()) {
                command.env_remove(name.as_ref());
            }
        }
        let status = command.args(&build).status().expect("run cargo build");
        assert!(status.success(), "building the workspace's binaries failed");
        profile_dir.to_owned()
    })
}
