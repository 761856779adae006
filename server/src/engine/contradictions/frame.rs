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
const CHANGE_CUES: &str = r"now|no longer|anymore|any more|moved|switched|switch|changed|raised|lowered|bumped|increased|decreased|reduced|scaled|expanded|upgraded|downgraded|migrated|renamed|reassigned|transferred|replaced|instead|rescheduled|postponed|pushed|slipped|delayed|reopened|lifted|took over|from now on|as of|updated|relicensed|re-estimated|relocated|reverted|reversed|promoted|became|dropped|dropping|cancell?ed|retired|decommissioned|set to|adjusted|ahora|ya no|cambi[óoa]|cambiamos|movimos|migramos|aplaz\w+|pospus\w+|dej[óa]|reprogram\w+|jetzt|nun|nicht mehr|inzwischen|verschiebt|verschoben|geändert|gewechselt|umgestellt|erhöht|gesenkt|stattdessen|maintenant|désormais|ne \w+ plus|déplacée?|changée?|migrée?|reportée?|augmentée?|au lieu de|annulée?|remplacée?|agora|não \w+ mais|mudou|mudamos|passou|remarcad[oa]|adiad[oa]|aumentou|em vez de|voltamos";

static STOP_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| STOP.split_whitespace().collect());
static PREDICATE_SET: LazyLock<BTreeSet<String>> =
    LazyLock::new(|| PREDICATES.split_whitespace().map(fold).collect());
static CALENDAR_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| CALENDAR.split_whitespace().collect());
static CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)\b(?:{CHANGE_CUES})\b")).expect("change cue pattern")
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
    /// Whether it says something changed.
    cued: bool,
    /// Whether it adds a value ("also").
    additive: bool,
}

impl Frame {
    /// Whether it says something changed.
    pub fn cued(&self) -> bool {
        self.cued
    }
}

/// Whether `text` says something changed, as its frame would
/// ([`Frame::cued`]).
pub fn cued(text: &str) -> bool {
    CUE.is_match(text)
}

/// `text` as frame and values.
pub fn frame(text: &str) -> Frame {
    // Where the change cues are: their words are neither frame nor value.
    let cues: Vec<std::ops::Range<usize>> = CUE.find_iter(text).map(|m| m.range()).collect();
    let mut frame = Frame {
        cued: !cues.is_empty(),
        additive: ADDITIVE.is_match(text),
        ..Frame::default()
    };
    // Each token as a value (with its kind) or a word, in order.
    let mut tokens: Vec<(Option<Kind>, String)> = Vec::new();
    for (i, found) in TOKEN.find_iter(text).enumerate() {
        let in_cue = cues.iter().any(|cue| cue.contains(&found.start()));
        let token = found.as_str();
        let t = token.trim_matches(['.', ',', ':', ';', '\'', '"']);
        if t.is_empty() {
            continue;
        }
        let lower = t.to_lowercase();
        let kind = if t.starts_with('`') {
            Some(Kind::Name)
        } else if t.chars().any(|c| c.is_ascii_digit()) || CALENDAR_SET.contains(lower.as_str()) {
            Some(Kind::Number)
        } else if t.contains(['.', '_', '/', '@'])
            || (i > 0 && t.chars().next().is_some_and(char::is_uppercase))
            || (t.chars().count() > 1 && t.chars().all(|c| !c.is_lowercase()))
        {
            Some(Kind::Name)
        } else {
            None
        };
        match kind {
            Some(kind) => tokens.push((Some(kind), lower.trim_matches('`').to_owned())),
            None if in_cue => {}
            None => {
                if !STOP_SET.contains(lower.as_str()) {
                    frame.words.insert(fold(&lower));
                }
                tokens.push((None, fold(&lower)));
            }
        }
    }
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

/// Why `new` replaces `old` by the frame rule, if it does.
pub fn judge(new: &Frame, old: &Frame) -> Option<String> {
    judge_leaving_out(new, old, 0)
}

/// [`judge`] for two memories close in meaning: a newer one that says what
/// changed may leave out up to `more` words of the older frame besides its
/// verb ("Loki retention bumped to 90 days" for "Application logs are
/// retained for 30 days in Loki").
pub fn judge_leaving_out(new: &Frame, old: &Frame, more: usize) -> Option<String> {
    if new.additive {
        return None;
    }
    // Words of the older frame the newer one leaves out: at most its verb,
    // when the newer one says what changed.
    let left_out: Vec<&String> = old.words.difference(&new.words).collect();
    let shared = new.words.intersection(&old.words).count()
        + new
            .values
            .intersection(&old.values)
            .filter(|(kind, _)| *kind == Kind::Name)
            .count();
    let gone: Vec<&(Kind, String)> = old.values.difference(&new.values).collect();
    let came: Vec<&(Kind, String)> = new.values.difference(&old.values).collect();
    if shared == 0 || gone.is_empty() || came.is_empty() {
        return None;
    }
    // A new value in the slot of a gone one: of its kind, beside the same
    // word ("at Acme", "at Globex"; "port 5433", "port 6432").
    let same_slot = |a: &(Kind, String), b: &(Kind, String)| {
        a.0 == b.0
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
    let replaces = new.cued
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

#[cfg(test)]
mod tests {
    use super::*;

    fn replaces(new: &str, old: &str) -> bool {
        judge(&frame(new), &frame(old)).is_some()
    }

    #[test]
    fn the_same_frame_with_another_value_replaces_it() {
        assert!(replaces(
            "Primary MySQL host is now db-prod-7.dc3.example.net after the DC2 decommission.",
            "Primary MySQL host: db-prod-1.dc2.example.net"
        ));
        assert!(replaces(
            "Alice works at Globex now.",
            "Alice works at Acme."
        ));
        assert!(!replaces("Alice speaks German.", "Alice speaks French."));
        assert!(replaces(
            "The cluster has 4 nodes now.",
            "The cluster has 8 nodes."
        ));
        // Another value without a cue: a second thing, not a change.
        assert!(!replaces(
            "alpha fact 4 from before the backup",
            "alpha fact 3 from before the backup"
        ));
        assert!(!replaces(
            "Contoso's CTO is Priyanka Shah.",
            "Contoso's CEO is David Olsen."
        ));
        // The older frame is not all in the newer one.
        assert!(!replaces(
            "The admin dashboard builds with Node 20.",
            "The marketing site builds with Node 18."
        ));
    }
}
