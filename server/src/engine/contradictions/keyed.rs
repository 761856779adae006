//! Claims of an attribute named by a noun phrase, whatever the noun:
//! "Hugo's desk is 5A-21", "the tech lead for the checkout rewrite is
//! Paolo", "API gateway timeout: 30s", "Production LOG_LEVEL set to WARN",
//! "we switched GP to Dr. Okoye". The attribute is the phrase's last noun
//! (its head); the subject is every other word of the phrase, so two
//! claims are of the same thing only when the whole phrase is the same
//! ("skip-level manager" is not "manager", "primary on-call" is not
//! "secondary on-call").

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use super::claims::{Claim, NEGATION, Value, canonical, subject_before, value_phrase};
use super::words::{OWNER, capitalised, fold, folded, raw_words};

/// The noun phrase an attribute is named by: a few words from the start
/// of the clause.
const HEAD: &str = r"(?P<h>[^\s:;,()=]+(?:\s+[^\s:;,()=]+){0,6}?)";

/// Words that say "is" (and the prepositions a value may follow).
const IS: &str = r"(?:(?:should\s+|must\s+)?(?:go|goes|be\s+sent|are\s+sent|is\s+sent|get\s+sent|gets\s+sent)\s+to|is|are|remains|is\s+still|es|son|sigue\s+siendo|ist|sind|bleibt|beträgt|liegt\s+bei|läuft\s+(?:auf|mit)|est|sont|reste|é|são|continua\s+sendo)(?:\s+(?:now|ahora|jetzt|nun|maintenant|désormais|agora))?(?:\s+(?:on|at|in|en|auf|bei|am|um|à|au|em|no|na|el|le|o|a))?";

/// Verbs saying a value was changed to another, with what comes between
/// them and the new value.
const CHANGED_TO: &str = r"(?:(?:was|were|has\s+been|have\s+been|got|is|are|just|now|officially)\s+)*(?:changed|moved|raised|lowered|increased|decreased|reduced|bumped|cut|extended|adjusted|updated|set|pushed(?:\s+back)?|slipped|postponed|delayed|rescheduled|renamed|switched|transferred|upgraded|downgraded|migrated|reassigned|shifted|brought\s+forward|pulled\s+in|went\s+(?:up|down)|dropped|reset|changed\s+over)\s+(?:(?:from|von|de|desde|du)\s+(?P<f>[^,;]+?)\s+)?(?:to|until|till|back\s+to)
|(?:se\s+)?(?:cambió|cambia|movió|mueve|aplazó|aplaza|pospuso|trasladó|pasó|pasa|subió|bajó|retrasó|adelantó|actualizó|renombró|ha\s+cambiado|ha\s+pasado)\s+(?:(?:de|desde)\s+(?P<f2>[^,;]+?)\s+)?(?:a|al|a\s+la|para|hasta)
|(?:verschiebt\s+sich|ändert\s+sich|wurde\s+(?:geändert|verschoben|erhöht|gesenkt|umbenannt|verlegt))\s+(?:(?:von)\s+(?P<f3>[^,;]+?)\s+)?(?:auf|nach|zu|in)
|(?:(?:a\s+été|ont\s+été|est|sont|a)\s+)?(?:déplacée?s?|reportée?s?|repoussée?s?|changée?s?|passée?s?|augmentée?s?|modifiée?s?|renommée?s?|avancée?s?|décalée?s?|baissée?s?)\s+(?:(?:de|du)\s+(?P<f4>[^,;]+?)\s+)?(?:à|au|aux|en|pour|le|à\s+la)
|(?:passe|passent)\s+(?:à|au|de\s+\S+\s+à)
|(?:(?:foi|foram|é)\s+)?(?:remarcad[oa]s?|adiad[oa]s?|alterad[oa]s?|mudad[oa]s?|movid[oa]s?|transferid[oa]s?|aumentad[oa]s?|renomead[oa]s?|antecipad[oa]s?|reduzid[oa]s?)\s+(?:(?:de|do|da)\s+(?P<f5>[^,;]+?)\s+)?(?:para|pra)
|(?:mudou|passou|subiu|caiu)\s+(?:(?:de|do|da)\s+(?P<f6>[^,;]+?)\s+)?(?:para|pra)(?:\s+ser)?";

