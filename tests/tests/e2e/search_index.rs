//! The full-text index: what it finds (stems, CJK), that a search reflects
//! every acknowledged write at once, that it survives crashes and a lost
//! index folder, and that tenants never see or influence one another.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

use engram_client::proto::{self, MemoryType, WriteResult};
use engram_client::{Code, Engram};
use engram_tests::{Server, create, input, listed_ids, scope, search, server_binary};

fn query(ns: &proto::Scope, text: &str) -> proto::SearchMemoriesRequest {
    proto::SearchMemoriesRequest {
        scope: Some(ns.clone()),
        query: text.into(),
        limit: 100,
        ..Default::default()
    }
}

async fn found(engram: &Engram, ns: &proto::Scope, text: &str) -> Vec<String> {
    search(engram, query(ns, text))
        .await
        .into_iter()
        .map(|h| h.memory.unwrap().content)
        .collect()
}

/// The ids and relevances of a search, which depend on the index alone
/// (scores also carry recency, which moves with the clock).
async fn ranking(engram: &Engram, request: proto::SearchMemoriesRequest) -> Vec<(String, f64)> {
    search(engram, request)
        .await
        .into_iter()
        .map(|h| (h.memory.unwrap().id, h.relevance))
        .collect()
}

#[tokio::test]
async fn deployment_finds_deploys() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("stems");
    let deploys = "Deploys of the checkout service failed after the orders migration";
    create(&engram, &ns, input(MemoryType::Lesson, deploys)).await;
    create(
        &engram,
        &ns,
        input(
            MemoryType::Fact,
            "The office coffee machine is on floor three",
        ),
    )
    .await;
    assert_eq!(found(&engram, &ns, "deployment").await, [deploys]);
    assert_eq!(found(&engram, &ns, "deploying").await, [deploys]);
    assert_eq!(found(&engram, &ns, "failing").await, [deploys]);
}

#[tokio::test]
async fn a_cjk_word_finds_its_sentence() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("cjk");
    let japanese = "私は東京に住んでいて、毎朝電車で通勤しています";
    let chinese = "我们的数据库迁移在周五失败了";
    let korean = "배포는 금요일에 실패했습니다";
    for text in [japanese, chinese, korean] {
        create(&engram, &ns, input(MemoryType::Fact, text)).await;
    }
    assert_eq!(found(&engram, &ns, "東京").await, [japanese]);
    assert_eq!(found(&engram, &ns, "電車").await, [japanese]);
    assert_eq!(found(&engram, &ns, "数据库").await, [chinese]);
    assert_eq!(found(&engram, &ns, "迁移").await, [chinese]);
    assert_eq!(found(&engram, &ns, "금요일").await, [korean]);
    // A single character finds every sentence that has it.
    assert_eq!(found(&engram, &ns, "京").await, [japanese]);
    // Words found after a restart too (from the committed index).
    let server = server.restart().await;
    let engram = server.client().await;
    assert_eq!(found(&engram, &ns, "東京").await, [japanese]);
    assert_eq!(found(&engram, &ns, "数据库").await, [chinese]);
}

