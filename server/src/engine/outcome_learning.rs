//! Recording an outcome and learning from it (DESIGN §5), as one unit of
//! work: the outcome, the heuristic of its strategy group and the
//! anti-pattern of its error are decided here and written through the
//! store's primitives in the same transaction.

use std::sync::Arc;

use crate::domain::outcome::{
    AgentScope, AgentScopeSet, AntiPattern, Change, Heuristic, NewOutcome, Owner, Recorded,
    TaskOutcome,
};
use crate::domain::{Micros, RequestKey};
use crate::embed::Embedder;
use crate::engine::outcomes::{
    MIN_FAILURES, MIN_SUCCESS_RATE, RECENT_OUTCOMES, StrategyVectors, agent_scope_or_default,
    may_learn, similar_errors,
};
use crate::engine::unit::{self, transact};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::store::tx::{NewAntiPattern, NewHeuristic, Tx};

/// How long RecordOutcome waits for strategy vectors (DESIGN §5) before it
/// compares strategies by their words only.
const STRATEGY_EMBEDDING_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The vectors of the strategies a new outcome's is compared with, its own
/// included; words only (and a warning) without an embedder, or when it
/// fails or takes longer than [`STRATEGY_EMBEDDING_WAIT`]: an outcome is
/// never refused or held up for long for want of a vector.
pub async fn strategy_vectors(
    store: &dyn Store,
    embedder: Option<&Embedder>,
    new: &NewOutcome,
) -> Result<StrategyVectors> {
    let Some(embedder) = embedder else {
        return Ok(StrategyVectors::none());
    };
    let mut texts = store
        .compared_strategies(&Owner::from(&new.scope), &new.task_type, RECENT_OUTCOMES)
        .await?;
    texts.push(new.strategy.clone());
    texts.sort_unstable();
    texts.dedup();
    match tokio::time::timeout(STRATEGY_EMBEDDING_WAIT, embedder.embed_cached(&texts)).await {
        Ok(Ok(vectors)) => Ok(StrategyVectors::new(
            texts.into_iter().zip(vectors).collect(),
        )),
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "embedding strategies failed; comparing their words only");
            Ok(StrategyVectors::none())
        }
        Err(_) => {
            tracing::warn!(
                wait = ?STRATEGY_EMBEDDING_WAIT,
                "embedding strategies took too long; comparing their words only"
            );
            Ok(StrategyVectors::none())
        }
    }
}

/// Records an outcome and learns from it, in one transaction; refused
/// (FailedPrecondition, nothing stored) outside the agent's learning scope.
/// With a request id already used for the same outcome, returns the first
/// answer and learns nothing twice.
pub async fn record_outcome(
    store: &dyn Store,
    new: NewOutcome,
    request: Option<RequestKey>,
    vectors: StrategyVectors,
    now: Micros,
) -> Result<Recorded> {
    let (new, request, vectors) = (Arc::new(new), Arc::new(request), Arc::new(vectors));
    transact(store, move |tx| {
        let (new, request, vectors) = (new.clone(), request.clone(), vectors.clone());
        Box::pin(async move { record(tx, &new, request.as_ref().as_ref(), &vectors, now).await })
    })
    .await
}

async fn record(
    tx: &mut dyn Tx,
    new: &NewOutcome,
    request: Option<&RequestKey>,
    vectors: &StrategyVectors,
    now: Micros,
) -> Result<Recorded> {
    let (namespace, agent_id) = (&new.scope.namespace, &new.scope.agent_id);
    if let Some(first) = unit::replay(tx, namespace, request).await? {
        return Ok(first);
    }
    let scope = agent_scope_or_default(
        tx.agent_scope(namespace, agent_id).await?,
        namespace,
        agent_id,
    );
    if !may_learn(
        &scope.can_learn,
        &scope.cannot_learn,
        &new.task_type,
        &new.task,
    ) {
        return Err(Error::FailedPrecondition(format!(
            "agent {agent_id} may not learn from this task (task type {}); see its agent scope",
            new.task_type
        )));
    }
    // Whether the outcome joins a strategy group or starts one depends on
    // the groups and outcomes already stored: one decision at a time per
    // task type of an owner, or two replicas could each start the group.
    tx.lock(&learning_key(new)).await?;
    let outcome = tx.insert_outcome(new, now).await?;
    let recent = tx
        .recent_outcomes(&outcome.owner(), &outcome.task_type, RECENT_OUTCOMES)
        .await?;
    let heuristic =
        learn_heuristic(tx, &outcome, &recent, scope.min_occurrences, vectors, now).await?;
    let anti_pattern = if !outcome.success && !outcome.error.trim().is_empty() {
        learn_anti_pattern(tx, &outcome, &recent, vectors, now).await?
    } else {
        None
    };
    let recorded = Recorded {
        outcome,
        heuristic,
        anti_pattern,
    };
    unit::remember(tx, namespace, request, &recorded, now).await?;
    Ok(recorded)
}