/// Optional words before the head of a clause.
const LEAD: &str = r"^\s*(?:(?:fyi|update|note|ps|btw|heads\s+up)\s*[:,-]\s*)?";

struct Keyed {
    pattern: Regex,
    /// The value may be any phrase (a note "key: value", or a change);
    /// else it must be written as a name, number or identifier.
    any_value: bool,
}

static KEYED: LazyLock<Vec<Keyed>> = LazyLock::new(|| {
    let changed = CHANGED_TO.replace('\n', "");
    [
        // "API gateway timeout: 30s", "Elena Sokolova - title: ...".
        (
            format!(r"{LEAD}(?:(?P<o>[^:;,()]+?)\s+[-–—]\s+)?{HEAD}\s*(?::|=)\s+(?P<v>\S.*)"),
            true,
        ),
        // "Hugo's desk is 5A-21", "the tech lead for X is Paolo".
        (format!(r"{LEAD}{HEAD}\s+{IS}\s+(?P<v>\S.*)"), false),
        // "Die Frist wurde auf den 10. Mai verschoben".
        (
            format!(r"{LEAD}{HEAD}\s+(?:wurde|wird|ist)\s+(?:jetzt\s+|nun\s+)?(?:auf|nach|zu|in)\s+(?:den\s+|die\s+|das\s+|dem\s+)?(?P<v>.+?)\s+(?:verschoben|geändert|aktualisiert|erhöht|gesenkt|verlegt|umgestellt|angehoben|reduziert|gesetzt|vorgezogen|upgegradet)\b"),
            true,
        ),
        // "Production LOG_LEVEL set to WARN", "Code freeze moved to ...".
        (format!(r"{LEAD}{HEAD}\s+(?:{changed})\s+(?P<v>\S.*)"), true),
    ]
    .into_iter()
    .map(|(pattern, any_value)| Keyed {
        pattern: Regex::new(&format!("(?i){pattern}")).expect("keyed pattern"),
        any_value,
    })
    .collect()
});

/// "switched from Jenkins to GitHub Actions", "replaced A with B", "B
/// instead of A": a value replaced by another, whatever it is of.
static REPLACED: LazyLock<[Regex; 4]> = LazyLock::new(|| {
    let item = r"[^\s,;:()]+(?:\s+[^\s,;:()]+){0,2}?";
    [
        format!(r"(?i)\b(?:switched|moved|migrated|changed|went|transitioned|converted|renamed|cambiamos|cambió|migramos|migró|pasamos|pasó|umgestellt|gewechselt|wechselte|wechselten|migré|passé|passée|mudamos|mudou|migramos|migrou|passamos|trocamos|trocou)\s+(?:[^\s,;:()]+\s+){{0,4}}?(?:from|de|desde|von|du|da|do)\s+(?P<f>{item})\s+(?:to|a|al|auf|zu|nach|à|au|vers|para)\s+(?P<v>\S.*)"),
        format!(r"(?i)\b(?:replaced|reemplazamos|reemplazó|sustituimos|ersetzt(?:en)?|remplacé|remplaçons|substituímos|substituiu|trocamos)\s+(?P<f>{item})\s+(?:with|by|por|durch|par|pelo|pela|por)\s+(?P<v>\S.*)"),
        format!(r"(?i)\b(?:dropp(?:ed|ing)|abandon(?:ed|ing))\s+(?P<f>{item})\s+(?:for|in\s+favou?r\s+of)\s+(?P<v>\S.*)"),
        // Ended, with nothing in its place: "we stopped using Datadog".
        format!(r"(?i)\b(?:stopped\s+using|no\s+longer\s+uses?|(?:have|has|we|they)\s+dropped|retired|decommissioned|sunset|shut\s+down|got\s+rid\s+of|uninstalled|ya\s+no\s+usa\w*|dej(?:amos|ó)\s+de\s+usar|deix(?:amos|ou)\s+de\s+usar|n'utilis\w+\s+plus|não\s+usa\w*\s+mais)\s+(?:the\s+|our\s+|el\s+|la\s+|o\s+|a\s+|le\s+)?(?P<f>{item})\s*(?P<v>)(?:$|[,.;:!?]|\s+(?:for|in|on|at|as|since|after|because|and|y|et|e|und)\b)"),
    ]
    .map(|p| Regex::new(&p).expect("replaced pattern"))
});

