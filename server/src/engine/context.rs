//! BuildContext: a compact markdown block for an agent's prompt (DESIGN §4).
//!
//! Gathering ([`build`]) asks the store for what is known; assembling
//! ([`assemble`]) fits it into the token budget by leaving out the least
//! important lines first, never cutting a line in half.

use std::time::Duration;

use std::collections::HashSet;

use crate::domain::episode::{Episode, MistakeCard, TaskKnowledge};
use crate::domain::{
    ListQuery, Memory, MemoryFilter, MemoryOrder, MemoryType, Micros, Scope, Validity, dates,
};
use crate::engine::entities;
use crate::engine::outcomes::MIN_SUCCESS_RATE;
use crate::engine::search::Retrieval;
use crate::engine::search::{self, SearchRequest, Weights};
use crate::error::Result;
use crate::index;
use crate::store::{KnowledgeQuery, Store};

/// Tokens are estimated as characters / 4 (rounded up).
pub const CHARS_PER_TOKEN: usize = 4;
/// The default token budget.
pub const DEFAULT_TOKEN_BUDGET: usize = 512;
/// How many relevant (or important) memories are considered.
const MAX_RELEVANT: usize = 20;
/// How many preferences are considered.
const MAX_PREFERENCES: usize = 10;
/// A memory shown in the context is cut to this many characters (at a word
/// boundary, marked with "…"), so one huge memory cannot crowd out the rest.
pub const MAX_LINE_CHARS: usize = 400;

/// What kind of record a context line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Memory,
    Preference,
    TaskRule,
    GlobalRule,
    Mistake,
    MistakeCard,
    Heuristic,
    AntiPattern,
    Episode,
}

/// A record whose line is in the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub kind: ItemKind,
    pub id: String,
}

/// One candidate line: its text (one line, no newline), the record it shows,
/// and how important it is relative to every other line (higher stays longer).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub text: String,
    pub item: Item,
    pub priority: f64,
}

/// A titled group of lines, shown in this order.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub title: String,
    pub lines: Vec<Line>,
}

/// The assembled context.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContextBlock {
    pub text: String,
    pub items: Vec<Item>,
    pub token_estimate: usize,
    pub truncated: bool,
}

/// A validated BuildContext request.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    pub scope: Scope,
    pub task_id: String,
    /// Whose heuristics and anti-patterns to show; empty: the task type of
    /// the task's latest episode.
    pub task_type: String,
    pub query: String,
    pub token_budget: usize,
    /// Which memories and preferences count as true.
    pub validity: Validity,
}

/// The estimated token count of `text`.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

/// `text` on one line: white space folded, cut to `max_chars` characters at a
/// word boundary with "…" when longer.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max_chars {
        return folded;
    }
    let cut: String = folded.chars().take(max_chars.saturating_sub(1)).collect();
    let at_word = match cut.rfind(' ') {
        Some(space) if space > cut.len() / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    format!("{}…", at_word.trim_end())
}

/// How much each kind of line matters when the budget forces a choice: the
/// first line of a section has this priority, each later one a little less.
/// Memories and preferences use their own score or importance (0 to 1).
const TASK_RULE_PRIORITY: f64 = 0.95;
const MISTAKE_PRIORITY: f64 = 0.85;
const MISTAKE_CARD_PRIORITY: f64 = 0.8;
const GLOBAL_RULE_PRIORITY: f64 = 0.75;
const ANTI_PATTERN_PRIORITY: f64 = 0.72;
const HEURISTIC_PRIORITY: f64 = 0.7;
const EPISODE_PRIORITY: f64 = 0.6;
/// What is known of an entity the query names: what the reader asked.
const ABOUT_PRIORITY: f64 = 0.9;
/// The most entities a context block has an "About" section for, and the
/// most lines of each.
const MAX_ABOUT_ENTITIES: usize = 2;
const MAX_ABOUT_LINES: usize = 3;
/// The most characters of an entity's name in a section title.
const MAX_TITLE_CHARS: usize = 80;
const PRIORITY_STEP: f64 = 0.01;
/// A recent episode's line quotes this many characters of its summary.
const EPISODE_SUMMARY_CHARS: usize = 100;

