//! The `engram` command against the real server: what people and scripts
//! see — text by default, JSON with --json, standard input for `-`, one-line
//! errors and distinct exit codes.

use std::process::{Output, Stdio};

use engram_tests::{Server, cli_binary, uuid_v7};
use serde_json::Value;
use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

/// Runs `engram` against `server` with `args`, feeding `stdin` if given.
async fn engram(server: &Server, args: &[&str], stdin: Option<&str>) -> Output {
    engram_with_env(server, args, stdin, &[]).await
}

async fn engram_with_env(
    server: &Server,
    args: &[&str],
    stdin: Option<&str>,
    envs: &[(&str, &str)],
) -> Output {
    let mut command = Command::new(cli_binary());
    command
        .args(args)
        .env("ENGRAM_SERVER", &server.url)
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("run engram");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).await.expect("write stdin");
    }
    drop(input);
    child.wait_with_output().await.expect("wait for engram")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the command succeeded and returns what it printed.
fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "engram failed ({}): {}{}",
        output.status,
        stdout(&output),
        stderr(&output)
    );
    stdout(&output)
}

fn json(output: Output) -> Value {
    let text = ok(output);
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
}

/// Asserts the command failed with `code` and one line on standard error
/// containing each of `expected`.
fn fails(output: Output, code: i32, expected: &[&str]) {
    let err = stderr(&output);
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout {}; stderr {err}",
        stdout(&output)
    );
    assert!(
        stdout(&output).is_empty(),
        "nothing on stdout: {}",
        stdout(&output)
    );
    for text in expected {
        assert!(err.contains(text), "{text:?} missing from {err:?}");
    }
    if code != 2 {
        // clap's usage errors are several lines by design; ours are one.
        assert_eq!(err.lines().count(), 1, "one line: {err:?}");
        assert!(err.starts_with("engram: error: "), "{err:?}");
    }
}

#[tokio::test]
async fn remember_search_get_list_and_delete_a_memory() {
    let server = Server::start().await;
    fn with<'a>(args: &[&'a str]) -> Vec<&'a str> {
        ["-n", "cli", "--user", "alice"]
            .into_iter()
            .chain(args.iter().copied())
            .collect()
    }

    let remembered = ok(engram(
        &server,
        &with(&[
            "remember",
            "User: please never use semicolons in our JavaScript.",
        ]),
        None,
    )
    .await);
    assert!(remembered.starts_with("stored PREFERENCE "), "{remembered}");
    let id = remembered
        .split_whitespace()
        .nth(2)
        .expect("the id")
        .to_owned();
    uuid_v7(&id);

    let found = ok(engram(
        &server,
        &with(&["search", "semicolons in javascript"]),
        None,
    )
    .await);
    assert_eq!(found.lines().count(), 1, "{found}");
    assert!(
        found.contains(&id) && found.contains("PREFERENCE"),
        "{found}"
    );

    let shown = ok(engram(&server, &with(&["get", &id]), None).await);
    assert!(
        shown.contains("content:    please never use semicolons in our JavaScript."),
        "{shown}"
    );
    assert!(shown.contains("level:      GLOBAL"), "{shown}");

    let listed = ok(engram(&server, &with(&["list"]), None).await);
    assert!(listed.starts_with(&id), "{listed}");

    let deleted = ok(engram(&server, &with(&["delete", &id]), None).await);
    assert_eq!(deleted, format!("deleted {id}\n"));
    fails(
        engram(&server, &with(&["get", &id]), None).await,
        1,
        &["NOT_FOUND"],
    );
    let empty = engram(&server, &with(&["list"]), None).await;
    assert_eq!(stderr(&empty), "no memories\n", "said on standard error");
    assert_eq!(ok(empty), "", "so a pipe gets only memories");

    // A reader that stops early is no error (and no panic).
    let piped = tokio::process::Command::new("bash")
        .args([
            "-o",
            "pipefail",
            "-c",
            &format!("{} -n cli list | true", cli_binary().display()),
        ])
        .env("ENGRAM_SERVER", &server.url)
        .output()
        .await
        .expect("run a pipe");
    assert!(piped.status.success(), "{piped:?}");
}

