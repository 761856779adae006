//! The second rule: the same sentence frame with another value. A memory
//! is split into its frame (the content words) and its values (numbers,
//! dates, names, identifiers); a newer memory whose frame holds all of the
//! older one's, that shares something they are about, and that puts other
//! values of the same kind in place of the older ones contradicts it —
//! when it says something changed ("now", "moved to", "raised",
//! "renamed"…); without such a cue, another value in the same frame is as
//! often a second true thing as a new one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

/// Words that carry neither frame nor value, in the five languages.
const STOP: &str = "
a an the this that these those some any its it it's his her their them they he she him is
are was were be been being am has have had will would shall should can could may might do
does did done not no yes also too very really just still currently today tonight yesterday
tomorrow recently lately finally officially actually apparently already soon then there
here of in on at to for from by with as and or but so if when while after before until via
per into onto over about than rather our we us i me my user user's
el la los las un una unos unas lo del al de en con por para que es son está están fue ya
hoy también además hasta sus su se
der die das den dem des ein eine einen einem einer ist sind war heute auch bis von vom zum
zur im am mit für bei und oder aber
le les un une des du au aux est sont était aujourd'hui aussi jusqu et ou mais pas à chez
pour avec sur dans l d
o os as um uma uns umas do da dos das no na nos nas é são está estão foi hoje também até e
ou mas com em pelo pela";

/// Verbs an older memory may say its value with where the newer one says
/// what changed ("lives in Hamburg", "moved to Munich").
const PREDICATES: &str = "live work run use sit cost go need keep pin host build built retain
expire lead led supply suppli assign due pick release require send sent subscribe like
prefer decide schedule set own manage report handle serve store point deploy target ship
stay hold take make get call join leave left move base locate reside speak corre trabaja
vive usa läuft arbeitet wohnt nutzt habite vit travaille utilise roda trabalha mora coûte
custa cuesta kostet lebt liegt";

/// Months, days and frequencies: values, like numbers.
const CALENDAR: &str = "hourly daily nightly weekly biweekly fortnightly monthly quarterly
yearly annually january february march april may june july august september october
november december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
thursday friday saturday sunday enero febrero marzo abril mayo junio julio agosto septiembre
octubre noviembre diciembre lunes martes miércoles jueves viernes januar februar märz juni
juli oktober dezember montag dienstag mittwoch donnerstag freitag janvier février mars avril
mai juin juillet août septembre octobre novembre décembre lundi mardi mercredi jeudi
vendredi janeiro fevereiro março maio junho julho setembro outubro novembro dezembro
segunda terça quarta quinta sexta";

/// Words saying something changed.
const CHANGE_CUES: &str = r"now|no longer|anymore|any more|moved|switched|switch|changed|raised|lowered|bumped|increased|decreased|reduced|scaled|expanded|upgraded|downgraded|migrated|renamed|reassigned|transferred|replaced|instead|rescheduled|postponed|pushed|slipped|delayed|reopened|lifted|took over|from now on|as of|updated|relicensed|re-estimated|relocated|reverted|reversed|promoted|became|dropped|dropping|cancell?ed|retired|decommissioned|set to|adjusted|ahora|ya no|cambi[óoa]|cambiamos|movimos|movió|movida|movido|moveu|verlegt|migramos|aplaz\w+|pospus\w+|dej[óa]|reprogram\w+|jetzt|nun|nicht mehr|inzwischen|verschiebt|verschoben|geändert|gewechselt|umgestellt|erhöht|gesenkt|stattdessen|maintenant|désormais|ne \w+ plus|déplacée?|changée?|migrée?|reportée?|augmentée?|au lieu de|annulée?|remplacée?|passée? (?:à|au)|pasó a|agora|não \w+ mais|mudou|mudamos|passou|remarcad[oa]|adiad[oa]|aumentou|em vez de|voltamos|after all|scratch|revised|no more|back on|swapped|handed off|al final|descart\w+|verworfen|vom tisch|finalement|au final|revue|abandonn\w+|finalmente|abandonamos|actually|correction|turns out|turned out|nowadays|these days|starting today|effective|from today|pulled forward|brought forward|moved up|rolled back|went back|returned to|superseded|extended|transitioned|en realidad|corrección|de ahora en adelante|a partir de hoy|ab sofort|ab jetzt|künftig|dorénavant|à partir d'aujourd'hui|en fait|a partir de agora|na verdade";

