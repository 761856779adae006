//! A local OpenAI-compatible chat-completions server for tests: it records
//! every request it receives and answers as told — correctly, or
//! misbehaving on purpose (bad JSON, HTTP errors, slowness).

use std::time::Duration;

pub use crate::fake_openai::Seen;
use crate::fake_openai::{Answer, FakeApi, Respond};

/// The running fake; it stops with the test's runtime.
pub type FakeLlm = FakeApi<Reply>;

/// How the fake answers the next requests.
#[derive(Debug, Clone)]
pub enum Reply {
    /// HTTP 200 with this JSON object as the assistant message's content.
    Content(serde_json::Value),
    /// HTTP 200 with this raw text as the assistant message's content.
    RawContent(String),
    /// HTTP 200 whose body itself is not JSON.
    NotJsonBody,
    /// This HTTP status with a short error body.
    Status(u16),
    /// Wait this long, then answer with this content.
    Slow(Duration, serde_json::Value),
}

impl Respond for Reply {
    fn answer(&self, _request: &Seen) -> Answer {
        let completion = |content: String| {
            let body = serde_json::json!({
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            });
            Answer::Body(200, body.to_string())
        };
        match self {
            Reply::Content(value) => completion(value.to_string()),
            Reply::RawContent(text) => completion(text.clone()),
            Reply::NotJsonBody => Answer::NotJson,
            Reply::Status(status) => Answer::Error(*status),
            Reply::Slow(delay, value) => {
                Answer::Later(*delay, Box::new(completion(value.to_string())))
            }
        }
    }
}

/// The requests `fake` received for the JSON schema `name`: a server with a
/// model asks it for several things (decisions, contradictions, the
/// entities its background task reads), each under its own schema.
pub fn asked(fake: &FakeLlm, name: &str) -> Vec<Seen> {
    fake.seen()
        .into_iter()
        .filter(|seen| seen.body["response_format"]["json_schema"]["name"] == name)
        .collect()
}
