//! `engram mcp`: an MCP server over standard input and output whose tools
//! are calls of the gRPC API, for agents whose framework speaks the Model
//! Context Protocol.
//!
//! Each tool is one RPC, named after it in snake_case (remember,
//! search_memories, build_context, create_memory, record_outcome,
//! start_episode, append_steps, complete_episode, list_entities,
//! get_entity). Its description is the
//! RPC's comment in `proto/`, its input schema the request message's fields
//! and comments, and its output schema the response's; arguments and
//! results are the protobuf JSON mapping with the proto's field names. The
//! scope is not an argument: every call is made for the scope of the
//! command's flags (--namespace, --agent, --user, --project, --session, or
//! their ENGRAM_* variables), so a model cannot read or write outside it.
//!
//! A call the server refuses is a tool error (`isError`) carrying the gRPC
//! code, the message and the field violations, as text for the model and
//! as structured content for programs; so are arguments that do not fit
//! the schema. The Engram server is reached at the first call, not at
//! start, so an MCP client may start `engram mcp` before the server is up.

mod bound;
mod schema;

use std::future::Future;
use std::sync::Arc;

use engram_client::{Engram, EngramBuilder, Error, proto};
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, SerializeOptions,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Value, json};

use schema::{Side, message_schema, method_comment};

/// The RPCs offered as tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rpc {
    Remember,
    SearchMemories,
    BuildContext,
    CreateMemory,
    RecordOutcome,
    StartEpisode,
    AppendSteps,
    CompleteEpisode,
    ListEntities,
    GetEntity,
}

/// Each tool: its RPC, the service and method, and how it behaves.
struct Spec {
    rpc: Rpc,
    service: &'static str,
    method: &'static str,
    title: &'static str,
    /// Changes nothing (MCP's readOnlyHint).
    read_only: bool,
    /// Calling it again with the same arguments changes nothing more
    /// (MCP's idempotentHint).
    idempotent: bool,
}

const SPECS: [Spec; 10] = [
    Spec {
        rpc: Rpc::Remember,
        service: "engram.v1.PolicyService",
        method: "Remember",
        title: "Remember what is worth keeping from a transcript",
        read_only: false,
        idempotent: false,
    },
    Spec {
        rpc: Rpc::SearchMemories,
        service: "engram.v1.MemoryService",
        method: "SearchMemories",
        title: "Search memories",
        read_only: true,
        idempotent: true,
    },
    Spec {
        rpc: Rpc::BuildContext,
        service: "engram.v1.MemoryService",
        method: "BuildContext",
        title: "Build a context block for the prompt",
        read_only: true,
        idempotent: true,
    },
    Spec {
        rpc: Rpc::CreateMemory,
        service: "engram.v1.MemoryService",
        method: "CreateMemory",
        title: "Store a memory as given",
        read_only: false,
        idempotent: false,
    },
    Spec {
        rpc: Rpc::RecordOutcome,
        service: "engram.v1.LearningService",
        method: "RecordOutcome",
        title: "Record how a strategy worked out",
        read_only: false,
        idempotent: false,
    },
    Spec {
        rpc: Rpc::StartEpisode,
        service: "engram.v1.MemoryService",
        method: "StartEpisode",
        title: "Start an episode of work",
        read_only: false,
        idempotent: false,
    },
    Spec {
        rpc: Rpc::AppendSteps,
        service: "engram.v1.MemoryService",
        method: "AppendSteps",
        title: "Append steps to an episode",
        read_only: false,
        idempotent: true,
    },
    Spec {
        rpc: Rpc::CompleteEpisode,
        service: "engram.v1.MemoryService",
        method: "CompleteEpisode",
        title: "Complete an episode with its outcome",
        read_only: false,
        idempotent: false,
    },
    Spec {
        rpc: Rpc::ListEntities,
        service: "engram.v1.MemoryService",
        method: "ListEntities",
        title: "List the people, projects and things memories name",
        read_only: true,
        idempotent: true,
    },
    Spec {
        rpc: Rpc::GetEntity,
        service: "engram.v1.MemoryService",
        method: "GetEntity",
        title: "What is known about one entity, now or at a time",
        read_only: true,
        idempotent: true,
    },
];

/// The request field every tool fills in from the command's flags.
const SCOPE_FIELD: &str = "scope";

/// What the server tells the model about the tools as a whole.
const INSTRUCTIONS: &str = "Engram is this agent's long-term memory. At the start of a task, \
call build_context (with the task and a query) and read what it returns. Before answering \
from past knowledge, call search_memories. When the conversation teaches something worth \
keeping (a preference, a decision, a lesson, a fact), call remember with the transcript: \
Engram decides whether and as what to keep it; call create_memory only to store a memory \
exactly as given. After trying a strategy, call record_outcome with whether it worked. To \
log a whole task, call start_episode, then append_steps as you work, then complete_episode \
with a score. To learn what is known about a person, project, service or tool by name \
(now, or at a past time), call get_entity; list_entities lists the names memories mention. \
Every call is made in the scope this server was started with.";

