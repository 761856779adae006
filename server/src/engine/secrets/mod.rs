//! Credentials in text: found so that they are never stored, logged or
//! sent to a model (issue 15). Deterministic patterns, no network.
//!
//! What is found: passwords stated in prose ("my password is …", "pw: …"),
//! `NAME=value` and `"name": "value"` settings whose name says password,
//! secret, token or key, connection strings with a password, bearer
//! tokens, PEM private keys, the keys and tokens of common providers (AWS,
//! GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, Hugging Face,
//! npm, SendGrid, Twilio), JSON Web Tokens, payment card numbers (Luhn
//! checked), and a generated-looking value stated shortly after a word
//! naming a key, token, secret or password, however the prose between
//! runs (unless named a digest or an id). A password stated in prose takes its whole sentence with it
//! (the sentence is about nothing else); any other secret is replaced by
//! [`REDACTED`] where it stands, so the rest of its sentence survives.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::engine::{injection, text};

/// What the server does with a memory that holds a credential
/// (`--reject-secrets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSecret {
    /// Refuses it with INVALID_ARGUMENT naming the field (the default).
    Reject,
    /// Stores it as given.
    Allow,
}

/// What a refused field says of the credential it holds: its kind, never
/// the secret.
pub fn refusal(kind: SecretKind) -> String {
    format!(
        "contains {}; Engram does not store credentials: keep it in a secret manager and \
         store where to find it (the server's --reject-secrets false allows them)",
        kind.describe()
    )
}

/// What a secret is replaced by.
pub const REDACTED: &str = "[REDACTED]";

/// A kind of secret, named in decisions, errors and metrics — never the
/// secret itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SecretKind {
    Password,
    PrivateKey,
    ConnectionString,
    ProviderKey,
    Token,
    CardNumber,
}

impl SecretKind {
    /// How an error or a decision names it.
    pub fn describe(self) -> &'static str {
        match self {
            SecretKind::Password => "a password",
            SecretKind::PrivateKey => "a private key",
            SecretKind::ConnectionString => "a connection string with a password",
            SecretKind::ProviderKey => "an API key",
            SecretKind::Token => "an access token",
            SecretKind::CardNumber => "a payment card number",
        }
    }

    /// Its name in metadata.
    pub fn label(self) -> &'static str {
        match self {
            SecretKind::Password => "password",
            SecretKind::PrivateKey => "private_key",
            SecretKind::ConnectionString => "connection_string",
            SecretKind::ProviderKey => "api_key",
            SecretKind::Token => "token",
            SecretKind::CardNumber => "card_number",
        }
    }
}

/// One secret in a text: its kind, the bytes to take out and whether its
/// whole sentence goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: SecretKind,
    pub range: Range<usize>,
    /// A stated password: the sentence says nothing else worth keeping.
    pub whole_sentence: bool,
}

/// A pattern, the capture group that is the secret (0: the whole match),
/// and its kind.
struct Pattern {
    regex: Regex,
    group: usize,
    kind: SecretKind,
    /// Only a value that looks generated is a secret (see
    /// [`looks_generated`]).
    generated_only: bool,
}

fn pattern(source: &str, group: usize, kind: SecretKind) -> Pattern {
    Pattern {
        regex: Regex::new(source).expect("the secret patterns compile"),
        group,
        kind,
        generated_only: false,
    }
}

/// `pattern`, matching only values that look generated.
fn generated(pattern: Pattern) -> Pattern {
    Pattern {
        generated_only: true,
        ..pattern
    }
}

/// Whether a value looks generated rather than written: 16 characters or
/// more mixing letters and digits (a hex digest, a random token), as keys
/// and tokens are and names are not.
fn looks_generated(value: &str) -> bool {
    value.len() >= 16
        && value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().any(|b| b.is_ascii_alphabetic())
        && value.bytes().filter(|b| b.is_ascii_digit()).count() * 8 >= value.len()
}

