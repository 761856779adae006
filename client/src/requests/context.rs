//! The builder of a `BuildContextRequest`.

use std::time::SystemTime;

use crate::proto;

into_request! {
    BuildContext => BuildContextRequest,
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

    /// The memories and preferences that were true at this time, as known
    /// now (by default, those true now).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use engram_client::{BuildContext, proto::{BuildContextRequest, Scope}};
    ///
    /// let last_year = SystemTime::now() - Duration::from_secs(365 * 24 * 3600);
    /// let request: BuildContextRequest = BuildContext::new(Scope::new("demo")).valid_at(last_year).into();
    /// assert_eq!(request.valid_at, Some(last_year.into()));
    /// ```
    pub fn valid_at(mut self, time: SystemTime) -> Self {
        self.0.valid_at = Some(time.into());
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
