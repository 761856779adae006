//! Builders for the requests with many optional fields. Each converts into
//! its request message, so it can be passed wherever the message can.

use std::time::{Duration, SystemTime};

use crate::proto;

/// Implements `From<Builder> for proto::Request` for builders that wrap
/// their request message.
macro_rules! into_request {
    ($($builder:ident => $request:ident),* $(,)?) => {
        $(impl From<$builder> for proto::$request {
            fn from(builder: $builder) -> proto::$request {
                builder.0
            }
        })*
    };
}

into_request! {
    CreateMemory => CreateMemoryRequest,
    ListMemories => ListMemoriesRequest,
    SearchMemories => SearchMemoriesRequest,
    BuildContext => BuildContextRequest,
    StartEpisode => StartEpisodeRequest,
    RecordOutcome => RecordOutcomeRequest,
    Classify => ClassifyRequest,
    Remember => RememberRequest,
    WatchMemories => WatchMemoriesRequest,
}

/// A `CreateMemoryRequest`: one memory of a type, with its optional fields.
///
/// ```
/// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
///
/// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo").with_project("shop"), MemoryType::Decision, "We use Postgres 16")
///     .summary("Postgres 16")
///     .level(MemoryLevel::Workspace)
///     .tags(["database"])
///     .metadata("ticket", "OPS-12")
///     .importance(0.9)
///     .confidence(0.8)
///     .request_id("decision-postgres")
///     .into();
/// let memory = request.memory.unwrap();
/// assert_eq!(memory.content, "We use Postgres 16");
/// assert_eq!(memory.importance, Some(0.9));
/// assert_eq!(request.request_id, "decision-postgres");
/// ```
#[derive(Debug, Clone)]
pub struct CreateMemory(proto::CreateMemoryRequest);

impl CreateMemory {
    /// A memory of `memory_type` with `content`, in `scope`.
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .importance(0.5)
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.content, "The API listens on port 8080");
    /// ```
    pub fn new(
        scope: proto::Scope,
        memory_type: proto::MemoryType,
        content: impl Into<String>,
    ) -> Self {
        CreateMemory(proto::CreateMemoryRequest {
            scope: Some(scope),
            memory: Some(proto::MemoryInput {
                memory_type: memory_type.into(),
                content: content.into(),
                ..Default::default()
            }),
            request_id: String::new(),
        })
    }

    fn memory(&mut self) -> &mut proto::MemoryInput {
        self.0.memory.get_or_insert_with(Default::default)
    }

    /// A short summary (at most 300 characters).
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .summary("API port")
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.summary, "API port");
    /// ```
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.memory().summary = summary.into();
        self
    }

    /// Who sees the memory; by default the narrowest level the scope allows.
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .level(MemoryLevel::Global)
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.level(), MemoryLevel::Global);
    /// ```
    pub fn level(mut self, level: proto::MemoryLevel) -> Self {
        self.memory().level = level.into();
        self
    }

    /// Tags to filter on.
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .tags(["api", "ports"])
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.tags, ["api", "ports"]);
    /// ```
    pub fn tags<T: Into<String>>(mut self, tags: impl IntoIterator<Item = T>) -> Self {
        self.memory().tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// One metadata entry (call again for more).
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .metadata("source", "runbook")
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.metadata["source"], "runbook");
    /// ```
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.memory().metadata.insert(key.into(), value.into());
        self
    }

    /// How important the memory is, 0 to 1 (default 0.5).
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .importance(0.9)
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.importance, Some(0.9));
    /// ```
    pub fn importance(mut self, importance: f64) -> Self {
        self.memory().importance = Some(importance);
        self
    }

    /// How sure the writer is of it, 0 to 1 (default 1).
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .confidence(0.6)
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.confidence, Some(0.6));
    /// ```
    pub fn confidence(mut self, confidence: f64) -> Self {
        self.memory().confidence = Some(confidence);
        self
    }

    /// When the memory stops being returned.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .expire_time(SystemTime::now() + Duration::from_secs(3600))
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert!(memory.expire_time.is_some());
    /// ```
    pub fn expire_time(mut self, expire_time: SystemTime) -> Self {
        self.memory().expire_time = Some(expire_time.into());
        self
    }

    /// When the remembered thing happened, for what is recorded after the
    /// fact (at most a day ahead of the server's clock); by default, when it
    /// is stored. Search recency is measured from it.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let last_week = SystemTime::now() - Duration::from_secs(7 * 24 * 3600);
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Event, "The checkout outage began")
    ///     .occurred_at(last_week)
    ///     .into();
    /// let memory = request.memory.unwrap();
    /// assert_eq!(memory.occurred_at, Some(last_week.into()));
    /// ```
    pub fn occurred_at(mut self, occurred_at: SystemTime) -> Self {
        self.memory().occurred_at = Some(occurred_at.into());
        self
    }

    /// A client-chosen id that makes the create safe to retry: a repeat
    /// returns the first result and stores nothing twice.
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{CreateMemoryRequest, MemoryLevel, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .request_id("create-42")
    ///     .into();
    /// assert_eq!(request.request_id, "create-42");
    /// ```
    pub fn request_id(mut self, request_id: impl Into<String>) -> Self {
        self.0.request_id = request_id.into();
        self
    }
}

