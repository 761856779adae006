//! Consolidation (DESIGN §5): turning a namespace's completed episodes into
//! global rules — by the rules, or by asking an LLM when one is configured,
//! falling back to the rules when it fails.

use crate::domain::episode::Consolidation;
use crate::domain::now_micros;
use crate::engine::episode_learning;
use crate::engine::learning::{
    LLM_CONSOLIDATION_EPISODES, LLM_CONSOLIDATION_INSTRUCTIONS, LLM_CONSOLIDATION_SCHEMA_NAME,
    consolidated_rules, consolidation_prompt, consolidation_schema,
};
use crate::error::{Error, Result};
use crate::llm::LlmClient;
use crate::store::Store;

/// How a consolidation is asked to run, and how it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsolidateMode {
    /// With the LLM when one is configured, else by the rules.
    Auto,
    /// By the rules.
    Rules,
    /// With the LLM (which must be configured).
    Llm,
}

/// A consolidation that ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Consolidated {
    /// How it ran: [`ConsolidateMode::Rules`] or [`ConsolidateMode::Llm`].
    pub mode: ConsolidateMode,
    pub consolidation: Consolidation,
    /// Why the LLM consolidation failed, when the rules ran in its place.
    pub fallback: Option<String>,
}

/// Consolidates `namespace` as `mode` asks; without `force`, only if an
/// episode was completed since the last consolidation (else `None`). An
/// LLM consolidation that fails is done again by the rules, forced, with
/// the reason kept.
pub async fn consolidate(
    store: &dyn Store,
    llm: Option<&LlmClient>,
    namespace: &str,
    mode: ConsolidateMode,
    force: bool,
) -> Result<Option<Consolidated>> {
    let use_llm = match mode {
        ConsolidateMode::Rules => false,
        ConsolidateMode::Llm if llm.is_none() => {
            return Err(Error::FailedPrecondition(
                "no LLM is configured on this server; use mode RULES or AUTO".into(),
            ));
        }
        _ => llm.is_some(),
    };
    let now = now_micros();
    if let Some(llm) = llm.filter(|_| use_llm) {
        if !force
            && !episode_learning::consolidation_pending(store.learning_progress(namespace).await?)
        {
            return Ok(None);
        }
        return Ok(Some(match with_llm(store, llm, namespace).await {
            Ok(consolidation) => Consolidated {
                mode: ConsolidateMode::Llm,
                consolidation,
                fallback: None,
            },
            Err(why) => {
                tracing::warn!(error = %why, "LLM consolidation failed; consolidating with the rules");
                let consolidation =
                    episode_learning::consolidate(store, namespace.to_owned(), true, now_micros())
                        .await?
                        .unwrap_or_default();
                Consolidated {
                    mode: ConsolidateMode::Rules,
                    consolidation,
                    fallback: Some(why),
                }
            }
        }));
    }
    let ran = episode_learning::consolidate(store, namespace.to_owned(), force, now).await?;
    Ok(ran.map(|consolidation| Consolidated {
        mode: ConsolidateMode::Rules,
        consolidation,
        fallback: None,
    }))
}

/// An LLM consolidation: the latest episodes to the model, its rules back
/// as `[CONSOLIDATED]` global rules. `Err` says why it failed.
async fn with_llm(
    store: &dyn Store,
    llm: &LlmClient,
    namespace: &str,
) -> std::result::Result<Consolidation, String> {
    let episodes = store
        .recent_completed_episodes(namespace, LLM_CONSOLIDATION_EPISODES)
        .await
        .map_err(|_| "could not read the episodes".to_owned())?;
    if episodes.is_empty() {
        return Err("no completed episode to consolidate".into());
    }
    let reply = llm
        .chat_json(
            LLM_CONSOLIDATION_INSTRUCTIONS,
            &consolidation_prompt(&episodes),
            LLM_CONSOLIDATION_SCHEMA_NAME,
            consolidation_schema(),
        )
        .await
        .map_err(|e| e.to_string())?;
    let rules = consolidated_rules(&reply)?;
    episode_learning::add_consolidated_rules(
        store,
        namespace.to_owned(),
        rules,
        episodes.len(),
        now_micros(),
    )
    .await
    .map_err(|_| "could not store the rules".to_owned())
}