static STOP_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| STOP.split_whitespace().collect());
static PREDICATE_SET: LazyLock<BTreeSet<String>> =
    LazyLock::new(|| PREDICATES.split_whitespace().map(fold).collect());
static CALENDAR_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| CALENDAR.split_whitespace().collect());
static CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)\b(?:{CHANGE_CUES}|(?-i:[Nn]ew))\b")).expect("change cue pattern")
});
static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"`[^`]+`|[\w$€£%@./:+#'-]+").expect("token pattern"));
/// A sentence adds a value rather than replacing one.
static ADDITIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:also|too|as well|additionally|in addition|another|além|además|también|auch|zusätzlich|aussi|également|também)\b",
    )
    .expect("additive pattern")
});

/// What a value is: a quantity or time, or a name or identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Number,
    Name,
}

/// A memory as frame and values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    words: BTreeSet<String>,
    values: BTreeSet<(Kind, String)>,
    /// The words beside each value (the one before and the one after,
    /// change cues left out): the slot it fills.
    slots: BTreeMap<(Kind, String), BTreeSet<String>>,
    /// The shape of each value written with digits or as an address
    /// ("9.9.9" for "1.5.7", "a-a-9" for "us-east-1", "TIME" for "8am"):
    /// two values of one shape are two values of one thing.
    shapes: BTreeMap<(Kind, String), String>,
    /// The tokens in order, lower-cased and folded, change cues left out.
    tokens: Vec<String>,
    /// Whether it says something changed.
    cued: bool,
    /// Whether it is short and says what something is
    /// ([`swappable`]).
    swappable: bool,
    /// Whether it adds a value ("also").
    additive: bool,
    /// Whether it asks or exclaims something: talk rather than a
    /// statement ("Any more paintings coming up?", "So inspiring!"). The
    /// frame rules read statements only.
    talk: bool,
    /// The words and names before its verb, its change word or its colon:
    /// what it is about ("Alice's flight" of "Alice's flight lands at
    /// 3pm"). Empty when it has none of them.
    subject: BTreeSet<String>,
    /// The numbers said before its verb: part of what it is about
    /// ("Release 2.1 ships on 3 May").
    subject_values: BTreeSet<String>,
    /// Its words and values, folded: what [`other_subjects`] looks a
    /// subject's words up in.
    said: BTreeSet<String>,
}

impl Frame {
    /// Whether it says something changed.
    pub fn cued(&self) -> bool {
        self.cued
    }
}

/// The most tokens a memory has for [`judge_swapped`], [`cover`] and
/// meaning to read it: a statement (the labelled changes have at most 15),
/// not a story that mentions one.
const MAX_STATEMENT_TOKENS: usize = 24;

/// Whether `text` is short and says what something is: a word, then a
/// verb ("Priya works at…", "The plan costs…"). Only such a memory can
/// be the same statement as another with one part swapped
/// ([`judge_swapped`]).
fn swappable(text: &str) -> bool {
    let mut tokens = 0;
    let mut verb = false;
    for (i, token) in TOKEN.find_iter(text).enumerate() {
        tokens += 1;
        if tokens > MAX_STATEMENT_TOKENS {
            return false;
        }
        if i > 0 && !verb {
            let word = fold(&token.as_str().to_lowercase());
            verb = COPULA_SET.contains(word.as_str()) || PREDICATE_SET.contains(&word);
        }
    }
    verb
}

/// Whether `text` says something changed, as its frame would
/// ([`Frame::cued`]).
pub fn cued(text: &str) -> bool {
    cues(text).next().is_some()
}

/// Where `text` says something changed. "new" is one only of a thing that
/// replaced another — after "the" or a possessive, or starting a clause
/// ("the new contact is…", "; new expiry…") — not of one more ("a new
/// office") or of news ("anything new").
fn cues(text: &str) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    CUE.find_iter(text)
        .filter(|m| {
            if m.as_str() == "New" {
                // "New number: …", not "New York".
                let starts = text[..m.start()].trim_end();
                let next = text[m.end()..].trim_start();
                return (starts.is_empty() || starts.ends_with(['.', ';', ':', '-']))
                    && next.starts_with(char::is_lowercase);
            }
            if m.as_str() != "new" {
                return true;
            }
            let before = text[..m.start()].trim_end();
            let word = before
                .rsplit(|c: char| !c.is_alphanumeric() && c != '\'')
                .next()
                .unwrap_or("")
                .to_lowercase();
            before.is_empty()
                || before.ends_with([';', ':', ',', '.'])
                || ["the", "our", "my", "his", "her", "their", "its", "your"]
                    .contains(&word.as_str())
                || word.ends_with("'s")
        })
        .map(|m| m.range())
}

