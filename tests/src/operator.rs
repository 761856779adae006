//! The operator's scripts of `tests/operator/`, run as the README says.

use std::path::Path;

use tokio::process::Command;

use crate::binaries::binaries_dir;

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
