//! What a memory claims, by rules: (subject, attribute, value) for the
//! attributes a thing has one value of at a time — where someone works and
//! lives, the port, host or version a service is on, who owns or leads
//! something, a deadline, a status, a preference of one thing over
//! another, the tool used for a role. Patterns for English, Spanish,
//! German, French and Portuguese; a sentence matching none claims nothing,
//! so it never contradicts anything.

mod schedule;

pub(super) use schedule::DAYS;

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use super::words::{OWNER, capitalised, fold, folded, raw_words};
use crate::engine::text::sentences;

/// One thing a memory says: `subject`'s `attribute` is `value` (or, when
/// `negated`, is no longer `value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// What the attribute is, with what it is of when that is part of it
    /// ("version of postgres", "tool for ci").
    pub attribute: String,
    /// The folded words naming whose attribute it is; [`OWNER`] for the
    /// writer.
    pub subject: BTreeSet<String>,
    /// The subject's words written as names (the ones another mention may
    /// leave out: "Alice" for "Alice Chen").
    pub names: BTreeSet<String>,
    /// The folded words of the value.
    pub value: BTreeSet<String>,
    /// The value as written.
    pub value_text: String,
    /// Values the memory says lost out ("X over Y": Y).
    pub rejected: BTreeSet<String>,
    /// "no longer", "left", "stopped": the value is no longer the subject's.
    pub negated: bool,
}

/// How a rule's value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// Words up to the end of the phrase, the first written as a name.
    Name,
    /// Words up to the end of the phrase.
    Phrase,
    /// The number the pattern captured.
    Number,
    /// All the pattern captured ("Kenji Watanabe is on call": Kenji
    /// Watanabe).
    Exact,
}

/// A pattern for one attribute: `v` captures the value; `s` (when
/// present) the subject, else the subject is what comes before the match;
/// `k` (when present) what the attribute is of.
struct Rule {
    attribute: &'static str,
    value: Value,
    pattern: Regex,
}

/// The words that end a value phrase.
const VALUE_ENDS: &str = "as since in on at from because and but after before when with for
starting effective until now last next this every via to by which who where if so then while
because, during instead rather than over del desde como porque y pero durante ahora seit als und
aber weil ab jetzt während depuis comme et mais parce pendant maintenant desde como e mas porque
durante agora também also too";

static VALUE_END_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| VALUE_ENDS.split_whitespace().collect());

/// Words before a value that make it generic rather than a name.
const DETERMINERS: [&str; 22] = [
    "a", "an", "some", "another", "un", "una", "unos", "ein", "eine", "einem", "einer", "une",
    "des", "um", "uma", "home", "remote", "remotely", "night", "nights", "weekends", "lunch",
];

/// A clause adds a value rather than replacing one.
static ADDITIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(also|too|as well|additionally|in addition|another|both|además|también|auch|zusätzlich|ebenfalls|aussi|également|en plus|também)\b",
    )
    .expect("additive pattern")
});

/// A clause says its value no longer holds.
static NEGATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(no longer|not anymore|any more|anymore|stopped|quit|left|ya no|dejó de|nicht mehr|n'est plus|ne travaille plus|n'habite plus|não \S+ mais|deixou de|não mais)\b",
    )
    .expect("negation pattern")
});

/// A clause says, after its value, that the value no longer holds.
static ANYMORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(anymore|any more|no more|nicht mehr|ya no|não mais|plus jamais)\b")
        .expect("anymore pattern")
});

/// Where a clause ends inside a sentence.
static CLAUSE_BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)[,;:()\[\]]|\s[-–—]\s|\s(and|but|so|while|whereas|y|pero|und|aber|et|mais|e|mas)\s",
    )
    .expect("clause pattern")
});

/// Words that end a subject read from before its verb.
const SUBJECT_ENDS: &str = "left quit has have had is was are were will would just then moved
switched changed got became decided started stopped officially finally recently now currently
joined joins works work lives live uses use used runs run who that which ha han hat haben ist war
a ont est a tem foi dejó deixou verließ quitté listens listening serves läuft laufen
escucha corre écoute tourne roda fichó ficha saiu agora ahora jetzt maintenant désormais hired
closed reopened resolved fixed merged doesn't don't didn't does do never isn't aren't no";

static SUBJECT_END_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| SUBJECT_ENDS.split_whitespace().collect());

/// The value phrase's first words, up to the first word that ends it
/// (at most six).
const NAME: &str = r"(?P<v>[^\s,.;:!?()]+(?:\s+[^\s,.;:!?()]+){0,5})";
/// Statuses, each class of them one value to [`status_class`].
const STATUSES: &str = "blocked|done|complete|completed|finished|in progress|on hold|paused|live|deprecated|cancell?ed|shipped|delayed|merged|resolved|approved|rejected|pending|active|inactive|green|red|open|closed|fixed|reopened|bloquead[oa]s?|terminad[oa]s?|en pausa|en curso|abiert[oa]|cerrad[oa]|resuelt[oa]|reabiert[oa]|cancelad[oa]s?|blockiert|fertig|erledigt|abgeschlossen|pausiert|offen|geschlossen|gelöst|in arbeit|wieder geöffnet|bloquée?s?|terminée?s?|en pause|en cours|ouverte?|fermée?|résolue?|rouverte?|annulée?s?|concluíd[oa]s?|pausad[oa]s?|em andamento|abert[oa]|fechad[oa]|resolvid[oa]|reabert[oa]|waiting|esperando|wartet|en attente|aguardando|clos";

