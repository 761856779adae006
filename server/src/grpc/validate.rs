//! Request validation. Every check adds a field violation instead of failing
//! fast, so a caller learns about every bad field at once; [`Violations::finish`]
//! turns them into one INVALID_ARGUMENT.

use std::collections::BTreeMap;

use prost_types::Timestamp;

use crate::domain::{Micros, Scope};
use crate::error::{Error, FieldViolation, Result};

/// The most characters of a scope field (namespace, agent, user, project, session).
pub const MAX_SCOPE_FIELD_CHARS: usize = 128;
/// The most characters of an id-like string (request ids, task ids).
pub const MAX_ID_CHARS: usize = 128;
/// The most page_size a list accepts.
pub const MAX_PAGE_SIZE: usize = 1000;
/// The page size when page_size is 0.
pub const DEFAULT_PAGE_SIZE: usize = 50;
/// The most characters of an etag (the server's own are far shorter).
pub const MAX_ETAG_CHARS: usize = 64;
/// The most characters of a caller's bad value quoted back in a violation.
const MAX_SHOWN_CHARS: usize = 64;
/// The range of a `google.protobuf.Timestamp`: 0001-01-01 to 9999-12-31.
const MIN_TIMESTAMP_SECONDS: i64 = -62_135_596_800;
const MAX_TIMESTAMP_SECONDS: i64 = 253_402_300_799;

/// The violations found so far in one request.
#[derive(Debug, Default)]
pub struct Violations(Vec<FieldViolation>);

impl Violations {
    /// Records that `field` is wrong.
    pub fn add(&mut self, field: impl Into<String>, description: impl Into<String>) {
        self.0.push(FieldViolation {
            field: field.into(),
            description: description.into(),
        });
    }

