//! The `--auth-keys` file: one key a line, `KEY ROLE NAMESPACES`.
//!
//! ```text
//! # KEY                  ROLE   NAMESPACES
//! shop-agents-7f3a       write  shop,shop-staging/*
//! sha256:9f86d08…0f00a08 read   shop
//! ops-key                admin  *
//! legacy-key
//! ```
//!
//! ROLE is `read`, `write` or `admin`; NAMESPACES a comma-separated list of
//! names and prefixes ending in `*` (`*` alone: every namespace). KEY may be
//! `sha256:HEX`, the digest of the key, so the file need not hold secrets. A
//! line with only a key is admin on every namespace (the old format). Errors
//! name the line, never its key.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use hmac::{Hmac, Mac as _};
use sha2::{Digest as _, Sha256};

/// A key's SHA-256 digest: how keys are stored and compared, so a lookup's
/// timing says nothing about how much of a guessed key was right.
pub type KeyDigest = [u8; 32];

/// The prefix of a key given by its digest.
const DIGEST_PREFIX: &str = "sha256:";

/// How many bytes of a key's HMAC name it in logs and history: enough to
/// tell keys apart.
const KEY_ID_BYTES: usize = 8;

/// How keys are named in logs, history and watch events: the first bytes
/// of HMAC-SHA256 of the key's digest under a secret of the database (made
/// with it, kept in it). Any reader sees key ids; without the secret, an id
/// is no help in guessing the key, however weak, and the same key has
/// unrelated ids in different databases.
#[derive(Clone)]
pub struct KeyIds {
    secret: Vec<u8>,
}

impl KeyIds {
    pub fn new(secret: &[u8]) -> KeyIds {
        KeyIds {
            secret: secret.to_vec(),
        }
    }

    /// The id of the key whose digest is `digest`, in hex.
    pub fn id(&self, digest: &KeyDigest) -> String {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes a key of any length");
        mac.update(digest);
        mac.finalize().into_bytes()[..KEY_ID_BYTES]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

impl fmt::Debug for KeyIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyIds(..)")
    }
}

/// What a key may do, each role including the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Get, List, Search, BuildContext, Classify and GetStats.
    Read,
    /// Everything but Forget and SetAgentScope.
    Write,
    /// Everything.
    Admin,
}

impl Role {
    fn parse(text: &str) -> Option<Role> {
        match text {
            "read" => Some(Role::Read),
            "write" => Some(Role::Write),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Read => "read",
            Role::Write => "write",
            Role::Admin => "admin",
        })
    }
}

/// The namespaces a key may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespaces(Vec<Pattern>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Exact(String),
    /// Every namespace starting with this (all of them when empty).
    Prefix(String),
}

impl Namespaces {
    /// Every namespace.
    pub fn all() -> Namespaces {
        Namespaces(vec![Pattern::Prefix(String::new())])
    }

    /// Whether `namespace` is one of them.
    pub fn allows(&self, namespace: &str) -> bool {
        self.0.iter().any(|pattern| match pattern {
            Pattern::Exact(name) => name == namespace,
            Pattern::Prefix(prefix) => namespace.starts_with(prefix.as_str()),
        })
    }

    fn parse(text: &str) -> Result<Namespaces, String> {
        let mut patterns = Vec::new();
        for item in text.split(',').map(str::trim) {
            let pattern = match item.strip_suffix('*') {
                _ if item.is_empty() => {
                    return Err("an empty namespace in the list (a stray comma?)".into());
                }
                Some(prefix) if prefix.contains('*') => {
                    return Err(format!("{item:?}: `*` may only end a namespace prefix"));
                }
                Some(prefix) => Pattern::Prefix(prefix.to_owned()),
                None if item.contains('*') => {
                    return Err(format!("{item:?}: `*` may only end a namespace prefix"));
                }
                None => Pattern::Exact(item.to_owned()),
            };
            patterns.push(pattern);
        }
        Ok(Namespaces(patterns))
    }
}

