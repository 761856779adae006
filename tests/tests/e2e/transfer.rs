//! `engram-server export` and `import` against the real server: a database
//! exported and imported into a fresh one answers every list exactly as the
//! original, search and every memory's history (deleted memories' too, with
//! the API keys and agents that made each change) included; importing
//! again changes nothing; a record that differs, a malformed line or a cut
//! file stops the import with the line named and nothing of its namespace
//! applied; a file of the format before history imports as it did.
//!
//! SQLite only, whatever the suite's backend: `export` and `import` read
//! and write a SQLite database file, so every server here keeps its data
//! in one.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Output;

use engram_client::Engram;
use engram_client::proto::{self, MemoryLevel, MemoryType, RevisionAction};
use engram_tests::{
    Backend, Server, create, create_batch, engram_server, import_into, input, list_all,
    run_operator_script, run_operator_script_with_env, scope, search, sqlite_url,
};
use prost_types::Timestamp;
use tempfile::TempDir;

/// The namespaces the tests fill, each a little differently.
const NAMESPACES: [&str; 3] = ["acme", "globex", "initech"];
/// Small pages, so that every list is read across several.
const PAGE: i32 = 4;
/// A time in the past (2024-01-01T00:00:00Z), for occurred_at.
const LAST_YEAR_SECONDS: i64 = 1_704_067_200;
/// A time in the future (2100-01-01T00:00:00Z), for expire_time.
const FAR_FUTURE_SECONDS: i64 = 4_102_444_800;

fn at(seconds: i64) -> Timestamp {
    Timestamp { seconds, nanos: 0 }
}

fn in_scope(namespace: &str, set: impl FnOnce(&mut proto::Scope)) -> proto::Scope {
    let mut scope = scope(namespace);
    set(&mut scope);
    scope
}

/// Fills `namespace` with every kind of record, through the API.
async fn fill(engram: &Engram, namespace: &str, variant: usize) {
    let ns = scope(namespace);
    let project = in_scope(namespace, |s| s.project_id = "p1".into());
    let session = in_scope(namespace, |s| {
        s.session_id = "s1".into();
        s.user_id = "u1".into();
    });
    let agent = in_scope(namespace, |s| s.agent_id = "a1".into());

    // Memories of every level and type, with tags, metadata, importance,
    // summaries, event times and expiry.
    for i in 0..12 {
        let memory_type = [
            MemoryType::Fact,
            MemoryType::Preference,
            MemoryType::Lesson,
            MemoryType::Decision,
            MemoryType::Event,
            MemoryType::Note,
        ][(i + variant) % 6];
        let scope = [&ns, &project, &session, &agent][i % 4];
        let mut memory = input(
            memory_type,
            &format!("{namespace} deploy note {i}: the cache warms in {i} minutes"),
        );
        memory.tags = vec![format!("t{}", i % 3), "deploy".into()];
        memory.metadata = [("source".to_owned(), ["wiki", "chat"][i % 2].to_owned())].into();
        memory.importance = Some(0.1 * ((i % 9) as f64 + 1.0));
        memory.summary = format!("note {i}");
        if i % 5 == 0 {
            memory.occurred_at = Some(at(LAST_YEAR_SECONDS + i as i64 * 3600));
        }
        if i % 4 == 1 {
            memory.expire_time = Some(at(FAR_FUTURE_SECONDS));
        }
        create(engram, scope, memory).await;
    }
    // One batch: memories of one create time, told apart by insertion order.
    create_batch(
        engram,
        &ns,
        (0..6)
            .map(|i| {
                input(
                    MemoryType::Note,
                    &format!("batched fact {i} about invoices"),
                )
            })
            .collect(),
    )
    .await;
    // A merge (seen twice), an update (a later version) and a deletion.
    let merged = input(MemoryType::Preference, "always answer in British English");
    create(engram, &ns, merged.clone()).await;
    create(engram, &ns, merged).await;
    let updated = create(
        engram,
        &project,
        input(MemoryType::Fact, "the API runs on port 80"),
    )
    .await
    .memory
    .expect("memory");
    engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(project.clone()),
            id: updated.id,
            memory: Some(input(MemoryType::Fact, "the API runs on port 8080")),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into()],
            }),
            etag: String::new(),
        })
        .await
        .expect("update");
    let deleted = create(engram, &ns, input(MemoryType::Note, "a passing thought"))
        .await
        .memory
        .expect("memory");
    engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns.clone()),
            id: deleted.id,
            etag: String::new(),
        })
        .await
        .expect("delete");
    // Searches, so that access counts are kept.
    for query in ["cache warms", "invoices"] {
        search(
            engram,
            proto::SearchMemoriesRequest {
                scope: Some(ns.clone()),
                query: query.into(),
                ..Default::default()
            },
        )
        .await;
    }

    // Episodes: a success, a failure with mistake cards, one still running.
    let episodes = [
        (
            0.95,
            true,
            vec![],
            vec!["ran the migrations first".to_owned()],
        ),
        (0.2, false, vec!["skipped the dry run".to_owned()], vec![]),
    ];
    for (i, (score, success, mistakes, successes)) in episodes.into_iter().enumerate() {
        let episode = start_episode(engram, &project, "deploy", &format!("deploy {i}")).await;
        append_steps(engram, &project, &episode, 3).await;
        engram
            .memory()
            .complete_episode(proto::CompleteEpisodeRequest {
                scope: Some(project.clone()),
                episode_id: episode,
                outcome: Some(proto::EpisodeOutcome {
                    score,
                    success,
                    summary: format!("deploy {i} went {}", if success { "well" } else { "badly" }),
                    mistakes,
                    successes,
                    mistake_cards: if success {
                        vec![]
                    } else {
                        vec![proto::MistakeCardInput {
                            mistake_type: "process".into(),
                            worker_id: "w1".into(),
                            correct_decision: "run the dry run".into(),
                            evidence: "the migration failed".into(),
                            lesson: "dry runs catch it".into(),
                        }]
                    },
                }),
            })
            .await
            .expect("complete");
    }
    let running = start_episode(engram, &ns, "audit", "audit the logs").await;
    append_steps(engram, &ns, &running, 2 + variant).await;
    engram
        .learning()
        .record_mistake(proto::RecordMistakeRequest {
            scope: Some(ns.clone()),
            task_id: "audit".into(),
            card: Some(proto::MistakeCardInput {
                mistake_type: "scope".into(),
                worker_id: "w2".into(),
                correct_decision: "read the whole log".into(),
                evidence: "missed the first hour".into(),
                lesson: "start at the top".into(),
            }),
            ..Default::default()
        })
        .await
        .expect("record mistake");
    engram
        .learning()
        .consolidate(proto::ConsolidateRequest {
            scope: Some(ns.clone()),
            mode: proto::ConsolidateMode::Rules.into(),
            force: true,
        })
        .await
        .expect("consolidate");

    // Outcomes that make a heuristic and an anti-pattern, and agent scopes.
    let coder = in_scope(namespace, |s| s.agent_id = "coder".into());
    for i in 0..3 {
        record_outcome(
            engram,
            &coder,
            true,
            "reproduce with a fixed seed then bisect",
            "",
            i,
        )
        .await;
    }
    for i in 0..2 {
        record_outcome(
            engram,
            &coder,
            false,
            "retry until green",
            "timeout waiting for the database",
            i,
        )
        .await;
    }
    let reviewer = in_scope(namespace, |s| s.agent_id = "reviewer".into());
    engram
        .learning()
        .set_agent_scope(proto::SetAgentScopeRequest {
            scope: Some(reviewer),
            can_learn: vec!["testing".into()],
            cannot_learn: vec!["deploy".into()],
            min_occurrences: 2,
            etag: String::new(),
        })
        .await
        .expect("set agent scope");
}