/// "Luis is now the PM for the mobile app": the attribute after the
/// value.
static ROLE_OF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?P<v>\p{Lu}[\w'-]*(?:\s+\p{Lu}[\w'-]*)?)\s+(?:is|became|has\s+become|took\s+over\s+as|is\s+taking\s+over\s+as|es|ist|est|é)\s+(?:now\s+|ahora\s+|jetzt\s+|maintenant\s+|désormais\s+|agora\s+)?(?:the\s+|el\s+|la\s+|der\s+|die\s+|le\s+|o\s+|a\s+)?(?:new\s+)?(?P<h>[^\s:;,()=]+(?:\s+[^\s:;,()=]+){0,2}?)\s+(?P<s>(?:for|of|on|at|de|del|für|von|du|da|do)\s+[^,.;:!?]+?)\s*(?:$|[,.;:!?])",
    )
    .expect("role pattern")
});

/// "Devi is Marta's manager now": the same, of a name's attribute.
static ROLE_OF_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?P<v>\p{Lu}[\w-]*(?:\s+\p{Lu}[\w-]*)?)\s+(?:is|became|has\s+become)\s+(?:now\s+)?(?P<s>\p{Lu}[\w-]*(?:\s+\p{Lu}[\w-]*)?)(?:'s|’s)\s+(?:new\s+)?(?P<h>[^\s:;,()=]+(?:\s+[^\s:;,()=]+){0,2}?)(?:\s+now)?\s*(?:$|[,.;:!?])",
    )
    .expect("role of a name pattern")
});

/// "X ships on 2 October": when something happens.
static DATED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){LEAD}{HEAD}\s+(?:(?:is|are|will|will\s+be|is\s+now|now|should|must)\s+)?(?:ships?|launch(?:es)?|starts?|begins?|ends?|happens?|takes\s+place|goes\s+(?:live|out)|go\s+(?:live|out)|scheduled|planned|due|releases?|lands?|closes?|opens?|expires?|renews?|kicks\s+off|held|set)\s+(?:(?:on|for|in|by|at|until)\s+)?(?P<v>\S.*)"
    ))
    .expect("dated pattern")
});

/// A date: a month or weekday named, or written in digits.
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|q[1-4]|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|lunes|martes|miércoles|jueves|viernes|sábados?|domingos?|montags?|dienstags?|mittwochs?|donnerstags?|freitags?|samstags?|sonntags?|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|segunda|terça|quarta|quinta|sexta|januar|februar|märz|juni|juli|oktober|dezember|janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro|\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?)\b",
    )
    .expect("date pattern")
});

