//! MemoryService requests: validated and turned into domain values. Every
//! limit a caller can hit is a named constant here.

use engram::v1 as pb;

use super::page_token;
use super::request_key::Idempotent as _;
use super::validate::{MAX_ID_CHARS, Violations};
use super::watch_cursor::CursorKey;
use crate::domain::provenance::{Origin, WriteMethod};
use crate::domain::{
    Actor, ContradictionPolicy, ListQuery, MemoryFilter, MemoryLevel, MemoryOrder, MemoryPatch,
    MemorySource, MemoryType, Micros, NewMemory, RequestKey, Scope, TimeRange, Validity,
};
use crate::engine::context::{ContextRequest, DEFAULT_TOKEN_BUDGET};
use crate::engine::search::{SearchRequest, Weights};
use crate::engine::watch::{Start, WatchFilter, WatchRequest};
use crate::error::Result;

/// The most bytes of a memory's content (64 KiB).
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;
pub const MAX_SUMMARY_CHARS: usize = 1000;
pub const MAX_TAGS: usize = 32;
pub const MAX_TAG_CHARS: usize = 64;
pub const MAX_METADATA_ENTRIES: usize = 64;
pub const MAX_METADATA_KEY_CHARS: usize = 128;
pub const MAX_METADATA_VALUE_CHARS: usize = 1024;
/// The most memories of one BatchCreateMemories.
pub const MAX_BATCH: usize = 500;
pub const MAX_QUERY_CHARS: usize = 4096;
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
pub const MAX_SEARCH_LIMIT: usize = 100;
pub const MIN_TOKEN_BUDGET: usize = 16;
pub const MAX_TOKEN_BUDGET: usize = 32_768;
/// The largest search weight accepted; weights only matter relative to each other.
pub const MAX_WEIGHT: f64 = 1000.0;
/// The most characters of a task type.
pub const MAX_TASK_TYPE_CHARS: usize = 64;
pub const DEFAULT_IMPORTANCE: f64 = 0.5;
pub const DEFAULT_CONFIDENCE: f64 = 1.0;
/// How far in the future a memory's occurred_at may be: room for the
/// caller's clock being ahead of the server's, not for planned events.
pub const MAX_OCCURRED_AT_AHEAD: Micros = 24 * 3600 * 1_000_000;

/// The memory fields UpdateMemory can change, as named in `update_mask`.
const UPDATABLE_FIELDS: &[&str] = &[
    "memory_type",
    "content",
    "summary",
    "tags",
    "metadata",
    "importance",
    "confidence",
    "expire_time",
    "occurred_at",
    "valid_to",
];

/// A validated create: the namespace, the optional request key and the memories.
pub struct Create {
    pub scope: Scope,
    pub request: Option<RequestKey>,
    pub memories: Vec<NewMemory>,
    /// What the memories' contradictions do; `None`: the server's default.
    pub contradictions: Option<ContradictionPolicy>,
}

pub fn create(mut req: pb::CreateMemoryRequest, now: Micros) -> Result<Create> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    v.identifier("request_id", &req.request_id, MAX_ID_CHARS, false);
    let contradictions = v.enum_value(
        "contradictions",
        req.contradictions,
        ContradictionPolicy::from_code,
    );
    let memory = match &req.memory {
        Some(input) => Some(memory_input(
            &mut v,
            "memory",
            input,
            &scope,
            now,
            WriteMethod::CreateMemory,
        )),
        None => {
            v.add("memory", "is required");
            None
        }
    };
    v.finish(())?;
    Ok(Create {
        scope,
        request: req.take_request_key(),
        memories: memory.into_iter().collect(),
        contradictions,
    })
}