/// What a memory is about, as [`frame`] reads it.
#[derive(Default)]
struct Subject {
    /// Whether its end is still to come.
    open: bool,
    words: BTreeSet<String>,
    values: BTreeSet<String>,
    /// What it was at the first preposition after a word: what it is
    /// when no verb ends it.
    at_preposition: Option<(BTreeSet<String>, BTreeSet<String>)>,
}

/// `text` as frame and values.
pub fn frame(text: &str) -> Frame {
    // Where the change cues are: their words are neither frame nor value.
    let cues: Vec<std::ops::Range<usize>> = cues(text).collect();
    let mut frame = Frame {
        cued: !cues.is_empty(),
        swappable: swappable(text),
        talk: text.contains(['?', '!']),
        additive: ADDITIVE.is_match(text),
        ..Frame::default()
    };
    // Each token as a value (with its kind) or a word, in order.
    let mut tokens: Vec<(Option<Kind>, String)> = Vec::new();
    // What it is about, until its verb.
    let mut subject = Subject {
        open: true,
        ..Subject::default()
    };
    for (i, found) in TOKEN.find_iter(text).enumerate() {
        let in_cue = cues.iter().any(|cue| cue.contains(&found.start()));
        let token = found.as_str();
        let t = token.trim_matches(['.', ',', ':', ';', '\'', '"']);
        if t.is_empty() {
            continue;
        }
        let mut lower = t.to_lowercase();
        // "PRs" is "PR".
        if t.len() > 2
            && t.ends_with('s')
            && t[..t.len() - 1].chars().all(|c| c.is_ascii_uppercase())
        {
            lower.pop();
        }
        // The first word of a sentence, or a word like "the", is written
        // with a capital without being a name.
        let starts_sentence = i == 0 || text[..found.start()].trim_end().ends_with(['.', '!', '?']);
        let kind = if t.starts_with('`') {
            Some(Kind::Name)
        } else if t.chars().any(|c| c.is_ascii_digit()) || CALENDAR_SET.contains(lower.as_str()) {
            Some(Kind::Number)
        } else if t.contains(['.', '_', '/', '@'])
            || (!starts_sentence
                && !STOP_SET.contains(lower.as_str())
                && t.chars().next().is_some_and(char::is_uppercase))
            || (t.chars().count() > 1 && t.chars().all(|c| !c.is_lowercase()))
        {
            Some(Kind::Name)
        } else {
            None
        };
        if subject.open {
            let word = fold(&lower);
            // Its verb, a change word or a colon ends it; when it has no
            // verb the rules know, the first preposition after a word.
            if in_cue
                || COPULA_SET.contains(word.as_str())
                || (!subject.words.is_empty() && kind.is_none() && PREDICATE_SET.contains(&word))
            {
                subject.open = false;
            } else if !subject.words.is_empty()
                && kind.is_none()
                && PREPOSITION_SET.contains(lower.as_str())
            {
                subject
                    .at_preposition
                    .get_or_insert_with(|| (subject.words.clone(), subject.values.clone()));
            } else if kind == Some(Kind::Number) {
                // A number after a preposition is a value ("under 400").
                if subject.at_preposition.is_none() {
                    subject.values.insert(fold(&lower));
                }
            } else {
                // A verb first says what to do ("Keep PRs small"), not what
                // it is about.
                let imperative = i == 0 && PREDICATE_SET.contains(&word);
                if !(STOP_SET.contains(lower.as_str()) || imperative) {
                    subject.words.insert(word);
                    subject.open = !token.ends_with(':');
                }
            }
        }
        if !in_cue && !STOP_SET.contains(lower.as_str()) {
            frame.said.insert(fold(&lower));
        }
        match kind {
            Some(kind) => {
                let value = lower.trim_matches('`').to_owned();
                if let Some(shape) = shape(t) {
                    frame.shapes.insert((kind, value.clone()), shape);
                }
                tokens.push((Some(kind), value))
            }
            None if in_cue => {}
            None => {
                if !STOP_SET.contains(lower.as_str()) {
                    frame.words.insert(fold(&lower));
                }
                tokens.push((None, fold(&lower)));
            }
        }
    }
    let (words, values) = if subject.open {
        subject.at_preposition.unwrap_or_default()
    } else {
        (subject.words, subject.values)
    };
    frame.subject = words;
    frame.subject_values = values;
    frame.tokens = tokens.iter().map(|(_, t)| t.clone()).collect();
    for (at, (kind, value)) in tokens.iter().enumerate() {
        let Some(kind) = kind else { continue };
        let key = (*kind, value.clone());
        let word = |(kind, word): &(Option<Kind>, String)| kind.is_none().then(|| word.clone());
        let content = |(kind, word): &&(Option<Kind>, String)| {
            kind.is_none() && !STOP_SET.contains(word.as_str())
        };
        let slot = frame.slots.entry(key.clone()).or_default();
        // The tokens just before and after it, when they are words, and the
        // nearest content words on either side.
        slot.extend(at.checked_sub(1).and_then(|i| tokens.get(i)).and_then(word));
        slot.extend(tokens.get(at + 1).and_then(word));
        slot.extend(tokens[..at].iter().rev().find(content).and_then(word));
        slot.extend(tokens[at + 1..].iter().find(content).and_then(word));
        frame.values.insert(key);
    }
    frame
}

