//! Reranking by an API that speaks the common `POST {base}/rerank`
//! protocol (text-embeddings-inference, Cohere and Jina, and servers
//! modelled on them): the query and the texts of a search's best fused
//! candidates go out, a relevance score per text comes back, and those
//! candidates are put in the order of the scores. Any failure — transport,
//! timeout, status, a reply that is not JSON or not a score for every text
//! — leaves the fused order as it was: a reranker only ever reorders.
//!
//! The request carries the texts as both `documents` (Cohere, Jina) and
//! `texts` (text-embeddings-inference); the reply may be a list of
//! `{index, score}` (text-embeddings-inference) or `{results: [{index,
//! relevance_score}]}` (Cohere, Jina).

use std::time::Duration;

use serde_json::{Value, json};

use crate::openai::{ApiClient, ApiConfig, ApiError};

/// The environment variable holding the reranking API's key.
pub const RERANKER_API_KEY_ENV: &str = "ENGRAM_RERANKER_API_KEY";
/// Longer texts are cut (at a character boundary) before they are sent:
/// rerankers read a few hundred tokens of each.
const MAX_TEXT_CHARS: usize = 2_000;

/// A reranking API and how many candidates it reorders.
pub struct Reranker {
    api: ApiClient,
    /// How many of the best fused candidates are sent.
    pub depth: usize,
}

impl Reranker {
    pub fn new(config: ApiConfig, depth: usize) -> anyhow::Result<Reranker> {
        Ok(Reranker {
            api: ApiClient::new(config)?,
            depth,
        })
    }

    /// The deadline of one call.
    pub fn timeout(&self) -> Duration {
        self.api.config().timeout
    }

    /// A relevance score for each of `texts` against `query`, in the
    /// order of `texts`.
    pub async fn scores(&self, query: &str, texts: &[&str]) -> Result<Vec<f64>, ApiError> {
        let texts: Vec<&str> = texts
            .iter()
            .map(|t| &t[..t.floor_char_boundary(MAX_TEXT_CHARS)])
            .collect();
        let body = json!({
            "model": self.api.config().model,
            "query": query,
            "documents": texts,
            "texts": texts,
            "top_n": texts.len(),
            "return_documents": false,
            "raw_scores": false,
        });
        let reply = self.api.post("/rerank", &body).await?;
        parse_reply(&reply, texts.len()).map_err(ApiError::Schema)
    }
}

/// The scores of a reply, in input order: every input scored once, with a
/// finite number.
fn parse_reply(reply: &Value, inputs: usize) -> Result<Vec<f64>, String> {
    let items = match reply {
        Value::Array(items) => items,
        _ => reply
            .get("results")
            .or_else(|| reply.get("data"))
            .and_then(Value::as_array)
            .ok_or("neither a list nor an object with a results list")?,
    };
    let mut scores: Vec<Option<f64>> = vec![None; inputs];
    for (position, item) in items.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < inputs)
            .ok_or_else(|| format!("result {position} has no index below {inputs}"))?;
        let score = item
            .get("relevance_score")
            .or_else(|| item.get("score"))
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite())
            .ok_or_else(|| format!("result {position} has no finite score"))?;
        if scores[index].replace(score).is_some() {
            return Err(format!("index {index} is scored twice"));
        }
    }
    scores
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.ok_or_else(|| format!("text {i} was not scored")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_reply_shapes_give_scores_in_input_order() {
        let tei = json!([{"index": 1, "score": 0.9}, {"index": 0, "score": 0.1}]);
        assert_eq!(parse_reply(&tei, 2), Ok(vec![0.1, 0.9]));
        let cohere = json!({"results": [
            {"index": 0, "relevance_score": 0.2},
            {"index": 1, "relevance_score": -3.5},
        ]});
        assert_eq!(parse_reply(&cohere, 2), Ok(vec![0.2, -3.5]));
    }

    #[test]
    fn a_reply_that_does_not_score_every_text_once_is_refused() {
        let cases = [
            (json!({"error": "busy"}), "neither a list"),
            (json!([{"index": 0, "score": 0.5}]), "text 1 was not scored"),
            (json!([{"index": 2, "score": 0.5}]), "no index below 2"),
            (json!([{"index": 0}]), "no finite score"),
            (json!([{"index": 0, "score": "high"}]), "no finite score"),
            (
                json!([{"index": 0, "score": 1.0}, {"index": 0, "score": 2.0}]),
                "scored twice",
            ),
        ];
        for (reply, why) in cases {
            let err = parse_reply(&reply, 2).unwrap_err();
            assert!(err.contains(why), "{reply}: {err}");
        }
    }
}
