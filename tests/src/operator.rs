//! The operator's scripts of `tests/operator/`, run as the README says.

use std::path::Path;
use std::process::Output;

use tokio::process::Command;

use crate::binaries::{binaries_dir, server_binary};
use crate::server::DATABASE_FILE;

/// Runs the operator's script `tests/operator/{name}` (which the README
/// quotes) with bash in `dir`, with this build's `engram-server` and
/// `engram` first on the PATH; asserts it succeeds and returns what it wrote
/// on standard error.
pub async fn run_operator_script(name: &str, dir: &Path) -> String {
    run_operator_script_with_env(name, dir, &[]).await
}

/// [`run_operator_script`] with environment variables set for the script
/// (e.g. the database it is to use).
pub async fn run_operator_script_with_env(name: &str, dir: &Path, envs: &[(&str, &str)]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("operator")
        .join(name);
    let path = format!(
        "{}:{}",
        binaries_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg(&script)
        .current_dir(dir)
        .env("PATH", path)
        .envs(envs.iter().copied())
        .kill_on_drop(true)
        .output()
        .await
        .expect("run bash");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{} failed ({}):\n{}{stderr}",
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

/// Runs `engram-server` with `args` (a command such as `export`).
pub async fn engram_server(args: &[&str]) -> Output {
    Command::new(server_binary())
        .args(args)
        .output()
        .await
        .expect("run engram-server")
}

/// The URL of the SQLite database a server keeps in `dir`.
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join(DATABASE_FILE).display())
}

/// Imports `file` into the SQLite database in `dir` (created when
/// missing); returns the command's output.
pub async fn import_into(dir: &Path, file: &Path) -> Output {
    let file = file.to_str().expect("UTF-8 path");
    engram_server(&["import", "--database", &sqlite_url(dir), "--from", file]).await
}
