//! The one text check every request passes: no string field of any request
//! message, however deeply nested (a step's output, a metadata key, a tag, a
//! field mask's path), may hold a control character other than white space
//! (tab, line feed, carriage return, vertical tab, form feed, next line).
//!
//! The check reads the request's protobuf bytes before they are decoded,
//! guided by the API's descriptors, so it covers every string field of every
//! request — fields added later too — without a line of code per field, and
//! a refused request reaches no handler: it changes nothing. NUL matters
//! most: PostgreSQL refuses it in text, so a request that one database
//! accepts must not fail on the other.

use std::collections::HashMap;
use std::sync::OnceLock;

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};

/// One string field holding a control character: where (`steps[2].output`,
/// `memory.metadata["k"]`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextViolation {
    pub field: String,
    pub description: String,
}

/// The description of every violation.
pub const CONTROL_CHARACTERS: &str =
    "must not contain control characters (only tab, line feed and carriage return are allowed)";

/// The most violations reported for one request: the first ones are
/// enough to fix it, and the status stays small.
const MAX_VIOLATIONS: usize = 16;
/// The most characters of a map key quoted in a violation's field path.
const MAX_QUOTED_KEY_CHARS: usize = 64;

/// Whether `text` holds a character the API refuses in a string.
pub fn has_control_characters(text: &str) -> bool {
    // Fast path: control characters are ASCII below 0x20, DEL, or C1
    // (U+0080..U+009F, encoded 0xC2 0x80..0x9F); text without any of those
    // bytes is clean.
    let suspect = text
        .bytes()
        .any(|b| (b < 0x20 && !b.is_ascii_whitespace() && b != 0x0b) || b == 0x7f || b == 0xc2);
    suspect && text.chars().any(|c| c.is_control() && !c.is_whitespace())
}

/// One string field of a request, as the walk finds it.
#[derive(Debug, Clone, Copy)]
pub struct TextField<'a> {
    /// Where it is: `steps[2].output`, `memory.metadata["k"]`; a map's key
    /// is named by its map (`memory.metadata`).
    pub path: &'a str,
    /// The field's own name (`output`, `metadata`), what a screen decides by.
    pub name: &'a str,
    /// Whether the text is a map's key.
    pub map_key: bool,
    pub text: &'a str,
}

/// A check a server adds to this one: given a request's full message name
/// and each of its string fields, what is wrong with the field, if anything
/// (a description such as "contains a password; …").
pub type Screen = fn(message: &str, field: &TextField<'_>) -> Option<String>;

static SCREEN: OnceLock<Screen> = OnceLock::new();

/// Adds `screen` to the check of every request this process decodes (once:
/// a server sets it at start). Returns false when one was set already.
pub fn add_screen(screen: Screen) -> bool {
    SCREEN.set(screen).is_ok()
}

/// The string fields of the encoded message `full_name` (e.g.
/// `engram.v1.CreateMemoryRequest`) that hold control characters, or that
/// the screen of [`add_screen`] refuses: the first [`MAX_VIOLATIONS`] of
/// them. Bytes that are not valid protobuf, or a message the API does not
/// define, yield none: decoding then says what is wrong.
pub fn violations(full_name: &str, bytes: &[u8]) -> Vec<TextViolation> {
    let mut found = Vec::new();
    let screen = SCREEN.get();
    let mut check = |field: &TextField<'_>| {
        let description = if has_control_characters(field.text) {
            Some(CONTROL_CHARACTERS.to_owned())
        } else {
            screen.and_then(|screen| screen(full_name, field))
        };
        if let Some(description) = description {
            found.push(TextViolation {
                field: field.path.to_owned(),
                description: if field.map_key {
                    format!("has a key that {description}")
                } else {
                    description
                },
            });
        }
        found.len() < MAX_VIOLATIONS
    };
    if let Some(message) = schema().get(full_name) {
        let _ = walk(message, bytes, "", &mut check);
    }
    found
}

/// What the walk needs of a message: its fields by number.
#[derive(Debug, Default)]
struct MessageSchema {
    fields: HashMap<u32, FieldSchema>,
    /// A map's entry (fields `key` = 1 and `value` = 2).
    map_entry: bool,
}

#[derive(Debug)]
struct FieldSchema {
    name: String,
    repeated: bool,
    kind: FieldKind,
}

#[derive(Debug)]
enum FieldKind {
    Text,
    /// A message field, by its type's full name (no leading dot).
    Message(String),
    Other,
}

