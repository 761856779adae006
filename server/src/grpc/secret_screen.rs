//! Credentials are refused in every free-text field of every request
//! (DESIGN §9, `--reject-secrets`, on by default): memory content, tags and
//! metadata keys and values, steps (tool, action, parameters, output),
//! episode descriptions and outcomes, outcome strategies, errors and
//! feedback, mistakes and lessons, search queries — whatever reaches
//! storage, a context block, an embedding API or an LLM.
//!
//! The screen rides on the text check every request passes as it is
//! decoded ([`engram::request_text`]), so it covers fields added later too
//! and a refused request reaches no handler. A refusal is INVALID_ARGUMENT
//! naming the field and the kind of secret, never the secret.

use engram::request_text::TextField;

use crate::engine::secrets::{self, OnSecret};

/// Screens every request of this process from now on, unless credentials
/// are allowed.
pub fn install(on_secret: OnSecret) {
    if on_secret == OnSecret::Reject {
        engram::request_text::add_screen(screen);
    }
}

/// What is wrong with `field` of a request: a credential in free text.
fn screen(_message: &str, field: &TextField<'_>) -> Option<String> {
    if !free_text(field.name) {
        return None;
    }
    let found = secrets::find(field.text);
    found.first().map(|found| secrets::refusal(found.kind))
}

/// Whether a field named `name` holds free text. Not: ids and names of
/// places in the API (a namespace, an agent), opaque tokens and cursors the
/// server made, field mask paths — and transcripts, which Classify and
/// Remember take secrets out of rather than refuse.
fn free_text(name: &str) -> bool {
    !(name == "id"
        || name.ends_with("_id")
        || name.ends_with("_token")
        || matches!(
            name,
            "namespace" | "cursor" | "etag" | "paths" | "transcript"
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field<'a>(name: &'a str, text: &'a str) -> TextField<'a> {
        TextField {
            path: name,
            name,
            map_key: false,
            text,
        }
    }

    #[test]
    fn free_text_is_screened_and_ids_and_transcripts_are_not() {
        let secret = "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        for name in [
            "content",
            "output",
            "strategy",
            "parameters",
            "metadata",
            "query",
        ] {
            let refused = screen("engram.v1.X", &field(name, secret)).expect(name);
            assert!(
                refused.contains("Engram does not store credentials"),
                "{refused}"
            );
            assert!(!refused.contains("wJalrXUtnFEMI"), "{refused}");
        }
        for name in ["request_id", "id", "page_token", "namespace", "transcript"] {
            assert!(
                screen("engram.v1.X", &field(name, secret)).is_none(),
                "{name}"
            );
        }
        assert!(screen("engram.v1.X", &field("output", "12 tests passed")).is_none());
    }
}
