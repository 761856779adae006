//! A changed preference or decision supersedes the old one (issue 15): the
//! old memory disappears from reads, search and context, keeps its history,
//! and the Remember response names it.

use engram_client::Engram;
use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, assert_rejects, create, input, list_all, scope};

async fn remember(engram: &Engram, ns: &proto::Scope, transcript: &str) -> proto::RememberResponse {
    engram
        .policy()
        .remember(proto::RememberRequest {
            scope: Some(ns.clone()),
            transcript: transcript.to_owned(),
            mode: proto::ClassifyMode::Rules.into(),
            ..Default::default()
        })
        .await
        .expect("remember")
}

async fn search(engram: &Engram, ns: &proto::Scope, query: &str) -> Vec<String> {
    engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: query.to_owned(),
            limit: 20,
            ..Default::default()
        })
        .await
        .expect("search")
        .hits
        .into_iter()
        .map(|hit| hit.memory.expect("a memory").content)
        .collect()
}

async fn context(engram: &Engram, ns: &proto::Scope, query: &str) -> String {
    engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(ns.clone()),
            query: query.to_owned(),
            token_budget: 1000,
            ..Default::default()
        })
        .await
        .expect("context")
        .text
}

#[tokio::test]
async fn a_changed_preference_supersedes_the_old_one_which_keeps_its_history() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("supersede").with_user("alice");

    let old = remember(&engram, &ns, "User: I prefer dark mode in every editor.").await;
    let old = old.memory.expect("the first preference is stored");
    assert_eq!(old.memory_type(), MemoryType::Preference);
    let unrelated = remember(
        &engram,
        &ns,
        "User: I prefer concise answers with code first.",
    )
    .await
    .memory
    .expect("stored");
    assert!(
        context(&engram, &ns, "dark mode editor")
            .await
            .contains("dark mode")
    );

    let new = remember(
        &engram,
        &ns,
        "User: I no longer prefer dark mode; switch me back to light mode.",
    )
    .await;
    let memory = new.memory.clone().expect("the new preference is stored");
    assert_eq!(memory.memory_type(), MemoryType::Preference);
    assert_eq!(
        new.superseded_memory_ids,
        std::slice::from_ref(&old.id),
        "{new:?}"
    );

    // Invalidated, not removed: GetMemory reads it, with what replaced it
    // and since when it is no longer true.
    let read = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: old.id.clone(),
        })
        .await
        .expect("the superseded preference is kept");
    assert_eq!(read.invalidated_by, memory.id, "{read:?}");
    assert!(!read.invalidation_reason.is_empty(), "{read:?}");
    let valid_to = read.valid_to.expect("valid_to is set");
    assert!(
        (valid_to.seconds, valid_to.nanos) >= {
            let t = memory.create_time.expect("create_time");
            (t.seconds, t.nanos)
        },
        "{read:?}"
    );
    assert_eq!(
        read.valid_from, old.occurred_at,
        "valid from when it happened"
    );

    // Gone from search, lists and context; the new one and the unrelated
    // one stay.
    let found = search(&engram, &ns, "dark mode").await;
    assert!(!found.contains(&old.content), "{found:?}");
    assert!(found.contains(&memory.content), "{found:?}");
    let text = context(&engram, &ns, "dark mode editor").await;
    assert!(!text.contains("in every editor"), "{text}");
    assert!(text.contains("light mode"), "{text}");
    // The context of the time before the change shows the old preference.
    let then = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(ns.clone()),
            query: "dark mode editor".into(),
            token_budget: 1000,
            valid_at: old.occurred_at,
            ..Default::default()
        })
        .await
        .expect("context then")
        .text;
    assert!(then.contains("in every editor"), "{then}");
    assert!(!then.contains("light mode"), "{then}");
    let listed: Vec<String> = list_all(&engram, &ns, 50)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.contains(&unrelated.id) && listed.contains(&memory.id));

    // What was true before the change answers with it: a list at the old
    // preference's time, a search with every memory.
    let listed_then = list_filtered(
        &engram,
        &ns,
        proto::MemoryFilter {
            valid_at: old.occurred_at,
            ..Default::default()
        },
    )
    .await;
    assert!(listed_then.contains(&old.id), "{listed_then:?}");
    assert!(!listed_then.contains(&memory.id), "{listed_then:?}");
    let every = list_filtered(
        &engram,
        &ns,
        proto::MemoryFilter {
            include_invalidated: true,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(every.len(), 3, "{every:?}");
    let searched_all = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: "dark mode".into(),
            filter: Some(proto::MemoryFilter {
                include_invalidated: true,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("search every memory");
    assert!(
        searched_all
            .hits
            .iter()
            .any(|h| h.memory.as_ref().is_some_and(|m| m.id == old.id)),
        "{searched_all:?}"
    );

    // Its history shows it was created, then invalidated by the new one.
    let history = history(&engram, &ns, &old.id).await;
    let actions: Vec<_> = history.iter().map(|r| r.action()).collect();
    assert_eq!(
        actions,
        [
            proto::RevisionAction::Created,
            proto::RevisionAction::Invalidated
        ],
        "{history:?}"
    );
    assert_eq!(history[1].changed_fields, ["valid_to"], "{history:?}");
    assert_eq!(history[1].replaced_by, memory.id, "{history:?}");
    assert_eq!(history[1].reason, read.invalidation_reason, "{history:?}");
}

/// The ids of every memory of `scope` that `filter` lets through, listed.
async fn list_filtered(
    engram: &Engram,
    scope: &proto::Scope,
    filter: proto::MemoryFilter,
) -> Vec<String> {
    engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(scope.clone()),
            filter: Some(filter),
            page_size: 100,
            ..Default::default()
        })
        .await
        .expect("list")
        .memories
        .into_iter()
        .map(|m| m.id)
        .collect()
}

#[tokio::test]
async fn a_replaced_decision_supersedes_the_earlier_one_and_nothing_else_goes() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("supersede-decisions").with_project("shop");
    let old = remember(
        &engram,
        &ns,
        "User: we decided to use RabbitMQ for the event bus.",
    )
    .await
    .memory
    .expect("stored");
    assert_eq!(old.memory_type(), MemoryType::Decision);
    let other = remember(&engram, &ns, "User: we decided to deploy on Tuesdays.")
        .await
        .memory
        .expect("stored");

    let new = remember(
        &engram,
        &ns,
        "User: we decided to move the event bus to Kafka instead of RabbitMQ.",
    )
    .await;
    assert!(new.memory.is_some(), "{new:?}");
    assert_eq!(
        new.superseded_memory_ids,
        std::slice::from_ref(&old.id),
        "{new:?}"
    );
    let left: Vec<String> = list_all(&engram, &ns, 50)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert!(
        left.contains(&other.id) && !left.contains(&old.id),
        "{left:?}"
    );

    // A new preference without a change cue supersedes nothing.
    let plain = remember(&engram, &ns, "User: we decided to deploy on Thursdays too.").await;
    assert!(plain.superseded_memory_ids.is_empty(), "{plain:?}");
}