/// How much of what is learned a context block shows (before the budget
/// cuts it): the newest rules of the task and global ones, the latest
/// mistakes, the strongest cards, the task's latest episodes, and for its
/// task type the strategies that work more often than not and those that
/// fail.
const KNOWLEDGE: KnowledgeQuery = KnowledgeQuery {
    task_rules: 5,
    global_rules: 5,
    mistakes: 3,
    mistake_cards: 5,
    recent_episodes: 3,
    heuristics: 5,
    anti_patterns: 5,
    min_heuristic_confidence: MIN_SUCCESS_RATE.next_up(),
};

/// Gathers what is known for the request and assembles it within the budget,
/// in the sections of DESIGN §4. `deadline` is how long the caller waits,
/// when it said.
pub async fn build(
    store: &dyn Store,
    retrieval: &Retrieval,
    request: &ContextRequest,
    now: Micros,
    deadline: Option<Duration>,
) -> Result<ContextBlock> {
    let knowledge = store
        .task_knowledge(
            &request.scope,
            &request.task_id,
            &request.task_type,
            &KNOWLEDGE,
        )
        .await?;
    let relevant = relevant_memories(store, retrieval, request, now, deadline).await?;
    let shown: HashSet<&str> = relevant.iter().map(|(m, _)| m.id.as_str()).collect();
    let about = about(store, request, &shown, now).await?;
    let preferences = store
        .list_memories(
            &ListQuery {
                scope: request.scope.clone(),
                filter: MemoryFilter {
                    memory_types: vec![MemoryType::Preference],
                    validity: request.validity,
                    ..MemoryFilter::default()
                },
                order: MemoryOrder::ImportanceDesc,
                page_size: MAX_PREFERENCES,
                after: None,
                max_bytes: None,
            },
            now,
        )
        .await?;
    let TaskKnowledge {
        task_rules,
        global_rules,
        mistakes,
        mistake_cards,
        recent_episodes,
        mean_score,
        heuristics,
        anti_patterns,
    } = knowledge;
    let ranked = |kind: ItemKind, base: f64| {
        move |(i, (text, id)): (usize, (String, String))| Line {
            text: one_line(&text, MAX_LINE_CHARS),
            item: Item { kind, id },
            priority: base - i as f64 * PRIORITY_STEP,
        }
    };
    let mut sections = vec![
        Section {
            title: "Task rules".into(),
            lines: task_rules
                .into_iter()
                .map(|r| (r.text, r.id))
                .enumerate()
                .map(ranked(ItemKind::TaskRule, TASK_RULE_PRIORITY))
                .collect(),
        },
        Section {
            title: "Global rules".into(),
            lines: global_rules
                .into_iter()
                .map(|r| (r.text, r.id))
                .enumerate()
                .map(ranked(ItemKind::GlobalRule, GLOBAL_RULE_PRIORITY))
                .collect(),
        },
        Section {
            title: "Mistakes to avoid".into(),
            lines: mistakes
                .into_iter()
                .map(|m| (m.text, m.id))
                .enumerate()
                .map(ranked(ItemKind::Mistake, MISTAKE_PRIORITY))
                .collect(),
        },
        Section {
            title: "Mistake cards".into(),
            lines: mistake_cards
                .into_iter()
                .map(|card| (card_line(&card), card.id))
                .enumerate()
                .map(ranked(ItemKind::MistakeCard, MISTAKE_CARD_PRIORITY))
                .collect(),
        },
        Section {
            title: "Heuristics".into(),
            lines: heuristics
                .into_iter()
                .map(|h| {
                    let line = format!(
                        "{} (confidence {:.2}, {} outcomes)",
                        h.strategy, h.confidence, h.occurrence_count
                    );
                    (line, h.id)
                })
                .enumerate()
                .map(ranked(ItemKind::Heuristic, HEURISTIC_PRIORITY))
                .collect(),
        },
        Section {
            title: "Anti-patterns".into(),
            lines: anti_patterns
                .into_iter()
                .map(|p| {
                    let mut line = format!(
                        "{} fails with: {} (seen {}x)",
                        p.strategy, p.error, p.occurrence_count
                    );
                    if !p.better_alternative.is_empty() {
                        line.push_str(&format!(" Better: {}", p.better_alternative));
                    }
                    (line, p.id)
                })
                .enumerate()
                .map(ranked(ItemKind::AntiPattern, ANTI_PATTERN_PRIORITY))
                .collect(),
        },
    ];
    sections.extend(about);
    sections.extend([
        Section {
            title: "Relevant memories".into(),
            lines: relevant
                .into_iter()
                .map(|(memory, priority)| Line {
                    text: memory_line(&memory),
                    item: Item {
                        kind: ItemKind::Memory,
                        id: memory.id,
                    },
                    priority,
                })
                .collect(),
        },
        Section {
            title: "Preferences".into(),
            lines: preferences
                .into_iter()
                .take(MAX_PREFERENCES)
                .map(|memory| Line {
                    text: shown_text(&memory),
                    priority: memory.importance,
                    item: Item {
                        kind: ItemKind::Preference,
                        id: memory.id,
                    },
                })
                .collect(),
        },
        Section {
            title: match mean_score {
                Some((mean, n)) => format!("Recent episodes (mean score {mean:.2} over {n})"),
                None => "Recent episodes".into(),
            },
            lines: recent_episodes
                .into_iter()
                .map(|episode| (episode_line(&episode), episode.id))
                .enumerate()
                .map(ranked(ItemKind::Episode, EPISODE_PRIORITY))
                .collect(),
        },
    ]);
    Ok(assemble(sections, request.token_budget))
}

