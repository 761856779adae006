//! With an embedder, outcomes' strategies are similar by meaning too
//! (DESIGN §5: cosine ≥ 0.75 beside word overlap), with the real
//! all-MiniLM-L6-v2 model: two rewordings without a shared word make one
//! heuristic, a negated strategy never joins it, and without an embedder the
//! words alone decide.

use engram_client::Engram;
use engram_client::proto::{self, LearningChange};
use engram_tests::{Server, test_model};

/// Cosine 0.862 with all-MiniLM-L6-v2, and not one content word in common.
const SCREENSHOT: &str = "take a screenshot on failure";
const REWORDED: &str = "capture an image of the screen when something fails";
/// Cosine 0.97 with [`SCREENSHOT`], but the opposite strategy.
const NEGATED: &str = "do not take a screenshot on failure";

fn agent(namespace: &str) -> proto::Scope {
    proto::Scope {
        namespace: namespace.to_owned(),
        agent_id: "tester".to_owned(),
        ..Default::default()
    }
}

/// An agent that learns a heuristic from two similar outcomes.
async fn learns_from_two(engram: &Engram, scope: &proto::Scope) {
    engram
        .learning()
        .set_agent_scope(proto::SetAgentScopeRequest {
            scope: Some(scope.clone()),
            min_occurrences: 2,
            ..Default::default()
        })
        .await
        .expect("set agent scope");
}

async fn record(
    engram: &Engram,
    scope: &proto::Scope,
    strategy: &str,
) -> proto::RecordOutcomeResponse {
    engram
        .learning()
        .record_outcome(proto::RecordOutcomeRequest {
            scope: Some(scope.clone()),
            task: "Check the signup page".to_owned(),
            task_type: "ui_testing".to_owned(),
            success: true,
            strategy: strategy.to_owned(),
            ..Default::default()
        })
        .await
        .expect("record outcome")
}

#[tokio::test]
async fn rewordings_make_one_heuristic_with_an_embedder() {
    let model = format!("local:{}", test_model().display());
    let server = Server::start_with_args(&["--embedder", &model]).await;
    let engram = server.client().await;
    let scope = agent("strategies-by-meaning");
    learns_from_two(&engram, &scope).await;

    let first = record(&engram, &scope, REWORDED).await;
    assert!(first.heuristic.is_none(), "{first:?}");
    let second = record(&engram, &scope, SCREENSHOT).await;
    assert_eq!(
        second.heuristic_change(),
        LearningChange::Created,
        "{second:?}"
    );
    let heuristic = second.heuristic.expect("heuristic");
    assert_eq!(heuristic.strategy, SCREENSHOT);
    assert_eq!(heuristic.occurrence_count, 2);

    // The rewording counts for the heuristic from now on.
    let third = record(&engram, &scope, REWORDED).await;
    assert_eq!(
        third.heuristic_change(),
        LearningChange::Updated,
        "{third:?}"
    );
    assert_eq!(third.heuristic.expect("heuristic").occurrence_count, 3);

    // Close in meaning, opposite in intent: neither joins nor makes one.
    let negated = record(&engram, &scope, NEGATED).await;
    assert!(negated.heuristic.is_none(), "{negated:?}");
}

#[tokio::test]
async fn without_an_embedder_words_alone_decide() {
    let server = Server::start().await;
    let engram = server.client().await;
    let scope = agent("strategies-by-words");
    learns_from_two(&engram, &scope).await;
    assert!(record(&engram, &scope, REWORDED).await.heuristic.is_none());
    let second = record(&engram, &scope, SCREENSHOT).await;
    assert!(second.heuristic.is_none(), "{second:?}");
}
