//! `locomo`: evidence recall@k of SearchMemories on the LoCoMo dev split,
//! lexical, by meaning and hybrid; the conversations are read by `dataset`.

mod dataset;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use engram_client::Engram;
use engram_client::proto::{self, MemoryType};
use engram_tests::input;

use crate::embedding::wait_embedded;
use crate::start;
use crate::timing::summary;
use dataset::{Turn, conversation};

const RECALL_AT: [usize; 4] = [1, 5, 10, 20];
/// The plain BM25 reference of `../shared/eval/README.md` (recall@5, @10, @20).
const BM25_REFERENCE: [(usize, f64); 3] = [(5, 0.482), (10, 0.580), (20, 0.647)];

/// Recall sums per category, to average at the end.
#[derive(Default)]
struct Recall {
    questions: usize,
    sums: [f64; RECALL_AT.len()],
}

impl Recall {
    fn add(&mut self, evidence: &HashSet<String>, ranked: &[String]) {
        self.questions += 1;
        for (i, k) in RECALL_AT.iter().enumerate() {
            let found = ranked
                .iter()
                .take(*k)
                .filter(|id| evidence.contains(*id))
                .count();
            self.sums[i] += found as f64 / evidence.len() as f64;
        }
    }

    fn at(&self, k: usize) -> f64 {
        let i = RECALL_AT.iter().position(|&at| at == k).unwrap_or(0);
        self.sums[i] / self.questions.max(1) as f64
    }

    fn row(&self, name: &str) -> String {
        let cells: Vec<String> = RECALL_AT
            .iter()
            .map(|&k| format!("{:.3}", self.at(k)))
            .collect();
        format!("{name:<16} {:>9}  {}", self.questions, cells.join("  "))
    }
}

/// A way of searching measured by the LoCoMo bench.
struct Mode {
    name: &'static str,
    /// `SearchWeights.semantic`; `None` leaves the server's default.
    semantic: Option<f64>,
    overall: Recall,
    by_category: BTreeMap<u64, Recall>,
    latencies: Vec<Duration>,
}

impl Mode {
    fn new(name: &'static str, semantic: Option<f64>) -> Mode {
        Mode {
            name,
            semantic,
            overall: Recall::default(),
            by_category: BTreeMap::new(),
            latencies: Vec::new(),
        }
    }
}

