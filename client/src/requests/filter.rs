//! The filter setters that the listing, searching and watching builders
//! share, as macros expanded inside each builder's `impl`.

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

        /// The memories that were true at this time, as known now (by
        /// default only those true now): a memory invalidated since — by a
        /// contradiction, a superseding Remember or an UpdateMemory of its
        /// `valid_to` — is found for the time it held.
        ///
        /// ```
        /// use std::time::{Duration, SystemTime};
        /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, Scope}};
        ///
        /// let last_year = SystemTime::now() - Duration::from_secs(365 * 24 * 3600);
        /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).valid_at(last_year).into();
        /// assert_eq!(request.filter.unwrap().valid_at, Some(last_year.into()));
        /// ```
        pub fn valid_at(mut self, time: SystemTime) -> Self {
            self.filter().valid_at = Some(time.into());
            self
        }

        /// Only memories naming every one of these entities, each by id or
        /// any of its names (without case).
        ///
        /// ```
        /// use engram_client::{ListMemories, proto::{ListMemoriesRequest, Scope}};
        ///
        /// let request: ListMemoriesRequest = ListMemories::new(Scope::new("demo")).entities(["Alice Chen"]).into();
        /// assert_eq!(request.filter.unwrap().entities, ["Alice Chen"]);
        /// ```
        pub fn entities<T: Into<String>>(mut self, entities: impl IntoIterator<Item = T>) -> Self {
            self.filter().entities = entities.into_iter().map(Into::into).collect();
            self
        }
    };
}