#[tokio::test]
async fn a_dash_reads_the_content_from_standard_input() {
    let server = Server::start().await;
    let lesson =
        "Checkout deploys failed because the orders migration locked the table.\nRun it first.";
    let created = json(
        engram(
            &server,
            &[
                "--json", "-n", "stdin", "create", "--type", "lesson", "--tag", "deploy", "-",
            ],
            Some(&format!("{lesson}\n")),
        )
        .await,
    );
    assert_eq!(created["result"], "WRITE_RESULT_CREATED", "{created}");
    assert_eq!(
        created["memory"]["content"], lesson,
        "the trailing newline is dropped"
    );
    assert_eq!(created["memory"]["tags"], serde_json::json!(["deploy"]));

    let remembered = ok(engram(
        &server,
        &["-n", "stdin", "--user", "bob", "remember", "-"],
        Some("User: I prefer tabs over spaces."),
    )
    .await);
    assert!(remembered.starts_with("stored PREFERENCE "), "{remembered}");
}

#[tokio::test]
async fn create_takes_when_the_thing_happened_and_get_shows_it() {
    let server = Server::start().await;
    let created = json(
        engram(
            &server,
            &[
                "--json",
                "-n",
                "occurred",
                "create",
                "--type",
                "event",
                "--occurred-at",
                "2024-05-08T15:56:00+02:00",
                "The checkout outage began",
            ],
            None,
        )
        .await,
    );
    assert_eq!(
        created["memory"]["occurredAt"], "2024-05-08T13:56:00Z",
        "{created}"
    );
    let id = created["memory"]["id"].as_str().expect("id").to_owned();
    let shown = ok(engram(&server, &["-n", "occurred", "get", &id], None).await);
    assert!(
        shown.contains("occurred:   2024-05-08T13:56:00Z"),
        "{shown}"
    );
    fails(
        engram(
            &server,
            &[
                "-n",
                "occurred",
                "create",
                "--type",
                "event",
                "--occurred-at",
                "yesterday",
                "x",
            ],
            None,
        )
        .await,
        2,
        &["--occurred-at", "RFC 3339"],
    );
}

#[tokio::test]
async fn a_contradicting_create_invalidates_and_valid_at_reads_what_was_true() {
    let server = Server::start().await;
    let create =
        |content: &'static str, occurred_at: &'static str, more: &'static [&'static str]| {
            let server = &server;
            async move {
                let mut args = vec![
                    "-n",
                    "valid",
                    "create",
                    "--type",
                    "fact",
                    "--occurred-at",
                    occurred_at,
                ];
                args.extend_from_slice(more);
                args.push(content);
                ok(engram(server, &args, None).await)
            }
        };
    create("Priya works at Acme.", "2024-01-01T00:00:00Z", &[]).await;
    let kept = create(
        "Priya works at Initech now.",
        "2024-06-01T00:00:00Z",
        &["--contradictions", "off"],
    )
    .await;
    assert!(!kept.contains("invalidated"), "{kept}");
    let changed = create("Priya works at Globex now.", "2025-03-01T00:00:00Z", &[]).await;
    assert_eq!(changed.matches("invalidated ").count(), 2, "{changed}");
    let list = |valid_at: Option<&'static str>| {
        let server = &server;
        async move {
            let mut args = vec!["-n", "valid", "list"];
            if let Some(at) = valid_at {
                args.extend(["--valid-at", at]);
            }
            ok(engram(server, &args, None).await)
        }
    };
    let now = list(None).await;
    assert!(now.contains("Globex") && !now.contains("Acme"), "{now}");
    let then = list(Some("2024-03-01T00:00:00Z")).await;
    assert!(then.contains("Acme") && !then.contains("Globex"), "{then}");
    let searched = ok(engram(
        &server,
        &[
            "-n",
            "valid",
            "search",
            "--valid-at",
            "2024-03-01T00:00:00Z",
            "Priya works",
        ],
        None,
    )
    .await);
    assert!(
        searched.contains("Acme") && !searched.contains("Globex"),
        "{searched}"
    );
    let context = ok(engram(
        &server,
        &[
            "-n",
            "valid",
            "context",
            "-q",
            "where does Priya work",
            "--valid-at",
            "2024-03-01T00:00:00Z",
        ],
        None,
    )
    .await);
    assert!(
        context.contains("Acme") && !context.contains("Globex"),
        "{context}"
    );

    // The entities the memories name, and what was true of one when.
    let listed = ok(engram(
        &server,
        &["-n", "valid", "entities", "--type", "person"],
        None,
    )
    .await);
    assert!(
        listed.contains("PERSON") && listed.contains("Priya"),
        "{listed}"
    );
    assert!(!listed.contains("Globex"), "{listed}");
    let priya = ok(engram(&server, &["-n", "valid", "entity", "priya"], None).await);
    assert!(priya.contains("employer: Globex"), "{priya}");
    assert!(priya.contains("Priya works at Globex now."), "{priya}");
    let then = ok(engram(
        &server,
        &[
            "-n",
            "valid",
            "entity",
            "Priya",
            "--valid-at",
            "2024-03-01T00:00:00Z",
        ],
        None,
    )
    .await);
    assert!(
        then.contains("employer: Acme") && !then.contains("Globex"),
        "{then}"
    );
    let named = ok(engram(
        &server,
        &[
            "-n",
            "valid",
            "list",
            "--valid-at",
            "2024-07-01T00:00:00Z",
            "--entity",
            "Initech",
        ],
        None,
    )
    .await);
    assert!(
        named.contains("Initech") && !named.contains("Acme"),
        "{named}"
    );
}

