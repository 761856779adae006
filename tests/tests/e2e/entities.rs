//! Entities (issue 27): every memory names the people, organizations,
//! projects, services, tools and places the server finds in it; they are
//! listed, read with what was true of them when, merged when two names
//! mean one thing, filter searches and lists, and get an "About" section
//! in a context block — each seen only through memories the reader sees.

use engram_client::Engram;
use engram_client::proto::{self, EntityType, MemoryType};
use engram_tests::{Server, create, input, scope};
use prost_types::Timestamp;
use tonic::Code;

async fn list(engram: &Engram, request: proto::ListEntitiesRequest) -> Vec<proto::Entity> {
    let mut all = Vec::new();
    let mut request = request;
    loop {
        let page = engram
            .memory()
            .list_entities(request.clone())
            .await
            .expect("list entities");
        all.extend(page.entities);
        if page.next_page_token.is_empty() {
            return all;
        }
        request.page_token = page.next_page_token;
    }
}

async fn names(engram: &Engram, reader: &proto::Scope) -> Vec<String> {
    let request = proto::ListEntitiesRequest {
        scope: Some(reader.clone()),
        ..Default::default()
    };
    list(engram, request)
        .await
        .into_iter()
        .map(|e| e.name)
        .collect()
}

async fn get(
    engram: &Engram,
    reader: &proto::Scope,
    entity: &str,
    valid_at: Option<Timestamp>,
) -> Result<proto::GetEntityResponse, tonic::Status> {
    engram
        .memory()
        .get_entity(proto::GetEntityRequest {
            scope: Some(reader.clone()),
            entity: entity.to_owned(),
            valid_at,
            ..Default::default()
        })
        .await
        .map_err(|e| e.status().cloned().expect("a status from the server"))
}

fn at(seconds: i64) -> Timestamp {
    Timestamp { seconds, nanos: 0 }
}

fn happened(memory_type: MemoryType, content: &str, seconds: i64) -> proto::MemoryInput {
    proto::MemoryInput {
        occurred_at: Some(at(seconds)),
        ..input(memory_type, content)
    }
}

/// 2026-01-01 and a month later.
const JANUARY: i64 = 1_767_225_600;
const FEBRUARY: i64 = JANUARY + 31 * 86_400;

