//! An OpenAI-compatible chat-completions client that asks for JSON matching
//! a strict schema (`response_format: json_schema, strict: true`).

use serde_json::{Value, json};

use crate::metrics::{self, CallOutcome};
pub use crate::openai::ApiError as LlmError;
use crate::openai::{ApiClient, ApiConfig};

/// Where the model is and how to reach it.
pub type LlmConfig = ApiConfig;

/// The chat-completions client.
pub struct LlmClient {
    api: ApiClient,
}

impl LlmClient {
    /// A client for `config`.
    pub fn new(config: LlmConfig) -> anyhow::Result<LlmClient> {
        Ok(LlmClient {
            api: ApiClient::new(config)?,
        })
    }

    /// The configured model's name.
    pub fn model(&self) -> &str {
        &self.api.config().model
    }

    /// Asks the model, with `system` and `user` messages, for a JSON object
    /// matching `schema` (named `name`), and returns it parsed. The caller
    /// validates it against the schema; the server's strict mode is trusted
    /// for nothing.
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

    /// The JSON object the model answers `body` with.
    async fn ask(&self, body: &Value) -> Result<Value, LlmError> {
        let reply = self.api.post("/chat/completions", body).await?;
        let content = reply
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| LlmError::Schema("no choices[0].message.content in the reply".into()))?;
        serde_json::from_str(content).map_err(|e| LlmError::BadJson(e.to_string()))
    }
}
