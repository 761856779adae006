//! The builders of the policy's requests about a transcript: classify it,
//! or remember it.

use crate::proto;

into_request! {
    Classify => ClassifyRequest,
    Remember => RememberRequest,
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