/// "The frontend repo uses npm": what something runs on or with (one of
/// several, perhaps), and "… switched to pnpm": what it changed to.
static USES: LazyLock<[Regex; 3]> = LazyLock::new(|| {
    let plain = r"uses|use|runs\s+on|runs|goes\s+through|go\s+through|(?:is|are)\s+(?:handled|done|managed|tracked|run)\s+(?:by|in|with|through|via|on)|is\s+hosted\s+(?:on|at|by)|is\s+built\s+(?:with|on|from)|is\s+deployed\s+(?:on|to)|corre\s+en|usa|funciona\s+(?:en|con)|se\s+ejecuta\s+en|läuft\s+(?:auf|in|bei|mit)|nutzt|verwendet|tourne\s+sur|utilise|est\s+hébergée?\s+(?:sur|chez)|roda\s+(?:na|no|em)|usa|utiliza|está\s+hospedad[oa]\s+(?:na|no|em)";
    let changed = r"now\s+goes\s+(?:through|via|to)|now\s+go\s+(?:through|via|to)|(?:is|are)\s+now\s+(?:handled|done|managed|tracked|run)\s+(?:by|in|with|through|via|on)|now\s+(?:handled|done|managed|tracked)\s+(?:by|in|with|through|via|on)|(?P<moved>(?:has\s+|have\s+|was\s+|were\s+|got\s+)?moved\s+(?:over\s+)?to)|now\s+uses|now\s+runs(?:\s+on)?|is\s+now\s+(?:on|hosted\s+on|built\s+with)|are\s+now\s+on|(?:has\s+|have\s+|was\s+|were\s+|got\s+)?(?:switched|migrated|transitioned)\s+(?:over\s+)?to|ahora\s+(?:usa|corre\s+en|funciona\s+en)|está\s+ahora\s+en|se\s+(?:migró|pasó|cambió)\s+a|(?:läuft|ist)\s+jetzt\s+auf|nutzt\s+jetzt|wurde\s+auf|utilise\s+désormais|utilise\s+maintenant|est\s+(?:maintenant|désormais)\s+sur|(?:a\s+)?migré\s+(?:vers|sur)|est\s+passée?\s+(?:à|sur)|agora\s+(?:usa|roda\s+(?:na|no|em))|migrou\s+para|mudou\s+para";
    let verb_first = r"\b(?:migrated|switched|migramos|movimos|cambiamos|mudamos|migrámos|passamos|trocamos|haben|avons\s+migré|a\s+migré)\s+(?:(?:the|our|its|a|o|el|la|los|las|os|as|le|les|la|die|den|das|unser(?:e|en)?|notre|nuestr[oa]|noss[oa])\s+)?(?P<h>[^\s:;,()=]+(?:\s+[^\s:;,()=]+){0,3}?)\s+(?:(?:from|da|do|de|del|von|desde|du)\s+(?P<f>\S+(?:\s+\S+){0,2}?)\s+)?(?:to|para|a|al|auf|nach|à|vers|en|zu)\s+(?P<v>\S.*)";
    [
        format!(r"(?i){LEAD}{HEAD}\s+(?:{plain})\s+(?P<v>\S.*)"),
        format!(r"(?i){LEAD}{HEAD}\s+(?:{changed})\s+(?P<v>\S.*)"),
        format!(r"(?i){verb_first}"),
    ]
    .map(|p| Regex::new(&p).expect("uses pattern"))
});

/// "(we) switched GP to Dr. Okoye": the attribute after the verb.
static SWITCHED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:switched|changed|moved|updated|reassigned|transferred|set|renamed)\s+(?:(?:its|their|his|her|my|our|the)\s+)?(?P<h>[^\s:;,()=]+(?:\s+[^\s:;,()=]+){0,3}?)\s+(?:(?:from)\s+(?P<f>[^,;]+?)\s+)?to\s+(?P<v>\S.*)",
    )
    .expect("switched pattern")
});

/// Words that make a clause's head something other than an attribute.
const NOT_HEADS: &str = "decision decisions policy note notes update updates reminder todo fyi
lesson lessons tip idea context question reason summary warning important why because however
also result results outcome next action actions ps btw asked agreed decided
reversed confirmed cancelled canceled done fixed approved rejected reverted dropped voltamos
atrás décision annulée decisión entscheidung";

static NOT_HEAD_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| NOT_HEADS.split_whitespace().collect());

/// Words that split a head into its attribute and what it is of.
const OF: [&str; 16] = [
    "of", "for", "at", "in", "on", "de", "del", "da", "do", "von", "für", "der", "du", "des",
    "with", "con",
];

/// Words a head does not start with.
const PREPOSITIONS: [&str; 10] = [
    "to", "a", "al", "en", "para", "nach", "auf", "à", "vers", "zu",
];

