//! SQL for what is learned from episodes: completion with its learning
//! rules (one transaction), task and global rules, mistakes, mistake cards,
//! consolidation, statistics and the knowledge BuildContext shows.

use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::{db_error, episodes, memories, outcomes, requests};
use crate::domain::episode::{
    Consolidation, Episode, EpisodeStatus, Learned, MistakeCard, MistakeReport, Outcome,
    ReportedMistake, RuleOrigin, Stats, TaskKnowledge, TaskRule, TaskStats,
};
use crate::domain::outcome::LearningFilter;
use crate::domain::{Micros, RequestKey, Scope};
use crate::engine::learning::{
    CARD_TEXT_CHARS, CARDS_KEPT, GLOBAL_RULES_KEPT, HIGH_SCORE, RULES_KEPT_PER_TASK,
    consolidates_at, cut, high_score_rule, rules_from,
};
use crate::engine::outcomes::MIN_SUCCESS_RATE;
use crate::error::{Error, Result};

/// The task_id of global rules.
const GLOBAL: &str = "";
/// `episode_lessons.kind` of a mistake and of a success.
pub(super) const MISTAKE: i32 = 1;
pub(super) const SUCCESS: i32 = 2;
/// How many of each kind BuildContext shows.
const CONTEXT_TASK_RULES: i64 = 5;
const CONTEXT_GLOBAL_RULES: i64 = 5;
const CONTEXT_MISTAKES: i64 = 3;
const CONTEXT_CARDS: usize = 5;
const CONTEXT_EPISODES: i64 = 3;
const CONTEXT_HEURISTICS: usize = 5;
const CONTEXT_ANTI_PATTERNS: usize = 5;
/// How many cards GetStats shows.
const TOP_CARDS: usize = 5;

pub(super) fn rule_from_row(row: &SqliteRow) -> Result<TaskRule> {
    Ok(TaskRule {
        seq: row.try_get("seq").map_err(db_error)?,
        id: row.try_get("id").map_err(db_error)?,
        namespace: row.try_get("namespace").map_err(db_error)?,
        task_id: row.try_get("task_id").map_err(db_error)?,
        text: row.try_get("text").map_err(db_error)?,
        origin: RuleOrigin::from_code(row.try_get("origin").map_err(db_error)?)
            .ok_or_else(|| Error::Internal("corrupt task rule: bad origin".into()))?,
        create_time: row.try_get("create_time").map_err(db_error)?,
    })
}

pub(super) fn card_from_row(row: &SqliteRow) -> Result<MistakeCard> {
    let text =
        |column: &str| -> Result<String> { row.try_get::<String, _>(column).map_err(db_error) };
    Ok(MistakeCard {
        id: text("id")?,
        namespace: text("namespace")?,
        mistake_type: text("mistake_type")?,
        task_id: text("task_id")?,
        worker_id: text("worker_id")?,
        correct_decision: text("correct_decision")?,
        evidence: text("evidence")?,
        lesson: text("lesson")?,
        seen_count: row.try_get("seen_count").map_err(db_error)?,
        first_seen_episode_id: text("first_seen_episode_id")?,
        last_seen_episode_id: text("last_seen_episode_id")?,
        last_seen: row.try_get("last_seen").map_err(db_error)?,
        create_time: row.try_get("create_time").map_err(db_error)?,
        update_time: row.try_get("update_time").map_err(db_error)?,
        version: row.try_get("version").map_err(db_error)?,
    })
}