/// One tool: what is listed, and what its call is made of.
struct ToolEntry {
    spec: &'static Spec,
    tool: Tool,
    request: MessageDescriptor,
    response: MessageDescriptor,
}

/// The MCP server: the tools, the scope, and the connection to Engram
/// (made at the first call, and again after a failed try).
pub struct EngramTools {
    tools: Vec<ToolEntry>,
    scope: DynamicMessage,
    builder: EngramBuilder,
    engram: tokio::sync::OnceCell<Engram>,
    /// The most bytes of one tool result (text and structured content).
    max_output: usize,
}

impl EngramTools {
    /// The tools, described from the descriptor set compiled into the
    /// binary, for calls made with `builder` in `scope`, each result within
    /// `max_output` bytes.
    pub fn new(builder: EngramBuilder, scope: &proto::Scope, max_output: usize) -> Self {
        let pool = DescriptorPool::decode(engram::FILE_DESCRIPTOR_SET)
            .expect("the descriptor set compiled into this binary is valid");
        let tools = SPECS
            .iter()
            .map(|spec| {
                let method = pool
                    .get_service_by_name(spec.service)
                    .and_then(|service| service.methods().find(|m| m.name() == spec.method))
                    .unwrap_or_else(|| {
                        panic!("{}.{} is in the descriptor set", spec.service, spec.method)
                    });
                let (request, response) = (method.input(), method.output());
                let annotations = ToolAnnotations::new()
                    .read_only(spec.read_only)
                    .destructive(false)
                    .idempotent(spec.idempotent)
                    .open_world(false);
                let tool = Tool::new(
                    tool_name(spec.method),
                    method_comment(&method),
                    message_schema(&request, Side::Input, &[SCOPE_FIELD]),
                )
                .with_title(spec.title)
                .with_raw_output_schema(Arc::new(message_schema(&response, Side::Output, &[])))
                .with_annotations(annotations);
                ToolEntry {
                    spec,
                    tool,
                    request,
                    response,
                }
            })
            .collect();
        let scope_descriptor = pool
            .get_message_by_name("engram.v1.Scope")
            .expect("engram.v1.Scope is in the descriptor set");
        let mut scope_message = DynamicMessage::new(scope_descriptor);
        scope_message
            .transcode_from(scope)
            .expect("a Scope transcodes to its own descriptor");
        EngramTools {
            tools,
            scope: scope_message,
            builder,
            engram: tokio::sync::OnceCell::new(),
            max_output,
        }
    }

    /// Serves MCP on standard input and output until the client closes it.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| format!("MCP initialisation failed: {error}"))?;
        running
            .waiting()
            .await
            .map_err(|error| format!("the MCP server stopped: {error}"))?;
        Ok(())
    }

    /// Calls the tool `name` with `arguments`: a result, or a tool error
    /// for the model to read.
    async fn call(&self, entry: &ToolEntry, arguments: Value) -> CallToolResult {
        let request = match self.request(entry, arguments) {
            Ok(request) => request,
            Err(message) => {
                return failure(json!({ "code": "INVALID_ARGUMENT", "message": message }));
            }
        };
        let engram = match self
            .engram
            .get_or_try_init(|| self.builder.clone().connect())
            .await
        {
            Ok(engram) => engram,
            Err(error) => return failure(error_json(&error)),
        };
        match dispatch(engram, entry, request).await {
            Ok(response) => success(entry, &response, self.max_output),
            Err(error) => failure(error_json(&error)),
        }
    }

    /// The request: `arguments` read with the request's descriptor, and
    /// the scope of the command.
    fn request(&self, entry: &ToolEntry, arguments: Value) -> Result<DynamicMessage, String> {
        if arguments.get(SCOPE_FIELD).is_some() {
            return Err(format!(
                "{SCOPE_FIELD}: is set by the engram mcp command (--namespace, --agent, --user, \
                 --project, --session), not by the caller"
            ));
        }
        let options = DeserializeOptions::new().deny_unknown_fields(true);
        let mut request =
            DynamicMessage::deserialize_with_options(entry.request.clone(), arguments, &options)
                .map_err(|error| format!("the arguments do not fit the tool's schema: {error}"))?;
        request.set_field_by_name(
            SCOPE_FIELD,
            prost_reflect::Value::Message(self.scope.clone()),
        );
        Ok(request)
    }

    fn entry(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.iter().find(|entry| entry.tool.name == name)
    }
}

