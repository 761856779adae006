use super::*;

fn contradicts(new: &str, old: &str) -> bool {
    judge(&read(new), &read(old)).is_some()
}

#[test]
fn a_changed_value_of_the_same_subject_and_attribute_contradicts() {
    assert!(contradicts(
        "Alice left Acme and joined Globex in March.",
        "Alice Chen works at Acme Corp as a data engineer."
    ));
    assert!(contradicts(
        "staging db -> port 6432 now",
        "The staging DB is on port 5433."
    ));
    assert!(contradicts(
        "Alice no longer works at Acme.",
        "Alice works at Acme."
    ));
    assert!(contradicts(
        "I now prefer spaces over tabs.",
        "I prefer tabs for indentation."
    ));
}

#[test]
fn another_subject_attribute_or_the_same_value_does_not() {
    // Another subject.
    assert!(!contradicts(
        "The production DB is on port 5432.",
        "The staging DB is on port 5433."
    ));
    // A number naming the subject: two services, not one changed.
    assert!(!contradicts(
        "Service 7 talks to the payments API through the gateway.",
        "Service 3 talks to the payments API through the gateway."
    ));
    // Another attribute.
    assert!(!contradicts(
        "Alice moved to Berlin.",
        "Alice works at Acme."
    ));
    // The same value, restated.
    assert!(!contradicts(
        "Alice works at Acme on the payments team.",
        "Alice Chen works at Acme Corp."
    ));
    // An addition.
    assert!(!contradicts(
        "We also use Go for the CLI.",
        "We use Rust for the CLI."
    ));
    // Preferences of different kinds.
    assert!(!contradicts(
        "I prefer concise answers.",
        "I prefer tabs for indentation."
    ));
}

#[test]
fn the_quick_check_agrees_with_the_full_reading() {
    for set in [
        include_str!("../../../../tests/data/contradictions/dev.json"),
        include_str!("../../../../tests/data/contradictions/heldout.json"),
    ] {
        let cases: Vec<serde_json::Value> = serde_json::from_str(set).unwrap();
        for write in cases.iter().flat_map(|c| c["writes"].as_array().unwrap()) {
            let content = write["content"].as_str().unwrap();
            assert_eq!(
                may_contradict(content),
                read(content).may_contradict(),
                "{content:?}"
            );
        }
    }
}

/// Runs the rules over a labelled set as a write path would: each write
/// compared with the earlier writes of its sequence still valid.
/// Returns (true positives, predicted, labelled) over (new, old) pairs.
pub(crate) fn score(cases: &[serde_json::Value], misses: bool) -> (usize, usize, usize) {
    score_with(cases, misses, |new, old, _, _| judge(new, old))
}

/// [`score`] with another judge of (new, old, new text, old text).
fn score_with(
    cases: &[serde_json::Value],
    misses: bool,
    judge: impl Fn(&Reading, &Reading, &str, &str) -> Option<String>,
) -> (usize, usize, usize) {
    let (mut hits, mut predicted, mut labelled) = (0, 0, 0);
    for case in cases {
        let writes = case["writes"].as_array().expect("writes");
        let mut valid = vec![true; writes.len()];
        let mut parsed: Vec<(&str, Reading)> = Vec::new();
        for write in writes {
            let content = write["content"].as_str().expect("content");
            let new = read(content);
            let want: Vec<usize> = write
                .get("invalidates")
                .and_then(|v| v.as_array())
                .map(|v| v.iter().map(|n| n.as_u64().unwrap() as usize).collect())
                .unwrap_or_default();
            labelled += want.len();
            let event = |w: &serde_json::Value| w["type"] == "EVENT";
            for (j, (old_text, old)) in parsed.iter().enumerate() {
                if !valid[j] || old_text == &content || event(write) || event(&writes[j]) {
                    continue;
                }
                let said = judge(&new, old, content, old_text);
                let wanted = want.contains(&j);
                if said.is_some() {
                    predicted += 1;
                    valid[j] = false;
                    if wanted {
                        hits += 1;
                    }
                }
                if misses && said.is_some() != wanted {
                    println!(
                        "{} {}: {old_text:?} -> {content:?} ({})",
                        if wanted { "MISSED" } else { "WRONG" },
                        case["id"].as_str().unwrap_or("?"),
                        said.unwrap_or_default()
                    );
                }
            }
            parsed.push((content, new));
        }
    }
    (hits, predicted, labelled)
}

