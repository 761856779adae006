//! Episodes: starting them, appending their steps, completing them (and
//! learning from them), reading and listing them.

use super::Engine;
use crate::domain::episode::{
    Appended, Episode, EpisodeQuery, Learned, NewEpisode, Outcome, Step, StepWindow,
};
use crate::domain::{Micros, RequestKey, Scope};
use crate::engine::{episode_learning, episodes};
use crate::error::{Error, Result};

impl Engine {
    /// Starts an episode (see [`episodes::start_episode`]).
    pub async fn start_episode(
        &self,
        new: NewEpisode,
        request: Option<RequestKey>,
        now: Micros,
    ) -> Result<Episode> {
        episodes::start_episode(&*self.store, new, request, now).await
    }

    /// Appends steps to a running episode (see [`episodes::append_steps`]).
    pub async fn append_steps(
        &self,
        scope: Scope,
        episode_id: String,
        steps: Vec<Step>,
        all_or_nothing: bool,
        now: Micros,
    ) -> Result<Appended> {
        episodes::append_steps(&*self.store, scope, episode_id, steps, all_or_nothing, now).await
    }

    /// Completes an episode and learns from it (see
    /// [`episode_learning::complete_episode`]).
    pub async fn complete_episode(
        &self,
        scope: Scope,
        id: String,
        outcome: Outcome,
        now: Micros,
    ) -> Result<(Episode, Learned)> {
        episode_learning::complete_episode(&*self.store, scope, id, outcome, now).await
    }

    /// The episode `id` visible from `scope`, with the steps of `window`
    /// (`NotFound` otherwise).
    pub async fn get_episode(
        &self,
        scope: &Scope,
        id: &str,
        window: StepWindow,
    ) -> Result<Episode> {
        self.store
            .get_episode(scope, id, window)
            .await?
            .ok_or_else(|| Error::NotFound(format!("episode {id} not found")))
    }

    /// Refuses, as a bad argument of `field(i)`, each of `episode_ids` (by
    /// position; empty ones name none) that the scope does not see.
    pub async fn check_episodes(
        &self,
        scope: &Scope,
        episode_ids: &[&str],
        field: impl Fn(usize) -> String,
    ) -> Result<()> {
        episodes::check_named(&*self.store, scope, episode_ids, field).await
    }

    /// A page of the episodes `query` asks for.
    pub async fn list_episodes(&self, query: &EpisodeQuery) -> Result<Vec<Episode>> {
        self.store.list_episodes(query).await
    }
}