/// Every message of the API and of what it imports, by full name.
fn schema() -> &'static HashMap<String, MessageSchema> {
    static SCHEMA: OnceLock<HashMap<String, MessageSchema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let set = prost_types::FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET)
            .expect("the compiled-in descriptor set decodes");
        let mut messages = HashMap::new();
        for file in &set.file {
            for message in &file.message_type {
                add_message(&mut messages, file.package(), message);
            }
        }
        messages
    })
}

fn add_message(
    messages: &mut HashMap<String, MessageSchema>,
    parent: &str,
    message: &prost_types::DescriptorProto,
) {
    let full_name = if parent.is_empty() {
        message.name().to_owned()
    } else {
        format!("{parent}.{}", message.name())
    };
    for nested in &message.nested_type {
        add_message(messages, &full_name, nested);
    }
    let fields = message
        .field
        .iter()
        .map(|field| {
            let kind = match field.r#type() {
                Type::String => FieldKind::Text,
                Type::Message => {
                    FieldKind::Message(field.type_name().trim_start_matches('.').to_owned())
                }
                _ => FieldKind::Other,
            };
            let schema = FieldSchema {
                name: field.name().to_owned(),
                repeated: field.label() == Label::Repeated,
                kind,
            };
            (field.number() as u32, schema)
        })
        .collect();
    let map_entry = message
        .options
        .as_ref()
        .is_some_and(|options| options.map_entry());
    messages.insert(full_name, MessageSchema { fields, map_entry });
}

/// Malformed protobuf: the walk stops and decoding reports it.
struct Malformed;

/// Reads one varint from the front of `bytes`.
fn varint(bytes: &mut &[u8]) -> Result<u64, Malformed> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first().ok_or(Malformed)?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(Malformed)
}

/// Takes `len` bytes off the front of `bytes`.
fn take<'a>(bytes: &mut &'a [u8], len: u64) -> Result<&'a [u8], Malformed> {
    let len = usize::try_from(len).map_err(|_| Malformed)?;
    if len > bytes.len() {
        return Err(Malformed);
    }
    let (taken, rest) = bytes.split_at(len);
    *bytes = rest;
    Ok(taken)
}

/// The next field of an encoded message: its number, and its bytes when it
/// is length-delimited (a string, a message, packed numbers).
fn next_field<'a>(bytes: &mut &'a [u8]) -> Result<(u32, Option<&'a [u8]>), Malformed> {
    let tag = varint(bytes)?;
    let number = u32::try_from(tag >> 3).map_err(|_| Malformed)?;
    let payload = match tag & 7 {
        0 => {
            varint(bytes)?;
            None
        }
        1 => {
            take(bytes, 8)?;
            None
        }
        5 => {
            take(bytes, 4)?;
            None
        }
        2 => {
            let len = varint(bytes)?;
            Some(take(bytes, len)?)
        }
        // Groups (deprecated, unused by the API) and invalid wire types.
        _ => return Err(Malformed),
    };
    Ok((number, payload))
}

/// Whether the walk goes on after a field (false: enough was found).
type Visit<'v> = dyn FnMut(&TextField<'_>) -> bool + 'v;

/// Walks the fields of `message` encoded in `bytes`, naming each under
/// `path`, and shows each string field to `visit`; returns false when
/// `visit` asked to stop.
fn walk(
    message: &MessageSchema,
    mut bytes: &[u8],
    path: &str,
    visit: &mut Visit<'_>,
) -> Result<bool, Malformed> {
    let mut occurrences: HashMap<u32, usize> = HashMap::new();
    while !bytes.is_empty() {
        let (number, payload) = next_field(&mut bytes)?;
        let (Some(value), Some(field)) = (payload, message.fields.get(&number)) else {
            continue;
        };
        let nested = match &field.kind {
            FieldKind::Message(type_name) => schema().get(type_name),
            _ => None,
        };
        let map = nested.filter(|nested| nested.map_entry);
        let mut name = field.name.clone();
        if field.repeated && map.is_none() {
            let index = occurrences.entry(number).or_default();
            name = format!("{name}[{index}]");
            *index += 1;
        }
        let field_path = if path.is_empty() {
            name
        } else {
            format!("{path}.{name}")
        };
        let go_on = match (&field.kind, nested) {
            (FieldKind::Text, _) => {
                let text = std::str::from_utf8(value).map_err(|_| Malformed)?;
                visit(&TextField {
                    path: &field_path,
                    name: &field.name,
                    map_key: false,
                    text,
                })
            }
            (_, Some(entry)) if entry.map_entry => {
                map_entry(entry, value, &field_path, &field.name, visit)?
            }
            (_, Some(nested)) => walk(nested, value, &field_path, visit)?,
            _ => true,
        };
        if !go_on {
            return Ok(false);
        }
    }
    Ok(true)
}

