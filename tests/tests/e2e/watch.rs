//! WatchMemories over the real server: every change to the memories a
//! scope sees, in commit order, from now or from a cursor; nothing of
//! another namespace or of a scope out of sight; filters; resuming without
//! a gap or a repeat, by hand and by the client across a server restart;
//! bad cursors; a watcher that stops reading; heartbeats; `engram watch`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use engram_client::proto::memory_service_client::MemoryServiceClient;
use engram_client::proto::{
    self, DeleteMemoryRequest, MemoryEvent, MemoryLevel, MemoryType, RevisionAction, Scope,
    UpdateMemoryRequest, WatchMemoriesRequest,
};
use engram_client::{Code, CreateMemory, Engram, Error, MemoryWatch, RetryPolicy, WatchMemories};
use engram_tests::{Server, assert_rejects, cli_binary, create_batch};
use futures_util::StreamExt as _;
use tokio::process::Command;

/// How long a test waits for an event it expects.
const EVENT_TIMEOUT: Duration = Duration::from_secs(20);

/// The next event of `watch`.
async fn next_event(watch: &mut MemoryWatch) -> MemoryEvent {
    tokio::time::timeout(EVENT_TIMEOUT, watch.next())
        .await
        .expect("an event in time")
        .expect("the watch goes on")
        .expect("an event, not an error")
}

/// The events of `watch` up to and including the create of a memory with
/// `content`.
async fn events_until(watch: &mut MemoryWatch, content: &str) -> Vec<MemoryEvent> {
    let mut events = Vec::new();
    loop {
        let event = next_event(watch).await;
        let last = event.action() == RevisionAction::Created
            && event.memory.as_ref().is_some_and(|m| m.content == content);
        events.push(event);
        if last {
            return events;
        }
    }
}

/// Creates a memory of `memory_type` with `content` in `scope`; its id.
async fn create(engram: &Engram, request: CreateMemory) -> String {
    engram
        .memory()
        .create_memory(request)
        .await
        .expect("create")
        .memory
        .expect("the memory")
        .id
}

async fn delete(engram: &Engram, scope: &Scope, id: &str) {
    engram
        .memory()
        .delete_memory(DeleteMemoryRequest {
            scope: Some(scope.clone()),
            id: id.to_owned(),
            etag: String::new(),
        })
        .await
        .expect("delete");
}

async fn update_content(engram: &Engram, scope: &Scope, id: &str, content: &str) {
    engram
        .memory()
        .update_memory(UpdateMemoryRequest {
            scope: Some(scope.clone()),
            id: id.to_owned(),
            memory: Some(proto::MemoryInput {
                content: content.to_owned(),
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into()],
            }),
            etag: String::new(),
        })
        .await
        .expect("update");
}

async fn watch(engram: &Engram, request: WatchMemories) -> MemoryWatch {
    engram
        .memory()
        .watch_memories(request)
        .await
        .expect("start a watch")
}

/// Each event as (action, the name its memory id has in `names`).
fn named<'a>(
    events: &[MemoryEvent],
    names: &BTreeMap<String, &'a str>,
) -> Vec<(RevisionAction, &'a str)> {
    events
        .iter()
        .map(|e| (e.action(), names.get(&e.memory_id).copied().unwrap_or("?")))
        .collect()
}

