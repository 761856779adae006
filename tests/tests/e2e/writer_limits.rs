//! The single writer under load: no one request holds it for long.

use std::time::{Duration, SystemTime};

use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, create_batch, input, list_all, scope};

/// Memories a Forget deletes here: several of its batches (2,000 each).
const FORGOTTEN: usize = 5_000;
/// How long the memories may take to be counted as expired.
const EXPIRY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long after it is sent each batch expires.
const EXPIRES_AFTER: Duration = Duration::from_secs(5);
/// Memories per BatchCreateMemories call.
const PER_CALL: usize = 500;

#[tokio::test]
async fn a_large_forget_deletes_in_batches_that_each_commit_and_writes_go_on_meanwhile() {
    // Retention would purge the expired memories itself: not during this test.
    let server = Server::start_with_args(&[
        "--metrics-listen",
        "127.0.0.1:0",
        "--retention-interval",
        "1h",
    ])
    .await;
    let engram = server.client().await;
    let ns = scope("forget");
    for call in 0..FORGOTTEN / PER_CALL {
        // Each batch expires shortly after it is sent: a slow machine may take
        // seconds for all of them, and a time already past is refused.
        let expire = SystemTime::now() + EXPIRES_AFTER;
        let memories = (0..PER_CALL)
            .map(|i| {
                let mut m = input(MemoryType::Event, &format!("event {call} {i}"));
                m.expire_time = Some(prost_types::Timestamp::from(expire));
                m
            })
            .collect();
        create_batch(&engram, &ns, memories).await;
    }
    let forget = |dry_run: bool| proto::ForgetRequest {
        scope: Some(ns.clone()),
        kinds: vec![proto::ForgetKind::Memories.into()],
        dry_run,
        ..Default::default()
    };
    // Wait until all have expired (a dry run counts them).
    let deadline = std::time::Instant::now() + EXPIRY_TIMEOUT;
    loop {
        let counted = engram
            .learning()
            .forget(forget(true))
            .await
            .expect("dry run");
        if counted.memories == FORGOTTEN as i64 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {FORGOTTEN} expired",
            counted.memories
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let before = server
        .scrape()
        .await
        .value("engram_forget_batches_total", &[]);

    // Creates sent alongside the Forget all succeed.
    let writer = {
        let engram = engram.clone();
        let ns = ns.clone();
        tokio::spawn(async move {
            for i in 0..20 {
                engram_tests::create(&engram, &ns, input(MemoryType::Fact, &format!("kept {i}")))
                    .await;
            }
        })
    };
    let forgotten = engram
        .learning()
        .forget(forget(false))
        .await
        .expect("forget");
    writer.await.expect("the creates");
    assert_eq!(forgotten.memories, FORGOTTEN as i64);
    let after = server
        .scrape()
        .await
        .value("engram_forget_batches_total", &[]);
    // 5,000 rows in batches of 2,000: three that delete, each committed on its own.
    assert!(after - before >= 3.0, "{before} → {after}");
    let left = list_all(&engram, &ns, 100).await;
    assert_eq!(left.len(), 20, "only the kept memories");
}