/// Values that follow "password is" without being one.
const NOT_A_PASSWORD: &[&str] = &[
    "a",
    "an",
    "the",
    "in",
    "on",
    "at",
    "stored",
    "saved",
    "kept",
    "set",
    "not",
    "no",
    "required",
    "wrong",
    "incorrect",
    "correct",
    "expired",
    "reset",
    "changed",
    "same",
    "empty",
    "blank",
    "missing",
    "too",
    "very",
    "still",
    "now",
    "being",
    "managed",
    "rotated",
    "defined",
    "given",
    "shared",
    "known",
    "needed",
    "optional",
    "invalid",
    "valid",
    "weak",
    "strong",
    "long",
    "short",
    "case",
    "hashed",
    "encrypted",
    "only",
    "never",
    "always",
    "what",
    "that",
    "this",
    "it",
    "your",
    "my",
    "our",
    "their",
    "his",
    "her",
    "from",
    "for",
    "with",
    "by",
    "of",
    "to",
    "and",
    "or",
    "but",
    // A mark already in place (its brackets are not part of a value).
    "redacted",
];

// Word boundaries are ASCII ones, `(?-u:\b)`: a Unicode boundary would keep
// the patterns off the DFA, and every write pays for them.
static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    use SecretKind::*;
    vec![
        pattern(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            0,
            PrivateKey,
        ),
        // scheme://user:password@host — the password only.
        pattern(
            r"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]*:([^\s@/]{1,200})@[^\s]",
            1,
            ConnectionString,
        ),
        pattern(
            r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?-u:\b)",
            0,
            ProviderKey,
        ),
        pattern(
            r"(?-u:\b)(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,255}(?-u:\b)",
            0,
            ProviderKey,
        ),
        pattern(
            r"(?-u:\b)github_pat_[A-Za-z0-9_]{22,255}(?-u:\b)",
            0,
            ProviderKey,
        ),
        pattern(r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}(?-u:\b)", 0, ProviderKey),
        pattern(r"(?-u:\b)xox[abposre]-[A-Za-z0-9-]{10,}", 0, ProviderKey),
        pattern(
            r"(?-u:\b)(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}(?-u:\b)",
            0,
            ProviderKey,
        ),
        pattern(r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}", 0, ProviderKey),
        pattern(
            r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
            0,
            ProviderKey,
        ),
        pattern(r"(?-u:\b)AIza[0-9A-Za-z_-]{35}(?-u:\b)", 0, ProviderKey),
        pattern(r"(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)", 0, ProviderKey),
        pattern(r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)", 0, ProviderKey),
        pattern(
            r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}(?-u:\b)",
            0,
            ProviderKey,
        ),
        pattern(r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)", 0, ProviderKey),
        pattern(
            r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            0,
            Token,
        ),
        pattern(r"(?i)(?-u:\b)bearer\s+([A-Za-z0-9._~+/-]{12,}=*)", 1, Token),
        // NAME=value, name: value, "name": "value" — where the name says
        // it holds a password or a secret (not "secretary: …"): any value
        // of 4 characters or more; a key or a token: 16 or more (not a
        // count like max_tokens).
        pattern(
            r#"(?i)(?-u:\b)[a-z0-9_.-]*(?:password|passwd|passphrase|secret)s?(?:[_.-][a-z0-9_.-]*)?["']?[ \t]*[:=][ \t]*["']?([^\s"',;]{4,})"#,
            1,
            Token,
        ),
        pattern(
            r#"(?i)(?-u:\b)[a-z0-9_.-]*(?:api[_-]?key|apikey|access[_-]?key|auth[_-]?key|signing[_-]?key|token|private[_-]?key|client[_-]?secret|credentials?)[a-z0-9_.-]*["']?[ \t]*[:=][ \t]*["']?([^\s"',;]{16,})"#,
            1,
            Token,
        ),
        // A key or token stated in prose: "the secret access key for the
        // backup user is …" — taken out where it stands.
        pattern(
            r#"(?i)(?-u:\b)(?:secret(?: access)? key|secret|api key|access key|access token|auth token|token|private key)(?:[ \t]+(?:in|on|for|of|to|at)[ \t]+[\w' -]{1,40}?)?(?:[ \t]+(?:is|was)(?-u:\b)|[ \t]*[=:])[ \t]*["'“‘`]?([^\s"'”’`,;]{12,})"#,
            1,
            Token,
        ),
        // A bare "key" stated in prose ("use this key for the geocoding
        // calls: 7e3b…"): only a value that looks generated (see
        // `looks_generated`), not "the primary key is customer_id".
        generated(pattern(
            r#"(?i)(?-u:\b)keys?(?:[ \t]+(?:in|on|for|of|to|at)[ \t]+[\w' -]{1,40}?)?(?:[ \t]+(?:is|was)(?-u:\b)|[ \t]*[=:])[ \t]*["'“‘`(\[]?([A-Za-z0-9_+/-]{16,}=*)"#,
            1,
            Token,
        )),
        // A key or token set to a value in prose ("I set the staging API
        // key to 9f86…", "the token is now …"): only a value that looks
        // generated, not "the key to success".
        generated(pattern(
            r#"(?i)(?-u:\b)(?:secret(?: access)? key|secret|api key|access key|access token|auth token|token|private key|key)s?(?:[ \t]+(?:in|on|for|of|at)[ \t]+[\w' -]{1,40}?)?[ \t]+(?:(?:is now|now)|(?:(?:set|changed|rotated|reset|updated)[ \t]+)?to)[ \t]+["'“‘`]?([A-Za-z0-9_+/-]{16,}=*)"#,
            1,
            Token,
        )),
        // A value named a key after it: "use 9f86… as the signing secret".
        generated(pattern(
            r#"(?i)(?-u:\b)use[ \t]+["'“‘`]?([A-Za-z0-9_+/-]{16,}=*)["'”’`]?[ \t]+as[ \t]+(?:(?:the|our|my|your|a)[ \t]+)?[\w -]{0,30}?(?:key|token|secret|password)(?-u:\b)"#,
            1,
            Token,
        )),
        // A token by its shape: a short lower-case prefix (with live, test
        // or prod) and a generated run ("tk_live_8f3k…", "tk_8f3k…").
        generated(pattern(
            r"(?-u:\b)[a-z]{2,4}_(?:(?:live|test|prod)_)?[A-Za-z0-9]{20,}(?-u:\b)",
            0,
            Token,
        )),
        // Webhook URLs whose last part is the secret.
        pattern(
            r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9]+/[A-Za-z0-9]+/([A-Za-z0-9]{16,})",
            1,
            Token,
        ),
        pattern(
            r"discord(?:app)?\.com/api/webhooks/[0-9]+/([A-Za-z0-9_-]{30,})",
            1,
            Token,
        ),
        // A login given as "user / password": "the login is analyst / …".
        pattern(
            r"(?i)(?-u:\b)(?:login|logins|credentials?|username|user|account)(?-u:\b)[^.\n]{0,40}?(?-u:\b)(?:(?:is|are)(?-u:\b)|:)[ \t]+[\w.@+-]+[ \t]+/[ \t]+([^\s/]{6,})",
            1,
            Password,
        ),
        // A password after an email address, as a login is written down:
        // "ops@example.com / Tr0ub4dor&3", "ops@example.com | …",
        // "ops@example.com:Tr0ub4dor&3" — a value with a digit or a symbol
        // after its first two characters ("a@b.com / PR-12" is not one).
        pattern(
            r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+(?:[ \t]*[/|][ \t]*|:)([^\s/|,;]{2,}[0-9!#$%&*?^~_.-][^\s/|,;]{2,})",
            1,
            Password,
        ),
        // A password stated in prose: "my password is hunter2", "the wifi
        // password in the Berlin office is …", "pw: …", "PIN 4321".
        pattern(
            r#"(?i)(?-u:\b)(?:password|passwd|passcode|passphrase|pass phrase|pw|pin(?: code)?)(?:[ \t]+(?:in|on|for|of|to|at)[ \t]+[\w' -]{1,40}?)?[ \t]*(?:(?:is now|is|was|reads|will be)(?-u:\b)|=|:|-[ \t])[ \t]*["'“‘`]?([^\s"'”’`,;]+)"#,
            1,
            Password,
        ),
        // A password or a code given right after its name, or after "is",
        // "it's" or "(changed) to": "wifi password Hazel#Cove9", "alarm
        // code 4471", "the garage opener code, it's 7390#",
        // "the keypad code is 8302", "rotated the password to Qm7!rPz0" — a
        // value with a digit, not a word ("password isolation", "sent the
        // password to Maria").
        pattern(
            r#"(?i)(?-u:\b)(?:password|passwd|passcode|pw|pin|(?:alarm|door|gate|safe|entry|access|lock|garage|building|keypad)(?:[ \t]+(?:opener|door|lock|entry|alarm|keypad))? code)(?:[ \t]+(?:in|on|for|of|at)[ \t]+[\w' -]{1,40}?[ \t]+(?:is now|is|was|will be)(?-u:\b)|[ \t]+(?:is now|is|was|(?:changed |set |rotated |reset )?to)(?-u:\b)|,?[ \t]+(?:it[’']s|it is|that[’']s)(?-u:\b))?(?:[ \t]+|[-:=])["'“‘`]?(\d{3,}[^\s"'”’`,;]*|[^\s"'”’`,;0-9]{3,}\d[^\s"'”’`,;]*|[^\s"'”’`,;0-9]{2}\d[^\s"'”’`,;]{2,})"#,
            1,
            Password,
        ),
        // A password stated in German, French or Spanish: "das Passwort
        // vom Gäste-WLAN ist Sonne2024!", "Kennwort: Tulpe77", "le mot de
        // passe du wifi est Soleil#42", "la contraseña es Luna-2291". After
        // a verb or a space, a value with a digit (not "ist abgelaufen",
        // "est expiré"); after a colon or an equals sign, any value.
        pattern(
            r#"(?i)(?-u:\b)(?:passwort|kennwort|mot de passe|contraseña|contrasena|clave)(?:[ \t]+(?:vom|von|für|fuer|des|der|du|de la|de|del|pour|para)[ \t]+[\w' -]{1,40}?)?(?:[ \t]+(?:ist jetzt|ist|lautet|war|est maintenant|est|était|es ahora|es|era)(?-u:\b)[ \t]*|[ \t]+)["'“‘`«]?[ \t]*(\d{3,}[^\s"'”’`»,;]*|[^\s"'”’`»,;0-9]{3,}\d[^\s"'”’`»,;]*|[^\s"'”’`»,;0-9]{2}\d[^\s"'”’`»,;]{2,})"#,
            1,
            Password,
        ),
        pattern(
            r#"(?i)(?-u:\b)(?:passwort|kennwort|mot de passe|contraseña|contrasena)[ \t]*[:=][ \t]*["'“‘`«]?[ \t]*([^\s"'”’`»,;]{4,})"#,
            1,
            Password,
        ),
        // A card's security code, which goes with its number: "CVV 123",
        // "cvc: 4821", "security code is 737", "Prüfnummer 123",
        // "cryptogramme 123", "código de seguridad 123".
        pattern(
            r"(?i)(?-u:\b)(?:cvv2?|cvc2?|cid|csc|(?:card )?security code|card code|prüfnummer|kartenprüfnummer|cryptogramme(?: visuel)?|code de sécurité|código de seguridad)(?:[ \t]+(?:is|was|ist|est|es))?[ \t]*[:=#-]?[ \t]*(\d{3,4})(?-u:\b)",
            1,
            CardNumber,
        ),
    ]
});

