//! The memory service: memories, search, context and episodes.

use futures_core::Stream;

use crate::connection::{Connection, unary_rpcs};
use crate::watch::MemoryWatch;
use crate::{Error, MAX_RESPONSE_BYTES, proto};

type Generated = proto::memory_service_client::MemoryServiceClient<tonic::transport::Channel>;

/// The memory service (`engram.v1.MemoryService`): store, find, update and
/// forget memories, build context blocks, and record episodes of work. Get
/// one with [`Engram::memory`](crate::Engram::memory); it shares the
/// connection and is cheap to clone.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), engram_client::Error> {
/// use engram_client::{CreateMemory, Engram, SearchMemories, proto::{MemoryType, Scope}};
///
/// let engram = Engram::from_env().await?;
/// let memory = engram.memory();
/// let scope = Scope::new("docs-memory").with_user("alice");
/// memory
///     .create_memory(CreateMemory::new(scope.clone(), MemoryType::Preference, "Alice likes dark mode"))
///     .await?;
/// let hits = memory.search_memories(SearchMemories::new(scope, "dark mode")).await?.hits;
/// assert_eq!(hits[0].memory.as_ref().unwrap().content, "Alice likes dark mode");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct MemoryClient {
    connection: Connection,
    client: Generated,
}

impl MemoryClient {
    pub(crate) fn new(connection: Connection) -> MemoryClient {
        let client = Generated::new(connection.channel.clone())
            .max_decoding_message_size(MAX_RESPONSE_BYTES);
        MemoryClient { connection, client }
    }