/// The "About <entity>" sections: for each entity the query names (the
/// first [`MAX_ABOUT_ENTITIES`]), its newest memories true at the request's
/// time, but those `shown` among the relevant memories already.
async fn about(
    store: &dyn Store,
    request: &ContextRequest,
    shown: &HashSet<&str>,
    now: Micros,
) -> Result<Vec<Section>> {
    if request.query.trim().is_empty() {
        return Ok(Vec::new());
    }
    let named = entities::named_in(store, &request.scope.namespace, &request.query).await?;
    let mut sections = Vec::new();
    for id in named {
        let limit = MAX_ABOUT_LINES + shown.len();
        let Some((name, memories)) =
            entities::about(store, &request.scope, &id, request.validity, limit, now).await?
        else {
            // Named only by memories this scope does not see, or by none
            // true then.
            continue;
        };
        let lines: Vec<Line> = memories
            .into_iter()
            .filter(|m| !shown.contains(m.id.as_str()))
            .take(MAX_ABOUT_LINES)
            .enumerate()
            .map(|(i, memory)| Line {
                text: memory_line(&memory),
                item: Item {
                    kind: ItemKind::Memory,
                    id: memory.id,
                },
                priority: ABOUT_PRIORITY - i as f64 * PRIORITY_STEP,
            })
            .collect();
        if !lines.is_empty() {
            sections.push(Section {
                title: format!("About {}", one_line(&name, MAX_TITLE_CHARS)),
                lines,
            });
        }
        if sections.len() == MAX_ABOUT_ENTITIES {
            break;
        }
    }
    Ok(sections)
}

/// `[wrong_root_cause, seen 3x] lesson Evidence: evidence`.
fn card_line(card: &MistakeCard) -> String {
    let lesson = if card.lesson.is_empty() {
        &card.correct_decision
    } else {
        &card.lesson
    };
    let mut line = format!(
        "[{}, seen {}x] {lesson}",
        card.mistake_type, card.seen_count
    );
    if !card.evidence.is_empty() {
        line.push_str(&format!(" Evidence: {}", card.evidence));
    }
    line
}

/// `Score 0.82 in 7 steps: summary`.
fn episode_line(episode: &Episode) -> String {
    let (score, summary) = episode
        .outcome
        .as_ref()
        .map_or((0.0, ""), |o| (o.score, o.summary.as_str()));
    format!(
        "Score {score:.2} in {} steps: {}",
        episode.step_count,
        summary
            .chars()
            .take(EPISODE_SUMMARY_CHARS)
            .collect::<String>()
    )
}

