//! The builder of a `RecordOutcomeRequest`.

use std::time::Duration;

use crate::proto;

into_request! {
    RecordOutcome => RecordOutcomeRequest,
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
