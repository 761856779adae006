//! The learning service: outcomes, heuristics, anti-patterns, task rules,
//! mistake cards, consolidation, forgetting and statistics.

use crate::connection::{Connection, unary_rpcs};
use crate::{Error, MAX_RESPONSE_BYTES, proto};

type Generated = proto::learning_service_client::LearningServiceClient<tonic::transport::Channel>;

/// The learning service (`engram.v1.LearningService`): what agents learn from
/// the outcomes of their work. Get one with
/// [`Engram::learning`](crate::Engram::learning); it shares the connection
/// and is cheap to clone.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), engram_client::Error> {
/// use engram_client::{Engram, RecordOutcome, proto::Scope};
///
/// let engram = Engram::from_env().await?;
/// let scope = Scope::new("docs-learning").with_agent("coder").with_project("shop");
/// for task in ["fix the login test", "fix the cart test", "fix the search test"] {
///     let outcome = RecordOutcome::success(scope.clone(), task, "reproduce the failure first, then bisect");
///     engram.learning().record_outcome(outcome).await?;
/// }
/// let stats = engram.learning().get_stats(proto::GetStatsRequest { scope: Some(scope) }).await?;
/// assert_eq!(stats.outcomes, 3);
/// assert_eq!(stats.heuristics, 1);
/// # use engram_client::proto;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct LearningClient {
    connection: Connection,
    client: Generated,
}

impl LearningClient {
    pub(crate) fn new(connection: Connection) -> LearningClient {
        let client = Generated::new(connection.channel.clone())
            .max_decoding_message_size(MAX_RESPONSE_BYTES);
        LearningClient { connection, client }
    }

