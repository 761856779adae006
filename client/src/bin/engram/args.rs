//! The command line: flags, commands and their help.

use std::time::{Duration, SystemTime};

use clap::{Args, Parser, Subcommand, ValueEnum};
use engram_client::{DEFAULT_SERVER, proto};

#[derive(Debug, Parser)]
#[command(
    name = "engram",
    version,
    about = "Talk to an Engram memory server: remember, search, build context, record episodes and outcomes.",
    after_help = "The text of remember, classify and create, and --output of episode step, \
                  are read from standard input when given as -.\n\
                  Exit status: 0 on success; 1 when the server answered with an error status; \
                  2 for bad usage; 3 when the server could not be reached or stopped answering \
                  (see --timeout)."
)]
pub struct Cli {
    /// The server's URL (https:// for TLS).
    #[arg(long, env = "ENGRAM_SERVER", default_value = DEFAULT_SERVER, global = true)]
    pub server: String,

    /// API key, sent as `authorization: Bearer <key>`. Prefer the environment
    /// variable: flags are visible to other users in the process list.
    #[arg(long, env = "ENGRAM_API_KEY", hide_env_values = true, global = true)]
    pub api_key: Option<String>,

    /// A PEM certificate authority to trust for an https:// server (e.g. a
    /// private CA), besides the system's.
    #[arg(long, env = "ENGRAM_TLS_CA", global = true)]
    pub tls_ca: Option<std::path::PathBuf>,

    /// A PEM client certificate to present to a server that asks for one
    /// (mutual TLS); needs --tls-key.
    #[arg(long, env = "ENGRAM_TLS_CERT", requires = "tls_key", global = true)]
    pub tls_cert: Option<std::path::PathBuf>,

    /// The private key (PEM) of --tls-cert.
    #[arg(long, env = "ENGRAM_TLS_KEY", requires = "tls_cert", global = true)]
    pub tls_key: Option<std::path::PathBuf>,

    /// Print the whole response as JSON (the protobuf JSON mapping) instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    /// How long one try of a call may take, e.g. 500ms, 30s, 2m (reads are
    /// tried up to 4 times while the server is unavailable).
    #[arg(long, env = "ENGRAM_TIMEOUT", default_value = "30s", value_parser = parse_duration, global = true)]
    pub timeout: Duration,

    #[command(flatten)]
    pub scope: ScopeArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// Who the call is for: every request names its scope.
#[derive(Debug, Args)]
pub struct ScopeArgs {
    /// The namespace (tenant).
    #[arg(long, short = 'n', env = "ENGRAM_NAMESPACE", default_value = engram::DEFAULT_NAMESPACE, global = true)]
    pub namespace: String,

    /// The agent the call is for.
    #[arg(long = "agent", env = "ENGRAM_AGENT", global = true)]
    pub agent_id: Option<String>,

    /// The user the call is for.
    #[arg(long = "user", env = "ENGRAM_USER", global = true)]
    pub user_id: Option<String>,

    /// The project (sees its WORKSPACE memories).
    #[arg(long = "project", env = "ENGRAM_PROJECT", global = true)]
    pub project_id: Option<String>,

