//! PolicyService over the real server: the rules classifier's accuracy on a
//! labelled set, Classify and Remember, and their errors.

use engram_client::proto::{self, MemoryType};
use engram_client::{Code, Engram, PolicyClient};
use engram_tests::{Server, list_all, scope};

/// The labelled transcripts: human judgments of what is worth remembering.
const LABELLED: &str = include_str!("../../data/policy_transcripts.json");
/// Transcripts labelled the same way but never used to tune the classifier:
/// how it does on text it was not shaped by.
const HELD_OUT: &str = include_str!("../../data/policy_transcripts_heldout.json");
/// The least should_store accuracy accepted on the held-out set.
const MIN_HELD_OUT_STORE_ACCURACY: f64 = 0.75;
/// The should_store accuracy the rules classifier must keep on the labelled set.
const MIN_STORE_ACCURACY: f64 = 0.90;

fn policy(engram: &Engram) -> PolicyClient {
    engram.policy()
}

fn classify_request(ns: &proto::Scope, transcript: &str) -> proto::ClassifyRequest {
    proto::ClassifyRequest {
        scope: Some(ns.clone()),
        transcript: transcript.to_owned(),
        mode: proto::ClassifyMode::Rules.into(),
        ..Default::default()
    }
}

/// How the classifier did on a labelled set.
struct Accuracy {
    cases: usize,
    store: f64,
    memory_type: f64,
    types_seen: Vec<String>,
    misses: Vec<String>,
}

/// Classifies every transcript of `labelled` (JSON) and compares with its labels.
async fn evaluate(engram: &Engram, ns: &proto::Scope, labelled: &str) -> Accuracy {
    let labelled: Vec<serde_json::Value> =
        serde_json::from_str(labelled).expect("labelled set is JSON");
    let (mut store_right, mut type_right, mut positives) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    let mut types_seen = std::collections::BTreeSet::new();
    for case in &labelled {
        let transcript = case["transcript"].as_str().expect("transcript");
        let should_store = case["should_store"].as_bool().expect("should_store");
        let expected_type = case["memory_type"].as_str();
        if let Some(t) = expected_type {
            types_seen.insert(t.to_owned());
        }
        let decision = policy(engram)
            .classify(classify_request(ns, transcript))
            .await
            .expect("classify")
            .decision
            .expect("decision");
        assert_eq!(decision.source(), proto::DecisionSource::Rules);
        assert!(decision.summary.chars().count() <= 300);
        assert!((0.0..=1.0).contains(&decision.importance));
        if decision.should_store == should_store {
            store_right += 1;
        } else {
            misses.push(format!(
                "  store {} (want {should_store}): {transcript:?} — {}",
                decision.should_store, decision.reason
            ));
        }
        if should_store {
            positives += 1;
            let got = decision
                .memory_type()
                .as_str_name()
                .trim_start_matches("MEMORY_TYPE_")
                .to_owned();
            if decision.should_store && Some(got.as_str()) == expected_type {
                type_right += 1;
            } else if decision.should_store {
                misses.push(format!(
                    "  type {got} (want {expected_type:?}): {transcript:?}"
                ));
            }
        }
    }
    Accuracy {
        cases: labelled.len(),
        store: store_right as f64 / labelled.len().max(1) as f64,
        memory_type: type_right as f64 / positives.max(1) as f64,
        types_seen: types_seen.into_iter().collect(),
        misses,
    }
}

/// Prints how the classifier did on a set, with every miss.
fn report(classifier: &str, name: &str, result: &Accuracy) {
    summarise(classifier, name, result);
    println!("{}", result.misses.join("\n"));
}

/// Prints how the classifier did on a set, without the misses: for the
/// second held-out set, whose cases stay unread by whoever tunes the rules.
fn summarise(classifier: &str, name: &str, result: &Accuracy) {
    println!(
        "{classifier} on {} {name} transcripts: should_store accuracy {:.3}, memory_type accuracy on positives {:.3}",
        result.cases, result.store, result.memory_type,
    );
}

