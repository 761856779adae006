//! Near-duplicates (DESIGN §3): a new memory that says what a valid memory
//! of the same type and owner already says, in other words ("I prefer dark
//! mode in every editor", "Please always use a dark theme in my editors").
//! Exact duplicates (the same text once normalised) merge already; these
//! are linked to the memory they repeat, or merged into it with
//! `--merge-near-duplicates`.
//!
//! Two memories are near-duplicates when their meanings are close (the
//! embedder's cosine above [`CLOSE`], or without one most of their words
//! shared, [`SHARED`]) and a lexical check finds nothing that tells them
//! apart: the same values (numbers, names, identifiers, days and months,
//! in the same order), the same polarity, and no contradiction between
//! them. A value changed, a "not" added, two names swapped or a subject
//! changed is a different memory however close the meanings are.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::LazyLock;

use super::{self as contradictions, Reading};

/// The cosine (all-MiniLM-L6-v2) above which two memories mean the same,
/// chosen on the dev half of tests/data/near_duplicates.
pub const CLOSE: f32 = 0.70;
/// Without an embedder: the share of their content words two memories
/// must have in common (Jaccard), chosen on the same pairs.
pub const SHARED: f64 = 0.40;

// The most of a memory's text read: as much as the contradiction rules
// read (what a memory says is cached by that part of it).
use super::MAX_READ_BYTES;

/// Words that turn a statement around, in the five languages read.
const NEGATIONS: &str = "not no never don't doesn't didn't isn't aren't wasn't weren't won't
can't cannot shouldn't mustn't without nor nothing none neither nunca nadie ningún ninguna
sin jamás nicht kein keine keinen keiner nie niemals ohne ne pas jamais aucun aucune sans
não nem nenhum nenhuma sem";

/// Days and months: values even when written in lower case.
const CALENDAR: &str = "monday tuesday wednesday thursday friday saturday sunday january
february march april june july august september october november december lunes martes
miércoles jueves viernes sábado domingo enero febrero marzo abril mayo junio julio agosto
septiembre octubre noviembre diciembre montag dienstag mittwoch donnerstag freitag samstag
sonntag januar februar märz juni juli oktober dezember lundi mardi mercredi jeudi vendredi
samedi dimanche janvier février mars avril mai juin juillet août septembre octobre novembre
décembre segunda terça quarta quinta sexta sábado janeiro fevereiro março maio junho julho
setembro outubro novembro dezembro";

