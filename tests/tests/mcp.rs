//! `engram mcp` against the real server, driven by the official MCP Python
//! client (tests/interop/mcp/client.py, run in the interop virtualenv): it
//! lists the tools, checks their schemas and calls every tool. What the
//! tools stored is then read back over gRPC, in the scope the command was
//! given.

use engram_client::proto;
use engram_tests::{Server, cli_binary, interop_dir, interop_tool};
use serde_json::Value;
use tokio::process::Command;

#[tokio::test]
async fn an_mcp_client_lists_and_calls_every_tool() {
    let python = interop_tool(".venv/bin/python");
    let server = Server::start().await;
    let namespace = "mcp-tools".to_owned();
    let script = interop_dir().join("mcp/client.py");
    let output = Command::new(python)
        .arg(&script)
        .env("ENGRAM_CLI", cli_binary())
        .env("ENGRAM_SERVER", &server.url)
        .env("ENGRAM_NAMESPACE", &namespace)
        .output()
        .await
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} failed ({}):\n{stdout}\n{stderr}",
        script.display(),
        output.status
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.last(), Some(&"mcp client: ok"), "{stdout}\n{stderr}");
    let ids: Value = serde_json::from_str(lines[lines.len() - 2]).expect("the ids, as JSON");

    // What the tools stored is there, in the command's scope.
    let engram = server.client().await;
    let scope = proto::Scope::new(&namespace)
        .with_project("shop")
        .with_agent("mcp-agent");
    for (key, memory_type) in [
        ("lesson", proto::MemoryType::Lesson),
        ("preference", proto::MemoryType::Preference),
    ] {
        let memory = engram
            .memory()
            .get_memory(proto::GetMemoryRequest {
                scope: Some(scope.clone()),
                id: ids[key].as_str().expect("an id").to_owned(),
            })
            .await
            .unwrap_or_else(|error| panic!("the {key} is stored: {error}"));
        assert_eq!(memory.memory_type(), memory_type, "{memory:?}");
        assert_eq!(
            memory.scope.as_ref().map(|s| s.namespace.as_str()),
            Some(namespace.as_str())
        );
    }
    let episode = engram
        .memory()
        .get_episode(proto::GetEpisodeRequest {
            scope: Some(scope.clone()),
            id: ids["episode"].as_str().expect("an id").to_owned(),
            ..Default::default()
        })
        .await
        .expect("the episode is stored");
    assert_eq!(episode.status(), proto::EpisodeStatus::Completed);
    assert_eq!(episode.steps.len(), 2, "{episode:?}");
    // Another namespace sees none of it.
    let elsewhere = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(proto::Scope::new("mcp-elsewhere").with_project("shop")),
            id: ids["lesson"].as_str().expect("an id").to_owned(),
        })
        .await
        .expect_err("another namespace does not see the lesson");
    assert_eq!(elsewhere.code(), engram_client::Code::NotFound);
}

/// A client that speaks no MCP gets no answer on standard output but the
/// protocol's: `engram mcp` writes nothing else there, and ends when its
/// input does.
#[tokio::test]
async fn engram_mcp_ends_with_its_input_and_writes_only_protocol() {
    let output = Command::new(cli_binary())
        .args(["mcp", "--namespace", "mcp-quiet"])
        .env("ENGRAM_SERVER", "http://127.0.0.1:1")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run engram mcp");
    assert!(output.stdout.is_empty(), "{output:?}");
    // No initialisation came: it says so and fails.
    assert!(!output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("engram: error: MCP"), "{stderr}");
}