/// Statuses that say the same ("done", "closed", "resolved"), by class.
const STATUS_CLASSES: [(&str, &str); 7] = [
    (
        "done",
        "done clos complete completed finished closed fixed resolved merged shipped terminado terminada terminados terminadas cerrado cerrada resuelto resuelta fertig erledigt abgeschlossen geschlossen gelöst terminé terminée terminés terminées fermé fermée résolu résolue concluído concluída concluídos concluídas fechado fechada resolvido resolvida",
    ),
    (
        "open",
        "open reopened abierto abierta reabierto reabierta offen wieder ouvert ouverte rouvert rouverte aberto aberta reaberto reaberta",
    ),
    ("waiting", "waiting esperando wartet en attente aguardando"),
    (
        "progress",
        "in progress active en curso in arbeit en cours em andamento",
    ),
    (
        "blocked",
        "blocked bloqueado bloqueada bloqueados bloqueadas blockiert bloqué bloquée bloqués bloquées",
    ),
    (
        "paused",
        "on hold paused en pausa pausiert en pause pausado pausada pausados pausadas",
    ),
    (
        "cancelled",
        "cancelled canceled cancelado cancelada cancelados canceladas annulé annulée annulés annulées",
    ),
];

/// The class of a status ("closed" and "done" are one), else its words.
fn status_class(status: &str) -> BTreeSet<String> {
    let status = status.to_lowercase();
    let first = status.split_whitespace().next().unwrap_or_default();
    STATUS_CLASSES
        .iter()
        .find(|(_, said)| {
            said.split_whitespace().any(|s| s == first)
                || (status.contains(' ') && said.contains(status.as_str()))
        })
        .map_or_else(
            || folded(&status),
            |(class, _)| BTreeSet::from([(*class).to_owned()]),
        )
}

/// Statuses only a ticket has for good.
static OPEN_CLOSED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:closed|cerrad[oa]|geschlossen|fermée?|fechad[oa])")
        .expect("closed pattern")
});
/// A ticket's key ("OPS-311").
static TICKET_KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Z][A-Z0-9]*-\d+\b|#\d{3,}\b").expect("ticket key pattern"));
/// What names a ticket: its key ("OPS-311") or a word for one.
static TICKET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:[a-z][a-z0-9]*-\d+|ticket|issue|bug|pr|pull request|incident|task|story|epic|case|chamado|tarea|incidencia|aufgabe|fehler|tâche|demande)\b")
        .expect("ticket pattern")
});

/// Job titles, in the five languages: "a designer at Figma" names an employer.
const ROLES: &str = r"engineer|developer|designer|manager|scientist|analyst|architect|consultant|director|lead|intern|researcher|accountant|lawyer|attorney|doctor|physician|cardiologist|surgeon|nurse|teacher|professor|recruiter|marketer|writer|editor|product owner|vp|cto|ceo|cfo|coo|sre|devops|ingenier[oa]|desarrollador[a]?|diseñador[a]?|analista|jef[ea] de \w+|gerente|directora?|consultora?|ingenieur(?:in)?|entwickler(?:in)?|designer(?:in)?|berater(?:in)?|leiter(?:in)?|data scientist|ingénieure?|développeuse|développeur|chef de \w+|directrice|consultante?|engenheir[oa]|desenvolvedor[a]?|gerente|coordenador[a]?";

/// A port number.
const PORT: &str = r"(?P<v>\d{2,5})\b";

