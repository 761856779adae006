//! Watch cursors: opaque to callers, a position in the change feed bound to
//! the namespace and the database it was read from. A cursor used in
//! another namespace, or on another database — whose change numbers name
//! other changes (another server's, or a restored backup's, which gets a
//! database id of its own) — is refused rather than misread, which would
//! skip or repeat events.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::page_token;
use super::validate::Violations;

/// The format of the cursors this server makes. A later one (another
/// backend's position, say) gets another number; this server refuses
/// numbers it does not know.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Cursor {
    /// [`FORMAT`].
    v: u32,
    /// Fingerprint of the namespace.
    n: String,
    /// Fingerprint of the database's id.
    d: String,
    /// The number of the last change the watch delivered or passed over.
    p: i64,
}

/// What the cursors of one namespace of one database are bound to.
#[derive(Debug, Clone)]
pub struct CursorKey {
    namespace: String,
    database: String,
}

impl CursorKey {
    pub fn new(namespace: &str, database_id: &str) -> CursorKey {
        CursorKey {
            namespace: page_token::fingerprint(&("watch namespace", namespace)),
            database: page_token::fingerprint(&("watch database", database_id)),
        }
    }

    /// The cursor of position `seq`.
    pub fn encode(&self, seq: i64) -> String {
        let cursor = Cursor {
            v: FORMAT,
            n: self.namespace.clone(),
            d: self.database.clone(),
            p: seq,
        };
        // Serialising strings and integers cannot fail.
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&cursor).unwrap_or_default())
    }

    /// The position in `cursor`, or a violation of `field` when it is not
    /// a cursor of this namespace and database. Empty: `None`, no violation.
    pub fn decode(&self, v: &mut Violations, field: &str, cursor: &str) -> Option<i64> {
        if cursor.is_empty() {
            return None;
        }
        match self.check(cursor) {
            Ok(seq) => Some(seq),
            Err(why) => {
                v.add(field, why);
                None
            }
        }
    }

    fn check(&self, cursor: &str) -> Result<i64, &'static str> {
        const FOREIGN: &str = "is not a watch cursor from this service";
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| FOREIGN)?;
        let cursor: Cursor = serde_json::from_slice(&bytes).map_err(|_| FOREIGN)?;
        if cursor.v != FORMAT {
            return Err("is a watch cursor of a format this server does not know");
        }
        if cursor.n != self.namespace {
            return Err("belongs to a watch of another namespace");
        }
        if cursor.d != self.database {
            return Err(
                "comes from another database (another server's, or the one a restored backup \
                 replaced): its changes are not this database's; watch from now instead",
            );
        }
        if cursor.p < 0 {
            return Err(FOREIGN);
        }
        Ok(cursor.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(key: &CursorKey, cursor: &str) -> Result<Option<i64>, String> {
        let mut v = Violations::default();
        let seq = key.decode(&mut v, "cursor", cursor);
        v.finish(seq).map_err(|err| format!("{err:?}"))
    }

    #[test]
    fn a_cursor_round_trips_in_its_namespace_and_database() {
        let key = CursorKey::new("ns", "db1");
        assert_eq!(decoded(&key, &key.encode(42)), Ok(Some(42)));
        assert_eq!(decoded(&key, ""), Ok(None), "no cursor: from now");
    }

    #[test]
    fn a_cursor_is_refused_elsewhere_or_when_it_is_none_at_all() {
        let key = CursorKey::new("ns", "db1");
        let cursor = key.encode(42);
        for (other, why) in [
            (CursorKey::new("other", "db1"), "another namespace"),
            (CursorKey::new("ns", "db2"), "another database"),
        ] {
            let refused = decoded(&other, &cursor).expect_err("refused");
            assert!(refused.contains(why), "{refused}");
        }
        for garbage in [
            "not a cursor!",
            "e30",
            &page_token::encode(&[42], "f".into()),
        ] {
            let refused = decoded(&key, garbage).expect_err("refused");
            assert!(
                refused.contains("not a watch cursor"),
                "{garbage}: {refused}"
            );
        }
    }
}