/// The ids of the memories `ns` can read.
async fn readable(engram: &Engram, ns: &proto::Scope) -> Vec<String> {
    list_all(engram, ns, 50)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect()
}

#[tokio::test]
async fn superseding_touches_only_the_writers_own_memories() {
    let server = Server::start().await;
    let engram = server.client().await;
    let shared = scope("supersede-owners");
    let bob = shared.clone().with_user("bob");
    let carol = shared.clone().with_user("carol");
    let alice = shared.clone().with_user("alice");
    let dark = "User: I prefer dark mode in every editor.";
    let change = "User: I no longer prefer dark mode; switch me back to light mode.";

    let common = remember(&engram, &shared, dark)
        .await
        .memory
        .expect("stored");
    let bobs = remember(&engram, &bob, dark).await.memory.expect("stored");
    let carols = remember(&engram, &carol, dark)
        .await
        .memory
        .expect("stored");
    assert!(common.id != bobs.id && bobs.id != carols.id, "three owners");

    // Bob sees the shared preference but does not own it: his change
    // replaces his own alone, and alice still has the shared one.
    let by_bob = remember(&engram, &bob, change).await;
    assert!(by_bob.memory.is_some(), "{by_bob:?}");
    assert_eq!(
        by_bob.superseded_memory_ids,
        std::slice::from_ref(&bobs.id),
        "{by_bob:?}"
    );
    assert!(readable(&engram, &alice).await.contains(&common.id));

    // A writer without a user sees carol's preference but does not own it:
    // its change replaces the shared one alone.
    let by_nobody = remember(&engram, &shared, change).await;
    assert!(by_nobody.memory.is_some(), "{by_nobody:?}");
    assert_eq!(
        by_nobody.superseded_memory_ids,
        std::slice::from_ref(&common.id),
        "{by_nobody:?}"
    );
    assert!(readable(&engram, &carol).await.contains(&carols.id));
    assert!(!readable(&engram, &alice).await.contains(&common.id));
}