/// A 40-character base64 string beside nothing else of its alphabet: an
/// AWS secret access key when it mixes upper case, lower case and digits
/// (a hex digest has no upper case).
static SECRET_KEY_40: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])")
        .expect("the key pattern compiles")
});

/// A long generated value shortly after a word naming a key, a token, a
/// secret or a password, however the prose between them runs ("staging
/// keys live in the vault, never in .env (current one is 9f3c…)"): 24
/// characters or more, so that shorter identifiers near such a word are
/// left alone, and only values that look generated (see
/// `looks_generated`).
static NEAR_A_KEY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:(?:api[_ -]?keys?|keys?|tokens?|secrets?|credentials?|passwords?|passwort|jeton|clave)(?-u:\b)|schlüssel|clé|contraseña)[^\n]{0,80}?(?-u:\b)([A-Za-z0-9_+/-]{24,}=*)",
    )
    .expect("the key-word pattern compiles")
});

/// A shorter generated value (16 to 23 characters) close after a word
/// naming a key, a token or a secret ("den API-Key SWIASTGxK29fQ7LmPzR4vN8",
/// "la clé sandbox c'est sbx_9f2KqLm41TzV0aXe"): only one that mixes upper
/// case, lower case and digits (see `looks_minted`), which identifiers of
/// that length near such words rarely do.
static CLOSE_AFTER_A_KEY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:(?:api[_ -]?keys?|keys?|tokens?|secrets?|credentials?|jeton|clave)(?-u:\b)|schlüssel|clé)[^\n]{0,30}?(?-u:\b)([A-Za-z0-9_+/-]{16,23})(?-u:\b)",
    )
    .expect("the close key-word pattern compiles")
});