/// Completes a running episode and applies every learning rule, all in the
/// caller's transaction.
pub(super) async fn complete(
    conn: &mut SqliteConnection,
    scope: Scope,
    id: String,
    outcome: Outcome,
    now: Micros,
) -> Result<(Episode, Learned)> {
    let episode = episodes::get_running(conn, &scope, &id).await?;
    let namespace = episode.scope.namespace.clone();
    let row = sqlx::query(
        "UPDATE episodes SET status = ?, score = ?, outcome = ?, complete_time = ?, update_time = ?, \
         version = version + 1 WHERE seq = ? RETURNING *",
    )
    .bind(EpisodeStatus::Completed.code())
    .bind(outcome.score)
    .bind(serde_json::to_string(&outcome).map_err(|e| Error::Internal(format!("outcome: {e}")))?)
    .bind(now)
    .bind(now)
    .bind(episode.seq)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    let completed = episodes::episode_from_row(&row)?;

    let mut learned = Learned::default();
    for (text, origin) in rules_from(&outcome) {
        if add_rule(conn, &namespace, &episode.task_id, &text, origin, now)
            .await?
            .is_some()
        {
            learned.rules_added.push(text);
        }
    }
    keep_newest_rules(conn, &namespace, &episode.task_id, RULES_KEPT_PER_TASK).await?;
    for (kind, texts) in [(MISTAKE, &outcome.mistakes), (SUCCESS, &outcome.successes)] {
        for text in texts.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            note_lesson(conn, &namespace, kind, text, now).await?;
        }
    }
    for report in &outcome.mistake_cards {
        merge_card(conn, &namespace, &episode.task_id, report, &episode.id, now).await?;
        learned.mistake_cards_merged += 1;
    }
    keep_strongest_cards(conn, &namespace).await?;

    let completions: i64 = sqlx::query_scalar(
        "INSERT INTO learning_state (namespace, completed_episodes) VALUES (?, 1) \
         ON CONFLICT (namespace) DO UPDATE SET completed_episodes = completed_episodes + 1 \
         RETURNING completed_episodes",
    )
    .bind(&namespace)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    if consolidates_at(completions) {
        consolidate_rules(conn, &namespace, now).await?;
        learned.consolidated = true;
    }
    Ok((completed, learned))
}

/// Adds a rule unless the same text is already a rule of that task.
async fn add_rule(
    conn: &mut SqliteConnection,
    namespace: &str,
    task_id: &str,
    text: &str,
    origin: RuleOrigin,
    now: Micros,
) -> Result<Option<TaskRule>> {
    let row = sqlx::query(
        "INSERT INTO task_rules (id, namespace, task_id, text, origin, create_time) VALUES (?, ?, ?, ?, ?, ?) \
         ON CONFLICT (namespace, task_id, text) DO NOTHING RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(namespace)
    .bind(task_id)
    .bind(text)
    .bind(origin.code())
    .bind(now)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db_error)?;
    row.as_ref().map(rule_from_row).transpose()
}

async fn keep_newest_rules(
    conn: &mut SqliteConnection,
    namespace: &str,
    task_id: &str,
    keep: usize,
) -> Result<()> {
    sqlx::query(
        "DELETE FROM task_rules WHERE namespace = ?1 AND task_id = ?2 AND seq NOT IN \
         (SELECT seq FROM task_rules WHERE namespace = ?1 AND task_id = ?2 ORDER BY seq DESC LIMIT ?3)",
    )
    .bind(namespace)
    .bind(task_id)
    .bind(i64::try_from(keep).unwrap_or(i64::MAX))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// The namespace's next tick: reports of mistakes and cards are ordered by
/// it, in commit order, whatever the clocks say.
async fn tick(conn: &mut SqliteConnection, namespace: &str) -> Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO learning_state (namespace, tick) VALUES (?, 1) \
         ON CONFLICT (namespace) DO UPDATE SET tick = tick + 1 RETURNING tick",
    )
    .bind(namespace)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

