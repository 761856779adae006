//! Learning from episodes (DESIGN §4), as units of work: completing an
//! episode with the rules, lessons and mistake cards it teaches, recording a
//! mistake, and consolidation. Decided here, written through the store's
//! primitives in one transaction each.

use std::sync::Arc;

use crate::domain::episode::{
    Consolidation, Episode, EpisodeStatus, Learned, MistakeCard, MistakeReport, Outcome, RuleOrigin,
};
use crate::domain::{Micros, RequestKey, Scope};
use crate::engine::learning::{
    CARD_TEXT_CHARS, CARDS_KEPT, GLOBAL, GLOBAL_RULES_KEPT, HIGH_SCORE, RULES_KEPT_PER_TASK,
    consolidates_at, cut, high_score_rule, rules_from,
};
use crate::engine::unit::{self, transact};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::store::tx::{CardKey, LearningProgress, Lesson, NewMistakeCard, Tx};

/// Completes a running episode visible from `scope` and learns from it, in
/// one transaction: its rules, lessons and mistake cards, and every
/// `CONSOLIDATE_EVERY`-th completion of the namespace a consolidation.
pub async fn complete_episode(
    store: &dyn Store,
    scope: Scope,
    id: String,
    outcome: Outcome,
    now: Micros,
) -> Result<(Episode, Learned)> {
    let (scope, id, outcome) = (Arc::new(scope), Arc::new(id), Arc::new(outcome));
    transact(store, move |tx| {
        let (scope, id, outcome) = (scope.clone(), id.clone(), outcome.clone());
        Box::pin(async move { complete(tx, &scope, &id, &outcome, now).await })
    })
    .await
}

async fn complete(
    tx: &mut dyn Tx,
    scope: &Scope,
    id: &str,
    outcome: &Outcome,
    now: Micros,
) -> Result<(Episode, Learned)> {
    let namespace = &scope.namespace;
    // Rules, cards and the completion count are the namespace's: one
    // completion at a time decides about them.
    tx.lock(&learning_key(namespace)).await?;
    let mut episode = running(tx.episode(scope, id).await?, id)?;
    episode.status = EpisodeStatus::Completed;
    episode.outcome = Some(outcome.clone());
    episode.complete_time = Some(now);
    episode.update_time = now;
    episode.version += 1;
    let completed = tx.finish_episode(&episode).await?;

    let mut learned = Learned::default();
    for (text, origin) in rules_from(outcome) {
        if tx
            .insert_rule(namespace, &episode.task_id, &text, origin, now)
            .await?
            .is_some()
        {
            learned.rules_added.push(text);
        }
    }
    tx.trim_rules(namespace, &episode.task_id, RULES_KEPT_PER_TASK)
        .await?;
    for (kind, texts) in [
        (Lesson::Mistake, &outcome.mistakes),
        (Lesson::Success, &outcome.successes),
    ] {
        for text in texts.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            let last_seen = tx.tick(namespace).await?;
            tx.count_lesson(namespace, kind, text, last_seen, now)
                .await?;
        }
    }
    for report in &outcome.mistake_cards {
        merge_card(tx, namespace, &episode.task_id, report, &episode.id, now).await?;
        learned.mistake_cards_merged += 1;
    }
    tx.trim_mistake_cards(namespace, CARDS_KEPT).await?;

    let progress = tx.count_completion(namespace).await?;
    if consolidates_at(progress.completed_episodes) {
        consolidate_rules(tx, namespace, now).await?;
        learned.consolidated = true;
    }
    Ok((completed, learned))
}

/// The episode, if it is still RUNNING (only such an episode takes steps or
/// a completion).
pub fn running(episode: Option<Episode>, id: &str) -> Result<Episode> {
    let episode = episode.ok_or_else(|| Error::NotFound(format!("episode {id} not found")))?;
    if episode.status != EpisodeStatus::Running {
        let status = match episode.status {
            EpisodeStatus::Running => "RUNNING",
            EpisodeStatus::Completed => "COMPLETED",
            EpisodeStatus::Abandoned => "ABANDONED",
        };
        return Err(Error::FailedPrecondition(format!(
            "episode {id} is {status}; only a RUNNING episode takes steps or a completion"
        )));
    }
    Ok(episode)
}

/// Whether an episode was completed since the namespace's last
/// consolidation.
pub fn consolidation_pending(progress: LearningProgress) -> bool {
    progress.completed_episodes > progress.last_consolidation
}

/// What the learning of a namespace (rules, lessons, cards, consolidation)
/// serialises on.
fn learning_key(namespace: &str) -> String {
    format!("learning/{namespace}")
}

/// Merges one sighting of a mistake into its card (DESIGN §4): a new card,
/// or seen_count + 1 with the newest evidence, lesson and episode (an empty
/// evidence or lesson keeps the card's).
async fn merge_card(
    tx: &mut dyn Tx,
    namespace: &str,
    task_id: &str,
    report: &MistakeReport,
    episode_id: &str,
    now: Micros,
) -> Result<MistakeCard> {
    let key = CardKey {
        mistake_type: report.mistake_type.trim().to_owned(),
        task_id: task_id.to_owned(),
        worker_id: report.worker_id.trim().to_owned(),
        correct_decision: cut(report.correct_decision.trim(), CARD_TEXT_CHARS),
    };
    let evidence = cut(report.evidence.trim(), CARD_TEXT_CHARS);
    let lesson = cut(report.lesson.trim(), CARD_TEXT_CHARS);
    let sighting = tx.tick(namespace).await?;
    match tx.mistake_card(namespace, &key).await? {
        Some(mut card) => {
            card.seen_count += 1;
            if !evidence.is_empty() {
                card.evidence = evidence;
            }
            if !lesson.is_empty() {
                card.lesson = lesson;
            }
            card.last_seen_episode_id = episode_id.to_owned();
            card.last_seen = sighting;
            card.update_time = now;
            card.version += 1;
            tx.update_mistake_card(&card).await
        }
        None => {
            let new = NewMistakeCard {
                namespace: namespace.to_owned(),
                key,
                evidence,
                lesson,
                episode_id: episode_id.to_owned(),
                last_seen: sighting,
            };
            tx.insert_mistake_card(&new, now).await
        }
    }
}

