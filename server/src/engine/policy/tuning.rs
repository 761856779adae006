//! How the learned decider's fit and the thresholds where its vote is
//! heeded were chosen, and what it scores with the test model (issue 28):
//!
//! `cargo test -p engram-server --release --lib policy::tuning -- --ignored --nocapture --test-threads 1`
//!
//! `folds` scores each fit of `POLICY_FITS` (`hidden:steps:rate:decay`
//! separated by `;`, else the server's) on the training examples in five
//! folds — each example voted on by a fit without its fold — and the
//! thresholds that do best there; `held_out` fits on every training example
//! as the server does and prints the totals of the dev split and the
//! held-out sets, the rules alone and with the vote (never a case).
//! Sentence vectors are kept in the system's temporary folder between runs.

use std::collections::HashMap;
use std::io::{Read, Write};

use super::decider::{CLASSES, Decider, FIT, Fit, label};
use super::examples::{self, Example, rows};
use super::features::read;
use super::vote::{HEEDED, Heeded, Verdict};
use super::*;
use crate::embed::{Embedder, EmbedderConfig};

/// Where sentence vectors are kept between runs.
fn cache_path() -> std::path::PathBuf {
    std::env::temp_dir().join("engram-policy-sentence-vectors.bin")
}

/// The test model's vectors of `texts`, from the cache where it has them.
fn vectors(texts: &[String]) -> Vec<Vec<f32>> {
    let mut cache = cached_sentence_vectors();
    let missing: Vec<String> = {
        let mut seen = std::collections::HashSet::new();
        texts
            .iter()
            .filter(|t| !cache.contains_key(*t) && seen.insert(t.as_str()))
            .cloned()
            .collect()
    };
    if !missing.is_empty() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let started = std::time::Instant::now();
        let fresh =
            runtime.block_on(async { test_embedder().await.embed(missing.clone()).await.unwrap() });
        println!(
            "embedded {} sentences in {:?}",
            missing.len(),
            started.elapsed()
        );
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(cache_path())
            .unwrap();
        for (text, vector) in missing.into_iter().zip(fresh) {
            let mut record = Vec::new();
            record.extend((text.len() as u32).to_le_bytes());
            record.extend(text.as_bytes());
            record.extend((vector.len() as u32).to_le_bytes());
            vector.iter().for_each(|x| record.extend(x.to_le_bytes()));
            file.write_all(&record).unwrap();
            cache.insert(text, vector);
        }
    }
    texts.iter().map(|t| cache[t].clone()).collect()
}

/// The sentence vectors a run has kept (none before the first).
pub(crate) fn cached_sentence_vectors() -> HashMap<String, Vec<f32>> {
    let mut bytes = Vec::new();
    if let Ok(mut file) = std::fs::File::open(cache_path()) {
        file.read_to_end(&mut bytes).unwrap();
    }
    let mut cache = HashMap::new();
    let mut at = 0;
    let take = |n: usize, at: &mut usize| {
        let slice = bytes[*at..*at + n].to_vec();
        *at += n;
        slice
    };
    while at < bytes.len() {
        let len = u32::from_le_bytes(take(4, &mut at).try_into().unwrap()) as usize;
        let text = String::from_utf8(take(len, &mut at)).unwrap();
        let dims = u32::from_le_bytes(take(4, &mut at).try_into().unwrap()) as usize;
        let vector = take(4 * dims, &mut at)
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        cache.insert(text, vector);
    }
    cache
}

/// The test model (scripts/fetch-model.sh, or `ENGRAM_TEST_MODEL`).
async fn test_embedder() -> Embedder {
    let dir = std::env::var_os("ENGRAM_TEST_MODEL").map_or_else(
        || {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/models/all-MiniLM-L6-v2")
        },
        std::path::PathBuf::from,
    );
    Embedder::open(&EmbedderConfig::Local(dir))
        .await
        .unwrap()
        .unwrap()
}

/// The features of `examples`, embedded with the test model.
fn featured(examples: &[Example]) -> (Vec<Vec<f32>>, Vec<usize>) {
    let texts: Vec<String> = examples.iter().flat_map(|e| e.reading.texts()).collect();
    let vectors = vectors(&texts);
    let dimensions = vectors.first().map_or(0, Vec::len);
    rows(examples, vectors, dimensions)
}

/// The fits to compare: `POLICY_FITS`, else the server's.
fn fits() -> Vec<Fit> {
    let Ok(spec) = std::env::var("POLICY_FITS") else {
        return vec![FIT];
    };
    spec.split(';')
        .map(|one| {
            let p: Vec<&str> = one.split(':').collect();
            Fit {
                hidden: p[0].parse().unwrap(),
                steps: p[1].parse().unwrap(),
                learning_rate: p[2].parse().unwrap(),
                weight_decay: p[3].parse().unwrap(),
                ..FIT
            }
        })
        .collect()
}

