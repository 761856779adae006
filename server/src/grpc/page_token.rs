//! Opaque page tokens (AIP-158): the keyset key of the last item returned,
//! bound to the request that produced it so that it cannot be replayed with a
//! different scope, filter or order.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::validate::Violations;
use crate::domain::PageCursor;
use crate::engine::dedup;

/// Hex digits of the request fingerprint kept in a token: enough to tell
/// requests apart, short enough to keep tokens small.
const FINGERPRINT_DIGITS: usize = 16;

#[derive(Serialize, Deserialize)]
struct Token {
    /// Fingerprint of the request.
    f: String,
    /// The sort key of the last item (integers, so it round-trips exactly).
    k: Vec<i64>,
    /// The text part of the sort key, for listings ordered by a name first.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    t: String,
}

/// A short fingerprint of whatever identifies a listing (its `Debug` form).
pub fn fingerprint(request: &impl std::fmt::Debug) -> String {
    let mut full = dedup::fingerprint(request);
    full.truncate(FINGERPRINT_DIGITS);
    full
}

/// A token continuing after the item whose sort key is `key`.
pub fn encode(key: &[i64], fingerprint: String) -> String {
    encode_text("", key, fingerprint)
}

/// A token continuing after the item whose sort key is `text`, then `key`.
pub fn encode_text(text: &str, key: &[i64], fingerprint: String) -> String {
    let token = Token {
        f: fingerprint,
        k: key.to_vec(),
        t: text.to_owned(),
    };
    // Serialising a string and integers cannot fail.
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&token).unwrap_or_default())
}

/// The key in `token`, or a description of what is wrong with it.
#[cfg(test)]
pub fn decode<const N: usize>(token: &str, fingerprint: &str) -> Result<[i64; N], &'static str> {
    decode_text(token, fingerprint).map(|(_, key)| key)
}

/// The text and integer key in `token`, or a description of what is wrong
/// with it.
pub fn decode_text<const N: usize>(
    token: &str,
    fingerprint: &str,
) -> Result<(String, [i64; N]), &'static str> {
    const FOREIGN: &str = "is not a page token from this service";
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| FOREIGN)?;
    let token: Token = serde_json::from_slice(&bytes).map_err(|_| FOREIGN)?;
    if token.f != fingerprint {
        return Err("belongs to a request with a different scope, filter or order");
    }
    let key = token.k.try_into().map_err(|_| FOREIGN)?;
    Ok((token.t, key))
}

/// The key of a request's `page_token`: `None` for the first page, and a
/// violation of `page_token` when it is not valid for this request.
pub fn decode_into<const N: usize>(
    v: &mut Violations,
    token: &str,
    fingerprint: &str,
) -> Option<[i64; N]> {
    decode_field(v, "page_token", token, fingerprint)
}

/// [`decode_into`] for a token in another field (e.g. `step_page_token`).
pub fn decode_field<const N: usize>(
    v: &mut Violations,
    field: &str,
    token: &str,
    fingerprint: &str,
) -> Option<[i64; N]> {
    decode_text_field(v, field, token, fingerprint).map(|(_, key)| key)
}

/// [`decode_field`] for a token whose key starts with text.
pub fn decode_text_field<const N: usize>(
    v: &mut Violations,
    field: &str,
    token: &str,
    fingerprint: &str,
) -> Option<(String, [i64; N])> {
    if token.is_empty() {
        return None;
    }
    match decode_text(token, fingerprint) {
        Ok(key) => Some(key),
        Err(why) => {
            v.add(field, why);
            None
        }
    }
}

/// The sort key of a memory listing's cursor: importance as its IEEE-754
/// bits (so it round-trips exactly), create time, sequence number.
pub fn memory_key(cursor: PageCursor) -> [i64; 3] {
    [
        cursor.importance.to_bits() as i64,
        cursor.create_time,
        cursor.seq,
    ]
}

/// The cursor of a memory listing's key.
pub fn memory_cursor([importance, create_time, seq]: [i64; 3]) -> PageCursor {
    PageCursor {
        importance: f64::from_bits(importance as u64),
        create_time,
        seq,
    }
}

/// The most bytes of records in one response (a list page, a search's hits,
/// an episode's steps): with the rest of the message it stays within the
/// 4 MiB a gRPC client accepts by default.
pub const MAX_PAGE_BYTES: usize = 3 * 1024 * 1024;

/// One page of a listing fetched as `page_size + 1` items: at most
/// `page_size` of them, converted, ending early before their encoded size
/// passes [`MAX_PAGE_BYTES`] (never before the first), and the token for
/// the next page — empty on the last, set on any page that ended early.
pub fn page<T, P: prost::Message>(
    items: Vec<T>,
    page_size: usize,
    key: impl Fn(&T) -> Vec<i64>,
    fingerprint: String,
    convert: impl Fn(T) -> P,
) -> (Vec<P>, String) {
    paged(items, page_size, key, convert, |key| {
        encode(&key, fingerprint)
    })
}

