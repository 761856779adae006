//! Domain → protobuf conversions for responses.

use engram::v1 as pb;
use prost_types::Timestamp;

use crate::domain::dates::{self, Grain, TimeSpan};
use crate::domain::entity::Entity;
use crate::domain::episode::{
    Episode, Learned, MistakeCard, MistakeReport, Outcome, Stats, Step, TaskRule,
};
use crate::domain::outcome::{AgentScope, AntiPattern, Change, Heuristic, Recorded, TaskOutcome};
use crate::domain::provenance::Provenance;
use crate::domain::{Created, Memory, MemoryLink, Micros, Revision, Scope};
use crate::engine::context::{ContextBlock, ItemKind};
use crate::engine::memories::Detailed;
use crate::engine::search::Hit;
use crate::engine::watch::Event;

/// Microseconds since the epoch as a protobuf timestamp.
pub fn timestamp(micros: Micros) -> Timestamp {
    Timestamp {
        seconds: micros.div_euclid(1_000_000),
        // In [0, 999_999_000], so it always fits an i32.
        nanos: i32::try_from(micros.rem_euclid(1_000_000) * 1_000).unwrap_or(0),
    }
}

pub fn scope(scope: Scope) -> pb::Scope {
    pb::Scope {
        namespace: scope.namespace,
        agent_id: scope.agent_id,
        user_id: scope.user_id,
        project_id: scope.project_id,
        session_id: scope.session_id,
    }
}

/// An entity as the API shows it.
pub fn entity(entity: Entity) -> pb::Entity {
    pb::Entity {
        id: entity.id,
        name: entity.name,
        entity_type: entity.entity_type.code(),
        aliases: entity.aliases,
        memory_count: entity.memory_count,
        create_time: Some(timestamp(entity.create_time)),
        last_mention_time: Some(timestamp(entity.last_mention_time)),
    }
}

pub fn memory(memory: Memory) -> pb::Memory {
    let etag = memory.etag();
    let time_mentions = dates::find(&memory.content, memory.occurred_at)
        .into_iter()
        .map(time_mention)
        .collect();
    pb::Memory {
        id: memory.id,
        scope: Some(scope(memory.scope)),
        level: memory.level.code(),
        memory_type: memory.memory_type.code(),
        content: memory.content,
        summary: memory.summary,
        tags: memory.tags,
        metadata: memory.metadata.into_iter().collect(),
        importance: memory.importance,
        confidence: memory.confidence,
        source: memory.source.code(),
        seen_count: memory.seen_count,
        access_count: memory.access_count,
        create_time: Some(timestamp(memory.create_time)),
        update_time: Some(timestamp(memory.update_time)),
        last_access_time: memory.last_access_time.map(timestamp),
        expire_time: memory.expire_time.map(timestamp),
        etag,
        occurred_at: Some(timestamp(memory.occurred_at)),
        origin_session_id: memory.origin_session_id,
        valid_from: Some(timestamp(memory.valid_from)),
        valid_to: memory.valid_to.map(timestamp),
        invalidated_by: memory.invalidated_by,
        invalidation_reason: memory.invalidation_reason,
        links: Vec::new(),
        time_mentions,
        provenance: None,
    }
}

/// A memory with its links and provenance (GetMemory, ExplainMemory).
pub fn detailed(detailed: Detailed) -> pb::Memory {
    pb::Memory {
        links: detailed.links.into_iter().map(link).collect(),
        provenance: detailed.provenance.map(provenance),
        ..memory(detailed.memory)
    }
}

pub fn provenance(provenance: Provenance) -> pb::Provenance {
    pb::Provenance {
        method: provenance.origin.method.code(),
        key_id: provenance.actor.key_id,
        agent_id: provenance.actor.agent_id,
        episode_id: provenance.origin.episode_id,
        transcript_sha256: provenance.origin.transcript_hash,
        transcript: provenance.origin.transcript,
        create_time: Some(timestamp(provenance.create_time)),
    }
}