/// Number words, written for their digits.
const NUMBERS: [(&str, &str); 40] = [
    ("one", "1"),
    ("single", "1"),
    ("two", "2"),
    ("three", "3"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("ten", "10"),
    ("twelve", "12"),
    ("second", "2"),
    ("third", "3"),
    ("dos", "2"),
    ("tres", "3"),
    ("cuatro", "4"),
    ("cinco", "5"),
    ("zwei", "2"),
    ("drei", "3"),
    ("vier", "4"),
    ("fünf", "5"),
    ("deux", "2"),
    ("trois", "3"),
    ("quatre", "4"),
    ("cinq", "5"),
    ("dois", "2"),
    ("duas", "2"),
    ("três", "3"),
    ("quatro", "4"),
    ("twice", "2"),
    ("thrice", "3"),
    ("eleven", "11"),
    ("twenty", "20"),
    ("thirty", "30"),
    ("forty", "40"),
    ("fifty", "50"),
    ("hundred", "100"),
    ("zehn", "10"),
    ("dix", "10"),
];

/// Words with an opposite: one memory saying the one and the other the
/// other are not the same ("accepted", "rejected").
const OPPOSITES: [(&str, &str); 24] = [
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("approve", "deny"),
    ("approved", "denied"),
    ("fast", "slow"),
    ("faster", "slower"),
    ("more", "less"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("allow", "block"),
    ("allowed", "blocked"),
    ("on", "off"),
    ("open", "closed"),
    ("pass", "fail"),
    ("passed", "failed"),
    ("higher", "lower"),
    ("early", "late"),
    ("earlier", "later"),
    ("first", "last"),
    ("add", "remove"),
    ("include", "exclude"),
    ("better", "worse"),
];

/// Days and months as abbreviated, for their full names.
const CALENDAR_SHORT: [(&str, &str); 12] = [
    ("mon", "monday"),
    ("tue", "tuesday"),
    ("tues", "tuesday"),
    ("wed", "wednesday"),
    ("thu", "thursday"),
    ("thurs", "thursday"),
    ("fri", "friday"),
    ("sat", "saturday"),
    ("sun", "sunday"),
    ("sept", "september"),
    ("dec", "december"),
    ("nov", "november"),
];

/// Words that say what role the name after them plays, folded to one
/// word per role ("by", "por", "von", "par", "pelo": the doer, as a
/// subject is).
const ROLES: [(&str, &str); 54] = [
    ("to", "to"),
    ("into", "to"),
    ("onto", "to"),
    ("for", "for"),
    ("from", "from"),
    ("by", ""),
    ("over", "over"),
    ("than", "over"),
    ("not", "not"),
    ("instead", "not"),
    ("with", "with"),
    ("via", "via"),
    ("through", "via"),
    ("para", "for"),
    ("desde", "from"),
    ("por", ""),
    ("con", "with"),
    ("que", "over"),
    ("zu", "to"),
    ("nach", "to"),
    ("für", "for"),
    ("von", ""),
    ("aus", "from"),
    ("mit", "with"),
    ("als", "over"),
    ("nicht", "not"),
    ("à", "to"),
    ("au", "to"),
    ("aux", "to"),
    ("pour", "for"),
    ("par", ""),
    ("avec", "with"),
    ("pas", "not"),
    ("pelo", ""),
    ("pela", ""),
    ("com", "with"),
    ("não", "not"),
    ("no", "not"),
    ("never", "not"),
    // Where and when: no role of those above.
    ("on", ""),
    ("in", ""),
    ("at", ""),
    ("of", ""),
    ("about", ""),
    ("during", ""),
    ("en", ""),
    ("de", ""),
    ("em", ""),
    ("dans", ""),
    ("sur", ""),
    ("auf", ""),
    ("im", ""),
    ("am", ""),
    ("um", ""),
];

/// Words saying who did something in a passive ("approved by Maria").
const AGENTS: [&str; 6] = ["by", "por", "von", "par", "pelo", "pela"];

/// Words the contradiction rules fold away that tell two memories apart
/// here (times, ages, order), each as compared.
const KEPT: [(&str, &str); 44] = [
    ("new", "new"),
    ("old", "old"),
    ("next", "next"),
    ("last", "last"),
    ("before", "before"),
    ("after", "after"),
    ("since", "since"),
    ("until", "until"),
    ("now", "now"),
    ("today", "today"),
    ("tonight", "tonight"),
    ("tomorrow", "tomorrow"),
    ("yesterday", "yesterday"),
    ("soon", "soon"),
    ("again", "again"),
    ("day", "day"),
    ("days", "day"),
    ("week", "week"),
    ("weeks", "week"),
    ("month", "month"),
    ("months", "month"),
    ("year", "year"),
    ("years", "year"),
    ("morning", "morning"),
    ("afternoon", "afternoon"),
    ("evening", "evening"),
    ("weekend", "weekend"),
    ("q1", "q1"),
    ("q2", "q2"),
    ("q3", "q3"),
    ("q4", "q4"),
    ("hoy", "today"),
    ("ayer", "yesterday"),
    ("heute", "today"),
    ("hoje", "today"),
    ("more", "more"),
    ("mehr", "more"),
    ("plus", "more"),
    ("mais", "more"),
    ("longer", "longer"),
    ("anymore", "anymore"),
    ("rather", "rather"),
    ("instead", "instead"),
    ("every", "every"),
];

/// Words that frame a memory rather than add to it ("Lesson learned:",
/// "We decided that…"): another memory may leave them out.
const FRAMING: &str = "lesson learned learn decided decide decision agreed agree note todo need
want should must always usually either here think know remember reminder please thing kind
sure make all every whole entire todos todas todo toda alle jede jeden tous toutes tout";

/// The tables above, for looking a word up.
static ROLE_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| ROLES.into_iter().collect());
static NUMBER_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| NUMBERS.into_iter().collect());
static CALENDAR_SHORT_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| CALENDAR_SHORT.into_iter().collect());
static KEPT_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| KEPT.into_iter().collect());

static NEGATION_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| NEGATIONS.split_whitespace().collect());
static CALENDAR_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| CALENDAR.split_whitespace().collect());
static FRAMING_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| FRAMING.split_whitespace().collect());

/// What the near-duplicate check reads of a memory.
#[derive(Debug, Clone)]
pub struct Gist {
    /// Its content words, folded, in order.
    sequence: Vec<String>,
    /// The same, as a set.
    words: BTreeSet<String>,
    /// Its values, folded, in the order first written.
    values: Vec<String>,
    /// Every word, folded where it is a content word, lower-cased where
    /// not (where the other's values are looked for).
    all: BTreeSet<String>,
    /// The role each content word plays where first written: the
    /// preposition before it ("to", "from", "for"…; "" for none).
    roles: BTreeMap<String, &'static str>,
    /// Whether it says "not", "never", "without"…
    negated: bool,
    /// Whether it says who did something with "by" ("was approved by
    /// Maria"): a passive.
    passive: bool,
    /// What the contradiction rules read of it.
    reading: Reading,
}