/// The types, levels and tags a filter names, for a builder `$builder` of
/// `$request` with a method `filter()` returning its filter (a
/// `MemoryFilter` or a `MemoryEventFilter`, which name them alike).
macro_rules! kind_setters {
    ($builder:ident, $request:ident) => {
        /// Only memories of these types.
        ///
        #[doc = concat!(
            "```\nuse engram_client::{", stringify!($builder), ", proto::{",
            stringify!($request), ", MemoryLevel, MemoryType, Scope}};\n\n",
            "let request: ", stringify!($request), " = ", stringify!($builder),
            "::new(Scope::new(\"demo\")).memory_types([MemoryType::Lesson]).into();\n",
            "assert_eq!(request.filter.unwrap().memory_types, [MemoryType::Lesson as i32]);\n```"
        )]
        pub fn memory_types(mut self, types: impl IntoIterator<Item = proto::MemoryType>) -> Self {
            self.filter().memory_types = types.into_iter().map(Into::into).collect();
            self
        }

        /// Only memories at these levels.
        ///
        #[doc = concat!(
            "```\nuse engram_client::{", stringify!($builder), ", proto::{",
            stringify!($request), ", MemoryLevel, MemoryType, Scope}};\n\n",
            "let request: ", stringify!($request), " = ", stringify!($builder),
            "::new(Scope::new(\"demo\")).levels([MemoryLevel::Workspace]).into();\n",
            "assert_eq!(request.filter.unwrap().levels, [MemoryLevel::Workspace as i32]);\n```"
        )]
        pub fn levels(mut self, levels: impl IntoIterator<Item = proto::MemoryLevel>) -> Self {
            self.filter().levels = levels.into_iter().map(Into::into).collect();
            self
        }

        /// Only memories with all of these tags.
        ///
        #[doc = concat!(
            "```\nuse engram_client::{", stringify!($builder), ", proto::{",
            stringify!($request), ", Scope}};\n\n",
            "let request: ", stringify!($request), " = ", stringify!($builder),
            "::new(Scope::new(\"demo\")).tags([\"deploy\", \"db\"]).into();\n",
            "assert_eq!(request.filter.unwrap().tags, [\"deploy\", \"db\"]);\n```"
        )]
        pub fn tags<T: Into<String>>(mut self, tags: impl IntoIterator<Item = T>) -> Self {
            self.filter().tags = tags.into_iter().map(Into::into).collect();
            self
        }
    };
}

/// The memory filter shared by [`ListMemories`] and [`SearchMemories`].
macro_rules! filter_setters {
    () => {
        fn filter(&mut self) -> &mut proto::MemoryFilter {
            self.0.filter.get_or_insert_with(Default::default)
        }

        kind_setters!(ListMemories, ListMemoriesRequest);

        /// Only memories at least this important.
        ///
        /// ```
        /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, MemoryLevel, MemoryOrder, MemoryType, Scope}};
        ///
        /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).min_importance(0.5).into();
        /// assert_eq!(request.filter.unwrap().min_importance, 0.5);
        /// ```
        pub fn min_importance(mut self, min_importance: f64) -> Self {
            self.filter().min_importance = min_importance;
            self
        }

        /// Only memories of what happened at or after this time.
        ///
        /// ```
        /// use std::time::{Duration, SystemTime};
        /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, Scope}};
        ///
        /// let yesterday = SystemTime::now() - Duration::from_secs(24 * 3600);
        /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).occurred_after(yesterday).into();
        /// assert_eq!(request.filter.unwrap().occurred_after, Some(yesterday.into()));
        /// ```
        pub fn occurred_after(mut self, time: SystemTime) -> Self {
            self.filter().occurred_after = Some(time.into());
            self
        }

        /// Only memories of what happened before this time.
        ///
        /// ```
        /// use std::time::{Duration, SystemTime};
        /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, Scope}};
        ///
        /// let yesterday = SystemTime::now() - Duration::from_secs(24 * 3600);
        /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).occurred_before(yesterday).into();
        /// assert_eq!(request.filter.unwrap().occurred_before, Some(yesterday.into()));
        /// ```
        pub fn occurred_before(mut self, time: SystemTime) -> Self {
            self.filter().occurred_before = Some(time.into());
            self
        }
    };
}

