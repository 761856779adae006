//! Semantic search with the real all-MiniLM-L6-v2 model in the server: a
//! paraphrase without a shared word is found, vectors are embedded in the
//! background and survive a restart, and the vector index never crosses a
//! tenant or a scope.

use engram_client::Engram;
use engram_client::proto::{self, MemoryType, SemanticSearch};
use engram_tests::{
    Server, create, embedded, hit_contents, input, pending_embeddings, scope, search_meaning,
};

const DOG: &str = "My dog loves playing fetch in the park";
/// Not one word (or stem) in common with [`DOG`].
const PARAPHRASE: &str = "puppy enjoys chasing a ball outdoors";
const OTHERS: [&str; 3] = [
    "The quarterly tax report is due in April",
    "Kubernetes pods restart when they exceed their memory limits",
    "Alice prefers concise answers with code first",
];

async fn search(engram: &Engram, ns: &proto::Scope, query: &str) -> proto::SearchMemoriesResponse {
    search_meaning(engram, ns, query, None).await
}

#[tokio::test]
async fn a_paraphrase_without_a_shared_word_is_found_first_and_after_a_restart() {
    let mut server = Server::start_with_test_model().await;
    let engram = server.client().await;
    let ns = scope("semantic");
    create(&engram, &ns, input(MemoryType::Fact, DOG)).await;
    for other in OTHERS {
        create(&engram, &ns, input(MemoryType::Fact, other)).await;
    }
    embedded(&engram, &ns).await;

    let found = search(&engram, &ns, PARAPHRASE).await;
    assert_eq!(found.semantic(), SemanticSearch::Complete);
    assert_eq!(hit_contents(&found).first(), Some(&DOG));
    let best = &found.hits[0];
    assert_eq!(best.semantic, 1.0, "the nearest has the top semantic score");
    assert!(best.relevance > 0.0);

    // Words only, on request: nothing shares a word with the query.
    let words_only = search_meaning(&engram, &ns, PARAPHRASE, Some(0.0)).await;
    assert_eq!(words_only.semantic(), SemanticSearch::Off);
    assert!(
        words_only.hits.is_empty(),
        "{:?}",
        hit_contents(&words_only)
    );

    // Vectors are kept in the database: nothing to embed again.
    server.stop().await;
    let server = server.start_again().await;
    let engram = server.client().await;
    assert_eq!(pending_embeddings(&engram, &ns).await, 0);
    let found = search(&engram, &ns, PARAPHRASE).await;
    assert_eq!(hit_contents(&found).first(), Some(&DOG));
}

#[tokio::test]
async fn the_vector_index_keeps_to_the_namespace_and_the_scope() {
    let server = Server::start_with_test_model().await;
    let engram = server.client().await;
    let (a, b, empty) = (scope("vectors-a"), scope("vectors-b"), scope("vectors-c"));
    let mine = create(&engram, &a, input(MemoryType::Fact, OTHERS[0]))
        .await
        .memory
        .unwrap();
    create(&engram, &b, input(MemoryType::Fact, DOG)).await;
    // A conversation memory of session s1 in namespace a.
    let mut session = a.clone();
    session.session_id = "s1".into();
    let mut chat = input(MemoryType::Fact, DOG);
    chat.level = proto::MemoryLevel::Conversation.into();
    create(&engram, &session, chat).await;
    for ns in [&a, &b, &session] {
        embedded(&engram, ns).await;
    }

    // From namespace a without the session: only a's own global memory,
    // however far from the query, never b's dog or s1's.
    let found = search(&engram, &a, PARAPHRASE).await;
    assert_eq!(hit_contents(&found), [OTHERS[0]]);
    assert_eq!(found.hits[0].memory.as_ref().unwrap().id, mine.id);
    // From session s1, its dog is found.
    let found = search(&engram, &session, PARAPHRASE).await;
    assert_eq!(hit_contents(&found).first(), Some(&DOG));
    // Namespace b sees only its own.
    assert_eq!(hit_contents(&search(&engram, &b, PARAPHRASE).await), [DOG]);
    assert!(search(&engram, &empty, PARAPHRASE).await.hits.is_empty());
}

#[tokio::test]
async fn an_edited_memory_is_embedded_again() {
    let server = Server::start_with_test_model().await;
    let engram = server.client().await;
    let ns = scope("re-embed");
    let memory = create(&engram, &ns, input(MemoryType::Fact, OTHERS[0]))
        .await
        .memory
        .unwrap();
    create(&engram, &ns, input(MemoryType::Fact, OTHERS[1])).await;
    embedded(&engram, &ns).await;
    engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(ns.clone()),
            id: memory.id.clone(),
            memory: Some(input(MemoryType::Fact, DOG)),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into()],
            }),
            etag: String::new(),
        })
        .await
        .expect("update");
    embedded(&engram, &ns).await;
    let found = search(&engram, &ns, PARAPHRASE).await;
    assert_eq!(found.semantic(), SemanticSearch::Complete);
    assert_eq!(found.hits[0].memory.as_ref().unwrap().id, memory.id);
    assert_eq!(found.hits[0].semantic, 1.0);
}