/// What outcomes of the same owner and task type serialise on.
fn learning_key(new: &NewOutcome) -> String {
    // Lengths first, so no choice of names makes two keys equal.
    let parts = [
        &new.scope.namespace,
        &new.scope.agent_id,
        &new.scope.project_id,
        &new.task_type,
    ];
    let mut key = String::from("outcomes");
    for part in parts {
        key.push_str(&format!("/{}:{part}", part.len()));
    }
    key
}

/// Creates or updates the heuristic of the outcome's strategy group. An
/// existing group takes the outcome as one more piece of evidence; a new
/// group needs enough similar outcomes among the agent's recent ones.
async fn learn_heuristic(
    tx: &mut dyn Tx,
    outcome: &TaskOutcome,
    recent: &[TaskOutcome],
    min_occurrences: i64,
    vectors: &StrategyVectors,
    now: Micros,
) -> Result<Option<(Heuristic, Change)>> {
    let groups = tx
        .heuristics_of(&outcome.owner(), &outcome.task_type)
        .await?;
    let joined = vectors.best_match(
        &outcome.strategy,
        groups.iter().map(|(h, key)| (h.seq, key.as_str())),
    );
    if let Some((mut group, _)) = groups.into_iter().find(|(h, _)| Some(h.seq) == joined) {
        group.strategy = outcome.strategy.clone();
        group.occurrence_count += 1;
        group.success_count += i64::from(outcome.success);
        group.confidence = group.success_count as f64 / group.occurrence_count as f64;
        group.last_validated_time = now;
        group.update_time = now;
        group.version += 1;
        return Ok(Some((tx.update_heuristic(&group).await?, Change::Updated)));
    }
    let similar: Vec<bool> = recent
        .iter()
        .filter(|r| vectors.similar(&outcome.strategy, &r.strategy))
        .map(|r| r.success)
        .collect();
    let occurrences = i64::try_from(similar.len()).unwrap_or(i64::MAX);
    let successes = i64::try_from(similar.iter().filter(|s| **s).count()).unwrap_or(i64::MAX);
    let confidence = successes as f64 / occurrences.max(1) as f64;
    if occurrences < min_occurrences || confidence <= MIN_SUCCESS_RATE {
        return Ok(None);
    }
    let new = NewHeuristic {
        owner: outcome.owner(),
        task_type: outcome.task_type.clone(),
        strategy: outcome.strategy.clone(),
        match_key: outcome.strategy.clone(),
        confidence,
        occurrence_count: occurrences,
        success_count: successes,
    };
    Ok(Some((
        tx.insert_heuristic(&new, now).await?,
        Change::Created,
    )))
}

