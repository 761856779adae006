//! The policy service: what is worth remembering.

use crate::connection::{Connection, unary_rpcs};
use crate::{Error, MAX_RESPONSE_BYTES, proto};

type Generated = proto::policy_service_client::PolicyServiceClient<tonic::transport::Channel>;

/// The policy service (`engram.v1.PolicyService`): decides whether a
/// transcript holds something worth remembering, and remembers it. Get one
/// with [`Engram::policy`](crate::Engram::policy); it shares the connection
/// and is cheap to clone.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), engram_client::Error> {
/// use engram_client::{Engram, Remember, proto::{MemoryType, Scope}};
///
/// let engram = Engram::from_env().await?;
/// let remembered = engram
///     .policy()
///     .remember(Remember::new(Scope::new("docs-policy").with_user("alice"), "User: I prefer tabs over spaces."))
///     .await?;
/// let decision = remembered.decision.unwrap();
/// assert!(decision.should_store);
/// assert_eq!(decision.memory_type(), MemoryType::Preference);
/// assert!(remembered.memory.is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PolicyClient {
    connection: Connection,
    client: Generated,
}

impl PolicyClient {
    pub(crate) fn new(connection: Connection) -> PolicyClient {
        let client = Generated::new(connection.channel.clone())
            .max_decoding_message_size(MAX_RESPONSE_BYTES);
        PolicyClient { connection, client }
    }

    unary_rpcs! {
        /// Decides whether the transcript is worth remembering, as what, how
        /// important and at which level; stores nothing.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{Classify, proto::{MemoryType, Scope}};
        ///
        /// let transcript = "User: please never use semicolons in our JavaScript.";
        /// let decision = engram
        ///     .policy()
        ///     .classify(Classify::new(Scope::new("docs-classify").with_user("alice"), transcript))
        ///     .await?
        ///     .decision
        ///     .unwrap();
        /// assert!(decision.should_store);
        /// assert_eq!(decision.memory_type(), MemoryType::Preference);
        /// # Ok(())
        /// # }
        /// ```
        classify(ClassifyRequest) -> ClassifyResponse, safe;

        /// Classifies the transcript and stores it when it is worth
        /// remembering (merging like `CreateMemory`). Retried after
        /// UNAVAILABLE only when the request carries a `request_id`.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{Remember, proto::Scope};
        ///
        /// let chatter = Remember::new(Scope::new("docs-remember"), "User: thanks, that's all!").request_id("turn-42");
        /// let answer = engram.policy().remember(chatter).await?;
        /// assert!(!answer.decision.unwrap().should_store);
        /// assert!(answer.memory.is_none());
        /// # Ok(())
        /// # }
        /// ```
        remember(RememberRequest) -> RememberResponse, with_request_id;
    }
}