/// A `ListMemoriesRequest`: a filtered, ordered page of memories.
///
/// ```
/// use engram_client::{ListMemories, proto::{ListMemoriesRequest, MemoryOrder, MemoryType, Scope}};
///
/// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo"))
///     .memory_types([MemoryType::Lesson])
///     .tags(["deploy"])
///     .min_importance(0.5)
///     .order_by(MemoryOrder::ImportanceDesc)
///     .page_size(20)
///     .into();
/// assert_eq!(request.page_size, 20);
/// assert_eq!(request.filter.unwrap().tags, ["deploy"]);
/// ```
#[derive(Debug, Clone)]
pub struct ListMemories(proto::ListMemoriesRequest);

impl ListMemories {
    /// Every memory visible from `scope`, newest first.
    ///
    /// ```
    /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, MemoryLevel, MemoryOrder, MemoryType, Scope}};
    ///
    /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).page_size(50).into();
    /// assert_eq!(request.scope.unwrap().namespace, "demo");
    /// ```
    pub fn new(scope: proto::Scope) -> Self {
        ListMemories(proto::ListMemoriesRequest {
            scope: Some(scope),
            ..Default::default()
        })
    }

    filter_setters!();

    /// The order (newest first by default).
    ///
    /// ```
    /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, MemoryLevel, MemoryOrder, MemoryType, Scope}};
    ///
    /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).order_by(MemoryOrder::ImportanceDesc).into();
    /// assert_eq!(request.order_by(), MemoryOrder::ImportanceDesc);
    /// ```
    pub fn order_by(mut self, order: proto::MemoryOrder) -> Self {
        self.0.order_by = order.into();
        self
    }

    /// At most this many memories per page (default 50, at most 1,000).
    ///
    /// ```
    /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, MemoryLevel, MemoryOrder, MemoryType, Scope}};
    ///
    /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).page_size(20).into();
    /// assert_eq!(request.page_size, 20);
    /// ```
    pub fn page_size(mut self, page_size: i32) -> Self {
        self.0.page_size = page_size;
        self
    }

    /// Continues the listing a previous page's `next_page_token` came from.
    ///
    /// ```
    /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, MemoryLevel, MemoryOrder, MemoryType, Scope}};
    ///
    /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).page_token("token-from-the-last-page").into();
    /// assert_eq!(request.page_token, "token-from-the-last-page");
    /// ```
    pub fn page_token(mut self, page_token: impl Into<String>) -> Self {
        self.0.page_token = page_token.into();
        self
    }
}

/// A `SearchMemoriesRequest`: a full-text query with optional filters and
/// ranking weights.
///
/// ```
/// use std::time::Duration;
/// use engram_client::{SearchMemories, proto::{MemoryType, Scope, SearchMemoriesRequest}};
///
/// let request: SearchMemoriesRequest = SearchMemories::new(Scope::new("demo"), "deploy failures")
///     .memory_types([MemoryType::Lesson, MemoryType::Decision])
///     .limit(5)
///     .weights(0.8, 0.1, 0.1)
///     .recency_half_life(Duration::from_secs(7 * 24 * 3600))
///     .into();
/// assert_eq!(request.limit, 5);
/// assert_eq!(request.weights.unwrap().relevance, Some(0.8));
/// ```
#[derive(Debug, Clone)]
pub struct SearchMemories(proto::SearchMemoriesRequest);

