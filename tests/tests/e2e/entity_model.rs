//! Entities read by the model (issue 27), against a local OpenAI-compatible
//! server that checks what it is sent and misbehaves on purpose: in the
//! background, every memory is read for the entities it names and the
//! relations it states, under a strict JSON schema; `pending_extractions`
//! counts what is left; what it read moves with an export; an
//! unreachable model holds the reading back, and a reply off the schema
//! leaves the memory with the rules' entities.

use std::time::Duration;

use engram_client::Engram;
use engram_client::proto::{self, EntityType, MemoryType};
use engram_tests::fake_llm::{FakeLlm, Reply, asked};
use engram_tests::{Server, create, engram_server, import_into, input, scope};
use tempfile::TempDir;

const NAMESPACE: &str = "entity-model";

fn read_by_the_model() -> serde_json::Value {
    serde_json::json!({
        "entities": [
            {"name": "Zorblax", "type": "PROJECT"},
            {"name": "Mira Okafor", "type": "PERSON"},
        ],
        "relations": [
            {"subject": "Zorblax", "predicate": "led by", "object": "Mira Okafor"},
            {"subject": "Nobody Named", "predicate": "is", "object": "dropped"},
        ],
    })
}

async fn start(fake: &FakeLlm) -> Server {
    Server::start_with_env(
        &[
            "--llm-base-url",
            &fake.base_url,
            "--llm-model",
            "test-model",
            "--llm-timeout",
            "1s",
        ],
        &[("ENGRAM_LLM_API_KEY", "sk-test-entities")],
    )
    .await
}

async fn pending(engram: &Engram) -> i64 {
    engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope(NAMESPACE)),
        })
        .await
        .expect("stats")
        .pending_extractions
}

/// Waits until the model has read every memory.
async fn read_through(engram: &Engram) {
    let waiting = async {
        while pending(engram).await > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), waiting)
        .await
        .expect("the model reads every memory");
}

async fn entity(engram: &Engram, name: &str) -> Option<proto::GetEntityResponse> {
    engram
        .memory()
        .get_entity(proto::GetEntityRequest {
            scope: Some(scope(NAMESPACE)),
            entity: name.into(),
            ..Default::default()
        })
        .await
        .ok()
}

/// What GetEntity says the entity's memories state of it: (predicate,
/// object, memory id).
fn relations_of(zorblax: &proto::GetEntityResponse) -> Vec<(String, String, String)> {
    zorblax
        .relations
        .iter()
        .map(|r| (r.predicate.clone(), r.object.clone(), r.memory_id.clone()))
        .collect()
}

/// Exports `server`'s database and imports the file into a fresh SQLite
/// database, on which a server without a model is started.
async fn exported_and_imported(server: &Server) -> Server {
    let files = TempDir::new().expect("temp dir");
    let file = files.path().join("entity-model.jsonl");
    let path = file.to_str().expect("UTF-8 path");
    let exported =
        engram_server(&["export", "--database", &server.database_url(), "--to", path]).await;
    assert!(exported.status.success(), "{exported:?}");
    let text = std::fs::read_to_string(&file).expect("read the export");
    assert!(text.contains(r#""kind":"memory_relation""#), "{text}");
    let fresh = TempDir::new().expect("temp dir");
    let imported = import_into(fresh.path(), &file).await;
    assert!(imported.status.success(), "{imported:?}");
    let again = import_into(fresh.path(), &file).await;
    let told = String::from_utf8_lossy(&again.stderr);
    assert!(
        told.contains("imported 0 records of 1 namespaces"),
        "{told}"
    );
    Server::start_in(fresh).await
}

#[tokio::test]
async fn the_model_reads_entities_and_relations_in_the_background_and_they_move_with_an_export() {
    let fake = FakeLlm::start(Reply::Content(read_by_the_model())).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    let created = create(
        &engram,
        &scope(NAMESPACE),
        input(
            MemoryType::Fact,
            "the zorblax effort is run by mira these days",
        ),
    )
    .await;
    let id = created.memory.expect("memory").id;
    read_through(&engram).await;

    let zorblax = entity(&engram, "zorblax")
        .await
        .expect("Zorblax is an entity");
    let found = zorblax.entity.clone().expect("entity");
    assert_eq!(found.name, "Zorblax");
    assert_eq!(found.entity_type(), EntityType::Project);
    let relations = relations_of(&zorblax);
    assert_eq!(relations, [("led by".into(), "Mira Okafor".into(), id)]);
    let mira = entity(&engram, "Mira Okafor").await.expect("Mira is one");
    assert_eq!(
        mira.entity.expect("entity").entity_type(),
        EntityType::Person
    );

    let asked = asked(&fake, "memory_entities")
        .into_iter()
        .next()
        .expect("the model was asked for entities");
    assert_eq!(asked.body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        asked.body["messages"][1]["content"],
        "the zorblax effort is run by mira these days"
    );

    // Imported where no model is configured, the relations are as read.
    let imported = exported_and_imported(&server).await;
    let after = imported.client().await;
    read_through(&after).await;
    let zorblax = after
        .memory()
        .get_entity(proto::GetEntityRequest {
            scope: Some(scope(NAMESPACE)),
            entity: "zorblax".into(),
            ..Default::default()
        })
        .await
        .expect("Zorblax is imported");
    assert_eq!(relations_of(&zorblax), relations);
}

#[tokio::test]
async fn an_unreachable_model_holds_reading_back_and_a_bad_reply_is_passed_over() {
    let fake = FakeLlm::start(Reply::Status(503)).await;
    let server = start(&fake).await;
    let engram = server.client().await;
    create(
        &engram,
        &scope(NAMESPACE),
        input(
            MemoryType::Fact,
            "the zorblax effort is run by mira these days",
        ),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(pending(&engram).await, 1, "waits for the model");
    assert!(entity(&engram, "Zorblax").await.is_none());

    fake.reply(Reply::Content(read_by_the_model()));
    read_through(&engram).await;
    assert!(entity(&engram, "Zorblax").await.is_some());

    // Off the schema: passed over, with the rules' entities only.
    fake.reply(Reply::Content(serde_json::json!({
        "entities": [{"name": "Quuxcorp", "type": "COMPANY"}],
        "relations": [],
    })));
    create(
        &engram,
        &scope(NAMESPACE),
        input(MemoryType::Fact, "Alice Chen joined quuxcorp"),
    )
    .await;
    read_through(&engram).await;
    assert!(entity(&engram, "Quuxcorp").await.is_none());
    assert!(entity(&engram, "Alice Chen").await.is_some());
    assert!(
        server
            .log()
            .contains("the model's entities of a memory were off the schema")
    );
}