#[tokio::test]
async fn update_memory_invalidates_a_memory_and_corrects_a_mistaken_invalidation() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("validity-updates");
    let stored = create(
        &engram,
        &ns,
        input(MemoryType::Fact, "the staging DB is on port 5433"),
    )
    .await
    .memory
    .expect("stored");
    let update = |valid_to: Option<prost_types::Timestamp>| proto::UpdateMemoryRequest {
        scope: Some(ns.clone()),
        id: stored.id.clone(),
        memory: Some(proto::MemoryInput {
            valid_to,
            ..Default::default()
        }),
        update_mask: Some(prost_types::FieldMask {
            paths: vec!["valid_to".into()],
        }),
        etag: String::new(),
    };

    // Not before it became true, and never on a create.
    let status = engram
        .memory()
        .update_memory(update(stored.valid_from))
        .await
        .expect_err("valid_to at valid_from");
    assert_rejects(&status, "memory.valid_to");
    let status = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(ns.clone()),
            memory: Some(proto::MemoryInput {
                valid_to: stored.valid_from,
                ..input(MemoryType::Fact, "born invalidated")
            }),
            ..Default::default()
        })
        .await
        .expect_err("valid_to on a create");
    assert_rejects(&status, "memory.valid_to");

    // Invalidated by the caller: out of lists, in its history with why.
    let from = stored.valid_from.expect("valid_from");
    let until = prost_types::Timestamp {
        seconds: from.seconds + 60,
        nanos: from.nanos,
    };
    let invalidated = engram
        .memory()
        .update_memory(update(Some(until)))
        .await
        .expect("invalidate");
    assert_eq!(invalidated.valid_to, Some(until));
    assert!(!invalidated.invalidation_reason.is_empty());
    let listed_at = |at: prost_types::Timestamp| {
        let (engram, ns) = (engram.clone(), ns.clone());
        async move {
            engram
                .memory()
                .list_memories(proto::ListMemoriesRequest {
                    scope: Some(ns),
                    filter: Some(proto::MemoryFilter {
                        valid_at: Some(at),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .await
                .expect("list")
                .memories
                .len()
        }
    };
    assert_eq!(listed_at(from).await, 1, "true from valid_from");
    assert_eq!(listed_at(until).await, 0, "no longer true at valid_to");

    // A mistaken invalidation, corrected: true again, reason cleared.
    let corrected = engram
        .memory()
        .update_memory(update(None))
        .await
        .expect("make it true again");
    assert_eq!(corrected.valid_to, None);
    assert!(corrected.invalidation_reason.is_empty());
    assert_eq!(list_all(&engram, &ns, 10).await.len(), 1);
    let history = history(&engram, &ns, &stored.id).await;
    let actions: Vec<_> = history.iter().map(|r| r.action()).collect();
    assert_eq!(
        actions,
        [
            proto::RevisionAction::Created,
            proto::RevisionAction::Invalidated,
            proto::RevisionAction::Updated
        ],
        "{history:?}"
    );
    assert_eq!(history[1].reason, invalidated.invalidation_reason);
    assert_eq!(history[2].changed_fields, ["valid_to"]);
}

/// The history of memory `id` of `ns`, oldest first.
async fn history(engram: &Engram, ns: &proto::Scope, id: &str) -> Vec<proto::MemoryRevision> {
    engram
        .memory()
        .list_memory_revisions(proto::ListMemoryRevisionsRequest {
            scope: Some(ns.clone()),
            id: id.to_owned(),
            ..Default::default()
        })
        .await
        .expect("the memory keeps its history")
        .revisions
}
