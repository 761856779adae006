use super::super::tests::{embedded, print_score, score_all, sets};
use super::super::{MEANT, judge_all_at, read};
use super::*;

/// The tuning sets the model is fitted on (never held-out).
const TUNING: [&str; 6] = [
    "dev",
    "train-en",
    "train-intl",
    "train-mix",
    "train-w",
    "train-x",
];

/// A pair the rules judged nothing of, as the model reads it, and whether
/// the newer one replaces the older one.
struct Example {
    x: [f32; FEATURES.len()],
    replaced: bool,
}

/// The examples of `cases`: each write against the older writes still
/// valid (as labelled) when the rules judge none of them replaced.
fn examples(cases: &[serde_json::Value], cosine: &dyn Fn(&str, &str) -> f32) -> Vec<Example> {
    let mut out = Vec::new();
    for case in cases {
        let writes = case["writes"].as_array().unwrap();
        let mut valid = vec![true; writes.len()];
        let event = |w: &serde_json::Value| w["type"] == "EVENT";
        for (i, write) in writes.iter().enumerate() {
            let content = write["content"].as_str().unwrap();
            let want: Vec<usize> = write
                .get("invalidates")
                .and_then(|v| v.as_array())
                .map(|v| v.iter().map(|n| n.as_u64().unwrap() as usize).collect())
                .unwrap_or_default();
            let candidates: Vec<usize> = (0..i)
                .filter(|&j| {
                    let old = writes[j]["content"].as_str().unwrap();
                    valid[j] && old != content && !event(write) && !event(&writes[j])
                })
                .collect();
            let new = read(content);
            let olds: Vec<(Reading, f32)> = candidates
                .iter()
                .map(|&j| {
                    let old = writes[j]["content"].as_str().unwrap();
                    (read(old), cosine(content, old))
                })
                .collect();
            let pairs: Vec<(&Reading, f32)> = olds.iter().map(|(r, c)| (r, *c)).collect();
            let ruled = judge_all_at(&new, &pairs, true, MEANT);
            if ruled.iter().all(Option::is_none) {
                for (k, (old, cosine)) in olds.iter().enumerate() {
                    if !judged(&new, old) {
                        continue;
                    }
                    out.push(Example {
                        x: features(&new, old, *cosine, best_other(&olds, k), olds.len()),
                        replaced: want.contains(&candidates[k]),
                    });
                }
            }
            for j in want {
                valid[j] = false;
            }
        }
    }
    out
}

/// Steps of [`fit`]'s descent (it has converged by then) and the weight of
/// its L2 penalty (1e-4 and 1e-2 did no better on the sets left out).
const ITERATIONS: usize = 6000;
const L2: f64 = 1e-3;

/// Logistic regression by gradient descent (deterministic), with a light
/// L2 penalty on every weight but the bias.
fn fit(examples: &[Example]) -> [f32; FEATURES.len()] {
    let mut w = [0.0f64; FEATURES.len()];
    let n = examples.len() as f64;
    for _ in 0..ITERATIONS {
        let mut grad = [0.0f64; FEATURES.len()];
        for e in examples {
            let z: f64 = w.iter().zip(&e.x).map(|(w, x)| w * f64::from(*x)).sum();
            let error = 1.0 / (1.0 + (-z).exp()) - f64::from(u8::from(e.replaced));
            for (g, x) in grad.iter_mut().zip(&e.x) {
                *g += error * f64::from(*x) / n;
            }
        }
        for (k, (w, g)) in w.iter_mut().zip(grad).enumerate() {
            let penalty = if k == 0 { 0.0 } else { L2 * *w };
            *w -= 2.0 * (g + penalty);
        }
    }
    w.map(|w| w as f32)
}

const THRESHOLDS: [f32; 13] = [
    -1.0,
    -0.5,
    0.0,
    0.5,
    1.0,
    1.5,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    5.0,
    f32::INFINITY,
];

/// Hits, said and labelled on `cases` of the rules with `model` after them.
fn scored(
    cases: &[serde_json::Value],
    cosine: &dyn Fn(&str, &str) -> f32,
    model: &Model,
    misses: bool,
) -> (usize, usize, usize) {
    score_all(cases, misses, |new, text, olds| {
        let olds: Vec<(&Reading, f32)> = olds
            .iter()
            .map(|(old, old_text)| (*old, cosine(text, old_text)))
            .collect();
        let mut verdicts = judge_all_at(new, &olds, true, MEANT);
        judge(model, new, &olds, &mut verdicts);
        verdicts
    })
}