    /// The session (sees its CONVERSATION memories).
    #[arg(long = "session", env = "ENGRAM_SESSION", global = true)]
    pub session_id: Option<String>,
}

impl ScopeArgs {
    pub fn to_proto(&self) -> proto::Scope {
        proto::Scope {
            namespace: self.namespace.clone(),
            agent_id: self.agent_id.clone().unwrap_or_default(),
            user_id: self.user_id.clone().unwrap_or_default(),
            project_id: self.project_id.clone().unwrap_or_default(),
            session_id: self.session_id.clone().unwrap_or_default(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Remember what is worth it in a transcript: the policy service decides
    /// whether, as what and how important, and stores it.
    Remember(RememberArgs),
    /// Ask the policy service whether a transcript is worth remembering,
    /// without storing anything.
    Classify(ClassifyArgs),
    /// Store a memory exactly as given (no classification).
    Create(CreateArgs),
    /// Search memories by relevance, recency and importance.
    Search(SearchArgs),
    /// Print a context block for an agent's prompt.
    Context(ContextArgs),
    /// Show one memory.
    Get(MemoryIdArgs),
    /// List memories, newest first.
    List(ListArgs),
    /// List the entities (people, organizations, projects, services,
    /// tools, places) the scope's memories name, by name.
    Entities(EntitiesArgs),
    /// Show one entity, by id or any of its names: its names, what is
    /// known of it, and the memories that say so.
    Entity(EntityArgs),
    /// Delete one memory.
    Delete(DeleteArgs),
    /// Follow the changes to the memories the scope sees as they are
    /// committed: one JSON object a line per event (created, merged,
    /// updated, deleted, expired), each with the cursor that resumes after
    /// it. Runs until interrupted (or --limit); rides out server restarts.
    Watch(WatchArgs),
    /// Record an episode of work: start it, add steps, complete it.
    #[command(subcommand)]
    Episode(EpisodeCommand),
    /// Report how a task went, so heuristics and anti-patterns are learned.
    Outcome(OutcomeArgs),
    /// What the namespace has learned: episodes, rules, mistakes, memories, outcomes.
    Stats,
    /// Serve the Model Context Protocol on standard input and output, for
    /// agents whose framework speaks MCP: tools remember, search_memories,
    /// build_context, create_memory, record_outcome, start_episode,
    /// append_steps, complete_episode, list_entities and get_entity, each a
    /// call of the gRPC API made
    /// in the scope of the flags above (the model cannot change it). The
    /// server is reached at the first call. Configure it in the client as
    /// the command `engram` with the arguments `mcp --namespace NAME ...`.
    Mcp(McpArgs),
}

#[derive(Debug, Args)]
pub struct RememberArgs {
    /// The transcript, or - to read it from standard input.
    pub text: String,
    /// The task the transcript belongs to.
    #[arg(long)]
    pub task_id: Option<String>,
    /// Who decides: the rules classifier, the server's LLM, or auto (the LLM when configured).
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub mode: Mode,
    /// A tag for the stored memory (repeatable).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Makes a retry safe: the same id returns the first answer and stores nothing twice.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// The transcript, or - to read it from standard input.
    pub text: String,
    /// The task the transcript belongs to.
    #[arg(long)]
    pub task_id: Option<String>,
    /// Who decides: the rules classifier, the server's LLM, or auto (the LLM when configured).
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub mode: Mode,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The memory's content, or - to read it from standard input.
    pub text: String,
    /// What kind of memory it is.
    #[arg(long = "type", value_enum)]
    pub memory_type: MemoryType,
    /// Who sees it (default: the narrowest level the scope allows).
    #[arg(long, value_enum)]
    pub level: Option<Level>,
    /// How important it is, 0 to 1 (default 0.5).
    #[arg(long)]
    pub importance: Option<f64>,
    /// A short summary.
    #[arg(long)]
    pub summary: Option<String>,
    /// A tag (repeatable).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// When the remembered thing happened, in RFC 3339 (e.g.
    /// 2024-05-08T13:56:00Z); default: now. Search recency is measured from it.
    #[arg(long, value_parser = parse_time)]
    pub occurred_at: Option<SystemTime>,
    /// Makes a retry safe: the same id returns the first result and stores nothing twice.
    #[arg(long)]
    pub request_id: Option<String>,
    /// What it does to older memories of the same owner it contradicts:
    /// invalidate them (they stay readable, no longer true), link them to it
    /// as conflicting (both stay true) or leave them (off). Default: the
    /// server's choice.
    #[arg(long, value_enum)]
    pub contradictions: Option<Contradictions>,
}

/// What a create does to what it contradicts.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Contradictions {
    /// The older memories are no longer true.
    Invalidate,
    /// Both stay true, linked as conflicting.
    Link,
    /// Nothing is looked for.
    Off,
}

impl From<Contradictions> for proto::ContradictionPolicy {
    fn from(policy: Contradictions) -> Self {
        match policy {
            Contradictions::Invalidate => proto::ContradictionPolicy::Invalidate,
            Contradictions::Link => proto::ContradictionPolicy::Link,
            Contradictions::Off => proto::ContradictionPolicy::Off,
        }
    }
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for.
    pub query: String,
    /// At most this many hits, 1 to 100.
    #[arg(long, default_value_t = 10)]
    pub limit: i32,
    /// Only memories of this type (repeatable).
    #[arg(long = "type", value_enum)]
    pub types: Vec<MemoryType>,
    /// Only memories with this tag (repeatable; all must match).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// What was true at this time (RFC 3339, e.g. 2024-05-08T13:56:00Z), as
    /// known now; default: what is true now.
    #[arg(long, value_parser = parse_time)]
    pub valid_at: Option<SystemTime>,
    /// Only memories naming this entity, by id or any of its names
    /// (repeatable; all must match).
    #[arg(long = "entity")]
    pub entities: Vec<String>,
}

#[derive(Debug, Args)]
pub struct EntitiesArgs {
    /// Only entities of this type (repeatable).
    #[arg(long = "type", value_enum)]
    pub types: Vec<EntityType>,
    /// Only entities whose name starts with this, without case.
    #[arg(long)]
    pub prefix: Option<String>,
    /// At most this many entities, 1 to 1000.
    #[arg(long, default_value_t = 50)]
    pub page_size: i32,
    /// Continue a listing from the token the previous page printed.
    #[arg(long)]
    pub page_token: Option<String>,
}

#[derive(Debug, Args)]
pub struct EntityArgs {
    /// The entity's id, or any of its names (without case).
    pub name: String,
    /// What was true at this time (RFC 3339, e.g. 2024-05-08T13:56:00Z), as
    /// known now; default: what is true now.
    #[arg(long, value_parser = parse_time)]
    pub valid_at: Option<SystemTime>,
    /// At most this many memories, 1 to 100.
    #[arg(long, default_value_t = 20)]
    pub limit: i32,
}

/// The kinds of entity.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EntityType {
    /// A person, or a person's handle.
    Person,
    /// A company, vendor, team, school.
    Organization,
    /// A project or repository.
    Project,
    /// A service, host or system someone runs.
    Service,
    /// A tool, language, framework, database or app.
    Tool,
    /// A city, country, neighbourhood or cloud region.
    Place,
    /// Anything else named: channels, code identifiers, products.
    Other,
}

impl From<EntityType> for proto::EntityType {
    fn from(entity_type: EntityType) -> Self {
        match entity_type {
            EntityType::Person => proto::EntityType::Person,
            EntityType::Organization => proto::EntityType::Organization,
            EntityType::Project => proto::EntityType::Project,
            EntityType::Service => proto::EntityType::Service,
            EntityType::Tool => proto::EntityType::Tool,
            EntityType::Place => proto::EntityType::Place,
            EntityType::Other => proto::EntityType::Other,
        }
    }
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// What the agent is about to do; selects the relevant memories.
    #[arg(long, short = 'q')]
    pub query: Option<String>,
    /// The task, for its rules, mistakes and recent episodes.
    #[arg(long)]
    pub task_id: Option<String>,
    /// The task type, for its heuristics and anti-patterns.
    #[arg(long)]
    pub task_type: Option<String>,
    /// The most tokens the block may take, 16 to 32768.
    #[arg(long, default_value_t = 512)]
    pub budget: i32,
    /// What was true at this time (RFC 3339, e.g. 2024-05-08T13:56:00Z), as
    /// known now; default: what is true now.
    #[arg(long, value_parser = parse_time)]
    pub valid_at: Option<SystemTime>,
}

#[derive(Debug, Args)]
pub struct MemoryIdArgs {
    /// The memory's id.
    pub id: String,
}

#[derive(Debug, Args)]
pub struct EpisodeIdArgs {
    /// The episode's id (as `episode start` printed it).
    pub id: String,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only memories of this type (repeatable).
    #[arg(long = "type", value_enum)]
    pub types: Vec<MemoryType>,
    /// Only memories with this tag (repeatable; all must match).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// At most this many memories, 1 to 1000.
    #[arg(long, default_value_t = 50)]
    pub page_size: i32,
    /// Continue a listing from the token the previous page printed.
    #[arg(long)]
    pub page_token: Option<String>,
    /// What was true at this time (RFC 3339, e.g. 2024-05-08T13:56:00Z), as
    /// known now; default: what is true now.
    #[arg(long, value_parser = parse_time)]
    pub valid_at: Option<SystemTime>,
    /// Only memories naming this entity, by id or any of its names
    /// (repeatable; all must match).
    #[arg(long = "entity")]
    pub entities: Vec<String>,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Only memories of this type (repeatable).
    #[arg(long = "type", value_enum)]
    pub types: Vec<MemoryType>,
    /// Only memories at this level (repeatable).
    #[arg(long = "level", value_enum)]
    pub levels: Vec<Level>,
    /// Only memories with this tag (repeatable; all must match).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Start after this cursor (an event's "cursor", or what --print-cursor
    /// printed), reporting every change since, instead of from now.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Stop after this many events.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Print the cursor of this moment and exit: a later `watch --cursor`
    /// reports every change committed after it.
    #[arg(long, conflicts_with = "limit")]
    pub print_cursor: bool,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The memory's id.
    pub id: String,
    /// Delete only if the memory still has this etag.
    #[arg(long)]
    pub etag: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum EpisodeCommand {
    /// Start an episode of work on a task; prints its id.
    Start(StartArgs),
    /// Add one step to a running episode.
    Step(StepArgs),
    /// Complete an episode with its score; prints what was learned.
    Complete(CompleteArgs),
    /// Show one episode with its steps.
    Get(EpisodeIdArgs),
}

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The task (episodes of the same task share rules and mistakes).
    pub task_id: String,
    /// What this run is meant to do (default: the task id).
    #[arg(long)]
    pub description: Option<String>,
    /// The kind of task, e.g. deployment.
    #[arg(long)]
    pub task_type: Option<String>,
    /// Makes a retry safe: the same id returns the same episode.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct StepArgs {
    /// The episode's id.
    pub episode_id: String,
    /// The tool the step used.
    #[arg(long)]
    pub tool: String,
    /// What the step did.
    #[arg(long)]
    pub action: String,
    /// The tool's parameters.
    #[arg(long)]
    pub parameters: Option<String>,
    /// What the tool returned, or - to read it from standard input.
    #[arg(long)]
    pub output: Option<String>,
    /// The step failed.
    #[arg(long)]
    pub failed: bool,
    /// How long the step took, in milliseconds.
    #[arg(long)]
    pub latency_ms: Option<i64>,
    /// The step's number (default: the one after the episode's last).
    #[arg(long)]
    pub number: Option<i32>,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The episode's id.
    pub episode_id: String,
    /// How well it went, 0 to 1.
    #[arg(long)]
    pub score: f64,
    #[command(flatten)]
    pub verdict: Verdict,
    /// What happened, in a sentence.
    #[arg(long)]
    pub summary: Option<String>,
    /// A mistake made (repeatable); becomes an AVOID rule when the score is low.
    #[arg(long = "mistake")]
    pub mistakes: Vec<String>,
    /// Something that worked (repeatable); becomes a WORKS rule when the score is high.
    #[arg(long = "worked")]
    pub worked: Vec<String>,
}

#[derive(Debug, Args)]
pub struct OutcomeArgs {
    /// The task, in words (its type is inferred from them unless --task-type is given).
    pub task: String,
    #[command(flatten)]
    pub verdict: Verdict,
    /// The kind of task, e.g. testing.
    #[arg(long)]
    pub task_type: Option<String>,
    /// How the agent went about it (outcomes with similar strategies are grouped).
    #[arg(long)]
    pub strategy: String,
    /// What went wrong.
    #[arg(long)]
    pub error: Option<String>,
    /// What the user or a reviewer said.
    #[arg(long)]
    pub feedback: Option<String>,
    /// How long it took, e.g. 90s.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Makes a retry safe: the same id records nothing twice.
    #[arg(long)]
    pub request_id: Option<String>,
}

/// Success or failure, said explicitly.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct Verdict {
    /// It worked.
    #[arg(long)]
    pub success: bool,
    /// It did not.
    #[arg(long)]
    pub failure: bool,
}

impl Verdict {
    pub fn success(&self) -> bool {
        self.success && !self.failure
    }
}

/// Who decides what is worth remembering.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Mode {
    /// The server's LLM when it has one, else the rules.
    Auto,
    /// The deterministic rules classifier.
    Rules,
    /// The server's LLM (an error if it has none).
    Llm,
}