#[tokio::test]
async fn json_output_is_the_protobuf_json_mapping_with_every_field() {
    let server = Server::start().await;
    let created = json(
        engram(
            &server,
            &[
                "--json",
                "-n",
                "json",
                "create",
                "--type",
                "fact",
                "--importance",
                "0.7",
                "The API listens on port 8080",
            ],
            None,
        )
        .await,
    );
    let id = created["memory"]["id"].as_str().expect("id").to_owned();
    // Defaults are printed too, so scripts always find their keys; 64-bit
    // integers are strings, as the mapping says.
    assert_eq!(created["memory"]["seenCount"], "1", "{created}");
    assert_eq!(created["memory"]["summary"], "", "{created}");
    assert_eq!(created["memory"]["memoryType"], "MEMORY_TYPE_FACT");
    assert_eq!(created["memory"]["importance"], 0.7);

    let hits = json(
        engram(
            &server,
            &[
                "--json",
                "-n",
                "json",
                "search",
                "which port does the api use",
            ],
            None,
        )
        .await,
    );
    assert_eq!(hits["hits"][0]["memory"]["id"], id.as_str(), "{hits}");
    assert!(hits["hits"][0]["score"].as_f64().expect("score") > 0.0);

    let context = json(
        engram(
            &server,
            &["--json", "-n", "json", "context", "--budget", "100"],
            None,
        )
        .await,
    );
    assert!(
        context["text"]
            .as_str()
            .expect("text")
            .contains("The API listens on port 8080"),
        "{context}"
    );
    let text = ok(engram(&server, &["-n", "json", "context", "--budget", "100"], None).await);
    assert_eq!(
        text,
        context["text"].as_str().expect("text"),
        "text mode prints the block as is"
    );
}

#[tokio::test]
async fn episodes_outcomes_and_stats_from_the_command_line() {
    let server = Server::start().await;
    let ns = ["-n", "work", "--agent", "coder"];
    let with =
        |args: &[&str]| -> Vec<String> { ns.iter().chain(args).map(|a| (*a).to_owned()).collect() };
    let run = |args: Vec<String>, stdin: Option<&'static str>| {
        let server = &server;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            engram(server, &args, stdin).await
        }
    };

    let episode = ok(run(
        with(&["episode", "start", "deploy", "--description", "Deploy v2"]),
        None,
    )
    .await);
    let episode = episode.trim().to_owned();
    uuid_v7(&episode);
    let first = ok(run(
        with(&[
            "episode",
            "step",
            &episode,
            "--tool",
            "shell",
            "--action",
            "cargo build",
        ]),
        None,
    )
    .await);
    assert_eq!(first, "recorded step 1 (1 steps in all)\n");
    let second = ok(run(
        with(&[
            "episode", "step", &episode, "--tool", "shell", "--action", "deploy", "--failed",
            "--output", "-",
        ]),
        Some("permission denied"),
    )
    .await);
    assert_eq!(second, "recorded step 2 (2 steps in all)\n");
    let completed = ok(run(
        with(&[
            "episode",
            "complete",
            &episode,
            "--score",
            "0.3",
            "--failure",
            "--mistake",
            "deployed without building",
        ]),
        None,
    )
    .await);
    assert!(
        completed.contains("learned: [AVOID] deployed without building"),
        "{completed}"
    );

    let shown = json(run(with(&["--json", "episode", "get", &episode]), None).await);
    assert_eq!(shown["status"], "EPISODE_STATUS_COMPLETED", "{shown}");
    assert_eq!(shown["steps"][1]["output"], "permission denied");
    assert_eq!(shown["steps"][1]["result"], "STEP_RESULT_ERROR");

    let mut last = String::new();
    for task in [
        "fix the login test",
        "fix the cart test",
        "fix the search test",
    ] {
        last = ok(run(
            with(&[
                "outcome",
                task,
                "--success",
                "--strategy",
                "reproduce the failure first, then bisect",
            ]),
            None,
        )
        .await);
    }
    assert!(last.contains("(task type testing, inferred)"), "{last}");
    assert!(
        last.contains("heuristic learned: reproduce the failure first, then bisect"),
        "{last}"
    );

    let stats = ok(run(with(&["stats"]), None).await);
    assert!(stats.contains("episodes:      1\n"), "{stats}");
    assert!(
        stats.contains("outcomes:      3 (1 heuristics, 0 anti-patterns)"),
        "{stats}"
    );
    assert!(
        stats.contains("task deploy: 1 rules, 1 scored episodes, mean score 0.30"),
        "{stats}"
    );
}