#[tokio::test]
async fn searches_read_their_writes() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("ryw");
    let memory = engram.memory();

    // Create: found by the very next call.
    let created = create(
        &engram,
        &ns,
        input(MemoryType::Fact, "The staging cluster runs in Frankfurt"),
    )
    .await
    .memory
    .unwrap();
    assert_eq!(found(&engram, &ns, "frankfurt").await.len(), 1);

    // Update: the old words no longer find it, the new ones do.
    let updated = memory
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(ns.clone()),
            id: created.id.clone(),
            memory: Some(input(
                MemoryType::Fact,
                "The staging cluster moved to Dublin",
            )),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into()],
            }),
            etag: String::new(),
        })
        .await
        .expect("update");
    assert!(found(&engram, &ns, "frankfurt").await.is_empty());
    assert_eq!(
        found(&engram, &ns, "dublin").await,
        ["The staging cluster moved to Dublin"]
    );

    // Merge: the reinforced memory's importance is what ranks it.
    let mut again = input(MemoryType::Fact, "The staging cluster moved to Dublin");
    again.importance = Some(0.95);
    let merged = create(&engram, &ns, again).await;
    assert_eq!(merged.result(), WriteResult::Merged);
    let hit = search(&engram, query(&ns, "dublin")).await.remove(0);
    assert_eq!(hit.importance, 0.95);
    assert_eq!(hit.memory.unwrap().seen_count, 2);

    // Delete: never returned again, not even once.
    memory
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns.clone()),
            id: updated.id.clone(),
            etag: String::new(),
        })
        .await
        .expect("delete");
    assert!(found(&engram, &ns, "dublin staging").await.is_empty());

    // Expiry: found until it expires, then never.
    let mut fleeting = input(MemoryType::Event, "The build of main is red right now");
    fleeting.expire_time = Some(prost_types::Timestamp::from(
        SystemTime::now() + Duration::from_millis(1500),
    ));
    create(&engram, &ns, fleeting).await;
    assert_eq!(found(&engram, &ns, "red build").await.len(), 1);
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert!(found(&engram, &ns, "red build").await.is_empty());

    // Forget removes the expired memory; storing it again is found at once.
    let forgotten = engram
        .learning()
        .forget(proto::ForgetRequest {
            scope: Some(ns.clone()),
            kinds: vec![proto::ForgetKind::Memories.into()],
            ..Default::default()
        })
        .await
        .expect("forget");
    assert_eq!(forgotten.memories, 1);
    assert!(found(&engram, &ns, "red build").await.is_empty());
    let fresh = create(
        &engram,
        &ns,
        input(MemoryType::Event, "The build of main is red right now"),
    )
    .await;
    assert_eq!(fresh.result(), WriteResult::Created);
    assert_eq!(found(&engram, &ns, "red build").await.len(), 1);

    // And all of it holds once the index has committed (a restart commits).
    let server = server.restart().await;
    let engram = server.client().await;
    assert!(found(&engram, &ns, "frankfurt").await.is_empty());
    assert!(found(&engram, &ns, "dublin").await.is_empty());
    assert_eq!(found(&engram, &ns, "red build").await.len(), 1);
}

/// What a writer learned before the kill: acknowledged creates, deletes
/// sent, deletes acknowledged.
enum Ack {
    Created(usize, String),
    DeleteSent(usize),
    Deleted(usize),
}

