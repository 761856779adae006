//! `engram`: an Engram memory server from the command line.

mod args;
mod mcp;
mod output;

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::process::ExitCode;

use clap::Parser as _;
use std::time::Duration;

use engram_client::{
    BuildContext, Classify, CreateMemory, Engram, Error, ListMemories, RecordOutcome, Remember,
    RetryPolicy, SearchMemories, StartEpisode, WatchMemories, proto,
};
use futures_util::StreamExt as _;

use args::{Cli, Command, EpisodeCommand, WatchArgs};
use output::Output;

/// Exit status when the server answered with an error status (UNAVAILABLE
/// from a busy server included).
const EXIT_SERVER_ERROR: u8 = 1;
/// Exit status for bad usage (clap uses it too).
const EXIT_USAGE: u8 = 2;
/// Exit status when the server could not be reached, or stopped answering
/// (connection refused or broken, or no answer within --timeout).
const EXIT_UNREACHABLE: u8 = 3;

/// Why a command failed, and so which exit status it ends with.
enum Failure {
    Usage(String),
    Engram(Error),
    /// Standard output could not be written (but for a closed pipe).
    Output(std::io::Error),
    /// `engram mcp` could not start or keep talking to its client.
    Mcp(String),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Engram(error)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let out = Output::new(cli.json);
    match run(cli, &out).await {
        Ok(()) => write_stdout(&out.into_text()),
        Err(failure) => {
            let (message, code) = match failure {
                Failure::Usage(message) => (message, EXIT_USAGE),
                Failure::Output(error) => (
                    format!("cannot write the output: {error}"),
                    EXIT_SERVER_ERROR,
                ),
                Failure::Mcp(message) => (message, EXIT_SERVER_ERROR),
                Failure::Engram(error) => {
                    let code = match error {
                        Error::Status(_) => EXIT_SERVER_ERROR,
                        Error::Config(_) => EXIT_USAGE,
                        Error::Connect(_) | Error::Transport(_) => EXIT_UNREACHABLE,
                    };
                    (error.to_string(), code)
                }
            };
            // One line, whatever the server put in its message.
            let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("engram: error: {message}");
            ExitCode::from(code)
        }
    }
}

/// Writes the command's output; a reader that went away early (a closed
/// pipe) is not an error.
fn write_stdout(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("engram: error: cannot write the output: {error}");
            ExitCode::from(EXIT_SERVER_ERROR)
        }
    }
}

