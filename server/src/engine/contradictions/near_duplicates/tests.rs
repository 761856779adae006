use super::*;

fn repeats(new: &str, old: &str, cosine: Option<f32>) -> bool {
    judge(&gist(new), &gist(old), cosine).is_some()
}

#[test]
fn close_meanings_with_the_same_values_repeat_each_other() {
    assert!(repeats(
        "k8s cluster version: 1.29",
        "The Kubernetes cluster is on version 1.29.",
        Some(0.9)
    ));
    assert!(repeats(
        "The SRE team owns the nightly backup job.",
        "The nightly backup job is owned by the SRE team.",
        None
    ));
}

#[test]
fn a_value_polarity_order_or_distance_tells_them_apart() {
    // Another value.
    assert!(!repeats(
        "The Redis instance listens on port 6380.",
        "The Redis instance listens on port 6379.",
        Some(0.99)
    ));
    assert!(!repeats(
        "Use the Nord theme in the terminal.",
        "Use the Dracula theme in the terminal.",
        Some(0.95)
    ));
    // A number is never a typo of another; times are values.
    assert!(!repeats(
        "Deployed v2.4.2 to production.",
        "Deployed v2.4.1 to production.",
        None
    ));
    assert!(!repeats(
        "The backups run every week.",
        "The backups run every day.",
        None
    ));
    // From one to another, or the other way.
    assert!(!repeats(
        "We will migrate from GitHub Actions to Jenkins.",
        "We will migrate from Jenkins to GitHub Actions.",
        Some(0.97)
    ));
    // Words only: sharing many is not enough when many others differ.
    assert!(!repeats(
        "kalo mira tushi ven dorpel quizan brisot glefan wuka lomi",
        "kalo mira tushi ven dorpel rasto vendor peltu zanbri",
        None
    ));
    // Turned around.
    assert!(!repeats(
        "Please don't put a summary at the top of PRs.",
        "Please include a summary at the top of every PR.",
        Some(0.9)
    ));
    // Swapped.
    assert!(!repeats(
        "Initech is a reseller for Hooli.",
        "Hooli is a reseller for Initech.",
        Some(0.99)
    ));
    // Not close enough.
    assert!(!repeats(
        "Use Grafana for dashboards.",
        "Use Grafana for dashboards and alerts on disk usage.",
        Some(0.6)
    ));
}

/// (new, old) pairs of a labelled set: (right, said, labelled).
fn score(
    pairs: &[serde_json::Value],
    misses: bool,
    judge: impl Fn(&Gist, &Gist, &str, &str) -> Option<String>,
) -> (usize, usize, usize) {
    let (mut right, mut said, mut labelled) = (0, 0, 0);
    for pair in pairs {
        let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
        let wanted = pair["near_duplicate"] == true;
        let found = judge(&gist(b), &gist(a), b, a);
        labelled += usize::from(wanted);
        said += usize::from(found.is_some());
        right += usize::from(wanted && found.is_some());
        if misses && std::env::var_os("SHOW_RIGHT").is_some() && found.is_some() && wanted {
            println!("RIGHT {a:?} -> {b:?}");
        }
        if misses && found.is_some() != wanted {
            println!(
                "{} {} {} (apart by {}): {a:?} -> {b:?}",
                if wanted { "MISSED" } else { "WRONG" },
                pair["id"].as_str().unwrap_or("?"),
                pair["why"].as_str().unwrap_or("?"),
                apart_by(&gist(b), &gist(a)).unwrap_or("-"),
            );
        }
    }
    (right, said, labelled)
}

fn report(name: &str, (right, said, labelled): (usize, usize, usize)) {
    println!(
        "{name}: precision {:.3} recall {:.3} ({right} right of {said} said, {labelled} labelled)",
        right as f64 / said.max(1) as f64,
        right as f64 / labelled.max(1) as f64
    );
}

