//! Rules-based named-entity extraction for short memory texts.
//!
//! Memories are a sentence or two written by agents or users, in English,
//! Spanish, German, French or Portuguese. Extraction runs on every write, so
//! it uses no model: strong surface patterns (handles, channels, code
//! identifiers, service names, cloud regions), word lists (tools, vendors,
//! given names, places) and capitalization, with rules for where
//! capitalization misleads (sentence starts, Title Case, German nouns).

use crate::domain::entity::{EntityType, Mention};

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use regex::Regex;

use super::lexicon;
use reader::{Context, Reader};

mod reader;

/// The entities `text` names, each once (the first, fullest form), in order of first appearance.
pub fn extract(text: &str) -> Vec<Mention> {
    let specials = specials(text);
    let tokens = tokenize(text, &specials);
    let ctx = Context::of(&tokens);
    let mut found: Vec<(usize, Mention)> = specials
        .into_iter()
        .filter_map(|s| s.mention.map(|m| (s.start, m)))
        .collect();
    let mut reader = Reader {
        text,
        tokens: &tokens,
        ctx,
        found: Vec::new(),
    };
    reader.read();
    found.append(&mut reader.found);
    found.sort_by_key(|(start, _)| *start);
    dedup(found)
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("built-in pattern compiles")
}

static URL: LazyLock<Regex> = LazyLock::new(|| re(r"(?:https?://|www\.)\S+"));
static EMAIL: LazyLock<Regex> = LazyLock::new(|| re(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"));
static BACKTICK: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`\n]+)`"));
static HANDLE: LazyLock<Regex> = LazyLock::new(|| re(r"@[\p{L}\p{N}_][\p{L}\p{N}_.-]*"));
static CHANNEL: LazyLock<Regex> = LazyLock::new(|| re(r"#\p{L}[\p{L}\p{N}_-]*"));
static REGION: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"^(?:(?:us|eu|ap|sa|ca|me|af|il|mx)-(?:gov-)?(?:central|(?:north|south)?(?:east|west)|north|south)-\d",
        r"|(?:us|europe|asia|australia|southamerica|northamerica|me|africa)-(?:central|(?:north|south)?(?:east|west)|north|south)\d+)$"
    ))
});

/// Words before a one-letter language name: "written in C", "and R".
const BEFORE_LANGUAGE: &[&str] = &[
    "in", "and", "or", "with", "like", "of", "to", "using", "en", "em", "und",
];

/// What the tool, vendor and place lists know about a phrase.
#[derive(Clone, Copy)]
struct Known {
    kind: EntityType,
    /// Also an ordinary word: counts only when capitalized.
    cap_only: bool,
    /// Written in capitals ("US", "TAP"): counts only when written so.
    acronym: bool,
}

struct Lexicon {
    known: HashMap<String, Known, Fast>,
    /// First words of multi-word entries, so most tokens need one lookup.
    phrase_starts: WordSet,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let cap_only = lower_set(lexicon::CAP_ONLY);
    // A phrase in two lists keeps the first list's type.
    let lists = [
        (lexicon::ORGANIZATIONS, EntityType::Organization),
        (lexicon::TOOLS, EntityType::Tool),
        (lexicon::LIBRARIES, EntityType::Tool),
        (lexicon::SERVICES, EntityType::Service),
        (lexicon::PRODUCTS, EntityType::Other),
        (lexicon::PLACES, EntityType::Place),
    ];
    let mut known = HashMap::default();
    let mut phrase_starts = WordSet::default();
    for (list, kind) in lists {
        for entry in list {
            let key = entry.to_lowercase();
            if let Some((first, _)) = key.split_once(' ') {
                phrase_starts.insert(first.to_string());
            }
            let acronym = entry
                .chars()
                .filter(|c| c.is_alphabetic())
                .all(char::is_uppercase);
            let cap_only = cap_only.contains(&key);
            known.entry(key).or_insert(Known {
                kind,
                cap_only,
                acronym,
            });
        }
    }
    Lexicon {
        known,
        phrase_starts,
    }
});

/// FxHash-style hashing: the keys are short words from fixed lists, so
/// SipHash's flood resistance buys nothing and would dominate run time.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Fast = BuildHasherDefault<WordHasher>;
type WordSet = HashSet<String, Fast>;

fn lower_set(words: &[&str]) -> WordSet {
    words.iter().map(|w| w.to_lowercase()).collect()
}