#[tokio::test]
async fn every_kind_of_change_arrives_in_commit_order_with_what_the_history_recorded() {
    let server = Server::start().await;
    let engram = server.client().await;
    let scope = Scope::new("orders").with_project("shop");
    let writer = scope.clone().with_agent("writer-agent");
    let mut watch = watch(&engram, WatchMemories::new(scope.clone())).await;
    let start = watch.cursor().to_owned();
    assert!(!start.is_empty(), "a watch knows where it starts");

    let lesson = || CreateMemory::new(writer.clone(), MemoryType::Lesson, "Pin the toolchain");
    let id = create(&engram, lesson()).await;
    let created = next_event(&mut watch).await;
    assert_eq!(created.action(), RevisionAction::Created);
    assert_eq!(created.memory_id, id);
    let memory = created.memory.as_ref().expect("the memory");
    assert_eq!(memory.content, "Pin the toolchain");
    assert!(!created.superseded);
    assert_eq!(created.agent_id, "writer-agent");
    assert!(created.time.is_some());
    assert_eq!(
        watch.cursor(),
        created.cursor,
        "the watch stands at its event"
    );

    create(&engram, lesson()).await;
    let merged = next_event(&mut watch).await;
    assert_eq!(
        (merged.action(), merged.memory_id.as_str()),
        (RevisionAction::Merged, id.as_str())
    );
    assert!(
        merged.changed_fields.contains(&"seen_count".to_owned()),
        "{merged:?}"
    );
    assert_eq!(merged.memory.as_ref().map(|m| m.seen_count), Some(2));

    update_content(&engram, &writer, &id, "Pin the toolchain and the lockfile").await;
    let updated = next_event(&mut watch).await;
    assert_eq!(updated.action(), RevisionAction::Updated);
    assert_eq!(updated.changed_fields, ["content"]);
    assert_eq!(
        updated.memory.as_ref().map(|m| m.content.as_str()),
        Some("Pin the toolchain and the lockfile")
    );

    delete(&engram, &writer, &id).await;
    let deleted = next_event(&mut watch).await;
    assert_eq!(
        (deleted.action(), deleted.memory_id.as_str()),
        (RevisionAction::Deleted, id.as_str())
    );
    assert_eq!(deleted.memory, None, "a deleted memory is gone");
    assert!(!deleted.superseded, "nothing follows a delete");

    let cursors = [
        &start,
        &created.cursor,
        &merged.cursor,
        &updated.cursor,
        &deleted.cursor,
    ];
    let distinct: std::collections::BTreeSet<_> = cursors.iter().collect();
    assert_eq!(
        distinct.len(),
        cursors.len(),
        "every event has its own cursor"
    );

    // Read again from the start, after it all happened: the same changes,
    // each with the memory as it is now — gone — and marked superseded.
    let mut again = watch_from(&engram, &scope, &start).await;
    let replayed: Vec<MemoryEvent> = [
        next_event(&mut again).await,
        next_event(&mut again).await,
        next_event(&mut again).await,
        next_event(&mut again).await,
    ]
    .into();
    let actions: Vec<RevisionAction> = replayed.iter().map(MemoryEvent::action).collect();
    assert_eq!(
        actions,
        [
            RevisionAction::Created,
            RevisionAction::Merged,
            RevisionAction::Updated,
            RevisionAction::Deleted
        ]
    );
    assert!(
        replayed
            .iter()
            .all(|e| e.memory.is_none() && e.memory_id == id)
    );
    assert_eq!(
        replayed.iter().map(|e| e.superseded).collect::<Vec<_>>(),
        [true, true, true, false]
    );
    let cursors: Vec<&str> = replayed.iter().map(|e| e.cursor.as_str()).collect();
    assert_eq!(
        cursors,
        [
            created.cursor.as_str(),
            merged.cursor.as_str(),
            updated.cursor.as_str(),
            deleted.cursor.as_str(),
        ],
        "a change keeps its cursor"
    );
}

async fn watch_from(engram: &Engram, scope: &Scope, cursor: &str) -> MemoryWatch {
    watch(engram, WatchMemories::new(scope.clone()).cursor(cursor)).await
}

#[tokio::test]
async fn an_expired_memory_is_reported_when_retention_removes_it() {
    let server = Server::start_with_args(&["--retention-interval", "1s"]).await;
    let engram = server.client().await;
    let scope = Scope::new("expiry");
    let mut watch = watch(&engram, WatchMemories::new(scope.clone())).await;
    let expires = std::time::SystemTime::now() + Duration::from_secs(2);
    let brief =
        CreateMemory::new(scope, MemoryType::Event, "The build is red").expire_time(expires);
    let id = create(&engram, brief).await;
    let created = next_event(&mut watch).await;
    assert_eq!(created.action(), RevisionAction::Created);
    let expired = next_event(&mut watch).await;
    assert_eq!(
        (expired.action(), expired.memory_id.as_str()),
        (RevisionAction::Expired, id.as_str())
    );
    assert_eq!(expired.memory, None);
    assert!(
        expired.key_id.is_empty() && expired.agent_id.is_empty(),
        "by no one"
    );
}

