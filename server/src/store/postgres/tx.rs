//! The advisory locks of a unit of work on PostgreSQL ([`crate::store::Tx::lock`],
//! see [`crate::store::sql::tx`] for why they suffice).

use sha2::{Digest as _, Sha256};

/// The advisory lock key of `key`: the first 8 bytes of its SHA-256. The
/// single-key form of advisory locks is a key space apart from the two-key
/// one the schema uses (migrations, the feed), so the two never collide;
/// two different keys of Engram share a lock with odds of 2^-64.
pub(super) fn lock_key(key: &str) -> i64 {
    let digest = Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_are_stable_and_tell_keys_apart() {
        assert_eq!(lock_key("learning/ns"), lock_key("learning/ns"));
        assert_ne!(lock_key("learning/ns"), lock_key("learning/nt"));
        // Fixed by the hash, across builds and replicas of any version.
        let digest = Sha256::digest(b"episode/e1");
        assert_eq!(
            lock_key("episode/e1").to_be_bytes(),
            digest[..8],
            "the first 8 bytes of SHA-256"
        );
    }
}