static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\d{1,2}(?:[:.h]\d\d)?(?:am|pm|h|uhr)?$|^\d{1,2}[:h]\d\d$|^\d{1,2}(?:am|pm|h)$",
    )
    .expect("time pattern")
});

/// The shape of a value written with digits or as an address: runs of
/// digits as "9", runs of letters as "a", the rest as written; a time of
/// day is "TIME", a month "MONTH", a weekday "DAY", a frequency "EVERY".
/// None for a plain name or number word.
fn shape(token: &str) -> Option<String> {
    let lower = token.to_lowercase();
    if let Some(class) = calendar_class(&lower) {
        return Some(class.to_owned());
    }
    let digits = token.chars().any(|c| c.is_ascii_digit());
    if digits && TIME.is_match(token) && !token.chars().all(|c| c.is_ascii_digit()) {
        return Some("TIME".to_owned());
    }
    if !digits && !token.contains(['.', '/', '@', ':', '_', '-']) {
        return None;
    }
    if token.contains('@') {
        return Some("EMAIL".to_owned());
    }
    // An identifier ("LOG_FORMAT") names a setting, not its value.
    if !digits && !token.contains(['.', '/', ':']) && token.contains('_') {
        return None;
    }
    let mut shape = String::new();
    for c in lower.chars() {
        let class = if c.is_ascii_digit() {
            '9'
        } else if c.is_alphabetic() {
            'a'
        } else {
            c
        };
        if !(shape.ends_with(class) && (class == '9' || class == 'a')) {
            shape.push(class);
        }
    }
    Some(shape)
}

/// "MONTH", "DAY" or "EVERY" for a calendar word.
fn calendar_class(word: &str) -> Option<&'static str> {
    let at = CALENDAR.split_whitespace().position(|w| w == word)?;
    Some(match at {
        0..10 => "EVERY",
        _ if DAY_SET.contains(word) => "DAY",
        _ => "MONTH",
    })
}

/// The days of the week, in the five languages (the schedule claims'
/// names of them).
static DAY_SET: LazyLock<BTreeSet<&'static str>> = LazyLock::new(|| {
    super::claims::DAYS
        .iter()
        .flat_map(|day| day.split_whitespace())
        .collect()
});

/// A frame word folded: without a possessive, and stemmed lightly
/// ("pins", "pinned" and "pinning" are "pin"; "expires", "expired" and
/// "expire" are "expir").
fn fold(word: &str) -> String {
    let mut word = word.strip_suffix("'s").unwrap_or(word).to_owned();
    let len = word.chars().count();
    if len >= 5 && word.ends_with("ies") {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if len >= 5
        && ["sses", "xes", "zes", "ches", "shes"]
            .iter()
            .any(|s| word.ends_with(s))
    {
        word.truncate(word.len() - 2);
    } else if len >= 6 && word.ends_with("ing") {
        word.truncate(word.len() - 3);
        undouble(&mut word);
    } else if len >= 5 && word.ends_with("ed") {
        word.truncate(word.len() - 2);
        undouble(&mut word);
    } else if len >= 4 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    if word.chars().count() >= 5 && word.ends_with('e') {
        word.pop();
    }
    word
}

/// "pinn" (of "pinned") is "pin".
fn undouble(word: &mut String) {
    let mut last = word.chars().rev();
    if let (Some(a), Some(b)) = (last.next(), last.next())
        && a == b
        && !matches!(a, 'l' | 's' | 'z')
        && word.chars().count() > 3
    {
        word.pop();
    }
}

/// A value and its kind, as a frame holds it.
type Value = (Kind, String);

/// What two frames share (their words and names), and the values of the
/// older one gone from the newer one and the values that came.
fn compare<'a>(new: &'a Frame, old: &'a Frame) -> (usize, Vec<&'a Value>, Vec<&'a Value>) {
    let shared = new.words.intersection(&old.words).count()
        + new
            .values
            .intersection(&old.values)
            .filter(|(kind, _)| *kind == Kind::Name)
            .count();
    let gone = old.values.difference(&new.values).collect();
    let came = new.values.difference(&old.values).collect();
    (shared, gone, came)
}

