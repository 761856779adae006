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
fn values_told_by_their_shape_statuses_and_settings_are_claims() {
    // A phone number or an email address is a contact of whom it names.
    assert!(contradicts(
        "Ravi's new number is +44 7700 900456; the old one is disconnected.",
        "phone for Ravi Kumar: +44 7700 900123"
    ));
    assert!(!contradicts(
        "Send contracts to legal@acme.example",
        "Send invoices to billing@acme.example"
    ));
    // A date or an amount is no phone number.
    assert!(!contradicts(
        "Alice's new visa expires 2027-06-01.",
        "Alice's phone: 555 0134 22"
    ));
    assert!(!contradicts(
        "Alice now has a budget of 1 200 000 €.",
        "Alice's phone: 555 0134 22"
    ));
    // A ticket's status, by class ("closed as done" is done).
    assert!(contradicts("PAY-77 reopened.", "PAY-77 closed as done."));
    assert!(contradicts(
        "OPS-311 resolvido e fechado.",
        "O ticket OPS-311 está aberto."
    ));
    assert!(!contradicts("PAY-77 is done.", "PAY-77 closed."));
    assert!(!contradicts(
        "The office is closed on Sundays.",
        "The office is open on Saturdays."
    ));
    // A note of one setting; a quarter is part of what it is of.
    assert!(contradicts(
        "- redis maxmemory: 6gb",
        "- redis maxmemory: 2gb"
    ));
    assert!(!contradicts("Q4 revenue: $1.5M", "Q3 revenue: $1.2M"));
    // A price in another currency is another market's.
    assert!(!contradicts(
        "Pro costs £24 a month in the UK.",
        "Pro costs $29 a month in the US."
    ));
    // A job title at a company names an employer.
    assert!(contradicts(
        "Mateo joined Canva last month.",
        "Mateo Alvarez is a product designer at Figma."
    ));
    // A preference is of what it is for.
    assert!(contradicts(
        "Prefers an aisle seat on flights.",
        "Prefers a window seat on flights."
    ));
    assert!(!contradicts(
        "Prefers a window seat on short hops.",
        "Prefers an aisle seat on long-haul flights."
    ));
}

/// What `new` contradicts of `olds`, as a write path judges them together
/// (without an embedder).
fn contradicted(new: &str, olds: &[&str]) -> Vec<bool> {
    let read_olds: Vec<Reading> = olds.iter().map(|old| read(old)).collect();
    let olds: Vec<(&Reading, f32)> = read_olds.iter().map(|old| (old, 0.0)).collect();
    judge_all(&read(new), &olds, false)
        .iter()
        .map(Option::is_some)
        .collect()
}

#[test]
fn a_value_of_the_same_shape_said_to_have_changed_contradicts() {
    assert_eq!(
        contradicted(
            "Alice's flight now lands at 5pm.",
            &["Alice's flight lands at 3pm."]
        ),
        [true]
    );
    assert_eq!(
        contradicted(
            "Payroll now runs on the 28th.",
            &["Payroll runs on the 25th."]
        ),
        [true]
    );
    assert_eq!(
        contradicted(
            "Renewed the wildcard cert; new expiry 2025-06-01.",
            &["The wildcard cert expires on 2024-06-01."]
        ),
        [true]
    );
}

#[test]
fn a_change_is_said_of_the_memory_most_like_it() {
    assert_eq!(
        contradicted(
            "Feature flags moved to Unleash to save money.",
            &[
                "The API gateway timeout is 30s.",
                "Feature flags are managed in LaunchDarkly.",
                "Feature work is planned in Linear.",
            ]
        ),
        [false, true, false]
    );
    // Nothing much like it: nothing changed that is known.
    assert_eq!(
        contradicted(
            "Feature flags moved to Unleash to save money.",
            &["The API gateway timeout is 30s."]
        ),
        [false]
    );
}