pub async fn locomo(
    data: &Path,
    embedder: Option<&str>,
    server_binary: Option<&Path>,
    memory_type: MemoryType,
    rankings: Option<&Path>,
) -> anyhow::Result<()> {
    let mut rankings = rankings
        .map(|path| {
            std::fs::File::create(path)
                .map(std::io::BufWriter::new)
                .with_context(|| format!("creating {}", path.display()))
        })
        .transpose()?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(data)
        .with_context(|| format!("reading {}", data.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no LoCoMo conversations (*.json) in {}", data.display());
    }
    let conversations = files
        .iter()
        .map(|file| conversation(file).with_context(|| format!("reading {}", file.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;

    let args: Vec<&str> = embedder.map(|e| vec!["--embedder", e]).unwrap_or_default();
    let server = start(server_binary, &args).await;
    let engram = server.client().await;

    let started = Instant::now();
    let mut stored = 0;
    for conversation in &conversations {
        let (merged, invalidated) = store_turns(
            &engram,
            &conversation.namespace,
            &conversation.turns,
            memory_type,
        )
        .await?;
        stored += conversation.turns.len();
        eprintln!(
            "conversation {}: {} turns stored ({merged} merged as duplicates, {invalidated} invalidated as contradicted), {} questions",
            conversation.name,
            conversation.turns.len(),
            conversation.questions.len()
        );
    }
    let ingest = started.elapsed();
    println!(
        "ingest: {stored} turns in {:.2} s, {:.0} memories/s",
        ingest.as_secs_f64(),
        stored as f64 / ingest.as_secs_f64()
    );
    let mut modes = if embedder.is_some() {
        for conversation in &conversations {
            wait_embedded(&engram, &conversation.namespace).await?;
        }
        let embedded = started.elapsed();
        println!(
            "embedded: {stored} turns {:.2} s after the first write, {:.0} memories/s",
            embedded.as_secs_f64(),
            stored as f64 / embedded.as_secs_f64()
        );
        vec![
            Mode::new("lexical", Some(0.0)),
            Mode::new("dense", Some(1.0)),
            Mode::new("hybrid", None),
        ]
    } else {
        vec![Mode::new("engram", None)]
    };

    // Hybrid first, so that its latency includes embedding each question
    // (the later modes find the question's vector in the server's cache).
    for mode in modes.iter_mut().rev() {
        for conversation in &conversations {
            for question in &conversation.questions {
                let started = Instant::now();
                let hits = engram
                    .memory()
                    .search_memories(proto::SearchMemoriesRequest {
                        scope: Some(conversation.namespace.clone()),
                        query: question.text.clone(),
                        limit: 20,
                        weights: mode.semantic.map(|semantic| proto::SearchWeights {
                            semantic: Some(semantic),
                            ..Default::default()
                        }),
                        ..Default::default()
                    })
                    .await?
                    .hits;
                mode.latencies.push(started.elapsed());
                let ranked: Vec<String> = hits
                    .into_iter()
                    .filter_map(|h| h.memory?.metadata.get("dia_id").cloned())
                    .collect();
                if let Some(out) = rankings.as_mut() {
                    write_ranking(out, mode.name, conversation, question, &ranked)?;
                }
                mode.overall.add(&question.evidence, &ranked);
                mode.by_category
                    .entry(question.category)
                    .or_default()
                    .add(&question.evidence, &ranked);
            }
        }
    }

    println!(
        "\nLoCoMo dev evidence recall ({} conversations)",
        files.len()
    );
    println!(
        "{:<16} {:>9}  {}",
        "",
        "questions",
        RECALL_AT.map(|k| format!("  @{k:<2}")).join("  ")
    );
    for mode in &modes {
        println!("{}", mode.overall.row(mode.name));
        for (category, recall) in &mode.by_category {
            println!("{}", recall.row(&format!("  category {category}")));
        }
    }
    let best = modes.last().expect("at least one mode");
    let reference: Vec<String> = BM25_REFERENCE
        .iter()
        .map(|(k, r)| {
            format!(
                "@{k} {r:.3} ({} {:.3}, ratio {:.2})",
                best.name,
                best.overall.at(*k),
                best.overall.at(*k) / r
            )
        })
        .collect();
    println!("plain BM25 reference: {}", reference.join(", "));
    for mode in &mut modes {
        let note = match mode.semantic {
            _ if embedder.is_none() => "",
            None => " (each question embedded)",
            Some(semantic) if semantic > 0.0 => " (question vectors cached)",
            Some(_) => " (words only)",
        };
        println!(
            "search latency, {}{note}: {}",
            mode.name,
            summary(&mut mode.latencies)
        );
    }
    Ok(())
}

/// One question's ranking as a JSON line: where each piece of evidence
/// ranked (`null` past the twentieth hit) and what ranked above it.
fn write_ranking(
    out: &mut impl std::io::Write,
    mode: &str,
    conversation: &dataset::Conversation,
    question: &dataset::Question,
    ranked: &[String],
) -> anyhow::Result<()> {
    let said = |id: &str| {
        conversation
            .turns
            .iter()
            .find(|t| t.dia_id == id)
            .map(|t| format!("[{}] {}", t.date, t.content))
    };
    let evidence: Vec<serde_json::Value> = question
        .evidence
        .iter()
        .map(|id| {
            serde_json::json!({
                "id": id,
                "rank": ranked.iter().position(|r| r == id).map(|p| p + 1),
                "content": said(id),
            })
        })
        .collect();
    let top: Vec<serde_json::Value> = ranked
        .iter()
        .take(10)
        .map(|id| serde_json::json!([id, said(id)]))
        .collect();
    let line = serde_json::json!({
        "mode": mode,
        "conversation": conversation.name,
        "category": question.category,
        "question": question.text,
        "evidence": evidence,
        "top": top,
    });
    writeln!(out, "{line}")?;
    Ok(())
}

/// Stores the turns as an agent importing its past conversations would: a
/// batch per session, written from that session's scope (so that each turn
/// keeps its conversation as origin_session_id) at GLOBAL level (so that a
/// question from any session finds it), as memories of `memory_type`.
/// Returns how many merged into an identical memory and how many older
/// ones were invalidated as contradicted (each printed: which turn, by
/// which).
async fn store_turns(
    engram: &Engram,
    namespace: &proto::Scope,
    turns: &[Turn],
    memory_type: MemoryType,
) -> anyhow::Result<(usize, usize)> {
    let (mut merged, mut invalidated) = (0, 0);
    let mut said: std::collections::HashMap<String, &str> = Default::default();
    for session in turns.chunk_by(|a, b| a.session == b.session) {
        let memories = session
            .iter()
            .map(|turn| proto::MemoryInput {
                level: proto::MemoryLevel::Global.into(),
                metadata: BTreeMap::from([
                    ("dia_id".to_owned(), turn.dia_id.clone()),
                    ("session".to_owned(), turn.session.to_string()),
                    ("date".to_owned(), turn.date.clone()),
                ]),
                occurred_at: turn.occurred_at,
                ..input(memory_type, &turn.content)
            })
            .collect();
        let scope = proto::Scope {
            session_id: format!("session_{}", session[0].session),
            ..namespace.clone()
        };
        let results = engram
            .memory()
            .batch_create_memories(proto::BatchCreateMemoriesRequest {
                scope: Some(scope),
                memories,
                ..Default::default()
            })
            .await?
            .results;
        merged += results
            .iter()
            .filter(|r| r.result() == proto::WriteResult::Merged)
            .count();
        for (turn, result) in session.iter().zip(&results) {
            if let Some(memory) = &result.memory {
                said.insert(memory.id.clone(), &turn.content);
            }
            for id in &result.invalidated_memory_ids {
                invalidated += 1;
                let old = said.get(id).copied().unwrap_or("?");
                eprintln!("  invalidated {old:?}\n    by {:?}", turn.content);
            }
        }
    }
    Ok((merged, invalidated))
}