fn pairs(name: &str) -> Vec<serde_json::Value> {
    let path = format!(
        "{}/../tests/data/near_duplicates/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "prints the words-only check's precision and recall on the dev pairs, with every miss"]
fn dev() {
    let dev = pairs("dev");
    report(
        "dev, words only",
        score(&dev, true, |new, old, _, _| judge(new, old, None)),
    );
    for shared_at in [0.4, 0.5, 0.6, 0.7, 0.8] {
        let found = score(&dev, false, |new, old, _, _| {
            (shared(new, old) >= shared_at && !told_apart(new, old)).then(String::new)
        });
        report(&format!("dev, words shared at {shared_at}"), found);
    }
}

#[tokio::test]
#[ignore = "prints precision and recall on the dev pairs with the test model's cosines"]
async fn dev_with_embedder() {
    let embedder = crate::engine::contradictions::tests::test_embedder().await;
    let dev = pairs("dev");
    let held_out = pairs("heldout");
    let texts: Vec<String> = dev
        .iter()
        .chain(&held_out)
        .flat_map(|p| [p["a"].as_str().unwrap(), p["b"].as_str().unwrap()])
        .map(str::to_owned)
        .collect();
    let vectors = embedder.embed(texts.clone()).await.unwrap();
    let by_text: std::collections::HashMap<String, Vec<f32>> =
        texts.into_iter().zip(vectors).collect();
    let cosine = |a: &str, b: &str| crate::embed::dot(&by_text[a], &by_text[b]);
    report(
        "dev, with the embedder",
        score(&dev, true, |new, old, a, b| {
            judge(new, old, Some(cosine(a, b)))
        }),
    );
    if std::env::var_os("SHOW_COSINES").is_some() {
        for pair in &dev {
            let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
            println!(
                "COSINE\t{:.3}\t{}\t{}\t{}",
                cosine(a, b),
                pair["near_duplicate"],
                pair["why"],
                apart_by(&gist(b), &gist(a)).unwrap_or("-")
            );
        }
    }
    report(
        "held-out, with the embedder",
        score(&held_out, false, |new, old, a, b| {
            judge(new, old, Some(cosine(a, b)))
        }),
    );
    for close in [0.6f32, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9] {
        let found = score(&dev, false, |new, old, a, b| {
            (cosine(a, b) >= close && !told_apart(new, old)).then(String::new)
        });
        report(&format!("dev, close at {close}"), found);
    }
}

#[test]
#[ignore = "prints how DEBUG_A (older) and DEBUG_B (newer) are read"]
fn debug() {
    let (a, b) = (
        gist(&std::env::var("DEBUG_A").unwrap()),
        gist(&std::env::var("DEBUG_B").unwrap()),
    );
    println!("{a:#?}\n{b:#?}\n{:?}", judge(&b, &a, None));
    println!("{:?}", gaps(&b.sequence, &a.sequence));
}

/// The least precision the words-only check must keep on the held-out
/// pairs (issue 27). The thresholds and checks were chosen on dev only.
const MIN_PRECISION: f64 = 0.97;

#[test]
fn without_an_embedder_the_held_out_pairs_are_linked_precisely() {
    let (right, said, labelled) = score(&pairs("heldout"), false, |new, old, _, _| {
        judge(new, old, None)
    });
    report("held-out, words only", (right, said, labelled));
    let mut wrong: std::collections::BTreeMap<String, usize> = Default::default();
    let held_out = pairs("heldout");
    for pair in held_out.iter().filter(|p| p["near_duplicate"] == false) {
        let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
        if judge(&gist(b), &gist(a), None).is_some() {
            *wrong.entry(pair["why"].to_string()).or_default() += 1;
        }
    }
    println!("held-out, words only, wrongly linked by kind: {wrong:?}");
    assert!(said >= 10, "only {said} of {labelled} linked");
    let precision = right as f64 / said as f64;
    assert!(precision >= MIN_PRECISION, "precision {precision:.3}");
}

#[test]
fn the_quick_check_passes_every_pair_the_full_one_links() {
    for set in ["dev", "heldout"] {
        for pair in pairs(set) {
            let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
            if judge(&gist(b), &gist(a), None).is_some() {
                assert!(may_repeat(&gist(b), &gist(a), None), "{a:?} -> {b:?}");
            }
        }
    }
}
