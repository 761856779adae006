//! The rules on the labelled dev set, in process, with every miss:
//! `cargo test -p engram-server --lib policy::evaluation -- --ignored --nocapture`.

use super::shapes::{ACKNOWLEDGED_CUE, LESSON_SHAPE_CUE};
use super::timing::{EVENT_CUE, FOR_LATER_CUE};
use super::*;
use std::collections::BTreeMap;

fn run(name: &str, json: &str) {
    let cases: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
    score(name, &cases.iter().collect::<Vec<_>>(), true);
}

fn score(name: &str, cases: &[&serde_json::Value], misses: bool) {
    let (mut store, mut typed, mut positives) = (0, 0, 0);
    let (mut missed, mut extra, mut shaped) = (0, 0, 0);
    // How each label was decided: by label, then by what was decided.
    let mut decided: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for case in cases {
        let transcript = case["transcript"].as_str().unwrap();
        let want = case["should_store"].as_bool().unwrap();
        let screened = screen(transcript);
        let d = screened.finish(classify_with_vote(
            &screened.text,
            &Scope::default(),
            "",
            None,
        ));
        if d.should_store != want {
            if want { missed += 1 } else { extra += 1 }
        }
        for secret in case
            .get("secrets")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
        {
            let secret = secret.as_str().unwrap();
            if d.summary.contains(secret) {
                println!(
                    "LEAK {name}: a secret of {} characters is in the summary",
                    secret.len()
                );
            }
        }
        if [EVENT_CUE, LESSON_SHAPE_CUE, ACKNOWLEDGED_CUE, FOR_LATER_CUE]
            .iter()
            .any(|c| d.reason.contains(c))
        {
            shaped += 1;
        }
        let got = if d.should_store {
            d.memory_type.label()
        } else {
            "-"
        };
        let label = case["memory_type"].as_str().unwrap_or("-");
        *decided.entry(label).or_default().entry(got).or_default() += 1;
        if d.should_store == want {
            store += 1;
        } else if misses {
            println!(
                "STORE {} want {want}: {transcript:?} — {}",
                d.should_store, d.reason
            );
        }
        if want {
            positives += 1;
            let label = case["memory_type"].as_str().unwrap();
            if d.should_store && d.memory_type.label() == label {
                typed += 1;
            } else if d.should_store && misses {
                println!(
                    "TYPE {} want {label}: {transcript:?} — {}",
                    d.memory_type.label(),
                    d.reason
                );
            }
        }
    }
    println!(
        "{name}: should_store {:.3} type {:.3} ({} cases; {missed} not stored, {extra} stored in vain, {} mistyped; {shaped} by a shape)",
        store as f64 / cases.len() as f64,
        typed as f64 / positives as f64,
        cases.len(),
        positives - missed - typed,
    );
    // Totals only, so also printed for sets nobody reads.
    for (label, got) in &decided {
        let row: Vec<String> = got.iter().map(|(g, n)| format!("{g} {n}")).collect();
        println!("  {label} decided as: {}", row.join(", "));
    }
}

#[test]
#[ignore = "prints the rules' accuracy on the dev set with every miss"]
fn dev() {
    run("dev", include_str!("../../../data/policy/dev.json"));
}

#[test]
#[ignore = "prints the rules' accuracy on the second held-out set with every miss"]
fn fresh() {
    // Misses shown for the even cases only; the odd ones stay unseen.
    let cases: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("../../../../tests/data/policy/fresh.json")).unwrap();
    let half = |parity: usize| -> Vec<&serde_json::Value> {
        cases.iter().skip(parity).step_by(2).collect()
    };
    score("fresh (even)", &half(0), true);
    score("fresh (odd, unseen)", &half(1), false);
}

#[test]
#[ignore = "prints the rules' accuracy on the third and fourth held-out sets and the vote's training examples"]
fn unseen() {
    // Totals only: nobody tuning the rules reads these cases.
    for (name, json) in [
        (
            "fresh2 (unseen)",
            include_str!("../../../../tests/data/policy/fresh2.json"),
        ),
        (
            "fresh3 (unseen)",
            include_str!("../../../../tests/data/policy/fresh3.json"),
        ),
        (
            "fresh4 (unseen)",
            include_str!("../../../../tests/data/policy/fresh4.json"),
        ),
        (
            "multilingual (unseen)",
            include_str!("../../../../tests/data/policy/multilingual.json"),
        ),
        (
            "examples (unseen by the rules)",
            include_str!("../../../data/policy/examples.json"),
        ),
        (
            "examples_varied_b (unseen by the rules)",
            include_str!("../../../data/policy/examples_varied_b.json"),
        ),
        (
            "examples_varied_c (unseen by the rules)",
            include_str!("../../../data/policy/examples_varied_c.json"),
        ),
        (
            "examples_varied_d (unseen by the rules)",
            include_str!("../../../data/policy/examples_varied_d.json"),
        ),
    ] {
        let cases: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
        score(name, &cases.iter().collect::<Vec<_>>(), false);
    }
}

#[test]
#[ignore = "prints the rules' accuracy on the first varied training set with every miss"]
fn varied_a() {
    // The rules were tuned on this set's misses (issue 28); the second
    // varied set, read by `unseen` in totals only, checks that they
    // generalise.
    run(
        "examples_varied_a",
        include_str!("../../../data/policy/examples_varied_a.json"),
    );
}

#[test]
#[ignore = "prints the rules' accuracy on the held-out set with every miss"]
fn heldout() {
    run(
        "held-out",
        include_str!("../../../../tests/data/policy/heldout.json"),
    );
}