async fn start_episode(engram: &Engram, scope: &proto::Scope, task: &str, what: &str) -> String {
    engram
        .memory()
        .start_episode(proto::StartEpisodeRequest {
            scope: Some(scope.clone()),
            task_id: task.into(),
            description: what.into(),
            task_type: "deployment".into(),
            context: Some(proto::EpisodeContext {
                language: "rust".into(),
                tags: vec!["ci".into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("start episode")
        .id
}

async fn append_steps(engram: &Engram, scope: &proto::Scope, episode: &str, count: usize) {
    let steps = (1..=count)
        .map(|n| proto::Step {
            step_number: n as i32,
            tool: "shell".into(),
            action: format!("step {n}"),
            parameters: format!("{{\"n\": {n}}}"),
            result: if n % 2 == 0 {
                proto::StepResult::Error
            } else {
                proto::StepResult::Ok
            }
            .into(),
            output: format!("output {n}"),
            latency_ms: 10 * n as i64,
            time: None,
        })
        .collect();
    engram
        .memory()
        .append_steps(proto::AppendStepsRequest {
            scope: Some(scope.clone()),
            episode_id: episode.into(),
            steps,
        })
        .await
        .expect("append steps");
}

async fn record_outcome(
    engram: &Engram,
    scope: &proto::Scope,
    success: bool,
    strategy: &str,
    error: &str,
    i: i64,
) {
    engram
        .learning()
        .record_outcome(proto::RecordOutcomeRequest {
            scope: Some(scope.clone()),
            task: "fix the flaky login test".into(),
            task_type: String::new(),
            success,
            strategy: strategy.into(),
            duration_ms: Some(1000 + i),
            error: error.into(),
            feedback: String::new(),
            ..Default::default()
        })
        .await
        .expect("record outcome");
}

/// Every item of a listing, across its pages (each server's own tokens).
async fn pages<T, F, Fut>(mut page: F) -> Vec<T>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = (Vec<T>, String)>,
{
    let mut items = Vec::new();
    let mut token = String::new();
    loop {
        let (more, next) = page(token).await;
        items.extend(more);
        if next.is_empty() {
            return items;
        }
        token = next;
    }
}

/// Every item of a list RPC of `client` (`$list` is its method, `$items`
/// its response's repeated field), with requests made by `$request` from
/// each page token.
macro_rules! every_page {
    ($client:ident.$list:ident, $items:ident, $request:expr) => {
        pages(|page_token| {
            let request = $request(page_token);
            let client = $client.clone();
            async move {
                let page = client.$list(request).await.expect(stringify!($list));
                (page.$items, page.next_page_token)
            }
        })
        .await
    };
}

/// What every list and get answers about `namespace`, labelled.
async fn answers(engram: &Engram, namespace: &str) -> Vec<(String, String)> {
    let mut answers = Vec::new();
    let memory = engram.memory();
    let scopes = [
        ("namespace", scope(namespace)),
        (
            "project",
            in_scope(namespace, |s| s.project_id = "p1".into()),
        ),
        (
            "session",
            in_scope(namespace, |s| {
                s.session_id = "s1".into();
                s.user_id = "u1".into();
            }),
        ),
        ("agent", in_scope(namespace, |s| s.agent_id = "a1".into())),
    ];
    let filters = [
        ("none", proto::MemoryFilter::default()),
        (
            "types",
            proto::MemoryFilter {
                memory_types: vec![MemoryType::Lesson.into(), MemoryType::Note.into()],
                ..Default::default()
            },
        ),
        (
            "levels",
            proto::MemoryFilter {
                levels: vec![MemoryLevel::Workspace.into()],
                ..Default::default()
            },
        ),
        (
            "tags",
            proto::MemoryFilter {
                tags: vec!["t1".into()],
                ..Default::default()
            },
        ),
        (
            "importance",
            proto::MemoryFilter {
                min_importance: 0.5,
                ..Default::default()
            },
        ),
        (
            "created",
            proto::MemoryFilter {
                created_after: Some(at(LAST_YEAR_SECONDS)),
                created_before: Some(at(FAR_FUTURE_SECONDS)),
                ..Default::default()
            },
        ),
        (
            "occurred",
            proto::MemoryFilter {
                occurred_before: Some(at(LAST_YEAR_SECONDS + 86_400)),
                ..Default::default()
            },
        ),
        (
            "metadata",
            proto::MemoryFilter {
                metadata: [("source".to_owned(), "wiki".to_owned())].into(),
                ..Default::default()
            },
        ),
    ];
    let orders = [
        proto::MemoryOrder::Unspecified,
        proto::MemoryOrder::CreateTimeAsc,
        proto::MemoryOrder::ImportanceDesc,
    ];
    // Each memory listed, with a scope it was listed from.
    let mut listed = BTreeMap::new();
    for (scope_name, scope) in &scopes {
        for (filter_name, filter) in &filters {
            for order in orders {
                let memories = every_page!(memory.list_memories, memories, |page_token| {
                    proto::ListMemoriesRequest {
                        scope: Some(scope.clone()),
                        filter: Some(filter.clone()),
                        order_by: order.into(),
                        page_size: PAGE,
                        page_token,
                    }
                });
                for m in &memories {
                    listed.entry(m.id.clone()).or_insert_with(|| scope.clone());
                }
                answers.push((
                    format!("ListMemories {scope_name} {filter_name} {order:?}"),
                    format!("{memories:#?}"),
                ));
            }
        }
    }

    for (id, seen_from) in listed {
        answers.push((
            format!("ListMemoryRevisions {id}"),
            format!("{:#?}", history(engram, namespace, &id).await),
        ));
        // With what only GetMemory shows: links and provenance.
        let got = memory
            .get_memory(proto::GetMemoryRequest {
                scope: Some(seen_from),
                id: id.clone(),
            })
            .await
            .expect("get memory");
        assert!(got.provenance.is_some(), "{got:?}");
        answers.push((format!("GetMemory {id}"), format!("{got:#?}")));
    }

    let ns = scope(namespace);
    let project = &scopes[1].1;
    for (label, scope, task_id, status) in [
        ("all", &ns, "", proto::EpisodeStatus::Unspecified),
        ("task", project, "deploy", proto::EpisodeStatus::Unspecified),
        ("running", &ns, "", proto::EpisodeStatus::Running),
    ] {
        let episodes = every_page!(memory.list_episodes, episodes, |page_token| {
            proto::ListEpisodesRequest {
                scope: Some(scope.clone()),
                task_id: task_id.into(),
                status: status.into(),
                page_size: PAGE,
                page_token,
                ..Default::default()
            }
        });
        for episode in &episodes {
            let got = engram
                .memory()
                .get_episode_with_all_steps(proto::GetEpisodeRequest {
                    scope: Some(ns.clone()),
                    id: episode.id.clone(),
                    ..Default::default()
                })
                .await
                .expect("get episode");
            answers.push((format!("GetEpisode {}", episode.id), format!("{got:#?}")));
        }
        answers.push((format!("ListEpisodes {label}"), format!("{episodes:#?}")));
    }

    let coder = in_scope(namespace, |s| s.agent_id = "coder".into());
    let learning = engram.learning();
    let outcomes = every_page!(learning.list_outcomes, outcomes, |page_token| {
        proto::ListOutcomesRequest {
            scope: Some(coder.clone()),
            page_size: PAGE,
            page_token,
            ..Default::default()
        }
    });
    answers.push(("ListOutcomes".into(), format!("{outcomes:#?}")));
    let heuristics = every_page!(learning.list_heuristics, heuristics, |page_token| {
        proto::ListHeuristicsRequest {
            scope: Some(coder.clone()),
            page_size: PAGE,
            page_token,
            ..Default::default()
        }
    });
    answers.push(("ListHeuristics".into(), format!("{heuristics:#?}")));
    let anti_patterns = every_page!(learning.list_anti_patterns, anti_patterns, |page_token| {
        proto::ListAntiPatternsRequest {
            scope: Some(coder.clone()),
            page_size: PAGE,
            page_token,
            ..Default::default()
        }
    });
    answers.push(("ListAntiPatterns".into(), format!("{anti_patterns:#?}")));
    let cards = every_page!(learning.list_mistake_cards, mistake_cards, |page_token| {
        proto::ListMistakeCardsRequest {
            scope: Some(ns.clone()),
            page_size: PAGE,
            page_token,
            ..Default::default()
        }
    });
    answers.push(("ListMistakeCards".into(), format!("{cards:#?}")));
    for task_id in [None, Some("deploy"), Some("")] {
        let rules = every_page!(learning.list_task_rules, task_rules, |page_token| {
            proto::ListTaskRulesRequest {
                scope: Some(ns.clone()),
                task_id: task_id.map(str::to_owned),
                page_size: PAGE,
                page_token,
            }
        });
        answers.push((format!("ListTaskRules {task_id:?}"), format!("{rules:#?}")));
    }
    for agent in ["coder", "reviewer"] {
        let got = engram
            .learning()
            .get_agent_scope(proto::GetAgentScopeRequest {
                scope: Some(in_scope(namespace, |s| s.agent_id = agent.into())),
            })
            .await
            .expect("get agent scope");
        answers.push((format!("GetAgentScope {agent}"), format!("{got:#?}")));
    }
    let stats = engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(ns.clone()),
        })
        .await
        .expect("stats");
    answers.push(("GetStats".into(), format!("{stats:#?}")));
    answers
}

/// The history of memory `id`, across small pages.
async fn history(engram: &Engram, namespace: &str, id: &str) -> Vec<proto::MemoryRevision> {
    let memory = engram.memory();
    every_page!(memory.list_memory_revisions, revisions, |page_token| {
        proto::ListMemoryRevisionsRequest {
            scope: Some(scope(namespace)),
            id: id.to_owned(),
            page_size: 2,
            page_token,
        }
    })
}

/// Asserts two servers answer alike about `namespace`.
async fn assert_same_answers(original: &Engram, imported: &Engram, namespace: &str) {
    let expected = answers(original, namespace).await;
    let actual = answers(imported, namespace).await;
    assert_eq!(expected.len(), actual.len());
    for ((label, want), (_, got)) in expected.iter().zip(&actual) {
        assert_eq!(got, want, "{namespace}: {label}");
    }
}

/// The ids of the hits of `query` in `namespace`, best first.
async fn found(engram: &Engram, namespace: &str, query: &str) -> Vec<String> {
    search(
        engram,
        proto::SearchMemoriesRequest {
            scope: Some(scope(namespace)),
            query: query.into(),
            limit: 20,
            ..Default::default()
        },
    )
    .await
    .into_iter()
    .map(|hit| hit.memory.expect("memory").id)
    .collect()
}

/// Stops `server`, imports `file` into its database again, asserts the
/// import found every record of its `namespaces` there already, and starts
/// a server on the database again.
async fn import_again(server: &mut Server, file: &Path, namespaces: usize) -> Server {
    server.stop().await;
    let again = import_into(server.data_dir(), file).await;
    let told = stderr(&again);
    assert!(again.status.success(), "{told}");
    assert!(
        told.contains(&format!("imported 0 records of {namespaces} namespaces")),
        "{told}"
    );
    server.start_anew().await
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A server on three filled namespaces, restarted so that its access
/// counts are written, and its export (taken while it runs).
async fn exported_server() -> (Server, TempDir, PathBuf) {
    let server = Server::start_on_backend(Backend::Sqlite).await;
    let engram = server.client().await;
    for (variant, namespace) in NAMESPACES.iter().enumerate() {
        fill(&engram, namespace, variant).await;
    }
    let server = server.restart().await;
    // readme: tests/operator/export.sh, with the server running.
    run_operator_script("export.sh", server.data_dir()).await;
    let files = TempDir::new().expect("temp dir");
    let file = files.path().join("engram-export.jsonl");
    std::fs::copy(server.data_dir().join("engram-export.jsonl"), &file).expect("copy the export");
    (server, files, file)
}

#[tokio::test]
async fn an_imported_export_answers_every_list_as_the_original_and_importing_again_changes_nothing()
{
    let (original, _files, file) = exported_server().await;
    let before = original.client().await;

    // readme: tests/operator/import.sh, into a fresh folder.
    let fresh = TempDir::new().expect("temp dir");
    std::fs::copy(&file, fresh.path().join("engram-export.jsonl")).expect("copy");
    let told = run_operator_script("import.sh", fresh.path()).await;
    assert!(told.contains("imported acme:"), "{told}");
    let imported = Server::start_in(fresh).await;
    let after = imported.client().await;
    for namespace in NAMESPACES {
        assert_same_answers(&before, &after, namespace).await;
    }

    // Search finds the imported memories, ranked alike.
    for namespace in NAMESPACES {
        for query in ["cache warms in 3 minutes", "invoices", "British English"] {
            let want = found(&before, namespace, query).await;
            assert!(!want.is_empty(), "{namespace}: {query}");
            assert_eq!(
                found(&after, namespace, query).await,
                want,
                "{namespace}: {query}"
            );
        }
    }
    // The searches' access counts are written by the time it has stopped.
    let mut imported = imported.restart().await;
    let listed = answers(&imported.client().await, "acme").await;

    // A second import finds everything there already, and changes nothing
    // (access counts, which searches change, are no difference).
    let imported = import_again(&mut imported, &file, NAMESPACES.len()).await;
    assert_eq!(answers(&imported.client().await, "acme").await, listed);
}

#[tokio::test]
async fn an_import_never_overwrites_a_record_that_differs() {
    let (original, _files, file) = exported_server().await;
    let engram = original.client().await;
    let target = TempDir::new().expect("temp dir");
    let first = import_into(target.path(), &file).await;
    assert!(first.status.success(), "{}", stderr(&first));

    // The file, with one memory of globex changed.
    let changed_file = file.with_file_name("changed.jsonl");
    let text = std::fs::read_to_string(&file).expect("read");
    let (line, changed) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("\"namespace\":\"globex\"") && l.contains("\"kind\":\"memory\""))
        .expect("a globex memory");
    let changed = changed.replace("deploy note", "DEPLOY NOTE");
    let id: serde_json::Value = serde_json::from_str(&changed).expect("JSON");
    let id = id["id"].as_str().expect("id").to_owned();
    let rewritten: Vec<&str> = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i == line { changed.as_str() } else { l })
        .collect();
    std::fs::write(&changed_file, rewritten.join("\n") + "\n").expect("write");

    let refused = import_into(target.path(), &changed_file).await;
    assert!(!refused.status.success());
    let told = stderr(&refused);
    assert!(
        told.contains(&format!(
            "line {}: memory {id} is already in the database and differs from the file's in content",
            line + 1
        )),
        "{told}"
    );
    assert!(told.contains("import never overwrites"), "{told}");
    assert!(
        told.contains("nothing of namespace globex was imported"),
        "{told}"
    );

    let server = Server::start_in(target).await;
    let imported = server.client().await;
    for namespace in NAMESPACES {
        assert_same_answers(&engram, &imported, namespace).await;
    }
}

#[tokio::test]
async fn a_malformed_or_cut_file_stops_the_import_at_its_line_with_nothing_of_that_namespace_applied()
 {
    let (original, _files, file) = exported_server().await;
    let engram = original.client().await;
    let text = std::fs::read_to_string(&file).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    let globex_memory = lines
        .iter()
        .position(|l| l.contains("\"namespace\":\"globex\"") && l.contains("\"kind\":\"memory\""))
        .expect("a globex memory")
        + 3;

    let edited = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value: serde_json::Value =
            serde_json::from_str(lines[globex_memory]).expect("JSON");
        edit(&mut value);
        value.to_string()
    };
    let broken = [
        (
            "not JSON",
            lines[globex_memory][..40].to_owned(),
            "not a JSON object",
        ),
        (
            "an unknown field",
            edited(&|v| v["colour"] = "blue".into()),
            "unknown field `colour`",
        ),
        (
            "a missing field",
            edited(&|v| {
                v.as_object_mut().expect("object").remove("content");
            }),
            "missing field `content`",
        ),
        (
            "a value of the wrong type",
            edited(&|v| v["tags"] = "deploy".into()),
            "invalid type",
        ),
        (
            "a value out of range",
            edited(&|v| v["importance"] = 7.5.into()),
            "importance must be between 0 and 1 (got 7.5)",
        ),
        (
            "an unknown kind",
            edited(&|v| v["kind"] = "hunch".into()),
            "unknown variant `hunch`",
        ),
    ];
    for (what, line, expected) in broken {
        let mut changed = lines.clone();
        changed[globex_memory] = &line;
        let broken_file = file.with_file_name("broken.jsonl");
        std::fs::write(&broken_file, changed.join("\n") + "\n").expect("write");
        let target = TempDir::new().expect("temp dir");
        let refused = import_into(target.path(), &broken_file).await;
        assert!(!refused.status.success(), "{what}");
        let told = stderr(&refused);
        assert!(
            told.contains(&format!("line {}: ", globex_memory + 1)),
            "{what}: {told}"
        );
        assert!(told.contains(expected), "{what}: {told}");
        assert!(
            told.contains("nothing of namespace globex was imported"),
            "{what}: {told}"
        );
        assert!(
            told.contains("imported before the problem (each whole): acme"),
            "{what}: {told}"
        );
        assert_imported_only_acme(&engram, target).await;
    }

    // Cut short: the last namespace is not imported.
    let cut_file = file.with_file_name("cut.jsonl");
    std::fs::write(&cut_file, lines[..lines.len() - 3].join("\n") + "\n").expect("write");
    let target = TempDir::new().expect("temp dir");
    let refused = import_into(target.path(), &cut_file).await;
    assert!(!refused.status.success());
    let told = stderr(&refused);
    assert!(told.contains("it is incomplete"), "{told}");
    assert!(
        told.contains("nothing of namespace initech was imported"),
        "{told}"
    );

    // Not an export at all, or of a newer format.
    let other = file.with_file_name("other.jsonl");
    std::fs::write(&other, "{\"kind\":\"header\",\"format\":\"engram-export\",\"version\":99,\"times\":\"unix_micros\",\"exported_at\":0,\"engram_version\":\"9.0.0\"}\n").expect("write");
    let refused = import_into(TempDir::new().expect("temp dir").path(), &other).await;
    assert!(
        stderr(&refused).contains("format version 99"),
        "{}",
        stderr(&refused)
    );
    std::fs::write(&other, "hello\n").expect("write");
    let refused = import_into(TempDir::new().expect("temp dir").path(), &other).await;
    assert!(
        stderr(&refused).contains("line 1: "),
        "{}",
        stderr(&refused)
    );

    // Beside a running server, the import is refused.
    let running = import_into(original.data_dir(), &file).await;
    assert!(!running.status.success());
    assert!(
        stderr(&running).contains("import needs the server stopped"),
        "{}",
        stderr(&running)
    );
}

/// A server on `dir` holds acme as `original` does, and nothing of the
/// other namespaces.
async fn assert_imported_only_acme(original: &Engram, dir: TempDir) {
    let server = Server::start_in(dir).await;
    let imported = server.client().await;
    assert_same_answers(original, &imported, "acme").await;
    for namespace in ["globex", "initech"] {
        let stats = imported
            .learning()
            .get_stats(proto::GetStatsRequest {
                scope: Some(scope(namespace)),
            })
            .await
            .expect("stats");
        assert_eq!(stats, proto::GetStatsResponse::default(), "{namespace}");
    }
}

/// API keys for the history test: agents write with one, an operator
/// changes things with the other, so revisions name different actors.
const KEYS: &str = "writer-key write ledger\nadmin-key admin *\n";
/// The namespace the history test fills.
const LEDGER: &str = "ledger";

/// A client of `server` with `key`.
async fn with_key(server: &Server, key: &str) -> Engram {
    Engram::builder(&server.url)
        .api_key(key)
        .connect()
        .await
        .expect("connect")
}

/// Each revision of `history` as (action, version, key id, agent id,
/// changed fields).
fn summary(history: &[proto::MemoryRevision]) -> Vec<(RevisionAction, i64, &str, &str, Vec<&str>)> {
    history
        .iter()
        .map(|r| {
            (
                r.action(),
                r.version,
                r.key_id.as_str(),
                r.agent_id.as_str(),
                r.changed_fields.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

/// Replaces the line of `file` that holds every one of `holds` by what
/// `edit` makes of it (as JSON), writing the result to `to`; returns the
/// line's number.
fn edit_line(
    file: &Path,
    to: &Path,
    holds: &[&str],
    edit: impl Fn(&mut serde_json::Value),
) -> usize {
    let text = std::fs::read_to_string(file).expect("read");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let index = lines
        .iter()
        .position(|l| holds.iter().all(|h| l.contains(h)))
        .unwrap_or_else(|| panic!("no line holds {holds:?}"));
    let mut value: serde_json::Value = serde_json::from_str(&lines[index]).expect("JSON");
    edit(&mut value);
    lines[index] = value.to_string();
    std::fs::write(to, lines.join("\n") + "\n").expect("write");
    index + 1
}

#[tokio::test]
async fn every_memory_s_history_moves_with_an_export_revision_for_revision_deleted_memories_included()
 {
    let keys_dir = TempDir::new().expect("temp dir");
    let keys = keys_dir.path().join("keys");
    std::fs::write(&keys, KEYS).expect("keys");
    let auth = ["--auth-keys", keys.to_str().expect("UTF-8 path")];
    let original = Server::start_on_backend_with_args(Backend::Sqlite, &auth).await;
    let writer = with_key(&original, "writer-key").await;
    let admin = with_key(&original, "admin-key").await;
    let planner = scope(LEDGER).with_agent("planner");
    let update = |engram: &Engram, scope: &proto::Scope, id: &str, memory, paths: &[&str]| {
        let (engram, request) = (
            engram.clone(),
            proto::UpdateMemoryRequest {
                scope: Some(scope.clone()),
                id: id.to_owned(),
                memory: Some(memory),
                update_mask: Some(prost_types::FieldMask {
                    paths: paths.iter().map(|p| (*p).to_owned()).collect(),
                }),
                etag: String::new(),
            },
        );
        async move {
            engram
                .memory()
                .update_memory(request)
                .await
                .expect("update")
        }
    };

    // Created and merged by the writer as the planner, updated by the admin.
    let due = input(MemoryType::Fact, "invoices are due on the 5th");
    let kept = create(&writer, &planner, due.clone())
        .await
        .memory
        .expect("memory")
        .id;
    create(&writer, &planner, due).await;
    update(
        &admin,
        &scope(LEDGER),
        &kept,
        proto::MemoryInput {
            importance: Some(0.9),
            ..input(MemoryType::Fact, "invoices are due on the 10th")
        },
        &["content", "importance"],
    )
    .await;
    // Created, updated by the writer, then deleted: its row is gone, its
    // history is not.
    let gone = create(
        &writer,
        &planner,
        input(MemoryType::Note, "the old ledger lives on the NAS"),
    )
    .await
    .memory
    .expect("memory")
    .id;
    update(
        &writer,
        &planner,
        &gone,
        proto::MemoryInput {
            tags: vec!["archive".into()],
            ..input(MemoryType::Note, "")
        },
        &["tags"],
    )
    .await;
    writer
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(planner.clone()),
            id: gone.clone(),
            etag: String::new(),
        })
        .await
        .expect("delete");
    // Created together in one batch, by another agent.
    let batch = create_batch(
        &writer,
        &scope(LEDGER).with_agent("clerk"),
        (0..3)
            .map(|i| input(MemoryType::Event, &format!("payment {i} received")))
            .collect(),
    )
    .await
    .results
    .into_iter()
    .map(|r| r.memory.expect("memory").id);
    let ids: Vec<String> = [kept.clone(), gone.clone()]
        .into_iter()
        .chain(batch)
        .collect();

    let mut before = Vec::new();
    for id in &ids {
        before.push(history(&admin, LEDGER, id).await);
    }
    // The ids of the keys on KEYS' lines.
    let (writer_id, admin_id) = (original.key_id(1), original.key_id(2));
    assert_eq!(
        summary(&before[0]),
        [
            (
                RevisionAction::Created,
                1,
                writer_id.as_str(),
                "planner",
                vec![]
            ),
            (
                RevisionAction::Merged,
                2,
                &writer_id,
                "planner",
                vec!["seen_count", "occurred_at"]
            ),
            (
                RevisionAction::Updated,
                3,
                &admin_id,
                "",
                vec!["content", "importance"]
            ),
        ]
    );
    assert_eq!(
        summary(&before[1]),
        [
            (
                RevisionAction::Created,
                1,
                writer_id.as_str(),
                "planner",
                vec![]
            ),
            (
                RevisionAction::Updated,
                2,
                &writer_id,
                "planner",
                vec!["tags"]
            ),
            (RevisionAction::Deleted, 2, &writer_id, "planner", vec![]),
        ]
    );

    // Exported while the server runs, as a file of the format with history.
    let files = TempDir::new().expect("temp dir");
    let file = files.path().join("ledger.jsonl");
    let exported = engram_server(&[
        "export",
        "--database",
        &original.database_url(),
        "--to",
        file.to_str().expect("UTF-8 path"),
    ])
    .await;
    assert!(exported.status.success(), "{}", stderr(&exported));
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.starts_with(r#"{"kind":"header","format":"engram-export","version":5,"#));
    let revisions: usize = before.iter().map(Vec::len).sum();
    assert!(
        text.contains(&format!(r#""memory_revision":{revisions}"#)),
        "{text}"
    );

    // Imported into a fresh server, every history lists as it did, field
    // by field: actions, versions, times, actors, changed fields, order.
    let fresh = TempDir::new().expect("temp dir");
    let first = import_into(fresh.path(), &file).await;
    assert!(first.status.success(), "{}", stderr(&first));
    let mut imported = Server::start_on_data_dir(fresh.path(), &auth).await;
    let after = with_key(&imported, "admin-key").await;
    for (id, want) in ids.iter().zip(&before) {
        assert_eq!(&history(&after, LEDGER, id).await, want, "history of {id}");
    }

    // Importing the same file again changes nothing.
    let mut imported = import_again(&mut imported, &file, 1).await;
    let after = with_key(&imported, "admin-key").await;
    for (id, want) in ids.iter().zip(&before) {
        assert_eq!(&history(&after, LEDGER, id).await, want, "history of {id}");
    }

    // A revision that differs from the one there stops the import, naming
    // its line, and nothing of the namespace is applied.
    imported.stop().await;
    let changed = files.path().join("changed.jsonl");
    let line = edit_line(
        &file,
        &changed,
        &[
            r#""kind":"memory_revision""#,
            &kept,
            r#""action":"updated""#,
        ],
        |revision| revision["key_id"] = "someone-else".into(),
    );
    let refused = import_into(fresh.path(), &changed).await;
    assert!(!refused.status.success());
    let told = stderr(&refused);
    assert!(
        told.contains(&format!(
            "line {line}: the updated revision (version 3) of memory {kept} is already in the \
             database and differs from the file's in key_id"
        )),
        "{told}"
    );
    assert!(
        told.contains("nothing of namespace ledger was imported"),
        "{told}"
    );
    let imported = imported.start_anew().await;
    let after = with_key(&imported, "admin-key").await;
    for (id, want) in ids.iter().zip(&before) {
        assert_eq!(&history(&after, LEDGER, id).await, want, "history of {id}");
    }
}

/// An export written by engram-server 0.1.0 before history was exported
/// (format version 1): namespace `legacy` with a merged memory, a workspace
/// memory, a running episode with a step; a memory deleted before the
/// export is not in it.
fn version_1_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/export-v1.jsonl")
}

#[tokio::test]
async fn a_file_of_the_format_before_history_imports_as_it_did_each_memory_created_by_no_one() {
    let file = version_1_file();
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.starts_with(r#"{"kind":"header","format":"engram-export","version":1,"#));
    let memories: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| l.contains(r#""kind":"memory""#))
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(memories.len(), 2);

    let dir = TempDir::new().expect("temp dir");
    let imported = import_into(dir.path(), &file).await;
    assert!(imported.status.success(), "{}", stderr(&imported));
    assert!(
        stderr(&imported).contains("imported 4 records of 1 namespaces"),
        "{}",
        stderr(&imported)
    );
    let mut server = Server::start_on_data_dir(dir.path(), &[]).await;
    let engram = server.client().await;
    // Each memory has the one revision an import gave it before history
    // moved: created, at its create time and version, by no one.
    let created = |memory: &serde_json::Value| {
        let micros = memory["create_time"].as_i64().expect("create_time");
        vec![proto::MemoryRevision {
            memory_id: memory["id"].as_str().expect("id").to_owned(),
            version: memory["version"].as_i64().expect("version"),
            action: RevisionAction::Created.into(),
            time: Some(Timestamp {
                seconds: micros.div_euclid(1_000_000),
                nanos: (micros.rem_euclid(1_000_000) * 1_000) as i32,
            }),
            key_id: String::new(),
            agent_id: String::new(),
            changed_fields: vec![],
            reason: String::new(),
            replaced_by: String::new(),
        }]
    };
    let id = |memory: &serde_json::Value| memory["id"].as_str().expect("id").to_owned();
    for memory in &memories {
        assert_eq!(
            history(&engram, "legacy", &id(memory)).await,
            created(memory)
        );
    }
    let project = in_scope("legacy", |s| s.project_id = "p1".into());
    let listed: BTreeSet<String> = list_all(&engram, &project, PAGE)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(listed, memories.iter().map(id).collect());

    // Importing it again changes nothing, history included.
    let server = import_again(&mut server, &file, 1).await;
    let engram = server.client().await;
    for memory in &memories {
        assert_eq!(
            history(&engram, "legacy", &id(memory)).await,
            created(memory)
        );
    }

    // A file of that version holds no history: a revision in it is refused.
    let with_revision = dir.path().join("v1-with-revision.jsonl");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let after_memories = lines
        .iter()
        .rposition(|l| l.contains(r#""kind":"memory""#))
        .expect("a memory")
        + 1;
    let revision = serde_json::json!({
        "kind": "memory_revision", "namespace": "legacy", "memory_id": id(&memories[0]),
        "version": 1, "action": "created", "time": 1, "key_id": "", "agent_id": "",
        "changed_fields": [],
    });
    lines.insert(after_memories, revision.to_string());
    std::fs::write(&with_revision, lines.join("\n") + "\n").expect("write");
    let refused = import_into(TempDir::new().expect("temp dir").path(), &with_revision).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(&format!(
            "line {}: the created revision (version 1) of memory {}: a file of format version 1 \
             holds no history",
            after_memories + 1,
            id(&memories[0])
        )),
        "{}",
        stderr(&refused)
    );
}

/// The records of an export of `database` (every line but the header,
/// which says when it was made).
async fn export_records(database: &str) -> Vec<String> {
    let output = engram_server(&["export", "--database", database, "--to", "-"]).await;
    assert!(output.status.success(), "export: {}", stderr(&output));
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// `answers` without the access bookkeeping (`access_count`,
/// `last_access_time`), which reads update — each backend on its own
/// schedule (SQLite's reads see their own, PostgreSQL's are written in
/// batches), so two servers read alike differ there by a moment.
fn without_access(answers: &[(String, String)]) -> Vec<(String, String)> {
    answers
        .iter()
        .map(|(label, text)| {
            let mut kept = Vec::new();
            let mut skipping = 0usize;
            for line in text.lines() {
                let field = line.trim_start();
                if skipping > 0 {
                    skipping -= 1;
                } else if field.starts_with("access_count:") || field == "last_access_time: None," {
                } else if field == "last_access_time: Some(" {
                    // Some( Timestamp { seconds, nanos, }, ),
                    skipping = 5;
                } else {
                    kept.push(line);
                }
            }
            (label.clone(), kept.join("\n"))
        })
        .collect()
}

async fn assert_same_answers_but_access(original: &Engram, moved: &Engram, namespace: &str) {
    // A replica that was running when the records came names their
    // entities in the background: its answers settle once it has.
    extracted(moved, namespace).await;
    let expected = without_access(&answers(original, namespace).await);
    let actual = without_access(&answers(moved, namespace).await);
    assert_eq!(expected.len(), actual.len());
    for ((label, want), (_, got)) in expected.iter().zip(&actual) {
        assert_eq!(got, want, "{namespace}: {label}");
    }
}

/// Runs `engram-server migrate-data --from FROM --to TO`; asserts it
/// succeeds and returns what it said.
async fn migrate_data(from: &str, to: &str) -> String {
    let output = engram_server(&["migrate-data", "--from", from, "--to", to]).await;
    let told = stderr(&output);
    assert!(output.status.success(), "migrate-data failed: {told}");
    told
}

/// Waits until a search in each namespace through `engram` finds what it
/// finds through `original`: a replica applies a migration's records from
/// the change feed, a moment after the commit.
async fn searched_alike(original: &Engram, engram: &Engram) {
    for namespace in NAMESPACES {
        for query in ["cache warms in 3 minutes", "invoices", "British English"] {
            let want = found(original, namespace, query).await;
            assert!(!want.is_empty(), "{namespace}: {query}");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            loop {
                let got = found(engram, namespace, query).await;
                if got == want {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{namespace}: {query}: {got:?} != {want:?}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

#[tokio::test]
async fn migrate_data_moves_every_record_from_sqlite_to_a_running_postgresql_replica_and_back() {
    let (mut original, _files, _file) = exported_server().await;
    // Stopped for the move, as a team moving up would: every access count
    // it kept in memory is written, and nothing changes while it is copied.
    original.stop().await;

    // Into PostgreSQL, while a replica runs on the (empty) target: it
    // indexes what the migration commits from the change feed.
    let replica = Server::start_on_backend(Backend::Postgres).await;
    let exported = export_records(&original.database_url()).await;
    // readme: tests/operator/migrate.sh, in the stopped server's folder.
    let told = run_operator_script_with_env(
        "migrate.sh",
        original.data_dir(),
        &[("ENGRAM_TARGET", &replica.database_url())],
    )
    .await;
    // Record for record the same (ids, times, counters, access bookkeeping,
    // history), read back by PostgreSQL's export.
    assert_eq!(export_records(&replica.database_url()).await, exported);
    let original = original.start_again().await;
    let before = original.client().await;
    assert!(told.contains("migrated 3 namespaces"), "{told}");
    let moved = replica.client().await;
    for namespace in NAMESPACES {
        assert_same_answers_but_access(&before, &moved, namespace).await;
    }
    searched_alike(&before, &moved).await;

    // Run again (as after an interruption): nothing new, nothing changed.
    let again = migrate_data(&original.database_url(), &replica.database_url()).await;
    assert!(again.contains(" 0 copied"), "{again}");
    for namespace in NAMESPACES {
        assert_same_answers_but_access(&before, &moved, namespace).await;
    }

    // A target holding a record the source lacks is refused, and keeps
    // what it held.
    create(
        &moved,
        &scope("acme"),
        input(MemoryType::Fact, "only in the target"),
    )
    .await;
    let held = answers(&moved, "acme").await;
    let refused = engram_server(&[
        "migrate-data",
        "--from",
        &original.database_url(),
        "--to",
        &replica.database_url(),
    ])
    .await;
    let told = stderr(&refused);
    assert!(!refused.status.success(), "{told}");
    assert!(told.contains("holds records the source does not"), "{told}");
    assert_eq!(
        without_access(&answers(&moved, "acme").await),
        without_access(&held)
    );

    // And back down to a fresh SQLite file: everything PostgreSQL holds
    // (acme with the record written there).
    let dir = TempDir::new().expect("temp dir");
    let told = migrate_data(&replica.database_url(), &sqlite_url(dir.path())).await;
    assert!(told.contains("migrated 3 namespaces"), "{told}");
    let back_server = Server::start_in(dir).await;
    let back = back_server.client().await;
    for namespace in ["globex", "initech"] {
        assert_same_answers_but_access(&before, &back, namespace).await;
    }
    assert_eq!(
        without_access(&answers(&back, "acme").await),
        without_access(&held)
    );
}

/// Waits until every memory of `namespace` names its entities (the
/// server's backfill reads imported ones after start).
async fn extracted(engram: &Engram, namespace: &str) {
    let waiting = async {
        loop {
            let stats = engram
                .learning()
                .get_stats(proto::GetStatsRequest {
                    scope: Some(scope(namespace)),
                })
                .await
                .expect("stats");
            if stats.pending_extractions == 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), waiting)
        .await
        .expect("the entity backfill finishes");
}

/// The entities `engram` lists in `namespace` once every memory names its
/// own: (name, aliases, memories true now, id).
async fn entities_of(engram: &Engram, namespace: &str) -> Vec<(String, Vec<String>, i64, String)> {
    extracted(engram, namespace).await;
    let listed = engram
        .memory()
        .list_entities(proto::ListEntitiesRequest {
            scope: Some(scope(namespace)),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list entities");
    listed
        .entities
        .into_iter()
        .map(|e| (e.name, e.aliases, e.memory_count, e.id))
        .collect()
}

#[tokio::test]
async fn entities_the_names_merged_into_them_and_conflict_links_move_with_an_export() {
    let original = Server::start_on_backend(Backend::Sqlite).await;
    let engram = original.client().await;
    let team = scope("entities");
    for content in [
        "Robert Smith owns the billing service.",
        "Bob Smith prefers Rust.",
        "Priya Patel lives in Lisbon.",
    ] {
        create(&engram, &team, input(MemoryType::Fact, content)).await;
    }
    engram
        .memory()
        .merge_entities(proto::MergeEntitiesRequest {
            scope: Some(team.clone()),
            entity: "Robert Smith".into(),
            duplicate: "Bob Smith".into(),
        })
        .await
        .expect("merge");
    let conflicting = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(team.clone()),
            memory: Some(input(MemoryType::Fact, "Priya Patel lives in Porto now.")),
            contradictions: proto::ContradictionPolicy::Link.into(),
            ..Default::default()
        })
        .await
        .expect("create");
    assert_eq!(
        conflicting.conflicting_memory_ids.len(),
        1,
        "{conflicting:?}"
    );
    let porto = conflicting.memory.expect("memory").id;
    let links_of = |engram: Engram, id: String| {
        let team = team.clone();
        async move {
            let memory = engram
                .memory()
                .get_memory(proto::GetMemoryRequest {
                    scope: Some(team),
                    id,
                })
                .await
                .expect("get");
            memory.links
        }
    };
    let links = links_of(engram.clone(), porto.clone()).await;
    assert_eq!(links.len(), 1);
    let before = entities_of(&engram, "entities").await;
    let robert = before
        .iter()
        .find(|e| e.0 == "Robert Smith")
        .expect("robert");
    assert_eq!(
        (robert.1.as_slice(), robert.2),
        (&["Bob Smith".to_owned()][..], 2)
    );

    let files = TempDir::new().expect("temp dir");
    let file = files.path().join("entities.jsonl");
    let path = file.to_str().expect("UTF-8 path");
    let exported = engram_server(&[
        "export",
        "--database",
        &original.database_url(),
        "--to",
        path,
    ])
    .await;
    assert!(exported.status.success(), "{}", stderr(&exported));
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains(r#""kind":"entity_name""#), "{text}");

    // Imported, every memory names its entities again (in the background,
    // through the names the file brought): the merge holds, ids and all.
    let fresh = TempDir::new().expect("temp dir");
    let imported = import_into(fresh.path(), &file).await;
    assert!(imported.status.success(), "{}", stderr(&imported));
    let server = Server::start_on_data_dir(fresh.path(), &[]).await;
    let after = server.client().await;
    assert_eq!(entities_of(&after, "entities").await, before);
    assert_eq!(
        links_of(after.clone(), porto).await,
        links,
        "the conflict link moved too"
    );
    // A later memory naming the merged name joins the kept entity.
    create(
        &after,
        &team,
        input(MemoryType::Fact, "Bob Smith moved to Porto."),
    )
    .await;
    let robert = entities_of(&after, "entities").await;
    let robert = robert
        .iter()
        .find(|e| e.0 == "Robert Smith")
        .expect("robert");
    assert_eq!(robert.2, 3);
}
