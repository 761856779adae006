//! The visibility rule of DESIGN §3 holds for every read.

use engram_client::Code;
use engram_client::proto::{self, MemoryLevel, MemoryType};
use engram_tests::{Server, create, input, list_all, scope};

fn scoped(namespace: &str, project: &str, session: &str, agent: &str, user: &str) -> proto::Scope {
    proto::Scope {
        namespace: namespace.into(),
        project_id: project.into(),
        session_id: session.into(),
        agent_id: agent.into(),
        user_id: user.into(),
    }
}

fn sorted_contents(memories: &[proto::Memory]) -> Vec<String> {
    let mut contents: Vec<String> = memories.iter().map(|m| m.content.clone()).collect();
    contents.sort();
    contents
}

#[tokio::test]
async fn namespace_a_never_sees_namespace_b() {
    let server = Server::start().await;
    let engram = server.client().await;
    let a = scope("tenant-a");
    let b = scope("tenant-b");
    let secret = create(
        &engram,
        &a,
        input(MemoryType::Fact, "tenant A's launch code is 1234"),
    )
    .await
    .memory
    .unwrap();
    create(
        &engram,
        &b,
        input(MemoryType::Fact, "tenant B likes launch parties"),
    )
    .await;

    assert_eq!(
        sorted_contents(&list_all(&engram, &b, 50).await),
        ["tenant B likes launch parties"]
    );
    let hits = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(b.clone()),
            query: "launch code".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .hits;
    assert!(
        hits.iter()
            .all(|h| h.memory.as_ref().unwrap().scope.as_ref().unwrap().namespace == "tenant-b")
    );
    for status in [
        engram
            .memory()
            .get_memory(proto::GetMemoryRequest {
                scope: Some(b.clone()),
                id: secret.id.clone(),
            })
            .await
            .expect_err("get across namespaces"),
        engram
            .memory()
            .update_memory(proto::UpdateMemoryRequest {
                scope: Some(b.clone()),
                id: secret.id.clone(),
                memory: Some(input(MemoryType::Fact, "overwritten")),
                ..Default::default()
            })
            .await
            .expect_err("update across namespaces"),
        engram
            .memory()
            .delete_memory(proto::DeleteMemoryRequest {
                scope: Some(b.clone()),
                id: secret.id.clone(),
                etag: String::new(),
            })
            .await
            .expect_err("delete across namespaces"),
    ] {
        assert_eq!(
            status.code(),
            Code::NotFound,
            "another namespace's memory does not exist for B"
        );
    }
    let context = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(b),
            query: "launch code".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!context.text.contains("1234"));
    // A's memory is untouched.
    assert_eq!(
        sorted_contents(&list_all(&engram, &a, 50).await),
        ["tenant A's launch code is 1234"]
    );
}

