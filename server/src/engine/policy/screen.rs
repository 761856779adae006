//! A transcript made safe to decide on (issue 15): its secrets taken out
//! and its injected instructions dropped before anything reads it, and what
//! screening took out said in the decision.

use super::Decision;
use super::shapes::{STATEMENT_CUE, is_statement};
use crate::engine::injection;
use crate::engine::secrets::{self, SecretKind};

/// A transcript made safe to decide on (issue 15): its secrets taken out
/// and the sentences that carry injected instructions dropped, so that
/// neither reaches the classifier, a model, a decision or a memory.
#[derive(Debug, Clone)]
pub struct Screened {
    /// What the rules or the model read.
    pub text: String,
    secrets: Vec<SecretKind>,
    injection: Option<&'static str>,
}

/// Screens `transcript` before it is classified.
pub fn screen(transcript: &str) -> Screened {
    let redacted = secrets::redact(transcript);
    let (text, mut injection) = injection::drop_injections(&redacted.text);
    if injection.is_none() && redacted.found_any() {
        // Named even when a secret took its sentence first.
        injection = injection::drop_injections(transcript).1;
    }
    Screened {
        text,
        secrets: redacted.kinds,
        injection,
    }
}

impl Screened {
    /// `decision`, made on the screened text, with what screening took out
    /// said in its reason and metadata (kinds and cues, never the text).
    /// Whatever made it, its summary holds no secret.
    pub fn finish(&self, mut decision: Decision) -> Decision {
        let summary = secrets::redact(&decision.summary);
        decision.summary = summary.text;
        // A bare statement around a secret ("my card is …, book the hotel")
        // is the secret's sentence, not knowledge.
        let bare = decision.metadata.get("cue").map(String::as_str) == Some(STATEMENT_CUE);
        if decision.should_store && bare && !states_beside_secrets(&decision.summary) {
            decision.should_store = false;
            decision.summary.clear();
            decision.importance = 0.0;
        }
        let mut kinds = self.secrets.clone();
        kinds.extend(summary.kinds);
        kinds.sort();
        kinds.dedup();
        if !kinds.is_empty() {
            let labels: Vec<&str> = kinds.iter().map(|k| k.label()).collect();
            decision
                .metadata
                .insert("secrets".to_owned(), labels.join(","));
            let what: Vec<&str> = kinds.iter().map(|k| k.describe()).collect();
            let what = what.join(", ");
            decision.reason = if decision.should_store {
                format!(
                    "{}; contains a secret ({what}), stored without it",
                    decision.reason
                )
            } else {
                format!("contains a secret ({what}); nothing else worth keeping")
            };
        }
        if let Some(cue) = self.injection {
            decision
                .metadata
                .insert("injection".to_owned(), cue.to_owned());
            decision
                .reason
                .push_str(&format!("; injected instructions ignored ('{cue}')"));
        }
        decision
    }
}

/// Whether `summary` still states something once the clauses that hold a
/// redacted secret are left out: "the cluster is in eu-central-1" beside a
/// redacted connection string, not "book the hotel" beside a card number.
fn states_beside_secrets(summary: &str) -> bool {
    if !summary.contains(secrets::REDACTED) {
        return true;
    }
    summary
        .split([',', ';', '.', '—', '('])
        .filter(|clause| !clause.contains(secrets::REDACTED))
        .any(|clause| is_statement(&clause.trim().to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_beside_a_secret_is_kept_without_it() {
        assert!(states_beside_secrets(
            "The cache is [REDACTED] — the cluster is in eu-west-1 and Ana owns it."
        ));
        assert!(!states_beside_secrets(
            "My card is [REDACTED], exp 12/27 — book the flight for Friday."
        ));
    }
}