impl From<Mode> for proto::ClassifyMode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Auto => proto::ClassifyMode::Auto,
            Mode::Rules => proto::ClassifyMode::Rules,
            Mode::Llm => proto::ClassifyMode::Llm,
        }
    }
}

/// The kinds of memory.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MemoryType {
    /// Something true about the world or the project.
    Fact,
    /// How someone likes things done.
    Preference,
    /// Something learned from what went right or wrong.
    Lesson,
    /// A choice that was made, and why.
    Decision,
    /// Something that happened.
    Event,
    /// Anything else worth keeping.
    Note,
}

impl From<MemoryType> for proto::MemoryType {
    fn from(memory_type: MemoryType) -> Self {
        match memory_type {
            MemoryType::Fact => proto::MemoryType::Fact,
            MemoryType::Preference => proto::MemoryType::Preference,
            MemoryType::Lesson => proto::MemoryType::Lesson,
            MemoryType::Decision => proto::MemoryType::Decision,
            MemoryType::Event => proto::MemoryType::Event,
            MemoryType::Note => proto::MemoryType::Note,
        }
    }
}

/// Who sees a memory.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Level {
    /// The whole namespace.
    Global,
    /// One project (--project).
    Workspace,
    /// One session (--session).
    Conversation,
}

impl From<Level> for proto::MemoryLevel {
    fn from(level: Level) -> Self {
        match level {
            Level::Global => proto::MemoryLevel::Global,
            Level::Workspace => proto::MemoryLevel::Workspace,
            Level::Conversation => proto::MemoryLevel::Conversation,
        }
    }
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The most bytes one tool result may put in the model's context, its
    /// text and structured content together: a larger one loses its last
    /// search hits (then the ends of its longest texts) and says so, e.g.
    /// "64KiB", "1MiB" or a number of bytes.
    #[arg(long, env = "ENGRAM_MCP_MAX_OUTPUT", default_value = "64KiB", value_parser = parse_size)]
    pub max_output: usize,
}