impl SearchMemories {
    /// Memories visible from `scope` that match `query`.
    ///
    /// ```
    /// use engram_client::{SearchMemories, proto::{Scope, SearchMemoriesRequest}};
    ///
    /// let request: SearchMemoriesRequest = SearchMemories::new(Scope::new("demo"), "deploy").limit(10).into();
    /// assert_eq!(request.query, "deploy");
    /// ```
    pub fn new(scope: proto::Scope, query: impl Into<String>) -> Self {
        SearchMemories(proto::SearchMemoriesRequest {
            scope: Some(scope),
            query: query.into(),
            ..Default::default()
        })
    }

    filter_setters!();

    /// At most this many hits, 1 to 100 (default 10).
    ///
    /// ```
    /// use engram_client::{SearchMemories, proto::{Scope, SearchMemoriesRequest}};
    ///
    /// let request: SearchMemoriesRequest = SearchMemories::new(Scope::new("demo"), "deploy").limit(5).into();
    /// assert_eq!(request.limit, 5);
    /// ```
    pub fn limit(mut self, limit: i32) -> Self {
        self.0.limit = limit;
        self
    }

    fn weights_mut(&mut self) -> &mut proto::SearchWeights {
        self.0.weights.get_or_insert_with(Default::default)
    }

    /// How much relevance, recency and importance count in the score
    /// (default 0.6, 0.2, 0.2).
    ///
    /// ```
    /// use engram_client::{SearchMemories, proto::{Scope, SearchMemoriesRequest}};
    ///
    /// let request: SearchMemoriesRequest = SearchMemories::new(Scope::new("demo"), "deploy").weights(1.0, 0.0, 0.0).into();
    /// assert_eq!(request.weights.unwrap().recency, Some(0.0));
    /// ```
    pub fn weights(mut self, relevance: f64, recency: f64, importance: f64) -> Self {
        let weights = self.weights_mut();
        weights.relevance = Some(relevance);
        weights.recency = Some(recency);
        weights.importance = Some(importance);
        self
    }

    /// After how long a memory's recency score halves (default 30 days).
    ///
    /// ```
    /// use std::time::Duration;
    /// use engram_client::{SearchMemories, proto::{Scope, SearchMemoriesRequest}};
    ///
    /// let request: SearchMemoriesRequest = SearchMemories::new(Scope::new("demo"), "deploy").recency_half_life(Duration::from_secs(86_400)).into();
    /// assert_eq!(request.weights.unwrap().recency_half_life.unwrap().seconds, 86_400);
    /// ```
    pub fn recency_half_life(mut self, half_life: Duration) -> Self {
        self.weights_mut().recency_half_life = prost_types::Duration::try_from(half_life).ok();
        self
    }
}

/// A `BuildContextRequest`: what the context block is for, and its budget.
///
/// ```
/// use engram_client::{BuildContext, proto::{BuildContextRequest, Scope}};
///
/// let request: BuildContextRequest = BuildContext::new(Scope::new("demo").with_project("shop"))
///     .query("deploying checkout")
///     .task_id("deploy-checkout")
///     .task_type("deployment")
///     .token_budget(500)
///     .into();
/// assert_eq!(request.token_budget, 500);
/// ```
#[derive(Debug, Clone)]
pub struct BuildContext(proto::BuildContextRequest);

impl BuildContext {
    /// Context for `scope` with the default budget (512 tokens).
    ///
    /// ```
    /// use engram_client::{BuildContext, proto::{BuildContextRequest, Scope}};
    ///
    /// let request: BuildContextRequest = BuildContext::new(Scope::new("demo")).token_budget(512).into();
    /// assert_eq!(request.scope.unwrap().namespace, "demo");
    /// ```
    pub fn new(scope: proto::Scope) -> Self {
        BuildContext(proto::BuildContextRequest {
            scope: Some(scope),
            ..Default::default()
        })
    }

    /// What the agent is about to do; selects the relevant memories.
    ///
    /// ```
    /// use engram_client::{BuildContext, proto::{BuildContextRequest, Scope}};
    ///
    /// let request: BuildContextRequest = BuildContext::new(Scope::new("demo")).query("deploying checkout").into();
    /// assert_eq!(request.query, "deploying checkout");
    /// ```
    pub fn query(mut self, query: impl Into<String>) -> Self {
        self.0.query = query.into();
        self
    }

