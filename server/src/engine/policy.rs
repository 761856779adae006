//! The rules classifier of DESIGN §6: deterministic, no network. It reads a
//! transcript sentence by sentence, ignores sentences that are questions,
//! hedged, negated or transient, and looks for cue phrases of durable
//! knowledge. The strongest kind of cue found decides.

use std::collections::BTreeMap;

use crate::domain::{MemoryLevel, MemoryType, Scope};

/// The most characters of a decision's summary.
pub const MAX_SUMMARY_CHARS: usize = 300;

/// Who made a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionSource {
    Rules,
    Llm,
    Fallback,
}

/// Whether and how to remember a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub should_store: bool,
    pub memory_type: MemoryType,
    pub summary: String,
    pub importance: f64,
    pub level: MemoryLevel,
    pub metadata: BTreeMap<String, String>,
    pub source: DecisionSource,
    pub reason: String,
}

/// A kind of durable knowledge, its cue phrases, and what a decision of that
/// kind looks like. Earlier kinds win when a transcript has cues of several.
struct Kind {
    memory_type: MemoryType,
    importance: f64,
    cues: &'static [&'static str],
}

const KINDS: &[Kind] = &[
    Kind {
        memory_type: MemoryType::Preference,
        importance: 0.8,
        cues: &[
            "i prefer",
            "i'd prefer",
            "i would prefer",
            "i'd rather",
            "i would rather",
            "my preference is",
            "always use",
            "never use",
            "don't ever",
            "do not ever",
            "please always",
            "please never",
            "please don't",
            "please do not",
            "i like it when",
            "i like my",
            "i want you to",
            "from now on",
            "make sure to always",
            "i hate it when",
            "i can't stand",
            "i dislike",
            "never put",
            "never add",
            "always put",
            "always add",
            "always write",
            "never write",
            "always run",
            "never run",
            "stop using",
            "don't use",
            "do not use",
            "i love it when",
            "keep answers",
            "keep responses",
            "i like to",
            "always reply",
            "always respond",
            "never reply",
            "always answer",
            "call me",
        ],
    },
    Kind {
        memory_type: MemoryType::Lesson,
        importance: 0.75,
        cues: &[
            "lesson learned",
            "lessons learned",
            "the fix was",
            "fixed it by",
            "fixed by",
            "was fixed by",
            "the fix is",
            "root cause",
            "turns out",
            "turned out",
            "the problem was",
            "the issue was",
            "the bug was",
            "next time",
            "note to self",
            "learned that",
            "learnt that",
            "the trick is",
            "the trick was",
            "gotcha",
            "was caused by",
            "is caused by",
            "caused the",
            "workaround",
            "the solution was",
            "what worked was",
            "what fixed it",
            "solved it by",
            "resolved by",
            "the culprit was",
            "in hindsight",
            "we should have",
            "don't forget to",
            "make sure you",
        ],
    },
    Kind {
        memory_type: MemoryType::Decision,
        importance: 0.7,
        cues: &[
            "we decided",
            "we've decided",
            "we have decided",
            "i decided",
            "i've decided",
            "decided to",
            "decided on",
            "let's go with",
            "lets go with",
            "we'll go with",
            "we will go with",
            "we're going with",
            "we are going with",
            "going forward we",
            "we'll use",
            "we will use",
            "we're using",
            "agreed:",
            "agreed to",
            "we agreed",
            "decision:",
            "the decision is",
            "the plan is",
            "we chose",
            "we picked",
            "settled on",
            "we settled",
            "we'll stick with",
            "we will stick with",
            "sticking with",
            "we're switching",
            "we are switching",
            "we'll switch",
            "we will switch",
            "approved:",
            "final call",
        ],
    },
    Kind {
        memory_type: MemoryType::Event,
        importance: 0.3,
        cues: &[
            "we shipped",
            "shipped",
            "we released",
            "was released",
            "we deployed",
            "was deployed",
            "we launched",
            "launched",
            "outage",
            "incident",
            "went down",
            "was down",
            "we migrated",
            "was migrated",
            "got promoted",
            "joined the team",
            "left the company",
            "happened",
            "postmortem",
            "post-mortem",
            "rolled back",
            "we rolled out",
            "was rolled out",
            "went live",
            "signed the contract",
            "closed the deal",
        ],
    },
    Kind {
        memory_type: MemoryType::Note,
        importance: 0.4,
        cues: &[
            "note:",
            "note that",
            "remember that",
            "remember:",
            "fyi",
            "for future reference",
            "keep in mind",
            "todo:",
            "to-do:",
            "reminder:",
            "for the record",
            "heads up",
            "worth noting",
            "important:",
        ],
    },
    Kind {
        memory_type: MemoryType::Fact,
        importance: 0.5,
        cues: &[
            "my name is",
            "i am a",
            "i'm a",
            "i work at",
            "i work for",
            "i work on",
            "i live in",
            "i'm based in",
            "i am based in",
            "our team",
            "our company",
            "our stack",
            "our api",
            "our database",
            "our db",
            "our repo",
            "our service",
            "our app",
            "our product",
            "our office",
            "our customers",
            "our main",
            "we use",
            "we run",
            "we host",
            "we deploy to",
            "runs on",
            "is hosted on",
            "is hosted at",
            "is written in",
            "is built with",
            "is built on",
            "lives in",
            "is located",
            "listens on",
            "port ",
            "is deployed",
            "depends on",
            "the endpoint",
            "the url",
            "the api key is stored",
            "is stored in",
            "the staging",
            "the production",
            "is owned by",
            "owns the",
            "is responsible for",
            "my role",
            "my timezone",
            "i'm in",
            "our timezone",
            "the deadline is",
            "the budget is",
            "uses postgres",
            "is on version",
            "is version",
            "we're on",
            "we are on",
            "is the source of truth",
            "is maintained by",
        ],
    },
];