/// A time a memory's content speaks of, as the API shows it.
fn time_mention(span: TimeSpan) -> pb::TimeMention {
    let grain = match span.grain {
        Grain::Day => pb::TimeGrain::Day,
        Grain::Week => pb::TimeGrain::Week,
        Grain::Month => pb::TimeGrain::Month,
        Grain::Year => pb::TimeGrain::Year,
    };
    pb::TimeMention {
        label: span.label(),
        text: span.text,
        start_time: Some(timestamp(span.start)),
        end_time: Some(timestamp(span.end)),
        grain: grain as i32,
        relative: span.relative,
    }
}

/// A link from a memory to another, as the API shows it.
pub fn link(link: MemoryLink) -> pb::MemoryLink {
    pb::MemoryLink {
        kind: link.kind.code(),
        memory_id: link.memory_id,
        reason: link.reason,
        create_time: Some(timestamp(link.create_time)),
    }
}

pub fn created(created: Created) -> pb::CreateMemoryResponse {
    pb::CreateMemoryResponse {
        result: created.result as i32,
        memory: Some(memory(created.memory)),
        invalidated_memory_ids: created.invalidated,
        conflicting_memory_ids: created.conflicting,
        near_duplicate_memory_ids: created.near_duplicates,
    }
}

pub fn hit(hit: Hit) -> pb::SearchHit {
    pb::SearchHit {
        score: hit.score,
        relevance: hit.relevance,
        semantic: hit.semantic,
        context: hit.context,
        recency: hit.recency,
        importance: hit.importance,
        memory: Some(memory(hit.memory)),
    }
}

pub fn context(block: ContextBlock) -> pb::BuildContextResponse {
    pb::BuildContextResponse {
        items: block
            .items
            .into_iter()
            .map(|item| pb::ContextItem {
                kind: match item.kind {
                    ItemKind::Memory => pb::ContextItemKind::Memory,
                    ItemKind::Preference => pb::ContextItemKind::Preference,
                    ItemKind::TaskRule => pb::ContextItemKind::TaskRule,
                    ItemKind::GlobalRule => pb::ContextItemKind::GlobalRule,
                    ItemKind::Mistake => pb::ContextItemKind::Mistake,
                    ItemKind::MistakeCard => pb::ContextItemKind::MistakeCard,
                    ItemKind::Heuristic => pb::ContextItemKind::Heuristic,
                    ItemKind::AntiPattern => pb::ContextItemKind::AntiPattern,
                    ItemKind::Episode => pb::ContextItemKind::Episode,
                } as i32,
                id: item.id,
            })
            .collect(),
        token_estimate: i32::try_from(block.token_estimate).unwrap_or(i32::MAX),
        truncated: block.truncated,
        text: block.text,
    }
}

pub fn step(step: Step) -> pb::Step {
    pb::Step {
        step_number: step.number,
        tool: step.tool,
        action: step.action,
        parameters: step.parameters,
        result: step.result,
        output: step.output,
        latency_ms: step.latency_ms,
        time: Some(timestamp(step.time)),
    }
}

fn mistake_report(report: MistakeReport) -> pb::MistakeCardInput {
    pb::MistakeCardInput {
        mistake_type: report.mistake_type,
        worker_id: report.worker_id,
        correct_decision: report.correct_decision,
        evidence: report.evidence,
        lesson: report.lesson,
    }
}

fn outcome(outcome: Outcome) -> pb::EpisodeOutcome {
    pb::EpisodeOutcome {
        score: outcome.score,
        success: outcome.success,
        summary: outcome.summary,
        mistakes: outcome.mistakes,
        successes: outcome.successes,
        mistake_cards: outcome
            .mistake_cards
            .into_iter()
            .map(mistake_report)
            .collect(),
    }
}

pub fn episode(episode: Episode) -> pb::Episode {
    let etag = episode.etag();
    let context = episode.context;
    pb::Episode {
        id: episode.id,
        scope: Some(scope(episode.scope)),
        task_id: episode.task_id,
        description: episode.description,
        task_type: episode.task_type,
        context: Some(pb::EpisodeContext {
            language: context.language,
            framework: context.framework,
            domain: context.domain,
            complexity: context.complexity,
            tags: context.tags,
        }),
        status: episode.status.code(),
        steps: episode.steps.into_iter().map(step).collect(),
        step_count: episode.step_count,
        outcome: episode.outcome.map(outcome),
        create_time: Some(timestamp(episode.create_time)),
        update_time: Some(timestamp(episode.update_time)),
        complete_time: episode.complete_time.map(timestamp),
        etag,
        last_step_number: episode.last_step,
        next_step_page_token: String::new(),
    }
}