    /// The task, for its rules, mistakes and recent episodes.
    ///
    /// ```
    /// use engram_client::{BuildContext, proto::{BuildContextRequest, Scope}};
    ///
    /// let request: BuildContextRequest = BuildContext::new(Scope::new("demo")).task_id("deploy-checkout").into();
    /// assert_eq!(request.task_id, "deploy-checkout");
    /// ```
    pub fn task_id(mut self, task_id: impl Into<String>) -> Self {
        self.0.task_id = task_id.into();
        self
    }

    /// The task type, for its heuristics and anti-patterns.
    ///
    /// ```
    /// use engram_client::{BuildContext, proto::{BuildContextRequest, Scope}};
    ///
    /// let request: BuildContextRequest = BuildContext::new(Scope::new("demo")).task_type("deployment").into();
    /// assert_eq!(request.task_type, "deployment");
    /// ```
    pub fn task_type(mut self, task_type: impl Into<String>) -> Self {
        self.0.task_type = task_type.into();
        self
    }

    /// The most tokens the block may take, 16 to 32,768 (default 512).
    ///
    /// ```
    /// use engram_client::{BuildContext, proto::{BuildContextRequest, Scope}};
    ///
    /// let request: BuildContextRequest = BuildContext::new(Scope::new("demo")).token_budget(256).into();
    /// assert_eq!(request.token_budget, 256);
    /// ```
    pub fn token_budget(mut self, token_budget: i32) -> Self {
        self.0.token_budget = token_budget;
        self
    }
}

/// A `StartEpisodeRequest`: a new episode of work on a task.
///
/// ```
/// use engram_client::{StartEpisode, proto::{EpisodeContext, Scope, StartEpisodeRequest}};
///
/// let request: StartEpisodeRequest = StartEpisode::new(Scope::new("demo"), "deploy-checkout")
///     .description("Deploy checkout v2")
///     .task_type("deployment")
///     .context(EpisodeContext { language: "rust".into(), ..Default::default() })
///     .request_id("run-17")
///     .into();
/// assert_eq!(request.task_id, "deploy-checkout");
/// ```
#[derive(Debug, Clone)]
pub struct StartEpisode(proto::StartEpisodeRequest);

impl StartEpisode {
    /// An episode of `task_id` in `scope`; the description defaults to the
    /// task id.
    ///
    /// ```
    /// use engram_client::{StartEpisode, proto::{EpisodeContext, Scope, StartEpisodeRequest}};
    ///
    /// let request: StartEpisodeRequest = StartEpisode::new(Scope::new("demo"), "deploy").task_type("deployment").into();
    /// assert_eq!(request.description, "deploy");
    /// ```
    pub fn new(scope: proto::Scope, task_id: impl Into<String>) -> Self {
        let task_id = task_id.into();
        StartEpisode(proto::StartEpisodeRequest {
            scope: Some(scope),
            description: task_id.clone(),
            task_id,
            ..Default::default()
        })
    }

    /// What this run is meant to do.
    ///
    /// ```
    /// use engram_client::{StartEpisode, proto::{EpisodeContext, Scope, StartEpisodeRequest}};
    ///
    /// let request: StartEpisodeRequest = StartEpisode::new(Scope::new("demo"), "deploy").description("Deploy v2").into();
    /// assert_eq!(request.description, "Deploy v2");
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.0.description = description.into();
        self
    }

    /// The kind of task (e.g. "deployment").
    ///
    /// ```
    /// use engram_client::{StartEpisode, proto::{EpisodeContext, Scope, StartEpisodeRequest}};
    ///
    /// let request: StartEpisodeRequest = StartEpisode::new(Scope::new("demo"), "deploy").task_type("deployment").into();
    /// assert_eq!(request.task_type, "deployment");
    /// ```
    pub fn task_type(mut self, task_type: impl Into<String>) -> Self {
        self.0.task_type = task_type.into();
        self
    }

    /// Where the work happens (language, framework, domain, ...).
    ///
    /// ```
    /// use engram_client::{StartEpisode, proto::{EpisodeContext, Scope, StartEpisodeRequest}};
    ///
    /// let request: StartEpisodeRequest = StartEpisode::new(Scope::new("demo"), "deploy").context(EpisodeContext { language: "go".into(), ..Default::default() }).into();
    /// assert_eq!(request.context.unwrap().language, "go");
    /// ```
    pub fn context(mut self, context: proto::EpisodeContext) -> Self {
        self.0.context = Some(context);
        self
    }

    /// Makes the start safe to retry: a repeat returns the same episode.
    ///
    /// ```
    /// use engram_client::{StartEpisode, proto::{EpisodeContext, Scope, StartEpisodeRequest}};
    ///
    /// let request: StartEpisodeRequest = StartEpisode::new(Scope::new("demo"), "deploy").request_id("run-7").into();
    /// assert_eq!(request.request_id, "run-7");
    /// ```
    pub fn request_id(mut self, request_id: impl Into<String>) -> Self {
        self.0.request_id = request_id.into();
        self
    }
}