pub fn batch_create(mut req: pb::BatchCreateMemoriesRequest, now: Micros) -> Result<Create> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    v.identifier("request_id", &req.request_id, MAX_ID_CHARS, false);
    let contradictions = v.enum_value(
        "contradictions",
        req.contradictions,
        ContradictionPolicy::from_code,
    );
    if req.memories.is_empty() || req.memories.len() > MAX_BATCH {
        v.add(
            "memories",
            format!(
                "must have 1 to {MAX_BATCH} entries (got {})",
                req.memories.len()
            ),
        );
    }
    let memories = req
        .memories
        .iter()
        .take(MAX_BATCH)
        .enumerate()
        .map(|(i, input)| {
            let field = format!("memories[{i}]");
            memory_input(
                &mut v,
                &field,
                input,
                &scope,
                now,
                WriteMethod::BatchCreateMemories,
            )
        })
        .collect();
    v.finish(())?;
    Ok(Create {
        scope,
        request: req.take_request_key(),
        memories,
        contradictions,
    })
}

/// Checks a memory to create and applies the defaults.
fn memory_input(
    v: &mut Violations,
    field: &str,
    input: &pb::MemoryInput,
    scope: &Scope,
    now: Micros,
    method: WriteMethod,
) -> NewMemory {
    let level = v
        .enum_value(
            &format!("{field}.level"),
            input.level,
            MemoryLevel::from_code,
        )
        .unwrap_or_else(|| scope.narrowest_level());
    match level {
        MemoryLevel::Workspace if scope.project_id.is_empty() => {
            v.add(format!("{field}.level"), "WORKSPACE needs scope.project_id");
        }
        MemoryLevel::Conversation if scope.session_id.is_empty() => {
            v.add(
                format!("{field}.level"),
                "CONVERSATION needs scope.session_id",
            );
        }
        _ => {}
    }
    let source = v
        .enum_value(
            &format!("{field}.source"),
            input.source,
            MemorySource::from_code,
        )
        .unwrap_or(MemorySource::Explicit);
    let fields = MemoryFields::check(v, field, input, now);
    if fields.valid_to.is_some() {
        v.add(
            format!("{field}.valid_to"),
            "cannot be set when storing a memory: a new memory is true; UpdateMemory invalidates one",
        );
    }
    NewMemory {
        scope: scope.for_level(level),
        // The API key is the handler's to add.
        actor: Actor {
            key_id: String::new(),
            agent_id: scope.agent_id.clone(),
        },
        level,
        memory_type: fields.memory_type,
        content: fields.content,
        summary: fields.summary,
        tags: fields.tags,
        metadata: fields.metadata,
        importance: fields.importance,
        confidence: fields.confidence,
        source,
        expire_time: fields.expire_time,
        occurred_at: fields.occurred_at,
        origin_session_id: scope.session_id.clone(),
        origin: Origin::written(
            method,
            episode_id(v, &format!("{field}.episode_id"), &input.episode_id),
        ),
    }
}

/// An optional episode id, checked to be one (that it names a visible
/// episode is the handler's to check).
pub fn episode_id(v: &mut Violations, field: &str, value: &str) -> String {
    match value.is_empty() {
        true => String::new(),
        false => v.uuid(field, value),
    }
}

/// The caller-settable fields of a memory, checked, with defaults applied.
struct MemoryFields {
    memory_type: MemoryType,
    content: String,
    summary: String,
    tags: Vec<String>,
    metadata: std::collections::BTreeMap<String, String>,
    importance: f64,
    confidence: f64,
    expire_time: Option<Micros>,
    occurred_at: Option<Micros>,
    valid_to: Option<Micros>,
}