/// [`page`] of a listing whose sort key starts with text.
pub fn page_by_text<T, P: prost::Message>(
    items: Vec<T>,
    page_size: usize,
    key: impl Fn(&T) -> (String, Vec<i64>),
    fingerprint: String,
    convert: impl Fn(T) -> P,
) -> (Vec<P>, String) {
    paged(items, page_size, key, convert, |(text, key)| {
        encode_text(&text, &key, fingerprint)
    })
}

fn paged<T, P: prost::Message, K>(
    items: Vec<T>,
    page_size: usize,
    key: impl Fn(&T) -> K,
    convert: impl Fn(T) -> P,
    encode: impl FnOnce(K) -> String,
) -> (Vec<P>, String) {
    let fetched = items.len();
    let keyed = items
        .into_iter()
        .take(page_size)
        .map(|item| (key(&item), convert(item)));
    let (page, last_key, cut) = fill(keyed, MAX_PAGE_BYTES);
    let token = match last_key {
        Some(key) if cut || fetched > page_size => encode(key),
        _ => String::new(),
    };
    (page, token)
}

/// The first of `items` whose encoded sizes add up to at most `max_bytes`
/// (at least one, however large), and whether any were left out.
pub fn keep_within<P: prost::Message>(
    items: impl IntoIterator<Item = P>,
    max_bytes: usize,
) -> (Vec<P>, bool) {
    let (kept, _, cut) = fill(items.into_iter().map(|item| ((), item)), max_bytes);
    (kept, cut)
}

/// The records of keyed `items` that fit `max_bytes` (at least one), the key
/// of the last one kept, and whether any were left out.
fn fill<K, P: prost::Message>(
    items: impl Iterator<Item = (K, P)>,
    max_bytes: usize,
) -> (Vec<P>, Option<K>, bool) {
    let (mut kept, mut last_key, mut bytes) = (Vec::new(), None, 0);
    for (key, item) in items {
        bytes += item.encoded_len();
        if !kept.is_empty() && bytes > max_bytes {
            return (kept, last_key, true);
        }
        kept.push(item);
        last_key = Some(key);
    }
    (kept, last_key, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_ends_before_its_records_pass_the_byte_limit_and_says_where_to_go_on() {
        // Records of 1 MiB and a few bytes of framing each: three pass 3 MiB.
        let big = |n: i64| (n, "x".repeat(1024 * 1024));
        let items: Vec<(i64, String)> = (1..=5).map(big).collect();
        let (kept, token) = page(items, 10, |(n, _)| vec![*n], "f".into(), |(_, s)| s);
        assert_eq!(
            kept.len(),
            2,
            "1 MiB + framing each: two fit under 3 MiB, not three"
        );
        assert_eq!(decode::<1>(&token, "f"), Ok([2]));

        let small: Vec<(i64, String)> = (1..=3).map(|n| (n, "y".into())).collect();
        let (kept, token) = page(small.clone(), 3, |(n, _)| vec![*n], "f".into(), |(_, s)| s);
        assert_eq!(
            (kept.len(), token.as_str()),
            (3, ""),
            "the last page has no token"
        );
        let (kept, token) = page(small, 2, |(n, _)| vec![*n], "f".into(), |(_, s)| s);
        assert_eq!(kept.len(), 2);
        assert_eq!(decode::<1>(&token, "f"), Ok([2]));

        let (kept, cut) = keep_within(vec!["z".repeat(5 * 1024 * 1024)], MAX_PAGE_BYTES);
        assert_eq!(
            (kept.len(), cut),
            (1, false),
            "one record, however large, is kept"
        );
    }

    #[test]
    fn a_token_round_trips_for_the_same_request() {
        let token = encode(&[42, 7], fingerprint(&("scope", 1)));
        assert_eq!(
            decode::<2>(&token, &fingerprint(&("scope", 1))),
            Ok([42, 7])
        );
    }

    #[test]
    fn importance_survives_the_round_trip_bit_for_bit() {
        // A value JSON floats parse back one unit in the last place off.
        let cursor = PageCursor {
            importance: 0.945_270_695_553_922_3,
            create_time: 1,
            seq: 1,
        };
        let token = encode(&memory_key(cursor), fingerprint(&"x"));
        let back = memory_cursor(decode(&token, &fingerprint(&"x")).unwrap());
        assert_eq!(back.importance.to_bits(), cursor.importance.to_bits());
    }

    #[test]
    fn a_token_keeps_the_text_of_its_key() {
        let token = encode_text("alice chen", &[7], fingerprint(&"x"));
        assert_eq!(
            decode_text::<1>(&token, &fingerprint(&"x")),
            Ok(("alice chen".to_owned(), [7]))
        );
    }

    #[test]
    fn a_token_is_refused_for_another_request_or_shape() {
        let token = encode(&[1, 1], fingerprint(&"a"));
        assert!(decode::<2>(&token, &fingerprint(&"b")).is_err());
        assert!(decode::<3>(&token, &fingerprint(&"a")).is_err());
        assert!(decode::<2>("not a token!", &fingerprint(&"a")).is_err());
    }
}