/// Nouns of a date, whose attribute is what they are the date of ("the
/// date of the delivery": the delivery).
const DATE_NOUNS: [&str; 7] = ["date", "fecha", "datum", "data", "termin", "día", "jour"];

/// Attributes named by two words.
const COMPOUNDS: [&str; 14] = [
    "phone number",
    "mobile number",
    "cell number",
    "email address",
    "e-mail address",
    "job title",
    "due date",
    "time zone",
    "rate limit",
    "default branch",
    "main branch",
    "base url",
    "tech lead",
    "team lead",
];

/// Articles a noun may follow.
const ARTICLES: [&str; 18] = [
    "the", "el", "la", "los", "las", "der", "die", "das", "den", "dem", "le", "les", "l", "o",
    "os", "as", "a", "des",
];

/// Words that say a clause is a sentence rather than a value.
const VERBS: &str = "is are was were will would has have had be been being es son está
fue ist sind war wird hat est sont était sera ont é são foi será tem";

static VERB_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| VERBS.split_whitespace().collect());

/// Every pattern of this module in one automaton, in the order
/// [`keyed`] asks for them: REPLACED (0-3), KEYED (4-7), ROLE_OF_NAME
/// (8), ROLE_OF (9), DATED (10), USES (11-13), SWITCHED (14).
static ANY_KEYED: LazyLock<RegexSet> = LazyLock::new(|| {
    let all: Vec<&str> = REPLACED
        .iter()
        .chain(KEYED.iter().map(|k| &k.pattern))
        .chain([&*ROLE_OF_NAME, &*ROLE_OF, &*DATED])
        .chain(USES.iter())
        .chain([&*SWITCHED])
        .map(Regex::as_str)
        .collect();
    assert_eq!(all.len(), 15, "the indices keyed() asks for");
    super::words::fast_set(all).expect("keyed patterns")
});