#[tokio::test]
async fn a_watch_sees_what_its_scope_sees_and_nothing_of_another_namespace() {
    let server = Server::start().await;
    let engram = server.client().await;
    let tenant = || Scope::new("tenant-a");
    let mut watchers = Vec::new();
    for (name, scope) in [
        ("namespace", tenant()),
        ("session s1", tenant().with_session("s1")),
        ("project p1", tenant().with_project("p1")),
        ("agent-2", tenant().with_agent("agent-2")),
        ("tenant-b", Scope::new("tenant-b")),
    ] {
        watchers.push((name, watch(&engram, WatchMemories::new(scope)).await));
    }

    let mut names = BTreeMap::new();
    let chat_scope = tenant().with_session("s1");
    let chat = create(
        &engram,
        CreateMemory::new(chat_scope.clone(), MemoryType::Note, "s1 chat"),
    )
    .await;
    names.insert(chat.clone(), "chat");
    let plan_scope = tenant().with_project("p1");
    let plan = create(
        &engram,
        CreateMemory::new(plan_scope.clone(), MemoryType::Decision, "p1 plan"),
    )
    .await;
    names.insert(plan.clone(), "plan");
    let note_scope = tenant().with_agent("agent-1");
    let note =
        CreateMemory::new(note_scope, MemoryType::Fact, "agent-1 note").level(MemoryLevel::Global);
    names.insert(create(&engram, note).await, "agent-1 note");
    let secret = CreateMemory::new(Scope::new("tenant-b"), MemoryType::Fact, "b secret");
    names.insert(create(&engram, secret).await, "b secret");
    update_content(&engram, &chat_scope, &chat, "s1 chat, edited").await;
    delete(&engram, &chat_scope, &chat).await;
    delete(&engram, &plan_scope, &plan).await;
    let marker_a = CreateMemory::new(tenant(), MemoryType::Note, "marker a");
    names.insert(create(&engram, marker_a).await, "marker");
    let marker_b = CreateMemory::new(Scope::new("tenant-b"), MemoryType::Note, "marker b");
    names.insert(create(&engram, marker_b).await, "marker");

    use RevisionAction::{Created, Deleted, Updated};
    let expected: BTreeMap<&str, Vec<(RevisionAction, &str)>> = [
        (
            "namespace",
            vec![(Created, "agent-1 note"), (Created, "marker")],
        ),
        (
            "session s1",
            vec![
                (Created, "chat"),
                (Created, "agent-1 note"),
                (Updated, "chat"),
                (Deleted, "chat"),
                (Created, "marker"),
            ],
        ),
        (
            "project p1",
            vec![
                (Created, "plan"),
                (Created, "agent-1 note"),
                (Deleted, "plan"),
                (Created, "marker"),
            ],
        ),
        ("agent-2", vec![(Created, "marker")]),
        ("tenant-b", vec![(Created, "b secret"), (Created, "marker")]),
    ]
    .into();
    for (name, mut watch) in watchers {
        let marker = if name == "tenant-b" {
            "marker b"
        } else {
            "marker a"
        };
        let events = events_until(&mut watch, marker).await;
        assert_eq!(
            named(&events, &names),
            expected[name],
            "the watcher of {name}"
        );
    }
}