/// A `RecordOutcomeRequest`: how a task went.
///
/// ```
/// use std::time::Duration;
/// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
///
/// let scope = Scope::new("demo").with_agent("coder");
/// let request: RecordOutcomeRequest = RecordOutcome::success(scope, "fix the flaky login test", "reproduce with a fixed seed, then bisect")
///     .task_type("testing")
///     .duration(Duration::from_secs(90))
///     .feedback("merged")
///     .request_id("outcome-9")
///     .into();
/// assert_eq!(request.duration_ms, Some(90_000));
/// ```
#[derive(Debug, Clone)]
pub struct RecordOutcome(proto::RecordOutcomeRequest);

impl RecordOutcome {
    /// `task` worked for the agent of `scope`, going about it with `strategy`.
    ///
    /// ```
    /// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
    ///
    /// let scope = Scope::new("demo").with_agent("coder");
    /// let request: RecordOutcomeRequest = RecordOutcome::success(scope, "fix the login test", "bisect the failing commit")
    ///     .feedback("merged")
    ///     .into();
    /// assert!(request.success);
    /// ```
    pub fn success(
        scope: proto::Scope,
        task: impl Into<String>,
        strategy: impl Into<String>,
    ) -> Self {
        RecordOutcome::new(scope, task.into(), strategy.into(), true)
    }

    /// `task` failed for the agent of `scope`, going about it with
    /// `strategy`; say what went wrong with [`error`](Self::error).
    ///
    /// ```
    /// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
    ///
    /// let scope = Scope::new("demo").with_agent("coder");
    /// let request: RecordOutcomeRequest = RecordOutcome::failure(scope, "fix the login test", "bisect the failing commit")
    ///     .error("could not reproduce")
    ///     .into();
    /// assert!(!request.success);
    /// ```
    pub fn failure(
        scope: proto::Scope,
        task: impl Into<String>,
        strategy: impl Into<String>,
    ) -> Self {
        RecordOutcome::new(scope, task.into(), strategy.into(), false)
    }

    fn new(scope: proto::Scope, task: String, strategy: String, success: bool) -> Self {
        RecordOutcome(proto::RecordOutcomeRequest {
            scope: Some(scope),
            task,
            strategy,
            success,
            ..Default::default()
        })
    }

    /// The task type (inferred from the task when absent).
    ///
    /// ```
    /// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
    ///
    /// let scope = Scope::new("demo").with_agent("coder");
    /// let request: RecordOutcomeRequest = RecordOutcome::success(scope, "fix the login test", "bisect the failing commit")
    ///     .task_type("testing")
    ///     .into();
    /// assert_eq!(request.task_type, "testing");
    /// ```
    pub fn task_type(mut self, task_type: impl Into<String>) -> Self {
        self.0.task_type = task_type.into();
        self
    }

