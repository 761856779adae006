//! The builders of the filtered reads: a page of memories, a search.

use std::time::{Duration, SystemTime};

use crate::proto;

into_request! {
    ListMemories => ListMemoriesRequest,
    SearchMemories => SearchMemoriesRequest,
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
