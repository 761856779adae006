//! JSON Schemas of engram.v1 messages, in the protobuf JSON mapping that
//! `engram mcp` reads arguments in and writes results in, described with
//! the comments of `proto/` (the descriptor set compiled into the binary
//! keeps them).

use prost_reflect::{
    EnumDescriptor, FieldDescriptor, FileDescriptor, Kind, MessageDescriptor, MethodDescriptor,
};
use serde_json::{Map, Value, json};

/// Which side of a call a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Arguments: unknown fields are refused, so the schema says so.
    Input,
    /// Results: every field without presence is written, defaults included.
    Output,
}

/// The comment written above the method in its `.proto` file.
pub fn method_comment(method: &MethodDescriptor) -> String {
    comment(&method.parent_file(), method.path())
}

/// The schema of `message` as a JSON object, without the top-level fields
/// named in `omit` (the scope, which `engram mcp` fills in itself).
pub fn message_schema(
    message: &MessageDescriptor,
    side: Side,
    omit: &[&str],
) -> Map<String, Value> {
    let mut path = Vec::new();
    match object_schema(message, side, omit, &mut path) {
        Value::Object(schema) => schema,
        _ => unreachable!("a message's schema is an object"),
    }
}

/// `message` as an object schema; `path` holds the messages being
/// described around it, so a message that contains itself ends the descent.
fn object_schema(
    message: &MessageDescriptor,
    side: Side,
    omit: &[&str],
    path: &mut Vec<String>,
) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    describe(
        &mut schema,
        &comment(&message.parent_file(), message.path()),
    );
    if path.iter().any(|name| name == message.full_name()) {
        return Value::Object(schema);
    }
    path.push(message.full_name().to_owned());
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in message.fields() {
        if omit.contains(&field.name()) {
            continue;
        }
        let mut property = field_schema(&field, side, path);
        if let Value::Object(property) = &mut property {
            describe(property, &comment(&field.parent_file(), field.path()));
        }
        if side == Side::Output && !field.supports_presence() {
            // Written even when it holds its default.
            required.push(Value::from(field.name()));
        }
        properties.insert(field.name().to_owned(), property);
    }
    path.pop();
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    if side == Side::Input {
        schema.insert("additionalProperties".into(), false.into());
    }
    Value::Object(schema)
}

/// One field: its kind, in a list or a map when it is repeated.
fn field_schema(field: &FieldDescriptor, side: Side, path: &mut Vec<String>) -> Value {
    if field.is_map() {
        let Kind::Message(entry) = field.kind() else {
            unreachable!("a map field's kind is its entry message")
        };
        let value = entry.map_entry_value_field();
        return json!({
            "type": "object",
            "additionalProperties": kind_schema(&value.kind(), side, path),
        });
    }
    let item = kind_schema(&field.kind(), side, path);
    if field.is_list() {
        json!({ "type": "array", "items": item })
    } else {
        item
    }
}

/// A single value of `kind`, as the protobuf JSON mapping writes it.
fn kind_schema(kind: &Kind, side: Side, path: &mut Vec<String>) -> Value {
    match kind {
        Kind::Double | Kind::Float => json!({ "type": "number" }),
        Kind::Int32
        | Kind::Sint32
        | Kind::Sfixed32
        | Kind::Int64
        | Kind::Sint64
        | Kind::Sfixed64 => json!({ "type": "integer" }),
        Kind::Uint32 | Kind::Fixed32 | Kind::Uint64 | Kind::Fixed64 => {
            json!({ "type": "integer", "minimum": 0 })
        }
        Kind::Bool => json!({ "type": "boolean" }),
        Kind::String => json!({ "type": "string" }),
        Kind::Bytes => json!({ "type": "string", "contentEncoding": "base64" }),
        Kind::Enum(descriptor) => enum_schema(descriptor),
        Kind::Message(message) => match message.full_name() {
            "google.protobuf.Timestamp" => json!({
                "type": "string",
                "format": "date-time",
                "description": "An RFC 3339 time, e.g. 2026-05-01T12:00:00Z.",
            }),
            "google.protobuf.Duration" => json!({
                "type": "string",
                "pattern": "^-?[0-9]+(\\.[0-9]{1,9})?s$",
                "description": "Seconds with an s, e.g. 90s or 1.5s.",
            }),
            "google.protobuf.FieldMask" => json!({
                "type": "string",
                "description": "Comma-separated field paths in lowerCamelCase.",
            }),
            name if name.starts_with("google.protobuf.") => json!({}),
            _ => object_schema(message, side, &[], path),
        },
    }
}