async fn note_lesson(
    conn: &mut SqliteConnection,
    namespace: &str,
    kind: i32,
    text: &str,
    now: Micros,
) -> Result<()> {
    let last_seen = tick(conn, namespace).await?;
    sqlx::query(
        "INSERT INTO episode_lessons (id, namespace, kind, text, last_seen, create_time, update_time) \
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, kind, text) DO UPDATE SET \
         seen_count = seen_count + 1, last_seen = excluded.last_seen, update_time = excluded.update_time",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(namespace)
    .bind(kind)
    .bind(text)
    .bind(last_seen)
    .bind(now)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Merges one sighting of a mistake into its card (DESIGN §4): a new card,
/// or seen_count + 1 with the newest evidence, lesson and episode.
async fn merge_card(
    conn: &mut SqliteConnection,
    namespace: &str,
    task_id: &str,
    report: &MistakeReport,
    episode_id: &str,
    now: Micros,
) -> Result<MistakeCard> {
    let sighting = tick(conn, namespace).await?;
    let row = sqlx::query(
        "INSERT INTO mistake_cards (id, namespace, mistake_type, task_id, worker_id, correct_decision, evidence, \
         lesson, first_seen_episode_id, last_seen_episode_id, last_seen, create_time, update_time) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (namespace, mistake_type, task_id, worker_id, correct_decision) DO UPDATE SET \
         seen_count = seen_count + 1, \
         evidence = CASE WHEN excluded.evidence <> '' THEN excluded.evidence ELSE evidence END, \
         lesson = CASE WHEN excluded.lesson <> '' THEN excluded.lesson ELSE lesson END, \
         last_seen_episode_id = excluded.last_seen_episode_id, \
         last_seen = excluded.last_seen, update_time = excluded.update_time, version = version + 1 \
         RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(namespace)
    .bind(report.mistake_type.trim())
    .bind(task_id)
    .bind(report.worker_id.trim())
    .bind(cut(report.correct_decision.trim(), CARD_TEXT_CHARS))
    .bind(cut(report.evidence.trim(), CARD_TEXT_CHARS))
    .bind(cut(report.lesson.trim(), CARD_TEXT_CHARS))
    .bind(episode_id)
    .bind(episode_id)
    .bind(sighting)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    card_from_row(&row)
}

/// Keeps the namespace's strongest cards: by seen_count, then most recently seen.
async fn keep_strongest_cards(conn: &mut SqliteConnection, namespace: &str) -> Result<()> {
    sqlx::query(
        "DELETE FROM mistake_cards WHERE namespace = ?1 AND seq NOT IN \
         (SELECT seq FROM mistake_cards WHERE namespace = ?1 ORDER BY seen_count DESC, last_seen DESC LIMIT ?2)",
    )
    .bind(namespace)
    .bind(i64::try_from(CARDS_KEPT).unwrap_or(i64::MAX))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Records a mistake outside an episode; returns the card and whether it is
/// strong enough to be kept. A retry with the same request id gets the
/// first answer again.
pub(super) async fn record_mistake(
    conn: &mut SqliteConnection,
    scope: Scope,
    task_id: String,
    report: MistakeReport,
    episode_id: Option<String>,
    request: Option<RequestKey>,
    now: Micros,
) -> Result<(MistakeCard, bool)> {
    if let Some(request) = &request
        && let Some(first) = requests::replay(conn, &scope.namespace, request).await?
    {
        return serde_json::from_str(&first)
            .map_err(|_| Error::Internal("corrupt create_requests row".into()));
    }
    let episode_id = match episode_id {
        Some(id) => {
            let episode = episodes::get(conn, &scope, &id)
                .await?
                .ok_or_else(|| Error::NotFound(format!("episode {id} not found")))?;
            episode.id
        }
        None => String::new(),
    };
    let card = merge_card(conn, &scope.namespace, &task_id, &report, &episode_id, now).await?;
    keep_strongest_cards(conn, &scope.namespace).await?;
    let kept: bool = sqlx::query_scalar("SELECT count(*) > 0 FROM mistake_cards WHERE id = ?")
        .bind(&card.id)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
    let answer = (card, kept);
    if let Some(request) = &request {
        let snapshot = serde_json::to_string(&answer)
            .map_err(|e| Error::Internal(format!("snapshot: {e}")))?;
        requests::remember(conn, &scope.namespace, request, &snapshot, now).await?;
    }
    Ok(answer)
}

/// RULES consolidation: the namespace's most recent high-scoring episodes
/// become `[HIGH SCORE]` global rules, de-duplicated; the newest are kept.
pub(super) async fn consolidate_rules(
    conn: &mut SqliteConnection,
    namespace: &str,
    now: Micros,
) -> Result<Consolidation> {
    let rows = sqlx::query(
        "SELECT score, coalesce(json_extract(outcome, '$.summary'), '') AS summary, description FROM episodes \
         WHERE namespace = ? AND status = ? AND score >= ? ORDER BY complete_time DESC, seq DESC LIMIT ?",
    )
    .bind(namespace)
    .bind(EpisodeStatus::Completed.code())
    .bind(HIGH_SCORE)
    .bind(i64::try_from(GLOBAL_RULES_KEPT).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    let mut consolidation = Consolidation {
        episodes_considered: rows.len(),
        ..Consolidation::default()
    };
    // Oldest first, so the newest episode's rule is the newest rule.
    for row in rows.iter().rev() {
        let score: f64 = row.try_get("score").map_err(db_error)?;
        let summary: String = row.try_get("summary").map_err(db_error)?;
        let description: String = row.try_get("description").map_err(db_error)?;
        let text = high_score_rule(
            score,
            if summary.trim().is_empty() {
                &description
            } else {
                &summary
            },
        );
        if let Some(rule) =
            add_rule(conn, namespace, GLOBAL, &text, RuleOrigin::HighScore, now).await?
        {
            consolidation.rules.push(rule);
        }
    }
    keep_newest_rules(conn, namespace, GLOBAL, GLOBAL_RULES_KEPT).await?;
    mark_consolidated(conn, namespace).await?;
    Ok(consolidation)
}

/// Whether an episode of the namespace completed since its last consolidation.
pub(super) async fn pending(conn: &mut SqliteConnection, namespace: &str) -> Result<bool> {
    sqlx::query_scalar(
        "SELECT coalesce((SELECT completed_episodes > coalesce(last_consolidation, 0) \
         FROM learning_state WHERE namespace = ?), 0)",
    )
    .bind(namespace)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

/// The namespace's latest completed episodes, newest first.
pub(super) async fn recent_completed(
    conn: &mut SqliteConnection,
    namespace: &str,
    limit: usize,
) -> Result<Vec<Episode>> {
    let rows = sqlx::query(
        "SELECT * FROM episodes WHERE namespace = ? AND status = ? ORDER BY complete_time DESC, seq DESC LIMIT ?",
    )
    .bind(namespace)
    .bind(EpisodeStatus::Completed.code())
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter().map(episodes::episode_from_row).collect()
}

/// Writes rules from an LLM consolidation as global rules.
pub(super) async fn add_consolidated(
    conn: &mut SqliteConnection,
    namespace: String,
    rules: Vec<String>,
    episodes_considered: usize,
    now: Micros,
) -> Result<Consolidation> {
    let mut consolidation = Consolidation {
        episodes_considered,
        ..Consolidation::default()
    };
    // The model lists the most useful first: insert it last, so it is the newest.
    for text in rules.iter().rev() {
        if let Some(rule) = add_rule(
            conn,
            &namespace,
            GLOBAL,
            text,
            RuleOrigin::Consolidated,
            now,
        )
        .await?
        {
            consolidation.rules.push(rule);
        }
    }
    keep_newest_rules(conn, &namespace, GLOBAL, GLOBAL_RULES_KEPT).await?;
    mark_consolidated(conn, &namespace).await?;
    Ok(consolidation)
}

async fn mark_consolidated(conn: &mut SqliteConnection, namespace: &str) -> Result<()> {
    sqlx::query(
        "INSERT INTO learning_state (namespace, last_consolidation) VALUES (?, 0) \
         ON CONFLICT (namespace) DO UPDATE SET last_consolidation = completed_episodes",
    )
    .bind(namespace)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// A consolidation asked for: without `force`, only when an episode was
/// completed since the last one.
pub(super) async fn consolidate(
    conn: &mut SqliteConnection,
    namespace: String,
    force: bool,
    now: Micros,
) -> Result<Option<Consolidation>> {
    if !force && !pending(conn, &namespace).await? {
        return Ok(None);
    }
    consolidate_rules(conn, &namespace, now).await.map(Some)
}

/// One page (plus one) of rules, newest first: of a task, global ones (task
/// `Some("")`), or all (`None`).
pub(super) async fn list_rules(
    conn: &mut SqliteConnection,
    namespace: &str,
    task_id: Option<&str>,
    page_size: usize,
    after_seq: Option<i64>,
) -> Result<Vec<TaskRule>> {
    let mut qb = QueryBuilder::<Sqlite>::new("SELECT * FROM task_rules WHERE namespace = ");
    qb.push_bind(namespace.to_owned());
    if let Some(task_id) = task_id {
        qb.push(" AND task_id = ").push_bind(task_id.to_owned());
    }
    if let Some(seq) = after_seq {
        qb.push(" AND seq < ").push_bind(seq);
    }
    qb.push(" ORDER BY seq DESC LIMIT ")
        .push_bind(i64::try_from(page_size + 1).unwrap_or(i64::MAX));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(rule_from_row).collect()
}

/// Up to `limit` cards, strongest first. `after` is the (seen_count,
/// last_seen) of the previous page's last card.
pub(super) async fn list_cards(
    conn: &mut SqliteConnection,
    namespace: &str,
    task_id: Option<&str>,
    mistake_type: Option<&str>,
    limit: usize,
    after: Option<(i64, i64)>,
) -> Result<Vec<MistakeCard>> {
    let mut qb = QueryBuilder::<Sqlite>::new("SELECT * FROM mistake_cards WHERE namespace = ");
    qb.push_bind(namespace.to_owned());
    if let Some(task_id) = task_id {
        qb.push(" AND task_id = ").push_bind(task_id.to_owned());
    }
    if let Some(mistake_type) = mistake_type {
        qb.push(" AND mistake_type = ")
            .push_bind(mistake_type.to_owned());
    }
    if let Some((seen_count, last_seen)) = after {
        qb.push(" AND (seen_count, last_seen) < (")
            .push_bind(seen_count)
            .push(", ")
            .push_bind(last_seen)
            .push(")");
    }
    qb.push(" ORDER BY seen_count DESC, last_seen DESC LIMIT ")
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(card_from_row).collect()
}

async fn count(conn: &mut SqliteConnection, sql: &'static str, namespace: &str) -> Result<i64> {
    sqlx::query_scalar(sql)
        .bind(namespace)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)
}

/// The numbers GetStats reports for `scope`.
pub(super) async fn stats(
    conn: &mut SqliteConnection,
    scope: &Scope,
    now: Micros,
) -> Result<Stats> {
    let namespace = scope.namespace.as_str();
    let mut qb = QueryBuilder::new("SELECT count(*) FROM episodes e WHERE ");
    episodes::push_visible(&mut qb, scope);
    let total_episodes: i64 = qb
        .build_query_scalar()
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;

    let mut qb = QueryBuilder::new(
        "SELECT e.task_id, count(*) AS n, avg(e.score) AS mean FROM episodes e WHERE ",
    );
    episodes::push_visible(&mut qb, scope);
    qb.push(" AND e.status = ")
        .push_bind(EpisodeStatus::Completed.code())
        .push(" GROUP BY e.task_id");
    let scored = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    let rule_counts = sqlx::query(
        "SELECT task_id, count(*) AS n FROM task_rules WHERE namespace = ? AND task_id <> '' GROUP BY task_id",
    )
    .bind(namespace)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    let mut tasks: std::collections::BTreeMap<String, TaskStats> =
        std::collections::BTreeMap::new();
    for row in &scored {
        let task_id: String = row.try_get("task_id").map_err(db_error)?;
        let task = tasks
            .entry(task_id.clone())
            .or_insert_with(|| empty_task(task_id));
        task.scored_episodes = row.try_get("n").map_err(db_error)?;
        task.mean_score = row.try_get("mean").map_err(db_error)?;
    }
    for row in &rule_counts {
        let task_id: String = row.try_get("task_id").map_err(db_error)?;
        tasks
            .entry(task_id.clone())
            .or_insert_with(|| empty_task(task_id))
            .rules = row.try_get("n").map_err(db_error)?;
    }

    let mut qb = QueryBuilder::new("SELECT m.memory_type, count(*) FROM memories m WHERE ");
    memories::push_visible(&mut qb, scope, now);
    qb.push(" GROUP BY m.memory_type ORDER BY m.memory_type");
    let memories_per_type = qb
        .build_query_as::<(i32, i64)>()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?;

    Ok(Stats {
        total_episodes,
        global_rules: count(
            conn,
            "SELECT count(*) FROM task_rules WHERE namespace = ? AND task_id = ''",
            namespace,
        )
        .await?,
        tasks: tasks.into_values().collect(),
        mistakes: count(
            conn,
            "SELECT count(*) FROM episode_lessons WHERE namespace = ? AND kind = 1 /* MISTAKE */",
            namespace,
        )
        .await?,
        mistake_cards: count(
            conn,
            "SELECT count(*) FROM mistake_cards WHERE namespace = ?",
            namespace,
        )
        .await?,
        top_mistake_cards: list_cards(conn, namespace, None, None, TOP_CARDS, None).await?,
        memories_per_type,
        task_types: outcomes::task_type_stats(conn, scope).await?,
    })
}

fn empty_task(task_id: String) -> TaskStats {
    TaskStats {
        task_id,
        rules: 0,
        scored_episodes: 0,
        mean_score: 0.0,
    }
}

/// What BuildContext shows about `task_id` (empty: only namespace-wide knowledge).
pub(super) async fn knowledge(
    conn: &mut SqliteConnection,
    scope: &Scope,
    task_id: &str,
    task_type: &str,
) -> Result<TaskKnowledge> {
    let namespace = scope.namespace.as_str();
    let rules = |task: &str, limit: i64| {
        sqlx::query("SELECT * FROM task_rules WHERE namespace = ? AND task_id = ? ORDER BY seq DESC LIMIT ?")
            .bind(namespace.to_owned())
            .bind(task.to_owned())
            .bind(limit)
    };
    let mut knowledge = TaskKnowledge::default();
    if !task_id.is_empty() {
        let rows = rules(task_id, CONTEXT_TASK_RULES)
            .fetch_all(&mut *conn)
            .await
            .map_err(db_error)?;
        knowledge.task_rules = rows.iter().map(rule_from_row).collect::<Result<_>>()?;
    }
    let rows = rules(GLOBAL, CONTEXT_GLOBAL_RULES)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?;
    knowledge.global_rules = rows.iter().map(rule_from_row).collect::<Result<_>>()?;

    let rows = sqlx::query(
        "SELECT id, text FROM episode_lessons WHERE namespace = ? AND kind = ? ORDER BY last_seen DESC \
         LIMIT ?",
    )
    .bind(namespace)
    .bind(MISTAKE)
    .bind(CONTEXT_MISTAKES)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    knowledge.mistakes = rows
        .iter()
        .map(|row| {
            Ok(ReportedMistake {
                id: row.try_get("id").map_err(db_error)?,
                text: row.try_get("text").map_err(db_error)?,
            })
        })
        .collect::<Result<_>>()?;
    knowledge.mistake_cards = list_cards(conn, namespace, None, None, CONTEXT_CARDS, None).await?;

    if !task_id.is_empty() {
        let completed = |select: &str| {
            let mut qb = QueryBuilder::new(select);
            episodes::push_visible(&mut qb, scope);
            qb.push(" AND e.task_id = ")
                .push_bind(task_id.to_owned())
                .push(" AND e.status = ")
                .push_bind(EpisodeStatus::Completed.code());
            qb
        };
        let mut qb = completed("SELECT e.* FROM episodes e WHERE ");
        qb.push(" ORDER BY e.complete_time DESC, e.seq DESC LIMIT ")
            .push_bind(CONTEXT_EPISODES);
        let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
        knowledge.recent_episodes = rows
            .iter()
            .map(episodes::episode_from_row)
            .collect::<Result<_>>()?;
        let mut qb = completed("SELECT avg(e.score), count(*) FROM episodes e WHERE ");
        let (mean, n): (Option<f64>, i64) = qb
            .build_query_as()
            .fetch_one(&mut *conn)
            .await
            .map_err(db_error)?;
        knowledge.mean_score = mean.filter(|_| n > 0).map(|mean| (mean, n));
    }
    let task_type = match (task_type, knowledge.recent_episodes.first()) {
        ("", Some(latest)) => latest.task_type.trim().to_lowercase(),
        (task_type, _) => task_type.to_owned(),
    };
    if !task_type.is_empty() {
        let filter = LearningFilter {
            task_type: Some(task_type),
            ..LearningFilter::default()
        };
        // Only strategies that work more often than not are advice.
        let advice = LearningFilter {
            min_confidence: MIN_SUCCESS_RATE.next_up(),
            ..filter.clone()
        };
        knowledge.heuristics =
            outcomes::list_heuristics(conn, scope, &advice, CONTEXT_HEURISTICS, None).await?;
        knowledge.anti_patterns =
            outcomes::list_anti_patterns(conn, scope, &filter, CONTEXT_ANTI_PATTERNS, None).await?;
    }
    Ok(knowledge)
}
