//! Embeddings from an OpenAI-compatible `POST {base}/embeddings` (OpenAI,
//! Ollama, vLLM, TEI …). Every reply is checked: one finite, non-zero
//! vector of the model's dimensions per input, or the whole call fails.

use serde_json::{Value, json};

use super::{EmbedError, normalise};
use crate::openai::ApiClient;

/// Inputs sent in one request.
pub const API_BATCH: usize = 64;
/// Longer inputs are cut (at a character boundary) before they are sent:
/// about 2,000 tokens, inside every common model's limit.
const MAX_INPUT_CHARS: usize = 8_000;

/// `text`, cut to [`MAX_INPUT_CHARS`].
fn capped(text: &str) -> &str {
    match text.char_indices().nth(MAX_INPUT_CHARS) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// Asks for the vectors of `texts` (at most [`API_BATCH`]); `dimensions`,
/// when known, is what each must have (and, when `ask_dimensions`, is sent
/// as the `dimensions` parameter).
pub async fn embed(
    api: &ApiClient,
    texts: &[String],
    dimensions: Option<usize>,
    ask_dimensions: bool,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let input: Vec<&str> = texts.iter().map(|t| capped(t)).collect();
    let mut body = json!({
        "model": api.config().model,
        "input": input,
        "encoding_format": "float",
    });
    if let (true, Some(dimensions)) = (ask_dimensions, dimensions) {
        body["dimensions"] = json!(dimensions);
    }
    let reply = api.post("/embeddings", &body).await?;
    parse_reply(&reply, texts.len(), dimensions)
}

/// The vectors of a reply, in input order, L2-normalised.
fn parse_reply(
    reply: &Value,
    inputs: usize,
    dimensions: Option<usize>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let bad = |why: String| Err(EmbedError::BadReply(why));
    let Some(data) = reply.get("data").and_then(Value::as_array) else {
        return bad("no data array".into());
    };
    if data.len() != inputs {
        return bad(format!("{} vectors for {inputs} inputs", data.len()));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; inputs];
    for (position, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            None => position,
            Some(index) => match index.as_u64().and_then(|i| usize::try_from(i).ok()) {
                Some(i) if i < inputs => i,
                _ => return bad(format!("index {index} is out of range")),
            },
        };
        let Some(numbers) = item.get("embedding").and_then(Value::as_array) else {
            return bad(format!("item {position} has no embedding array"));
        };
        let mut vector = Vec::with_capacity(numbers.len());
        for number in numbers {
            // Finite as an f32 too: 1e300 is a JSON number, but no vector's.
            match number.as_f64().map(|x| x as f32) {
                Some(x) if x.is_finite() => vector.push(x),
                _ => return bad(format!("item {position} holds {number}, not a number")),
            }
        }
        let expected = dimensions.unwrap_or(vector.len());
        if vector.is_empty() || vector.len() != expected {
            return bad(format!(
                "a vector of {} dimensions, not {expected}",
                vector.len()
            ));
        }
        if !normalise(&mut vector) {
            return bad(format!("item {position} is a zero vector"));
        }
        if vectors[index].replace(vector).is_some() {
            return bad(format!("index {index} appears twice"));
        }
    }
    Ok(vectors.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(items: Value) -> Value {
        json!({ "object": "list", "data": items })
    }

    #[test]
    fn vectors_come_back_in_input_order_and_normalised() {
        let reply = reply(json!([
            {"index": 1, "embedding": [0.0, 2.0]},
            {"index": 0, "embedding": [3.0, 4.0]},
        ]));
        let vectors = parse_reply(&reply, 2, Some(2)).unwrap();
        assert_eq!(vectors, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        let cases = [
            (json!({"error": "busy"}), "no data array"),
            (
                reply(json!([{"embedding": [1.0, 0.0]}])),
                "1 vectors for 2 inputs",
            ),
            (
                reply(json!([{"embedding": [1.0, 0.0, 0.0]}, {"embedding": [1.0, 0.0]}])),
                "3 dimensions, not 2",
            ),
            (
                reply(json!([{"embedding": [1.0, "x"]}, {"embedding": [1.0, 0.0]}])),
                "not a number",
            ),
            (
                reply(json!([{"embedding": [1.0, 1e300]}, {"embedding": [1.0, 0.0]}])),
                "holds 1e+300, not a number",
            ),
            (
                reply(json!([{"embedding": [0.0, 0.0]}, {"embedding": [1.0, 0.0]}])),
                "zero vector",
            ),
            (
                reply(json!([
                    {"index": 0, "embedding": [1.0, 0.0]},
                    {"index": 0, "embedding": [1.0, 0.0]},
                ])),
                "appears twice",
            ),
            (
                reply(json!([
                    {"index": 5, "embedding": [1.0, 0.0]},
                    {"index": 0, "embedding": [1.0, 0.0]},
                ])),
                "out of range",
            ),
        ];
        for (reply, why) in cases {
            let err = parse_reply(&reply, 2, Some(2)).unwrap_err();
            assert!(err.to_string().contains(why), "{err} should say {why}");
        }
    }

    #[test]
    fn long_inputs_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_INPUT_CHARS + 10);
        assert_eq!(capped(&long).chars().count(), MAX_INPUT_CHARS);
        assert_eq!(capped("short"), "short");
    }
}
