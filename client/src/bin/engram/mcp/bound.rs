//! Keeping a tool's result within what a model's context can take
//! (`engram mcp --max-output`): a search of large memories must not put
//! megabytes in front of the model.

use serde_json::Value;

/// How a cut string ends.
const CUT_MARK: &str = "…";

/// The most strings shortened before giving up on a result that still does
/// not fit (only a response of thousands of long strings gets there).
const MOST_STRINGS_CUT: usize = 1_000;

/// Cuts `value` (a response as JSON) until it serializes in at most `max`
/// bytes: items leave the end of its largest top-level list first (a
/// search's least relevant hits), then the longest strings are shortened.
/// What stays still fits the response's schema. Returns what was left
/// out, in words for the model (`None` when nothing was).
pub fn bound(value: &mut Value, max: usize) -> Option<String> {
    let mut left_out = Vec::new();
    while size(value) > max {
        let Some((name, items, kept)) = drop_items(value, size(value) - max) else {
            break;
        };
        left_out.push(format!("{} of {items} {name}", items - kept));
    }
    let mut cut = 0;
    while size(value) > max && cut < MOST_STRINGS_CUT {
        let excess = size(value) - max;
        let Some(pointer) = longest_string(value, String::new()).map(|(pointer, _)| pointer) else {
            break;
        };
        let Some(Value::String(text)) = value.pointer_mut(&pointer) else {
            break;
        };
        if text.len() <= CUT_MARK.len() {
            break;
        }
        let mut keep = text.len().saturating_sub(excess + CUT_MARK.len());
        while !text.is_char_boundary(keep) {
            keep -= 1;
        }
        text.truncate(keep);
        text.push_str(CUT_MARK);
        cut += 1;
    }
    if cut > 0 {
        left_out.push(format!("the end of {cut} long text{}", plural(cut)));
    }
    (!left_out.is_empty()).then(|| left_out.join(", "))
}

/// The size of `value` as compact JSON.
pub fn size(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Drops items from the end of `value`'s largest non-empty top-level list
/// until `excess` bytes are gone (or the list is empty): its name, how many
/// items it had and how many are kept. `None` without such a list.
fn drop_items(value: &mut Value, excess: usize) -> Option<(String, usize, usize)> {
    let fields = value.as_object_mut()?;
    let name = fields
        .iter()
        .filter(|(_, field)| field.as_array().is_some_and(|items| !items.is_empty()))
        .max_by_key(|(_, field)| size(field))
        .map(|(name, _)| name.clone())?;
    let list = fields.get_mut(&name)?.as_array_mut()?;
    let items = list.len();
    let mut freed = 0;
    while freed < excess {
        let Some(item) = list.pop() else { break };
        // The item and the comma before it.
        freed += size(&item) + 1;
    }
    Some((name, items, list.len()))
}

/// The JSON pointer and length of the longest string in `value`.
fn longest_string(value: &Value, at: String) -> Option<(String, usize)> {
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    match value {
        Value::String(text) => Some((at, text.len())),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| longest_string(item, format!("{at}/{index}")))
            .max_by_key(|(_, len)| *len),
        Value::Object(fields) => fields
            .iter()
            .filter_map(|(key, field)| longest_string(field, format!("{at}/{}", escape(key))))
            .max_by_key(|(_, len)| *len),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn hits(count: usize, content: &str) -> Value {
        let hits: Vec<Value> = (0..count)
            .map(|i| json!({ "memory": { "id": format!("m{i}"), "content": content }, "score": 1.0 }))
            .collect();
        json!({ "hits": hits, "next_page_token": "" })
    }

    #[test]
    fn a_result_that_fits_is_left_alone() {
        let mut value = hits(3, "short");
        let before = value.clone();
        assert_eq!(bound(&mut value, 10_000), None);
        assert_eq!(value, before);
    }

    #[test]
    fn the_last_items_of_the_largest_list_go_first() {
        let mut value = hits(50, &"x".repeat(1_000));
        let note = bound(&mut value, 10_000).expect("cut");
        assert!(size(&value) <= 10_000, "{}", size(&value));
        let kept = value["hits"].as_array().expect("hits");
        assert!(kept.len() >= 8, "as many as fit: {}", kept.len());
        assert_eq!(kept[0]["memory"]["id"], "m0", "the first ones stay");
        assert_eq!(note, format!("{} of 50 hits", 50 - kept.len()));
    }

    #[test]
    fn a_string_too_long_for_the_bound_is_shortened_on_a_character_boundary() {
        let mut value = json!({ "memory": { "id": "m1", "content": "é".repeat(10_000) } });
        let note = bound(&mut value, 1_000).expect("cut");
        assert!(size(&value) <= 1_000, "{}", size(&value));
        let content = value["memory"]["content"].as_str().expect("content");
        assert!(content.ends_with(CUT_MARK), "{content}");
        assert_eq!(value["memory"]["id"], "m1");
        assert_eq!(note, "the end of 1 long text");
    }

    #[test]
    fn keys_that_need_escaping_in_a_pointer_are_found() {
        let mut value = json!({ "metadata": { "a/b~c": "y".repeat(5_000) } });
        bound(&mut value, 200).expect("cut");
        assert!(size(&value) <= 200, "{value}");
    }
}