/// A generated value that mixes upper case, lower case and digits.
fn looks_minted(value: &str) -> bool {
    looks_generated(value)
        && value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase())
}

/// Words that, just before a generated value, say it is a digest or an id
/// rather than a secret ("the key fix is in commit 3f2a…").
const NOT_A_SECRET_BEFORE: &[&str] = &[
    "commit",
    "sha",
    "hash",
    "md5",
    "checksum",
    "digest",
    "fingerprint",
    "uuid",
    "id",
    "build",
    "version",
    "revision",
];

/// Card numbers: 13 to 19 digits, in groups or not.
static CARD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)\d(?:[ -]?\d){12,18}(?-u:\b)").expect("the card pattern compiles")
});

/// Compiles the patterns now (at start) rather than in the first request
/// that needs them.
pub fn prepare() {
    LazyLock::force(&PATTERNS);
    LazyLock::force(&CARD);
    LazyLock::force(&SECRET_KEY_40);
    LazyLock::force(&NEAR_A_KEY_WORD);
    LazyLock::force(&CLOSE_AFTER_A_KEY_WORD);
}

/// Every secret in `text`, in order, without overlaps.
pub fn find(text: &str) -> Vec<Found> {
    // Each pattern alone: its literal prefix finds a clean text's absence of
    // a match in tens of nanoseconds, where one set of them all (no
    // prefilter, a DFA too large for its cache) took 25 µs.
    let mut found = Vec::new();
    for pattern in PATTERNS.iter() {
        for captures in pattern.regex.captures_iter(text) {
            let Some(m) = captures.get(pattern.group) else {
                continue;
            };
            let mut range = m.range();
            // Sentence punctuation after a value is not part of it, nor
            // are brackets around it: "(token: [tk_…])" keeps its brackets
            // around the mark, none left over on one side.
            while range.end > range.start
                && matches!(
                    text.as_bytes()[range.end - 1],
                    b'.' | b'!' | b'?' | b')' | b']'
                )
            {
                range.end -= 1;
            }
            while range.end > range.start && matches!(text.as_bytes()[range.start], b'(' | b'[') {
                range.start += 1;
            }
            let value = &text[range.clone()];
            if pattern.generated_only && !looks_generated(value) {
                continue;
            }
            if pattern.kind == SecretKind::Password || pattern.group == 1 {
                if value.is_empty() || NOT_A_PASSWORD.contains(&value.to_lowercase().as_str()) {
                    continue;
                }
                if value.starts_with("${") || value.starts_with('<') || value.starts_with('$') {
                    // A placeholder, not a value.
                    continue;
                }
            }
            found.push(Found {
                kind: pattern.kind,
                range,
                whole_sentence: pattern.kind == SecretKind::Password,
            });
        }
    }
    for captures in SECRET_KEY_40.captures_iter(text) {
        let m = captures.get(1).expect("the key group");
        let key = m.as_str();
        let mixed = key.bytes().any(|b| b.is_ascii_uppercase())
            && key.bytes().any(|b| b.is_ascii_lowercase())
            && key.bytes().any(|b| b.is_ascii_digit());
        if mixed {
            found.push(Found {
                kind: SecretKind::ProviderKey,
                range: m.range(),
                whole_sentence: false,
            });
        }
    }
    let near = NEAR_A_KEY_WORD
        .captures_iter(text)
        .map(|c| (c, looks_generated as fn(&str) -> bool));
    let close = CLOSE_AFTER_A_KEY_WORD
        .captures_iter(text)
        .map(|c| (c, looks_minted as fn(&str) -> bool));
    for (captures, looks_secret) in near.chain(close) {
        let m = captures.get(1).expect("the value group");
        if looks_secret(m.as_str()) && !said_to_be_a_digest(&text[..m.start()]) {
            found.push(Found {
                kind: SecretKind::Token,
                range: m.range(),
                whole_sentence: false,
            });
        }
    }
    for m in CARD.find_iter(text) {
        let digits: Vec<u32> = m.as_str().chars().filter_map(|c| c.to_digit(10)).collect();
        if is_card_number(&digits) {
            found.push(Found {
                kind: SecretKind::CardNumber,
                range: m.range(),
                whole_sentence: false,
            });
        }
    }
    merge_overlaps(found)
}