#[tokio::test]
async fn the_rules_classifier_is_accurate_on_the_labelled_set() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("labelled");
    let tuning = evaluate(&engram, &ns, LABELLED).await;
    let held_out = evaluate(&engram, &ns, HELD_OUT).await;
    for (name, result) in [("labelled (tuning)", &tuning), ("held-out", &held_out)] {
        report("rules classifier", name, result);
    }
    assert!(tuning.cases >= 80, "at least 80 labelled transcripts");
    assert_eq!(
        tuning.types_seen,
        ["DECISION", "EVENT", "FACT", "LESSON", "NOTE", "PREFERENCE"],
        "every memory type is labelled"
    );
    assert!(
        tuning.store >= MIN_STORE_ACCURACY,
        "should_store accuracy {:.3} is below {MIN_STORE_ACCURACY}:\n{}",
        tuning.store,
        tuning.misses.join("\n")
    );
    // A floor under the held-out accuracy (0.80 when written): catches a
    // change that only fits the labelled set better at the expense of new text.
    assert!(
        held_out.store >= MIN_HELD_OUT_STORE_ACCURACY,
        "held-out should_store accuracy {:.3} fell below {MIN_HELD_OUT_STORE_ACCURACY}",
        held_out.store
    );
    assert!(
        list_all(&engram, &ns, 50).await.is_empty(),
        "Classify stores nothing"
    );
}

/// The larger labelled set of issue 15, split into dev and held-out files
/// before any tuning (tests/data/policy/split.py): ≥ 300 transcripts,
/// every type in both, ≥ 40 % negatives, secrets and injections among them.
const DEV: &str = include_str!("../../../server/data/policy/dev.json");
const HELD_OUT_V2: &str = include_str!("../../data/policy/heldout.json");
/// A second held-out set, written after the split by someone who had not
/// seen the classifier (tests/data/policy/README.md).
const FRESH: &str = include_str!("../../data/policy/fresh.json");
/// A third held-out set, written later the same way; nobody tuning the
/// classifier has read any of it.
const FRESH2: &str = include_str!("../../data/policy/fresh2.json");
/// A fourth held-out set, written for issue 28 by someone who had read no
/// labelled case and no code; nobody tuning the classifier reads it.
const FRESH3: &str = include_str!("../../data/policy/fresh3.json");
/// A fifth held-out set, written for issue 28 the same way, after the rules
/// and the decider were built; nobody tuning the classifier reads it.
const FRESH4: &str = include_str!("../../data/policy/fresh4.json");
/// German, French and Spanish (issue 28), written by someone who had read
/// no labelled case and no code; nobody tuning the classifier reads it.
const MULTILINGUAL: &str = include_str!("../../data/policy/multilingual.json");
/// The training-only examples the decider of the vote also learns from
/// (the rules were never tuned on them).
const EXAMPLES: &str = include_str!("../../../server/data/policy/examples.json");
const EXAMPLES_VARIED_A: &str = include_str!("../../../server/data/policy/examples_varied_a.json");
const EXAMPLES_VARIED_B: &str = include_str!("../../../server/data/policy/examples_varied_b.json");
const EXAMPLES_VARIED_C: &str = include_str!("../../../server/data/policy/examples_varied_c.json");
const EXAMPLES_VARIED_D: &str = include_str!("../../../server/data/policy/examples_varied_d.json");
/// The sets whose cases are never printed, only their totals: the later
/// held-out sets and the training-only examples.
const SUMMARISED: [(&str, &str); 9] = [
    ("fresh", FRESH),
    ("fresh2", FRESH2),
    ("fresh3", FRESH3),
    ("fresh4", FRESH4),
    ("examples", EXAMPLES),
    ("examples_varied_a", EXAMPLES_VARIED_A),
    ("examples_varied_b", EXAMPLES_VARIED_B),
    ("examples_varied_c", EXAMPLES_VARIED_C),
    ("examples_varied_d", EXAMPLES_VARIED_D),
];
/// Issue 15's targets for the rules alone on the held-out split.
const TARGET_HELD_OUT_STORE: f64 = 0.90;
const TARGET_HELD_OUT_TYPE: f64 = 0.75;