/// The claims of one sentence of the keyed kinds.
pub(super) fn keyed(sentence: &str, claims: &mut Vec<Claim>) {
    // One scan of the sentence says which patterns to run for captures.
    let matched = ANY_KEYED.matches(sentence);
    let hit = |i: usize| matched.matched(i);
    for (i, pattern) in REPLACED.iter().enumerate() {
        if !hit(i) {
            continue;
        }
        if let Some(caps) = pattern.captures(sentence)
            && let (Some(f), Some(v)) = (caps.name("f"), caps.name("v"))
            && let Some(from) = value_phrase(strip_article(f.as_str()), Value::Phrase)
        {
            let before = subject_before(&sentence[..caps.get(0).expect("a match").start()]);
            let mut subject = folded(before);
            if subject.is_empty() {
                subject.insert(OWNER.to_owned());
            }
            let at = claims.len();
            if v.as_str().is_empty() {
                claims.push(Claim {
                    attribute: "replaced".to_owned(),
                    subject,
                    names: BTreeSet::new(),
                    value: BTreeSet::new(),
                    value_text: String::new(),
                    rejected: BTreeSet::new(),
                    negated: false,
                    changed: true,
                });
            } else {
                push(
                    claims,
                    "replaced".to_owned(),
                    subject,
                    BTreeSet::new(),
                    v.as_str(),
                    true,
                    true,
                );
            }
            if let Some(claim) = claims.get_mut(at) {
                claim.rejected = folded(&from);
                if claim.rejected.is_empty() {
                    claims.truncate(at);
                }
            }
        }
    }
    if NEGATION.is_match(sentence) {
        return;
    }
    for (i, rule) in KEYED.iter().enumerate() {
        if !hit(4 + i) {
            continue;
        }
        let Some(caps) = rule.pattern.captures(sentence) else {
            continue;
        };
        let (Some(h), Some(v)) = (caps.name("h"), caps.name("v")) else {
            continue;
        };
        let first = sentence.trim_start().starts_with(h.as_str());
        let owner = caps.name("o").map_or("", |o| o.as_str());
        when(claims, sentence, h.as_str(), v.as_str());
        let Some((attribute, subject, names)) = head(h.as_str(), first, owner) else {
            continue;
        };
        push(
            claims,
            attribute,
            subject,
            names,
            v.as_str(),
            rule.any_value,
            false,
        );
    }
    if hit(8)
        && let Some(caps) = ROLE_OF_NAME.captures(sentence)
        && let (Some(h), Some(v), Some(of)) = (caps.name("h"), caps.name("v"), caps.name("s"))
    {
        let phrase = format!("{} of {}", h.as_str(), of.as_str());
        if let Some((attribute, subject, names)) = head(&phrase, false, "") {
            push(claims, attribute, subject, names, v.as_str(), false, false);
        }
    }
    if hit(9)
        && let Some(caps) = ROLE_OF.captures(sentence)
        && let (Some(h), Some(v), Some(of)) = (caps.name("h"), caps.name("v"), caps.name("s"))
    {
        let phrase = format!("{} {}", h.as_str(), of.as_str());
        if let Some((attribute, subject, names)) = head(&phrase, false, "") {
            push(claims, attribute, subject, names, v.as_str(), false, false);
        }
    }
    if hit(10)
        && let Some(caps) = DATED.captures(sentence)
        && let (Some(h), Some(v)) = (caps.name("h"), caps.name("v"))
        && let Some(date) = value_phrase(v.as_str(), Value::Phrase)
        && DATE.is_match(&date)
    {
        let text = h.as_str();
        let raw: Vec<&str> = raw_words(text).collect();
        let first = sentence.trim_start().starts_with(text);
        let subject = folded(text);
        if raw.len() <= 7 && !subject.is_empty() && !subject.contains(OWNER) {
            let names = raw
                .iter()
                .enumerate()
                .filter(|(i, w)| !(first && *i == 0) && capitalised(w))
                .filter_map(|(_, w)| fold(w))
                .collect();
            push(
                claims,
                "date".to_owned(),
                subject,
                names,
                v.as_str(),
                true,
                false,
            );
        }
    }
    for (i, pattern) in USES.iter().enumerate() {
        if !hit(11 + i) {
            continue;
        }
        if let Some(caps) = pattern.captures(sentence)
            && let (Some(h), Some(v)) = (caps.name("h"), caps.name("v"))
        {
            let text = h.as_str();
            let raw: Vec<&str> = raw_words(text).collect();
            let subject = folded(text);
            let start = raw.first().map_or(String::new(), |w| w.to_lowercase());
            if raw.len() <= 6
                && (i < 2
                    || !(OF.contains(&start.as_str()) || PREPOSITIONS.contains(&start.as_str())))
                && !subject.is_empty()
                && !subject.contains(OWNER)
                && !raw
                    .iter()
                    .any(|w| VERB_SET.contains(w.to_lowercase().as_str()))
                // "Marco moved to Berlin" says where someone lives; "the
                // docs site moved to Vercel", where a thing runs.
                && (caps.name("moved").is_none()
                    || !raw.iter().enumerate().any(|(at, w)| {
                        capitalised(w) && !(at == 0 && fold(w).is_none())
                    }))
            {
                let first = sentence.trim_start().starts_with(text);
                let names = raw
                    .iter()
                    .enumerate()
                    .filter(|(i, w)| !(first && *i == 0) && capitalised(w))
                    .filter_map(|(_, w)| fold(w))
                    .collect();
                let before = claims.len();
                push(
                    claims,
                    "uses".to_owned(),
                    subject,
                    names,
                    v.as_str(),
                    true,
                    i > 0,
                );
                // "from Azure to AWS": what it replaced.
                if let (Some(from), Some(claim)) = (caps.name("f"), claims.get_mut(before)) {
                    claim.rejected = folded(from.as_str());
                }
            }
        }
    }
    if hit(14)
        && let Some(caps) = SWITCHED.captures(sentence)
        && let (Some(h), Some(v)) = (caps.name("h"), caps.name("v"))
    {
        when(claims, sentence, h.as_str(), v.as_str());
        let before = subject_before(&sentence[..caps.get(0).expect("a match").start()]);
        if let Some((attribute, subject, names)) = head(h.as_str(), false, before) {
            push(claims, attribute, subject, names, v.as_str(), true, false);
        }
    }
}