/// Why `new` replaces `old` by the frame rule, if it does.
pub fn judge(new: &Frame, old: &Frame) -> Option<String> {
    judge_leaving_out(new, old, 0)
}

/// Whether two numbers are of far apart sizes ("at 2", "6432"): not one
/// value of one thing.
fn far_apart(a: &str, b: &str) -> bool {
    let digits = |v: &str| v.chars().all(|c| c.is_ascii_digit()).then_some(v.len());
    matches!((digits(a), digits(b)), (Some(x), Some(y)) if x.abs_diff(y) >= 2)
}

/// [`judge`] for two memories close in meaning: a newer one that says what
/// changed may leave out up to `more` words of the older frame besides its
/// verb ("Loki retention bumped to 90 days" for "Application logs are
/// retained for 30 days in Loki").
pub fn judge_leaving_out(new: &Frame, old: &Frame, more: usize) -> Option<String> {
    if new.additive || new.talk || old.talk || of_many(old) || other_subjects(new, old) {
        return None;
    }
    // Words of the older frame the newer one leaves out: at most its verb,
    // when the newer one says what changed.
    let left_out: Vec<&String> = old.words.difference(&new.words).collect();
    let (shared, gone, came) = compare(new, old);
    if shared == 0 || gone.is_empty() || came.is_empty() || both_kinds(&gone, &came) {
        return None;
    }
    // A new value in the slot of a gone one: of its kind, beside the same
    // word ("at Acme", "at Globex"; "port 5433", "port 6432").
    let same_slot = |a: &(Kind, String), b: &(Kind, String)| {
        a.0 == b.0
            && !far_apart(&a.1, &b.1)
            && match (new.slots.get(a), old.slots.get(b)) {
                (Some(x), Some(y)) => !x.is_disjoint(y),
                _ => false,
            }
    };
    if !came.iter().any(|c| gone.iter().any(|g| same_slot(c, g))) {
        return None;
    }
    // Without a cue saying something changed, another value in the same
    // frame is as often a second true thing ("speaks French", "speaks
    // German"; "build 41", "build 42") as a new one.
    let verbs = left_out
        .iter()
        .filter(|w| PREDICATE_SET.contains(w.as_str()))
        .count();
    // The older one's verb left out for another verb: another attribute
    // ("lives in Madrid", "works for a company in Berlin").
    let other_verb = verbs > 0
        && new
            .words
            .difference(&old.words)
            .any(|w| PREDICATE_SET.contains(w.as_str()));
    let replaces = new.cued
        && !other_verb
        && gone.len() <= 3
        && (left_out.is_empty() || (left_out.len() - verbs.min(1) <= more && gone.len() == 1));
    replaces.then(|| {
        let list = |values: &[&(Kind, String)]| {
            values
                .iter()
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!("contradicted: now {} (was {})", list(&came), list(&gone))
    })
}

/// Whether a name and a number are both gone and both came: two things
/// said otherwise, so another thing ("The API key for Stripe is rotated
/// monthly", "The API key for Twilio is rotated weekly").
fn both_kinds(gone: &[&(Kind, String)], came: &[&(Kind, String)]) -> bool {
    let both = |values: &[&(Kind, String)]| {
        values.iter().any(|(kind, _)| *kind == Kind::Name)
            && values.iter().any(|(kind, _)| *kind == Kind::Number)
    };
    both(gone) && both(came)
}

/// Why `new` replaces `old` by the shape rule, if it does: a newer memory
/// that says something changed, shares a word or a name with the older
/// one, and puts a value of the same shape in place of one of the older
/// one's ("Loki retention bumped to 90 days" for "Application logs are
/// retained for 30 days in Loki"; "new expiry 2025-06-01" for "expires on
/// 2024-06-01"). Looser than the frame rule about the words, stricter
/// about the values.
pub fn judge_shaped(new: &Frame, old: &Frame) -> Option<String> {
    if !new.cued || new.additive || new.talk || old.talk || of_many(old) {
        return None;
    }
    let (shared, gone, came) = compare(new, old);
    if shared == 0
        || gone.is_empty()
        || came.is_empty()
        || gone.len() > 3
        || both_kinds(&gone, &came)
    {
        return None;
    }
    let (c, g) = came.iter().find_map(|c| {
        let shape = new.shapes.get(*c)?;
        gone.iter()
            .find(|g| g.0 == c.0 && old.shapes.get(**g) == Some(shape) && !far_apart(&c.1, &g.1))
            .map(|g| (c, g))
    })?;
    // Another name on both sides besides the value: another subject
    // ("the Business plan" for "the Starter plan").
    let name = |v: &(Kind, String), other: &(Kind, String)| v.0 == Kind::Name && v != other;
    if gone.iter().any(|v| name(v, g)) && came.iter().any(|v| name(v, c)) {
        return None;
    }
    if contrasted(&new.said, &old.said) || other_subjects(new, old) {
        return None;
    }
    Some(format!("contradicted: now {} (was {})", c.1, g.1))
}

/// Verbs that say what a thing is without a change word: "is", "ist", "é"…
const COPULAS: &str = "is are was were be ist sind es son está están est sont é são fica ficam
liegt";

/// Verbs of things a subject has many of at once ("speaks French" and
/// "speaks German" are both true).
const MANY: &str = "speak support like love enjoy know play visit allergic hate dislike mag habla
hablan fala falam parle parlent spricht sprechen aime aiment gosta gusta gustan";

static COPULA_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| COPULAS.split_whitespace().collect());
/// Words that end what a memory is about when no verb does.
const PREPOSITIONS: &str = "at on in to for from by with via under over after before until since
en con por para sur dans avec pour chez bei mit für auf um em com por para";