/// One entry of the map field `path` (named `name`): its key, named by the
/// map, then its value, named `path["key"]`.
fn map_entry(
    entry: &MessageSchema,
    mut bytes: &[u8],
    path: &str,
    name: &str,
    visit: &mut Visit<'_>,
) -> Result<bool, Malformed> {
    let (mut key, mut value) = (None, None);
    while !bytes.is_empty() {
        match next_field(&mut bytes)? {
            (1, Some(text)) => key = Some(std::str::from_utf8(text).map_err(|_| Malformed)?),
            (2, Some(payload)) => value = Some(payload),
            _ => {}
        }
    }
    let key = key.unwrap_or_default();
    if !visit(&TextField {
        path,
        name,
        map_key: true,
        text: key,
    }) {
        return Ok(false);
    }
    let Some(value) = value else {
        return Ok(true);
    };
    let quoted: String = key.chars().take(MAX_QUOTED_KEY_CHARS).collect();
    let value_path = format!("{path}[{quoted:?}]");
    match entry.fields.get(&2).map(|field| &field.kind) {
        Some(FieldKind::Text) => {
            let text = std::str::from_utf8(value).map_err(|_| Malformed)?;
            Ok(visit(&TextField {
                path: &value_path,
                name,
                map_key: false,
                text,
            }))
        }
        Some(FieldKind::Message(type_name)) => match schema().get(type_name) {
            Some(nested) => walk(nested, value, &value_path, visit),
            None => Ok(true),
        },
        _ => Ok(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1;

    fn check<M: prost::Message + prost::Name>(message: &M) -> Vec<(String, String)> {
        violations(&M::full_name(), &message.encode_to_vec())
            .into_iter()
            .map(|v| (v.field, v.description))
            .collect()
    }

    #[test]
    fn white_space_passes_and_other_control_characters_do_not() {
        for clean in [
            "",
            "plain",
            "tab\there\r\nand a line",
            "é ü 東京 \u{85}",
            "\u{a0}",
        ] {
            assert!(!has_control_characters(clean), "{clean:?}");
        }
        for dirty in [
            "nul\0",
            "bell\u{7}",
            "esc\u{1b}[31m",
            "del\u{7f}",
            "c1\u{9b}",
        ] {
            assert!(has_control_characters(dirty), "{dirty:?}");
        }
    }

    #[test]
    fn every_nested_string_field_is_named_by_its_path() {
        let request = v1::AppendStepsRequest {
            scope: Some(v1::Scope::new("ns\0")),
            episode_id: "e".into(),
            steps: vec![
                v1::Step {
                    tool: "shell".into(),
                    output: "fine".into(),
                    ..Default::default()
                },
                v1::Step {
                    tool: "shell".into(),
                    output: "secret\0tail".into(),
                    ..Default::default()
                },
            ],
        };
        let found = check(&request);
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(fields, ["scope.namespace", "steps[1].output"]);
        assert!(found.iter().all(|(_, d)| d == CONTROL_CHARACTERS));
    }

    #[test]
    fn map_keys_and_values_are_checked() {
        let memory = v1::MemoryInput {
            content: "ok".into(),
            metadata: [
                ("good".to_owned(), "v\u{1}".to_owned()),
                ("bad\0key".to_owned(), "fine".to_owned()),
            ]
            .into(),
            ..Default::default()
        };
        let request = v1::CreateMemoryRequest {
            memory: Some(memory),
            ..Default::default()
        };
        let found = check(&request);
        assert_eq!(
            found,
            [
                (
                    "memory.metadata".to_owned(),
                    format!("has a key that {CONTROL_CHARACTERS}")
                ),
                (
                    "memory.metadata[\"good\"]".to_owned(),
                    CONTROL_CHARACTERS.to_owned()
                ),
            ]
        );
    }

    #[test]
    fn clean_or_malformed_requests_report_nothing() {
        let clean = v1::CreateMemoryRequest {
            memory: Some(v1::MemoryInput {
                content: "We deploy on Tuesdays.\n\tNever on Fridays.".into(),
                tags: vec!["ops".into()],
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(check(&clean).is_empty());
        assert!(violations("engram.v1.CreateMemoryRequest", &[0xff, 0xff, 0xff]).is_empty());
        assert!(violations("no.such.Message", b"\n\x01\0").is_empty());
    }

    #[test]
    fn a_request_with_many_bad_fields_reports_the_first_ones() {
        let request = v1::CreateMemoryRequest {
            memory: Some(v1::MemoryInput {
                content: "c".into(),
                tags: (0..100).map(|i| format!("t{i}\0")).collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(check(&request).len(), MAX_VIOLATIONS);
    }
}
