//! What makes two memories "identical" (DESIGN §3): the same scope, level and
//! type, and the same content once normalised (the hash is a domain value,
//! `domain::identity`); and fingerprints of request values.

use crate::domain::identity::sha256_hex;
pub use crate::domain::identity::{content_hash, normalise};

/// The hex SHA-256 of a value's `Debug` form: the fingerprint a page token
/// carries of the listing it continues (a token is short-lived: one that an
/// upgrade no longer matches is refused, and the listing starts again).
/// Request ids use the stable `grpc::request_key` instead.
pub fn fingerprint(value: &impl std::fmt::Debug) -> String {
    sha256_hex(format!("{value:?}").as_bytes())
}