/// What one key may do, and the name it goes by in logs and history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The key's public name ([`KeyIds`]), logged by line when the file is
    /// read.
    pub key_id: String,
    pub role: Role,
    pub namespaces: Namespaces,
}

/// The keys of one version of the file.
#[derive(Debug, Default)]
pub struct KeyFile {
    pub grants: HashMap<KeyDigest, Arc<Grant>>,
    /// The line of each key, in file order.
    pub lines: Vec<(usize, KeyDigest)>,
    /// Lines in the old format (a key alone), for a deprecation warning.
    pub bare_key_lines: Vec<usize>,
}

/// A line of the key file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct LineError {
    pub line: usize,
    pub problem: String,
}

/// The digest of a key as a caller sends it.
pub fn digest(key: &str) -> KeyDigest {
    Sha256::digest(key.as_bytes()).into()
}

impl KeyFile {
    /// Parses the file's text. A file without a key is an error: it would
    /// lock every caller out.
    pub fn parse(text: &str, ids: &KeyIds) -> Result<KeyFile, LineError> {
        let mut file = KeyFile::default();
        let mut first_line: HashMap<KeyDigest, usize> = HashMap::new();
        for (at, line) in text.lines().enumerate() {
            let number = at + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fail = |problem: String| LineError {
                line: number,
                problem,
            };
            let (key, rest) = line
                .split_once(char::is_whitespace)
                .map_or((line, ""), |(key, rest)| (key, rest.trim()));
            let digest = key_digest(key).map_err(fail)?;
            let (role, namespaces) = if rest.is_empty() {
                file.bare_key_lines.push(number);
                (Role::Admin, Namespaces::all())
            } else {
                let (role, namespaces) = rest
                    .split_once(char::is_whitespace)
                    .map(|(role, namespaces)| (role, namespaces.trim()))
                    .ok_or_else(|| {
                        fail("expected `KEY ROLE NAMESPACES` (e.g. `KEY read shop,team-*`)".into())
                    })?;
                let role = Role::parse(role).ok_or_else(|| {
                    fail(format!(
                        "unknown role {:?} (use read, write or admin)",
                        crate::grpc::status::cut(role, 32)
                    ))
                })?;
                (role, Namespaces::parse(namespaces).map_err(fail)?)
            };
            if let Some(earlier) = first_line.insert(digest, number) {
                return Err(fail(format!("the same key as line {earlier}")));
            }
            let grant = Grant {
                key_id: ids.id(&digest),
                role,
                namespaces,
            };
            file.grants.insert(digest, Arc::new(grant));
            file.lines.push((number, digest));
        }
        if file.grants.is_empty() {
            return Err(LineError {
                line: text.lines().count(),
                problem: "the file holds no key (`KEY ROLE NAMESPACES` a line; # starts a comment)"
                    .into(),
            });
        }
        Ok(file)
    }
}