/// The smaller word lists, as lower-case sets.
struct Words {
    given: WordSet,
    ambiguous_names: WordSet,
    start_stop: WordSet,
    always_stop: WordSet,
    german: WordSet,
    titles: WordSet,
    abbreviations: WordSet,
    org_suffixes: WordSet,
    place_suffixes: WordSet,
    event_suffixes: WordSet,
    connectors: WordSet,
    subject_verbs: WordSet,
    tech_followers: WordSet,
    service_suffixes: WordSet,
    project_cues: WordSet,
    service_cues: WordSet,
    org_cues: WordSet,
    place_preps: WordSet,
    team_handles: WordSet,
    file_extensions: WordSet,
    date_words: WordSet,
    not_hosts: WordSet,
    generic_acronyms: WordSet,
    hyphen_modifiers: WordSet,
    dependency_verbs: WordSet,
    person_before: WordSet,
    person_after: WordSet,
    common_nouns: WordSet,
    group_words: WordSet,
}

static WORDS: LazyLock<Words> = LazyLock::new(|| Words {
    given: lower_set(lexicon::GIVEN_NAMES),
    ambiguous_names: lower_set(lexicon::AMBIGUOUS_NAMES),
    start_stop: lower_set(lexicon::START_STOP),
    always_stop: lower_set(lexicon::ALWAYS_STOP),
    german: lower_set(lexicon::GERMAN_WORDS),
    titles: lower_set(lexicon::TITLES),
    abbreviations: lower_set(lexicon::ABBREVIATIONS),
    org_suffixes: lower_set(lexicon::ORG_SUFFIXES),
    place_suffixes: lower_set(lexicon::PLACE_SUFFIXES),
    event_suffixes: lower_set(lexicon::EVENT_SUFFIXES),
    connectors: lower_set(lexicon::CONNECTORS),
    subject_verbs: lower_set(lexicon::SUBJECT_VERBS),
    tech_followers: lower_set(lexicon::TECH_FOLLOWERS),
    service_suffixes: lower_set(lexicon::SERVICE_SUFFIXES),
    project_cues: lower_set(lexicon::PROJECT_CUES),
    service_cues: lower_set(lexicon::SERVICE_CUES),
    org_cues: lower_set(lexicon::ORG_CUES),
    place_preps: lower_set(lexicon::PLACE_PREPS),
    team_handles: lower_set(lexicon::TEAM_HANDLES),
    file_extensions: lower_set(lexicon::FILE_EXTENSIONS),
    date_words: lower_set(lexicon::DATE_WORDS),
    not_hosts: lower_set(lexicon::NOT_HOSTS),
    generic_acronyms: lower_set(lexicon::GENERIC_ACRONYMS),
    hyphen_modifiers: lower_set(lexicon::HYPHEN_MODIFIERS),
    dependency_verbs: lower_set(lexicon::DEPENDENCY_VERBS),
    person_before: lower_set(lexicon::PERSON_BEFORE),
    person_after: lower_set(lexicon::PERSON_AFTER),
    common_nouns: lower_set(lexicon::COMMON_NOUNS),
    group_words: lower_set(lexicon::GROUP_WORDS),
});

/// A stretch decided by a strong pattern before any word is read: an entity
/// (handle, channel, code identifier) or something to skip (URL, e-mail).
struct Special {
    start: usize,
    end: usize,
    mention: Option<Mention>,
}

fn specials(text: &str) -> Vec<Special> {
    let mut out: Vec<Special> = Vec::new();
    // Most texts have none of these; skipping the scans keeps writes cheap.
    let (web, at, tick, hash) = (
        text.contains("://") || text.contains("www."),
        text.contains('@'),
        text.contains('`'),
        text.contains('#'),
    );
    if web {
        for m in URL.find_iter(text) {
            push_special(&mut out, m.start(), m.end(), None);
        }
    }
    if at {
        for m in EMAIL.find_iter(text) {
            push_special(&mut out, m.start(), m.end(), None);
        }
    }
    for c in BACKTICK.captures_iter(if tick { text } else { "" }) {
        if let (Some(all), Some(inner)) = (c.get(0), c.get(1)) {
            push_special(
                &mut out,
                all.start(),
                all.end(),
                code_mention(inner.as_str()),
            );
        }
    }
    let handles = HANDLE.find_iter(if at { text } else { "" });
    for m in handles.chain(CHANNEL.find_iter(if hash { text } else { "" })) {
        let name = m.as_str().trim_end_matches(['.', '-']);
        let glued = text[..m.start()]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric());
        if !glued {
            push_special(
                &mut out,
                m.start(),
                m.start() + name.len(),
                Some(tag_mention(name)),
            );
        }
    }
    out
}