const FOLDS: usize = 5;

/// A training example as the thresholds see it: its label, the rules'
/// deciding cue and verdict.
struct Ruled {
    class: usize,
    cue: Option<rules::Cue>,
    rules: Option<MemoryType>,
    file: usize,
}

/// should_store and type accuracy of `decided` (kept type or nothing)
/// against `classes`.
fn accuracy(decided: &[Option<MemoryType>], classes: &[usize]) -> (f64, f64) {
    let (mut store, mut typed, mut positives) = (0, 0, 0);
    for (d, &c) in decided.iter().zip(classes) {
        store += usize::from(d.is_some() == (c != 0));
        if c != 0 {
            positives += 1;
            typed += usize::from(*d == label(c));
        }
    }
    (
        store as f64 / classes.len().max(1) as f64,
        typed as f64 / positives.max(1) as f64,
    )
}

/// What the rules with a vote heeded as `heeded` decide.
fn combined(ruled: &Ruled, vote: &Vote, heeded: &Heeded) -> Option<MemoryType> {
    match vote.verdict(ruled.cue.as_ref(), heeded) {
        Some(Verdict::Keep(t)) => Some(t),
        Some(Verdict::Drop) => None,
        None => ruled.rules,
    }
}

#[test]
#[ignore = "scores fits and thresholds in folds of the training examples (needs the test model)"]
fn folds() {
    let examples = examples::examples().unwrap();
    let (rows, classes) = featured(&examples);
    let ruled: Vec<Ruled> = examples
        .iter()
        .map(|e| {
            let d = rules::deciding_cue(&e.reading.sentences);
            Ruled {
                class: e.class,
                cue: d.map(|d| d.cue),
                rules: d.map(|d| d.cue.memory_type),
                file: e.file,
            }
        })
        .collect();
    let rules_alone: Vec<Option<MemoryType>> = ruled.iter().map(|r| r.rules).collect();
    println!(
        "rules alone (training, all): {:.3} / {:.3}",
        accuracy(&rules_alone, &classes).0,
        accuracy(&rules_alone, &classes).1
    );
    // A fixed shuffle of the folds.
    let fold: Vec<usize> = (0..rows.len()).map(|i| (i * 7919 + 13) % FOLDS).collect();
    for fit in fits() {
        let started = std::time::Instant::now();
        let mut votes = vec![
            Vote {
                probabilities: [0.0; CLASSES]
            };
            rows.len()
        ];
        for k in 0..FOLDS {
            let train: Vec<usize> = (0..rows.len()).filter(|&i| fold[i] != k).collect();
            let model = Decider::fit(
                &train.iter().map(|&i| rows[i].clone()).collect::<Vec<_>>(),
                &train.iter().map(|&i| classes[i]).collect::<Vec<_>>(),
                fit,
            )
            .unwrap();
            for i in (0..rows.len()).filter(|&i| fold[i] == k) {
                votes[i] = examples::vote(&model, &rows[i]);
            }
        }
        let alone: Vec<Option<MemoryType>> = votes
            .iter()
            .map(|v| {
                let (label, _) = v.likeliest();
                label
            })
            .collect();
        let (s, t) = accuracy(&alone, &classes);
        let with = |heeded: &Heeded| -> Vec<Option<MemoryType>> {
            ruled
                .iter()
                .zip(&votes)
                .map(|(r, v)| combined(r, v, heeded))
                .collect()
        };
        let (hs, ht) = accuracy(&with(&HEEDED), &classes);
        let mut best = (0.0, HEEDED);
        let grid = [0.3, 0.4, 0.5, 0.6, 0.7];
        for fills in grid {
            for keeps_weak in grid {
                for drops_phrase in [0.0, 0.05, 0.1, 0.2, 0.3] {
                    for retypes_phrase in [0.5, 0.6, 0.7, 0.8, 0.9, 2.0] {
                        let heeded = Heeded {
                            fills,
                            keeps_weak,
                            drops_phrase,
                            retypes_phrase,
                        };
                        let (a, b) = accuracy(&with(&heeded), &classes);
                        if a + b > best.0 {
                            best = (a + b, heeded);
                        }
                    }
                }
            }
        }
        let chosen = with(&best.1);
        let (bs, bt) = accuracy(&chosen, &classes);
        println!(
            "{fit:?} ({:?}): alone {s:.3} / {t:.3}; with the rules as the server heeds {hs:.3} / {ht:.3}; best {bs:.3} / {bt:.3} at {:?}",
            started.elapsed(),
            best.1
        );
        for (file, name) in [
            "dev", "examples", "varied_a", "varied_b", "varied_c", "varied_d",
        ]
        .iter()
        .enumerate()
        {
            let pick = |d: &[Option<MemoryType>]| -> (Vec<Option<MemoryType>>, Vec<usize>) {
                ruled
                    .iter()
                    .zip(d)
                    .filter(|(r, _)| r.file == file)
                    .map(|(r, d)| (*d, r.class))
                    .unzip()
            };
            let (r, c) = pick(&rules_alone);
            let (v, _) = pick(&chosen);
            let (h, _) = pick(&with(&HEEDED));
            let (a, b) = (accuracy(&r, &c), accuracy(&v, &c));
            let h = accuracy(&h, &c);
            println!(
                "  {name}: rules {:.3} / {:.3}; as heeded {:.3} / {:.3}; best {:.3} / {:.3}",
                a.0, a.1, h.0, h.1, b.0, b.1
            );
        }
    }
}

