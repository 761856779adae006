//! The content hash of DESIGN §3: two memories of the same scope, level and
//! type are identical when their contents are the same once normalised, and
//! the hash of the normalised content is the merge key stored beside them.

use sha2::{Digest as _, Sha256};

/// The content as compared for identity: Unicode-lowercased, with every run
/// of white space folded to one space and the ends trimmed.
pub fn normalise(content: &str) -> String {
    content
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The hex SHA-256 of the normalised content: the merge key stored beside it.
pub fn content_hash(content: &str) -> String {
    sha256_hex(normalise(content).as_bytes())
}

/// The lower-case hex of the SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_white_space_do_not_make_memories_different() {
        assert_eq!(
            content_hash("The user prefers  TABS\n"),
            content_hash("the user prefers tabs")
        );
    }

    #[test]
    fn different_words_make_different_memories() {
        assert_ne!(content_hash("prefers tabs"), content_hash("prefers spaces"));
    }

    #[test]
    fn hash_is_hex_sha256() {
        // The form stored since the first release: lower-case hex of SHA-256.
        assert_eq!(
            content_hash("x"),
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        );
    }
}