/// Creates or updates the anti-pattern of the failed outcome's error: an
/// existing one counts one more failure (and keeps the most general
/// wording); a new one needs repeated similar failures among recent outcomes.
async fn learn_anti_pattern(
    tx: &mut dyn Tx,
    outcome: &TaskOutcome,
    recent: &[TaskOutcome],
    vectors: &StrategyVectors,
    now: Micros,
) -> Result<Option<(AntiPattern, Change)>> {
    let owner = outcome.owner();
    let heuristics = tx.heuristics_of(&owner, &outcome.task_type).await?;
    let (alternative, alternative_id) = better_alternative(outcome, &heuristics, vectors);
    let error = outcome.error.trim();
    let patterns = tx.anti_patterns_of(&owner, &outcome.task_type).await?;
    if let Some(mut pattern) = patterns
        .into_iter()
        .find(|p| similar_errors(&outcome.error, &p.error))
    {
        pattern.strategy = outcome.strategy.clone();
        pattern.occurrence_count += 1;
        if error.chars().count() < pattern.error.chars().count() {
            pattern.error = error.to_owned();
        }
        pattern.better_alternative = alternative;
        pattern.better_alternative_heuristic_id = alternative_id;
        pattern.last_seen_time = now;
        pattern.update_time = now;
        pattern.version += 1;
        return Ok(Some((
            tx.update_anti_pattern(&pattern).await?,
            Change::Updated,
        )));
    }
    let failures: Vec<&str> = recent
        .iter()
        .filter(|r| !r.success && similar_errors(&outcome.error, &r.error))
        .map(|r| r.error.trim())
        .collect();
    let failed = i64::try_from(failures.len()).unwrap_or(i64::MAX);
    if failed < MIN_FAILURES {
        return Ok(None);
    }
    // The most general wording: the shortest of the similar errors.
    let general = failures
        .iter()
        .min_by_key(|e| e.chars().count())
        .copied()
        .unwrap_or(error);
    let new = NewAntiPattern {
        owner,
        task_type: outcome.task_type.clone(),
        strategy: outcome.strategy.clone(),
        error: general.to_owned(),
        occurrence_count: failed,
        better_alternative: alternative,
        better_alternative_heuristic_id: alternative_id,
    };
    Ok(Some((
        tx.insert_anti_pattern(&new, now).await?,
        Change::Created,
    )))
}

/// The strategy (and heuristic id) to suggest instead of a failing one: the
/// most confident heuristic of the task type that works more often than not
/// and is not the failing strategy itself. Empty when there is none.
fn better_alternative(
    outcome: &TaskOutcome,
    heuristics: &[(Heuristic, String)],
    vectors: &StrategyVectors,
) -> (String, String) {
    heuristics
        .iter()
        .map(|(h, _)| h)
        .filter(|h| {
            h.confidence > MIN_SUCCESS_RATE && !vectors.similar(&outcome.strategy, &h.strategy)
        })
        // Of equals, the newest: they come oldest first and max_by keeps the last.
        .max_by(|a, b| a.confidence.total_cmp(&b.confidence))
        .map(|h| (h.strategy.clone(), h.id.clone()))
        .unwrap_or_default()
}

/// The lock key of an agent's learning scope; lengths first, so no choice
/// of names makes two keys equal.
fn agent_scope_key(namespace: &str, agent_id: &str) -> String {
    format!("agent-scope/{}:{namespace}/{agent_id}", namespace.len())
}

/// Replaces an agent's learning scope; with an `etag`, only if it is still
/// the current one (else `Aborted`).
pub async fn set_agent_scope(
    store: &dyn Store,
    wanted: AgentScope,
    etag: Option<String>,
    now: Micros,
) -> Result<AgentScope> {
    let call = Arc::new((wanted, etag));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (wanted, etag) = &*call;
            let (namespace, agent_id) = (&wanted.namespace, &wanted.agent_id);
            // Two sets of one agent's scope take turns, so the second
            // checks its etag against (and numbers its version after) the
            // first's.
            tx.lock(&agent_scope_key(namespace, agent_id)).await?;
            let current = agent_scope_or_default(
                tx.agent_scope(namespace, agent_id).await?,
                namespace,
                agent_id,
            );
            if let Some(etag) = etag
                && *etag != current.etag()
            {
                return Err(Error::Aborted(format!(
                    "the agent scope of {agent_id} has changed; read it again and retry"
                )));
            }
            let mut scope = wanted.clone();
            scope.set = Some(AgentScopeSet {
                create_time: current.set.map_or(now, |set| set.create_time),
                update_time: now,
                version: current.set.map_or(1, |set| set.version + 1),
            });
            tx.save_agent_scope(&scope).await?;
            Ok(scope)
        })
    })
    .await
}