static PREPOSITION_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| PREPOSITIONS.split_whitespace().collect());

/// Verbs said of anything, folded.
const GENERIC_VERBS: &str = "use go goe went run ran get got make made take took have ha had keep
kept set put do doe did";

static GENERIC_VERB_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| GENERIC_VERBS.split_whitespace().collect());

/// Words by which the writer speaks of themselves: a subject.
const SELF: &str = "i we user yo nosotros ich wir je nous eu nós";

/// Whether a frame says one of many things a subject has at once
/// ([`MANY`]).
fn of_many(frame: &Frame) -> bool {
    frame.words.iter().any(|w| MANY_SET.contains(w))
}

static SELF_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| SELF.split_whitespace().collect());
static MANY_SET: LazyLock<BTreeSet<String>> =
    LazyLock::new(|| MANY.split_whitespace().map(fold).collect());

/// The most words the part two memories differ in may have on either side
/// for [`judge_swapped`].
const MAX_SWAPPED: usize = 4;

/// Why `new` replaces `old` by the swap rule, if it does: the same
/// sentence with one part said otherwise, after what it is about and its
/// verb ("Priya Raman works at Stripe." and "Priya Raman works at Plaid.";
/// "Tyrell Corp is on premium support." and "… on standard support."). A
/// swap before the verb is another subject ("Service 3 talks to…",
/// "Service 7 talks to…"), and a verb of things had many at once
/// ("speaks") is never a swap.
pub fn judge_swapped(new: &Frame, old: &Frame) -> Option<String> {
    if !new.swappable || !old.swappable || new.additive || old.additive || new.talk || old.talk {
        return None;
    }
    let (a, b) = (&old.tokens, &new.tokens);
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (was, now) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    if was.is_empty() || now.is_empty() || was.len() > MAX_SWAPPED || now.len() > MAX_SWAPPED {
        return None;
    }
    // Both parts start with what they say: a part that starts with a
    // preposition or an article says another thing ("is on the storage
    // team", "is a staff engineer").
    let starts_with_content = |part: &[String]| !STOP_SET.contains(part[0].as_str());
    if was.iter().any(|w| now.contains(w)) || !starts_with_content(was) || !starts_with_content(now)
    {
        return None;
    }
    let said = &a[..prefix];
    // Where the swap is must say what it is: words after it ("on premium
    // support"), or a preposition or a name just before it ("works at
    // Stripe", "runs Ubuntu 20.04"). Right after the verb it may be another
    // thing altogether ("I prefer tabs for indentation", "I prefer concise
    // answers").
    let marked = suffix > 0
        || said.last().is_some_and(|w| {
            STOP_SET.contains(w.as_str()) || old.values.iter().any(|(_, v)| v == w)
        });
    if !marked {
        return None;
    }
    let verb = said
        .iter()
        .position(|w| COPULA_SET.contains(w.as_str()) || PREDICATE_SET.contains(w.as_str()))?;
    // What it is about: a word before the verb, or after it when the verb
    // comes first ("Send the weekly report as…").
    let about = if verb == 0 { &said[1..] } else { &said[..verb] };
    let subject = about
        .iter()
        .any(|w| !STOP_SET.contains(w.as_str()) || SELF_SET.contains(w.as_str()));
    if !subject || said.iter().any(|w| MANY_SET.contains(w)) {
        return None;
    }
    if contrasted(
        &was.iter().cloned().collect(),
        &now.iter().cloned().collect(),
    ) {
        return None;
    }
    Some(format!(
        "contradicted: now {} (was {})",
        now.join(" "),
        was.join(" ")
    ))
}