    unary_rpcs! {
        /// Stores one memory, or reinforces the identical one already stored
        /// (`result` is then MERGED). Retried after UNAVAILABLE only when the
        /// request carries a `request_id`.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, proto::{MemoryType, Scope, WriteResult}};
        ///
        /// let lesson = CreateMemory::new(
        ///     Scope::new("docs-create").with_project("shop"),
        ///     MemoryType::Lesson,
        ///     "Run the orders migration before deploying checkout",
        /// )
        /// .importance(0.8)
        /// .tags(["deploy"])
        /// .request_id("deploy-lesson-1");
        /// let created = engram.memory().create_memory(lesson.clone()).await?;
        /// assert_eq!(created.result(), WriteResult::Created);
        /// // A retry with the same request id returns the first answer.
        /// let retried = engram.memory().create_memory(lesson).await?;
        /// assert_eq!(retried.memory.unwrap().id, created.memory.unwrap().id);
        /// # Ok(())
        /// # }
        /// ```
        create_memory(CreateMemoryRequest) -> CreateMemoryResponse, with_request_id;

        /// Stores up to 1,000 memories in one transaction: all of them or,
        /// on any invalid one, none.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{BatchCreateMemoriesRequest, MemoryInput, MemoryType, Scope};
        ///
        /// let fact = |content: &str| MemoryInput {
        ///     memory_type: MemoryType::Fact.into(),
        ///     content: content.into(),
        ///     ..Default::default()
        /// };
        /// let batch = engram
        ///     .memory()
        ///     .batch_create_memories(BatchCreateMemoriesRequest {
        ///         scope: Some(Scope::new("docs-batch")),
        ///         memories: vec![fact("The API is served on port 8080"), fact("Staging runs on Fridays")],
        ///         ..Default::default()
        ///     })
        ///     .await?;
        /// assert_eq!(batch.results.len(), 2);
        /// # Ok(())
        /// # }
        /// ```
        batch_create_memories(BatchCreateMemoriesRequest) -> BatchCreateMemoriesResponse, with_request_id;

        /// Reads one memory visible from the scope (NOT_FOUND otherwise).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, proto::{GetMemoryRequest, MemoryType, Scope}};
        ///
        /// let scope = Scope::new("docs-get");
        /// let created = engram
        ///     .memory()
        ///     .create_memory(CreateMemory::new(scope.clone(), MemoryType::Fact, "The sky is blue"))
        ///     .await?
        ///     .memory
        ///     .unwrap();
        /// let memory = engram
        ///     .memory()
        ///     .get_memory(GetMemoryRequest { scope: Some(scope), id: created.id.clone() })
        ///     .await?;
        /// assert_eq!(memory.content, "The sky is blue");
        /// # Ok(())
        /// # }
        /// ```
        get_memory(GetMemoryRequest) -> Memory, safe;

        /// Why the server holds a memory visible from the scope: its
        /// provenance, the episode it came from, its history, what replaced
        /// it — and the same in sentences (NOT_FOUND when not visible).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, proto::{ExplainMemoryRequest, MemoryType, Scope, WriteMethod}};
        ///
        /// let scope = Scope::new("docs-explain").with_agent("planner");
        /// let created = engram
        ///     .memory()
        ///     .create_memory(CreateMemory::new(scope.clone(), MemoryType::Fact, "The sky is blue"))
        ///     .await?
        ///     .memory
        ///     .unwrap();
        /// let explained = engram
        ///     .memory()
        ///     .explain_memory(ExplainMemoryRequest { scope: Some(scope), id: created.id })
        ///     .await?;
        /// let provenance = explained.memory.unwrap().provenance.unwrap();
        /// assert_eq!(provenance.method(), WriteMethod::CreateMemory);
        /// assert_eq!(provenance.agent_id, "planner");
        /// assert!(explained.explanation[0].starts_with("Written with CreateMemory"));
        /// # Ok(())
        /// # }
        /// ```
        explain_memory(ExplainMemoryRequest) -> ExplainMemoryResponse, safe;

        /// Changes the fields named in `update_mask`; with an `etag`, only if
        /// the memory has not changed since it was read (ABORTED otherwise).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::CreateMemory;
        /// use engram_client::proto::{MemoryInput, MemoryType, Scope, UpdateMemoryRequest};
        ///
        /// let scope = Scope::new("docs-update");
        /// let memory = engram
        ///     .memory()
        ///     .create_memory(CreateMemory::new(scope.clone(), MemoryType::Note, "Draft"))
        ///     .await?
        ///     .memory
        ///     .unwrap();
        /// let updated = engram
        ///     .memory()
        ///     .update_memory(UpdateMemoryRequest {
        ///         scope: Some(scope),
        ///         id: memory.id,
        ///         memory: Some(MemoryInput { importance: Some(0.9), ..Default::default() }),
        ///         update_mask: Some(prost_types::FieldMask { paths: vec!["importance".into()] }),
        ///         etag: memory.etag,
        ///     })
        ///     .await?;
        /// assert_eq!(updated.importance, 0.9);
        /// # Ok(())
        /// # }
        /// ```
        update_memory(UpdateMemoryRequest) -> Memory, never;

        /// Deletes one memory (NOT_FOUND if it is not there; ABORTED on a
        /// stale `etag`).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{Code, CreateMemory};
        /// use engram_client::proto::{DeleteMemoryRequest, GetMemoryRequest, MemoryType, Scope};
        ///
        /// let scope = Scope::new("docs-delete");
        /// let id = engram
        ///     .memory()
        ///     .create_memory(CreateMemory::new(scope.clone(), MemoryType::Event, "Deployed v1"))
        ///     .await?
        ///     .memory
        ///     .unwrap()
        ///     .id;
        /// let target = DeleteMemoryRequest { scope: Some(scope.clone()), id: id.clone(), etag: String::new() };
        /// engram.memory().delete_memory(target).await?;
        /// let gone = engram.memory().get_memory(GetMemoryRequest { scope: Some(scope), id }).await;
        /// assert_eq!(gone.unwrap_err().code(), Code::NotFound);
        /// # Ok(())
        /// # }
        /// ```
        delete_memory(DeleteMemoryRequest) -> DeleteMemoryResponse, never;

        /// Lists the memories visible from the scope, filtered and ordered,
        /// one page at a time.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, ListMemories, proto::{MemoryType, Scope}};
        ///
        /// let scope = Scope::new("docs-list");
        /// for n in 1..=3 {
        ///     let note = CreateMemory::new(scope.clone(), MemoryType::Note, format!("Note {n}"));
        ///     engram.memory().create_memory(note).await?;
        /// }
        /// let page = engram.memory().list_memories(ListMemories::new(scope.clone()).page_size(2)).await?;
        /// assert_eq!(page.memories.len(), 2);
        /// let rest = ListMemories::new(scope).page_size(2).page_token(page.next_page_token);
        /// assert_eq!(engram.memory().list_memories(rest).await?.memories.len(), 1);
        /// # Ok(())
        /// # }
        /// ```
        list_memories(ListMemoriesRequest) -> ListMemoriesResponse, safe;

        /// Lists the history of one memory, oldest first: who created,
        /// merged, updated, deleted it and when, and the fields each change
        /// set — also once it is deleted.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::CreateMemory;
        /// use engram_client::proto::{ListMemoryRevisionsRequest, MemoryType, RevisionAction, Scope};
        ///
        /// let scope = Scope::new("docs-revisions");
        /// let fact = CreateMemory::new(scope.clone(), MemoryType::Fact, "The API is versioned by date");
        /// let id = engram.memory().create_memory(fact.clone()).await?.memory.unwrap().id;
        /// engram.memory().create_memory(fact).await?; // merged into the first
        /// let request = ListMemoryRevisionsRequest { scope: Some(scope), id, ..Default::default() };
        /// let history = engram.memory().list_memory_revisions(request).await?.revisions;
        /// let actions: Vec<_> = history.iter().map(|r| r.action()).collect();
        /// assert_eq!(actions, [RevisionAction::Created, RevisionAction::Merged]);
        /// assert!(history[1].changed_fields.contains(&"seen_count".to_owned()));
        /// # Ok(())
        /// # }
        /// ```
        list_memory_revisions(ListMemoryRevisionsRequest) -> ListMemoryRevisionsResponse, safe;

        /// Full-text search ranked by relevance, recency and importance; each
        /// hit carries its component scores.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, SearchMemories, proto::{MemoryType, Scope}};
        ///
        /// let scope = Scope::new("docs-search");
        /// let lesson = "Checkout deploys failed because the orders migration locked the table";
        /// engram.memory().create_memory(CreateMemory::new(scope.clone(), MemoryType::Lesson, lesson)).await?;
        /// let hits = engram
        ///     .memory()
        ///     .search_memories(SearchMemories::new(scope, "why did the deploy fail?").limit(5))
        ///     .await?
        ///     .hits;
        /// assert_eq!(hits[0].memory.as_ref().unwrap().content, lesson);
        /// assert!(hits[0].score > 0.0);
        /// # Ok(())
        /// # }
        /// ```
        search_memories(SearchMemoriesRequest) -> SearchMemoriesResponse, safe;

        /// A context block for an agent's prompt — rules, mistakes, advice,
        /// relevant memories, preferences, recent episodes — within a token
        /// budget.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{BuildContext, CreateMemory, proto::{MemoryType, Scope}};
        ///
        /// let scope = Scope::new("docs-context").with_user("alice");
        /// let preference = "Alice prefers concise answers with code first";
        /// engram.memory().create_memory(CreateMemory::new(scope.clone(), MemoryType::Preference, preference)).await?;
        /// let context = engram
        ///     .memory()
        ///     .build_context(BuildContext::new(scope).query("how should I answer?").token_budget(200))
        ///     .await?;
        /// assert!(context.text.contains(preference));
        /// assert!(context.token_estimate <= 200);
        /// # Ok(())
        /// # }
        /// ```
        build_context(BuildContextRequest) -> BuildContextResponse, safe;

        /// Starts recording an episode of work on a task. Retried after
        /// UNAVAILABLE only when the request carries a `request_id`.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{StartEpisode, proto::{EpisodeStatus, Scope}};
        ///
        /// let episode = engram
        ///     .memory()
        ///     .start_episode(StartEpisode::new(Scope::new("docs-start"), "deploy-checkout").description("Deploy v2"))
        ///     .await?;
        /// assert_eq!(episode.status(), EpisodeStatus::Running);
        /// # Ok(())
        /// # }
        /// ```
        start_episode(StartEpisodeRequest) -> Episode, with_request_id;

        /// Appends steps to a running episode, all of them or none.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{StartEpisode, proto::{AppendStepsRequest, Scope, Step, StepResult}};
        ///
        /// let scope = Scope::new("docs-append");
        /// let episode = engram.memory().start_episode(StartEpisode::new(scope.clone(), "build")).await?;
        /// let step = |n, tool: &str, action: &str| Step {
        ///     step_number: n,
        ///     tool: tool.into(),
        ///     action: action.into(),
        ///     result: StepResult::Ok.into(),
        ///     ..Default::default()
        /// };
        /// let appended = engram
        ///     .memory()
        ///     .append_steps(AppendStepsRequest {
        ///         scope: Some(scope),
        ///         episode_id: episode.id,
        ///         steps: vec![step(1, "cargo", "build"), step(2, "cargo", "test")],
        ///     })
        ///     .await?;
        /// assert_eq!(appended.step_count, 2);
        /// # Ok(())
        /// # }
        /// ```
        append_steps(AppendStepsRequest) -> AppendStepsResponse, never;

        /// Completes an episode with its outcome and learns from it in the
        /// same transaction (task rules, mistake cards, consolidation).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::StartEpisode;
        /// use engram_client::proto::{CompleteEpisodeRequest, EpisodeOutcome, EpisodeStatus, Scope};
        ///
        /// let scope = Scope::new("docs-complete");
        /// let episode = engram.memory().start_episode(StartEpisode::new(scope.clone(), "release")).await?;
        /// let completed = engram
        ///     .memory()
        ///     .complete_episode(CompleteEpisodeRequest {
        ///         scope: Some(scope),
        ///         episode_id: episode.id,
        ///         outcome: Some(EpisodeOutcome {
        ///             score: 0.9,
        ///             success: true,
        ///             successes: vec!["Tagged the release before building".into()],
        ///             ..Default::default()
        ///         }),
        ///     })
        ///     .await?;
        /// assert_eq!(completed.episode.unwrap().status(), EpisodeStatus::Completed);
        /// assert_eq!(completed.learned.unwrap().rules_added.len(), 1);
        /// # Ok(())
        /// # }
        /// ```
        complete_episode(CompleteEpisodeRequest) -> CompleteEpisodeResponse, never;

        /// Reads one episode with one page of its steps (up to
        /// `step_page_size`, and at most 3 MiB; `next_step_page_token` leads
        /// to the rest — or use [`MemoryClient::get_episode_with_all_steps`]).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{StartEpisode, proto::{GetEpisodeRequest, Scope}};
        ///
        /// let scope = Scope::new("docs-get-episode");
        /// let started = engram.memory().start_episode(StartEpisode::new(scope.clone(), "triage")).await?;
        /// let episode = engram
        ///     .memory()
        ///     .get_episode(GetEpisodeRequest { scope: Some(scope), id: started.id.clone(), ..Default::default() })
        ///     .await?;
        /// assert_eq!(episode.task_id, "triage");
        /// # Ok(())
        /// # }
        /// ```
        get_episode(GetEpisodeRequest) -> Episode, safe;

        /// Lists episodes visible from the scope, newest first, one page at a
        /// time.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{StartEpisode, proto::{ListEpisodesRequest, Scope}};
        ///
        /// let scope = Scope::new("docs-list-episodes");
        /// engram.memory().start_episode(StartEpisode::new(scope.clone(), "triage")).await?;
        /// let listed = engram
        ///     .memory()
        ///     .list_episodes(ListEpisodesRequest { scope: Some(scope), ..Default::default() })
        ///     .await?;
        /// assert_eq!(listed.episodes.len(), 1);
        /// # Ok(())
        /// # }
        /// ```
        list_episodes(ListEpisodesRequest) -> ListEpisodesResponse, safe;

        /// Lists the entities (people, organizations, projects, services,
        /// tools, places) the memories visible from the scope name, by name,
        /// one page at a time.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, proto::{EntityType, ListEntitiesRequest, MemoryType, Scope}};
        ///
        /// let scope = Scope::new("docs-list-entities");
        /// let fact = CreateMemory::new(scope.clone(), MemoryType::Fact, "Alice Chen works at Globex");
        /// engram.memory().create_memory(fact).await?;
        /// let people = engram
        ///     .memory()
        ///     .list_entities(ListEntitiesRequest {
        ///         scope: Some(scope),
        ///         entity_types: vec![EntityType::Person.into()],
        ///         ..Default::default()
        ///     })
        ///     .await?;
        /// assert_eq!(people.entities[0].name, "Alice Chen");
        /// # Ok(())
        /// # }
        /// ```
        list_entities(ListEntitiesRequest) -> ListEntitiesResponse, safe;

        /// Reads one entity, by id or any of its names: its names, the
        /// memories that name it and were true at `valid_at` (now when
        /// unset), and the attributes they state.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, proto::{GetEntityRequest, MemoryType, Scope}};
        ///
        /// let scope = Scope::new("docs-get-entity");
        /// for fact in ["Alice Chen works at Acme", "Alice Chen now works at Globex"] {
        ///     engram.memory().create_memory(CreateMemory::new(scope.clone(), MemoryType::Fact, fact)).await?;
        /// }
        /// let alice = engram
        ///     .memory()
        ///     .get_entity(GetEntityRequest { scope: Some(scope), entity: "alice chen".into(), ..Default::default() })
        ///     .await?;
        /// assert_eq!(alice.memories.len(), 1, "the Acme memory is no longer true");
        /// assert_eq!(alice.relations[0].object, "Globex");
        /// # Ok(())
        /// # }
        /// ```
        get_entity(GetEntityRequest) -> GetEntityResponse, safe;

        /// Admin: makes `duplicate` another name of `entity` (each given by
        /// id or any name): its names and mentions move over, and its id is
        /// gone. Never retried: a second merge finds one entity, not two.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{CreateMemory, proto::{MemoryType, MergeEntitiesRequest, Scope}};
        ///
        /// let scope = Scope::new("docs-merge-entities");
        /// for fact in ["Robert Smith owns billing", "Bob Smith prefers Rust"] {
        ///     engram.memory().create_memory(CreateMemory::new(scope.clone(), MemoryType::Fact, fact)).await?;
        /// }
        /// let robert = engram
        ///     .memory()
        ///     .merge_entities(MergeEntitiesRequest {
        ///         scope: Some(scope),
        ///         entity: "Robert Smith".into(),
        ///         duplicate: "Bob Smith".into(),
        ///     })
        ///     .await?
        ///     .entity
        ///     .unwrap();
        /// assert_eq!(robert.aliases, ["Bob Smith"]);
        /// # Ok(())
        /// # }
        /// ```
        merge_entities(MergeEntitiesRequest) -> MergeEntitiesResponse, never;
    }