impl MemoryFields {
    fn check(
        v: &mut Violations,
        field: &str,
        input: &pb::MemoryInput,
        now: Micros,
    ) -> MemoryFields {
        let memory_type = v
            .enum_value(
                &format!("{field}.memory_type"),
                input.memory_type,
                MemoryType::from_code,
            )
            .unwrap_or(MemoryType::Note);
        let content_field = format!("{field}.content");
        if input.content.len() > MAX_CONTENT_BYTES {
            v.add(
                content_field,
                format!(
                    "must be at most {MAX_CONTENT_BYTES} bytes (got {})",
                    input.content.len()
                ),
            );
        } else {
            v.text(&content_field, &input.content, usize::MAX, true);
        }
        v.text(
            &format!("{field}.summary"),
            &input.summary,
            MAX_SUMMARY_CHARS,
            false,
        );
        v.tags(
            &format!("{field}.tags"),
            &input.tags,
            MAX_TAGS,
            MAX_TAG_CHARS,
        );
        let metadata = v.metadata(
            &format!("{field}.metadata"),
            &input.metadata,
            MAX_METADATA_ENTRIES,
            MAX_METADATA_KEY_CHARS,
            MAX_METADATA_VALUE_CHARS,
        );
        let importance = input.importance.unwrap_or(DEFAULT_IMPORTANCE);
        v.unit_interval(&format!("{field}.importance"), importance);
        let confidence = input.confidence.unwrap_or(DEFAULT_CONFIDENCE);
        v.unit_interval(&format!("{field}.confidence"), confidence);
        let expire_field = format!("{field}.expire_time");
        let expire_time = v.timestamp(&expire_field, input.expire_time.as_ref());
        if expire_time.is_some_and(|t| t <= now) {
            v.add(expire_field, "must be in the future");
        }
        let occurred_field = format!("{field}.occurred_at");
        let occurred_at = v.timestamp(&occurred_field, input.occurred_at.as_ref());
        if occurred_at.is_some_and(|t| t > now.saturating_add(MAX_OCCURRED_AT_AHEAD)) {
            v.add(
                occurred_field,
                format!(
                    "must not be more than {} hours ahead of the server's clock",
                    MAX_OCCURRED_AT_AHEAD / 3_600_000_000
                ),
            );
        }
        let valid_to = v.timestamp(&format!("{field}.valid_to"), input.valid_to.as_ref());
        MemoryFields {
            memory_type,
            content: input.content.clone(),
            summary: input.summary.clone(),
            tags: input.tags.clone(),
            metadata,
            importance,
            confidence,
            expire_time,
            occurred_at,
            valid_to,
        }
    }
}

/// A validated memory id with its scope.
pub fn id_and_scope(scope: Option<&pb::Scope>, id: &str) -> Result<(Scope, String)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", scope);
    let id = v.uuid("id", id);
    v.finish((scope, id))
}

/// A validated update: scope, id, the patch and the optional etag.
pub struct Update {
    pub scope: Scope,
    pub id: String,
    pub patch: MemoryPatch,
    pub etag: Option<String>,
}

pub fn update(req: pb::UpdateMemoryRequest, now: Micros) -> Result<Update> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let id = v.uuid("id", &req.id);
    let etag = v.etag("etag", &req.etag);
    let input = req.memory.unwrap_or_default();
    for (name, set) in [("level", input.level != 0), ("source", input.source != 0)] {
        if set {
            v.add(
                format!("memory.{name}"),
                "cannot change; create a new memory instead",
            );
        }
    }
    let paths = update_paths(
        &mut v,
        req.update_mask.map(|m| m.paths).unwrap_or_default(),
        &input,
    );
    // Check every field as a create would, but report only the masked ones.
    let mut checked = Violations::default();
    let fields = MemoryFields::check(&mut checked, "memory", &input, now);
    for violation in checked.into_violations() {
        let name = violation.field.trim_start_matches("memory.");
        let name = name.split(['.', '[']).next().unwrap_or(name);
        if paths.iter().any(|p| p == name) {
            v.add(violation.field, violation.description);
        }
    }
    v.finish(Update {
        scope,
        id,
        patch: patch(&paths, fields),
        etag,
    })
}