async fn run(cli: Cli, out: &Output) -> Result<(), Failure> {
    let mut builder = Engram::builder(cli.server.clone()).timeout(cli.timeout);
    if matches!(cli.command, Command::Watch(_)) {
        builder = builder.retry(WATCH_RETRY);
    }
    if let Some(api_key) = &cli.api_key {
        builder = builder.api_key(api_key.clone());
    }
    let read = |flag: &str, path: &std::path::Path| {
        std::fs::read(path).map_err(|error| {
            Failure::Usage(format!("cannot read {flag} {}: {error}", path.display()))
        })
    };
    if let Some(path) = &cli.tls_ca {
        builder = builder.tls_ca_certificate(read("--tls-ca", path)?);
    }
    if let (Some(cert), Some(key)) = (&cli.tls_cert, &cli.tls_key) {
        builder =
            builder.tls_client_certificate(read("--tls-cert", cert)?, read("--tls-key", key)?);
    }
    let scope = cli.scope.to_proto();
    if let Command::Mcp(args) = &cli.command {
        return mcp::EngramTools::new(builder, &scope, args.max_output)
            .serve_stdio()
            .await
            .map_err(Failure::Mcp);
    }
    let engram = builder.connect().await?;
    match cli.command {
        Command::Remember(args) => {
            let mut request = Remember::new(scope, text_or_stdin(args.text)?)
                .mode(args.mode.into())
                .tags(args.tags);
            if let Some(task_id) = args.task_id {
                request = request.task_id(task_id);
            }
            if let Some(request_id) = args.request_id {
                request = request.request_id(request_id);
            }
            out.remembered(&engram.policy().remember(request).await?);
        }
        Command::Classify(args) => {
            let mut request =
                Classify::new(scope, text_or_stdin(args.text)?).mode(args.mode.into());
            if let Some(task_id) = args.task_id {
                request = request.task_id(task_id);
            }
            out.classified(&engram.policy().classify(request).await?);
        }
        Command::Create(args) => {
            let mut request =
                CreateMemory::new(scope, args.memory_type.into(), text_or_stdin(args.text)?)
                    .tags(args.tags);
            if let Some(level) = args.level {
                request = request.level(level.into());
            }
            if let Some(importance) = args.importance {
                request = request.importance(importance);
            }
            if let Some(summary) = args.summary {
                request = request.summary(summary);
            }
            if let Some(occurred_at) = args.occurred_at {
                request = request.occurred_at(occurred_at);
            }
            if let Some(request_id) = args.request_id {
                request = request.request_id(request_id);
            }
            if let Some(policy) = args.contradictions {
                request = request.contradictions(policy.into());
            }
            out.created(&engram.memory().create_memory(request).await?);
        }
        Command::Search(args) => {
            let mut request = SearchMemories::new(scope, args.query)
                .limit(args.limit)
                .memory_types(args.types.into_iter().map(Into::into))
                .tags(args.tags)
                .entities(args.entities);
            if let Some(valid_at) = args.valid_at {
                request = request.valid_at(valid_at);
            }
            out.hits(&engram.memory().search_memories(request).await?);
        }
        Command::Context(args) => {
            let mut request = BuildContext::new(scope).token_budget(args.budget);
            if let Some(query) = args.query {
                request = request.query(query);
            }
            if let Some(task_id) = args.task_id {
                request = request.task_id(task_id);
            }
            if let Some(task_type) = args.task_type {
                request = request.task_type(task_type);
            }
            if let Some(valid_at) = args.valid_at {
                request = request.valid_at(valid_at);
            }
            out.context(&engram.memory().build_context(request).await?);
        }
        Command::Get(args) => {
            let request = proto::GetMemoryRequest {
                scope: Some(scope),
                id: args.id,
            };
            out.memory(&engram.memory().get_memory(request).await?);
        }
        Command::List(args) => {
            let mut request = ListMemories::new(scope)
                .memory_types(args.types.into_iter().map(Into::into))
                .tags(args.tags)
                .entities(args.entities)
                .page_size(args.page_size);
            if let Some(page_token) = args.page_token {
                request = request.page_token(page_token);
            }
            if let Some(valid_at) = args.valid_at {
                request = request.valid_at(valid_at);
            }
            out.memories(&engram.memory().list_memories(request).await?);
        }
        Command::Entities(args) => {
            let request = proto::ListEntitiesRequest {
                scope: Some(scope),
                entity_types: args
                    .types
                    .into_iter()
                    .map(|t| proto::EntityType::from(t).into())
                    .collect(),
                name_prefix: args.prefix.unwrap_or_default(),
                page_size: args.page_size,
                page_token: args.page_token.unwrap_or_default(),
            };
            out.entities(&engram.memory().list_entities(request).await?);
        }
        Command::Entity(args) => {
            let request = proto::GetEntityRequest {
                scope: Some(scope),
                entity: args.name,
                valid_at: args.valid_at.map(Into::into),
                memory_limit: args.limit,
            };
            out.entity(&engram.memory().get_entity(request).await?);
        }
        Command::Watch(args) => watch(&engram, scope, args).await?,
        Command::Delete(args) => {
            let request = proto::DeleteMemoryRequest {
                scope: Some(scope),
                id: args.id.clone(),
                etag: args.etag.unwrap_or_default(),
            };
            let response = engram.memory().delete_memory(request).await?;
            out.deleted(&args.id, &response);
        }
        Command::Episode(EpisodeCommand::Start(args)) => {
            let mut request = StartEpisode::new(scope, args.task_id);
            if let Some(description) = args.description {
                request = request.description(description);
            }
            if let Some(task_type) = args.task_type {
                request = request.task_type(task_type);
            }
            if let Some(request_id) = args.request_id {
                request = request.request_id(request_id);
            }
            out.episode_started(&engram.memory().start_episode(request).await?);
        }
        Command::Episode(EpisodeCommand::Step(args)) => {
            let step_number = match args.number {
                Some(number) => number,
                None => {
                    // The step after the last stored one; no steps needed.
                    let request = proto::GetEpisodeRequest {
                        scope: Some(scope.clone()),
                        id: args.episode_id.clone(),
                        step_page_size: 1,
                        step_page_token: String::new(),
                    };
                    engram.memory().get_episode(request).await?.last_step_number + 1
                }
            };
            let output = match args.output {
                Some(output) => text_or_stdin(output)?,
                None => String::new(),
            };
            let result = if args.failed {
                proto::StepResult::Error
            } else {
                proto::StepResult::Ok
            };
            let request = proto::AppendStepsRequest {
                scope: Some(scope),
                episode_id: args.episode_id,
                steps: vec![proto::Step {
                    step_number,
                    tool: args.tool,
                    action: args.action,
                    parameters: args.parameters.unwrap_or_default(),
                    result: result.into(),
                    output,
                    latency_ms: args.latency_ms.unwrap_or_default(),
                    time: None,
                }],
            };
            let response = engram.memory().append_steps(request).await?;
            out.step_appended(step_number, &response);
        }
        Command::Episode(EpisodeCommand::Complete(args)) => {
            let request = proto::CompleteEpisodeRequest {
                scope: Some(scope),
                episode_id: args.episode_id,
                outcome: Some(proto::EpisodeOutcome {
                    score: args.score,
                    success: args.verdict.success(),
                    summary: args.summary.unwrap_or_default(),
                    mistakes: args.mistakes,
                    successes: args.worked,
                    mistake_cards: Vec::new(),
                }),
            };
            out.completed(&engram.memory().complete_episode(request).await?);
        }
        Command::Episode(EpisodeCommand::Get(args)) => {
            // Every page of steps, shown as one episode.
            let request = proto::GetEpisodeRequest {
                scope: Some(scope),
                id: args.id,
                ..Default::default()
            };
            let episode = engram.memory().get_episode_with_all_steps(request).await?;
            out.episode(&episode);
        }
        Command::Outcome(args) => {
            let mut request = if args.verdict.success() {
                RecordOutcome::success(scope, args.task, args.strategy)
            } else {
                RecordOutcome::failure(scope, args.task, args.strategy)
            };
            if let Some(task_type) = args.task_type {
                request = request.task_type(task_type);
            }
            if let Some(error) = args.error {
                request = request.error(error);
            }
            if let Some(feedback) = args.feedback {
                request = request.feedback(feedback);
            }
            if let Some(duration) = args.duration {
                request = request.duration(duration);
            }
            if let Some(request_id) = args.request_id {
                request = request.request_id(request_id);
            }
            out.outcome(&engram.learning().record_outcome(request).await?);
        }
        Command::Mcp(_) => unreachable!("served above, without connecting first"),
        Command::Stats => {
            let request = proto::GetStatsRequest { scope: Some(scope) };
            out.stats(&engram.learning().get_stats(request).await?);
        }
    }
    Ok(())
}