/// Records a special span unless an earlier, stronger one covers it.
fn push_special(out: &mut Vec<Special>, start: usize, end: usize, mention: Option<Mention>) {
    if !out.iter().any(|s| start < s.end && s.start < end) {
        out.push(Special {
            start,
            end,
            mention,
        });
    }
}

/// A backticked identifier is an entity; commands, paths and flags are not.
fn code_mention(code: &str) -> Option<Mention> {
    let code = code.trim();
    let looks_like_path = code.contains('/') || code.starts_with(['.', '-', '~', '$']);
    if code.is_empty()
        || code.contains(char::is_whitespace)
        || looks_like_path
        || is_file_name(code)
    {
        return None;
    }
    let kind = LEXICON
        .known
        .get(&code.to_lowercase())
        .map_or(EntityType::Other, |k| k.kind);
    Some(Mention {
        name: code.to_string(),
        entity_type: kind,
    })
}

/// An @handle names a person unless it is a team's; a #channel is "other".
fn tag_mention(tag: &str) -> Mention {
    let entity_type = match tag.strip_prefix('@') {
        Some(handle) if WORDS.team_handles.contains(&handle.to_lowercase()) => {
            EntityType::Organization
        }
        Some(_) => EntityType::Person,
        None => EntityType::Other,
    };
    Mention {
        name: tag.to_string(),
        entity_type,
    }
}

fn is_file_name(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && WORDS.file_extensions.contains(&ext.to_lowercase())
    })
}

/// A word of the text outside the special spans.
struct Token<'a> {
    /// As written, possessive "'s" included.
    text: &'a str,
    /// Lower case, without a possessive "'s" (borrowed when already so).
    folded: Cow<'a, str>,
    start: usize,
    end: usize,
    /// What separates it from the previous token.
    gap: &'a str,
    sentence_start: bool,
}

impl Token<'_> {
    fn lower(&self) -> &str {
        &self.folded
    }

    fn capitalized(&self) -> bool {
        self.text.chars().next().is_some_and(char::is_uppercase)
    }

    /// The word without a possessive "'s": "Rebecca's" → "Rebecca".
    fn base(&self) -> &str {
        self.text
            .strip_suffix("'s")
            .or_else(|| self.text.strip_suffix("’s"))
            .unwrap_or(self.text)
    }

    fn possessive(&self) -> bool {
        self.base().len() < self.text.len()
    }

    fn is_number(&self) -> bool {
        self.text.starts_with(|c: char| c.is_ascii_digit())
    }
}

fn tokenize<'a>(text: &'a str, specials: &[Special]) -> Vec<Token<'a>> {
    let mut tokens: Vec<Token<'a>> = Vec::new();
    let mut prev_end = 0;
    for (mut start, end) in word_spans(text) {
        if specials.iter().any(|s| start < s.end && s.start < end) || is_path(text, start, end) {
            prev_end = end;
            continue;
        }
        start += elision_len(&text[start..end]);
        let gap = &text[prev_end.min(start)..start];
        let sentence_start = match tokens.last() {
            None => true,
            Some(prev) => ends_sentence(gap) && !follows_abbreviation(prev, gap),
        };
        let word = &text[start..end];
        let mut token = Token {
            text: word,
            folded: Cow::Borrowed(""),
            start,
            end,
            gap,
            sentence_start,
        };
        let base = &text[start..start + token.base().len()];
        token.folded = if base.chars().any(char::is_uppercase) {
            Cow::Owned(base.to_lowercase())
        } else {
            Cow::Borrowed(base)
        };
        tokens.push(token);
        prev_end = end;
    }
    tokens
}

/// Byte spans of words: letters, digits and "_", joined by one of
/// `-./:'’+&` when a letter or digit follows ("Next.js", "re:Invent",
/// "don't"), and ending in "++" or "#" ("C++", "C#").
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut spans = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, first)) = chars.next() {
        if !is_word(first) {
            continue;
        }
        let mut end = start + first.len_utf8();
        while let Some(&(i, c)) = chars.peek() {
            let after = i + c.len_utf8();
            let joins = matches!(c, '-' | '.' | '/' | ':' | '\'' | '’' | '+' | '&')
                && text[after..].starts_with(is_word);
            if !is_word(c) && !joins {
                break;
            }
            chars.next();
            end = after;
        }
        let rest = &text[end..];
        if rest.starts_with("++") {
            end += 2;
        } else if rest.starts_with('#') && !rest[1..].starts_with(is_word) {
            end += 1;
        }
        while chars.next_if(|&(i, _)| i < end).is_some() {}
        spans.push((start, end));
    }
    spans
}