/// The fields an update changes: the mask's paths, `*` for all, or, with no
/// mask, every field the request sets.
fn update_paths(v: &mut Violations, mask: Vec<String>, input: &pb::MemoryInput) -> Vec<String> {
    if mask.is_empty() {
        let set = [
            ("memory_type", input.memory_type != 0),
            ("content", !input.content.is_empty()),
            ("summary", !input.summary.is_empty()),
            ("tags", !input.tags.is_empty()),
            ("metadata", !input.metadata.is_empty()),
            ("importance", input.importance.is_some()),
            ("confidence", input.confidence.is_some()),
            ("expire_time", input.expire_time.is_some()),
            ("occurred_at", input.occurred_at.is_some()),
            ("valid_to", input.valid_to.is_some()),
        ];
        let paths: Vec<String> = set
            .iter()
            .filter(|(_, s)| *s)
            .map(|(p, _)| (*p).to_owned())
            .collect();
        if paths.is_empty() {
            v.add(
                "update_mask",
                "nothing to update: name fields in update_mask or set them in memory",
            );
        }
        return paths;
    }
    if mask.iter().any(|p| p == "*") {
        if mask.len() > 1 {
            v.add(
                "update_mask.paths",
                "\"*\" cannot be combined with other paths",
            );
        }
        return UPDATABLE_FIELDS.iter().map(|p| (*p).to_owned()).collect();
    }
    for (i, path) in mask.iter().enumerate() {
        if !UPDATABLE_FIELDS.contains(&path.as_str()) {
            let why = match path.as_str() {
                "level" | "source" | "scope" => {
                    format!("{path} cannot change; create a new memory instead")
                }
                _ => format!(
                    "unknown field {path:?}; updatable fields are {}",
                    UPDATABLE_FIELDS.join(", ")
                ),
            };
            v.add(format!("update_mask.paths[{i}]"), why);
        }
    }
    mask
}

fn patch(paths: &[String], fields: MemoryFields) -> MemoryPatch {
    let has = |name: &str| paths.iter().any(|p| p == name);
    MemoryPatch {
        memory_type: has("memory_type").then_some(fields.memory_type),
        content: has("content").then_some(fields.content),
        summary: has("summary").then_some(fields.summary),
        tags: has("tags").then_some(fields.tags),
        metadata: has("metadata").then_some(fields.metadata),
        importance: has("importance").then_some(fields.importance),
        confidence: has("confidence").then_some(fields.confidence),
        expire_time: has("expire_time").then_some(fields.expire_time),
        occurred_at: has("occurred_at").then_some(fields.occurred_at),
        valid_to: has("valid_to").then_some(fields.valid_to),
    }
}

pub fn delete(req: &pb::DeleteMemoryRequest) -> Result<(Scope, String, Option<String>)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let id = v.uuid("id", &req.id);
    let etag = v.etag("etag", &req.etag);
    v.finish((scope, id, etag))
}

/// The types, levels and tags of a filter (`filter.memory_types` …), checked.
fn kinds(
    v: &mut Violations,
    memory_types: &[i32],
    levels: &[i32],
    tags: &[String],
) -> (Vec<MemoryType>, Vec<MemoryLevel>) {
    let memory_types = memory_types
        .iter()
        .enumerate()
        .filter_map(|(i, &code)| {
            v.enum_value(
                &format!("filter.memory_types[{i}]"),
                code,
                MemoryType::from_code,
            )
        })
        .collect();
    let levels = levels
        .iter()
        .enumerate()
        .filter_map(|(i, &code)| {
            v.enum_value(&format!("filter.levels[{i}]"), code, MemoryLevel::from_code)
        })
        .collect();
    v.tags("filter.tags", tags, MAX_TAGS, MAX_TAG_CHARS);
    (memory_types, levels)
}