impl Gist {
    /// What the contradiction rules read of it.
    pub fn reading(&self) -> &Reading {
        &self.reading
    }

    /// Whether it has at least `n` content words in common with `text`.
    pub fn shares_words_with(&self, text: &str, n: usize) -> bool {
        contradictions::folded(text)
            .iter()
            .filter(|w| self.words.contains(*w))
            .nth(n.saturating_sub(1))
            .is_some()
    }
}

/// Whether a stored memory read as `old` may be one `new` repeats, told
/// quickly, before they are compared in full: its cosine with `new`
/// (given an embedder) is [`CLOSE`], or, without one, they share
/// [`SHARED`] of their words.
pub fn may_repeat(new: &Gist, old: &Gist, cosine: Option<f32>) -> bool {
    match cosine {
        Some(cosine) => cosine >= CLOSE,
        None => {
            // Two memories of very different lengths share too few words
            // (the share is at most the smaller set over the larger one),
            // told by counting before comparing.
            let (a, b) = (new.words.len(), old.words.len());
            a.min(b) as f64 >= SHARED * a.max(b) as f64 && shared(new, old) >= SHARED
        }
    }
}

/// `text` as the near-duplicate check reads it.
pub fn gist(text: &str) -> Gist {
    let text = &text[..text.floor_char_boundary(MAX_READ_BYTES)];
    gist_of(text, contradictions::read(text))
}

/// [`gist`] with what the contradiction rules read of `text` already read.
pub fn gist_of(text: &str, reading: Reading) -> Gist {
    Gist {
        reading,
        ..words_of(text)
    }
}

/// [`gist`] but for what the contradiction rules read.
fn words_of(text: &str) -> Gist {
    let text = &text[..text.floor_char_boundary(MAX_READ_BYTES)];
    let mut gist = Gist {
        sequence: Vec::new(),
        words: BTreeSet::new(),
        values: Vec::new(),
        all: BTreeSet::new(),
        roles: BTreeMap::new(),
        negated: false,
        passive: false,
        reading: Reading::default(),
    };
    for sentence in crate::engine::text::sentences(text) {
        // The word that last said what role the words after it play.
        let mut role = "";
        for (at, word) in words(sentence).enumerate() {
            let lower = word.to_lowercase();
            gist.negated |= NEGATION_SET.contains(lower.as_str())
                || lower.ends_with("n't")
                || lower.ends_with("n’t");
            if let Some(&said) = ROLE_MAP.get(lower.as_str()) {
                gist.passive |= AGENTS.contains(&lower.as_str());
                role = said;
                continue;
            }
            let number = NUMBER_MAP.get(lower.as_str()).copied();
            let day = CALENDAR_SHORT_MAP.get(lower.as_str()).copied();
            let value = number.is_some()
                || day.is_some()
                || word.chars().any(|c| c.is_ascii_digit())
                || CALENDAR_SET.contains(lower.as_str())
                || (at > 0 && word.chars().next().is_some_and(char::is_uppercase))
                || word.chars().skip(1).any(char::is_uppercase);
            let folded = match number.or(day) {
                Some(same) => Some(same.to_owned()),
                None => fold(word, &lower, value),
            };
            gist.all.insert(folded.clone().unwrap_or(lower));
            let Some(folded) = folded.filter(|w| !FRAMING_SET.contains(w.as_str())) else {
                continue;
            };
            if value && !gist.values.contains(&folded) {
                gist.values.push(folded.clone());
            }
            gist.roles.entry(folded.clone()).or_insert(role);
            gist.words.insert(folded.clone());
            gist.sequence.push(folded);
        }
    }
    gist
}

/// The words of a sentence: split at anything but letters, digits and
/// the marks inside identifiers and numbers ("v1.2", "us-east-1", "2pm",
/// "release/2024", "DD/MM/YYYY" stay whole).
fn words(sentence: &str) -> impl Iterator<Item = &str> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || "-_./'’@#%$€£:+".contains(c)))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
}

