//! What the LLM classifier and the embeddings client share: POSTing JSON to
//! an OpenAI-compatible API (OpenAI, Ollama, vLLM, TEI …) with a timeout and
//! a bounded reply.
//!
//! The API key is only ever put in the Authorization header: no error, log
//! line or status message contains it, nor the request that carried it.

use std::time::Duration;

use anyhow::bail;
use serde_json::Value;

/// The largest reply body read.
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// Where an API is and how to reach it.
#[derive(Clone)]
pub struct ApiConfig {
    /// e.g. `https://api.openai.com/v1`; paths like `/embeddings` are appended.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

impl std::fmt::Debug for ApiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl ApiConfig {
    /// The config of `base_url` (checked: http or https, and no credentials,
    /// query or fragment, which would end up in logs) for `model`, with the
    /// key in the environment variable `key_env`. `flag` names the URL's
    /// flag in errors.
    pub fn new(
        flag: &str,
        base_url: &str,
        model: &str,
        key_env: &str,
        timeout: Duration,
    ) -> anyhow::Result<ApiConfig> {
        let Some(rest) = base_url
            .strip_prefix("http://")
            .or_else(|| base_url.strip_prefix("https://"))
        else {
            bail!("{flag}: expected an http:// or https:// URL");
        };
        let authority = rest.split('/').next().unwrap_or(rest);
        if authority.contains('@') || rest.contains('?') || rest.contains('#') {
            bail!("{flag}: no user, password, query or fragment; put the key in {key_env}");
        }
        if model.is_empty() {
            bail!("{flag}: a model name is needed too");
        }
        Ok(ApiConfig {
            base_url: base_url.to_owned(),
            model: model.to_owned(),
            api_key: std::env::var(key_env).ok().filter(|k| !k.is_empty()),
            timeout,
        })
    }
}

/// Why a call produced no usable answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
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
    #[error("{0} calls were in flight for {1:?}; this one was not sent")]
    Busy(usize, Duration),
}

/// A client of one API.
pub struct ApiClient {
    http: reqwest::Client,
    config: ApiConfig,
}

impl ApiClient {
    /// A client for `config`.
    pub fn new(config: ApiConfig) -> anyhow::Result<ApiClient> {
        // rustls needs a process-wide crypto provider; installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            // A redirect would send the request somewhere else.
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(ApiClient { http, config })
    }

    pub fn config(&self) -> &ApiConfig {
        &self.config
    }

    /// POSTs `body` to `path` (e.g. `/embeddings`) and returns the reply
    /// parsed as JSON.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        let url = format!("{}{path}", self.config.base_url.trim_end_matches('/'));
        let mut request = self.http.post(url).json(body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let mut response = request.send().await.map_err(|e| self.transport(e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(ApiError::Status(status.as_u16()));
        }
        let mut reply = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(e))? {
            if reply.len() + chunk.len() > MAX_REPLY_BYTES {
                return Err(ApiError::BadJson(format!(
                    "the reply is larger than {MAX_REPLY_BYTES} bytes"
                )));
            }
            reply.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&reply).map_err(|e| ApiError::BadJson(e.to_string()))
    }

    /// A reqwest error in words that never include the request (and so
    /// never the key).
    fn transport(&self, err: reqwest::Error) -> ApiError {
        if err.is_timeout() {
            ApiError::Timeout(self.config.timeout)
        } else if err.is_decode() {
            ApiError::BadJson("the body is not JSON".into())
        } else if err.is_connect() {
            ApiError::Transport("cannot connect".into())
        } else {
            ApiError::Transport(err.without_url().to_string())
        }
    }
}