fn filter(v: &mut Violations, filter: Option<&pb::MemoryFilter>) -> MemoryFilter {
    let Some(f) = filter else {
        return MemoryFilter::default();
    };
    let (memory_types, levels) = kinds(v, &f.memory_types, &f.levels, &f.tags);
    v.unit_interval("filter.min_importance", f.min_importance);
    let metadata = v.metadata(
        "filter.metadata",
        &f.metadata,
        MAX_METADATA_ENTRIES,
        MAX_METADATA_KEY_CHARS,
        MAX_METADATA_VALUE_CHARS,
    );
    let created = time_range(
        v,
        ("filter.created_after", f.created_after.as_ref()),
        ("filter.created_before", f.created_before.as_ref()),
    );
    let occurred = time_range(
        v,
        ("filter.occurred_after", f.occurred_after.as_ref()),
        ("filter.occurred_before", f.occurred_before.as_ref()),
    );
    let validity = match (f.valid_at.as_ref(), f.include_invalidated) {
        (Some(_), true) => {
            v.add(
                "filter.include_invalidated",
                "cannot be set with filter.valid_at (valid_at already answers with what was true then)",
            );
            Validity::Current
        }
        (Some(at), false) => v
            .timestamp("filter.valid_at", Some(at))
            .map_or(Validity::Current, Validity::At),
        (None, true) => Validity::All,
        (None, false) => Validity::Current,
    };
    MemoryFilter {
        memory_types,
        levels,
        tags: f.tags.clone(),
        min_importance: f.min_importance,
        created,
        occurred,
        metadata,
        validity,
        entities: super::entity_requests::filter_entities(v, &f.entities),
        mentioning: None,
    }
}

/// A filter's time range from its `(field, value)` ends; the later end must
/// be later than the earlier one.
fn time_range(
    v: &mut Violations,
    (after_field, after): (&str, Option<&prost_types::Timestamp>),
    (before_field, before): (&str, Option<&prost_types::Timestamp>),
) -> TimeRange {
    let range = TimeRange {
        after: v.timestamp(after_field, after),
        before: v.timestamp(before_field, before),
    };
    if let (Some(after), Some(before)) = (range.after, range.before)
        && after >= before
    {
        v.add(before_field, format!("must be later than {after_field}"));
    }
    range
}

/// A validated WatchMemories, and what its cursors are bound to (the
/// scope's namespace on the database `database_id`).
pub fn watch(
    req: &pb::WatchMemoriesRequest,
    database_id: &str,
) -> Result<(WatchRequest, CursorKey)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let filter = req.filter.as_ref().map_or_else(WatchFilter::default, |f| {
        let (memory_types, levels) = kinds(&mut v, &f.memory_types, &f.levels, &f.tags);
        WatchFilter {
            memory_types,
            levels,
            tags: f.tags.clone(),
        }
    });
    let cursors = CursorKey::new(&scope.namespace, database_id);
    let start = match cursors.decode(&mut v, "cursor", &req.cursor) {
        Some(seq) => Start::After(seq),
        None => Start::Now,
    };
    v.finish((
        WatchRequest {
            scope,
            filter,
            start,
        },
        cursors,
    ))
}

/// A validated ListMemoryRevisions.
pub struct Revisions {
    pub namespace: String,
    pub id: String,
    pub page_size: usize,
    /// The last revision of the previous page.
    pub after: Option<i64>,
    /// The page token's fingerprint.
    pub fingerprint: String,
}

pub fn revisions(req: &pb::ListMemoryRevisionsRequest) -> Result<Revisions> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let id = v.uuid("id", &req.id);
    let page_size = v.page_size("page_size", req.page_size);
    let fingerprint = page_token::fingerprint(&(&scope.namespace, &id, "revisions"));
    let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint).map(|[seq]| seq);
    v.finish(Revisions {
        namespace: scope.namespace,
        id,
        page_size,
        after,
        fingerprint,
    })
}