#[tokio::test]
async fn the_larger_labelled_set_is_shaped_as_promised_and_its_accuracy_printed() {
    let mut total = 0;
    for (name, set) in [("dev", DEV), ("held-out", HELD_OUT_V2)]
        .into_iter()
        .chain(SUMMARISED)
    {
        let cases: Vec<serde_json::Value> = serde_json::from_str(set).expect("JSON");
        let negatives = cases.iter().filter(|c| c["should_store"] == false).count();
        assert!(
            negatives * 100 >= cases.len() * 40,
            "{name}: {negatives} negatives of {}",
            cases.len()
        );
        let types: std::collections::BTreeSet<&str> = cases
            .iter()
            .filter_map(|c| c["memory_type"].as_str())
            .collect();
        assert_eq!(
            types.into_iter().collect::<Vec<_>>(),
            ["DECISION", "EVENT", "FACT", "LESSON", "NOTE", "PREFERENCE"],
            "{name} labels every type"
        );
        for flag in ["secrets", "injection", "supersedes"] {
            assert!(
                cases.iter().any(|c| c.get(flag).is_some()),
                "{name} has cases with {flag}"
            );
        }
        total += cases.len();
    }
    assert!(total >= 300, "{total} labelled transcripts");

    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("labelled-v2");
    report(
        "rules classifier",
        "dev",
        &evaluate(&engram, &ns, DEV).await,
    );
    let held_out = evaluate(&engram, &ns, HELD_OUT_V2).await;
    report("rules classifier", "held-out", &held_out);
    for (name, set) in SUMMARISED {
        summarise("rules classifier", name, &evaluate(&engram, &ns, set).await);
    }
    let multilingual = evaluate(&engram, &ns, MULTILINGUAL).await;
    summarise("rules classifier", "multilingual", &multilingual);
    assert!(
        held_out.store >= TARGET_HELD_OUT_STORE && held_out.memory_type >= TARGET_HELD_OUT_TYPE,
        "held-out accuracy {:.3} / {:.3} is below the targets {TARGET_HELD_OUT_STORE} / {TARGET_HELD_OUT_TYPE}",
        held_out.store,
        held_out.memory_type
    );
}

