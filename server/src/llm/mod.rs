//! An OpenAI-compatible chat-completions client that asks for JSON matching
//! a strict schema (`response_format: json_schema, strict: true`).

use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::metrics::{self, CallOutcome};
pub use crate::openai::ApiError as LlmError;
use crate::openai::{ApiClient, ApiConfig};

/// Where the model is and how to reach it.
pub type LlmConfig = ApiConfig;

/// The chat-completions client.
pub struct LlmClient {
    api: ApiClient,
    /// One permit per call the model may be asked at once: a burst of
    /// Remember calls waits its turn instead of flooding the API (and the
    /// server with open connections).
    permits: Semaphore,
    concurrency: usize,
}

impl LlmClient {
    /// A client for `config` that asks at most `concurrency` questions at
    /// once.
    pub fn new(config: LlmConfig, concurrency: usize) -> anyhow::Result<LlmClient> {
        Ok(LlmClient {
            api: ApiClient::new(config)?,
            permits: Semaphore::new(concurrency),
            concurrency,
        })
    }

    /// The configured model's name.
    pub fn model(&self) -> &str {
        &self.api.config().model
    }

    /// Asks the model, with `system` and `user` messages, for a JSON object
    /// matching `schema` (named `name`), and returns it parsed. The caller
    /// validates it against the schema; the server's strict mode is trusted
    /// for nothing. When `concurrency` calls are in flight, it waits for one
    /// to end, at most the call timeout, and then fails with `Busy` (the
    /// caller falls back, as for any failure).
    pub async fn chat_json(
        &self,
        system: &str,
        user: &str,
        name: &str,
        schema: Value,
    ) -> Result<Value, LlmError> {
        let body = json!({
            "model": self.model(),
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": true},
            },
        });
        let answer = self.ask(&body).await;
        metrics::recorders().llm.record(match &answer {
            Ok(_) => CallOutcome::Ok,
            Err(err) => CallOutcome::of_api_error(err),
        });
        answer
    }

    /// The JSON object the model answers `body` with, once a permit is had.
    async fn ask(&self, body: &Value) -> Result<Value, LlmError> {
        let timeout = self.api.config().timeout;
        let _permit = match tokio::time::timeout(timeout, self.permits.acquire()).await {
            Ok(Ok(permit)) => permit,
            // The semaphore is never closed; a timeout is the only way here.
            Ok(Err(_)) | Err(_) => return Err(LlmError::Busy(self.concurrency, timeout)),
        };
        let reply = self.api.post("/chat/completions", body).await?;
        let content = reply
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| LlmError::Schema("no choices[0].message.content in the reply".into()))?;
        serde_json::from_str(content).map_err(|e| LlmError::BadJson(e.to_string()))
    }
}