#[tokio::test]
async fn filters_narrow_a_watch_to_types_levels_and_tags_deletes_included() {
    let server = Server::start().await;
    let engram = server.client().await;
    let scope = Scope::new("filters").with_project("shop");
    let base = || WatchMemories::new(scope.clone());
    let mut watchers = vec![
        (
            "lessons",
            watch(&engram, base().memory_types([MemoryType::Lesson])).await,
        ),
        (
            "workspace",
            watch(&engram, base().levels([MemoryLevel::Workspace])).await,
        ),
        ("deploy", watch(&engram, base().tags(["deploy"])).await),
        (
            "deploy and db",
            watch(&engram, base().tags(["deploy", "db"])).await,
        ),
    ];
    let mut names = BTreeMap::new();
    let global = |memory_type, content| {
        CreateMemory::new(scope.clone(), memory_type, content).level(MemoryLevel::Global)
    };
    names.insert(
        create(
            &engram,
            global(MemoryType::Note, "tagged note").tags(["deploy"]),
        )
        .await,
        "note",
    );
    let lesson = create(&engram, global(MemoryType::Lesson, "plain lesson")).await;
    names.insert(lesson.clone(), "lesson");
    let fact = CreateMemory::new(scope.clone(), MemoryType::Fact, "workspace fact").tags(["db"]);
    names.insert(create(&engram, fact).await, "fact");
    delete(&engram, &scope, &lesson).await;
    let last = CreateMemory::new(scope.clone(), MemoryType::Lesson, "the last one")
        .level(MemoryLevel::Workspace)
        .tags(["deploy", "db"]);
    names.insert(create(&engram, last).await, "last");

    use RevisionAction::{Created, Deleted};
    let expected: BTreeMap<&str, Vec<(RevisionAction, &str)>> = [
        (
            "lessons",
            vec![(Created, "lesson"), (Deleted, "lesson"), (Created, "last")],
        ),
        ("workspace", vec![(Created, "fact"), (Created, "last")]),
        ("deploy", vec![(Created, "note"), (Created, "last")]),
        ("deploy and db", vec![(Created, "last")]),
    ]
    .into();
    for (name, watch) in &mut watchers {
        let events = events_until(watch, "the last one").await;
        assert_eq!(
            named(&events, &names),
            expected[*name],
            "the watcher of {name}"
        );
    }
}

#[tokio::test]
async fn a_watch_resumed_from_a_cursor_misses_nothing_and_repeats_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let scope = Scope::new("resume");
    let note = |n: u32| CreateMemory::new(scope.clone(), MemoryType::Note, format!("note {n}"));
    let mut first = watch(&engram, WatchMemories::new(scope.clone())).await;
    let mut ids = Vec::new();
    for n in 1..=3 {
        ids.push(create(&engram, note(n)).await);
    }
    next_event(&mut first).await;
    let second = next_event(&mut first).await;
    assert_eq!(second.memory_id, ids[1]);
    drop(first);

    // Written while nobody watches.
    for n in 4..=5 {
        ids.push(create(&engram, note(n)).await);
    }
    let mut resumed = watch_from(&engram, &scope, &second.cursor).await;
    let mut seen = Vec::new();
    for _ in 3..=5 {
        seen.push(next_event(&mut resumed).await.memory_id);
    }
    assert_eq!(seen, ids[2..], "from the third on, once each");

    // The watch's own cursor resumes just as well, and one change at a
    // time: resuming after each event goes on with the next.
    let saved = resumed.cursor().to_owned();
    drop(resumed);
    ids.push(create(&engram, note(6)).await);
    let mut last = watch_from(&engram, &scope, &saved).await;
    assert_eq!(next_event(&mut last).await.memory_id, ids[5]);
    let mut from_start = watch_from(&engram, &scope, &second.cursor).await;
    let mut step_by_step = Vec::new();
    for _ in 3..=6 {
        let event = next_event(&mut from_start).await;
        step_by_step.push(event.memory_id.clone());
        from_start = watch_from(&engram, &scope, &event.cursor).await;
    }
    assert_eq!(step_by_step, ids[2..]);
}

/// A client that retries for long enough to outlast a restart.
async fn patient_client(server: &Server) -> Engram {
    let retry = RetryPolicy {
        max_attempts: 200,
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(300),
        multiplier: 2.0,
    };
    Engram::builder(&server.url)
        .retry(retry)
        .connect()
        .await
        .expect("connect")
}