/// Whether the last three words of `before` name a digest or an id.
fn said_to_be_a_digest(before: &str) -> bool {
    before
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .rev()
        .take(3)
        .any(|w| NOT_A_SECRET_BEFORE.contains(&w.to_ascii_lowercase().as_str()))
}

/// `found` in order, overlapping ones joined (the first one's kind).
fn merge_overlaps(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_by_key(|f| (f.range.start, std::cmp::Reverse(f.range.end)));
    let mut merged: Vec<Found> = Vec::new();
    for f in found {
        match merged.last_mut() {
            Some(last) if f.range.start < last.range.end => {
                last.range.end = last.range.end.max(f.range.end);
                last.whole_sentence |= f.whole_sentence;
            }
            _ => merged.push(f),
        }
    }
    merged
}

/// A payment card number: a known issuer prefix and a valid Luhn check
/// digit.
fn is_card_number(digits: &[u32]) -> bool {
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let prefix_ok = match digits[0] {
        4 => true,
        5 => (1..=5).contains(&digits[1]),
        2 => (2..=7).contains(&digits[1]),
        3 => matches!(digits[1], 4 | 7 | 6 | 8),
        6 => true,
        _ => false,
    };
    if !prefix_ok {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// `text` with its secrets taken out, and their kinds (sorted, once each).
#[derive(Debug, Clone, PartialEq)]
pub struct Redacted {
    pub text: String,
    pub kinds: Vec<SecretKind>,
}

impl Redacted {
    /// True when the text held a secret.
    pub fn found_any(&self) -> bool {
        !self.kinds.is_empty()
    }

    /// The kinds as metadata reads them, e.g. "password,api_key".
    pub fn labels(&self) -> String {
        self.kinds
            .iter()
            .map(|k| k.label())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Takes every secret out of `text`: a stated password with its sentence,
/// anything else replaced by [`REDACTED`].
pub fn redact(text: &str) -> Redacted {
    let found = find(text);
    let mut kinds: Vec<SecretKind> = found.iter().map(|f| f.kind).collect();
    kinds.sort();
    kinds.dedup();
    if found.is_empty() {
        return Redacted {
            text: text.to_owned(),
            kinds,
        };
    }
    // Whole sentences widen their ranges first; then merge again. The
    // text is cut into sentences once, and the findings come in order, so
    // the cost stays linear in the text however many secrets one line holds.
    let sentences = if found.iter().any(|f| f.whole_sentence) {
        text::sentence_ranges(text)
    } else {
        Vec::new()
    };
    let mut first = 0;
    let mut cuts = Vec::with_capacity(found.len());
    for f in found {
        let range = if f.whole_sentence {
            sentences_around(text, &sentences, &mut first, &f.range)
        } else {
            f.range
        };
        cuts.push(Found { range, ..f });
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for cut in merge_overlaps(cuts) {
        out.push_str(&text[at..cut.range.start]);
        if !cut.whole_sentence {
            out.push_str(REDACTED);
        }
        at = cut.range.end;
    }
    out.push_str(&text[at..]);
    Redacted {
        text: tidy(&out),
        kinds,
    }
}

/// The sentences of `text` that hold `range`: from the start of the first
/// (after a speaker's "User:" at the start of its line) to the end of the
/// last. `first` is where to start looking among `sentences`, moved on to
/// the sentence `range` starts in: ranges come in order.
fn sentences_around(
    text: &str,
    sentences: &[Range<usize>],
    first: &mut usize,
    range: &Range<usize>,
) -> Range<usize> {
    while *first + 1 < sentences.len() && sentences[*first].end <= range.start {
        *first += 1;
    }
    let Some(holding) = sentences.get(*first) else {
        return range.clone();
    };
    let mut start = holding.start.min(range.start);
    // Keep a speaker's "User:" prefix on its line.
    if start == 0 || text.as_bytes()[start - 1] == b'\n' {
        let (speaker, _) = injection::speaker_prefix(&text[start..range.start]);
        start += speaker.len();
    }
    let end = sentences[*first..]
        .iter()
        .find(|s| s.end >= range.end)
        .map_or(range.end, |s| s.end);
    start..end
}

/// Spaces left doubled or before punctuation by a cut, tidied.
fn tidy(text: &str) -> String {
    let mut lines = Vec::new();
    for line in text.split('\n') {
        let mut out = String::with_capacity(line.len());
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
        let leading = line.len() - line.trim_start().len();
        lines.push(format!("{}{}", &line[..leading], out));
    }
    lines.join("\n").trim().to_owned()
}

#[cfg(test)]
mod tests;
