//! A local OpenAI-compatible embeddings server for tests: it answers
//! `POST /v1/embeddings` with deterministic vectors — or, switched at run
//! time, with the failures a real API (or what stands in front of it) can
//! produce — and records every request.
//!
//! A text's vector counts the character trigrams of its words, hashed into
//! [`DIMENSIONS`] buckets (or the `dimensions` asked for): texts that share
//! words, or pieces of words, point the same way. So a misspelt word, which
//! full-text search cannot match, is still near the memory it was meant for.

use std::time::Duration;

use serde_json::{Value, json};

pub use crate::fake_openai::Seen;
use crate::fake_openai::{Answer, FakeApi, Respond};

/// The running fake; it stops with the test's runtime.
pub type FakeEmbeddings = FakeApi<Reply>;

/// The vectors' size when the request does not ask for one.
pub const DIMENSIONS: usize = 256;

/// How the fake answers the next requests.
#[derive(Debug, Clone)]
pub enum Reply {
    /// One correct vector per input.
    Vectors,
    /// This HTTP status with an error body.
    Status(u16),
    /// The connection is closed without a reply.
    Hangup,
    /// Correct vectors, after this delay.
    Slow(Duration),
    /// Vectors of another size than asked for (or than before).
    WrongDimensions,
    /// One vector more than there are inputs.
    WrongCount,
    /// HTTP 200 with an HTML page for a body.
    NotJsonBody,
    /// `NaN` in place of every number, as Python's json module writes it.
    NanValues,
    /// Numbers in quotes, strings rather than numbers.
    Garbage,
    /// HTTP 400 to any request with an input containing this text (as an
    /// API does with an input it will not take), correct vectors otherwise.
    RefuseContaining(String),
}

impl Respond for Reply {
    fn answer(&self, request: &Seen) -> Answer {
        if request.method != "POST" || request.path != "/v1/embeddings" {
            return Answer::Error(404);
        }
        let dimensions = request.body["dimensions"]
            .as_u64()
            .and_then(|d| usize::try_from(d).ok())
            .unwrap_or(DIMENSIONS);
        let texts = inputs(request);
        let vectors = |dimensions: usize| -> Vec<Value> {
            texts
                .iter()
                .map(|text| json!(embedding(text, dimensions)))
                .collect()
        };
        let correct = || reply(request, vectors(dimensions));
        match self {
            Reply::Vectors => correct(),
            Reply::RefuseContaining(text) if texts.iter().any(|t| t.contains(text.as_str())) => {
                Answer::Error(400)
            }
            Reply::RefuseContaining(_) => correct(),
            Reply::Status(status) => Answer::Error(*status),
            Reply::Hangup => Answer::Hangup,
            Reply::Slow(delay) => Answer::Later(*delay, Box::new(correct())),
            Reply::WrongDimensions => reply(request, vectors(dimensions + 8)),
            Reply::WrongCount => {
                let mut vectors = vectors(dimensions);
                vectors.push(json!(embedding("one too many", dimensions)));
                reply(request, vectors)
            }
            Reply::NotJsonBody => Answer::NotJson,
            Reply::NanValues => {
                let nan = vec![json!("NaN"); dimensions];
                match reply(request, vec![json!(nan); texts.len()]) {
                    Answer::Body(status, body) => {
                        Answer::Body(status, body.replace("\"NaN\"", "NaN"))
                    }
                    other => other,
                }
            }
            Reply::Garbage => {
                let quoted = texts
                    .iter()
                    .map(|text| {
                        let numbers: Vec<String> = embedding(text, dimensions)
                            .iter()
                            .map(f32::to_string)
                            .collect();
                        json!(numbers)
                    })
                    .collect();
                reply(request, quoted)
            }
        }
    }
}

/// The texts of a request: `input` is a string or an array of them.
pub fn inputs(request: &Seen) -> Vec<String> {
    match &request.body["input"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => Vec::new(),
    }
}

/// HTTP 200 with OpenAI's reply shape around `vectors`.
fn reply(request: &Seen, vectors: Vec<Value>) -> Answer {
    let data: Vec<Value> = vectors
        .into_iter()
        .enumerate()
        .map(|(index, vector)| json!({"object": "embedding", "index": index, "embedding": vector}))
        .collect();
    let body = json!({
        "object": "list",
        "data": data,
        "model": request.body["model"],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    });
    Answer::Body(200, body.to_string())
}

/// The fake's vector of `text`: its words' character trigrams (with the
/// word's edges), counted into `dimensions` buckets by an FNV-1a hash.
pub fn embedding(text: &str, dimensions: usize) -> Vec<f32> {
    let mut vector = vec![0.0f32; dimensions.max(1)];
    let words = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty());
    for word in words {
        let letters: Vec<char> = format!(" {} ", word.to_lowercase()).chars().collect();
        for trigram in letters.windows(3) {
            let hash = trigram.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, &c| {
                (hash ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3)
            });
            let len = vector.len() as u64;
            vector[(hash % len) as usize] += 1.0;
        }
    }
    // A real model never answers a zero vector, which the server refuses.
    if vector.iter().all(|&x| x == 0.0) {
        vector[0] = 1.0;
    }
    vector
}