    /// Reads one episode with all its steps, page after page (each page
    /// within what a client accepts; the steps may add up to more).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// # let engram = engram_client::Engram::from_env().await?;
    /// use engram_client::{StartEpisode, proto::{AppendStepsRequest, GetEpisodeRequest, Scope, Step}};
    ///
    /// let scope = Scope::new("docs-all-steps");
    /// let started = engram.memory().start_episode(StartEpisode::new(scope.clone(), "triage")).await?;
    /// let steps = (1..=5)
    ///     .map(|n| Step { step_number: n, tool: "shell".into(), action: format!("step {n}"), ..Default::default() })
    ///     .collect();
    /// let append = AppendStepsRequest { scope: Some(scope.clone()), episode_id: started.id.clone(), steps };
    /// engram.memory().append_steps(append).await?;
    /// let request = GetEpisodeRequest { scope: Some(scope), id: started.id, step_page_size: 2, ..Default::default() };
    /// let episode = engram.memory().get_episode_with_all_steps(request).await?;
    /// assert_eq!(episode.steps.len(), 5);
    /// assert!(episode.next_step_page_token.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_episode_with_all_steps(
        &self,
        mut request: proto::GetEpisodeRequest,
    ) -> Result<proto::Episode, Error> {
        let mut episode = self.get_episode(request.clone()).await?;
        while !episode.next_step_page_token.is_empty() {
            request.step_page_token = std::mem::take(&mut episode.next_step_page_token);
            let page = self.get_episode(request.clone()).await?;
            episode.steps.extend(page.steps);
            episode.next_step_page_token = page.next_step_page_token;
        }
        Ok(episode)
    }

    /// Watches the changes to the memories visible from the scope — each
    /// create, merge, update, delete and expiry, in commit order — from now
    /// or from a cursor ([`WatchMemories`](crate::WatchMemories)). Returns
    /// once the server has started the watch: every change committed after
    /// that is reported. The [`MemoryWatch`] resumes by itself when the
    /// connection breaks or the server restarts, without skipping or
    /// repeating an event (see there). Errors of the request
    /// (INVALID_ARGUMENT for a cursor of another namespace or database,
    /// PERMISSION_DENIED for a namespace the API key may not read) come
    /// from this call.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// # let engram = engram_client::Engram::from_env().await?;
    /// use futures_util::StreamExt as _;
    /// use engram_client::{CreateMemory, WatchMemories, proto::{MemoryType, RevisionAction, Scope}};
    ///
    /// let scope = Scope::new("docs-watch-lessons");
    /// let lessons = WatchMemories::new(scope.clone()).memory_types([MemoryType::Lesson]);
    /// let mut watch = engram.memory().watch_memories(lessons).await?;
    /// engram.memory().create_memory(CreateMemory::new(scope.clone(), MemoryType::Note, "Not a lesson")).await?;
    /// engram.memory().create_memory(CreateMemory::new(scope, MemoryType::Lesson, "Pin the toolchain")).await?;
    /// let event = watch.next().await.expect("an event")?;
    /// assert_eq!(event.action(), RevisionAction::Created);
    /// assert_eq!(event.memory.unwrap().content, "Pin the toolchain");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn watch_memories(
        &self,
        request: impl Into<proto::WatchMemoriesRequest>,
    ) -> Result<MemoryWatch, Error> {
        MemoryWatch::open(self.connection.clone(), self.client.clone(), request.into()).await
    }

    /// Streams steps of one or more running episodes; each step is stored
    /// as it arrives and the answer counts the accepted and rejected ones. A
    /// stream is never retried (it cannot be replayed): use
    /// [`MemoryClient::stream_steps_from`] for one that is.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// # let engram = engram_client::Engram::from_env().await?;
    /// use engram_client::{StartEpisode, proto::{Scope, Step, StepResult, StreamStepsRequest}};
    ///
    /// let scope = Scope::new("docs-stream");
    /// let episode = engram.memory().start_episode(StartEpisode::new(scope.clone(), "crawl")).await?;
    /// let messages = (1..=3).map(move |n| StreamStepsRequest {
    ///     scope: Some(scope.clone()),
    ///     episode_id: episode.id.clone(),
    ///     steps: vec![Step {
    ///         step_number: n,
    ///         tool: "http".into(),
    ///         action: format!("fetch page {n}"),
    ///         result: StepResult::Ok.into(),
    ///         ..Default::default()
    ///     }],
    /// });
    /// let summary = engram.memory().stream_steps(futures_util::stream::iter(messages)).await?;
    /// assert_eq!((summary.accepted, summary.rejected), (3, 0));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn stream_steps(
        &self,
        messages: impl Stream<Item = proto::StreamStepsRequest> + Send + 'static,
    ) -> Result<proto::StreamStepsResponse, Error> {
        let request = self.connection.request(messages, false);
        let mut client = self.client.clone();
        match client.stream_steps(request).await {
            Ok(response) => Ok(response.into_inner()),
            Err(status) => Err(Error::from_call(status)),
        }
    }

    /// Like [`MemoryClient::stream_steps`], with the stream made by
    /// `messages` for each try: when the server sheds the call or is
    /// unavailable, the client waits (the server's delay, or the retry
    /// policy's backoff) and sends a fresh stream, as many times as the
    /// policy allows. Safe because a step sent again with the content of a
    /// stored one is acknowledged as stored (`already_stored`), so steps of a
    /// try that failed midway are not stored twice.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// # let engram = engram_client::Engram::from_env().await?;
    /// use engram_client::{StartEpisode, proto::{Scope, Step, StepResult, StreamStepsRequest}};
    ///
    /// let scope = Scope::new("docs-stream-from");
    /// let episode = engram.memory().start_episode(StartEpisode::new(scope.clone(), "crawl")).await?;
    /// let messages = move || {
    ///     let (scope, episode_id) = (scope.clone(), episode.id.clone());
    ///     futures_util::stream::iter((1..=3).map(move |n| StreamStepsRequest {
    ///         scope: Some(scope.clone()),
    ///         episode_id: episode_id.clone(),
    ///         steps: vec![Step {
    ///             step_number: n,
    ///             tool: "http".into(),
    ///             action: format!("fetch page {n}"),
    ///             result: StepResult::Ok.into(),
    ///             ..Default::default()
    ///         }],
    ///     }))
    /// };
    /// let summary = engram.memory().stream_steps_from(messages).await?;
    /// assert_eq!((summary.accepted, summary.rejected), (3, 0));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn stream_steps_from<S>(
        &self,
        messages: impl FnMut() -> S,
    ) -> Result<proto::StreamStepsResponse, Error>
    where
        S: Stream<Item = proto::StreamStepsRequest> + Send + 'static,
    {
        let client = self.client.clone();
        self.connection
            .repeatable_stream(messages, |request| {
                let mut client = client.clone();
                async move { client.stream_steps(request).await }
            })
            .await
    }
}
