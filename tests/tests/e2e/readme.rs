//! The README's examples are tested: every quoted snippet is the text of a
//! region of a test or scenario that runs (marked `readme:begin NAME` ...
//! `readme:end NAME`), and every shell block marked `<!-- test: sh -->` is
//! run against a real server, with the real grpcurl and `engram` binaries.

use std::path::{Path, PathBuf};

use engram_tests::{Server, cli_binary, interop_tool};
use tokio::process::Command;

/// The address the README's examples use.
const README_ADDRESS: &str = "127.0.0.1:50051";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_owned()
}

/// The fenced code blocks that follow an HTML comment `<!-- {marker}... -->`,
/// as (the rest of the comment, the block's text).
fn marked_blocks(readme: &str, marker: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut blocks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line
            .trim()
            .strip_prefix(&format!("<!-- {marker}"))
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            continue;
        };
        let fence = lines.get(i + 1).copied().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "a code block follows line {}: {line}",
            i + 1
        );
        let body: Vec<&str> = lines[i + 2..]
            .iter()
            .take_while(|l| !l.starts_with("```"))
            .copied()
            .collect();
        blocks.push((rest.trim().to_owned(), body.join("\n")));
    }
    blocks
}

/// The lines between `readme:begin {name}` and `readme:end {name}` in
/// `source`, without their common indentation.
fn region(source: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    let begin = lines
        .iter()
        .position(|l| l.trim_end().ends_with(&format!("readme:begin {name}")))?;
    let end = begin
        + lines[begin..]
            .iter()
            .position(|l| l.trim_end().ends_with(&format!("readme:end {name}")))?;
    let body = &lines[begin + 1..end];
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    Some(
        body.iter()
            .map(|l| l.get(indent..).unwrap_or("").trim_end())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[test]
fn every_quoted_snippet_is_the_code_a_test_runs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let snippets = marked_blocks(&readme, "snippet:");
    let sources: Vec<&str> = snippets.iter().map(|(s, _)| s.as_str()).collect();
    for expected in [
        "tests/tests/e2e/client.rs#rust",
        "tests/tests/e2e/watch.rs#watch",
        "clients/python/tests/test_readme.py#connect",
        "clients/python/tests/test_readme.py#create-search",
        "clients/python/tests/test_readme.py#context",
        "clients/python/tests/test_readme.py#errors",
        "clients/typescript/test/readme.test.ts#import",
        "clients/typescript/test/readme.test.ts#connect",
        "clients/typescript/test/readme.test.ts#create-search",
        "clients/typescript/test/readme.test.ts#context",
        "clients/typescript/test/readme.test.ts#errors",
        "tests/operator/backup.sh#backup",
        "tests/operator/restore.sh#restore",
        "tests/operator/export.sh#export",
        "tests/operator/import.sh#import",
        "tests/operator/migrate.sh#migrate",
        "tests/operator/replicas.sh#replicas",
        "tests/operator/replicas.sh#replicas-use",
        "tests/interop/mcp/client.py#connect",
        "tests/interop/mcp/client.py#search",
        "tests/interop/mcp/client.py#errors",
        "clients/typescript/test/grpc-web.test.ts#browser",
    ] {
        assert!(
            sources.contains(&expected),
            "the README quotes {expected}: {sources:?}"
        );
    }
    assert_quotes_the_code(Path::new("README.md"), &snippets);
}

/// The client packages' own READMEs, shown where a package is installed
/// from; their snippets name files by their paths in the repository too.
const PACKAGE_READMES: &[&str] = &["clients/python/README.md", "clients/typescript/README.md"];

#[test]
fn the_packages_readmes_quote_code_a_test_runs_too() {
    for path in PACKAGE_READMES {
        let readme = std::fs::read_to_string(repo().join(path)).expect(path);
        let snippets = marked_blocks(&readme, "snippet:");
        assert!(!snippets.is_empty(), "{path} quotes its tested examples");
        assert_quotes_the_code(Path::new(path), &snippets);
    }
}

/// Asserts that every `(PATH#NAME, quoted)` snippet of `readme` is the text
/// of region NAME of the file PATH.
fn assert_quotes_the_code(readme: &Path, snippets: &[(String, String)]) {
    for (source, quoted) in snippets {
        let (path, name) = source.split_once('#').expect("PATH#NAME");
        let text =
            std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let code = region(&text, name).unwrap_or_else(|| panic!("no region {name} in {path}"));
        assert_eq!(
            quoted.trim_end(),
            code.trim_end(),
            "{}'s copy of {source} differs from the code",
            readme.display()
        );
    }
}

#[tokio::test]
async fn every_shell_example_runs_against_a_real_server() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let scripts = marked_blocks(&readme, "test: sh");
    assert!(
        scripts.len() >= 2,
        "the grpcurl and CLI sections are tested"
    );
    let grpcurl_dir = interop_tool(".venv/bin/grpcurl")
        .parent()
        .expect("bin")
        .to_owned();
    let engram_dir = cli_binary().parent().expect("bin").to_owned();
    let path = format!(
        "{}:{}:{}",
        engram_dir.display(),
        grpcurl_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (_, script) in scripts {
        // A fresh server each, as a reader would have.
        let server = Server::start().await;
        let script = script.replace(README_ADDRESS, server.address());
        let output = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script])
            .env("PATH", &path)
            .env_remove("ENGRAM_SERVER")
            .output()
            .await
            .expect("run bash");
        assert!(
            output.status.success(),
            "README example failed ({}):\n{script}\n--- stdout\n{}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
