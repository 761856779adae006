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

/// One JSON-RPC exchange with `engram mcp` over its standard input and
/// output: initialise, then call `tool` with `arguments`; the call's
/// result, as the client receives it, and how many bytes it took.
async fn call_tool_over_stdio(
    server: &Server,
    flags: &[&str],
    tool: &str,
    arguments: Value,
) -> (Value, usize) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let mut child = Command::new(cli_binary())
        .arg("mcp")
        .args(flags)
        .env("ENGRAM_SERVER", &server.url)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start engram mcp");
    let mut input = child.stdin.take().expect("stdin");
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "engram-tests", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}),
    ];
    for message in messages {
        input
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
    }
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let read = async {
        while let Some(line) = lines.next_line().await.expect("read") {
            let reply: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if reply["id"] == 2 {
                return (reply["result"].clone(), line.len());
            }
        }
        panic!("engram mcp ended without answering the call");
    };
    let answer = tokio::time::timeout(std::time::Duration::from_secs(60), read)
        .await
        .expect("an answer in time");
    drop(input);
    answer
}

/// A search of many large memories puts at most --max-output bytes in the
/// model's context: the last hits are left out, and the text says so; the
/// text for the model is a list of the hits, not a second copy of the JSON.
#[tokio::test]
async fn a_tool_result_stays_within_max_output() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = proto::Scope::new("mcp-bounded");
    let memories: Vec<proto::MemoryInput> = (0..40)
        .map(|i| {
            engram_tests::input(
                proto::MemoryType::Fact,
                &format!(
                    "invoice {i} of the northern warehouse: {}",
                    format!("line item {i} shipped and billed; ").repeat(40)
                ),
            )
        })
        .collect();
    engram_tests::create_batch(&engram, &ns, memories).await;

    let search = serde_json::json!({"query": "invoice northern warehouse", "limit": 40});
    let (result, bytes) = call_tool_over_stdio(
        &server,
        &["--namespace", "mcp-bounded", "--max-output", "16KiB"],
        "search_memories",
        search,
    )
    .await;
    assert_eq!(result["isError"], false, "{result}");
    // The JSON-RPC envelope escapes the text and adds a little.
    assert!(bytes < 20 * 1024, "{bytes} bytes");
    let structured = &result["structuredContent"];
    let hits = structured["hits"].as_array().expect("hits");
    assert!(
        (1..40).contains(&hits.len()),
        "some hits, not all: {}",
        hits.len()
    );
    assert_eq!(structured["truncated"], true);
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(
        text.starts_with(&format!("{} memories found", hits.len())),
        "{text}"
    );
    assert!(text.contains("1. [fact] invoice"), "{text}");
    assert!(
        text.contains(&format!("{} of 40 hits", 40 - hits.len())),
        "{text}"
    );
    assert!(text.contains("--max-output"), "{text}");
    assert!(!text.contains("\"hits\""), "not the JSON again: {text}");
    assert!(
        text.len() + serde_json::to_string(structured).expect("JSON").len() <= 16 * 1024,
        "{} + structured",
        text.len()
    );

    // Within the default (64 KiB), ten of them fit whole.
    let (result, _) = call_tool_over_stdio(
        &server,
        &["--namespace", "mcp-bounded"],
        "search_memories",
        serde_json::json!({"query": "invoice northern warehouse", "limit": 10}),
    )
    .await;
    let hits = result["structuredContent"]["hits"]
        .as_array()
        .expect("hits");
    assert_eq!(hits.len(), 10, "{result}");
    assert_eq!(result["structuredContent"]["truncated"], false);
}