#[tokio::test]
async fn the_client_resumes_a_watch_across_a_server_restart_and_loses_nothing() {
    let server = Server::start().await;
    let watcher = patient_client(&server).await;
    let scope = Scope::new("restart");
    let note = |n: u32| CreateMemory::new(scope.clone(), MemoryType::Note, format!("note {n}"));
    let mut watch = watch(&watcher, WatchMemories::new(scope.clone())).await;
    let mut ids = vec![create(&server.client().await, note(1)).await];
    assert_eq!(next_event(&mut watch).await.memory_id, ids[0]);

    // An open watch does not hold the drain up: it is ended at once.
    let mut server = server;
    let stopping = Instant::now();
    server.stop().await;
    assert!(
        stopping.elapsed() < Duration::from_secs(5),
        "stopping took {:?} with a watch open",
        stopping.elapsed()
    );
    assert!(
        !server
            .log()
            .contains("did not finish within the grace period")
    );
    let server = server.start_again().await;

    // Written at once, most likely before the watch is back: reported all
    // the same, and nothing twice.
    let writer = server.client().await;
    for n in 2..=3 {
        ids.push(create(&writer, note(n)).await);
    }
    let mut seen = Vec::new();
    for _ in 2..=3 {
        seen.push(next_event(&mut watch).await.memory_id);
    }
    assert_eq!(seen, ids[1..]);
    ids.push(create(&writer, note(4)).await);
    assert_eq!(next_event(&mut watch).await.memory_id, ids[3]);
}

#[tokio::test]
async fn a_shutdown_ends_an_open_watch_with_unavailable() {
    let mut server = Server::start().await;
    let engram = Engram::builder(&server.url)
        .retry(RetryPolicy::none())
        .connect()
        .await
        .expect("connect");
    let mut watch = watch(&engram, WatchMemories::new(Scope::new("shutdown"))).await;
    let ended = tokio::spawn(async move { watch.next().await });
    server.stop().await;
    let last = tokio::time::timeout(EVENT_TIMEOUT, ended)
        .await
        .expect("in time")
        .expect("the reader")
        .expect("an item");
    let error = last.expect_err("the watch ends with an error");
    assert_eq!(error.code(), Code::Unavailable, "{error}");
    assert!(error.message().contains("resume"), "{error}");
}