fn rules() -> Vec<Rule> {
    let linking = r"\s*(?:(?:is|are|was|will be|is now|now is|now|has been|became|changed to|moved to|set to|is set to|got moved to|(?:was\s+|has been\s+|got\s+)?(?:slipped|pushed|moved|postponed|delayed|changed|raised|lowered|increased|reduced|bumped|cut|extended|adjusted|updated|set)\s+to|es|está|será|ahora es|pasa a ser|ist|liegt bei|beträgt|wird|est|sera|passe à|é|passou para|mudou para|repoussée? (?:au|à)|reportée? (?:au|à)|avancée? (?:au|à)|retrasad[oa] (?:al|a)|pospuest[oa] (?:al|a)|aplazad[oa] (?:al|a)|verschoben auf|adiad[oa] para)\b|=|:|->|→|\s[-–—]\s)\s*(?:(?:now|ahora|jetzt|maintenant|agora)\s+)?";
    let nouns = r"(?P<k>account manager|account owner|(?-i:AM)|csm|decision maker|reviewer|dentist|doctor|gp|landlord|deal stage|stage|hausarzt|hausärztin|zahnarzt|zahnärztin|vermieter(?:in)?|dentista|médico|médica|casero|médecin|dentiste|propriétaire|senhorio|etapa|fase|phase|employer|empleador|arbeitgeber|employeur|empregador|deadline|due date|release date|launch date|go-live date|go-live|cutoff|owner|manager|team lead|tech lead|lead|point of contact|contact|email|e-mail|email address|phone number|phone|mobile|address|price|pricing|plan|tier|region|host|hostname|timezone|time zone|default branch|main branch|budget|status|title|job title|role|url|endpoint|base url|capital|salary|rate limit|timeout|limit|quota|headcount|headquarters|hq|desk|office|on-call|oncall|primary|favou?rite \w+|fecha límite|plazo|responsable|dueño|correo|teléfono|dirección|precio|plan|región|estado|frist|abgabetermin|verantwortliche[rn]?|telefonnummer|adresse|preis|tarif|date limite|échéance|téléphone|prix|forfait|région|statut|prazo|responsável|telefone|endereço|preço|plano|região)";
    let port = r"(?:port|puerto|porta)";
    let table: Vec<(&'static str, Value, String)> = vec![
        // Where someone works.
        ("employer", Value::Name, format!(r"\b(?:works?|working|worked|is working)\s+(?:now\s+)?(?:at|for)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:is|was)\s+(?:now\s+)?employed\s+(?:at|by)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:joined|joins|has joined|is joining|hired by|was hired by|got hired by|signed with)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:left|quit)\s+\S+(?:\s+\S+)?\s+(?:for|to join)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:{ROLES})\s+(?:at|@|bei|chez)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\bis\s+no\s+longer\s+(?:at|with)\s+{NAME}")),
        ("employer", Value::Exact, r"^\s*(?P<v>\p{Lu}[\w&.-]*(?:\s+\p{Lu}[\w&.-]*)?)\s+(?:hired|poached|recruited|contrató|fichó a|stellte|a embauché|contratou)\s+(?P<s>\p{Lu}[\w.-]*(?:\s+\p{Lu}[\w-]*){0,2})".to_owned()),
        ("employer", Value::Name, format!(r"\b(?:fichó|ficha|ha fichado)\s+por\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:est|a)\s+(?:passée?|partie?)\s+chez\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:trabaja|trabajaba)\s+(?:ahora\s+)?(?:en|para)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\bse\s+(?:unió|incorporó|pasó)\s+a\s+{NAME}")),
        ("employer", Value::Name, format!(r"\barbeitet\s+(?:jetzt\s+|nun\s+|seit\s+\S+\s+)?(?:bei|für)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:ist|wechselte)\s+(?:jetzt\s+|nun\s+)?(?:zu|bei)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\btravaille\s+(?:maintenant\s+|désormais\s+)?(?:chez|pour)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\ba\s+rejoint\s+{NAME}")),
        ("employer", Value::Name, format!(r"\btrabalha\s+(?:agora\s+)?(?:na|no|em|para\s+a|para\s+o|para)\s+{NAME}")),
        ("employer", Value::Name, format!(r"\b(?:entrou|foi)\s+(?:na|no|para\s+a|para\s+o)\s+{NAME}")),
        // Where someone lives.
        ("residence", Value::Name, format!(r"\b(?:lives?|living|lived|is living|am living|are living)\s+(?:now\s+)?in\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:is|are)\s+(?:now\s+)?based\s+(?:in|out of)\s+{NAME}")),
        ("headquarters", Value::Name, format!(r"\bmoved\s+(?:its|their|the)\s+(?:hq|headquarters|head office|offices?)\s+to\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:resides|moved|relocated|has moved|has relocated|is moving|is relocating)\s+(?:back\s+)?(?:in|to)\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:vive|reside)\s+(?:ahora\s+)?en\s+{NAME}")),
        ("residence", Value::Name, format!(r"\bse\s+(?:mudó|trasladó|muda)\s+a\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:wohnt|lebt)\s+(?:jetzt\s+|nun\s+|seit\s+\S+\s+)?in\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:zog|zieht|ist)\s+(?:jetzt\s+)?nach\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:habite|vit)\s+(?:maintenant\s+|désormais\s+)?(?:à|a|en|au)\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:a\s+déménagé|s'est\s+installée?|déménage)\s+(?:à|a|en|au)\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:mora|vive)\s+(?:agora\s+)?(?:em|no|na)\s+{NAME}")),
        ("residence", Value::Name, format!(r"\b(?:se\s+)?mudou(?:-se)?\s+para\s+{NAME}")),
        // The port a service is on.
        ("port", Value::Number, format!(r"\b{port}\s*(?:number\s*)?(?:is\s+|=\s*|:\s*|to\s+|now\s+|es\s+|ist\s+|est\s+|é\s+)?(?:now\s+|el\s+|la\s+|a\s+)?{PORT}")),
        ("port", Value::Number, format!(r"\b(?:listens|listening|runs|running|served|serves|is|are|moved|now|lives|escucha|läuft|écoute|roda|está|jetzt|ahora|maintenant|agora)\s+(?:now\s+)?(?:on|at|to|en|auf|sur|na)\s+(?:port\s+)?{PORT}")),
        ("port", Value::Number, format!(r"(?:->|→)\s*(?:{port}\s*)?{PORT}")),
        ("port", Value::Number, r"\b(?:moved|switched|changed|pasamos|movimos|la pasamos|verlegt|umgezogen|déplacé|passé|mudamos|passamos)\s+(?P<s>[^,.;:!?]{1,40}?)\s+(?:to|a|al|auf|à|au|para)\s+(?:port\s+|puerto\s+|porta\s+)?(?P<v>(?:[1-9]\d{3,4}))\b".to_owned()),
        // Which version of a tool is used.
        ("version of", Value::Number, r"\b(?:uses?|using|runs?|running|on|upgraded\s+to|pinned\s+to|moved\s+to|bumped\s+to|is\s+on|now\s+on|usa|usamos|nutzt|nutzen|verwendet|utilise|utilisons|usa)\s+(?P<k>[a-z][a-z0-9+#-]*)\s+(?:version\s+|v)?(?P<v>\d+(?:\.\d+){0,3})\b".to_owned()),
        ("version of", Value::Number, r"\b(?:upgraded|bumped|moved|pinned|migrated|downgraded)\s+(?P<k>[a-z][a-z0-9+#-]*)\s+(?:from\s+\S+\s+)?to\s+(?:version\s+|v)?(?P<v>\d+(?:\.\d+){0,3})\b".to_owned()),
        ("version of", Value::Number, r"\b(?:on|to|with|auf|en|a|con|mit|sur|em|com|para|nutzt|usa|uses|utilise)\s+(?P<k>\p{Lu}[\p{L}.+#-]*)\s+v?(?P<v>\d+(?:\.\d+){0,3})\b".to_owned()),
        ("version of", Value::Number, r"\b(?P<k>[a-z][a-z0-9+#-]*)\s+version\s+(?:is\s+|=\s*|:\s*|is now\s+)?v?(?P<v>\d+(?:\.\d+){0,3})\b".to_owned()),
        // An attribute named by a noun: "the deadline is Friday".
        ("", Value::Phrase, format!(r"\b{nouns}\b\s*(?:(?:of|for|de|von|für|du|da|do|pour|para|por|del)\s+(?P<s>[^,.;:!?]+?)\s*)?{linking}{NAME}")),
        // Who owns, leads or manages something.
        ("owner", Value::Name, format!(r"\b(?:is\s+|are\s+)?(?:owned|led|run|maintained|managed|headed)\s+by\s+{NAME}")),
        ("owner", Value::Exact, r"^\s*(?P<v>\p{Lu}\w+(?:\s+\p{Lu}\w+)?)\s+(?:is|became)\s+(?:now\s+)?(?:the\s+)?(?:new\s+)?(?P<q>(?:[\w-]+\s+){0,2}?)(?:head|lead|owner|leader)\s+(?:of|for)\s+(?P<s>[^,.;:!?]+)".to_owned()),
        ("owner", Value::Exact, r"^\s*(?P<v>\p{Lu}\w+(?:\s+\p{Lu}\w+)?)\s+took\s+over\s+as\s+(?:the\s+)?(?P<s>[^,.;:!?]+?)\s+(?:lead|head|owner)\b".to_owned()),
        ("assignee", Value::Name, format!(r"\b(?:is\s+|was\s+|got\s+)?(?:re)?assigned\s+to\s+{NAME}")),
        ("reviewer", Value::Name, format!(r"\b(?:a\s+)?review(?:ed)?\s+(?:from|by)\s+{NAME}")),
        ("price", Value::Phrase, r"\b(?:costs?|is priced at|cuesta|cuestan|kostet|kosten|coûte|coûtent|custa|custam)\s+(?P<v>(?:[$€£]|R\$|US\$|A\$|C\$|CHF|Fr\.)?\s?\d[\d.,]*\s?(?:[$€£]|usd|eur|chf|k|m)?)".to_owned()),
        ("price", Value::Phrase, r"\b(?:raised|lowered|increased|cut|dropped|subimos|subió|bajamos|bajó|erhöht|gesenkt|augmenté|baissé|aumentamos|baixamos)\s+(?P<s>[^,.;:!?]{1,40}?)\s+(?:to|a|auf|à|para)\s+(?P<v>(?:[$€£]|R\$|US\$|A\$|C\$|CHF|Fr\.)?\s?\d[\d.,]*\s?(?:[$€£]|usd|eur|chf|k|m)?)".to_owned()),
        ("plan", Value::Phrase, r"\b(?:is|are)\s+(?:now\s+)?on\s+(?:the\s+|a\s+)?(?P<v>[\w-]+)\s+(?P<k>plan|tier|support|contract|license|licence|subscription)\b".to_owned()),
        ("plan", Value::Phrase, r"\b(?:hat|haben)\s+(?:jetzt\s+)?(?:den|das|die)\s+(?P<v>[\w]+)-(?P<k>support|plan|tarif|paket|abo)\b".to_owned()),
        ("plan", Value::Phrase, r"\b(?:est|sont|está|están|estão)\s+(?:maintenant\s+|ahora\s+|agora\s+)?(?:sur|en|no|na)\s+(?:l'|el\s+|la\s+|o\s+|a\s+)?(?P<k>offre|abonnement|forfait|plan|plano|tarifa)\s+(?P<v>\p{Lu}[\w-]*)".to_owned()),
        ("plan", Value::Name, r"\b(?:upgraded|downgraded)\s+to\s+(?:the\s+)?(?P<v>\p{Lu}[\w-]*)(?:\s+(?:plan|tier))?(?:\s|$|[,.;])".to_owned()),
        ("plan", Value::Name, r"\b(?:switched|moved)\s+to\s+(?:the\s+)?(?P<v>\p{Lu}[\w-]*)\s+(?:plan|tier)\b".to_owned()),
        ("headquarters", Value::Name, format!(r"\b(?:headquarters|hq|head office)\s+(?:is|are)\s+(?:now\s+)?(?:in|at)\s+{NAME}")),
        ("title", Value::Phrase, r"\b(?:is|became|was promoted to|got promoted to|promoted to|ist|es|est|é)\s+(?:now\s+)?(?:a\s+|an\s+|the\s+)?(?P<v>(?:[\w-]+\s+){0,3}(?:engineer|manager|director|designer|developer|analyst|scientist|architect|intern|vp|cto|ceo|cfo|coo|head of [\w ]+|product manager))\b".to_owned()),
        ("manager", Value::Name, format!(r"\breports?\s+(?:directly\s+)?to\s+{NAME}")),
        ("manager", Value::Name, format!(r"\b(?:berichtet|reporta|reportan|rend compte|reporte|se reporta|responde)\s+(?:jetzt\s+|nun\s+|ahora\s+|maintenant\s+|agora\s+)?(?:direkt\s+)?(?:an|a|à|ao|à)\s+{NAME}")),
        ("owner", Value::Exact, r"^\s*(?P<v>\p{Lu}\w+(?:\s+\p{Lu}\w+)?)\s+(?:now\s+)?(?:owns|leads|took over|is leading|is the owner of|is responsible for|runs|manages)\s+(?P<s>[^,.;:!?]+)".to_owned()),
        ("on-call", Value::Exact, r"^\s*(?P<v>\p{Lu}\w+(?:\s+\p{Lu}\w+)?)\s+(?:is|will be)\s+(?:now\s+)?(?:the\s+)?(?:primary\s+)?on[- ]?call\b(?:\s+(?:for|of)\s+(?P<s>[^,.;:!?]+?)(?:\s+(?:this|next)\s+week|\s+today|\s+tonight)?\s*(?:$|[,.;:!?]))?".to_owned()),
        // A status.
        ("status", Value::Phrase, format!(r"\b(?:is|are|was|now|está|están|ist|sind|est|sont|estão)\s+(?:now\s+|ahora\s+|jetzt\s+|maintenant\s+|agora\s+)?(?P<v>{STATUSES})\b")),
        ("status", Value::Phrase, format!(r"^\s*(?:ticket\s+|issue\s+|bug\s+|chamado\s+)?(?P<s>[A-Z][A-Z0-9]*-\d+|#\d{{3,}})\s+(?:(?:is|was|got|has been|está|ist|est|foi)\s+)?(?:now\s+)?(?P<v>{STATUSES})\b")),
        // Priority.
        ("priority", Value::Phrase, r"\b(?:is|now|ist|es|est|é|priority|prioridad|priorität|priorité|prioridade)\s*:?\s+(?:now\s+)?(?:an?\s+)?(?P<v>p[0-4]|sev[- ]?[0-4])\b".to_owned()),
        // Who a ticket is handed to.
        ("assignee", Value::Name, format!(r"\b(?:moved|handed|passed|gave|reassigned)\s+(?P<s>[A-Z][A-Z0-9]*-\d+)\s+(?:over\s+)?to\s+{NAME}")),
        // When something ships.
        ("release date", Value::Phrase, format!(r"\b(?:ships|ship|shipping|launches|launch|goes live|go live|is released|releases)\s+(?:now\s+)?(?:on|in)\s+{NAME}")),
        // What is due when.
        ("deadline", Value::Phrase, format!(r"\b(?:is|are)\s+(?:now\s+)?due\s+(?:on\s+|by\s+)?{NAME}")),
        ("deadline", Value::Phrase, format!(r"\b(?:vence|termina|ist fällig|fällig|est due|vence)\s+(?:el\s+|am\s+|le\s+|em\s+|no\s+|na\s+)?{NAME}")),
        // When something happens.
        ("time", Value::Phrase, r"\b(?:is|are|starts|start|begins|now|moved|changed|happens|es|ist|est|é)\s+(?:now\s+)?(?:at|to|a las|um|à|às)\s+(?P<v>\d{1,2}(?:[:h.]\d{2})?\s*(?:am|pm|h|uhr)?)(?:\s|$|[,.;])".to_owned()),
        ("day", Value::Phrase, r"\b(?:is|are|happens|happen|moved|changed|now|runs?|es|ist|est|é)\s+(?:now\s+)?(?:to\s+|on\s+)?(?P<v>mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?)\b".to_owned()),
        // A preference, "X over Y".
        ("preference", Value::Phrase, r"\b(?:prefers?|preferred|prefer|likes|loves|enjoys?|would rather(?: use| have)?|prefiero|prefiere|prefieren|bevorzuge|bevorzugt|bevorzugen|préfère|préfèrent|prefiro|prefere|preferem)\s+(?P<v>[^,.;:!?]+?)(?:\s+(?:over|to|instead of|rather than|en lugar de|a|statt|anstatt|gegenüber|plutôt que|à|em vez de|ao invés de)\s+(?P<o>[^,.;:!?]+))?\s*(?:$|[,.;:!?])".to_owned()),
        // The tool used for a role: "we use Jenkins for CI".
        ("tool for", Value::Name, r"\b(?:use|uses|using|run|runs|usamos|usan|usar|usaremos|usará|usarán|nutzen|verwenden|utilisons|utilisent|utiliser|utiliserons|vamos usar|usaremos)\s+(?P<v>[^\s,.;:!?]+(?:\s+[^\s,.;:!?]+){0,2}?)\s+(?:for|para|für|pour)\s+(?:the\s+|our\s+|el\s+|la\s+|den\s+|die\s+|das\s+|le\s+|la\s+|o\s+|a\s+)?(?P<k>[^,.;:!?]+?)\s*(?:$|[,.;:!?])".to_owned()),
        ("tool for", Value::Name, r"^\s*(?:the\s+|our\s+)?(?P<k>[\p{L} -]{2,30}?)\s+(?:runs on|run on|goes through|go through|is handled by|are handled by|is done (?:in|with|on)|switched to|moved to|migrated to)\s+(?P<v>\p{Lu}[^\s,.;:!?]*(?:\s+[^\s,.;:!?]+){0,2}?)\s*(?:$|[,.;:!?]|\s+(?:now|instead|from now on|since|as of)\b)".to_owned()),
        ("tool for", Value::Name, r"\b(?:switched|moved|migrated|changed|replaced)\s+(?:our\s+|the\s+)?(?P<k>[^,.;:!?]+?)\s+(?:from\s+[^,.;:!?]+?\s+)?(?:to|over to|with)\s+(?P<v>[^\s,.;:!?]+(?:\s+[^\s,.;:!?]+){0,2})".to_owned()),
    ];
    table
        .into_iter()
        .map(|(attribute, value, pattern)| Rule {
            attribute,
            value,
            pattern: Regex::new(&format!("(?i){pattern}")).expect("claim pattern"),
        })
        .collect()
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(rules);
/// Every rule's pattern in one automaton: a sentence is scanned once, and
/// only the rules it matches are run for their captures.
static ANY_RULE: LazyLock<RegexSet> = LazyLock::new(|| {
    super::words::fast_set(RULES.iter().map(|rule| rule.pattern.as_str())).expect("claim patterns")
});

/// The claims of `text`, sentence by sentence.
pub fn claims(text: &str) -> Vec<Claim> {
    let mut claims = Vec::new();
    for sentence in text.lines().flat_map(titled_sentences) {
        let additive = ADDITIVE.is_match(sentence);
        for rule in ANY_RULE.matches(sentence).iter().map(|i| &RULES[i]) {
            for caps in rule.pattern.captures_iter(sentence) {
                let Some(v) = caps.name("v") else { continue };
                if additive {
                    continue;
                }
                let whole = caps.get(0).expect("a match");
                let value_text = match rule.attribute {
                    // Said in full by the pattern.
                    "status" | "priority" => Some(v.as_str().to_owned()),
                    // "a window seat": which one is preferred.
                    "preference" => {
                        value_phrase(without_article(&sentence[v.start()..]), rule.value)
                    }
                    _ if rule.value == Value::Exact => Some(v.as_str().to_owned()),
                    _ => value_phrase(&sentence[v.start()..], rule.value),
                };
                let Some(value_text) = value_text else {
                    continue;
                };
                // "moved to 8 November" is no move of house, "We hired
                // Alice" no employer named, and "on March 3" no version.
                if rule.attribute == "residence"
                    && value_text.starts_with(|c: char| c.is_ascii_digit())
                    || rule.attribute == "employer"
                        && raw_words(&value_text)
                            .next()
                            .and_then(fold)
                            .is_none_or(|w| w == OWNER)
                    || rule.attribute == "version of"
                        && caps
                            .name("k")
                            .is_some_and(|k| raw_words(k.as_str()).all(|w| fold(w).is_none()))
                {
                    continue;
                }
                if former(sentence, v.start()) {
                    continue;
                }
                let attribute = match (rule.attribute, caps.name("k")) {
                    ("preference", _) => preference_of(&sentence[v.start()..], &value_text),
                    ("", Some(k)) => canonical(&k.as_str().to_lowercase()).to_owned(),
                    ("plan", _) => "plan".to_owned(),
                    // "switched GP to Dr. Okoye": the GP.
                    ("tool for", Some(k)) if NAMED_ROLES.contains(&canonical(&key(k.as_str()))) => {
                        canonical(&key(k.as_str())).to_owned()
                    }
                    (attribute, Some(k)) => format!("{attribute} {}", key(k.as_str())),
                    (attribute, None) => attribute.to_owned(),
                };
                let before = subject_before(&sentence[..whole.start()]);
                let subject_text = match (caps.name("s"), rule.attribute) {
                    // "primary on-call for the data platform": both.
                    (Some(s), "") => format!("{before} {}", s.as_str()),
                    // "the QA lead for Apollo": Apollo's QA.
                    (Some(s), _) => match caps.name("q") {
                        Some(q) => format!("{} {}", q.as_str(), s.as_str()),
                        None => s.as_str().to_owned(),
                    },
                    (None, _) => before.to_owned(),
                };
                // "BUG-882 (double-charge on retry) is fixed": BUG-882.
                let subject_text = match TICKET_KEY.find(&sentence[..whole.start()]) {
                    Some(key) if attribute == "status" && !TICKET_KEY.is_match(&subject_text) => {
                        key.as_str()
                    }
                    _ => subject_text.as_str(),
                };
                let mut subject: BTreeSet<String> = folded(subject_text);
                if subject.is_empty() {
                    subject.insert(OWNER.to_owned());
                }
                let names = raw_words(subject_text)
                    .filter(|w| capitalised(w))
                    .filter_map(fold)
                    .collect();
                let rejected = caps
                    .name("o")
                    .map(|o| folded(o.as_str()))
                    .unwrap_or_default();
                let value = if attribute == "status" {
                    status_class(&value_text)
                } else {
                    folded(&value_text)
                };
                // A shop or an office is open or closed on some days: only
                // a ticket is open or closed for good (and "the office is
                // open" says nothing of where the office is).
                let open_or_closed = value.contains("open") || OPEN_CLOSED.is_match(&value_text);
                if open_or_closed && (attribute != "status" || !TICKET.is_match(subject_text)) {
                    continue;
                }
                if value.is_empty() {
                    continue;
                }
                let claim = Claim {
                    attribute,
                    subject,
                    names,
                    value,
                    value_text,
                    rejected,
                    negated: NEGATION
                        .is_match(last_clause(&sentence[..whole.start().max(v.start())]))
                        || ANYMORE.is_match(first_clause(&sentence[v.start()..])),
                };
                if !claims.contains(&claim) {
                    claims.push(claim);
                }
            }
        }
        if !additive {
            let when = schedule::schedule(sentence);
            for claim in shaped(sentence).into_iter().chain(when) {
                if !claims.contains(&claim) {
                    claims.push(claim);
                }
            }
        }
    }
    claims
}

/// A phone number: seven digits or more, in groups.
static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s:(])(?P<v>\+?\(?\d[\d\s()-]{5,}\d)(?:$|[\s,.;)])").expect("phone pattern")
});
/// Numbers written like a phone number that are none: a date, a range
/// of years.
static NOT_PHONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{2,4}|\d{4}\s*-\s*\d{4})$")
        .expect("not-a-phone pattern")
});
/// A currency after a number, or before it: an amount.
static MONEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[$€£¥]|(?i:usd|eur|gbp|chf|dollars?|euros?|pounds?)\b)")
        .expect("money pattern")
});
static MONEY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:[$€£¥]|(?i:usd|eur|gbp|chf|R\$))\s*$").expect("money pattern")
});
/// An email address.
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)").expect("email pattern"));
/// A note of one setting: "redis maxmemory: 6gb", "SMTP: smtp.example.net".
static SETTING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*[-*•]?\s*(?P<s>[^:=]{2,40}?)\s*(?:[:=]|\s(?:is|are|es|ist|est|é)\s)\s*(?P<v>[^\s,;]*\d[^\s,;]*(?:\s+[\p{L}]+)?|[\w-]+(?:\.[\w-]+)+)\s*[.;]?\s*$",
    )
    .expect("setting pattern")
});
/// What a phone or email is for, when said ("work", "mobile").
const CONTACT_KINDS: &str = "work office home mobile cell fax desk personal private business
büro privat geschäftlich handy trabajo casa móvil celular fixe portable pro perso trabalho";
/// Words naming the attribute rather than whose it is.
const CONTACT_WORDS: &str = "phone number mobile cell tel tel. telephone email e-mail mail
address contact reach call text teléfono número correo telefon telefonnummer handy nummer
adresse téléphone numéro portable courriel telefone celular endereço";