/// Sentences with these are not knowledge: hedges, negated cues, refusals to choose.
const HEDGES: &[&str] = &[
    "not sure",
    "maybe",
    "perhaps",
    "might ",
    "i think we should",
    "should we",
    "could we",
    "what if",
    "haven't decided",
    "have not decided",
    "not decided",
    "undecided",
    "no preference",
    "don't prefer",
    "do not prefer",
    "don't have a preference",
    "don't really prefer",
    "don't remember",
    "do not remember",
    "don't know",
    "do not know",
    "no idea",
    "not yet",
    "you pick",
    "you choose",
    "up to you",
    "whatever you",
    "happy to help",
    "if you want",
    "if you like",
    "let me know",
    "wondering",
    "i wonder",
    "still figuring",
    "tbd",
    "to be decided",
    "any preference",
    "anything in particular",
    "haven't found",
    "didn't find",
    "never found",
    "no root cause",
    "unclear",
    "undetermined",
];

/// Sentences with these describe work in progress, not knowledge.
const TRANSIENT: &[&str] = &[
    "i'm looking",
    "i am looking",
    "let me ",
    "let's see",
    "one sec",
    "one moment",
    "give me a",
    "working on it",
    "running the",
    "running tests",
    "checking",
    "i'll check",
    "i will check",
    "hold on",
    "just a moment",
    "in progress",
    "currently",
    "right now",
    "at the moment",
    "brb",
    "be right back",
    "still running",
    "still waiting",
    "waiting for",
    "loading",
    "compiling",
    "downloading",
    "installing",
    "building",
    "retrying",
    "on it",
    "looking into",
    "digging into",
    "stand by",
    "please wait",
];

/// Lines that are machine output rather than conversation.
fn is_tool_noise(line: &str) -> bool {
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
    ];
    PREFIXES.iter().any(|p| l.starts_with(p))
        || l.contains("%|")
        || l.contains("[===")
        || l.contains("[###")
        || l.chars().filter(|c| c.is_ascii_digit()).count() * 2 > l.chars().count().max(1)
}

/// The speaker prefix of a conversation line, if any ("User: …").
fn strip_speaker(line: &str) -> &str {
    const SPEAKERS: &[&str] = &[
        "user:",
        "assistant:",
        "ai:",
        "agent:",
        "human:",
        "system:",
        "bot:",
        "me:",
        "you:",
    ];
    let trimmed = line.trim_start();
    let lower = trimmed.to_lowercase();
    for speaker in SPEAKERS {
        if lower.starts_with(speaker) {
            return trimmed[speaker.len()..].trim_start();
        }
    }
    // "Name: text" with a short single-word name.
    match trimmed.split_once(": ") {
        Some((name, rest))
            if !name.is_empty() && name.len() <= 20 && !name.contains(' ') && !rest.is_empty() =>
        {
            rest
        }
        _ => trimmed,
    }
}

