//! The words a claim is compared by: lower-cased, without the words that
//! carry no subject or value (articles, pronouns, time words), plurals and
//! common abbreviations folded, so that "the staging DB's" and "Staging
//! databases" compare equal.

use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Words that name nothing a claim is about, in the five languages the
/// rules read (English, Spanish, German, French, Portuguese).
const FILLER: &str = "
a an the this that these those some any its it it's his her their them they he she him
is are was were be been being am has have had will would shall should can could may might
do does did done not no yes also too very really just still now currently today tonight
yesterday tomorrow recently lately finally officially actually apparently anymore longer
already again soon then there here of in on at to for from by with as and or but so if
when while after before since until via per into onto over about than rather instead
update updated fyi note notes heads up btw ps todo reminder remember please new old
last next every each week weeks month months year years day days morning afternoon evening
monday tuesday wednesday thursday friday saturday sunday weekend
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec q1 q2 q3 q4
el la los las un una unos unas lo del al de en con por para que es son está están fue
ya ahora hoy ayer también además desde hasta sus su
der die das den dem des ein eine einen einem einer ist sind war jetzt nun heute auch
seit bis von vom zum zur im am mit für bei und oder aber nicht mehr
le les un une des du au aux est sont était maintenant aujourd'hui aussi depuis jusqu
et ou mais pas plus à chez pour avec sur dans
o os as um uma uns umas do da dos das no na nos nas é são está estão foi agora hoje
também desde até e ou mas não mais com em pelo pela
";

/// Who writes about themselves: the owner of the memory.
const SELF: &str = "i me my mine myself we us our ours ourselves user user's yo mi mis me
nosotros nosotras nuestro nuestra j ich mich mir mein meine wir uns unser unsere je moi mon
ma mes nous notre nos eu meu minha meus minhas nós nosso nossa";

/// Abbreviations written for the same thing.
const SYNONYMS: [(&str, &str); 15] = [
    ("postgres", "postgres"),
    ("db", "database"),
    ("dbs", "database"),
    ("prod", "production"),
    ("k8s", "kubernetes"),
    ("repo", "repository"),
    ("env", "environment"),
    ("config", "configuration"),
    ("svc", "service"),
    ("pg", "postgres"),
    ("postgresql", "postgres"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("mgr", "manager"),
    ("dept", "department"),
];

static FILLER_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| FILLER.split_whitespace().collect());
static SELF_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| SELF.split_whitespace().collect());

/// The word that stands for the memory's owner.
pub const OWNER: &str = "@self";

/// The words of `text` split at anything but letters, digits and inner
/// `-`, `_`, `.` (so "v1.2", "payments-api" and "us-east-1" stay whole).
pub fn raw_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.' || c == '\'' || c == '@')
    })
    .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '@'))
    .filter(|w| !w.is_empty())
}

/// One word folded for comparison: lower-cased, possessive and plural
/// dropped, abbreviations expanded; `None` for a filler word.
pub fn fold(word: &str) -> Option<String> {
    let lower = word.to_lowercase();
    let lower = lower
        .strip_suffix("'s")
        .or_else(|| lower.strip_suffix("’s"))
        .unwrap_or(&lower)
        .to_owned();
    if SELF_SET.contains(lower.as_str()) {
        return Some(OWNER.to_owned());
    }
    if FILLER_SET.contains(lower.as_str()) {
        return None;
    }
    if let Some((_, long)) = SYNONYMS.iter().find(|(short, _)| *short == lower) {
        return Some((*long).to_owned());
    }
    let singular = match lower.strip_suffix('s') {
        Some(stem)
            if stem.chars().count() > 2
                && !stem.ends_with('s')
                && stem.chars().all(char::is_alphabetic) =>
        {
            stem.to_owned()
        }
        _ => lower,
    };
    Some(singular)
}

/// The folded words of `text`.
pub fn folded(text: &str) -> BTreeSet<String> {
    raw_words(text).filter_map(fold).collect()
}

/// One automaton for many patterns, with room for its lazy DFA: a set of
/// this size with Unicode word boundaries fills the default cache at once,
/// and the search then falls back to a far slower engine.
pub fn fast_set<I, S>(patterns: I) -> Result<regex::RegexSet, regex::Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    regex::RegexSetBuilder::new(patterns)
        .dfa_size_limit(64 << 20)
        .size_limit(64 << 20)
        .build()
}

/// Whether `word` is written as a name: its first letter upper-case.
pub fn capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_fold_to_what_they_name() {
        assert_eq!(
            folded("The staging DB's port"),
            ["database", "port", "staging"]
                .map(String::from)
                .into_iter()
                .collect()
        );
        assert_eq!(folded("I prefer"), folded("we prefer"));
        assert!(folded("payments-api on us-east-1").contains("us-east-1"));
    }
}