/// Claims told by their value's shape: a phone number or an email
/// address is the contact of whom the sentence names (its owner's when it
/// names no one but says the contact changed); a one-setting note is that
/// setting's value.
fn shaped(sentence: &str) -> Vec<Claim> {
    let mut found = Vec::new();
    let words: Vec<&str> = raw_words(sentence).collect();
    let kind = |attribute: &str| {
        words
            .iter()
            .map(|w| w.to_lowercase())
            .find(|w| CONTACT_KINDS.split_whitespace().any(|k| k == w))
            .map_or_else(|| attribute.to_owned(), |k| format!("{attribute} {k}"))
    };
    // Whose it is: the names the sentence gives. Its first word is one
    // only when the sentence says the contact changed ("Pilar changed her
    // number", not "Send invoices to billing@…").
    let first = raw_words(sentence).next().unwrap_or_default();
    let cued = super::frame::cued(sentence);
    let whose = |value: &str| {
        let names: BTreeSet<String> = raw_words(sentence)
            .filter(|w| !value.contains(w))
            .filter(|w| cued || !std::ptr::eq(*w, first))
            .filter(|w| capitalised(w) || fold(w).as_deref() == Some(OWNER))
            .filter(|w| {
                let lower = w.to_lowercase();
                !CONTACT_WORDS.split_whitespace().any(|c| c == lower)
                    && !CONTACT_KINDS.split_whitespace().any(|c| c == lower)
            })
            .filter_map(fold)
            .collect();
        // Naming no one, it is the owner's only when it says the
        // contact changed ("New number: …", not "Send invoices to …").
        if names.is_empty() && cued {
            Some(BTreeSet::from([OWNER.to_owned()]))
        } else {
            (!names.is_empty()).then_some(names)
        }
    };
    let mut contact = |attribute: &str, value: &str, digits: bool| {
        let normal: String = if digits {
            value.chars().filter(char::is_ascii_digit).collect()
        } else {
            value.to_lowercase()
        };
        let Some(subject) = whose(value) else {
            return;
        };
        found.push(Claim {
            attribute: kind(attribute),
            names: subject.clone(),
            subject,
            value: BTreeSet::from([normal]),
            value_text: value.to_owned(),
            rejected: BTreeSet::new(),
            negated: false,
        });
    };
    for caps in PHONE.captures_iter(sentence) {
        let found = caps.name("v").expect("a value");
        let v = found.as_str().trim();
        let digits = v.chars().filter(char::is_ascii_digit).count();
        // Not a date, a year range or an amount ("1 200 000 €").
        let amount = MONEY.is_match(&sentence[found.end()..])
            || MONEY_BEFORE.is_match(&sentence[..found.start()]);
        if (7..=15).contains(&digits) && !NOT_PHONE.is_match(v) && !amount {
            contact("phone", v, true);
        }
    }
    for caps in EMAIL.captures_iter(sentence) {
        contact("email", &caps["v"], false);
    }
    if found.is_empty()
        && let Some(caps) = SETTING.captures(sentence)
    {
        let key = &caps["s"];
        let value = caps["v"].to_owned();
        // Every word of the key names it, times too ("Q3 revenue").
        let subject: BTreeSet<String> = raw_words(key)
            .filter(|w| !THE.contains(&w.to_lowercase().as_str()))
            .map(|w| fold(w).unwrap_or_else(|| w.to_lowercase()))
            .collect();
        let time = value.chars().next().is_some_and(|c| c.is_ascii_digit())
            && (value.contains(':') || value.contains('h'))
            && value.len() <= 5;
        if !subject.is_empty() && key.split_whitespace().count() <= 6 {
            found.push(Claim {
                attribute: if time { "time" } else { "setting" }.to_owned(),
                names: BTreeSet::new(),
                subject,
                value: folded(&value),
                value_text: value,
                rejected: BTreeSet::new(),
                negated: false,
            });
        }
    }
    found
}