pub fn revision(revision: Revision) -> pb::MemoryRevision {
    pb::MemoryRevision {
        memory_id: revision.memory_id,
        version: revision.version,
        action: revision.action,
        time: Some(timestamp(revision.time)),
        key_id: revision.actor.key_id,
        agent_id: revision.actor.agent_id,
        changed_fields: revision.changed_fields,
        reason: revision.reason,
        replaced_by: revision.replaced_by,
    }
}

/// A watch's event, resumed after by `cursor`.
pub fn event(event: Event, cursor: String) -> pb::MemoryEvent {
    pb::MemoryEvent {
        cursor,
        action: event.action.code(),
        time: event.time.map(timestamp),
        memory_id: event.memory_id,
        memory: event.memory.map(memory),
        superseded: event.superseded,
        key_id: event.actor.key_id,
        agent_id: event.actor.agent_id,
        changed_fields: event.changed_fields,
    }
}

pub fn learned(learned: Learned) -> pb::LearningSummary {
    pb::LearningSummary {
        rules_added: learned.rules_added,
        mistake_cards_merged: i32::try_from(learned.mistake_cards_merged).unwrap_or(i32::MAX),
        consolidated: learned.consolidated,
    }
}

fn namespace_only(namespace: String) -> pb::Scope {
    pb::Scope {
        namespace,
        ..pb::Scope::default()
    }
}

pub fn task_rule(rule: TaskRule) -> pb::TaskRule {
    pb::TaskRule {
        id: rule.id,
        scope: Some(namespace_only(rule.namespace)),
        task_id: rule.task_id,
        text: rule.text,
        origin: rule.origin.code(),
        create_time: Some(timestamp(rule.create_time)),
        update_time: Some(timestamp(rule.create_time)),
    }
}

pub fn mistake_card(card: MistakeCard) -> pb::MistakeCard {
    let etag = card.etag();
    pb::MistakeCard {
        id: card.id,
        scope: Some(namespace_only(card.namespace)),
        mistake_type: card.mistake_type,
        task_id: card.task_id,
        worker_id: card.worker_id,
        correct_decision: card.correct_decision,
        evidence: card.evidence,
        lesson: card.lesson,
        seen_count: card.seen_count,
        first_seen_episode_id: card.first_seen_episode_id,
        last_seen_episode_id: card.last_seen_episode_id,
        create_time: Some(timestamp(card.create_time)),
        update_time: Some(timestamp(card.update_time)),
        etag,
    }
}

pub fn stats(stats: Stats) -> pb::GetStatsResponse {
    pb::GetStatsResponse {
        total_episodes: stats.total_episodes,
        global_rules: stats.global_rules,
        tasks: stats
            .tasks
            .into_iter()
            .map(|t| pb::TaskStats {
                task_id: t.task_id,
                rules: t.rules,
                scored_episodes: t.scored_episodes,
                mean_score: t.mean_score,
            })
            .collect(),
        mistakes: stats.mistakes,
        mistake_cards: stats.mistake_cards,
        top_mistake_cards: stats
            .top_mistake_cards
            .into_iter()
            .map(mistake_card)
            .collect(),
        memories_per_type: stats
            .memories_per_type
            .into_iter()
            .map(|(memory_type, count)| pb::MemoryTypeCount { memory_type, count })
            .collect(),
        invalidated_memories: stats.invalidated_memories,
        outcomes: stats.task_types.iter().map(|t| t.outcomes).sum(),
        heuristics: stats.task_types.iter().map(|t| t.heuristics).sum(),
        anti_patterns: stats.task_types.iter().map(|t| t.anti_patterns).sum(),
        // Filled in by the caller, which knows the embedder and cuts the lists.
        pending_embeddings: 0,
        pending_extractions: 0,
        truncated: false,
        task_types: stats
            .task_types
            .into_iter()
            .map(|t| pb::TaskTypeStats {
                success_rate: if t.outcomes > 0 {
                    t.successes as f64 / t.outcomes as f64
                } else {
                    0.0
                },
                task_type: t.task_type,
                outcomes: t.outcomes,
                successes: t.successes,
                heuristics: t.heuristics,
                anti_patterns: t.anti_patterns,
            })
            .collect(),
    }
}