#[test]
#[ignore = "prints the rules alone and with the vote on the held-out sets (needs the test model)"]
fn held_out() {
    let examples = examples::examples().unwrap();
    let started = std::time::Instant::now();
    let (rows, classes) = featured(&examples);
    let model = Decider::fit(&rows, &classes, FIT).unwrap();
    println!(
        "fitted {} examples in {:?} (vectors cached)",
        rows.len(),
        started.elapsed()
    );
    let dimensions = (rows[0].len() - super::features::SCALARS) / 3;
    for (name, json) in [
        (
            "dev (trained on)",
            include_str!("../../../data/policy/dev.json"),
        ),
        (
            "held-out",
            include_str!("../../../../tests/data/policy/heldout.json"),
        ),
        (
            "fresh",
            include_str!("../../../../tests/data/policy/fresh.json"),
        ),
        (
            "fresh2",
            include_str!("../../../../tests/data/policy/fresh2.json"),
        ),
        (
            "fresh3",
            include_str!("../../../../tests/data/policy/fresh3.json"),
        ),
        (
            "fresh4",
            include_str!("../../../../tests/data/policy/fresh4.json"),
        ),
        (
            "multilingual",
            include_str!("../../../../tests/data/policy/multilingual.json"),
        ),
    ] {
        let cases: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
        let screened: Vec<Screened> = cases
            .iter()
            .map(|c| screen(c["transcript"].as_str().unwrap()))
            .collect();
        let readings: Vec<_> = screened.iter().map(|s| read(&s.text)).collect();
        let texts: Vec<String> = readings.iter().flat_map(|r| r.texts()).collect();
        let mut rest = vectors(&texts).into_iter();
        let (mut rules_right, mut voted_right) = ((0, 0), (0, 0));
        let (mut positives, mut leaks) = (0, [0, 0]);
        for ((case, screened), reading) in cases.iter().zip(&screened).zip(&readings) {
            let own: Vec<Vec<f32>> = rest.by_ref().take(reading.embedded.len()).collect();
            let vote = examples::vote(&model, &reading.features(&own, dimensions));
            let want = case["should_store"].as_bool().unwrap();
            let want_type = case["memory_type"].as_str();
            positives += usize::from(want);
            for (k, (right, vote)) in [(&mut rules_right, None), (&mut voted_right, Some(&vote))]
                .into_iter()
                .enumerate()
            {
                let d = screened.finish(classify_with_vote(
                    &screened.text,
                    &Scope::default(),
                    "",
                    vote,
                ));
                right.0 += usize::from(d.should_store == want);
                right.1 +=
                    usize::from(want && d.should_store && Some(d.memory_type.label()) == want_type);
                let secrets = case.get("secrets").and_then(|s| s.as_array());
                let leaked = secrets
                    .into_iter()
                    .flatten()
                    .filter(|s| d.summary.contains(s.as_str().unwrap()))
                    .count();
                leaks[k] += leaked;
            }
        }
        let n = cases.len() as f64;
        println!(
            "{name}: rules alone should_store {:.3} type {:.3}; with the vote {:.3} {:.3} ({} cases, secrets stored {} alone, {} with the vote)",
            rules_right.0 as f64 / n,
            rules_right.1 as f64 / positives as f64,
            voted_right.0 as f64 / n,
            voted_right.1 as f64 / positives as f64,
            cases.len(),
            leaks[0],
            leaks[1],
        );
    }
}

#[test]
#[ignore = "times embedding the training examples whole and by sentence (needs the test model)"]
fn embedding_cost() {
    let examples = examples::examples().unwrap();
    let whole: Vec<String> = examples
        .iter()
        .map(|e| {
            e.reading
                .sentences
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let sentences: Vec<String> = examples.iter().flat_map(|e| e.reading.texts()).collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let embedder = test_embedder().await;
        for (name, texts) in [("whole", whole), ("sentences", sentences)] {
            let chars: usize = texts.iter().map(String::len).sum();
            let started = std::time::Instant::now();
            embedder.embed(texts.clone()).await.unwrap();
            println!(
                "{name}: {} texts, {chars} bytes, {:?}",
                texts.len(),
                started.elapsed()
            );
        }
    });
}