/// The memories relevant to the query (or, without one, the most important),
/// with their priority; preferences have a section of their own.
async fn relevant_memories(
    store: &dyn Store,
    retrieval: &Retrieval,
    request: &ContextRequest,
    now: Micros,
    deadline: Option<Duration>,
) -> Result<Vec<(Memory, f64)>> {
    let not_preferences = MemoryFilter {
        memory_types: vec![
            MemoryType::Fact,
            MemoryType::Lesson,
            MemoryType::Decision,
            MemoryType::Event,
            MemoryType::Note,
        ],
        validity: request.validity,
        ..MemoryFilter::default()
    };
    // A query without words (empty, or only punctuation) cannot rank by
    // relevance: fall back to importance.
    if !index::has_terms(&request.query) {
        let important = store
            .list_memories(
                &ListQuery {
                    scope: request.scope.clone(),
                    filter: not_preferences,
                    order: MemoryOrder::ImportanceDesc,
                    page_size: MAX_RELEVANT,
                    after: None,
                    max_bytes: None,
                },
                now,
            )
            .await?;
        return Ok(important
            .into_iter()
            .take(MAX_RELEVANT)
            .map(|m| {
                let priority = m.importance;
                (m, priority)
            })
            .collect());
    }
    let searched = search::search(
        store,
        retrieval,
        &SearchRequest {
            scope: request.scope.clone(),
            query: request.query.clone(),
            filter: not_preferences,
            limit: MAX_RELEVANT,
            weights: Weights::default(),
            // The context block's token budget cuts far below any reply's.
            max_bytes: None,
        },
        now,
        deadline,
    )
    .await?;
    Ok(searched
        .hits
        .into_iter()
        .map(|h| (h.memory, h.score))
        .collect())
}

/// A memory's line: its type, the day an event happened, and its text
/// with each relative time it says resolved ("yesterday (7 May 2023)"),
/// so that a reader reading it later knows when.
fn memory_line(memory: &Memory) -> String {
    let text = shown_text(memory);
    let mut dated = String::with_capacity(text.len() + 32);
    let mut rest = 0;
    for span in dates::find(&text, memory.occurred_at) {
        if !span.relative {
            continue;
        }
        let Some(at) = text[rest..].find(&span.text).map(|at| rest + at) else {
            continue;
        };
        let end = at + span.text.len();
        dated.push_str(&text[rest..end]);
        dated.push_str(&format!(" ({})", span.label()));
        rest = end;
    }
    dated.push_str(&text[rest..]);
    let label = memory.memory_type.label();
    if memory.memory_type == MemoryType::Event {
        format!(
            "[{label}, {}] {dated}",
            dates::day_label(memory.occurred_at)
        )
    } else {
        format!("[{label}] {dated}")
    }
}

fn shown_text(memory: &Memory) -> String {
    let text = if memory.summary.trim().is_empty() {
        &memory.content
    } else {
        &memory.summary
    };
    one_line(text, MAX_LINE_CHARS)
}

/// Lays `sections` out as markdown within `token_budget`:
///
/// ```text
/// ## Title
/// - line
/// - line
///
/// ## Next title
/// - line
/// ```
///
/// Lines are admitted from the highest priority down while they fit (a
/// section's title counts when its first line is admitted); lines that do not
/// fit are left out whole. Sections keep their order and lines their order
/// within a section. Empty sections are not shown.
pub fn assemble(sections: Vec<Section>, token_budget: usize) -> ContextBlock {
    let budget_chars = token_budget.saturating_mul(CHARS_PER_TOKEN);
    let mut order: Vec<(usize, usize)> = sections
        .iter()
        .enumerate()
        .flat_map(|(s, section)| (0..section.lines.len()).map(move |l| (s, l)))
        .collect();
    // Stable: equal priorities keep section order, then line order.
    order.sort_by(|&(sa, la), &(sb, lb)| {
        sections[sb].lines[lb]
            .priority
            .total_cmp(&sections[sa].lines[la].priority)
    });

    let mut admitted: Vec<Vec<bool>> = sections
        .iter()
        .map(|s| vec![false; s.lines.len()])
        .collect();
    let mut used = 0usize;
    let mut truncated = false;
    for (s, l) in order {
        let line_cost = line_chars(&sections[s].lines[l].text);
        let opens_section = !admitted[s].iter().any(|&a| a);
        // A section costs its title line plus the blank line that separates
        // it from the one before (counted for the first one too: at worst one
        // character of budget goes unused).
        let section_cost = if opens_section {
            title_chars(&sections[s].title) + 1
        } else {
            0
        };
        if used + section_cost + line_cost <= budget_chars {
            used += section_cost + line_cost;
            admitted[s][l] = true;
        } else {
            truncated = true;
        }
    }

    let mut block = ContextBlock {
        truncated,
        ..ContextBlock::default()
    };
    let mut parts = Vec::new();
    for (section, admitted) in sections.into_iter().zip(admitted) {
        if !admitted.iter().any(|&a| a) {
            continue;
        }
        let mut part = format!("## {}\n", section.title);
        for (line, _) in section.lines.into_iter().zip(admitted).filter(|(_, a)| *a) {
            part.push_str(&format!("- {}\n", line.text));
            block.items.push(line.item);
        }
        parts.push(part);
    }
    block.text = parts.join("\n");
    block.token_estimate = estimate_tokens(&block.text);
    block
}

