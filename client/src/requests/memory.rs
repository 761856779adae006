//! The builder of a `CreateMemoryRequest`.

use std::time::SystemTime;

use crate::proto;

into_request! {
    CreateMemory => CreateMemoryRequest,
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
            ..Default::default()
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

    /// What the memory does to older ones of its owner it contradicts; by
    /// default the server's choice (invalidating them, unless the server
    /// was started with `--contradictions off`).
    ///
    /// ```
    /// use engram_client::{CreateMemory, proto::{ContradictionPolicy, CreateMemoryRequest, MemoryType, Scope}};
    ///
    /// let request: CreateMemoryRequest = CreateMemory::new(Scope::new("demo"), MemoryType::Fact, "The API listens on port 8080")
    ///     .contradictions(ContradictionPolicy::Off)
    ///     .into();
    /// assert_eq!(request.contradictions(), ContradictionPolicy::Off);
    /// ```
    pub fn contradictions(mut self, policy: proto::ContradictionPolicy) -> Self {
        self.0.contradictions = policy.into();
        self
    }
}