#[tokio::test]
async fn errors_are_one_line_with_an_exit_code_per_kind_of_failure() {
    let server = Server::start().await;
    // The server refused the request: 1, with the field named.
    fails(
        engram(&server, &["create", "--type", "fact", " "], None).await,
        1,
        &["INVALID_ARGUMENT", "memory.content"],
    );
    fails(
        engram(
            &server,
            &["get", "0196d1a4-2b6e-7c3d-9e1f-0a1b2c3d4e5f"],
            None,
        )
        .await,
        1,
        &["NOT_FOUND"],
    );
    // Bad usage: 2.
    fails(
        engram(&server, &["outcome", "fix it", "--strategy", "retry"], None).await,
        2,
        &["--success"],
    );
    fails(
        engram(&server, &["create", "--type", "opinion", "x"], None).await,
        2,
        &["opinion"],
    );
    fails(
        engram(&server, &["--server", "not a url", "stats"], None).await,
        2,
        &["invalid server URL"],
    );
    fails(
        engram(&server, &["create", "--type", "fact", "-"], Some("\n")).await,
        2,
        &["standard input was empty"],
    );
    // Nobody listening: 3.
    fails(
        engram(&server, &["--server", "http://127.0.0.1:1", "stats"], None).await,
        3,
        &["cannot reach the Engram server", "Connection refused"],
    );
}

#[tokio::test]
async fn every_flag_has_an_environment_equivalent() {
    let server = Server::start().await;
    let envs = [
        ("ENGRAM_NAMESPACE", "env"),
        ("ENGRAM_USER", "carol"),
        ("ENGRAM_PROJECT", "shop"),
    ];
    let stored = ok(engram_with_env(
        &server,
        &["remember", "User: I prefer dark mode."],
        None,
        &envs,
    )
    .await);
    assert!(stored.contains("PREFERENCE"), "{stored}");
    // The same scope by flags sees it; another user does not.
    let by_flags = ok(engram(
        &server,
        &[
            "-n",
            "env",
            "--user",
            "carol",
            "--project",
            "shop",
            "search",
            "dark mode",
        ],
        None,
    )
    .await);
    assert!(by_flags.contains("I prefer dark mode."), "{by_flags}");
    let other_user = engram(
        &server,
        &["-n", "env", "--user", "dave", "search", "dark mode"],
        None,
    )
    .await;
    assert_eq!(stderr(&other_user), "no memories match\n");
    assert_eq!(ok(other_user), "");

    let help = ok(engram(&server, &["--help"], None).await);
    for flag in [
        "--server",
        "ENGRAM_SERVER",
        "--api-key",
        "ENGRAM_API_KEY",
        "--json",
        "--namespace",
        "ENGRAM_NAMESPACE",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    for command in [
        "remember", "classify", "create", "search", "context", "get", "list", "delete", "episode",
        "outcome", "stats",
    ] {
        let line = help
            .lines()
            .find(|line| line.trim_start().starts_with(&format!("{command} ")))
            .unwrap_or_else(|| panic!("--help lacks {command}:\n{help}"));
        assert!(
            line.split_whitespace().count() > 2,
            "{command} has help text: {line:?}"
        );
    }
}
