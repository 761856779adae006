//! A local reranking server for tests, speaking the common `POST /rerank`
//! protocol: it scores each text by whether it holds a chosen word — or,
//! switched at run time, fails as a real API (or what stands in front of
//! it) can — and records every request.

use std::time::Duration;

use serde_json::{Value, json};

pub use crate::fake_openai::Seen;
use crate::fake_openai::{Answer, FakeApi, Respond};

/// The running fake; it stops with the test's runtime.
pub type FakeReranker = FakeApi<Reply>;

/// How the fake answers the next requests.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Scores 1 for a text holding this word, 0 for the others, as
    /// text-embeddings-inference answers: `[{index, score}]`.
    Prefer(String),
    /// The same scores as Cohere and Jina answer: `{results: [{index,
    /// relevance_score}]}`.
    PreferCohere(String),
    /// This HTTP status with an error body.
    Status(u16),
    /// The connection is closed without a reply.
    Hangup,
    /// The right scores, after this delay.
    Slow(Duration, String),
    /// HTTP 200 with an HTML page for a body.
    NotJsonBody,
    /// The scores of every text but the last.
    OneMissing(String),
    /// A score for an index past the last text.
    IndexOutOfRange,
    /// Scores in quotes.
    Garbage,
}

impl Respond for Reply {
    fn answer(&self, request: &Seen) -> Answer {
        if request.method != "POST" || request.path != "/v1/rerank" {
            return Answer::Error(404);
        }
        let texts = texts(request);
        let scores = |word: &str| -> Vec<Value> {
            texts
                .iter()
                .enumerate()
                .map(|(index, text)| {
                    json!({"index": index, "score": f64::from(u8::from(text.contains(word)))})
                })
                .collect()
        };
        let body = |value: Value| Answer::Body(200, value.to_string());
        match self {
            Reply::Prefer(word) => body(json!(scores(word))),
            Reply::PreferCohere(word) => {
                let results: Vec<Value> = scores(word)
                    .into_iter()
                    .map(|s| json!({"index": s["index"], "relevance_score": s["score"]}))
                    .collect();
                body(json!({"id": "fake", "results": results}))
            }
            Reply::Status(status) => Answer::Error(*status),
            Reply::Hangup => Answer::Hangup,
            Reply::Slow(delay, word) => Answer::Later(*delay, Box::new(body(json!(scores(word))))),
            Reply::NotJsonBody => Answer::NotJson,
            Reply::OneMissing(word) => {
                let mut scores = scores(word);
                scores.pop();
                body(json!(scores))
            }
            Reply::IndexOutOfRange => body(json!([{"index": texts.len(), "score": 1.0}])),
            Reply::Garbage => {
                let quoted: Vec<Value> = (0..texts.len())
                    .map(|index| json!({"index": index, "score": "high"}))
                    .collect();
                body(json!(quoted))
            }
        }
    }
}

/// The texts of a request (its `documents`).
pub fn texts(request: &Seen) -> Vec<String> {
    request.body["documents"]
        .as_array()
        .map(|texts| {
            texts
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