fn agent_and_project(namespace: String, agent_id: String, project_id: String) -> pb::Scope {
    pb::Scope {
        namespace,
        agent_id,
        project_id,
        ..pb::Scope::default()
    }
}

pub fn task_outcome(outcome: TaskOutcome) -> pb::Outcome {
    pb::Outcome {
        id: outcome.id,
        scope: Some(agent_and_project(
            outcome.namespace,
            outcome.agent_id,
            outcome.project_id,
        )),
        task: outcome.task,
        task_type: outcome.task_type,
        task_type_inferred: outcome.task_type_inferred,
        success: outcome.success,
        strategy: outcome.strategy,
        duration_ms: outcome.duration_ms,
        error: outcome.error,
        feedback: outcome.feedback,
        create_time: Some(timestamp(outcome.create_time)),
        update_time: Some(timestamp(outcome.create_time)),
    }
}

pub fn heuristic(h: Heuristic) -> pb::Heuristic {
    pb::Heuristic {
        etag: format!("v{}", h.version),
        id: h.id,
        scope: Some(agent_and_project(h.namespace, h.agent_id, h.project_id)),
        task_type: h.task_type,
        strategy: h.strategy,
        confidence: h.confidence,
        occurrence_count: h.occurrence_count,
        success_count: h.success_count,
        last_validated_time: Some(timestamp(h.last_validated_time)),
        create_time: Some(timestamp(h.create_time)),
        update_time: Some(timestamp(h.update_time)),
    }
}

pub fn anti_pattern(p: AntiPattern) -> pb::AntiPattern {
    pb::AntiPattern {
        etag: format!("v{}", p.version),
        id: p.id,
        scope: Some(agent_and_project(p.namespace, p.agent_id, p.project_id)),
        task_type: p.task_type,
        strategy: p.strategy,
        error: p.error,
        occurrence_count: p.occurrence_count,
        better_alternative: p.better_alternative,
        better_alternative_heuristic_id: p.better_alternative_heuristic_id,
        last_seen_time: Some(timestamp(p.last_seen_time)),
        create_time: Some(timestamp(p.create_time)),
        update_time: Some(timestamp(p.update_time)),
    }
}

pub fn change(change: Option<Change>) -> i32 {
    match change {
        None => pb::LearningChange::Unspecified,
        Some(Change::Created) => pb::LearningChange::Created,
        Some(Change::Updated) => pb::LearningChange::Updated,
    }
    .into()
}

pub fn recorded(recorded: Recorded) -> pb::RecordOutcomeResponse {
    let (heuristic_, heuristic_change) = recorded
        .heuristic
        .map_or((None, None), |(h, c)| (Some(h), Some(c)));
    let (pattern, pattern_change) = recorded
        .anti_pattern
        .map_or((None, None), |(p, c)| (Some(p), Some(c)));
    pb::RecordOutcomeResponse {
        outcome: Some(task_outcome(recorded.outcome)),
        heuristic: heuristic_.map(heuristic),
        heuristic_change: change(heuristic_change),
        anti_pattern: pattern.map(anti_pattern),
        anti_pattern_change: change(pattern_change),
    }
}

pub fn agent_scope(scope: AgentScope) -> pb::AgentScope {
    let etag = scope.etag();
    pb::AgentScope {
        scope: Some(pb::Scope {
            namespace: scope.namespace,
            agent_id: scope.agent_id,
            ..pb::Scope::default()
        }),
        can_learn: scope.can_learn,
        cannot_learn: scope.cannot_learn,
        min_occurrences: i32::try_from(scope.min_occurrences).unwrap_or(i32::MAX),
        create_time: scope.set.map(|s| timestamp(s.create_time)),
        update_time: scope.set.map(|s| timestamp(s.update_time)),
        etag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_before_the_epoch_have_positive_nanos() {
        assert_eq!(
            timestamp(-1),
            Timestamp {
                seconds: -1,
                nanos: 999_999_000
            }
        );
        assert_eq!(
            timestamp(1_500_000),
            Timestamp {
                seconds: 1,
                nanos: 500_000_000
            }
        );
    }
}