/// "jump01", "web42": a host name's letters, when `word` is one.
fn host_prefix(word: &str) -> Option<&str> {
    let (letters, digits) = word.split_at(word.find(|c: char| c.is_ascii_digit())?);
    let host = letters.len() >= 2
        && letters.chars().all(|c| c.is_ascii_lowercase())
        && digits.len() >= 2
        && digits.chars().all(|c| c.is_ascii_digit());
    host.then_some(letters)
}

/// Paths, file names, flags and variables are not names.
fn is_path(text: &str, start: usize, end: usize) -> bool {
    let word = &text[start..end];
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    word.contains('/')
        || matches!(before, Some('/' | '.' | '~' | '$' | '-' | '\\' | '_'))
        || matches!(after, Some('/' | '\\'))
        || (is_file_name(word) && !LEXICON.known.contains_key(&word.to_lowercase()))
}

/// Length of a French or Italian elided article: "l'utilisateur", "d'Airbnb".
fn elision_len(word: &str) -> usize {
    let mut chars = word.char_indices();
    match (chars.next(), chars.next(), chars.next()) {
        (Some((_, first)), Some((i, '\'' | '’')), Some((_, next)))
            if first.is_alphabetic() && !matches!(first, 'O' | 'I') && next.is_alphabetic() =>
        {
            i + word[i..].chars().next().map_or(1, char::len_utf8)
        }
        _ => 0,
    }
}

fn ends_sentence(gap: &str) -> bool {
    gap.contains(['.', '!', '?', ':', '\n', '•', '…'])
}

/// "Dr. Okafor", "St. Mary's": the full stop belongs to the abbreviation.
fn follows_abbreviation(prev: &Token, gap: &str) -> bool {
    gap.trim_end() == "." && WORDS.abbreviations.contains(prev.lower())
}

/// Keeps each entity once, in order, preferring the first, fullest form:
/// "Alice Chen … Alice" lists only "Alice Chen".
fn dedup(found: Vec<(usize, Mention)>) -> Vec<Mention> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut parts: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for (_, mention) in found {
        let key = mention.name.to_lowercase();
        if seen.contains(&key) || parts.contains(&key) {
            continue;
        }
        if mention.entity_type == EntityType::Person {
            parts.extend(key.split(' ').map(str::to_string));
        }
        seen.insert(key);
        out.push(mention);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        extract(text).into_iter().map(|m| m.name).collect()
    }

    #[test]
    fn finds_names_handles_channels_and_services() {
        let text = "Alice Chen moved the payments-api from Heroku to AWS last week; ping @marco in #ops if it breaks.";
        let found = extract(text);
        let expected = [
            ("Alice Chen", EntityType::Person),
            ("payments-api", EntityType::Service),
            ("Heroku", EntityType::Organization),
            ("AWS", EntityType::Organization),
            ("@marco", EntityType::Person),
            ("#ops", EntityType::Other),
        ];
        let got: Vec<(&str, EntityType)> = found
            .iter()
            .map(|m| (m.name.as_str(), m.entity_type))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn ambiguous_words_follow_context() {
        assert!(names("Go ahead and squash the commits.").is_empty());
        assert_eq!(names("Go files need gofmt."), ["Go"]);
        assert_eq!(names("May is taking over the on-call in May."), ["May"]);
        assert_eq!(names("Will asked for the plan."), ["Will"]);
        assert!(names("Mark the test as flaky.").is_empty());
    }

    #[test]
    fn strips_titles_possessives_articles_and_versions() {
        assert_eq!(
            names("Dr. Amara Okafor is at St. Mary's Hospital."),
            ["Amara Okafor", "St. Mary's Hospital"]
        );
        assert_eq!(
            names("Rebecca's notes cover PostgreSQL 15."),
            ["Rebecca", "PostgreSQL"]
        );
        assert_eq!(
            names("M. Dupont, de la mairie de Nantes, veut une démo."),
            ["Dupont", "Nantes"]
        );
    }

    #[test]
    fn skips_german_nouns_generic_acronyms_and_paths() {
        assert!(
            names("Notiz: Die Zugangsdaten für den Server liegen im Passwortmanager.").is_empty()
        );
        assert!(names("The API returns JSON over HTTP; see docs/api.md and PR #412.").is_empty());
        assert_eq!(
            names("Der Kunde Zalando nutzt Excel."),
            ["Zalando", "Excel"]
        );
    }

    #[test]
    fn reads_lower_case_chat_and_shouting() {
        assert_eq!(
            names("lisa from the berlin office said the jira migration is done"),
            ["lisa", "berlin", "jira"]
        );
        assert!(names("IMPORTANT: Never Use Force Push On Shared Branches.").is_empty());
    }
}