/// With an embedder, the rules consult a decider fitted on the labelled
/// examples (the dev split, examples.json and the varied sets) where
/// they find no cue, only a weak one or a phrase it is sure about:
/// deterministic, named in the decision, and more accurate on the held-out
/// sets, none of which it learned from.
#[tokio::test]
async fn with_an_embedder_the_labelled_examples_vote() {
    let rules_only = Server::start().await;
    let with_examples = Server::start_with_test_model().await;
    let ns = scope("labelled-vote");
    let engram = with_examples.client().await;
    // The first call starts fitting the classifier and is decided by the
    // rules alone, saying so; the vote comes once the examples are in.
    let probe = "User: the nightly export job writes to the analytics bucket in eu-west-1.";
    let vote_of = |engram: Engram| async move {
        let response = policy(&engram)
            .classify(classify_request(&scope("labelled-vote"), probe))
            .await
            .expect("classify");
        response.decision.expect("decision").metadata["vote"].clone()
    };
    let first = vote_of(engram.clone()).await;
    assert!(first.starts_with("none yet"), "{first}");
    let started = std::time::Instant::now();
    while vote_of(engram.clone()).await.starts_with("none yet") {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(600),
            "the labelled examples were not fitted in 10 minutes"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    println!(
        "the labelled examples were fitted {:?} after the first call",
        started.elapsed()
    );
    let mut held_out = None;
    for (name, set) in [
        ("held-out", HELD_OUT_V2),
        ("fresh", FRESH),
        ("fresh2", FRESH2),
        ("fresh3", FRESH3),
        ("fresh4", FRESH4),
        ("multilingual", MULTILINGUAL),
    ] {
        let rules = evaluate(&rules_only.client().await, &ns, set).await;
        let voted = evaluate(&engram, &ns, set).await;
        if name == "held-out" {
            report("rules + labelled examples", name, &voted);
        } else {
            summarise("rules + labelled examples", name, &voted);
        }
        println!(
            "{name}: rules alone should_store {:.3} type {:.3}; with the examples {:.3} {:.3}",
            rules.store, rules.memory_type, voted.store, voted.memory_type
        );
        held_out.get_or_insert((rules, voted));
    }
    let (rules, voted) = held_out.expect("the held-out set was scored");
    assert!(
        voted.store >= rules.store && voted.memory_type > rules.memory_type,
        "with the examples, held-out accuracy {:.3} / {:.3} is not above the rules' {:.3} / {:.3}",
        voted.store,
        voted.memory_type,
        rules.store,
        rules.memory_type
    );

    // The vote is named, and the same transcript decides the same way.
    let transcript = probe;
    let mut decisions = Vec::new();
    for _ in 0..4 {
        let response = policy(&engram)
            .classify(classify_request(&ns, transcript))
            .await
            .expect("classify");
        decisions.push(response.decision.expect("decision"));
    }
    assert!(decisions[0].metadata.contains_key("vote"), "{decisions:?}");
    assert!(
        decisions.iter().all(|d| *d == decisions[0]),
        "{decisions:?}"
    );
}

#[tokio::test]
async fn remember_stores_once_and_merges_the_same_transcript() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = proto::Scope {
        namespace: "remember".into(),
        user_id: "alice".into(),
        ..Default::default()
    };
    let remember = |transcript: &str| proto::RememberRequest {
        scope: Some(ns.clone()),
        task_id: "onboarding".into(),
        transcript: transcript.to_owned(),
        tags: vec!["style".into()],
        ..Default::default()
    };
    let first = policy(&engram)
        .remember(remember(
            "User: I prefer concise answers with the code first.",
        ))
        .await
        .expect("remember");
    let decision = first.decision.clone().unwrap();
    assert!(decision.should_store);
    assert_eq!(decision.memory_type(), MemoryType::Preference);
    assert_eq!(decision.level(), proto::MemoryLevel::Global);
    assert_eq!(
        decision.metadata.get("task_id").map(String::as_str),
        Some("onboarding")
    );
    assert_eq!(first.result(), proto::WriteResult::Created);
    let memory = first.memory.unwrap();
    assert_eq!(
        memory.content,
        "I prefer concise answers with the code first."
    );
    assert_eq!(memory.source(), proto::MemorySource::PolicyRules);
    assert_eq!(memory.memory_type(), MemoryType::Preference);
    assert_eq!(memory.tags, ["style"]);
    assert_eq!(memory.scope.as_ref().unwrap().user_id, "alice");
    assert!(memory.importance >= 0.7);

    let again = policy(&engram)
        .remember(remember(
            "User: I prefer concise answers with the code first.",
        ))
        .await
        .expect("remember again");
    assert_eq!(again.result(), proto::WriteResult::Merged);
    let merged = again.memory.unwrap();
    assert_eq!(merged.id, memory.id);
    assert_eq!(merged.seen_count, 2);

    let chatter = policy(&engram)
        .remember(remember("Assistant: Sure, one sec, running the tests now."))
        .await
        .expect("remember chatter");
    assert!(!chatter.decision.as_ref().unwrap().should_store);
    assert!(chatter.memory.is_none());
    assert_eq!(chatter.result(), proto::WriteResult::Unspecified);
    assert_eq!(
        list_all(&engram, &ns, 50).await.len(),
        1,
        "one memory, merged, and no chatter"
    );
}

#[tokio::test]
async fn bad_policy_requests_are_refused_and_llm_mode_needs_a_model() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("policy-errors");
    for (request, field) in [
        (classify_request(&ns, ""), "transcript"),
        (classify_request(&ns, " \n "), "transcript"),
        (
            classify_request(&ns, &"x".repeat(64 * 1024 + 1)),
            "transcript",
        ),
        (
            proto::ClassifyRequest {
                mode: 9,
                ..classify_request(&ns, "hello")
            },
            "mode",
        ),
        (
            proto::ClassifyRequest {
                task_id: "has space".into(),
                ..classify_request(&ns, "hello")
            },
            "task_id",
        ),
    ] {
        let status = policy(&engram).classify(request).await.expect_err(field);
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(
            status.field_violations().iter().any(|(f, _)| f == field),
            "{field}: {status:?}"
        );
    }
    let status = policy(&engram)
        .classify(proto::ClassifyRequest {
            mode: proto::ClassifyMode::Llm.into(),
            ..classify_request(&ns, "I prefer tabs.")
        })
        .await
        .expect_err("no model configured");
    assert_eq!(status.code(), Code::FailedPrecondition);
    let status = policy(&engram)
        .remember(proto::RememberRequest {
            scope: Some(ns.clone()),
            transcript: "I prefer tabs.".into(),
            tags: vec![String::new()],
            ..Default::default()
        })
        .await
        .expect_err("empty tag");
    assert!(
        status
            .field_violations()
            .iter()
            .any(|(f, _)| f == "tags[0]")
    );
    assert!(
        list_all(&engram, &ns, 50).await.is_empty(),
        "nothing stored"
    );
}