/// What a crash may not undo: every acknowledged create is found, and no
/// acknowledged delete comes back. A delete cut off by the kill may have
/// landed or not; the index must then agree with the database.
#[tokio::test]
async fn a_killed_server_keeps_every_acknowledged_write_searchable() {
    let mut server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("crash");
    let writers = 16;
    let (acks_tx, mut acks) = tokio::sync::mpsc::unbounded_channel::<Ack>();
    let mut tasks = Vec::new();
    for writer in 0..writers {
        let (memory, ns, acks) = (engram.memory(), ns.clone(), acks_tx.clone());
        tasks.push(tokio::spawn(async move {
            for round in 0.. {
                let n = writer + round * writers;
                let created = memory
                    .create_memory(proto::CreateMemoryRequest {
                        scope: Some(ns.clone()),
                        memory: Some(input(
                            MemoryType::Note,
                            &format!("burst note number tok{n} of writer w{writer}"),
                        )),
                        ..Default::default()
                    })
                    .await;
                let Ok(created) = created else { return };
                let id = created.memory.unwrap().id;
                if acks.send(Ack::Created(n, id.clone())).is_err() {
                    return;
                }
                // Every third memory is deleted again.
                if n % 3 == 0 {
                    if acks.send(Ack::DeleteSent(n)).is_err() {
                        return;
                    }
                    let deleted = memory
                        .delete_memory(proto::DeleteMemoryRequest {
                            scope: Some(ns.clone()),
                            id,
                            etag: String::new(),
                        })
                        .await;
                    if deleted.is_err() || acks.send(Ack::Deleted(n)).is_err() {
                        return;
                    }
                }
            }
        }));
    }
    drop(acks_tx);
    let mut created = std::collections::BTreeMap::new();
    let (mut sent, mut deleted) = (BTreeSet::new(), BTreeSet::new());
    let mut record = |ack| match ack {
        Ack::Created(n, id) => {
            created.insert(n, id);
        }
        Ack::DeleteSent(n) => {
            sent.insert(n);
        }
        Ack::Deleted(n) => {
            deleted.insert(n);
        }
    };
    let mut acknowledged = 0;
    while acknowledged < 1500 {
        let ack = acks.recv().await.expect("writers run");
        acknowledged += usize::from(matches!(ack, Ack::Created(..)));
        record(ack);
    }
    server.kill().await;
    // Acknowledgements that arrived before the kill took effect count too.
    while let Ok(ack) = acks.try_recv() {
        record(ack);
    }
    for task in tasks {
        let _ = task.await;
    }

    let server = server.start_anew().await;
    let engram = server.client().await;
    let mut undecided = 0;
    for (n, id) in &created {
        let contents = found(&engram, &ns, &format!("tok{n}")).await;
        let expected = [format!(
            "burst note number tok{n} of writer w{}",
            n % writers
        )];
        if deleted.contains(n) {
            assert!(contents.is_empty(), "deleted memory tok{n} came back");
        } else if sent.contains(n) {
            // The kill cut this delete off: the database decides.
            undecided += 1;
            let stored = engram
                .memory()
                .get_memory(proto::GetMemoryRequest {
                    scope: Some(ns.clone()),
                    id: id.clone(),
                })
                .await;
            match stored {
                Ok(_) => assert_eq!(contents, expected, "stored memory tok{n} is searchable"),
                Err(status) => {
                    assert_eq!(status.code(), Code::NotFound, "{status:?}");
                    assert!(contents.is_empty(), "deleted memory tok{n} is found");
                }
            }
        } else {
            assert_eq!(
                contents, expected,
                "acknowledged memory tok{n} is searchable"
            );
        }
    }
    assert!(undecided <= writers, "{undecided} deletes in flight");
    assert!(!deleted.is_empty() && created.len() > deleted.len());
}

/// Memories of several kinds, scopes and filters: the data of the
/// filter and rebuild tests.
async fn a_varied_namespace(engram: &Engram, ns: &str) -> Vec<proto::SearchMemoriesRequest> {
    let base = scope(ns);
    let with = |f: &dyn Fn(&mut proto::Scope)| {
        let mut scope = base.clone();
        f(&mut scope);
        scope
    };
    let shop = with(&|s| s.project_id = "shop".into());
    let session = with(&|s| s.session_id = "s1".into());
    let alice = with(&|s| s.user_id = "alice".into());
    let bot = with(&|s| s.agent_id = "bot".into());
    let words = [
        "alpha deploy pipeline",
        "alpha database migration locked the table",
        "alpha cache warming after deploys",
        "alpha the user prefers dark mode",
        "alpha retry with backoff on timeouts",
    ];
    let (now, day) = (SystemTime::now(), Duration::from_secs(24 * 3600));
    for (i, text) in words.iter().cycle().take(40).enumerate() {
        let owner = [&base, &shop, &session, &alice, &bot][i % 5];
        let mut memory = input(
            [
                MemoryType::Fact,
                MemoryType::Lesson,
                MemoryType::Preference,
                MemoryType::Note,
            ][i % 4],
            &format!("{text} item{i}"),
        );
        memory.importance = Some((i % 10) as f64 / 10.0);
        if i % 3 == 0 {
            memory.tags = vec!["ci".into(), format!("t{}", i % 2)];
        }
        if i % 4 == 1 {
            memory.metadata = [("repo".to_owned(), format!("r{}", i % 3))].into();
        }
        if i % 7 == 0 {
            memory.level = proto::MemoryLevel::Global.into();
        }
        if i % 3 == 1 {
            // Recorded after the fact: it happened i days ago.
            memory.occurred_at = Some((now - day * i as u32).into());
        }
        create(engram, owner, memory).await;
    }
    let filter = |f: proto::MemoryFilter| f;
    let mut requests = Vec::new();
    for reader in [base.clone(), shop.clone(), session.clone(), alice, bot] {
        for (text, filter) in [
            ("alpha", proto::MemoryFilter::default()),
            (
                "alpha",
                filter(proto::MemoryFilter {
                    memory_types: vec![MemoryType::Lesson.into(), MemoryType::Note.into()],
                    ..Default::default()
                }),
            ),
            (
                "alpha",
                filter(proto::MemoryFilter {
                    tags: vec!["ci".into(), "t0".into()],
                    ..Default::default()
                }),
            ),
            (
                "alpha",
                filter(proto::MemoryFilter {
                    metadata: [("repo".to_owned(), "r1".to_owned())].into(),
                    min_importance: 0.3,
                    ..Default::default()
                }),
            ),
            (
                "alpha",
                filter(proto::MemoryFilter {
                    levels: vec![proto::MemoryLevel::Workspace.into()],
                    ..Default::default()
                }),
            ),
            (
                "alpha",
                filter(proto::MemoryFilter {
                    occurred_before: Some((now - day * 10).into()),
                    ..Default::default()
                }),
            ),
            (
                "alpha",
                filter(proto::MemoryFilter {
                    occurred_after: Some((now - day * 30).into()),
                    occurred_before: Some((now - day * 4).into()),
                    memory_types: vec![MemoryType::Fact.into(), MemoryType::Lesson.into()],
                    ..Default::default()
                }),
            ),
            ("deploy migration", proto::MemoryFilter::default()),
            ("dark mode preferences", proto::MemoryFilter::default()),
        ] {
            requests.push(proto::SearchMemoriesRequest {
                filter: Some(filter),
                ..query(&reader, text)
            });
        }
    }
    requests
}

