//! Engram's gRPC API, `engram.v1`: the generated messages, the client and
//! server stubs of `MemoryService`, `LearningService` and `PolicyService`, and
//! the encoded file descriptor set used for server reflection.
//!
//! The `.proto` files in `proto/engram/v1/` are the contract; this crate is
//! compiled from them without a system `protoc`.

pub mod codec;
pub mod request_text;

/// The `engram.v1` package.
pub mod v1 {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("engram.v1");
}

/// The encoded `FileDescriptorSet` of every `engram.v1` file, for gRPC server
/// reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("engram_descriptor");

/// The default namespace, used when a request's scope leaves it empty.
pub const DEFAULT_NAMESPACE: &str = "default";

impl v1::Scope {
    /// A scope of `namespace` alone: it sees the namespace's GLOBAL memories
    /// that belong to no particular agent or user.
    ///
    /// ```
    /// use engram::v1::Scope;
    ///
    /// let scope = Scope::new("demo").with_user("alice").with_project("shop");
    /// assert_eq!(scope.namespace, "demo");
    /// assert_eq!(scope.user_id, "alice");
    /// assert_eq!(scope.project_id, "shop");
    /// assert!(scope.agent_id.is_empty() && scope.session_id.is_empty());
    /// ```
    pub fn new(namespace: impl Into<String>) -> Self {
        v1::Scope {
            namespace: namespace.into(),
            ..Default::default()
        }
    }

    /// The same scope narrowed to one agent.
    pub fn with_agent(mut self, agent_id: impl Into<String>) -> Self {
        self.agent_id = agent_id.into();
        self
    }

    /// The same scope narrowed to one user.
    pub fn with_user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = user_id.into();
        self
    }

    /// The same scope within one project (it then also sees the project's
    /// WORKSPACE memories).
    pub fn with_project(mut self, project_id: impl Into<String>) -> Self {
        self.project_id = project_id.into();
        self
    }

    /// The same scope within one session (it then also sees the session's
    /// CONVERSATION memories).
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = session_id.into();
        self
    }
}