/// Attributes a noun names that one switches like a tool.
const NAMED_ROLES: [&str; 6] = [
    "doctor",
    "dentist",
    "landlord",
    "account manager",
    "owner",
    "manager",
];

/// The sentences of `line`, a title's abbreviation ending none ("Dr.
/// Keller").
fn titled_sentences(line: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    let mut start = None;
    for sentence in sentences(line) {
        let from = start
            .take()
            .unwrap_or(sentence.as_ptr() as usize - line.as_ptr() as usize);
        let to = sentence.as_ptr() as usize - line.as_ptr() as usize + sentence.len();
        let last = sentence.split_whitespace().last().unwrap_or_default();
        if TITLES.contains(&last) && to < line.len() {
            start = Some(from);
            continue;
        }
        found.push(&line[from..to]);
    }
    if let Some(from) = start {
        found.push(&line[from..]);
    }
    found
}

/// One name for the nouns that name the same attribute.
fn canonical(noun: &str) -> &str {
    match noun {
        "lead" | "team lead" | "tech lead" | "owner" | "head" | "responsable" | "dueño"
        | "responsável" => "owner",
        "hq" | "headquarters" => "headquarters",
        "price" | "pricing" | "precio" | "preis" | "prix" | "preço" => "price",
        "deadline" | "due date" | "cutoff" | "fecha límite" | "plazo" | "frist"
        | "abgabetermin" | "date limite" | "échéance" | "prazo" => "deadline",
        "plan" | "tier" | "plano" | "forfait" | "tarif" => "plan",
        "email" | "e-mail" | "email address" | "correo" => "email",
        "phone" | "phone number" | "mobile" | "teléfono" | "telefonnummer" | "téléphone"
        | "telefone" => "phone",
        "address" | "dirección" | "adresse" | "endereço" => "address",
        "region" | "región" | "região" => "region",
        "status" | "estado" | "statut" => "status",
        "title" | "job title" => "title",
        "oncall" | "on-call" => "on-call",
        "am" | "account manager" | "account owner" | "csm" => "account manager",
        "doctor" | "gp" | "hausarzt" | "hausärztin" | "médico" | "médica" | "médecin" => {
            "doctor"
        }
        "dentist" | "zahnarzt" | "zahnärztin" | "dentista" | "dentiste" => "dentist",
        "landlord" | "vermieter" | "vermieterin" | "casero" | "propriétaire" | "senhorio" => {
            "landlord"
        }
        "stage" | "deal stage" | "etapa" | "fase" | "phase" => "stage",
        other => other,
    }
}