#[tokio::test]
async fn the_index_filters_exactly_as_the_database_lists() {
    let server = Server::start().await;
    let engram = server.client().await;
    let requests = a_varied_namespace(&engram, "filters").await;
    let check = |engram: Engram, requests: Vec<proto::SearchMemoriesRequest>| async move {
        let mut matched = 0;
        for request in requests.iter().filter(|r| r.query == "alpha") {
            // Every memory has "alpha": the search must return exactly what
            // ListMemories, filtering in SQL, does.
            let searched: BTreeSet<String> = ranking(&engram, request.clone())
                .await
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            let listed = listed_ids(
                &engram,
                request.scope.as_ref().expect("scope"),
                request.filter.as_ref().expect("filter"),
            )
            .await;
            assert_eq!(searched, listed, "{request:?}");
            matched += searched.len();
        }
        // Not vacuous: the filters let a good share through.
        assert!(matched > 100, "{matched}");
    };
    // Uncommitted (the tail), then committed (after a restart).
    check(engram, requests.clone()).await;
    let server = server.restart().await;
    check(server.client().await, requests).await;
}

#[tokio::test]
async fn a_lost_index_folder_is_rebuilt_with_the_same_results() {
    let mut server = Server::start().await;
    let engram = server.client().await;
    let requests = a_varied_namespace(&engram, "rebuild").await;
    let results = |engram: Engram, requests: Vec<proto::SearchMemoriesRequest>| async move {
        let mut all = Vec::new();
        for request in requests {
            all.push(ranking(&engram, request).await);
        }
        all
    };
    let before = results(engram, requests.clone()).await;
    // Not vacuous: most searches find something.
    assert!(before.iter().filter(|r| !r.is_empty()).count() > requests.len() / 2);

    server.stop().await;
    std::fs::remove_dir_all(server.index_dir()).expect("remove the index folder");
    let mut server = server.start_again().await;
    assert!(server.index_dir().join("meta.json").exists());
    assert!(server.log().contains("building the search index"));
    assert_eq!(
        results(server.client().await, requests.clone()).await,
        before
    );

    // `engram-server reindex` rebuilds it too, with progress, while the
    // server is stopped; while it runs, the folder is refused.
    // The index folder named as the server has it (on PostgreSQL there is
    // no database file for it to default to).
    let index_dir = server.index_dir();
    let reindex = |database: String| {
        let index_dir = index_dir.to_str().expect("utf-8 path");
        std::process::Command::new(server_binary())
            .args(["--database", &database, "--index-dir", index_dir, "reindex"])
            .output()
            .expect("run reindex")
    };
    let refused = reindex(server.database_url());
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("in use by another engram-server"),
        "{refused:?}"
    );
    server.stop().await;
    let reindexed = reindex(server.database_url());
    let stderr = String::from_utf8_lossy(&reindexed.stderr);
    assert!(reindexed.status.success(), "{stderr}");
    assert!(
        stderr.contains("indexing memories") && stderr.contains("100% 40/40"),
        "{stderr}"
    );
    let server = server.start_again().await;
    assert_eq!(results(server.client().await, requests).await, before);
}

