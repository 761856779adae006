//! The rules' cue lexicon: the phrases of each kind of durable knowledge and
//! the word lists that veto or qualify them, kept as data in
//! `server/data/policy/cues.txt` and read once.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::domain::MemoryType;

/// The lexicon's text, compiled in.
const CUES: &str = include_str!("../../../data/policy/cues.txt");

/// The kinds of durable knowledge in the order that breaks ties between cues
/// of equal strength, each with its section of the lexicon and the
/// importance of its memories.
const KINDS: [(MemoryType, &str, f64); 6] = [
    (MemoryType::Preference, "preference", 0.8),
    (MemoryType::Lesson, "lesson", 0.75),
    (MemoryType::Decision, "decision", 0.7),
    (MemoryType::Event, "event", 0.3),
    (MemoryType::Note, "note", 0.4),
    (MemoryType::Fact, "fact", 0.5),
];

/// A kind of durable knowledge: explicit markers (which outrank every
/// other cue), ordinary cue phrases, and the importance of such a memory.
pub(super) struct Kind {
    pub memory_type: MemoryType,
    pub importance: f64,
    pub markers: Vec<&'static str>,
    pub cues: Vec<&'static str>,
}

/// Every list of the lexicon.
pub(super) struct Lexicon {
    /// In the order of [`KINDS`]: earlier kinds win among equal cues.
    pub kinds: Vec<Kind>,
    /// Lines with these are not knowledge: hedges, retractions, negated
    /// cues, refusals to choose, speculation.
    pub hedges: Vec<&'static str>,
    /// Work in progress; vetoes only the weak kinds (events, notes, facts).
    pub transient: Vec<&'static str>,
    /// A user's instruction that starts with one of these is a preference.
    pub imperatives: Vec<&'static str>,
    /// Verbs that give an instruction when a lead-in says when it applies.
    pub instruction_verbs: Vec<&'static str>,
    /// Words that tie a statement to the project rather than to the user
    /// or the world.
    pub project_words: Vec<&'static str>,
    /// Phrases that say a preference or a decision changed.
    pub change_cues: Vec<&'static str>,
    /// Words that say how, not what: left out when comparing subjects.
    pub not_subject: Vec<&'static str>,
    /// Words that name a credential: the learned vote keeps no sentence
    /// with one that the rules would not keep.
    pub credentials: Vec<&'static str>,
    /// A user's sentence with one of these takes back the cues before it.
    pub retractions: Vec<&'static str>,
    /// A sentence that starts with one of these is courtesy: only a marker
    /// makes it knowledge.
    pub thanks: Vec<&'static str>,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    // Compiled in, and parsed by a unit test: a failure here is a build
    // that never passed its tests.
    Lexicon::parse(CUES).unwrap_or_else(|error| panic!("server/data/policy/cues.txt: {error}"))
});

/// The lexicon, read on first use.
pub(super) fn lexicon() -> &'static Lexicon {
    &LEXICON
}

impl Lexicon {
    /// The kind of `memory_type`.
    pub fn kind(&self, memory_type: MemoryType) -> &Kind {
        &self.kinds[self.rank(memory_type)]
    }

    /// The place of `memory_type`'s kind in [`Lexicon::kinds`]: the lower,
    /// the earlier it wins among cues of equal strength.
    pub fn rank(&self, memory_type: MemoryType) -> usize {
        self.kinds
            .iter()
            .position(|k| k.memory_type == memory_type)
            .expect("every memory type has a kind")
    }

    fn parse(text: &'static str) -> Result<Lexicon, String> {
        let mut sections = sections(text)?;
        let mut take = |name: &str| {
            sections
                .remove(name)
                .ok_or_else(|| format!("no section [{name}]"))
        };
        let mut kinds = Vec::with_capacity(KINDS.len());
        for (memory_type, section, importance) in KINDS {
            kinds.push(Kind {
                memory_type,
                importance,
                markers: take(&format!("{section}.markers"))?,
                cues: take(&format!("{section}.cues"))?,
            });
        }
        let lexicon = Lexicon {
            kinds,
            hedges: take("hedges")?,
            transient: take("transient")?,
            imperatives: take("imperatives")?,
            instruction_verbs: take("instruction_verbs")?,
            project_words: take("project_words")?,
            change_cues: take("change_cues")?,
            not_subject: take("not_subject")?,
            credentials: take("credentials")?,
            retractions: take("retractions")?,
            thanks: take("thanks")?,
        };
        match sections.keys().next() {
            Some(unknown) => Err(format!("unknown section [{unknown}]")),
            None => Ok(lexicon),
        }
    }
}

/// The phrases of each `[section]` of `text`, in the order written.
fn sections(text: &'static str) -> Result<BTreeMap<&'static str, Vec<&'static str>>, String> {
    let mut sections = BTreeMap::new();
    let mut current = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        let at = || format!("line {}", number + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if sections.insert(name, Vec::new()).is_some() {
                return Err(format!("{}: section [{name}] twice", at()));
            }
            current = Some(name);
            continue;
        }
        let phrase = match line.strip_prefix('"') {
            Some(quoted) => quoted
                .strip_suffix('"')
                .ok_or_else(|| format!("{}: a quote left open", at()))?,
            None => line,
        };
        if phrase.is_empty() || phrase != phrase.to_lowercase() {
            return Err(format!(
                "{}: {phrase:?} is not a phrase in lower case",
                at()
            ));
        }
        match current.and_then(|name| sections.get_mut(name)) {
            Some(phrases) => phrases.push(phrase),
            None => return Err(format!("{}: a phrase before any [section]", at())),
        }
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lexicon_reads_whole() {
        let lexicon = Lexicon::parse(CUES).unwrap();
        let kind = lexicon.kind(MemoryType::Preference);
        assert_eq!(kind.markers.first(), Some(&"i prefer"));
        assert!(
            kind.cues.contains(&"dont "),
            "quoted phrases keep their spaces"
        );
        assert!(lexicon.kind(MemoryType::Event).markers.is_empty());
        assert_eq!(lexicon.rank(MemoryType::Preference), 0);
        assert_eq!(lexicon.rank(MemoryType::Fact), KINDS.len() - 1);
        assert!(lexicon.transient.contains(&" again"));
        assert_eq!(lexicon.thanks.last(), Some(&"muchas gracias"));
        assert_eq!(lexicon.not_subject.len(), 105);
    }

    #[test]
    fn a_malformed_lexicon_is_refused() {
        for (text, error) in [
            ("i prefer", "line 1: a phrase before any [section]"),
            ("[hedges]\n\"maybe", "line 2: a quote left open"),
            (
                "[hedges]\nMaybe",
                "line 2: \"Maybe\" is not a phrase in lower case",
            ),
            ("[hedges]\n[hedges]", "line 2: section [hedges] twice"),
            ("[hedges]", "no section [preference.markers]"),
        ] {
            assert_eq!(Lexicon::parse(text).err().as_deref(), Some(error), "{text}");
        }
        let unknown = format!("{CUES}\n[hedgez]\nmaybe\n");
        let unknown: &'static str = Box::leak(unknown.into_boxed_str());
        assert_eq!(
            Lexicon::parse(unknown).err().as_deref(),
            Some("unknown section [hedgez]")
        );
    }
}