/// What a preference is a preference for: the words after its value in
/// its clause, when they say ("an aisle seat on long-haul flights").
fn preference_of(text: &str, value: &str) -> String {
    let Some(at) = text.find(value) else {
        return "preference".to_owned();
    };
    let rest = first_clause(&text[at + value.len()..]);
    let mut words = raw_words(rest);
    match words.next().map(str::to_lowercase).as_deref() {
        Some("on" | "for" | "in" | "at" | "when" | "with" | "during") => {
            let of: Vec<String> = words.filter_map(fold).collect();
            if of.is_empty() {
                "preference".to_owned()
            } else {
                format!("preference {}", of.join(" "))
            }
        }
        _ => "preference".to_owned(),
    }
}

/// Titles written before a person's name.
const TITLES: [&str; 13] = [
    "Dr.", "Dra.", "Mr.", "Ms.", "Mrs.", "Prof.", "Sr.", "Sra.", "Mme", "M.", "Herr", "Frau", "Dr",
];

/// `text` without the title of a person it starts with ("Dr. Keller").
fn without_title(text: &str) -> &str {
    let trimmed = text.trim_start();
    match trimmed.split_once(char::is_whitespace) {
        Some((first, rest)) if TITLES.contains(&first) && rest.starts_with(char::is_uppercase) => {
            rest
        }
        _ => text,
    }
}