#[tokio::test]
async fn entities_are_listed_read_at_a_time_and_seen_only_through_visible_memories() {
    let server = Server::start().await;
    let engram = server.client().await;
    let alice = scope("entities").with_user("alice");
    let first = create(
        &engram,
        &alice,
        happened(
            MemoryType::Fact,
            "Alice Chen works at Acme in Berlin.",
            JANUARY,
        ),
    )
    .await;
    let second = create(
        &engram,
        &alice,
        happened(
            MemoryType::Fact,
            "Alice Chen now works at Globex.",
            FEBRUARY,
        ),
    )
    .await;
    let first_id = first.memory.expect("memory").id;
    let second_id = second.memory.expect("memory").id;
    assert_eq!(
        second.invalidated_memory_ids,
        std::slice::from_ref(&first_id)
    );
    create(
        &engram,
        &alice,
        input(
            MemoryType::Note,
            "Ping @marco in #ops before the payments-api deploy.",
        ),
    )
    .await;

    let listed = names(&engram, &alice).await;
    for name in ["Alice Chen", "Acme", "Berlin", "Globex", "@marco"] {
        assert!(listed.contains(&name.to_owned()), "{name} in {listed:?}");
    }
    let mut sorted = listed.clone();
    sorted.sort_by_key(|n| n.to_lowercase());
    assert_eq!(listed, sorted, "listed by name without case");

    // What is true now, and what was true in January.
    let now = get(&engram, &alice, "alice chen", None)
        .await
        .expect("alice");
    let entity = now.entity.clone().expect("entity");
    assert_eq!(entity.name, "Alice Chen");
    assert_eq!(entity.entity_type(), EntityType::Person);
    assert_eq!(entity.memory_count, 1, "the Acme memory is no longer true");
    let ids: Vec<&str> = now.memories.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, [second_id.as_str()]);
    let employer = |view: &proto::GetEntityResponse| {
        view.relations
            .iter()
            .find(|r| r.predicate == "employer")
            .map(|r| (r.object.clone(), r.memory_id.clone()))
    };
    assert_eq!(employer(&now), Some(("Globex".into(), second_id.clone())));
    let then = get(&engram, &alice, "Alice Chen", Some(at(JANUARY + 86_400)))
        .await
        .expect("alice in january");
    let ids: Vec<&str> = then.memories.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, [first_id.as_str()]);
    assert_eq!(employer(&then), Some(("Acme".into(), first_id.clone())));
    // By id too.
    let by_id = get(&engram, &alice, &entity.id, None).await.expect("by id");
    assert_eq!(by_id.entity.expect("entity").name, "Alice Chen");
    // Acme is named only by the memory that is no longer true: it is
    // still listed (the memory is kept), with nothing true now.
    let acme = get(&engram, &alice, "acme", None).await.expect("acme");
    assert_eq!(acme.entity.expect("entity").memory_count, 0);
    assert!(acme.memories.is_empty());

    // Filters and pages.
    let people = list(
        &engram,
        proto::ListEntitiesRequest {
            scope: Some(alice.clone()),
            entity_types: vec![EntityType::Person.into()],
            ..Default::default()
        },
    )
    .await;
    let people: Vec<&str> = people.iter().map(|e| e.name.as_str()).collect();
    assert!(
        people.contains(&"Alice Chen") && !people.contains(&"Globex"),
        "{people:?}"
    );
    let prefixed = list(
        &engram,
        proto::ListEntitiesRequest {
            scope: Some(alice.clone()),
            name_prefix: "ALI".into(),
            ..Default::default()
        },
    )
    .await;
    let prefixed: Vec<&str> = prefixed.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(prefixed, ["Alice Chen"]);
    let paged: Vec<String> = list(
        &engram,
        proto::ListEntitiesRequest {
            scope: Some(alice.clone()),
            page_size: 1,
            ..Default::default()
        },
    )
    .await
    .into_iter()
    .map(|e| e.name)
    .collect();
    assert_eq!(
        paged, listed,
        "one at a time, the same entities in the same order"
    );

    // Another user sees none of it; a shared memory is seen by both.
    let bob = scope("entities").with_user("bob");
    assert!(names(&engram, &bob).await.is_empty());
    let hidden = get(&engram, &bob, "Alice Chen", None)
        .await
        .expect_err("hidden");
    assert_eq!(hidden.code(), Code::NotFound);
    create(
        &engram,
        &scope("entities"),
        input(MemoryType::Fact, "Globex is headquartered in Zurich."),
    )
    .await;
    let shared = names(&engram, &bob).await;
    assert!(shared.contains(&"Globex".to_owned()), "{shared:?}");
    assert!(!shared.contains(&"Alice Chen".to_owned()), "{shared:?}");

    // Bad requests.
    for (request, field) in [
        (
            proto::GetEntityRequest {
                scope: Some(alice.clone()),
                ..Default::default()
            },
            "entity",
        ),
        (
            proto::GetEntityRequest {
                scope: Some(alice.clone()),
                entity: "Alice Chen".into(),
                memory_limit: 101,
                ..Default::default()
            },
            "memory_limit",
        ),
    ] {
        let refused = engram
            .memory()
            .get_entity(request)
            .await
            .expect_err("refused");
        let status = refused.status().expect("status");
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().contains(field), "{}", status.message());
    }
    let refused = engram
        .memory()
        .list_entities(proto::ListEntitiesRequest {
            scope: Some(alice.clone()),
            entity_types: vec![99],
            page_token: "nonsense".into(),
            ..Default::default()
        })
        .await
        .expect_err("refused");
    let status = refused.status().expect("status");
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("entity_types[0]") && status.message().contains("page_token"),
        "{}",
        status.message()
    );
}