    /// `Ok(value)` when nothing was found, else INVALID_ARGUMENT with every violation.
    pub fn finish<T>(self, value: T) -> Result<T> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(Error::InvalidArgument(self.0))
        }
    }

    /// The violations found, for a caller that reports only some of them.
    pub fn into_violations(self) -> Vec<FieldViolation> {
        self.0
    }

    /// Checks a text field: at most `max_chars` characters, no control
    /// characters other than white space, and, when `required`, not blank.
    pub fn text(&mut self, field: &str, value: &str, max_chars: usize, required: bool) {
        if required && value.trim().is_empty() {
            self.add(field, "is required and must not be blank");
        } else if value.chars().count() > max_chars {
            self.add(field, format!("must be at most {max_chars} characters"));
        } else if value.chars().any(|c| c.is_control() && !c.is_whitespace()) {
            self.add(field, "must not contain control characters");
        }
    }

    /// Checks an identifier: like [`Self::text`] but without any white space.
    pub fn identifier(&mut self, field: &str, value: &str, max_chars: usize, required: bool) {
        if value.chars().any(char::is_whitespace) {
            self.add(field, "must not contain white space");
        } else {
            self.text(field, value, max_chars, required);
        }
    }

    /// Checks an optional etag: `None` when empty.
    pub fn etag(&mut self, field: &str, value: &str) -> Option<String> {
        if value.is_empty() {
            return None;
        }
        if value.chars().count() > MAX_ETAG_CHARS || !value.chars().all(|c| c.is_ascii_graphic()) {
            self.add(field, "is not an etag returned by this service");
            return None;
        }
        Some(value.to_owned())
    }

    /// Checks a number in [0, 1].
    pub fn unit_interval(&mut self, field: &str, value: f64) {
        if !(0.0..=1.0).contains(&value) {
            self.add(field, format!("must be between 0 and 1 (got {value})"));
        }
    }

    /// Parses an enum number: `None` for the zero value, and a violation for a
    /// number the API does not define.
    pub fn enum_value<T>(
        &mut self,
        field: &str,
        code: i32,
        from_code: fn(i32) -> Option<T>,
    ) -> Option<T> {
        if code == 0 {
            return None;
        }
        let value = from_code(code);
        if value.is_none() {
            self.add(field, format!("unknown enum value {code}"));
        }
        value
    }

    /// Checks that `value` is a UUID (the form of every server-assigned id)
    /// and returns it in the canonical lower-case hyphenated form the server
    /// assigns, so `{…}`, `urn:uuid:` and upper-case spellings find it too.
    pub fn uuid(&mut self, field: &str, value: &str) -> String {
        if value.is_empty() {
            self.add(field, "is required");
            return String::new();
        }
        match uuid::Uuid::try_parse(value) {
            Ok(id) => id.hyphenated().to_string(),
            Err(_) => {
                let shown: String = value.chars().take(MAX_SHOWN_CHARS).collect();
                self.add(
                    field,
                    format!("must be a UUID such as 0190b6b2-7c3e-7d41-9f3a-2b1c4d5e6f70 (got {shown:?})"),
                );
                String::new()
            }
        }
    }

    /// Parses a count where 0 means `default` and anything else must be in
    /// `min..=max`.
    pub fn count_or_default(
        &mut self,
        field: &str,
        value: i32,
        default: usize,
        min: usize,
        max: usize,
    ) -> usize {
        match usize::try_from(value) {
            Ok(0) => default,
            Ok(count) if (min..=max).contains(&count) => count,
            _ => {
                self.add(
                    field,
                    format!(
                        "must be 0 (meaning {default}) or between {min} and {max} (got {value})"
                    ),
                );
                default
            }
        }
    }

    /// Parses a page size: 0 means the default.
    pub fn page_size(&mut self, field: &str, value: i32) -> usize {
        self.count_or_default(field, value, DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
    }

    /// Converts a timestamp, checking that it is a valid one.
    pub fn timestamp(&mut self, field: &str, value: Option<&Timestamp>) -> Option<Micros> {
        let ts = value?;
        let micros = ts
            .seconds
            .checked_mul(1_000_000)
            .and_then(|s| s.checked_add(i64::from(ts.nanos / 1_000)));
        if !(0..1_000_000_000).contains(&ts.nanos)
            || !(MIN_TIMESTAMP_SECONDS..=MAX_TIMESTAMP_SECONDS).contains(&ts.seconds)
            || micros.is_none()
        {
            self.add(
                field,
                "is not a valid timestamp (years 0001 to 9999, nanos 0 to 999,999,999)",
            );
            return None;
        }
        micros
    }

    /// Converts a duration that must be longer than zero: `None` when unset
    /// (the caller's default applies) or invalid (with a violation).
    pub fn positive_duration(
        &mut self,
        field: &str,
        value: Option<&prost_types::Duration>,
    ) -> Option<Micros> {
        let d = value?;
        let micros = d
            .seconds
            .checked_mul(1_000_000)
            .and_then(|s| s.checked_add(i64::from(d.nanos / 1_000)));
        match micros {
            Some(micros) if micros > 0 && (0..1_000_000_000).contains(&d.nanos) => Some(micros),
            _ => {
                self.add(field, "must be a valid duration longer than 0");
                None
            }
        }
    }

    /// Checks a scope and returns it with the default namespace filled in.
    pub fn scope(&mut self, field: &str, scope: Option<&engram::v1::Scope>) -> Scope {
        let scope = scope.cloned().unwrap_or_default();
        let namespace = if scope.namespace.is_empty() {
            engram::DEFAULT_NAMESPACE.to_owned()
        } else {
            scope.namespace
        };
        for (name, value) in [
            ("namespace", &namespace),
            ("agent_id", &scope.agent_id),
            ("user_id", &scope.user_id),
            ("project_id", &scope.project_id),
            ("session_id", &scope.session_id),
        ] {
            self.identifier(
                &format!("{field}.{name}"),
                value,
                MAX_SCOPE_FIELD_CHARS,
                false,
            );
        }
        Scope {
            namespace,
            agent_id: scope.agent_id,
            user_id: scope.user_id,
            project_id: scope.project_id,
            session_id: scope.session_id,
        }
    }

    /// Checks a list of tags.
    pub fn tags(&mut self, field: &str, tags: &[String], max_tags: usize, max_chars: usize) {
        if tags.len() > max_tags {
            self.add(
                field,
                format!("must have at most {max_tags} entries (got {})", tags.len()),
            );
            return;
        }
        for (i, tag) in tags.iter().enumerate() {
            self.text(&format!("{field}[{i}]"), tag, max_chars, true);
        }
    }

    /// Checks a string map (entries in key order, so the violations read the
    /// same every time); returns a copy.
    pub fn metadata(
        &mut self,
        field: &str,
        map: &BTreeMap<String, String>,
        max_entries: usize,
        max_key_chars: usize,
        max_value_chars: usize,
    ) -> BTreeMap<String, String> {
        if map.len() > max_entries {
            self.add(
                field,
                format!(
                    "must have at most {max_entries} entries (got {})",
                    map.len()
                ),
            );
            return BTreeMap::new();
        }
        for (key, value) in map {
            let shown: String = key.chars().take(MAX_SHOWN_CHARS).collect();
            let mut key_problems = Violations::default();
            key_problems.text("key", key, max_key_chars, true);
            for problem in key_problems.0 {
                self.add(field, format!("key {shown:?} {}", problem.description));
            }
            self.text(
                &format!("{field}[{shown:?}]"),
                value,
                max_value_chars,
                false,
            );
        }
        map.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_violation_is_reported_at_once() {
        let mut v = Violations::default();
        v.text("a", "", 10, true);
        v.unit_interval("b", 1.5);
        v.page_size("c", -1);
        let Err(Error::InvalidArgument(found)) = v.finish(()) else {
            panic!("expected INVALID_ARGUMENT");
        };
        let fields: Vec<&str> = found.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["a", "b", "c"]);
    }

    #[test]
    fn nan_is_not_in_the_unit_interval() {
        let mut v = Violations::default();
        v.unit_interval("x", f64::NAN);
        assert!(v.finish(()).is_err());
    }

    #[test]
    fn empty_namespace_is_the_default_one() {
        let mut v = Violations::default();
        let scope = v.scope("scope", None);
        assert_eq!(scope.namespace, "default");
        assert!(v.finish(()).is_ok());
    }

    #[test]
    fn namespaces_with_spaces_are_rejected() {
        let mut v = Violations::default();
        v.scope(
            "scope",
            Some(&engram::v1::Scope {
                namespace: "a b".into(),
                ..Default::default()
            }),
        );
        let Err(Error::InvalidArgument(found)) = v.finish(()) else {
            panic!("expected INVALID_ARGUMENT");
        };
        assert_eq!(found[0].field, "scope.namespace");
    }
}