#[test]
fn talk_another_thing_of_a_kind_or_one_of_many_is_no_change() {
    let no = |new: &str, old: &str| {
        assert_eq!(contradicted(new, &[old]), [false], "{old:?} -> {new:?}");
    };
    // Another subject sharing a word with the older one's.
    no(
        "Alice's meeting moved to 4pm.",
        "Alice's flight lands at 3pm.",
    );
    no(
        "Release 2.2 now ships on 10 June.",
        "Release 2.1 ships on 3 May.",
    );
    no(
        "The south office now has 25 desks.",
        "The north office has 40 desks.",
    );
    no(
        "The API key for Twilio is now rotated weekly.",
        "The API key for Stripe is rotated monthly.",
    );
    // Another verb: another attribute.
    no(
        "Carlos now works remotely for a company in Berlin.",
        "Carlos lives in Madrid.",
    );
    // Of the same subject, another attribute the rules know.
    no("Bob Smith moved to Porto.", "Bob Smith prefers Rust.");
    // One of many, and one more.
    no("The app now supports German.", "The app supports English.");
    no(
        "We opened a new office in Denver.",
        "Our office is in Austin.",
    );
    // Talk.
    no(
        "Caroline: Wow, Mel! Any more paintings coming up now?",
        "Caroline: Wow, Mel. That must've been breathtaking!",
    );
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
    score_all(cases, misses, |new, _, olds| {
        let olds: Vec<(&Reading, f32)> = olds.iter().map(|(old, _)| (*old, 0.0)).collect();
        judge_all(new, &olds, false)
    })
}

/// Prints (true positives, predicted, labelled) as precision and recall.
pub(super) fn print_score(name: &str, (hits, predicted, labelled): (usize, usize, usize)) {
    println!(
        "{name}: precision {:.3} recall {:.3} ({hits} right of {predicted} said, {labelled} labelled)",
        hits as f64 / predicted.max(1) as f64,
        hits as f64 / labelled.max(1) as f64
    );
}