/// One word as compared: folded as the contradiction rules fold it
/// (plurals, possessives, abbreviations); `None` for a word that names
/// nothing (an article, a pronoun) unless it is a `value` (a day, a
/// month); an acronym stays itself ("US" is not "us").
fn fold(word: &str, lower: &str, value: bool) -> Option<String> {
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    if letters > 1 && !word.chars().any(char::is_lowercase) {
        // An abbreviation of a longer word ("DB") is that word.
        return Some(
            contradictions::fold(word)
                .filter(|f| f != contradictions::OWNER && f.len() > lower.len())
                .unwrap_or_else(|| lower.to_owned()),
        );
    }
    match contradictions::fold(word) {
        Some(folded) if folded == contradictions::OWNER => None,
        Some(folded) => Some(folded),
        None if value => Some(lower.to_owned()),
        // Words the contradiction rules pass over that tell memories
        // apart here ("every day", "every week"; "the new API").
        None => KEPT_MAP.get(lower).map(|same| (*same).to_owned()),
    }
}

/// Why `new` repeats `old`, if it does: their meanings close (`cosine`,
/// when an embedder gave one; else their shared words) and nothing that
/// tells them apart.
pub fn judge(new: &Gist, old: &Gist, cosine: Option<f32>) -> Option<String> {
    // Without a cosine, words are all there is to go by: only a few may
    // differ ("the same words, a few of them otherwise").
    let close = match cosine {
        Some(cosine) => cosine >= CLOSE,
        None => shared(new, old) >= SHARED && few_differ(&new.sequence, &old.sequence),
    };
    (close && !told_apart(new, old)).then(|| match cosine {
        Some(cosine) => format!("near-duplicate: the same meaning (cosine {cosine:.2})"),
        None => format!(
            "near-duplicate: {:.0}% of the words shared",
            shared(new, old) * 100.0
        ),
    })
}

/// The share of their content words two memories have in common.
fn shared(a: &Gist, b: &Gist) -> f64 {
    let union = a.words.union(&b.words).count();
    if union == 0 {
        return 0.0;
    }
    a.words.intersection(&b.words).count() as f64 / union as f64
}

/// Whether something tells two close memories apart (`new` the newer):
/// a value one has that the other does not mention, their shared values
/// in another order ("Rust over Go", "Go over Rust"), one negated and not
/// the other, opposite words, a word put in another's place ("the
/// landlord wants…", "the tenant wants…"), details only the newer one
/// adds, or a contradiction between them.
pub(crate) fn told_apart(new: &Gist, old: &Gist) -> bool {
    apart_by(new, old).is_some()
}

/// What tells two close memories apart ([`told_apart`]), named.
pub(crate) fn apart_by(new: &Gist, old: &Gist) -> Option<&'static str> {
    // A value of one that the other neither writes nor misspells.
    let missing = |x: &Gist, y: &Gist| {
        x.values
            .iter()
            .any(|v| !y.all.contains(v) && !y.values.iter().any(|w| alike(v, w)))
    };
    // A name or a moved word that plays another role: "Priya reports to
    // Daniel", "Daniel reports to Priya".
    // Or, of the same words, some moved to other places ("the platform
    // team takes over from the mobile team"), unless the one says who did
    // it by "by" and the other does not (a passive), or only a time moved
    // ("In October we…", "…in October").
    // A value said with another preposition ("from Jenkins to GitHub",
    // "from GitHub to Jenkins") is swapped whatever else changed.
    let swapped = || {
        let same_words = new.words.symmetric_difference(&old.words).count() <= 1;
        let moved = if same_words {
            moved(&new.sequence, &old.sequence)
        } else {
            BTreeSet::new()
        };
        let timeless = |w: &String| {
            !(w.chars().any(|c| c.is_ascii_digit()) || CALENDAR_SET.contains(w.as_str()))
        };
        (new.passive == old.passive && moved.iter().any(timeless))
            || new.roles.iter().any(|(word, role)| {
                let value = new.values.contains(word) || old.values.contains(word);
                old.roles.get(word).is_some_and(|theirs| {
                    theirs != role
                        && ((value && !theirs.is_empty() && !role.is_empty())
                            || (same_words && (value || moved.contains(word))))
                })
            })
    };
    let checks: [(&'static str, &dyn Fn() -> bool); 8] = [
        ("a value", &|| missing(new, old) || missing(old, new)),
        ("a role swapped", &swapped),
        ("polarity", &|| new.negated != old.negated),
        ("opposite words", &|| opposed(new, old)),
        ("words put in place of others", &|| {
            substituted(&new.sequence, &old.sequence)
        }),
        ("added detail", &|| adds_detail(new, old)),
        ("a contradiction", &|| {
            contradictions::judge(&new.reading, &old.reading).is_some()
                || contradictions::judge(&old.reading, &new.reading).is_some()
        }),
        ("nothing", &|| false),
    ];
    checks
        .iter()
        .find(|(_, check)| check())
        .map(|(name, _)| *name)
}