#[tokio::test]
#[ignore = "fits the learned judge on the tuning sets: prints each set's score when fitted on the others, and the weights fitted on all"]
async fn fit_the_learned_judge() {
    let all = sets(&TUNING.join(","));
    let by_text = embedded(&all).await;
    let cosine = |a: &str, b: &str| crate::embed::dot(&by_text[a], &by_text[b]);
    // Each set scored by the model fitted on the others.
    let mut totals = vec![(0, 0, 0); THRESHOLDS.len()];
    for held in TUNING {
        let rest: Vec<&str> = TUNING.iter().copied().filter(|s| *s != held).collect();
        let weights = fit(&examples(&sets(&rest.join(",")), &cosine));
        let cases = sets(held);
        for (t, threshold) in THRESHOLDS.iter().enumerate() {
            let (h, p, l) = scored(
                &cases,
                &cosine,
                &Model {
                    weights,
                    threshold: *threshold,
                },
                false,
            );
            totals[t].0 += h;
            totals[t].1 += p;
            totals[t].2 += l;
        }
    }
    for (threshold, total) in THRESHOLDS.iter().zip(totals) {
        print_score(
            &format!("fitted on the others, threshold {threshold}"),
            total,
        );
    }
    let training = examples(&all, &cosine);
    let weights = fit(&training);
    println!(
        "{} examples, {} replaced",
        training.len(),
        training.iter().filter(|e| e.replaced).count()
    );
    for (name, w) in FEATURES.iter().zip(weights) {
        println!("{w:8.3}  {name}");
    }
    println!("weights: {weights:?}");
    for threshold in THRESHOLDS {
        let score = scored(&all, &cosine, &Model { weights, threshold }, false);
        print_score(&format!("all tuning sets, threshold {threshold}"), score);
    }
}

#[tokio::test]
#[ignore = "prints the rules with the learned judge in use on the sets SETS names (dev), with every miss"]
async fn with_the_learned_judge() {
    let names = std::env::var("SETS").unwrap_or_else(|_| "dev".into());
    let cases = sets(&names);
    let by_text = embedded(&cases).await;
    let cosine = |a: &str, b: &str| crate::embed::dot(&by_text[a], &by_text[b]);
    let misses = !names.contains("heldout");
    print_score(&names, scored(&cases, &cosine, &MODEL, misses));
}

/// What the rules with the learned judge say of `new` against `olds`,
/// with the test model's cosines.
async fn judged_with_cosines(new: &str, olds: &[&str]) -> Vec<Option<String>> {
    let embedder = super::super::tests::test_embedder().await;
    let mut texts = vec![new.to_owned()];
    texts.extend(olds.iter().map(|o| o.to_string()));
    let vectors = embedder.embed(texts).await.unwrap();
    let readings: Vec<Reading> = olds.iter().map(|o| read(o)).collect();
    let pairs: Vec<(&Reading, f32)> = readings
        .iter()
        .zip(&vectors[1..])
        .map(|(r, v)| (r, crate::embed::dot(&vectors[0], v)))
        .collect();
    super::super::judge_all(&read(new), &pairs, true)
}

#[tokio::test]
async fn with_an_embedder_the_learned_judge_finds_a_change_no_rule_reads() {
    let old = "canary for api v2.14: 5% of traffic";
    let new = "api v2.14 canary is taking 20% of requests.";
    let others = [
        "Lint in mono-web is eslint + stylelint.",
        "Our office dog is called Biscuit.",
    ];
    // No change word, no claim the rules read, no frame they match.
    let rules = super::super::judge_all(&read(new), &[(&read(old), 0.0)], false);
    assert_eq!(rules, vec![None]);
    let learned = judged_with_cosines(new, &[old, others[0], others[1]]).await;
    assert!(
        learned[0]
            .as_deref()
            .is_some_and(|r| r.starts_with("contradicted: the learned judge")),
        "{learned:?}"
    );
    assert_eq!(learned[1..], [None, None]);
}

#[tokio::test]
async fn the_learned_judge_reads_no_talk_other_subject_or_unrelated_memory() {
    for (old, new) in [
        // A conversation's turns, a question: not statements.
        (
            "Jon: Thanks for being there for me. Your help means a lot!",
            "Jon: Your help matters to me. I am writing all my plans down.",
        ),
        (
            "Is the staging DB on port 5433?",
            "The staging DB is on port 6432.",
        ),
        // Two things of a kind.
        (
            "The staging DB is on port 5433.",
            "The production DB is on port 5432.",
        ),
        // Unrelated.
        (
            "Our office dog is called Biscuit.",
            "Our office coffee machine is a Sage Oracle.",
        ),
    ] {
        let learned =
            judged_with_cosines(new, &[old, "Lint in mono-web is eslint + stylelint."]).await;
        assert_eq!(learned, vec![None, None], "{old:?} -> {new:?}");
    }
}