/// How `engram watch` resumes: for as long as it runs (a follower, like
/// `tail -F`, outlives a server restart), waiting at most 5 s between tries.
const WATCH_RETRY: RetryPolicy = RetryPolicy {
    max_attempts: u32::MAX,
    initial_backoff: Duration::from_millis(100),
    max_backoff: Duration::from_secs(5),
    multiplier: 2.0,
};

/// `engram watch`: prints each event on its own line as it comes (not at
/// the end, as the other commands do), until `--limit` events or a reader
/// that went away.
async fn watch(engram: &Engram, scope: proto::Scope, args: WatchArgs) -> Result<(), Failure> {
    let mut request = WatchMemories::new(scope)
        .memory_types(args.types.into_iter().map(Into::into))
        .levels(args.levels.into_iter().map(Into::into))
        .tags(args.tags);
    if let Some(cursor) = args.cursor {
        request = request.cursor(cursor);
    }
    let mut watch = engram.memory().watch_memories(request).await?;
    let mut stdout = std::io::stdout().lock();
    if args.print_cursor {
        return writeln!(stdout, "{}", watch.cursor()).map_err(Failure::Output);
    }
    let mut printed = 0;
    while args.limit.is_none_or(|limit| printed < limit) {
        let Some(event) = watch.next().await else {
            break;
        };
        let line = output::event_line(&event?);
        match writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
            Ok(()) => printed += 1,
            // A reader that went away (`engram watch | head -3`) ends it.
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => break,
            Err(error) => return Err(Failure::Output(error)),
        }
    }
    Ok(())
}

/// `text`, or all of standard input when `text` is `-`.
fn text_or_stdin(text: String) -> Result<String, Failure> {
    if text != "-" {
        return Ok(text);
    }
    let mut stdin = std::io::stdin().lock();
    if stdin.is_terminal() {
        eprintln!("engram: reading standard input; end it with Ctrl-D");
    }
    let mut input = String::new();
    stdin
        .read_to_string(&mut input)
        .map_err(|error| Failure::Usage(format!("cannot read standard input: {error}")))?;
    let input = input.trim_end_matches(['\n', '\r']);
    if input.trim().is_empty() {
        return Err(Failure::Usage("standard input was empty".into()));
    }
    Ok(input.to_owned())
}