impl ServerHandler for EngramTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("engram", env!("CARGO_PKG_VERSION"))
                    .with_title("Engram memory"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.tools.iter().map(|entry| entry.tool.clone()).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.entry(name).map(|entry| entry.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(entry) = self.entry(&request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "no tool is named {:?}; the tools are {}",
                    request.name,
                    self.tools
                        .iter()
                        .map(|e| e.tool.name.as_ref())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        Ok(self.call(entry, arguments).await.into())
    }
}

/// `CreateMemory` → `create_memory`.
fn tool_name(method: &str) -> String {
    let mut name = String::new();
    for (i, c) in method.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_lowercase());
    }
    name
}

/// Makes the call of `entry` with `request`.
async fn dispatch(
    engram: &Engram,
    entry: &ToolEntry,
    request: DynamicMessage,
) -> Result<DynamicMessage, Error> {
    let response = &entry.response;
    let (memory, learning, policy) = (engram.memory(), engram.learning(), engram.policy());
    match entry.spec.rpc {
        Rpc::Remember => {
            relay(request, response, |r: proto::RememberRequest| {
                policy.remember(r)
            })
            .await
        }
        Rpc::SearchMemories => {
            relay(request, response, |r: proto::SearchMemoriesRequest| {
                memory.search_memories(r)
            })
            .await
        }
        Rpc::BuildContext => {
            relay(request, response, |r: proto::BuildContextRequest| {
                memory.build_context(r)
            })
            .await
        }
        Rpc::CreateMemory => {
            relay(request, response, |r: proto::CreateMemoryRequest| {
                memory.create_memory(r)
            })
            .await
        }
        Rpc::RecordOutcome => {
            relay(request, response, |r: proto::RecordOutcomeRequest| {
                learning.record_outcome(r)
            })
            .await
        }
        Rpc::StartEpisode => {
            relay(request, response, |r: proto::StartEpisodeRequest| {
                memory.start_episode(r)
            })
            .await
        }
        Rpc::AppendSteps => {
            relay(request, response, |r: proto::AppendStepsRequest| {
                memory.append_steps(r)
            })
            .await
        }
        Rpc::CompleteEpisode => {
            relay(request, response, |r: proto::CompleteEpisodeRequest| {
                memory.complete_episode(r)
            })
            .await
        }
        Rpc::ListEntities => {
            relay(request, response, |r: proto::ListEntitiesRequest| {
                memory.list_entities(r)
            })
            .await
        }
        Rpc::GetEntity => {
            relay(request, response, |r: proto::GetEntityRequest| {
                memory.get_entity(r)
            })
            .await
        }
    }
}

/// One typed call: the dynamic request as `Req`, the answer back as a
/// dynamic message of `descriptor`.
async fn relay<Req, Resp, Fut>(
    request: DynamicMessage,
    descriptor: &MessageDescriptor,
    call: impl FnOnce(Req) -> Fut,
) -> Result<DynamicMessage, Error>
where
    Req: prost::Message + Default,
    Resp: prost::Message,
    Fut: Future<Output = Result<Resp, Error>>,
{
    let typed: Req = request
        .transcode_to()
        .expect("a request read with its own descriptor transcodes to its type");
    let response = call(typed).await?;
    let mut dynamic = DynamicMessage::new(descriptor.clone());
    dynamic
        .transcode_from(&response)
        .expect("a response transcodes to its own descriptor");
    Ok(dynamic)
}

