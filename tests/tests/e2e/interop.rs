//! Other languages and tools against the real server: Python stubs generated
//! by grpcio-tools, Node.js with @grpc/grpc-js and @grpc/proto-loader, and
//! the real grpcurl binary through server reflection. The tools come from
//! `tests/interop/setup.sh`, which the test command runs first.

use std::path::Path;
use std::process::Output;

use engram_tests::{Server, interop_dir, interop_tool};
use serde_json::Value;
use tokio::process::Command;

/// Runs a scenario script against `server` and asserts it passed: exit 0 and
/// its last line saying so (the scripts assert every answer themselves).
async fn run_scenario(server: &Server, script: &Path, last_line: &str) {
    let output = Command::new("bash")
        .arg(script)
        .env("ENGRAM_ADDR", server.address())
        .output()
        .await
        .unwrap_or_else(|error| panic!("run {}: {error}", script.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} failed ({}):\n{stdout}\n{stderr}",
        script.display(),
        output.status
    );
    assert_eq!(stdout.lines().last(), Some(last_line), "{stdout}\n{stderr}");
}

#[tokio::test]
async fn python_stubs_generated_by_grpcio_tools_run_the_whole_scenario() {
    interop_tool(".venv/bin/python");
    let server = Server::start().await;
    let script = interop_dir().join("python/run.sh");
    run_scenario(&server, &script, "python interop: ok").await;
    // Twice against the same server: the scenario keeps to a namespace of its own.
    run_scenario(&server, &script, "python interop: ok").await;
}

#[tokio::test]
async fn node_with_grpc_js_and_proto_loader_runs_the_whole_scenario() {
    interop_tool("node/node_modules/@grpc/grpc-js");
    let server = Server::start().await;
    let script = interop_dir().join("node/run.sh");
    run_scenario(&server, &script, "node interop: ok").await;
    run_scenario(&server, &script, "node interop: ok").await;
}

/// Runs the real grpcurl binary with `args` (plaintext, as the server has no TLS).
async fn grpcurl(args: &[&str]) -> Output {
    Command::new(interop_tool(".venv/bin/grpcurl"))
        .arg("-plaintext")
        .args(args)
        .output()
        .await
        .expect("run grpcurl")
}

/// Calls `method` with the JSON `request` through grpcurl and returns the
/// JSON answer, asserting the call succeeded.
async fn grpcurl_call(server: &Server, method: &str, request: Value) -> Value {
    let output = grpcurl(&["-d", &request.to_string(), server.address(), method]).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "grpcurl {method} failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{method}: {error}: {stdout}"))
}

#[tokio::test]
async fn grpcurl_lists_every_service_through_reflection() {
    let server = Server::start().await;
    let output = grpcurl(&[server.address(), "list"]).await;
    assert!(output.status.success(), "{output:?}");
    let services: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        services,
        [
            "engram.v1.LearningService",
            "engram.v1.MemoryService",
            "engram.v1.PolicyService",
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
        ]
    );

    let methods = grpcurl(&[server.address(), "list", "engram.v1.PolicyService"]).await;
    assert_eq!(
        String::from_utf8_lossy(&methods.stdout),
        "engram.v1.PolicyService.Classify\nengram.v1.PolicyService.Remember\n"
    );
}

#[tokio::test]
async fn grpcurl_describes_services_and_messages_with_their_documentation() {
    let server = Server::start().await;
    for (symbol, expected) in [
        (
            "engram.v1.MemoryService",
            "rpc CreateMemory ( .engram.v1.CreateMemoryRequest ) returns ( .engram.v1.CreateMemoryResponse );",
        ),
        (
            "engram.v1.MemoryService",
            "With a `request_id`, a retried call returns the first",
        ),
        (
            "engram.v1.MemoryService",
            "rpc WatchMemories ( .engram.v1.WatchMemoriesRequest ) returns ( stream .engram.v1.WatchMemoriesResponse );",
        ),
        ("engram.v1.MemoryEvent", "as GetMemory would return it then"),
        (
            "engram.v1.LearningService",
            "Summarises what is known in the scope",
        ),
        (
            "engram.v1.PolicyService",
            "Classifies a transcript into a memory decision; stores nothing.",
        ),
        ("engram.v1.Scope", "string namespace = 1;"),
    ] {
        let output = grpcurl(&[server.address(), "describe", symbol]).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "describe {symbol}: {output:?}");
        assert!(
            stdout.contains(expected),
            "describe {symbol} lacks {expected:?}:\n{stdout}"
        );
    }
}

#[tokio::test]
async fn grpcurl_calls_one_rpc_of_each_service() {
    let server = Server::start().await;

    let created = grpcurl_call(
        &server,
        "engram.v1.MemoryService/CreateMemory",
        serde_json::json!({
            "scope": {"namespace": "grpcurl", "user_id": "alice"},
            "memory": {"memory_type": "MEMORY_TYPE_PREFERENCE", "content": "Alice prefers dark mode", "importance": 0.9}
        }),
    )
    .await;
    assert_eq!(created["result"], "WRITE_RESULT_CREATED", "{created}");
    assert_eq!(created["memory"]["content"], "Alice prefers dark mode");
    assert_eq!(created["memory"]["level"], "MEMORY_LEVEL_GLOBAL");

    let stats = grpcurl_call(
        &server,
        "engram.v1.LearningService/GetStats",
        serde_json::json!({"scope": {"namespace": "grpcurl"}}),
    )
    .await;
    assert_eq!(
        stats["memoriesPerType"],
        serde_json::json!([{"memoryType": "MEMORY_TYPE_PREFERENCE", "count": "1"}]),
        "{stats}"
    );

    let classified = grpcurl_call(
        &server,
        "engram.v1.PolicyService/Classify",
        serde_json::json!({
            "scope": {"namespace": "grpcurl", "user_id": "alice"},
            "transcript": "User: please never use semicolons in our JavaScript."
        }),
    )
    .await;
    assert_eq!(classified["decision"]["shouldStore"], true, "{classified}");
    assert_eq!(
        classified["decision"]["memoryType"],
        "MEMORY_TYPE_PREFERENCE"
    );
}

#[tokio::test]
async fn grpcurl_shows_the_field_violations_of_a_bad_request() {
    let server = Server::start().await;
    let output = grpcurl(&[
        "-d",
        r#"{"scope": {"namespace": "grpcurl"}, "memory": {"content": "", "importance": 3}}"#,
        server.address(),
        "engram.v1.MemoryService/CreateMemory",
    ])
    .await;
    assert!(!output.status.success(), "a bad request fails: {output:?}");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(text.contains("Code: InvalidArgument"), "{text}");
    // grpcurl prints each detail as JSON after its number: "1)\t{...}".
    let detail = text
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("1)"))
        .unwrap_or_else(|| panic!("no details in:\n{text}"));
    let detail: Value = serde_json::from_str(detail.trim()).expect("the detail is JSON");
    assert_eq!(detail["@type"], "type.googleapis.com/google.rpc.BadRequest");
    let fields: Vec<&str> = detail["fieldViolations"]
        .as_array()
        .expect("field violations")
        .iter()
        .map(|v| v["field"].as_str().expect("field"))
        .collect();
    assert_eq!(fields, ["memory.content", "memory.importance"]);
}