/// Whether two frames are about two things: their subjects share a word
/// and each has a word the other frame does not have at all ("Alice's
/// flight lands at 3pm", "Alice's meeting moved to 4pm"), or they are
/// numbered otherwise ("Release 2.1", "Release 2.2").
pub fn other_subjects(new: &Frame, old: &Frame) -> bool {
    // A word of one is in the other, or begins one of its words, or one
    // of its words begins it ("remind", "reminder").
    let has = |f: &Frame, w: &String| {
        f.said.contains(w)
            || (w.len() >= 4
                && f.said.iter().any(|x| {
                    x.len() >= 4 && (x.starts_with(w.as_str()) || w.starts_with(x.as_str()))
                }))
    };
    let new_only = new.subject.iter().any(|w| !has(old, w));
    // Another number where it says what it is about: another thing
    // ("Version 3 of the API", "Version 4 of the API").
    let numbered = !new.subject_values.is_empty()
        && !old.subject_values.is_empty()
        && new.subject_values != old.subject_values;
    // Two subjects share a word and each has one of its own ("Alice's
    // flight", "Alice's meeting"); two that share none may be one thing
    // said two ways ("Application logs", "Loki retention").
    let sharing = !new.subject.is_disjoint(&old.subject);
    (sharing && new_only && old.subject.iter().any(|w| !has(new, w))) || numbered
}

/// How much of `old`'s frame `new` holds: of its words and names, how many
/// `new` has too, and how many there are.
pub fn cover(new: &Frame, old: &Frame) -> (usize, usize) {
    let names = |f: &Frame| {
        f.values
            .iter()
            .filter(|(kind, _)| *kind == Kind::Name)
            .map(|(_, v)| v.clone())
            .collect::<BTreeSet<String>>()
    };
    let (new_names, old_names) = (names(new), names(old));
    // Verbs said of anything ("uses", "goes") tell nothing of what it is
    // about.
    let words = |f: &Frame| {
        f.words
            .iter()
            .filter(|w| !GENERIC_VERB_SET.contains(w.as_str()))
            .cloned()
            .collect::<BTreeSet<String>>()
    };
    let (new_words, old_words) = (words(new), words(old));
    let shared =
        new_words.intersection(&old_words).count() + new_names.intersection(&old_names).count();
    (shared, old_words.len() + old_names.len())
}

/// Whether a frame is a statement the loosest rules read: short, neither
/// a question nor an exclamation (talk, as a conversation's turns are).
pub fn statement(frame: &Frame) -> bool {
    !frame.talk && frame.tokens.len() <= MAX_STATEMENT_TOKENS
}

/// Whether `new` may replace `old` by covering it ([`cover`]) or by
/// meaning: it says something changed, adds nothing, is short, neither is
/// talk (a question or an exclamation: the loosest rules read statements
/// only), and they are not about two things of a kind.
pub fn may_cover(new: &Frame, old: &Frame) -> bool {
    new.cued
        && !new.additive
        && !new.talk
        && !old.talk
        && !of_many(old)
        && new.tokens.len() <= MAX_STATEMENT_TOKENS
        && !contrasted(&new.said, &old.said)
        && !other_subjects(new, old)
        && !both_kinds(
            &old.values.difference(&new.values).collect::<Vec<_>>(),
            &new.values.difference(&old.values).collect::<Vec<_>>(),
        )
}