/// A result within `max_output` bytes: the response as structured content
/// (for programs; cut to half of it, see [`bound::bound`]), and text for the
/// model in the rest — the context block for build_context, the hits one a
/// line for search_memories, compact JSON for the others — saying what was
/// left out, if anything.
fn success(entry: &ToolEntry, response: &DynamicMessage, max_output: usize) -> CallToolResult {
    let options = SerializeOptions::new()
        .skip_default_fields(false)
        .use_proto_field_name(true)
        .stringify_64_bit_integers(false);
    let mut value = response
        .serialize_with_options(serde_json::value::Serializer, &options)
        .expect("a protobuf message serializes to JSON");
    let left_out = bound::bound(&mut value, max_output / 2);
    if left_out.is_some() {
        // A search says so itself.
        if let Some(truncated) = value.get_mut("truncated") {
            *truncated = true.into();
        }
    }
    let mut text = match entry.spec.rpc {
        Rpc::BuildContext => match value.get("text").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => text.to_owned(),
            _ => "(Nothing is known yet for this scope, task and query.)".to_owned(),
        },
        Rpc::SearchMemories => hits_text(&value),
        _ => value.to_string(),
    };
    if let Some(left_out) = left_out {
        text.push_str(&format!(
            "\n\n(Left out to keep this result within {max_output} bytes, engram mcp \
             --max-output: {left_out}. Narrow the request to see the rest.)"
        ));
    }
    let room = max_output.saturating_sub(bound::size(&value));
    if text.len() > room {
        let mut keep = room.saturating_sub('…'.len_utf8());
        while !text.is_char_boundary(keep) {
            keep -= 1;
        }
        text.truncate(keep);
        text.push('…');
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

/// A search's hits for the model, one a line, most relevant first:
/// `1. [fact] CONTENT (id ID, score 0.83)`.
fn hits_text(response: &Value) -> String {
    let hits = response
        .get("hits")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if hits.is_empty() {
        return "No memory matches the query in this scope.".to_owned();
    }
    let mut text = format!(
        "{} memor{} found, most relevant first:",
        hits.len(),
        if hits.len() == 1 { "y" } else { "ies" }
    );
    for (rank, hit) in hits.iter().enumerate() {
        let memory = &hit["memory"];
        let memory_type = memory["memory_type"]
            .as_str()
            .unwrap_or_default()
            .trim_start_matches("MEMORY_TYPE_")
            .to_lowercase();
        text.push_str(&format!(
            "\n{}. [{memory_type}] {} (id {}, score {:.2})",
            rank + 1,
            memory["content"].as_str().unwrap_or_default(),
            memory["id"].as_str().unwrap_or_default(),
            hit["score"].as_f64().unwrap_or_default(),
        ));
    }
    text
}

/// A tool error: the gRPC code, message and field violations, as text
/// for the model and as structured content.
fn failure(error: Value) -> CallToolResult {
    let mut text = format!(
        "{}: {}",
        error["code"].as_str().unwrap_or("UNKNOWN"),
        error["message"].as_str().unwrap_or_default()
    );
    if let Some(violations) = error.get("field_violations").and_then(Value::as_array) {
        for violation in violations {
            text.push_str(&format!(
                "\n- {}: {}",
                violation["field"].as_str().unwrap_or_default(),
                violation["description"].as_str().unwrap_or_default()
            ));
        }
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(error);
    result
}

/// A failed call as JSON: `code` (the gRPC code's name, e.g.
/// INVALID_ARGUMENT; UNAVAILABLE when the server cannot be reached),
/// `message`, and `field_violations` when the request was refused.
fn error_json(error: &Error) -> Value {
    let violations: Vec<Value> = error
        .field_violations()
        .into_iter()
        .map(|(field, description)| json!({ "field": field, "description": description }))
        .collect();
    let mut value = json!({
        "code": error.code_name(),
        "message": error.message(),
    });
    if !violations.is_empty() {
        value["field_violations"] = Value::Array(violations);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_the_rpcs_in_snake_case() {
        assert_eq!(tool_name("CreateMemory"), "create_memory");
        assert_eq!(tool_name("Remember"), "remember");
        let tools = EngramTools::new(
            Engram::builder("http://127.0.0.1:1"),
            &proto::Scope::new("mcp-unit"),
            64 << 10,
        );
        let names: Vec<&str> = tools.tools.iter().map(|e| e.tool.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "remember",
                "search_memories",
                "build_context",
                "create_memory",
                "record_outcome",
                "start_episode",
                "append_steps",
                "complete_episode",
                "list_entities",
                "get_entity"
            ]
        );
    }

    #[test]
    fn the_scope_is_not_an_argument() {
        let tools = EngramTools::new(
            Engram::builder("http://127.0.0.1:1"),
            &proto::Scope::new("mcp-unit").with_project("shop"),
            64 << 10,
        );
        let entry = tools.entry("search_memories").unwrap();
        let refused = tools
            .request(
                entry,
                json!({ "scope": { "namespace": "other" }, "query": "q" }),
            )
            .unwrap_err();
        assert!(
            refused.starts_with("scope: is set by the engram mcp command"),
            "{refused}"
        );
        let unknown = tools
            .request(entry, json!({ "query": "q", "nonsense": 1 }))
            .unwrap_err();
        assert!(unknown.contains("nonsense"), "{unknown}");
        let request = tools
            .request(entry, json!({ "query": "q", "limit": 3 }))
            .unwrap();
        let typed: proto::SearchMemoriesRequest = request.transcode_to().unwrap();
        assert_eq!(typed.query, "q");
        assert_eq!(typed.limit, 3);
        let scope = typed.scope.unwrap();
        assert_eq!(
            (scope.namespace.as_str(), scope.project_id.as_str()),
            ("mcp-unit", "shop")
        );
    }
}