/// A time of day.
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\d{1,2}(?:[:h.]\d{2})?\s*(?:am|pm|h|uhr)?$|^\d{1,2}:\d{2}")
        .expect("time pattern")
});

/// "The QBR was moved to 19 June", "moved the standup to 10:00": when
/// the thing the head names happens, as the other rules read it.
fn when(claims: &mut Vec<Claim>, sentence: &str, head: &str, value: &str) {
    let value = match value.split_once(char::is_whitespace) {
        Some((article, rest)) if ARTICLES.contains(&article.to_lowercase().as_str()) => rest,
        _ => value,
    };
    let Some(phrase) = value_phrase(value, Value::Phrase) else {
        return;
    };
    let attribute = if TIME.is_match(&phrase) {
        "time"
    } else if DATE.find(&phrase).is_some_and(|m| m.start() == 0)
        || (phrase.starts_with(|c: char| c.is_ascii_digit()) && DATE.is_match(&phrase))
    {
        "date"
    } else {
        return;
    };
    if let Some((subject, names)) = whole(sentence, head) {
        push(
            claims,
            attribute.to_owned(),
            subject,
            names,
            value,
            true,
            false,
        );
    }
}

/// Every word of a head phrase as the subject, and its names.
fn whole(sentence: &str, text: &str) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let raw: Vec<&str> = raw_words(text).collect();
    let first = sentence.trim_start().starts_with(text);
    let subject = folded(text);
    if raw.len() > 7 || subject.is_empty() || subject.contains(OWNER) {
        return None;
    }
    let names = raw
        .iter()
        .enumerate()
        .filter(|(i, w)| !(first && *i == 0) && capitalised(w))
        .filter_map(|(_, w)| fold(w))
        .collect();
    Some((subject, names))
}

/// The attribute, subject and names a head phrase says, if it names an
/// attribute: its last word before "of"/"for"… is the attribute, every
/// other word (and `owner`'s) the subject. `first`: the head starts the
/// sentence (its first word's capital says nothing).
fn head(
    text: &str,
    first: bool,
    owner: &str,
) -> Option<(String, BTreeSet<String>, BTreeSet<String>)> {
    let raw: Vec<&str> = raw_words(text).collect();
    if raw.is_empty() || raw.len() > 7 {
        return None;
    }
    if raw.iter().any(|w| {
        let lower = w.to_lowercase();
        NOT_HEAD_SET.contains(lower.as_str()) || VERB_SET.contains(lower.as_str())
    }) {
        return None;
    }
    // The attribute: the last word before the first "of"/"for"…
    let split = raw
        .iter()
        .skip(1)
        .position(|w| OF.contains(&w.to_lowercase().as_str()))
        .map_or(raw.len(), |at| at + 1);
    let at = raw[..split]
        .iter()
        .rposition(|w| fold(w).is_some_and(|f| f != OWNER))?;
    let at = if DATE_NOUNS.contains(&raw[at].to_lowercase().as_str())
        && split + 1 < raw.len()
        && fold(raw[split + 1]).is_some()
    {
        split + 1
    } else {
        at
    };
    let noun = raw[at];
    let single = raw[..split].iter().filter(|w| fold(w).is_some()).count() == 1;
    let lower = noun.chars().next().is_some_and(char::is_lowercase);
    let upper = noun.chars().count() > 1 && noun.chars().all(|c| !c.is_lowercase());
    let identifier = noun.contains('_');
    // A noun after an article ("Der Go-live", "die Frist").
    let after_article = at
        .checked_sub(1)
        .is_some_and(|before| ARTICLES.contains(&raw[before].to_lowercase().as_str()));
    // A name ("Falcon is the codename") is the subject, not an attribute.
    if !(lower || upper || identifier || after_article || (first && single && at == 0)) {
        return None;
    }
    let folded_noun = fold(noun)?;
    let lower_noun = noun.to_lowercase();
    // Two words naming one attribute ("phone number", "job title").
    let compound = at
        .checked_sub(1)
        .map(|before| format!("{} {lower_noun}", raw[before].to_lowercase()))
        .filter(|two| COMPOUNDS.contains(&two.as_str()));
    let attribute = match (&compound, canonical(&lower_noun)) {
        (Some(two), _) => canonical(two).to_owned(),
        (None, named) if named != lower_noun => named.to_owned(),
        _ => canonical(&folded_noun).to_owned(),
    };
    let first_of_attribute = if compound.is_some() { at - 1 } else { at };
    let mut subject: BTreeSet<String> = raw
        .iter()
        .enumerate()
        .filter(|(i, _)| !(first_of_attribute..=at).contains(i))
        .filter_map(|(_, w)| fold(w))
        .collect();
    subject.extend(folded(owner));
    if subject.is_empty() {
        subject.insert(OWNER.to_owned());
    }
    let names = raw
        .iter()
        .enumerate()
        .filter(|(i, w)| !(first && *i == 0) && capitalised(w))
        .filter_map(|(_, w)| fold(w))
        .chain(raw_words(owner).filter(|w| capitalised(w)).filter_map(fold))
        .collect();
    Some((attribute, subject, names))
}