/// The transcript's sentences, without tool noise and speaker prefixes.
fn sentences(transcript: &str) -> Vec<String> {
    let mut sentences = Vec::new();
    for line in transcript
        .lines()
        .filter(|l| !l.trim().is_empty() && !is_tool_noise(l))
    {
        let mut current = String::new();
        let text = strip_speaker(line);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            current.push(c);
            let ends = matches!(c, '.' | '!' | '?' | ';')
                && chars.peek().is_none_or(|n| n.is_whitespace());
            if ends {
                sentences.push(std::mem::take(&mut current).trim().to_owned());
            }
        }
        if !current.trim().is_empty() {
            sentences.push(current.trim().to_owned());
        }
    }
    sentences
}

/// A cue phrase found at a word boundary.
fn find_cue(sentence: &str, cues: &'static [&'static str]) -> Option<&'static str> {
    cues.iter().copied().find(|cue| {
        sentence.match_indices(cue).any(|(at, _)| {
            let before = sentence[..at].chars().next_back();
            before.is_none_or(|c| !c.is_alphanumeric())
        })
    })
}

/// A sentence that cannot carry knowledge: a question, a hedge or work in progress.
fn is_unreliable(lower: &str) -> bool {
    lower.ends_with('?')
        || HEDGES.iter().any(|h| lower.contains(h))
        || TRANSIENT.iter().any(|t| lower.contains(t))
}

/// Words that tie a statement to the project rather than to the user or the world.
const PROJECT_WORDS: &[&str] = &[
    "our ",
    "we ",
    "the project",
    "the repo",
    "this repo",
    "the api",
    "the service",
    "the app",
    "staging",
    "production",
    "prod ",
    "the database",
    "the db",
    "endpoint",
    "server",
    "port ",
    "deploy",
    "release",
    "the build",
    "the pipeline",
    "ci ",
    "the codebase",
    "migration",
    "branch",
];