/// [`score`] with another judge of a new memory (read, and its text) and
/// the older ones still valid (read, and their texts).
pub(super) fn score_all(
    cases: &[serde_json::Value],
    misses: bool,
    judge: impl Fn(&Reading, &str, &[(&Reading, &str)]) -> Vec<Option<String>>,
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
            let candidates: Vec<usize> = (0..parsed.len())
                .filter(|&j| {
                    valid[j] && parsed[j].0 != content && !event(write) && !event(&writes[j])
                })
                .collect();
            let olds: Vec<(&Reading, &str)> = candidates
                .iter()
                .map(|&j| (&parsed[j].1, parsed[j].0))
                .collect();
            let verdicts = judge(&new, content, &olds);
            for (&j, said) in candidates.iter().zip(verdicts) {
                let old_text = parsed[j].0;
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

/// The labelled sets SETS names (comma-separated names of files in
/// tests/data/contradictions; "dev" when unset): never "heldout" to tune on.
fn tuning_sets() -> Vec<serde_json::Value> {
    sets(&std::env::var("SETS").unwrap_or_else(|_| "dev".into()))
}

/// The labelled sets `names` names (comma-separated names of files in
/// tests/data/contradictions).
pub(super) fn sets(names: &str) -> Vec<serde_json::Value> {
    names
        .split(',')
        .flat_map(|name| {
            let path = format!(
                "{}/../tests/data/contradictions/{name}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            let cases: Vec<serde_json::Value> =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            cases
        })
        .collect()
}

#[test]
#[ignore = "prints the rules' precision and recall on the sets SETS names (dev) with every miss"]
fn dev() {
    print_score("dev", score(&tuning_sets(), true));
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

/// Each write of `cases` with its vector by the test model.
pub(super) async fn embedded(
    cases: &[serde_json::Value],
) -> std::collections::HashMap<String, Vec<f32>> {
    let texts: Vec<String> = cases
        .iter()
        .flat_map(|c| c["writes"].as_array().unwrap().iter())
        .map(|w| w["content"].as_str().unwrap().to_owned())
        .collect();
    let vectors = test_embedder().await.embed(texts.clone()).await.unwrap();
    texts.into_iter().zip(vectors).collect()
}

#[tokio::test]
#[ignore = "prints the rules' precision and recall on the sets SETS names (dev) with the test model's cosines"]
async fn dev_with_embedder() {
    let cases = tuning_sets();
    let by_text = embedded(&cases).await;
    let cosine = |a: &str, b: &str| crate::embed::dot(&by_text[a], &by_text[b]);
    for meant in [
        0.3f32, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1.1,
    ] {
        let score = score_all(&cases, meant == MEANT, |new, text, olds| {
            let olds: Vec<(&Reading, f32)> = olds
                .iter()
                .map(|(old, old_text)| (*old, cosine(text, old_text)))
                .collect();
            judge_all_at(new, &olds, true, meant)
        });
        print_score(&format!("dev, meant at {meant}"), score);
    }
}

#[test]
#[ignore = "prints, per rule, how many pairs each said and got right on a set (totals only)"]
fn per_rule() {
    let sets = std::env::var("SETS").unwrap_or_else(|_| "dev,heldout".into());
    for name in sets.split(',') {
        let path = format!(
            "{}/../tests/data/contradictions/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let cases: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let rule = |reason: &str| {
            if reason.starts_with("contradicted: now ") {
                "frame"
            } else if reason.starts_with("contradicted: it says") {
                "cover"
            } else {
                "claims"
            }
        };
        for only in ["claims", "frame", "cover"] {
            let (hits, predicted, _) = score_all(&cases, false, |new, _, olds| {
                let olds: Vec<(&Reading, f32)> = olds.iter().map(|(old, _)| (*old, 0.0)).collect();
                judge_all(new, &olds, false)
                    .into_iter()
                    .map(|r| r.filter(|r| rule(r) == only))
                    .collect()
            });
            println!("{name} {only}: {hits} right of {predicted}");
        }
        print_score(name, score(&cases, false));
    }
}

#[test]
#[ignore = "prints the rules' verdict on each `old || new` line of the file PAIRS names"]
fn pairs() {
    let path = std::env::var("PAIRS").expect("PAIRS: a file of `old || new` lines");
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let Some((old, new)) = line.split_once(" || ") else {
            continue;
        };
        let said = judge_all(&read(new), &[(&read(old), 0.0)], false).remove(0);
        println!(
            "{:5} {old:?} -> {new:?} {}",
            said.is_some(),
            said.unwrap_or_default()
        );
    }
}

#[tokio::test]
#[ignore = "prints, for each pair the embedder tier misses on SETS (dev), what each rule saw"]
async fn why_missed() {
    let cases = tuning_sets();
    let by_text = embedded(&cases).await;
    let cosine = |a: &str, b: &str| crate::embed::dot(&by_text[a], &by_text[b]);
    for case in &cases {
        let writes = case["writes"].as_array().unwrap();
        for (i, write) in writes.iter().enumerate() {
            let content = write["content"].as_str().unwrap();
            let new = read(content);
            let want: Vec<usize> = write
                .get("invalidates")
                .and_then(|v| v.as_array())
                .map(|v| v.iter().map(|n| n.as_u64().unwrap() as usize).collect())
                .unwrap_or_default();
            let olds: Vec<(Reading, f32, &str)> = writes[..i]
                .iter()
                .map(|w| {
                    let t = w["content"].as_str().unwrap();
                    (read(t), cosine(content, t), t)
                })
                .collect();
            let judged: Vec<(&Reading, f32)> = olds.iter().map(|(r, c, _)| (r, *c)).collect();
            let verdicts = judge_all(&new, &judged, true);
            let best = olds.iter().map(|o| o.1).fold(0.0f32, f32::max);
            for &j in &want {
                if verdicts[j].is_some() {
                    continue;
                }
                let (old, cos, text) = &olds[j];
                let (shared, of) = frame::cover(&new.frame, &old.frame);
                println!(
                    "MISSED {} cued={} cos={cos:.2} closest={} may_cover={} other_attr={} cover={shared}/{of} claims={}/{}: {text:?} -> {content:?}",
                    case["id"].as_str().unwrap(),
                    new.frame.cued(),
                    *cos >= best,
                    frame::may_cover(&new.frame, &old.frame),
                    other_attributes(&new, old),
                    new.claims.len(),
                    old.claims.len(),
                );
            }
        }
    }
}

#[test]
#[ignore = "prints how long telling whether a write may contradict takes, per part"]
fn gate_cost() {
    let texts: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                "w{i} deploy database user prefers dark mode billing kaloven invoice gateway mira latency queue"
            )
        })
        .collect();
    let time = |name: &str, f: &dyn Fn(&str) -> usize| {
        let start = std::time::Instant::now();
        let mut n = 0;
        for _ in 0..5 {
            for t in &texts {
                n += f(t);
            }
        }
        println!(
            "{name}: {:.1} µs per text ({n})",
            start.elapsed().as_secs_f64() * 1e6 / (5 * texts.len()) as f64
        );
    };
    time("may_contradict", &|t| usize::from(may_contradict(t)));
    time("cued", &|t| usize::from(frame::cued(t)));
    time("claims", &|t| claims(t).len());
    time("read", &|t| read(t).claims.len());
}