fn title_chars(title: &str) -> usize {
    "## \n".len() + title.chars().count()
}

fn line_chars(text: &str) -> usize {
    "- \n".len() + text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, priority: f64) -> Line {
        Line {
            text: text.to_owned(),
            item: Item {
                kind: ItemKind::Memory,
                id: text.to_owned(),
            },
            priority,
        }
    }

    fn sections() -> Vec<Section> {
        vec![
            Section {
                title: "Relevant memories".into(),
                lines: vec![line("alpha fact", 0.9), line("beta fact", 0.2)],
            },
            Section {
                title: "Preferences".into(),
                lines: vec![line("tabs over spaces", 0.5)],
            },
        ]
    }

    #[test]
    fn everything_fits_in_a_large_budget() {
        let block = assemble(sections(), 512);
        assert_eq!(
            block.text,
            "## Relevant memories\n- alpha fact\n- beta fact\n\n## Preferences\n- tabs over spaces\n"
        );
        assert_eq!(block.items.len(), 3);
        assert!(!block.truncated);
        assert_eq!(block.token_estimate, estimate_tokens(&block.text));
    }

    #[test]
    fn the_least_important_line_goes_first() {
        // Everything costs 82 characters as counted (titles with their
        // separators 22 + 16, lines 13 + 12 + 19); 80 leaves out "beta fact" (0.2).
        let block = assemble(sections(), 20);
        assert_eq!(
            block.text,
            "## Relevant memories\n- alpha fact\n\n## Preferences\n- tabs over spaces\n"
        );
        assert!(block.truncated);
        assert!(block.token_estimate <= 20);
    }

    #[test]
    fn nothing_known_is_empty_text() {
        let block = assemble(
            vec![Section {
                title: "Preferences".into(),
                lines: vec![],
            }],
            512,
        );
        assert_eq!(block, ContextBlock::default());
    }

    #[test]
    fn a_line_too_long_for_the_budget_is_left_out_whole() {
        let block = assemble(
            vec![Section {
                title: "T".into(),
                lines: vec![line(&"x".repeat(100), 1.0), line("short", 0.1)],
            }],
            5,
        );
        assert_eq!(block.text, "## T\n- short\n");
        assert!(block.truncated);
    }

    #[test]
    fn the_budget_is_never_exceeded() {
        let lines: Vec<Line> = (0..50)
            .map(|i| line(&"word ".repeat(i % 13 + 1), (i % 7) as f64 / 7.0))
            .collect();
        for budget in 0..200 {
            let block = assemble(
                vec![
                    Section {
                        title: "A".into(),
                        lines: lines[..25].to_vec(),
                    },
                    Section {
                        title: "Bee".into(),
                        lines: lines[25..].to_vec(),
                    },
                ],
                budget,
            );
            assert!(
                block.token_estimate <= budget,
                "budget {budget}: {}",
                block.token_estimate
            );
        }
    }

    #[test]
    fn one_line_folds_white_space_and_cuts_at_a_word() {
        assert_eq!(one_line("a\n b\t c", 10), "a b c");
        assert_eq!(one_line("alpha beta gamma delta", 12), "alpha beta…");
        assert_eq!(one_line(&"é".repeat(10), 5), "éééé…");
    }
}