/// `65536`, `64KiB`, `1MiB` (KB and MB are taken as KiB and MiB); at least 1 KiB.
fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: usize = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size like 64KiB, 1MiB or 65536"))?;
    let unit = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "KB" | "K" => 1 << 10,
        "MiB" | "MB" | "M" => 1 << 20,
        other => return Err(format!("unknown unit {other:?}: use B, KiB or MiB")),
    };
    let bytes = number
        .checked_mul(unit)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes < 1 << 10 {
        return Err(format!("{text:?} is below the least, 1KiB"));
    }
    Ok(bytes)
}

/// `500ms`, `30s`, `2m`, `1h`; a bare number is seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 500ms, 30s or 2m"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1_000.0,
        "" | "s" => number,
        "m" => number * 60.0,
        "h" => number * 3_600.0,
        other => return Err(format!("unknown unit {other:?}: use ms, s, m or h")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|error| format!("{text:?}: {error}"))
}

/// An RFC 3339 time, e.g. `2024-05-08T13:56:00Z`.
fn parse_time(text: &str) -> Result<SystemTime, String> {
    let invalid = || format!("{text:?} is not an RFC 3339 time like 2024-05-08T13:56:00Z");
    let timestamp: prost_types::Timestamp = text.trim().parse().map_err(|_| invalid())?;
    SystemTime::try_from(timestamp).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_the_common_units_and_refuse_others() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3_600)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3 days").is_err());
    }

    #[test]
    fn times_are_rfc_3339() {
        assert_eq!(
            parse_time("2024-05-08T13:56:00Z"),
            Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(1_715_176_560))
        );
        assert_eq!(
            parse_time("2024-05-08T15:56:00+02:00"),
            parse_time("2024-05-08T13:56:00Z")
        );
        assert!(parse_time("8 May 2024").is_err());
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory as _;
        Cli::command().debug_assert();
    }
}