/// The classifier's decision on `transcript` for a caller in `scope`.
pub fn classify(transcript: &str, scope: &Scope, task_id: &str) -> Decision {
    let sentences = sentences(transcript);
    let mut best: Option<(usize, &'static str, &String)> = None;
    for sentence in &sentences {
        let lower = sentence.to_lowercase();
        if is_unreliable(&lower) {
            continue;
        }
        for (rank, kind) in KINDS.iter().enumerate() {
            if best.is_some_and(|(b, _, _)| b <= rank) {
                break;
            }
            if let Some(cue) = find_cue(&lower, kind.cues) {
                best = Some((rank, cue, sentence));
                break;
            }
        }
    }
    let mut metadata = BTreeMap::new();
    if !task_id.is_empty() {
        metadata.insert("task_id".to_owned(), task_id.to_owned());
    }
    metadata.insert("classifier".to_owned(), "rules".to_owned());
    let Some((rank, cue, sentence)) = best else {
        return Decision {
            should_store: false,
            memory_type: MemoryType::Event,
            summary: String::new(),
            importance: 0.0,
            level: scope.narrowest_level(),
            metadata,
            source: DecisionSource::Rules,
            reason:
                "no cue of durable knowledge: chatter, tool output, a question or work in progress"
                    .into(),
        };
    };
    let kind = &KINDS[rank];
    metadata.insert("cue".to_owned(), cue.trim().to_owned());
    Decision {
        should_store: true,
        memory_type: kind.memory_type,
        summary: summary(&sentences, sentence),
        importance: kind.importance,
        level: level(kind.memory_type, &sentence.to_lowercase(), scope),
        metadata,
        source: DecisionSource::Rules,
        reason: format!(
            "matched {} cue '{}'",
            kind.memory_type.label().to_lowercase(),
            cue.trim()
        ),
    }
}

/// The deciding sentence, followed by the next ones while they fit in 300
/// characters, cut at a word when one sentence alone is longer.
fn summary(sentences: &[String], deciding: &String) -> String {
    let start = sentences
        .iter()
        .position(|s| std::ptr::eq(s, deciding))
        .unwrap_or(0);
    let mut summary = String::new();
    for sentence in &sentences[start..] {
        let joined = if summary.is_empty() {
            sentence.clone()
        } else {
            format!("{summary} {sentence}")
        };
        if joined.chars().count() > MAX_SUMMARY_CHARS {
            break;
        }
        summary = joined;
    }
    if summary.is_empty() {
        summary = crate::engine::context::one_line(deciding, MAX_SUMMARY_CHARS);
    }
    summary
}

/// User preferences and personal facts are GLOBAL; project knowledge is
/// WORKSPACE when the scope has a project; events and notes belong to the
/// conversation when there is one. Never narrower than the scope allows.
fn level(memory_type: MemoryType, sentence: &str, scope: &Scope) -> MemoryLevel {
    let about_project = PROJECT_WORDS.iter().any(|w| sentence.contains(w));
    let wanted = match memory_type {
        MemoryType::Preference => MemoryLevel::Global,
        MemoryType::Fact if !about_project => MemoryLevel::Global,
        MemoryType::Fact | MemoryType::Decision | MemoryType::Lesson => MemoryLevel::Workspace,
        MemoryType::Event | MemoryType::Note => MemoryLevel::Conversation,
    };
    match wanted {
        MemoryLevel::Conversation if !scope.session_id.is_empty() => MemoryLevel::Conversation,
        MemoryLevel::Conversation | MemoryLevel::Workspace if !scope.project_id.is_empty() => {
            MemoryLevel::Workspace
        }
        _ => MemoryLevel::Global,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(transcript: &str) -> Decision {
        classify(transcript, &Scope::default(), "")
    }

    #[test]
    fn preferences_are_global_and_important() {
        let d = decide("User: I prefer tabs over spaces in every repo.");
        assert!(d.should_store);
        assert_eq!(d.memory_type, MemoryType::Preference);
        assert!(d.importance >= 0.7);
        assert_eq!(d.level, MemoryLevel::Global);
        assert_eq!(d.summary, "I prefer tabs over spaces in every repo.");
        assert_eq!(d.reason, "matched preference cue 'i prefer'");
    }

    #[test]
    fn negated_and_hedged_cues_are_not_knowledge() {
        for transcript in [
            "I don't prefer anything in particular.",
            "We haven't decided yet.",
            "Maybe we should use Redis? Not sure.",
            "Did we ever find the root cause?",
            "No preference, you pick.",
            "Always happy to help!",
        ] {
            assert!(!decide(transcript).should_store, "{transcript}");
        }
    }

    #[test]
    fn chatter_and_tool_noise_are_not_stored() {
        for transcript in [
            "Hi there! Thanks a lot.",
            "Compiling serde v1.0.200\n   Compiling tokio v1.40.0",
            "ok",
        ] {
            let d = decide(transcript);
            assert!(!d.should_store, "{transcript}");
            assert_eq!(d.importance, 0.0);
        }
    }

    #[test]
    fn the_strongest_kind_of_cue_decides() {
        let d = decide("We deployed on Monday. Lesson learned: run migrations before the deploy.");
        assert_eq!(d.memory_type, MemoryType::Lesson);
        assert_eq!(
            d.summary,
            "Lesson learned: run migrations before the deploy."
        );
    }

    #[test]
    fn levels_never_go_narrower_than_the_scope() {
        let project = Scope {
            project_id: "shop".into(),
            ..Scope::default()
        };
        let d = classify("We decided to use Postgres for orders.", &project, "t1");
        assert_eq!(
            (d.memory_type, d.level),
            (MemoryType::Decision, MemoryLevel::Workspace)
        );
        assert_eq!(d.metadata.get("task_id").map(String::as_str), Some("t1"));
        let d = classify(
            "We decided to use Postgres for orders.",
            &Scope::default(),
            "",
        );
        assert_eq!(d.level, MemoryLevel::Global);
        let chat = Scope {
            session_id: "s".into(),
            ..Scope::default()
        };
        assert_eq!(
            classify("FYI the demo moved to 3pm.", &chat, "").level,
            MemoryLevel::Conversation
        );
    }

    #[test]
    fn long_summaries_are_cut_to_300_characters() {
        let d = decide(&format!(
            "Lesson learned: {}",
            "very long explanation ".repeat(30)
        ));
        assert!(d.summary.chars().count() <= MAX_SUMMARY_CHARS);
    }
}