/// An enum's value names, each described by its comment.
fn enum_schema(descriptor: &EnumDescriptor) -> Value {
    let file = descriptor.parent_file();
    let values: Vec<_> = descriptor.values().collect();
    let names: Vec<Value> = values.iter().map(|v| Value::from(v.name())).collect();
    let described: Vec<String> = values
        .iter()
        .map(|value| {
            let text = comment(&file, value.path());
            if text.is_empty() {
                value.name().to_owned()
            } else {
                format!("{}: {}", value.name(), text)
            }
        })
        .collect();
    let mut schema = json!({ "type": "string", "enum": names });
    let heading = comment(&file, descriptor.path());
    let text = std::iter::once(heading)
        .chain(described)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    describe(schema.as_object_mut().expect("an object"), &text);
    schema
}

/// Adds `text` to the schema's description (a field's comment before its
/// type's).
fn describe(schema: &mut Map<String, Value>, text: &str) {
    if text.is_empty() {
        return;
    }
    let description = match schema.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{text}\n{existing}"),
        _ => text.to_owned(),
    };
    schema.insert("description".into(), description.into());
}

/// The leading comment of the element at `path` of `file`, its lines
/// trimmed and joined: a blank comment line starts a new paragraph.
fn comment(file: &FileDescriptor, path: &[i32]) -> String {
    let Some(info) = &file.file_descriptor_proto().source_code_info else {
        return String::new();
    };
    let Some(text) = info
        .location
        .iter()
        .find(|location| location.path == path)
        .and_then(|location| location.leading_comments.as_deref())
    else {
        return String::new();
    };
    let mut paragraphs: Vec<String> = vec![String::new()];
    for line in text.lines().map(str::trim) {
        let current = paragraphs.last_mut().expect("never empty");
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(String::new());
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    paragraphs.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;

    fn pool() -> DescriptorPool {
        DescriptorPool::decode(engram::FILE_DESCRIPTOR_SET).unwrap()
    }

    #[test]
    fn schemas_carry_the_proto_comments() {
        let pool = pool();
        let request = pool
            .get_message_by_name("engram.v1.CreateMemoryRequest")
            .unwrap();
        let schema = Value::Object(message_schema(&request, Side::Input, &["scope"]));
        let properties = &schema["properties"];
        assert!(properties.get("scope").is_none(), "{schema:#}");
        let memory = &properties["memory"];
        assert_eq!(memory["type"], "object");
        assert_eq!(memory["additionalProperties"], false);
        let content = &memory["properties"]["content"];
        assert_eq!(content["type"], "string");
        assert!(
            content["description"].as_str().unwrap().len() > 10,
            "{content:#}"
        );
        let memory_type = &memory["properties"]["memory_type"];
        let names = memory_type["enum"].as_array().unwrap();
        assert!(
            names.contains(&Value::from("MEMORY_TYPE_LESSON")),
            "{memory_type:#}"
        );
        assert!(
            memory_type["description"]
                .as_str()
                .unwrap()
                .contains("MEMORY_TYPE_LESSON: "),
            "{memory_type:#}"
        );
        assert_eq!(memory["properties"]["tags"]["type"], "array");
        assert_eq!(
            memory["properties"]["metadata"]["additionalProperties"]["type"],
            "string"
        );
        assert_eq!(memory["properties"]["occurred_at"]["format"], "date-time");
    }

    #[test]
    fn output_schemas_require_what_is_always_written() {
        let pool = pool();
        let response = pool
            .get_message_by_name("engram.v1.BuildContextResponse")
            .unwrap();
        let schema = Value::Object(message_schema(&response, Side::Output, &[]));
        let required = schema["required"].as_array().unwrap();
        assert!(required.contains(&Value::from("text")), "{schema:#}");
        assert!(schema.get("additionalProperties").is_none());
    }

    #[test]
    fn method_comments_are_read() {
        let pool = pool();
        let service = pool.get_service_by_name("engram.v1.MemoryService").unwrap();
        let search = service
            .methods()
            .find(|m| m.name() == "SearchMemories")
            .unwrap();
        assert!(
            method_comment(&search).starts_with("Finds the memories most relevant"),
            "{}",
            method_comment(&search)
        );
    }
}