#[tokio::test]
async fn no_search_of_one_namespace_sees_or_is_swayed_by_another() {
    let server = Server::start().await;
    let engram = server.client().await;
    let (a, b) = (scope("tenant-a"), scope("tenant-b"));
    for text in [
        "kafka consumer lag alert fired",
        "kafka partitions were rebalanced",
        "postgres vacuum freed disk space",
        "the kafka retention is seven days",
    ] {
        create(&engram, &a, input(MemoryType::Fact, text)).await;
    }
    let queries = [
        "kafka",
        "kafka lag",
        "postgres disk",
        "retention days kafka",
    ];
    let rank_all = |engram: Engram, ns: proto::Scope| async move {
        let mut all = Vec::new();
        for text in queries {
            all.push(ranking(&engram, query(&ns, text)).await);
        }
        all
    };
    let before = rank_all(engram.clone(), a.clone()).await;

    // Tenant B stores far more, with the same words in other proportions:
    // under index-wide statistics this would change A's scores.
    let mut b_ids = Vec::new();
    for i in 0..300 {
        let text = if i % 2 == 0 {
            format!("kafka kafka kafka broker {i} restarted after a long lag in the night")
        } else {
            format!("disk usage {i} on the postgres replica")
        };
        b_ids.push(
            create(&engram, &b, input(MemoryType::Fact, &text))
                .await
                .memory
                .unwrap()
                .id,
        );
    }
    assert_eq!(rank_all(engram.clone(), a.clone()).await, before);
    let server = server.restart().await; // B's memories now committed
    let engram = server.client().await;
    assert_eq!(rank_all(engram.clone(), a.clone()).await, before);
    for ranking in rank_all(engram.clone(), a.clone()).await {
        assert!(ranking.iter().all(|(id, _)| !b_ids.contains(id)));
    }
    // A namespace with nothing in it finds nothing, whatever B holds.
    assert!(
        found(&engram, &scope("tenant-c"), "kafka broker")
            .await
            .is_empty()
    );
    // And B sees its own.
    assert_eq!(found(&engram, &b, "broker").await.len(), 100);
}

#[tokio::test]
async fn an_index_of_another_database_is_rebuilt() {
    let mut first = Server::start().await;
    let engram = first.client().await;
    let ns = scope("swap");
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "only in the first database"),
    )
    .await;
    first.stop().await;
    // A second server whose index folder is the first one's.
    let second = Server::start_with_args(&[
        "--index-dir",
        first.index_dir().to_str().expect("utf-8 path"),
    ])
    .await;
    assert!(
        second.log().contains("it was built from another database"),
        "{}",
        second.log()
    );
    let engram = second.client().await;
    assert!(found(&engram, &ns, "first database").await.is_empty());
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "only in the second database"),
    )
    .await;
    assert_eq!(
        found(&engram, &ns, "database").await,
        ["only in the second database"]
    );
}

#[tokio::test]
async fn a_query_without_words_finds_nothing_and_fails_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("no-words");
    create(&engram, &ns, input(MemoryType::Fact, "something to find")).await;
    for text in ["?!", "---", "🙂🙂", "  "] {
        let response = engram.memory().search_memories(query(&ns, text)).await;
        match response {
            Ok(response) => assert!(response.hits.is_empty(), "{text:?}"),
            // A blank query is refused as such.
            Err(err) => {
                assert!(text.trim().is_empty(), "{text:?}: {err:?}");
                assert_eq!(err.code(), Code::InvalidArgument);
            }
        }
    }
    assert_eq!(
        found(&engram, &ns, "something").await,
        ["something to find"]
    );
}