/// Adds the claim of `value` (the rest of the clause) when it reads as one.
fn push(
    claims: &mut Vec<Claim>,
    attribute: String,
    subject: BTreeSet<String>,
    names: BTreeSet<String>,
    value: &str,
    any_value: bool,
    changed: bool,
) {
    let value = strip_article(value);
    let Some(value_text) = value_phrase(value, Value::Phrase) else {
        return;
    };
    let words: Vec<&str> = raw_words(&value_text).collect();
    if words
        .iter()
        .any(|w| VERB_SET.contains(w.to_lowercase().as_str()))
    {
        return;
    }
    if !any_value && !namelike(&value_text) {
        return;
    }
    // What a thing uses: a named product ("Jenkins") is replaced only by
    // another, a word ("npm") by a word.
    let attribute = if attribute == "uses" && namelike(&value_text) {
        "uses named".to_owned()
    } else {
        attribute
    };
    let folded_value = super::claims::value_words(&value_text);
    if folded_value.is_empty() {
        return;
    }
    let claim = Claim {
        attribute,
        subject,
        names,
        value: folded_value,
        value_text,
        rejected: BTreeSet::new(),
        negated: false,
        changed,
    };
    if !claims.contains(&claim) {
        claims.push(claim);
    }
}

/// Whether a value is written as a name, number or identifier rather than
/// as words ("Paolo", "P2", "5A-21", "ap@wayne.example", "the Equinox").
fn namelike(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let Some(mut word) = words.next() else {
        return false;
    };
    if ["the", "el", "la", "le", "der", "die", "das", "o", "a"]
        .contains(&word.to_lowercase().as_str())
    {
        let Some(next) = words.next() else {
            return false;
        };
        word = next;
    }
    capitalised(word)
        || word.starts_with(|c: char| c.is_ascii_digit() || "$€£¥#".contains(c))
        || word.contains(|c: char| c.is_ascii_digit() || "@/_:".contains(c))
}

/// `text` without an article before a name ("a AWS", "o Ricardo").
fn strip_article(text: &str) -> &str {
    let mut words = text.splitn(2, char::is_whitespace);
    match (words.next(), words.next()) {
        (Some(article), Some(rest))
            if ARTICLES.contains(&article.to_lowercase().as_str()) && namelike(rest) =>
        {
            rest.trim_start()
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[ignore = "prints the keyed claims of DEBUG_K"]
    fn debug_keyed() {
        let text = std::env::var("DEBUG_K").unwrap();
        for (i, rule) in super::KEYED.iter().enumerate() {
            println!("{i} {:?}", rule.pattern.captures(&text));
        }
        let mut claims = Vec::new();
        super::keyed(&text, &mut claims);
        println!("{claims:#?}");
    }
}