#[tokio::test]
async fn searches_and_lists_filter_by_entity_and_contexts_say_what_is_known_about_one() {
    let server = Server::start().await;
    let engram = server.client().await;
    let team = scope("entity-filters");
    for content in [
        "Robert Smith owns the billing service.",
        "Bob Smith prefers Rust for new services.",
        "Priya Patel owns the search service.",
        "The billing service deploys on Tuesdays.",
    ] {
        create(&engram, &team, input(MemoryType::Fact, content)).await;
    }
    let search = |entities: Vec<&str>, query: &str| proto::SearchMemoriesRequest {
        scope: Some(team.clone()),
        query: query.to_owned(),
        filter: Some(proto::MemoryFilter {
            entities: entities.into_iter().map(str::to_owned).collect(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let contents = |hits: Vec<proto::SearchHit>| -> Vec<String> {
        hits.into_iter()
            .map(|h| h.memory.expect("memory").content)
            .collect()
    };
    let hits = engram_tests::search(&engram, search(vec!["priya patel"], "owns service")).await;
    assert_eq!(contents(hits), ["Priya Patel owns the search service."]);
    let hits = engram_tests::search(&engram, search(vec!["Nobody Known"], "service")).await;
    assert!(hits.is_empty(), "a name no entity goes by matches nothing");

    // Two names of one person, merged.
    let merged = engram
        .memory()
        .merge_entities(proto::MergeEntitiesRequest {
            scope: Some(team.clone()),
            entity: "Robert Smith".into(),
            duplicate: "bob smith".into(),
        })
        .await
        .expect("merge")
        .entity
        .expect("entity");
    assert_eq!(merged.name, "Robert Smith");
    assert_eq!(merged.aliases, ["Bob Smith"]);
    assert_eq!(merged.memory_count, 2);
    let by_alias = get(&engram, &team, "Bob Smith", None).await.expect("bob");
    assert_eq!(by_alias.entity.expect("entity").id, merged.id);
    let listed = names(&engram, &team).await;
    assert!(!listed.contains(&"Bob Smith".to_owned()), "{listed:?}");
    let hits = engram_tests::search(&engram, search(vec!["Robert Smith"], "service")).await;
    assert_eq!(hits.len(), 2, "both names' memories");
    // A name merged away leads to the kept entity in later writes too.
    create(
        &engram,
        &team,
        input(MemoryType::Fact, "Bob Smith lives in Lisbon."),
    )
    .await;
    let robert = get(&engram, &team, "robert smith", None)
        .await
        .expect("robert");
    assert_eq!(robert.entity.expect("entity").memory_count, 3);
    assert!(
        robert
            .relations
            .iter()
            .any(|r| r.predicate == "residence" && r.object == "Lisbon"),
        "{:?}",
        robert.relations
    );

    // Lists filter the same way, every named entity at once.
    let page = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(team.clone()),
            filter: Some(proto::MemoryFilter {
                entities: vec!["Robert Smith".into(), "Lisbon".into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("list");
    let listed: Vec<&str> = page.memories.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(listed, ["Bob Smith lives in Lisbon."]);

    // A changed content names its own entities.
    let lisbon = page.memories[0].clone();
    engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(team.clone()),
            id: lisbon.id.clone(),
            memory: Some(input(MemoryType::Fact, "Bob Smith lives in Porto.")),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into()],
            }),
            etag: String::new(),
        })
        .await
        .expect("update");
    let gone = get(&engram, &team, "Lisbon", None)
        .await
        .expect_err("no memory names it");
    assert_eq!(gone.code(), Code::NotFound);
    get(&engram, &team, "Porto", None).await.expect("porto");
    // And a deleted memory names nothing.
    engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(team.clone()),
            id: lisbon.id,
            ..Default::default()
        })
        .await
        .expect("delete");
    let gone = get(&engram, &team, "Porto", None)
        .await
        .expect_err("deleted");
    assert_eq!(gone.code(), Code::NotFound);

    // A context block says what is known about the person the query
    // names, by any of their names, beyond what matched its words.
    let block = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(team.clone()),
            query: "what do we know about robert".into(),
            token_budget: 1024,
            ..Default::default()
        })
        .await
        .expect("context");
    assert!(
        block.text.contains("## About Robert Smith\n"),
        "{}",
        block.text
    );
    assert!(
        block.text.contains("Bob Smith prefers Rust"),
        "{}",
        block.text
    );
    let about = block.text.find("## About").expect("about");
    let rust_line = block.text.find("Bob Smith prefers Rust").expect("line");
    assert!(rust_line > about);

    // Merging refuses what is not two entities.
    for (entity, duplicate, code) in [
        ("Robert Smith", "ROBERT SMITH", Code::InvalidArgument),
        ("Robert Smith", "Bob Smith", Code::FailedPrecondition),
        ("Robert Smith", "Nobody Known", Code::NotFound),
        ("", "Bob Smith", Code::InvalidArgument),
    ] {
        let refused = engram
            .memory()
            .merge_entities(proto::MergeEntitiesRequest {
                scope: Some(team.clone()),
                entity: entity.into(),
                duplicate: duplicate.into(),
            })
            .await
            .expect_err("refused");
        assert_eq!(
            refused.status().expect("status").code(),
            code,
            "{entity} / {duplicate}"
        );
    }
}

#[tokio::test]
async fn a_batch_naming_thousands_of_new_entities_is_stored_whole() {
    let server = Server::start().await;
    let engram = server.client().await;
    let crowd = scope("entity-crowd");
    // 500 memories naming 32 new handles each: 16,000 entities made in one
    // transaction, more than one statement may bind.
    let memories: Vec<proto::MemoryInput> = (0..500)
        .map(|i| {
            let handles: Vec<String> = (0..32).map(|j| format!("@u{i}x{j}")).collect();
            input(
                MemoryType::Note,
                &format!("Ping {} today.", handles.join(" ")),
            )
        })
        .collect();
    let batch = engram_tests::create_batch(&engram, &crowd, memories).await;
    assert_eq!(batch.results.len(), 500);
    let last = get(&engram, &crowd, "@U499X31", None)
        .await
        .expect("the last one");
    let last = last.entity.expect("entity");
    assert_eq!((last.name.as_str(), last.memory_count), ("@u499x31", 1));
    let page = engram
        .memory()
        .list_entities(proto::ListEntitiesRequest {
            scope: Some(crowd.clone()),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(page.entities.len(), 1000);
    assert!(!page.next_page_token.is_empty());
}