/// The most words either memory may have outside their alignment when
/// only words tell how close they are.
const MAX_DIFFERING: usize = 4;

/// Whether, aligned word by word, at most [`MAX_DIFFERING`] words of each
/// are outside the alignment.
fn few_differ(a: &[String], b: &[String]) -> bool {
    let (mut x, mut y) = (0, 0);
    for (gap_a, gap_b) in gaps(a, b) {
        x += gap_a.len();
        y += gap_b.len();
    }
    x <= MAX_DIFFERING && y <= MAX_DIFFERING
}

/// Whether one says a word and the other its opposite.
fn opposed(a: &Gist, b: &Gist) -> bool {
    OPPOSITES.iter().any(|(x, y)| {
        (a.words.contains(*x) && b.words.contains(*y))
            || (a.words.contains(*y) && b.words.contains(*x))
    })
}

/// The most words either side of a gap in the alignment for it to be one
/// word put in place of another rather than a rewording.
const MAX_SUBSTITUTED: usize = 3;

/// Whether, aligned word by word (their longest common subsequence), the
/// two differ by a few words put in place of others ("the landlord
/// wants…", "the tenant wants…"; "all employees", "finance employees"),
/// not the same words written otherwise.
fn substituted(a: &[String], b: &[String]) -> bool {
    let (mut x, mut y): (Vec<&String>, Vec<&String>) = (Vec::new(), Vec::new());
    for (gap_a, gap_b) in gaps(a, b) {
        x.extend(gap_a);
        y.extend(gap_b);
    }
    let x: Vec<&String> = x.into_iter().filter(|w| !y.contains(w)).collect();
    !x.is_empty()
        && !y.is_empty()
        && x.len() <= MAX_SUBSTITUTED
        && y.len() <= MAX_SUBSTITUTED
        && !x.iter().all(|w| y.iter().any(|v| alike(w, v)))
}

/// The words both write, but not where the other does (outside their
/// longest common subsequence on both sides).
fn moved(a: &[String], b: &[String]) -> BTreeSet<String> {
    let (mut x, mut y) = (BTreeSet::new(), BTreeSet::new());
    for (gap_a, gap_b) in gaps(a, b) {
        x.extend(gap_a.iter().cloned());
        y.extend(gap_b.iter().cloned());
    }
    x.intersection(&y).cloned().collect()
}

/// Whether the newer one adds words of substance the older lacks while
/// leaving out next to nothing of it (a detail added, or one instance of
/// a general rule).
fn adds_detail(new: &Gist, old: &Gist) -> bool {
    let substance = |w: &&String| !FRAMING_SET.contains(w.as_str());
    let added = new.words.difference(&old.words).filter(substance).count();
    let left_out = old.words.difference(&new.words).filter(substance).count();
    added >= 1 && left_out * 3 <= added
}

/// Whether two words are one word written otherwise: a typo, or another
/// form of it ("rebase", "rebasing"; "own", "owned") — not two words
/// that begin alike ("weekday", "weekend"; "backup", "backend"), nor
/// two numbers ("v2.4.1", "v2.4.2").
fn alike(a: &str, b: &str) -> bool {
    let digits = |w: &str| w.chars().any(|c| c.is_ascii_digit());
    if digits(a) || digits(b) {
        return a == b;
    }
    let (la, lb) = (a.chars().count(), b.chars().count());
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let (short, long) = (la.min(lb), la.max(lb));
    a == b
        || (common == short && short >= 3 && long - short <= 3)
        || (common >= 5 && long - common <= 3)
        || (short >= 5 && edit_distance(a, b) <= 1)
}

/// Levenshtein distance between two short words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let next = (diagonal + usize::from(x != *y))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The unaligned stretches of `a` and `b` between the words of their
/// longest common subsequence, in order (and before the first and after
/// the last).
fn gaps<'a>(a: &'a [String], b: &'a [String]) -> Vec<(&'a [String], &'a [String])> {
    let (n, m) = (a.len(), b.len());
    let mut longest = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            longest[i][j] = if a[i] == b[j] {
                longest[i + 1][j + 1] + 1
            } else {
                longest[i + 1][j].max(longest[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut from) = (0, 0, (0, 0));
    let mut gaps = Vec::new();
    while i < n && j < m {
        if a[i] == b[j] {
            gaps.push((&a[from.0..i], &b[from.1..j]));
            i += 1;
            j += 1;
            from = (i, j);
        } else if longest[i + 1][j] >= longest[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    gaps.push((&a[from.0..], &b[from.1..]));
    gaps
}

#[cfg(test)]
mod tests;