    unary_rpcs! {
        /// Records how a task went and with which strategy; learns a
        /// heuristic from repeated similar successes and an anti-pattern
        /// from repeated similar failures. Retried after UNAVAILABLE only
        /// when the request carries a `request_id`.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{RecordOutcome, proto::Scope};
        ///
        /// let scope = Scope::new("docs-outcome").with_agent("coder");
        /// let recorded = engram
        ///     .learning()
        ///     .record_outcome(RecordOutcome::failure(scope, "write unit tests for the parser", "mock the file system").error("flaky fixture"))
        ///     .await?;
        /// let outcome = recorded.outcome.unwrap();
        /// assert!(!outcome.success);
        /// assert!(outcome.task_type_inferred);
        /// # Ok(())
        /// # }
        /// ```
        record_outcome(RecordOutcomeRequest) -> RecordOutcomeResponse, with_request_id;

        /// Lists recorded outcomes, newest first.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{RecordOutcome, proto::{ListOutcomesRequest, Scope}};
        ///
        /// let scope = Scope::new("docs-list-outcomes").with_agent("coder");
        /// engram.learning().record_outcome(RecordOutcome::success(scope.clone(), "deploy the api", "blue-green switch")).await?;
        /// let listed = engram
        ///     .learning()
        ///     .list_outcomes(ListOutcomesRequest { scope: Some(scope), ..Default::default() })
        ///     .await?;
        /// assert_eq!(listed.outcomes.len(), 1);
        /// # Ok(())
        /// # }
        /// ```
        list_outcomes(ListOutcomesRequest) -> ListOutcomesResponse, safe;

        /// Lists learned heuristics, most confident first.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{ListHeuristicsRequest, Scope};
        ///
        /// let listed = engram
        ///     .learning()
        ///     .list_heuristics(ListHeuristicsRequest { scope: Some(Scope::new("docs-empty")), ..Default::default() })
        ///     .await?;
        /// assert!(listed.heuristics.is_empty());
        /// # Ok(())
        /// # }
        /// ```
        list_heuristics(ListHeuristicsRequest) -> ListHeuristicsResponse, safe;

        /// Lists learned anti-patterns, most frequent first.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::{RecordOutcome, proto::{ListAntiPatternsRequest, Scope}};
        ///
        /// let scope = Scope::new("docs-anti-patterns").with_agent("coder");
        /// for task in ["deploy the api", "deploy the worker"] {
        ///     let failure = RecordOutcome::failure(scope.clone(), task, "deploy on friday evening")
        ///         .task_type("deployment")
        ///         .error("nobody was around to roll back");
        ///     engram.learning().record_outcome(failure).await?;
        /// }
        /// let listed = engram
        ///     .learning()
        ///     .list_anti_patterns(ListAntiPatternsRequest { scope: Some(scope), ..Default::default() })
        ///     .await?;
        /// assert_eq!(listed.anti_patterns.len(), 1);
        /// # Ok(())
        /// # }
        /// ```
        list_anti_patterns(ListAntiPatternsRequest) -> ListAntiPatternsResponse, safe;

        /// Records one mistake as a mistake card (merged with the same
        /// mistake seen before). Retried after UNAVAILABLE only when the
        /// request carries a `request_id`.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{MistakeCardInput, RecordMistakeRequest, Scope};
        ///
        /// let recorded = engram
        ///     .learning()
        ///     .record_mistake(RecordMistakeRequest {
        ///         scope: Some(Scope::new("docs-mistake")),
        ///         task_id: "triage".into(),
        ///         card: Some(MistakeCardInput {
        ///             mistake_type: "wrong_assignee".into(),
        ///             correct_decision: "assign database bugs to the data team".into(),
        ///             ..Default::default()
        ///         }),
        ///         ..Default::default()
        ///     })
        ///     .await?;
        /// assert_eq!(recorded.card.unwrap().seen_count, 1);
        /// # Ok(())
        /// # }
        /// ```
        record_mistake(RecordMistakeRequest) -> RecordMistakeResponse, with_request_id;

        /// Lists mistake cards, most often seen first.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{ListMistakeCardsRequest, Scope};
        ///
        /// let listed = engram
        ///     .learning()
        ///     .list_mistake_cards(ListMistakeCardsRequest { scope: Some(Scope::new("docs-empty")), ..Default::default() })
        ///     .await?;
        /// assert!(listed.mistake_cards.is_empty());
        /// # Ok(())
        /// # }
        /// ```
        list_mistake_cards(ListMistakeCardsRequest) -> ListMistakeCardsResponse, safe;

        /// Lists task rules (`[WORKS]`, `[AVOID]`) and global rules
        /// (`[HIGH SCORE]`, `[CONSOLIDATED]`).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{ListTaskRulesRequest, Scope};
        ///
        /// let listed = engram
        ///     .learning()
        ///     .list_task_rules(ListTaskRulesRequest { scope: Some(Scope::new("docs-empty")), ..Default::default() })
        ///     .await?;
        /// assert!(listed.task_rules.is_empty());
        /// # Ok(())
        /// # }
        /// ```
        list_task_rules(ListTaskRulesRequest) -> ListTaskRulesResponse, safe;

        /// Sets what an agent may learn from and how much evidence a
        /// heuristic needs.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{Scope, SetAgentScopeRequest};
        ///
        /// let set = engram
        ///     .learning()
        ///     .set_agent_scope(SetAgentScopeRequest {
        ///         scope: Some(Scope::new("docs-agent-scope").with_agent("coder")),
        ///         cannot_learn: vec!["deployment".into()],
        ///         min_occurrences: 5,
        ///         ..Default::default()
        ///     })
        ///     .await?;
        /// assert_eq!(set.agent_scope.unwrap().min_occurrences, 5);
        /// # Ok(())
        /// # }
        /// ```
        set_agent_scope(SetAgentScopeRequest) -> SetAgentScopeResponse, never;

        /// Reads an agent's learning scope (the defaults if never set).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{GetAgentScopeRequest, Scope};
        ///
        /// let scope = Scope::new("docs-get-agent-scope").with_agent("coder");
        /// let read = engram.learning().get_agent_scope(GetAgentScopeRequest { scope: Some(scope) }).await?;
        /// assert_eq!(read.agent_scope.unwrap().min_occurrences, 3);
        /// # Ok(())
        /// # }
        /// ```
        get_agent_scope(GetAgentScopeRequest) -> GetAgentScopeResponse, safe;

        /// Distils recent episodes into global rules (RULES, or an LLM when
        /// the server has one).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{ConsolidateMode, ConsolidateRequest, Scope};
        ///
        /// let consolidated = engram
        ///     .learning()
        ///     .consolidate(ConsolidateRequest {
        ///         scope: Some(Scope::new("docs-empty")),
        ///         mode: ConsolidateMode::Rules.into(),
        ///         force: true,
        ///     })
        ///     .await?;
        /// assert_eq!(consolidated.episodes_considered, 0);
        /// # Ok(())
        /// # }
        /// ```
        consolidate(ConsolidateRequest) -> ConsolidateResponse, never;

        /// Deletes stale outcomes and anti-patterns, weak heuristics and
        /// expired memories of exactly one scope (or only counts them, with
        /// `dry_run`).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{ForgetRequest, Scope};
        ///
        /// let counted = engram
        ///     .learning()
        ///     .forget(ForgetRequest { scope: Some(Scope::new("docs-empty")), dry_run: true, ..Default::default() })
        ///     .await?;
        /// assert!(counted.dry_run);
        /// assert_eq!(counted.outcomes + counted.heuristics + counted.anti_patterns + counted.memories, 0);
        /// # Ok(())
        /// # }
        /// ```
        forget(ForgetRequest) -> ForgetResponse, never;

        /// Counts what the namespace has learned: episodes, rules, mistakes,
        /// memories per type, outcomes per task type.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> Result<(), engram_client::Error> {
        /// # let engram = engram_client::Engram::from_env().await?;
        /// use engram_client::proto::{GetStatsRequest, Scope};
        ///
        /// let stats = engram.learning().get_stats(GetStatsRequest { scope: Some(Scope::new("docs-empty")) }).await?;
        /// assert_eq!(stats.total_episodes, 0);
        /// # Ok(())
        /// # }
        /// ```
        get_stats(GetStatsRequest) -> GetStatsResponse, safe;
    }
}