/// A validated list request, and the fingerprint its page tokens carry.
pub fn list(req: &pb::ListMemoriesRequest) -> Result<(ListQuery, String)> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    let filter = filter(&mut v, req.filter.as_ref());
    let order = match pb::MemoryOrder::try_from(req.order_by) {
        Ok(pb::MemoryOrder::Unspecified | pb::MemoryOrder::CreateTimeDesc) => {
            MemoryOrder::CreateTimeDesc
        }
        Ok(pb::MemoryOrder::CreateTimeAsc) => MemoryOrder::CreateTimeAsc,
        Ok(pb::MemoryOrder::ImportanceDesc) => MemoryOrder::ImportanceDesc,
        Err(_) => {
            v.add("order_by", format!("unknown enum value {}", req.order_by));
            MemoryOrder::default()
        }
    };
    let page_size = v.page_size("page_size", req.page_size);
    let fingerprint = page_token::fingerprint(&(&scope, &filter, order));
    let after = page_token::decode_into(&mut v, &req.page_token, &fingerprint)
        .map(page_token::memory_cursor);
    v.finish((
        ListQuery {
            scope,
            filter,
            order,
            page_size,
            after,
            // The reply's budget: a page of large memories is cut as it is
            // read, not after.
            max_bytes: Some(page_token::MAX_PAGE_BYTES),
        },
        fingerprint,
    ))
}

pub fn search(req: &pb::SearchMemoriesRequest) -> Result<SearchRequest> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    v.text("query", &req.query, MAX_QUERY_CHARS, true);
    let filter = filter(&mut v, req.filter.as_ref());
    let limit = v.count_or_default(
        "limit",
        req.limit,
        DEFAULT_SEARCH_LIMIT,
        1,
        MAX_SEARCH_LIMIT,
    );
    let weights = weights(&mut v, req.weights.as_ref());
    v.finish(SearchRequest {
        scope,
        query: req.query.clone(),
        filter,
        limit,
        weights,
        max_bytes: Some(page_token::MAX_PAGE_BYTES),
    })
}

fn weights(v: &mut Violations, weights: Option<&pb::SearchWeights>) -> Weights {
    let defaults = Weights::default();
    let Some(w) = weights else {
        return defaults;
    };
    let mut weight = |name: &str, value: Option<f64>, default: f64, max: f64| {
        let value = value.unwrap_or(default);
        if !(0.0..=max).contains(&value) {
            v.add(
                format!("weights.{name}"),
                format!("must be between 0 and {max} (got {value})"),
            );
        }
        value
    };
    let relevance = weight("relevance", w.relevance, defaults.relevance, MAX_WEIGHT);
    let recency = weight("recency", w.recency, defaults.recency, MAX_WEIGHT);
    let importance = weight("importance", w.importance, defaults.importance, MAX_WEIGHT);
    // Shares of relevance.
    let semantic = weight("semantic", w.semantic, defaults.semantic, 1.0);
    let context = weight("context", w.context, defaults.context, 1.0);
    let entity = weight("entity", w.entity, defaults.entity, 1.0);
    if relevance + recency + importance <= 0.0 {
        v.add("weights", "at least one weight must be above 0");
    }
    let half_life = v
        .positive_duration("weights.recency_half_life", w.recency_half_life.as_ref())
        .unwrap_or(defaults.half_life);
    Weights {
        relevance,
        semantic,
        context,
        entity,
        recency,
        importance,
        half_life,
    }
}

pub fn build_context(req: &pb::BuildContextRequest) -> Result<ContextRequest> {
    let mut v = Violations::default();
    let scope = v.scope("scope", req.scope.as_ref());
    v.identifier("task_id", &req.task_id, MAX_ID_CHARS, false);
    v.text("query", &req.query, MAX_QUERY_CHARS, false);
    let token_budget = v.count_or_default(
        "token_budget",
        req.token_budget,
        DEFAULT_TOKEN_BUDGET,
        MIN_TOKEN_BUDGET,
        MAX_TOKEN_BUDGET,
    );
    v.text("task_type", &req.task_type, MAX_TASK_TYPE_CHARS, false);
    let validity = v
        .timestamp("valid_at", req.valid_at.as_ref())
        .map_or(Validity::Current, Validity::At);
    v.finish(ContextRequest {
        scope,
        task_id: req.task_id.clone(),
        task_type: req.task_type.trim().to_lowercase(),
        query: req.query.clone(),
        token_budget,
        validity,
    })
}