/// How many features [`pair_features`] gives, and where three of them are
/// (the learned judge weighs them by the cosine too).
pub const PAIR_FEATURES: usize = 16;
pub const RESHAPED: usize = 5;
pub const COVER_SHARE: usize = 6;
pub const RESLOTTED: usize = 14;

/// What the learned judge ([`super::learned`]) reads of two frames, each
/// a number from 0 to 1 (see [`super::learned::FEATURES`] for their
/// names, in this order).
pub fn pair_features(new: &Frame, old: &Frame) -> [f32; PAIR_FEATURES] {
    let share = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f32 / b as f32 };
    let union = new.words.union(&old.words).count();
    let words = share(new.words.intersection(&old.words).count(), union);
    let subject = share(
        new.subject.intersection(&old.subject).count(),
        old.subject.len(),
    );
    let gone: Vec<&Value> = old.values.difference(&new.values).collect();
    let came: Vec<&Value> = new.values.difference(&old.values).collect();
    let shared_values = new.values.intersection(&old.values).count();
    // A value of one shape in place of another ("5433" for "6432").
    let reshaped = gone.iter().any(|g| {
        came.iter().any(|c| {
            g.0 == c.0 && old.shapes.contains_key(*g) && old.shapes.get(*g) == new.shapes.get(*c)
        })
    });
    // A value in place of one in the same slot ("at 9am", "at 10:30").
    let reslotted = gone.iter().any(|g| {
        came.iter().any(|c| {
            g.0 == c.0
                && old
                    .slots
                    .get(*g)
                    .zip(new.slots.get(*c))
                    .is_some_and(|(a, b)| !a.is_disjoint(b))
        })
    });
    let (covered, of) = cover(new, old);
    let capped = |n: usize| n.min(3) as f32 / 3.0;
    let length =
        |f: &Frame| f.tokens.len().min(MAX_STATEMENT_TOKENS) as f32 / MAX_STATEMENT_TOKENS as f32;
    let (new_tokens, old_tokens): (BTreeSet<&String>, BTreeSet<&String>) =
        (new.tokens.iter().collect(), old.tokens.iter().collect());
    [
        words,
        subject,
        capped(gone.len()),
        capped(came.len()),
        capped(shared_values),
        f32::from(u8::from(reshaped)),
        share(covered, of),
        f32::from(u8::from(new.additive)),
        f32::from(u8::from(of_many(old))),
        f32::from(u8::from(contrasted(&new.said, &old.said))),
        f32::from(u8::from(other_subjects(new, old))),
        length(new),
        length(old),
        share(
            new_tokens.intersection(&old_tokens).count(),
            new_tokens.union(&old_tokens).count(),
        ),
        f32::from(u8::from(reslotted)),
        share(
            new.subject.iter().filter(|w| old.said.contains(*w)).count(),
            new.subject.len(),
        ),
    ]
}

/// Words naming one of several things of a kind: two memories with two
/// of one group are about two things ("the staging DB", "the production
/// DB"; "the primary region", "the backup region").
const CONTRASTS: [&str; 10] = [
    "north south east west northern southern eastern western nord sud norte sur süd ost",
    "staging stage production prod dev development qa test testing preprod sandbox live demo
    homologação produção pruebas producción préprod",
    "primary secondary backup replica fallback standby principal secundario",
    "personal work private business home office",
    "internal external public private",
    "frontend backend front back mobile web desktop ios android",
    "read write",
    "min max minimum maximum",
    "technical billing procurement legal sales support security finance",
    "beta ga alpha preview stable nightly",
];

static CONTRAST_GROUPS: LazyLock<Vec<BTreeSet<String>>> = LazyLock::new(|| {
    CONTRASTS
        .iter()
        .map(|group| group.split_whitespace().map(fold).collect())
        .collect()
});

/// Whether each of two frames has a word of one group the other lacks.
fn contrasted(new: &BTreeSet<String>, old: &BTreeSet<String>) -> bool {
    CONTRAST_GROUPS.iter().any(|group| {
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
            a.iter().any(|w| group.contains(w) && !b.contains(w))
        };
        only(new, old) && only(old, new)
    })
}

#[cfg(test)]
mod tests;
