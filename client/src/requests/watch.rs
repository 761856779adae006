//! The builder of a `WatchMemoriesRequest`.

use crate::proto;

into_request! {
    WatchMemories => WatchMemoriesRequest,
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
