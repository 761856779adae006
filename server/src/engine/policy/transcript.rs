//! A transcript as the rules read it: its lines without tool output, each
//! line's speaker, and its sentences.

use super::lexicon::lexicon;
use crate::engine::text;

/// Lines that are machine output rather than conversation.
pub(super) fn is_tool_noise(line: &str) -> bool {
    let l = line.trim_start().to_lowercase();
    const PREFIXES: &[&str] = &[
        "compiling ",
        "downloading ",
        "downloaded ",
        "installing ",
        "running ",
        "finished ",
        "building ",
        "checking ",
        "fetching ",
        "resolving ",
        "warning:",
        "error[",
        "info ",
        "debug ",
        "trace ",
        "warn ",
        "[info]",
        "[debug]",
        "[warn]",
        "[error]",
        "traceback",
        "at ",
        "file \"",
        "http/1.1",
        "http/2",
        "get /",
        "post /",
        "$ ",
        "> ",
        "+ ",
        "npm ",
        "pip ",
        "cargo ",
        "---",
        "===",
        "...",
        "thread '",
        "note: run with",
        "step ",
        "#",
        "=>",
        "|",
        "-->",
        "= help",
        "= note",
    ];
    PREFIXES.iter().any(|p| l.starts_with(p))
        || l.contains("%|")
        || starts_with_timestamp(&l)
        || l.contains("[===")
        || l.contains("[###")
        || l.chars().filter(|c| c.is_ascii_digit()).count() * 2 > l.chars().count().max(1)
}

/// "2024-10-02 08:14:55 WARN …", "2024-05-12T10:15:03Z INFO …": a log line.
fn starts_with_timestamp(lower: &str) -> bool {
    let b = lower.as_bytes();
    b.len() > 13
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b' ' | b't')
        && b[11..13].iter().all(u8::is_ascii_digit)
}

/// Who said a line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Speaker {
    User,
    Assistant,
    /// Someone named ("Priya: …"), in a chat of several people.
    Named,
    Unknown,
}

/// The speaker of a conversation line and its text ("User: …").
fn split_speaker(line: &str) -> (Speaker, &str) {
    const SPEAKERS: &[(&str, Speaker)] = &[
        ("user:", Speaker::User),
        ("human:", Speaker::User),
        ("me:", Speaker::User),
        ("nutzer:", Speaker::User),
        ("benutzer:", Speaker::User),
        ("ich:", Speaker::User),
        ("utilisateur:", Speaker::User),
        ("moi:", Speaker::User),
        ("usuario:", Speaker::User),
        ("yo:", Speaker::User),
        ("assistant:", Speaker::Assistant),
        ("assistent:", Speaker::Assistant),
        ("asistente:", Speaker::Assistant),
        ("ai:", Speaker::Assistant),
        ("agent:", Speaker::Assistant),
        ("bot:", Speaker::Assistant),
        ("system:", Speaker::Assistant),
        ("you:", Speaker::Assistant),
    ];
    let trimmed = line.trim_start();
    for (prefix, speaker) in SPEAKERS {
        let name = &prefix[..prefix.len() - 1];
        // "User: …", or in French typography "Utilisateur : …".
        for head_len in [prefix.len(), prefix.len() + 1] {
            if let Some(head) = trimmed.get(..head_len)
                && head
                    .get(..name.len())
                    .is_some_and(|h| h.eq_ignore_ascii_case(name))
                && head
                    .get(name.len()..)
                    .is_some_and(|r| r.trim_start() == ":")
            {
                return (*speaker, trimmed[head_len..].trim_start());
            }
        }
        // "User (teacher): …"
        if let Some(head) = trimmed.get(..name.len() + 2)
            && head.eq_ignore_ascii_case(&format!("{name} ("))
            && let Some((role, rest)) = trimmed[name.len() + 2..].split_once("): ")
            && role.len() <= 30
        {
            return (*speaker, rest.trim_start());
        }
    }
    // "Name: text" (or "Name : text") with a short single-word name.
    match trimmed.split_once(": ") {
        Some((name, rest))
            if !name.trim_end().is_empty()
                && name.trim_end().len() <= 20
                && !name.trim_end().contains(' ')
                && !rest.is_empty() =>
        {
            (Speaker::Named, rest)
        }
        _ => (Speaker::Unknown, trimmed),
    }
}

/// One sentence, with what the whole line it came from says about it.
pub(super) struct Sentence {
    pub text: String,
    pub speaker: Speaker,
    /// The line hedges, retracts or speculates.
    pub hedged: bool,
}

/// The transcript's sentences, without tool noise and speaker prefixes.
pub(super) fn sentences(transcript: &str) -> Vec<Sentence> {
    let mut sentences = Vec::new();
    for line in transcript
        .lines()
        .filter(|l| !l.trim().is_empty() && !is_tool_noise(l))
    {
        let (speaker, text) = split_speaker(line);
        let lower = text.to_lowercase();
        let hedged = lexicon().hedges.iter().any(|h| lower.contains(h));
        let mut current = String::new();
        for piece in text::sentences(text) {
            current.push_str(piece);
            // A run of dots ("...") is no sentence of its own.
            if !current.trim().trim_end_matches('.').is_empty() {
                sentences.push(Sentence {
                    text: std::mem::take(&mut current).trim().to_owned(),
                    speaker,
                    hedged,
                });
            }
        }
        if !current.trim().is_empty() {
            sentences.push(Sentence {
                text: current.trim().to_owned(),
                speaker,
                hedged,
            });
        }
    }
    sentences
}