    /// How long it took.
    ///
    /// ```
    /// use std::time::Duration;
    /// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
    ///
    /// let scope = Scope::new("demo").with_agent("coder");
    /// let request: RecordOutcomeRequest = RecordOutcome::success(scope, "fix the login test", "bisect the failing commit")
    ///     .duration(Duration::from_millis(1_500))
    ///     .into();
    /// assert_eq!(request.duration_ms, Some(1_500));
    /// ```
    pub fn duration(mut self, duration: Duration) -> Self {
        self.0.duration_ms = Some(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX));
        self
    }

    /// What went wrong, for a failure.
    ///
    /// ```
    /// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
    ///
    /// let scope = Scope::new("demo").with_agent("coder");
    /// let request: RecordOutcomeRequest = RecordOutcome::failure(scope, "fix the login test", "bisect the failing commit")
    ///     .error("could not reproduce")
    ///     .into();
    /// assert_eq!(request.error, "could not reproduce");
    /// ```
    pub fn error(mut self, error: impl Into<String>) -> Self {
        self.0.error = error.into();
        self
    }

    /// What the user or a reviewer said.
    ///
    /// ```
    /// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
    ///
    /// let scope = Scope::new("demo").with_agent("coder");
    /// let request: RecordOutcomeRequest = RecordOutcome::success(scope, "fix the login test", "bisect the failing commit")
    ///     .feedback("merged")
    ///     .into();
    /// assert_eq!(request.feedback, "merged");
    /// ```
    pub fn feedback(mut self, feedback: impl Into<String>) -> Self {
        self.0.feedback = feedback.into();
        self
    }

    /// Makes the call safe to retry: a repeat records nothing twice.
    ///
    /// ```
    /// use engram_client::{RecordOutcome, proto::{RecordOutcomeRequest, Scope}};
    ///
    /// let scope = Scope::new("demo").with_agent("coder");
    /// let request: RecordOutcomeRequest = RecordOutcome::success(scope, "fix the login test", "bisect the failing commit")
    ///     .request_id("outcome-3")
    ///     .into();
    /// assert_eq!(request.request_id, "outcome-3");
    /// ```
    pub fn request_id(mut self, request_id: impl Into<String>) -> Self {
        self.0.request_id = request_id.into();
        self
    }
}

/// The setters [`Classify`] and [`Remember`] share.
macro_rules! transcript_setters {
    () => {
        /// The task the transcript belongs to.
        ///
        /// ```
        /// use engram_client::{Classify, proto::{ClassifyMode, ClassifyRequest, Scope}};
        ///
        /// let request: ClassifyRequest = Classify::new(Scope::new("demo"), "User: call me Sam.").task_id("onboarding").into();
        /// assert_eq!(request.task_id, "onboarding");
        /// ```
        pub fn task_id(mut self, task_id: impl Into<String>) -> Self {
            self.0.task_id = task_id.into();
            self
        }

        /// RULES, LLM or AUTO (the LLM when the server has one).
        ///
        /// ```
        /// use engram_client::{Classify, proto::{ClassifyMode, ClassifyRequest, Scope}};
        ///
        /// let request: ClassifyRequest = Classify::new(Scope::new("demo"), "User: call me Sam.").mode(ClassifyMode::Rules).into();
        /// assert_eq!(request.mode(), ClassifyMode::Rules);
        /// ```
        pub fn mode(mut self, mode: proto::ClassifyMode) -> Self {
            self.0.mode = mode.into();
            self
        }
    };
}

/// A `ClassifyRequest`: is this transcript worth remembering?
///
/// ```
/// use engram_client::{Classify, proto::{ClassifyMode, ClassifyRequest, Scope}};
///
/// let request: ClassifyRequest = Classify::new(Scope::new("demo"), "User: call me Sam.")
///     .task_id("onboarding")
///     .mode(ClassifyMode::Rules)
///     .into();
/// assert_eq!(request.mode(), ClassifyMode::Rules);
/// ```
#[derive(Debug, Clone)]
pub struct Classify(proto::ClassifyRequest);

impl Classify {
    /// Classify `transcript` for `scope` (AUTO mode).
    ///
    /// ```
    /// use engram_client::{Classify, proto::{ClassifyMode, ClassifyRequest, Scope}};
    ///
    /// let request: ClassifyRequest = Classify::new(Scope::new("demo"), "User: call me Sam.").mode(ClassifyMode::Auto).into();
    /// assert_eq!(request.transcript, "User: call me Sam.");
    /// ```
    pub fn new(scope: proto::Scope, transcript: impl Into<String>) -> Self {
        Classify(proto::ClassifyRequest {
            scope: Some(scope),
            transcript: transcript.into(),
            ..Default::default()
        })
    }

    transcript_setters!();
}

/// A `RememberRequest`: classify a transcript and store it if it is worth it.
///
/// ```
/// use engram_client::{Remember, proto::{ClassifyMode, RememberRequest, Scope}};
///
/// let request: RememberRequest = Remember::new(Scope::new("demo"), "User: call me Sam.")
///     .task_id("onboarding")
///     .mode(ClassifyMode::Rules)
///     .tags(["profile"])
///     .request_id("turn-3")
///     .into();
/// assert_eq!(request.tags, ["profile"]);
/// ```
#[derive(Debug, Clone)]
pub struct Remember(proto::RememberRequest);