/// The first clause of `text`.
fn first_clause(text: &str) -> &str {
    CLAUSE_BREAK.split(text).next().unwrap_or(text)
}

/// `text` without the article it starts with.
fn without_article(text: &str) -> &str {
    let trimmed = text.trim_start();
    for article in ["a ", "an ", "the ", "A ", "An ", "The "] {
        if let Some(rest) = trimmed.strip_prefix(article) {
            return rest;
        }
    }
    text
}

/// The last clause of `text`.
fn last_clause(text: &str) -> &str {
    CLAUSE_BREAK.split(text).last().unwrap_or(text)
}

/// What an attribute is of, folded ("PostgreSQL" and "pg" are "postgres").
fn key(text: &str) -> String {
    let words: Vec<String> = raw_words(text).filter_map(fold).collect();
    words.join(" ")
}

/// Whether the value at `at` is the one a change came from ("from 5433
/// to 6432": 5433).
fn former(sentence: &str, at: usize) -> bool {
    let before = sentence[..at].trim_end().to_lowercase();
    let last_words: Vec<&str> = before.split_whitespace().rev().take(3).collect();
    last_words
        .first()
        .is_some_and(|w| ["from", "de", "von", "desde", "du"].contains(w))
        || (last_words
            .get(1)
            .is_some_and(|w| ["from", "von", "desde"].contains(w))
            && last_words
                .first()
                .is_some_and(|w| ["port", "version", "v"].contains(w)))
}