#[tokio::test]
async fn a_cursor_of_another_namespace_or_database_or_none_at_all_is_invalid() {
    let server = Server::start().await;
    let engram = server.client().await;
    let elsewhere = Server::start().await;
    let other_database = watch(
        &elsewhere.client().await,
        WatchMemories::new(Scope::new("a")),
    )
    .await
    .cursor()
    .to_owned();
    let other_namespace = watch(&engram, WatchMemories::new(Scope::new("b")))
        .await
        .cursor()
        .to_owned();
    for (cursor, why) in [
        ("not a cursor", "not a watch cursor"),
        (other_namespace.as_str(), "another namespace"),
        (other_database.as_str(), "another database"),
    ] {
        let request = WatchMemories::new(Scope::new("a")).cursor(cursor);
        let error = engram.memory().watch_memories(request).await.unwrap_err();
        assert_rejects(&error, "cursor");
        assert!(error.message().contains(why), "{why}: {error}");
    }

    let bad_type = WatchMemoriesRequest {
        scope: Some(Scope::new("a")),
        filter: Some(proto::MemoryEventFilter {
            memory_types: vec![99],
            levels: vec![MemoryLevel::Global.into()],
            tags: vec!["x".repeat(65)],
        }),
        cursor: String::new(),
    };
    let error = engram.memory().watch_memories(bad_type).await.unwrap_err();
    assert_rejects(&error, "filter.memory_types[0]");
    assert!(
        error
            .field_violations()
            .iter()
            .any(|(f, _)| f.starts_with("filter.tags")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_watcher_that_stops_reading_loses_nothing_and_holds_back_no_one() {
    let server = Server::start().await;
    let engram = server.client().await;
    let scope = Scope::new("stalled");
    // A raw stub, with gRPC's default limit of 4 MiB a message.
    let mut raw = MemoryServiceClient::new(engram.channel());
    let request = WatchMemoriesRequest {
        scope: Some(scope.clone()),
        ..Default::default()
    };
    let mut stalled = raw
        .watch_memories(request)
        .await
        .expect("watch")
        .into_inner();
    stalled
        .message()
        .await
        .expect("the first message")
        .expect("one");
    let mut reading = watch(&engram, WatchMemories::new(scope.clone())).await;

    // 10 MiB of memories, far past what HTTP/2 lets the server send unread.
    let content = |n: usize| format!("{n:04} {}", "x".repeat(60 * 1024));
    let mut ids = Vec::new();
    for batch in 0..4 {
        let memories = (0..40)
            .map(|i| proto::MemoryInput {
                memory_type: MemoryType::Note.into(),
                content: content(batch * 40 + i),
                ..Default::default()
            })
            .collect();
        let created = create_batch(&engram, &scope, memories).await;
        ids.extend(
            created
                .results
                .into_iter()
                .map(|r| r.memory.expect("memory").id),
        );
    }
    for id in &ids {
        assert_eq!(
            &next_event(&mut reading).await.memory_id,
            id,
            "the other watcher reads on"
        );
    }

    let mut delivered = Vec::new();
    while delivered.len() < ids.len() {
        let message = tokio::time::timeout(EVENT_TIMEOUT, stalled.message())
            .await
            .expect("in time")
            .expect("each message within 4 MiB")
            .expect("the watch goes on");
        assert!(
            message.events.len() < ids.len(),
            "the events come in several messages"
        );
        delivered.extend(message.events.into_iter().map(|e| e.memory_id));
    }
    assert_eq!(delivered, ids, "all of them, in order, once");
}

#[tokio::test]
async fn a_quiet_watch_hears_a_heartbeat_which_moves_its_cursor_past_what_it_does_not_see() {
    let server = Server::start_with_args(&["--stream-idle-timeout", "1s"]).await;
    let engram = server.client().await;
    let mut raw = MemoryServiceClient::new(engram.channel());
    let watcher = Scope::new("quiet").with_session("s2");
    let open = |cursor: String| WatchMemoriesRequest {
        scope: Some(watcher.clone()),
        filter: None,
        cursor,
    };
    let mut messages = raw
        .watch_memories(open(String::new()))
        .await
        .expect("watch")
        .into_inner();
    let mut next = async || {
        tokio::time::timeout(EVENT_TIMEOUT, messages.message())
            .await
            .expect("in time")
            .expect("a message")
            .expect("the watch goes on")
    };
    let first = next().await;
    assert_eq!(
        first.heartbeat_interval,
        Some(prost_types::Duration {
            seconds: 0,
            nanos: 500_000_000
        }),
        "half the stream idle timeout"
    );
    let start = first.cursor;

    // Another namespace's writes leave the cursor where it is.
    let elsewhere = CreateMemory::new(Scope::new("loud"), MemoryType::Note, "elsewhere");
    create(&engram, elsewhere).await;
    let heard = next().await;
    assert!(heard.events.is_empty());
    assert_eq!(heard.cursor, start);

    // Another session's, in the same namespace, are passed over.
    let other_session = Scope::new("quiet").with_session("s1");
    create(
        &engram,
        CreateMemory::new(other_session, MemoryType::Note, "not for s2"),
    )
    .await;
    let deadline = Instant::now() + EVENT_TIMEOUT;
    let moved = loop {
        assert!(Instant::now() < deadline, "the cursor never moved on");
        let heard = next().await;
        assert!(heard.events.is_empty(), "{heard:?}");
        if heard.cursor != start {
            break heard.cursor;
        }
    };
    // Both cursors resume to the same nothing.
    for cursor in [start, moved.clone()] {
        let mut resumed = raw
            .watch_memories(open(cursor))
            .await
            .expect("watch")
            .into_inner();
        resumed.message().await.expect("first").expect("one");
        let heard = resumed.message().await.expect("heartbeat").expect("one");
        assert!(heard.events.is_empty());
        assert_eq!(heard.cursor, moved);
    }
}

#[tokio::test]
async fn engram_watch_prints_one_json_object_per_event() {
    let server = Server::start().await;
    let engram = server.client().await;
    let run = |args: &[&str]| {
        let mut command = Command::new(cli_binary());
        command
            .args(["--namespace", "cli-watch"])
            .args(args)
            .env("ENGRAM_SERVER", &server.url);
        async move {
            let output = tokio::time::timeout(EVENT_TIMEOUT, command.output())
                .await
                .expect("engram watch ends in time")
                .expect("run engram");
            assert!(output.status.success(), "{output:?}");
            String::from_utf8(output.stdout).expect("utf-8")
        }
    };
    let cursor = run(&["watch", "--print-cursor"]).await;
    let cursor = cursor.trim();
    assert!(!cursor.is_empty() && !cursor.contains(char::is_whitespace));

    let scope = Scope::new("cli-watch");
    create(
        &engram,
        CreateMemory::new(scope.clone(), MemoryType::Fact, "not a lesson"),
    )
    .await;
    let lesson = CreateMemory::new(scope.clone(), MemoryType::Lesson, "Read the error first");
    let id = create(&engram, lesson).await;
    let printed = run(&[
        "watch", "--cursor", cursor, "--type", "lesson", "--limit", "1",
    ])
    .await;
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 1, "{printed}");
    let event: serde_json::Value = serde_json::from_str(lines[0]).expect("one JSON object");
    assert_eq!(event["action"], "REVISION_ACTION_CREATED", "{event}");
    assert_eq!(event["memoryId"], id.as_str(), "{event}");
    assert_eq!(
        event["memory"]["content"], "Read the error first",
        "{event}"
    );
    assert!(
        event["cursor"].as_str().is_some_and(|c| !c.is_empty()),
        "{event}"
    );

    let both = run(&["watch", "--cursor", cursor, "--limit", "2"]).await;
    assert_eq!(both.lines().count(), 2, "{both}");
    for line in both.lines() {
        let event: serde_json::Value = serde_json::from_str(line).expect("JSON");
        assert_eq!(event["action"], "REVISION_ACTION_CREATED");
    }

    let help = run(&["watch", "--help"]).await;
    for flag in [
        "--type",
        "--level",
        "--tag",
        "--cursor",
        "--limit",
        "--print-cursor",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
}

#[tokio::test]
async fn the_readme_example_watches_and_resumes() {
    let server = Server::start().await;
    let url = server.url.clone();
    let result: Result<(), Error> = async {
        // readme:begin watch
        let engram = Engram::connect(url).await?;
        let scope = Scope::new("demo").with_project("shop");

        // Every lesson the project's agents learn, as they learn it.
        let lessons = WatchMemories::new(scope.clone()).memory_types([MemoryType::Lesson]);
        let mut watch = engram.memory().watch_memories(lessons.clone()).await?;

        let lesson = "Run the orders migration before deploying checkout";
        engram
            .memory()
            .create_memory(CreateMemory::new(scope.clone(), MemoryType::Lesson, lesson))
            .await?;
        let event = watch.next().await.expect("the watch goes on")?;
        assert_eq!(event.action(), RevisionAction::Created);
        assert_eq!(event.memory.unwrap().content, lesson);

        // Keep the cursor to go on later from where this watch stands:
        // nothing written meanwhile is missed, nothing is reported twice.
        let cursor = watch.cursor().to_owned();
        drop(watch);
        let mut watch = engram
            .memory()
            .watch_memories(lessons.cursor(cursor))
            .await?;
        // readme:end watch
        let later = "Keep the migration and the deploy in one pipeline";
        engram
            .memory()
            .create_memory(CreateMemory::new(scope, MemoryType::Lesson, later))
            .await?;
        let event = watch.next().await.expect("the watch goes on")?;
        assert_eq!(event.memory.unwrap().content, later);
        Ok(())
    }
    .await;
    result.expect("the README example runs");
}