impl Remember {
    /// Remember what is worth it in `transcript`, for `scope` (AUTO mode).
    ///
    /// ```
    /// use engram_client::{Remember, proto::{RememberRequest, Scope}};
    ///
    /// let request: RememberRequest = Remember::new(Scope::new("demo"), "User: call me Sam.").tags(["profile"]).into();
    /// assert_eq!(request.transcript, "User: call me Sam.");
    /// ```
    pub fn new(scope: proto::Scope, transcript: impl Into<String>) -> Self {
        Remember(proto::RememberRequest {
            scope: Some(scope),
            transcript: transcript.into(),
            ..Default::default()
        })
    }

    transcript_setters!();

    /// Tags for the stored memory.
    ///
    /// ```
    /// use engram_client::{Remember, proto::{RememberRequest, Scope}};
    ///
    /// let request: RememberRequest = Remember::new(Scope::new("demo"), "User: call me Sam.").tags(["profile"]).into();
    /// assert_eq!(request.tags, ["profile"]);
    /// ```
    pub fn tags<T: Into<String>>(mut self, tags: impl IntoIterator<Item = T>) -> Self {
        self.0.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Makes the call safe to retry: a repeat returns the first answer and
    /// stores nothing twice.
    ///
    /// ```
    /// use engram_client::{Remember, proto::{RememberRequest, Scope}};
    ///
    /// let request: RememberRequest = Remember::new(Scope::new("demo"), "User: call me Sam.").request_id("turn-9").into();
    /// assert_eq!(request.request_id, "turn-9");
    /// ```
    pub fn request_id(mut self, request_id: impl Into<String>) -> Self {
        self.0.request_id = request_id.into();
        self
    }
}

/// A `WatchMemoriesRequest`: the changes to the memories a scope sees,
/// optionally of some types, levels or tags only, from now or from a cursor.
///
/// ```
/// use engram_client::{WatchMemories, proto::{MemoryLevel, MemoryType, Scope, WatchMemoriesRequest}};
///
/// let request: WatchMemoriesRequest = WatchMemories::new(Scope::new("demo").with_project("shop"))
///     .memory_types([MemoryType::Lesson, MemoryType::Decision])
///     .levels([MemoryLevel::Workspace])
///     .tags(["deploy"])
///     .cursor("cursor-from-an-earlier-watch")
///     .into();
/// let filter = request.filter.unwrap();
/// assert_eq!(filter.tags, ["deploy"]);
/// assert_eq!(request.cursor, "cursor-from-an-earlier-watch");
/// ```
#[derive(Debug, Clone)]
pub struct WatchMemories(proto::WatchMemoriesRequest);

impl WatchMemories {
    /// Every change to the memories visible from `scope`, from now on.
    ///
    /// ```
    /// use engram_client::{WatchMemories, proto::{Scope, WatchMemoriesRequest}};
    ///
    /// let request: WatchMemoriesRequest = WatchMemories::new(Scope::new("demo")).into();
    /// assert!(request.filter.is_none() && request.cursor.is_empty());
    /// ```
    pub fn new(scope: proto::Scope) -> Self {
        WatchMemories(proto::WatchMemoriesRequest {
            scope: Some(scope),
            ..Default::default()
        })
    }

    fn filter(&mut self) -> &mut proto::MemoryEventFilter {
        self.0.filter.get_or_insert_with(Default::default)
    }

    kind_setters!(WatchMemories, WatchMemoriesRequest);

    /// Starts after this cursor (a [`MemoryWatch::cursor`](crate::MemoryWatch::cursor),
    /// or an event's `cursor`) instead of now: the changes committed since
    /// are reported first.
    ///
    /// ```
    /// use engram_client::{WatchMemories, proto::{Scope, WatchMemoriesRequest}};
    ///
    /// let request: WatchMemoriesRequest = WatchMemories::new(Scope::new("demo")).cursor("saved-cursor").into();
    /// assert_eq!(request.cursor, "saved-cursor");
    /// ```
    pub fn cursor(mut self, cursor: impl Into<String>) -> Self {
        self.0.cursor = cursor.into();
        self
    }
}
