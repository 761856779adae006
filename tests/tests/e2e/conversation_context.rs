//! Conversation context in search: memories written one after another in a
//! session lend each other relevance, so the answer after a matching
//! question is found although it shares no word with the query — never
//! across sessions, never past the reader's visibility or filters.

use engram_client::Engram;
use engram_client::proto::{self, MemoryLevel, MemoryType};
use engram_tests::{Server, create, input, scope, search};

const QUESTION: &str = "Bob: What are your plans for the summer, Alice?";
/// Not one word (or stem) in common with the query below.
const ANSWER: &str = "Alice: Researching adoption agencies, it has been a dream of mine.";
const QUERY: &str = "summer plans";

fn in_session(namespace: &str, session: &str) -> proto::Scope {
    proto::Scope {
        session_id: session.to_owned(),
        ..scope(namespace)
    }
}

/// A GLOBAL memory written from `writer`'s scope.
async fn turn(engram: &Engram, writer: &proto::Scope, content: &str) -> proto::Memory {
    turn_at(engram, writer, content, MemoryLevel::Global).await
}

async fn turn_at(
    engram: &Engram,
    writer: &proto::Scope,
    content: &str,
    level: MemoryLevel,
) -> proto::Memory {
    create(
        engram,
        writer,
        proto::MemoryInput {
            level: level.into(),
            ..input(MemoryType::Event, content)
        },
    )
    .await
    .memory
    .expect("memory")
}

fn request(reader: &proto::Scope, context: Option<f64>) -> proto::SearchMemoriesRequest {
    proto::SearchMemoriesRequest {
        scope: Some(reader.clone()),
        query: QUERY.to_owned(),
        limit: 10,
        weights: Some(proto::SearchWeights {
            context,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn contents(hits: &[proto::SearchHit]) -> Vec<&str> {
    hits.iter()
        .map(|h| h.memory.as_ref().expect("memory").content.as_str())
        .collect()
}

#[tokio::test]
async fn the_answer_after_a_matching_question_is_found_by_its_context() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "context-answer";
    let (s1, s2) = (in_session(ns, "s1"), in_session(ns, "s2"));
    let question = turn(&engram, &s1, QUESTION).await;
    // Written between the question and the answer, in another session: not
    // the question's neighbour.
    turn(&engram, &s2, "Carol: The deploy pipeline is green again").await;
    let answer = turn(&engram, &s1, ANSWER).await;
    turn(&engram, &s1, "Bob: That sounds wonderful").await;

    // The session is kept as provenance whatever the level.
    assert_eq!(answer.origin_session_id, "s1");
    assert_eq!(answer.scope.as_ref().expect("scope").session_id, "");
    let fetched = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(scope(ns)),
            id: answer.id.clone(),
        })
        .await
        .expect("get");
    assert_eq!(fetched.origin_session_id, "s1");

    let hits = search(&engram, request(&scope(ns), None)).await;
    let mut found = contents(&hits);
    found.sort_unstable();
    assert_eq!(found, [ANSWER, QUESTION], "{hits:#?}");
    let by_id = |id: &str| {
        hits.iter()
            .find(|h| h.memory.as_ref().unwrap().id == id)
            .unwrap()
    };
    let (first, second) = (by_id(&question.id), by_id(&answer.id));
    assert_eq!(first.relevance, 1.0);
    // The answer matched nothing itself: all its relevance is lent. The
    // question asks something, so its answer gets twice the default share
    // (0.5), all of the question's relevance.
    assert!((second.context - 1.0).abs() < 1e-9, "{second:#?}");
    assert!((second.relevance - 1.0).abs() < 1e-9, "{second:#?}");
    assert!(
        (second.score - (0.6 * second.relevance + 0.2 * second.recency + 0.2 * second.importance))
            .abs()
            < 1e-9
    );

    // Without context every memory ranks on its own.
    let alone = search(&engram, request(&scope(ns), Some(0.0))).await;
    assert_eq!(contents(&alone), [QUESTION]);
    assert_eq!(alone[0].context, 0.0);
    // A smaller share lifts it less: twice 0.2.
    let less = search(&engram, request(&scope(ns), Some(0.2))).await;
    assert_eq!(contents(&less), [QUESTION, ANSWER]);
    assert!((less[1].relevance - 0.4).abs() < 1e-9, "{less:#?}");
}

#[tokio::test]
async fn memories_written_outside_a_session_have_no_neighbours() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("context-no-session");
    turn(&engram, &ns, QUESTION).await;
    turn(&engram, &ns, ANSWER).await;
    let hits = search(&engram, request(&ns, None)).await;
    assert_eq!(contents(&hits), [QUESTION]);
}

#[tokio::test]
async fn context_never_shows_what_the_reader_may_not_see_or_filtered_out() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "context-visibility";
    let s1 = in_session(ns, "s1");
    create(
        &engram,
        &s1,
        proto::MemoryInput {
            level: MemoryLevel::Global.into(),
            tags: vec!["plans".to_owned()],
            ..input(MemoryType::Event, QUESTION)
        },
    )
    .await;
    // Visible in session s1 only.
    turn_at(&engram, &s1, ANSWER, MemoryLevel::Conversation).await;

    let outside = search(&engram, request(&scope(ns), None)).await;
    assert_eq!(contents(&outside), [QUESTION]);
    let inside = search(&engram, request(&s1, None)).await;
    let mut found = contents(&inside);
    found.sort_unstable();
    assert_eq!(found, [ANSWER, QUESTION]);

    // A filter applies to a neighbour as to any hit: the answer has no tag.
    let tagged = proto::SearchMemoriesRequest {
        filter: Some(proto::MemoryFilter {
            tags: vec!["plans".to_owned()],
            ..Default::default()
        }),
        ..request(&s1, None)
    };
    assert_eq!(contents(&search(&engram, tagged).await), [QUESTION]);

    // Another tenant's conversation lends nothing.
    let other = in_session("context-other-tenant", "s1");
    turn(&engram, &other, ANSWER).await;
    let hits = search(&engram, request(&scope(ns), None)).await;
    assert_eq!(contents(&hits), [QUESTION]);
}

#[tokio::test]
async fn a_context_share_outside_0_to_1_is_refused() {
    let server = Server::start().await;
    let engram = server.client().await;
    for bad in [-0.1, 1.5, f64::NAN] {
        let status = engram
            .memory()
            .search_memories(request(&scope("context-bad"), Some(bad)))
            .await
            .expect_err("refused");
        engram_tests::assert_rejects(&status, "weights.context");
    }
}
