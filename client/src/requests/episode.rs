//! The builder of a `StartEpisodeRequest`.

use crate::proto;

into_request! {
    StartEpisode => StartEpisodeRequest,
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