#[test]
#[ignore = "prints the rules' precision and recall on the dev set with every miss"]
fn dev() {
    let cases: Vec<serde_json::Value> = serde_json::from_str(include_str!(
        "../../../../tests/data/contradictions/dev.json"
    ))
    .unwrap();
    let (hits, predicted, labelled) = score(&cases, true);
    println!(
        "dev: precision {:.3} recall {:.3} ({hits} right of {predicted} said, {labelled} labelled)",
        hits as f64 / predicted.max(1) as f64,
        hits as f64 / labelled.max(1) as f64
    );
}

#[test]
#[ignore = "prints how the rules read DEBUG_A and DEBUG_B"]
fn debug() {
    let (a, b) = (
        std::env::var("DEBUG_A").unwrap(),
        std::env::var("DEBUG_B").unwrap(),
    );
    println!(
        "{:#?}\n{:#?}\n{:?}",
        read(&a),
        read(&b),
        judge(&read(&b), &read(&a))
    );
}

/// The test model (scripts/fetch-model.sh), run in process.
pub(crate) async fn test_embedder() -> crate::embed::Embedder {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/models/all-MiniLM-L6-v2");
    crate::embed::Embedder::open(&crate::embed::EmbedderConfig::Local(dir))
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
#[ignore = "prints the rules' precision and recall on the dev set with the test model's cosines"]
async fn dev_with_embedder() {
    let embedder = test_embedder().await;
    let cases: Vec<serde_json::Value> = serde_json::from_str(include_str!(
        "../../../../tests/data/contradictions/dev.json"
    ))
    .unwrap();
    let texts: Vec<String> = cases
        .iter()
        .flat_map(|c| c["writes"].as_array().unwrap().iter())
        .map(|w| w["content"].as_str().unwrap().to_owned())
        .collect();
    let vectors = embedder.embed(texts.clone()).await.unwrap();
    let by_text: std::collections::HashMap<String, Vec<f32>> =
        texts.into_iter().zip(vectors).collect();
    let cosine = |a: &str, b: &str| crate::embed::dot(&by_text[a], &by_text[b]);
    score_with(&cases, true, |new, old, a, b| {
        let said = judge_close(new, old, cosine(a, b));
        println!(
            "COSINE {:.2} {} {a:?} <- {b:?}",
            cosine(a, b),
            said.is_some()
        );
        said
    });
    for close in [0.5f32, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8] {
        let (hits, predicted, labelled) = score_with(&cases, false, |new, old, a, b| {
            judge(new, old).or_else(|| {
                (cosine(a, b) >= close)
                    .then(|| judge_close(new, old, cosine(a, b).max(CLOSE)))
                    .flatten()
            })
        });
        println!(
            "dev, close at {close}: precision {:.3} recall {:.3} ({hits} right of {predicted} said, {labelled} labelled)",
            hits as f64 / predicted.max(1) as f64,
            hits as f64 / labelled.max(1) as f64
        );
    }
}

#[test]
#[ignore = "prints, per rule, how many pairs each said and got right on a set (totals only)"]
fn per_rule() {
    for name in ["dev", "heldout"] {
        let path = format!(
            "{}/../tests/data/contradictions/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let cases: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for (rule, only) in [("claims", true), ("frame", false)] {
            let (hits, predicted, _) = score_with(&cases, false, |new, old, _, _| {
                judge(new, old).filter(|r| r.starts_with("contradicted: now ") != only)
            });
            println!("{name} {rule}: {hits} right of {predicted}");
        }
    }
}
