//! Waiting for the server's background embedding of a test's memories.

use std::time::{Duration, Instant};

use engram_client::{Engram, proto};

/// How long the background embedding of a test's memories may take.
const EMBEDDING_TIMEOUT: Duration = Duration::from_secs(60);

/// GetStats' `pending_embeddings` of `scope`'s namespace: memories still
/// waiting for their vector.
pub async fn pending_embeddings(engram: &Engram, scope: &proto::Scope) -> i64 {
    engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope.clone()),
        })
        .await
        .expect("stats")
        .pending_embeddings
}

/// Waits until the backfill has embedded every memory of `scope`'s namespace
/// and searches are complete by meaning. The vectors are stored first
/// (GetStats' `pending_embeddings` reaches 0), and the backfill then reads
/// the change feed past the changes that storing them made: until it has, a
/// search reports SEMANTIC_SEARCH_PARTIAL. That is asked of a namespace of
/// its own, which holds nothing (so the probe leaves no access bookkeeping
/// behind): the status is the server's, whatever the namespace.
pub async fn embedded(engram: &Engram, scope: &proto::Scope) {
    let deadline = Instant::now() + EMBEDDING_TIMEOUT;
    while pending_embeddings(engram, scope).await > 0 {
        assert!(Instant::now() < deadline, "embedding did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let probe = proto::Scope {
        namespace: format!("{}-embedding-probe", scope.namespace),
        ..Default::default()
    };
    loop {
        let found = engram
            .memory()
            .search_memories(proto::SearchMemoriesRequest {
                scope: Some(probe.clone()),
                query: "probe".into(),
                ..Default::default()
            })
            .await
            .expect("probe search");
        if found.semantic() != proto::SemanticSearch::Partial {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "searches stayed partial by meaning"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