#[tokio::test]
async fn workspace_and_conversation_memories_follow_the_scope() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "levels";
    let write = |project: &str, session: &str| scoped(ns, project, session, "", "");
    let mut global = input(MemoryType::Preference, "global: user prefers metric units");
    global.level = MemoryLevel::Global.into();
    let global = create(&engram, &write("p1", "s1"), global)
        .await
        .memory
        .unwrap();
    assert_eq!(global.level(), MemoryLevel::Global);
    assert_eq!(
        global.scope.as_ref().unwrap().project_id,
        "",
        "a GLOBAL memory keeps no project"
    );
    // Without a level, the narrowest level the scope allows is used.
    let p1 = create(
        &engram,
        &write("p1", ""),
        input(MemoryType::Fact, "workspace p1: uses pnpm"),
    )
    .await
    .memory
    .unwrap();
    assert_eq!(p1.level(), MemoryLevel::Workspace);
    create(
        &engram,
        &write("p2", ""),
        input(MemoryType::Fact, "workspace p2: uses yarn"),
    )
    .await;
    let s1 = create(
        &engram,
        &write("p1", "s1"),
        input(MemoryType::Note, "conversation s1: debugging login"),
    )
    .await
    .memory
    .unwrap();
    assert_eq!(s1.level(), MemoryLevel::Conversation);
    assert_eq!(
        s1.scope.as_ref().unwrap().project_id,
        "",
        "a CONVERSATION memory keeps only its session"
    );
    create(
        &engram,
        &write("p1", "s2"),
        input(MemoryType::Note, "conversation s2: writing docs"),
    )
    .await;

    let visible = |project: &str, session: &str| {
        let engram = engram.clone();
        let scope = write(project, session);
        async move { sorted_contents(&list_all(&engram, &scope, 50).await) }
    };
    assert_eq!(visible("", "").await, ["global: user prefers metric units"]);
    assert_eq!(
        visible("p1", "").await,
        [
            "global: user prefers metric units",
            "workspace p1: uses pnpm"
        ]
    );
    assert_eq!(
        visible("p2", "").await,
        [
            "global: user prefers metric units",
            "workspace p2: uses yarn"
        ]
    );
    assert_eq!(
        visible("p1", "s1").await,
        [
            "conversation s1: debugging login",
            "global: user prefers metric units",
            "workspace p1: uses pnpm"
        ]
    );
    assert_eq!(
        visible("p1", "s2").await,
        [
            "conversation s2: writing docs",
            "global: user prefers metric units",
            "workspace p1: uses pnpm"
        ]
    );

    // The level filter narrows further, never widens.
    let only_workspace = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(write("p1", "s1")),
            filter: Some(proto::MemoryFilter {
                levels: vec![MemoryLevel::Workspace.into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .memories;
    assert_eq!(
        sorted_contents(&only_workspace),
        ["workspace p1: uses pnpm"]
    );

    // Search and get obey the same rule.
    let hits = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(write("p2", "")),
            query: "uses pnpm yarn".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(
        hits[0].memory.as_ref().unwrap().content,
        "workspace p2: uses yarn"
    );
    let hidden = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(write("p2", "s9")),
            id: s1.id,
        })
        .await
        .expect_err("another session's memory");
    assert_eq!(hidden.code(), Code::NotFound);

    // A level the scope cannot address is refused.
    let mut orphan = input(MemoryType::Fact, "no project to live in");
    orphan.level = MemoryLevel::Workspace.into();
    let refused = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(write("", "")),
            memory: Some(orphan),
            ..Default::default()
        })
        .await
        .expect_err("WORKSPACE without a project");
    assert_eq!(refused.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn agent_and_user_ids_narrow_what_is_seen() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "people";
    create(
        &engram,
        &scoped(ns, "", "", "", ""),
        input(MemoryType::Fact, "shared: the wiki is at /docs"),
    )
    .await;
    create(
        &engram,
        &scoped(ns, "", "", "coder", ""),
        input(MemoryType::Lesson, "coder: run clippy first"),
    )
    .await;
    create(
        &engram,
        &scoped(ns, "", "", "reviewer", ""),
        input(MemoryType::Lesson, "reviewer: check tests"),
    )
    .await;
    create(
        &engram,
        &scoped(ns, "", "", "", "alice"),
        input(MemoryType::Preference, "alice: likes tables"),
    )
    .await;
    create(
        &engram,
        &scoped(ns, "", "", "", "bob"),
        input(MemoryType::Preference, "bob: likes prose"),
    )
    .await;

    let seen = |agent: &str, user: &str| {
        let engram = engram.clone();
        let scope = scoped(ns, "", "", agent, user);
        async move { sorted_contents(&list_all(&engram, &scope, 50).await) }
    };
    assert_eq!(
        seen("coder", "alice").await,
        [
            "alice: likes tables",
            "coder: run clippy first",
            "shared: the wiki is at /docs"
        ]
    );
    assert_eq!(
        seen("reviewer", "").await,
        [
            "alice: likes tables",
            "bob: likes prose",
            "reviewer: check tests",
            "shared: the wiki is at /docs"
        ]
    );
    assert_eq!(
        seen("", "").await.len(),
        5,
        "a scope without agent or user sees the whole namespace"
    );
}
