//! Starting episodes and appending their steps, as units of work.

use std::collections::HashMap;
use std::sync::Arc;

use crate::domain::episode::{Appended, Episode, NewEpisode, Step, StepProblem, StepWindow};
use crate::domain::{Micros, RequestKey, Scope};
use crate::engine::episode_learning::running;
use crate::engine::learning::{JudgedSteps, judge_steps};
use crate::engine::unit::{self, transact};
use crate::error::{Error, FieldViolation, Result};
use crate::store::Store;
use crate::store::tx::Tx;

/// Starts an episode; with a request id already used in the namespace for
/// the same episode, returns that episode.
pub async fn start_episode(
    store: &dyn Store,
    new: NewEpisode,
    request: Option<RequestKey>,
    now: Micros,
) -> Result<Episode> {
    let call = Arc::new((new, request));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (new, request) = &*call;
            start(tx, new, request.as_ref(), now).await
        })
    })
    .await
}

async fn start(
    tx: &mut dyn Tx,
    new: &NewEpisode,
    request: Option<&RequestKey>,
    now: Micros,
) -> Result<Episode> {
    let namespace = &new.scope.namespace;
    if let Some(id) = unit::replay::<String>(tx, namespace, request).await? {
        return tx.episode(&new.scope, &id).await?.ok_or_else(|| {
            Error::Internal(format!("episode {id} of a replayed request vanished"))
        });
    }
    let episode = tx.insert_episode(new, now).await?;
    unit::remember(tx, namespace, request, &episode.id, now).await?;
    Ok(episode)
}

/// Appends `steps` to a running episode visible from `scope`. Each step must
/// number above the one before and the episode may not pass its step limit
/// (a step resent with the number and content of a stored one is counted as
/// repeated); a step that breaks either is rejected. With `all_or_nothing`,
/// any rejection fails the whole call (INVALID_ARGUMENT naming the step) and
/// nothing is stored.
pub async fn append_steps(
    store: &dyn Store,
    scope: Scope,
    episode_id: String,
    steps: Vec<Step>,
    all_or_nothing: bool,
    now: Micros,
) -> Result<Appended> {
    let call = Arc::new((scope, episode_id, steps));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (scope, id, steps) = &*call;
            append(tx, scope, id, steps.clone(), all_or_nothing, now).await
        })
    })
    .await
}

async fn append(
    tx: &mut dyn Tx,
    scope: &Scope,
    id: &str,
    steps: Vec<Step>,
    all_or_nothing: bool,
    now: Micros,
) -> Result<Appended> {
    // The steps of one episode are numbered one append at a time.
    tx.lock(&format!("episode/{id}")).await?;
    let mut episode = running(tx.episode(scope, id).await?, id)?;
    // Steps numbered at or below the last stored one may be resent copies.
    let resent: Vec<i32> = steps
        .iter()
        .map(|step| step.number)
        .filter(|number| *number <= episode.last_step)
        .collect();
    let stored = if resent.is_empty() {
        Vec::new()
    } else {
        tx.stored_steps(episode.seq, &resent).await?
    };
    let JudgedSteps {
        accepted,
        rejections,
        repeated,
        last,
        count,
    } = judge_steps(episode.last_step, episode.step_count, steps, &stored);
    if all_or_nothing && !rejections.is_empty() {
        return Err(Error::InvalidArgument(
            rejections
                .into_iter()
                .map(|r| FieldViolation {
                    field: match r.problem {
                        StepProblem::Misnumbered => format!("steps[{}].step_number", r.index),
                        StepProblem::TooMany => "steps".to_owned(),
                    },
                    description: r.reason,
                })
                .collect(),
        ));
    }
    if !accepted.is_empty() {
        tx.insert_steps(episode.seq, &accepted).await?;
        episode.step_count = count;
        episode.last_step = last;
        episode.update_time = now;
        episode.version += 1;
        tx.save_step_progress(&episode).await?;
    }
    Ok(Appended {
        accepted: accepted.len() + repeated,
        repeated,
        rejections,
        step_count: count,
    })
}

/// Refuses, as a bad argument of `field(i)`, each of `episode_ids` (by
/// position; empty ones name none) that `scope` does not see: what a write
/// names as its source must be there.
pub async fn check_named(
    store: &dyn Store,
    scope: &Scope,
    episode_ids: &[&str],
    field: impl Fn(usize) -> String,
) -> Result<()> {
    let no_steps = StepWindow { after: 0, limit: 0 };
    let mut seen: HashMap<&str, bool> = HashMap::new();
    let mut unseen = Vec::new();
    for (i, &id) in episode_ids.iter().enumerate() {
        if id.is_empty() {
            continue;
        }
        let visible = match seen.get(id) {
            Some(visible) => *visible,
            None => {
                let visible = store.get_episode(scope, id, no_steps).await?.is_some();
                seen.insert(id, visible);
                visible
            }
        };
        if !visible {
            unseen.push(FieldViolation {
                field: field(i),
                description: format!("names no episode visible from the scope: {id}"),
            });
        }
    }
    match unseen.is_empty() {
        true => Ok(()),
        false => Err(Error::InvalidArgument(unseen)),
    }
}