/// The value phrase at the start of `text` as `kind` reads it.
fn value_phrase(text: &str, kind: Value) -> Option<String> {
    let text = without_title(text);
    let mut words = Vec::new();
    for (i, raw) in text.split_whitespace().enumerate() {
        let word = raw.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']);
        let lower = word.to_lowercase();
        if i > 0 && VALUE_END_SET.contains(lower.as_str()) {
            break;
        }
        if i == 0 && (DETERMINERS.contains(&lower.as_str()) || kind == Value::Name && !named(text))
        {
            return None;
        }
        if !word.is_empty() {
            words.push(word);
        }
        let ended = raw.len() != word.len() || words.len() >= 6;
        if ended || kind == Value::Number {
            break;
        }
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// Articles a named value may follow ("joined the Apache Foundation").
const THE: [&str; 11] = [
    "the", "el", "la", "los", "der", "die", "das", "le", "les", "o", "os",
];

/// Whether `text` starts with a name: a capitalised word or a number,
/// perhaps after an article.
fn named(text: &str) -> bool {
    let mut words = text.split_whitespace();
    // "Acme", "iFood", "3M".
    let starts_named = |w: &str| {
        capitalised(w)
            || w.chars().skip(1).any(char::is_uppercase)
            || w.starts_with(|c: char| c.is_ascii_digit())
    };
    match words.next() {
        Some(first) if THE.contains(&first.to_lowercase().as_str()) => {
            words.next().is_some_and(starts_named)
        }
        Some(first) => starts_named(first),
        None => false,
    }
}

/// The subject of a verb, read from the clause before it: the words of the
/// last clause that names something, up to the first verb ("Alice left
/// Acme and joined Globex": Alice).
fn subject_before(text: &str) -> &str {
    let mut clauses: Vec<&str> = CLAUSE_BREAK.split(text).collect();
    while let Some(clause) = clauses.pop() {
        let mut end = clause.len();
        let mut named = false;
        for (at, word) in clause.split_whitespace().map(|w| {
            let at = w.as_ptr() as usize - clause.as_ptr() as usize;
            (at, w)
        }) {
            if SUBJECT_END_SET.contains(word.to_lowercase().as_str()) {
                end = at;
                break;
            }
            if fold(word).is_some() {
                named = true;
            }
        }
        if named {
            return &clause[..end];
        }
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Claim {
        let mut all = claims(text);
        assert_eq!(all.len(), 1, "{text}: {all:?}");
        all.remove(0)
    }

    fn set(words: &[&str]) -> BTreeSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn employers_homes_and_ports_are_claims_of_their_subject() {
        let c = one("Alice Chen works at Acme Corp as a data engineer.");
        assert_eq!(
            (c.attribute.as_str(), &c.subject, &c.value),
            (
                "employer",
                &set(&["alice", "chen"]),
                &set(&["acme", "corp"])
            )
        );
        let c = one("Alice left Acme and joined Globex in March.");
        assert_eq!(
            (&c.subject, &c.value),
            (&set(&["alice"]), &set(&["globex"]))
        );
        let c = one("staging db -> port 6432 now");
        assert_eq!(
            (c.attribute.as_str(), &c.subject, c.value_text.as_str()),
            ("port", &set(&["staging", "database"]), "6432")
        );
        let c = one("We upgraded Postgres from 14 to 16.");
        assert_eq!(
            (c.attribute.as_str(), c.value_text.as_str()),
            ("version of postgres", "16")
        );
        assert!(claims("Alice speaks French and German.").is_empty());
        assert!(claims("We also use Go for the CLI.").is_empty());
    }
}