/// Records a mistake outside an episode's completion (optionally naming an
/// episode visible from `scope`); returns the card and whether it is strong
/// enough to be kept. With a request id already used for the same mistake,
/// returns the first answer and counts nothing twice.
pub async fn record_mistake(
    store: &dyn Store,
    scope: Scope,
    task_id: String,
    report: MistakeReport,
    episode_id: Option<String>,
    request: Option<RequestKey>,
    now: Micros,
) -> Result<(MistakeCard, bool)> {
    let call = Arc::new((scope, task_id, report, episode_id, request));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (scope, task_id, report, episode_id, request) = &*call;
            mistake(
                tx,
                scope,
                task_id,
                report,
                episode_id.as_deref(),
                request.as_ref(),
                now,
            )
            .await
        })
    })
    .await
}

async fn mistake(
    tx: &mut dyn Tx,
    scope: &Scope,
    task_id: &str,
    report: &MistakeReport,
    episode_id: Option<&str>,
    request: Option<&RequestKey>,
    now: Micros,
) -> Result<(MistakeCard, bool)> {
    let namespace = &scope.namespace;
    if let Some(first) = unit::replay(tx, namespace, request).await? {
        return Ok(first);
    }
    tx.lock(&learning_key(namespace)).await?;
    let episode_id = match episode_id {
        Some(id) => {
            tx.episode(scope, id)
                .await?
                .ok_or_else(|| Error::NotFound(format!("episode {id} not found")))?
                .id
        }
        None => String::new(),
    };
    let card = merge_card(tx, namespace, task_id, report, &episode_id, now).await?;
    tx.trim_mistake_cards(namespace, CARDS_KEPT).await?;
    let kept = tx.mistake_card_exists(&card.id).await?;
    let answer = (card, kept);
    unit::remember(tx, namespace, request, &answer, now).await?;
    Ok(answer)
}

/// Runs RULES consolidation of the namespace; without `force`, only if an
/// episode was completed since the last one (else `None`).
pub async fn consolidate(
    store: &dyn Store,
    namespace: String,
    force: bool,
    now: Micros,
) -> Result<Option<Consolidation>> {
    let namespace = Arc::new(namespace);
    transact(store, move |tx| {
        let namespace = namespace.clone();
        Box::pin(async move {
            tx.lock(&learning_key(&namespace)).await?;
            let progress = tx.learning_progress(&namespace).await?;
            if !force && !consolidation_pending(progress) {
                return Ok(None);
            }
            consolidate_rules(tx, &namespace, now).await.map(Some)
        })
    })
    .await
}

/// RULES consolidation: the namespace's most recent high-scoring episodes
/// become `[HIGH SCORE]` global rules, de-duplicated; the newest are kept.
async fn consolidate_rules(tx: &mut dyn Tx, namespace: &str, now: Micros) -> Result<Consolidation> {
    let episodes = tx
        .completed_episodes(namespace, HIGH_SCORE, GLOBAL_RULES_KEPT)
        .await?;
    let rules = episodes.iter().rev().map(|episode| {
        let (score, summary) = episode
            .outcome
            .as_ref()
            .map_or((0.0, ""), |o| (o.score, o.summary.as_str()));
        let summary = if summary.trim().is_empty() {
            &episode.description
        } else {
            summary
        };
        high_score_rule(score, summary)
    });
    // Oldest first, so the newest episode's rule is the newest rule.
    let rules: Vec<String> = rules.collect();
    add_global_rules(
        tx,
        namespace,
        &rules,
        RuleOrigin::HighScore,
        episodes.len(),
        now,
    )
    .await
}

/// Writes rules from an LLM consolidation as global rules (de-duplicated,
/// the newest kept) and marks the namespace consolidated.
pub async fn add_consolidated_rules(
    store: &dyn Store,
    namespace: String,
    rules: Vec<String>,
    episodes_considered: usize,
    now: Micros,
) -> Result<Consolidation> {
    let call = Arc::new((namespace, rules));
    transact(store, move |tx| {
        let call = call.clone();
        Box::pin(async move {
            let (namespace, rules) = &*call;
            tx.lock(&learning_key(namespace)).await?;
            // The model lists the most useful first: insert it last, so it
            // is the newest.
            let rules: Vec<String> = rules.iter().rev().cloned().collect();
            add_global_rules(
                tx,
                namespace,
                &rules,
                RuleOrigin::Consolidated,
                episodes_considered,
                now,
            )
            .await
        })
    })
    .await
}

/// Adds `rules` (oldest first) as global rules, keeps the newest, and marks
/// the namespace consolidated.
async fn add_global_rules(
    tx: &mut dyn Tx,
    namespace: &str,
    rules: &[String],
    origin: RuleOrigin,
    episodes_considered: usize,
    now: Micros,
) -> Result<Consolidation> {
    let mut consolidation = Consolidation {
        episodes_considered,
        ..Consolidation::default()
    };
    for text in rules {
        if let Some(rule) = tx.insert_rule(namespace, GLOBAL, text, origin, now).await? {
            consolidation.rules.push(rule);
        }
    }
    tx.trim_rules(namespace, GLOBAL, GLOBAL_RULES_KEPT).await?;
    tx.mark_consolidated(namespace).await?;
    Ok(consolidation)
}
