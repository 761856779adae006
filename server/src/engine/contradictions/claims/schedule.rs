//! When something recurring happens, as a claim: "Maya's piano lessons
//! are on Tuesdays at 4pm", "La daily pasa a las 10:30", "Point hebdo
//! client : mardi 16h". Its subject is what the sentence names besides the
//! day and the time; its value the day and the time.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use regex::Regex;

use super::Claim;
use crate::engine::contradictions::frame;
use crate::engine::contradictions::words::{capitalised, fold, raw_words};

/// The days of the week in the five languages, Monday first: each day's
/// names, separated by spaces.
pub(in crate::engine::contradictions) const DAYS: [&str; 7] = [
    "monday lunes montag lundi segunda",
    "tuesday martes dienstag mardi terça terca",
    "wednesday miércoles miercoles mittwoch mercredi quarta",
    "thursday jueves donnerstag jeudi quinta",
    "friday viernes freitag vendredi sexta",
    "saturday sábado sabado samstag samedi",
    "sunday domingo sonntag dimanche",
];

/// A time of day: "16:00", "4pm", "10h", "19h30", "um 9 Uhr", "a las 9".
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:\b(?P<h>\d{1,2})(?::(?P<m>\d{2})|h(?P<hm>\d{2})?)(?:\s?(?P<ap>am|pm))?\b|\b(?P<h2>\d{1,2})\s?(?P<ap2>am|pm|uhr)\b|\b(?:at|a las|às|à|um)\s+(?P<h3>\d{1,2})\b)",
    )
    .expect("time pattern")
});

/// Words that say nothing of what happens: verbs of having, being and
/// changing, in the five languages.
const NOT_WHAT: &str = "has have had tengo tiene tienen tenemos tem têm temos hat habe haben
hast ai as avons ont pasa pasan passe passent passa passam cambié cambió cambiamos changed
moved move shifted switched rescheduled verschoben verlegt déplacé déplacée mudou mudamos
remarcado remarcada now ahora jetzt maintenant agora from every each cada jeden jede chaque
toda todo todas todos week weeks semana semanas woche wochen semaine semaines uhr runs run
starts start begins begin happens happen takes take place";

static NOT_WHAT_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| NOT_WHAT.split_whitespace().collect());

/// Each day's names, with the day they name (0 for Monday).
static DAY_OF: LazyLock<HashMap<&'static str, usize>> = LazyLock::new(|| {
    DAYS.iter()
        .enumerate()
        .flat_map(|(day, names)| names.split_whitespace().map(move |name| (name, day)))
        .collect()
});

/// The day a word names (0 for Monday), plurals included.
fn day(word: &str) -> Option<usize> {
    // Day names are 5 to 10 letters long (and an "s" more).
    if !(5..=13).contains(&word.len()) {
        return None;
    }
    let lower = word.to_lowercase();
    DAY_OF.get(lower.as_str()).copied().or_else(|| {
        let stem = lower.strip_suffix('s')?;
        DAY_OF.get(stem).copied()
    })
}

/// What `sentence` says of when something recurring happens, when it
/// names a time of day (or a day, saying it changed).
pub(super) fn schedule(sentence: &str) -> Option<Claim> {
    let mut value = BTreeSet::new();
    let mut said = Vec::new();
    for caps in TIME.captures_iter(sentence) {
        let hour: u32 = ["h", "h2", "h3"]
            .iter()
            .find_map(|g| caps.name(g))?
            .as_str()
            .parse()
            .ok()?;
        let minute: u32 = ["m", "hm"]
            .iter()
            .find_map(|g| caps.name(g))
            .map_or(Some(0), |m| m.as_str().parse().ok())?;
        let pm = ["ap", "ap2"]
            .iter()
            .find_map(|g| caps.name(g))
            .is_some_and(|m| m.as_str().eq_ignore_ascii_case("pm"));
        let hour = if pm && hour < 12 { hour + 12 } else { hour };
        if hour > 23 || minute > 59 {
            return None;
        }
        value.insert(format!("{hour:02}:{minute:02}"));
        said.push(caps.get(0).expect("a match").as_str());
    }
    let timed = !value.is_empty();
    // A day alone is read only of a sentence that says it changed: most
    // sentences name neither, and are told so quickly.
    if !timed && !frame::cued(sentence) {
        return None;
    }
    let words: Vec<&str> = raw_words(sentence).collect();
    for word in &words {
        if let Some(d) = day(word) {
            value.insert(DAYS[d].split_whitespace().next()?.to_owned());
        }
    }
    if value.is_empty() {
        return None;
    }
    let first = words.first().copied().unwrap_or_default();
    let mut subject = BTreeSet::new();
    let mut names = BTreeSet::new();
    for word in &words {
        let lower = word.to_lowercase();
        if day(word).is_some()
            || word.chars().any(|c| c.is_ascii_digit())
            || NOT_WHAT_SET.contains(lower.as_str())
            || said
                .iter()
                .any(|s| s.to_lowercase().split_whitespace().any(|t| t == lower))
        {
            continue;
        }
        let Some(folded) = fold(word).filter(|w| w.chars().count() >= 3) else {
            continue;
        };
        if capitalised(word) && !std::ptr::eq(*word, first) {
            names.insert(folded.clone());
        }
        subject.insert(folded);
    }
    (!subject.is_empty()).then(|| Claim {
        attribute: "schedule".to_owned(),
        value_text: value.iter().cloned().collect::<Vec<_>>().join(" "),
        subject,
        names,
        value,
        rejected: BTreeSet::new(),
        negated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_and_a_time_are_the_value_and_the_rest_the_subject() {
        let claim = schedule("Maya's piano lessons are on Tuesdays at 4pm.").unwrap();
        assert_eq!(
            claim.value,
            ["16:00", "tuesday"].map(String::from).into_iter().collect()
        );
        assert!(claim.subject.contains("piano") && claim.subject.contains("maya"));
        let claim = schedule("Point hebdo client : mardi 16h.").unwrap();
        assert_eq!(claim.value_text, "16:00 tuesday");
        // A day alone is a schedule only when said to have changed.
        assert!(schedule("Gym on Mondays.").is_none());
        assert!(schedule("Gym moved to Thursdays.").is_some());
        assert!(schedule("The build is green.").is_none());
    }
}
