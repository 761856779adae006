//! An OpenAI-compatible chat-completions client that asks for JSON matching
//! a strict schema (`response_format: json_schema, strict: true`).
//!
//! The API key comes from the environment and is only ever put in the
//! Authorization header: no error, log line or status message contains it.

use std::time::Duration;

use serde_json::{Value, json};

/// The largest reply body read from the model.
const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// Where the model is and how to reach it.
#[derive(Clone)]
pub struct LlmConfig {
    /// e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Why a call to the model produced no usable answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("timeout after {0:?}")]
    Timeout(Duration),
    #[error("transport error: {0}")]
    Transport(String),
    #[error("HTTP status {0}")]
    Status(u16),
    #[error("reply is not valid JSON: {0}")]
    BadJson(String),
    #[error("reply does not match the schema: {0}")]
    Schema(String),
}

/// The chat-completions client.
pub struct LlmClient {
    http: reqwest::Client,
    config: LlmConfig,
}

impl LlmClient {
    /// A client for `config`.
    pub fn new(config: LlmConfig) -> anyhow::Result<LlmClient> {
        // rustls needs a process-wide crypto provider; installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            // A redirect would send the transcript somewhere else.
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(LlmClient { http, config })
    }

    /// The configured model's name.
    pub fn model(&self) -> &str {
        &self.config.model
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
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let body = json!({
            "model": self.config.model,
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
        let mut request = self.http.post(url).json(&body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| self.transport(e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(LlmError::Status(status.as_u16()));
        }
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(e))? {
            if body.len() + chunk.len() > MAX_REPLY_BYTES {
                return Err(LlmError::BadJson(format!(
                    "the reply is larger than {MAX_REPLY_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let reply: Value =
            serde_json::from_slice(&body).map_err(|e| LlmError::BadJson(e.to_string()))?;
        let content = reply
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| LlmError::Schema("no choices[0].message.content in the reply".into()))?;
        serde_json::from_str(content).map_err(|e| LlmError::BadJson(e.to_string()))
    }

    /// A reqwest error in words that never include the request (and so
    /// never the key).
    fn transport(&self, err: reqwest::Error) -> LlmError {
        if err.is_timeout() {
            LlmError::Timeout(self.config.timeout)
        } else if err.is_decode() {
            LlmError::BadJson("the body is not JSON".into())
        } else if err.is_connect() {
            LlmError::Transport("cannot connect".into())
        } else {
            LlmError::Transport(err.without_url().to_string())
        }
    }
}