/// A key as written in the file: `sha256:HEX`, or the key itself.
fn key_digest(key: &str) -> Result<KeyDigest, String> {
    let Some(hex) = key.strip_prefix(DIGEST_PREFIX) else {
        return Ok(digest(key));
    };
    let bytes = hex.as_bytes();
    if bytes.len() != 2 * 32 {
        return Err(format!(
            "a {DIGEST_PREFIX} key needs 64 hexadecimal digits, not {}",
            bytes.len()
        ));
    }
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(bytes.chunks_exact(2)) {
        let text = std::str::from_utf8(pair).map_err(|_| "a non-hexadecimal digit".to_owned())?;
        *byte = u8::from_str_radix(text, 16)
            .map_err(|_| format!("{DIGEST_PREFIX} is followed by a non-hexadecimal digit"))?;
    }
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> KeyIds {
        KeyIds::new(b"test secret")
    }

    fn grant<'a>(file: &'a KeyFile, key: &str) -> &'a Grant {
        file.grants.get(&digest(key)).expect("a grant for the key")
    }

    #[test]
    fn lines_give_a_role_and_namespaces() {
        let file = KeyFile::parse(
            "# fleet keys\n\
             shop-key   write  shop, shop-staging/*\n\
             dash-key\tread\t*\n\
             \n\
             ops-key admin team-*,ops\n",
            &ids(),
        )
        .expect("parse");
        let shop = grant(&file, "shop-key");
        assert_eq!(shop.role, Role::Write);
        assert!(shop.namespaces.allows("shop"));
        assert!(shop.namespaces.allows("shop-staging/eu"));
        assert!(!shop.namespaces.allows("shop-staging"));
        assert!(!shop.namespaces.allows("shopping"));
        assert!(!shop.namespaces.allows("default"));
        let dashboard = grant(&file, "dash-key");
        assert_eq!(dashboard.role, Role::Read);
        assert!(dashboard.namespaces.allows("anything"));
        let ops = grant(&file, "ops-key");
        assert_eq!(ops.role, Role::Admin);
        assert!(ops.namespaces.allows("team-a") && ops.namespaces.allows("ops"));
        assert!(!ops.namespaces.allows("opsx"));
        assert!(file.bare_key_lines.is_empty());
    }

    #[test]
    fn a_key_may_be_given_by_its_sha256() {
        // printf %s secret | sha256sum
        let file = KeyFile::parse(
            "sha256:2BB80D537B1DA3E38BD30361AA855686BDE0EACD7162FEF6A25FE97BF527A25B read shop\n",
            &ids(),
        )
        .expect("parse");
        let grant = grant(&file, "secret");
        assert_eq!(grant.role, Role::Read);
        assert_eq!(file.lines, [(1, digest("secret"))]);
    }

    #[test]
    fn a_key_id_is_an_hmac_of_the_keys_digest_under_the_databases_secret() {
        // python3: hmac.new(SECRET, sha256(b"secret").digest(), sha256).hexdigest()[:16]
        let by_digest = KeyFile::parse(
            "sha256:2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b read shop\n",
            &ids(),
        )
        .expect("parse");
        assert_eq!(grant(&by_digest, "secret").key_id, "a2a1cf0d6b412dac");
        let by_key = KeyFile::parse("secret read shop\n", &ids()).expect("parse");
        assert_eq!(grant(&by_key, "secret").key_id, "a2a1cf0d6b412dac");
        // Not the digest's first bytes (2bb80d537b1da3e3), and another
        // database names the same key otherwise.
        let elsewhere =
            KeyFile::parse("secret read shop\n", &KeyIds::new(b"another database")).expect("parse");
        assert_eq!(grant(&elsewhere, "secret").key_id, "28580d0c6fa426da");
        assert_eq!(format!("{:?}", ids()), "KeyIds(..)");
    }

    #[test]
    fn a_bare_key_is_admin_everywhere_and_noted() {
        let file = KeyFile::parse("old-key\nnew-key read a\n", &ids()).expect("parse");
        let old = grant(&file, "old-key");
        assert_eq!(old.role, Role::Admin);
        assert!(old.namespaces.allows("whatever"));
        assert_eq!(file.bare_key_lines, [1]);
    }

    #[test]
    fn bad_lines_are_named_without_their_key() {
        for (text, line, problem) in [
            (
                "k1 read a\nsecret-key reader a\n",
                2,
                "unknown role \"reader\"",
            ),
            ("secret-key write\n", 1, "expected `KEY ROLE NAMESPACES`"),
            ("secret-key write a,,b\n", 1, "empty namespace"),
            ("secret-key write a*b\n", 1, "may only end"),
            ("secret-key write *a*\n", 1, "may only end"),
            ("sha256:abc read a\n", 1, "64 hexadecimal digits"),
            (
                "sha256:zzb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b read a\n",
                1,
                "non-hexadecimal",
            ),
            (
                "secret-key read a\n\nsecret-key admin *\n",
                3,
                "same key as line 1",
            ),
            ("# nothing yet\n\n", 2, "holds no key"),
        ] {
            let error = KeyFile::parse(text, &ids()).expect_err(text);
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.problem.contains(problem), "{text:?}: {error}");
            assert!(!error.to_string().contains("secret-key"), "{error}");
        }
    }
}
