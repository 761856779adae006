//! SQL for what is learned from episodes: the rules, lessons, mistake cards
//! and learning progress the engine reads and writes when an episode
//! completes or a mistake is recorded, statistics, and the knowledge
//! BuildContext shows.

use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::{db_error, episodes, memories, outcomes};
use crate::domain::episode::{
    Episode, EpisodeStatus, GLOBAL, MistakeCard, ReportedMistake, RuleOrigin, Stats, TaskKnowledge,
    TaskRule, TaskStats,
};
use crate::domain::outcome::LearningFilter;
use crate::domain::{Micros, Scope};
use crate::error::{Error, Result};
use crate::store::KnowledgeQuery;
use crate::store::tx::{CardKey, LearningProgress, Lesson, NewMistakeCard};
/// `episode_lessons.kind` of a mistake and of a success.
pub(super) const MISTAKE: i32 = crate::store::transfer::rows::LESSON_MISTAKE;
pub(super) const SUCCESS: i32 = crate::store::transfer::rows::LESSON_SUCCESS;

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

/// Writes an episode's end as given.
pub(super) async fn finish_episode(conn: &mut SqliteConnection, e: &Episode) -> Result<Episode> {
    let outcome = e
        .outcome
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| Error::Internal(format!("outcome: {e}")))?;
    let row = sqlx::query(
        "UPDATE episodes SET status = ?, score = ?, outcome = ?, complete_time = ?, update_time = ?, \
         version = ? WHERE seq = ? RETURNING *",
    )
    .bind(e.status.code())
    .bind(e.outcome.as_ref().map(|o| o.score))
    .bind(outcome)
    .bind(e.complete_time)
    .bind(e.update_time)
    .bind(e.version)
    .bind(e.seq)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    episodes::episode_from_row(&row)
}

/// Adds a rule unless the same text is already a rule of that task.
pub(super) async fn insert_rule(
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

pub(super) async fn trim_rules(
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

/// The namespace's next tick.
pub(super) async fn tick(conn: &mut SqliteConnection, namespace: &str) -> Result<i64> {
    sqlx::query_scalar(
        "INSERT INTO learning_state (namespace, tick) VALUES (?, 1) \
         ON CONFLICT (namespace) DO UPDATE SET tick = tick + 1 RETURNING tick",
    )
    .bind(namespace)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

pub(super) async fn count_lesson(
    conn: &mut SqliteConnection,
    namespace: &str,
    kind: Lesson,
    text: &str,
    last_seen: i64,
    now: Micros,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO episode_lessons (id, namespace, kind, text, last_seen, create_time, update_time) \
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, kind, text) DO UPDATE SET \
         seen_count = seen_count + 1, last_seen = excluded.last_seen, update_time = excluded.update_time",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(namespace)
    .bind(match kind {
        Lesson::Mistake => MISTAKE,
        Lesson::Success => SUCCESS,
    })
    .bind(text)
    .bind(last_seen)
    .bind(now)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// The mistake card of `key`, if there is one.
pub(super) async fn mistake_card(
    conn: &mut SqliteConnection,
    namespace: &str,
    key: &CardKey,
) -> Result<Option<MistakeCard>> {
    let row = sqlx::query(
        "SELECT * FROM mistake_cards WHERE namespace = ? AND mistake_type = ? AND task_id = ? \
         AND worker_id = ? AND correct_decision = ?",
    )
    .bind(namespace)
    .bind(&key.mistake_type)
    .bind(&key.task_id)
    .bind(&key.worker_id)
    .bind(&key.correct_decision)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db_error)?;
    row.as_ref().map(card_from_row).transpose()
}

pub(super) async fn insert_mistake_card(
    conn: &mut SqliteConnection,
    new: &NewMistakeCard,
    now: Micros,
) -> Result<MistakeCard> {
    let row = sqlx::query(
        "INSERT INTO mistake_cards (id, namespace, mistake_type, task_id, worker_id, correct_decision, evidence, \
         lesson, first_seen_episode_id, last_seen_episode_id, last_seen, create_time, update_time) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&new.namespace)
    .bind(&new.key.mistake_type)
    .bind(&new.key.task_id)
    .bind(&new.key.worker_id)
    .bind(&new.key.correct_decision)
    .bind(&new.evidence)
    .bind(&new.lesson)
    .bind(&new.episode_id)
    .bind(&new.episode_id)
    .bind(new.last_seen)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    card_from_row(&row)
}

pub(super) async fn update_mistake_card(
    conn: &mut SqliteConnection,
    card: &MistakeCard,
) -> Result<MistakeCard> {
    let row = sqlx::query(
        "UPDATE mistake_cards SET seen_count = ?, evidence = ?, lesson = ?, last_seen_episode_id = ?, \
         last_seen = ?, update_time = ?, version = ? WHERE id = ? RETURNING *",
    )
    .bind(card.seen_count)
    .bind(&card.evidence)
    .bind(&card.lesson)
    .bind(&card.last_seen_episode_id)
    .bind(card.last_seen)
    .bind(card.update_time)
    .bind(card.version)
    .bind(&card.id)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    card_from_row(&row)
}

/// Deletes all but the namespace's `keep` strongest cards.
pub(super) async fn trim_mistake_cards(
    conn: &mut SqliteConnection,
    namespace: &str,
    keep: usize,
) -> Result<()> {
    sqlx::query(
        "DELETE FROM mistake_cards WHERE namespace = ?1 AND seq NOT IN \
         (SELECT seq FROM mistake_cards WHERE namespace = ?1 ORDER BY seen_count DESC, last_seen DESC LIMIT ?2)",
    )
    .bind(namespace)
    .bind(i64::try_from(keep).unwrap_or(i64::MAX))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

pub(super) async fn mistake_card_exists(conn: &mut SqliteConnection, id: &str) -> Result<bool> {
    sqlx::query_scalar("SELECT count(*) > 0 FROM mistake_cards WHERE id = ?")
        .bind(id)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)
}

/// Counts one more completed episode of the namespace.
pub(super) async fn count_completion(
    conn: &mut SqliteConnection,
    namespace: &str,
) -> Result<LearningProgress> {
    sqlx::query(
        "INSERT INTO learning_state (namespace, completed_episodes) VALUES (?, 1) \
         ON CONFLICT (namespace) DO UPDATE SET completed_episodes = completed_episodes + 1",
    )
    .bind(namespace)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    learning_progress(conn, namespace).await
}

/// How far the namespace's learning has got (nothing yet: zeros).
pub(super) async fn learning_progress(
    conn: &mut SqliteConnection,
    namespace: &str,
) -> Result<LearningProgress> {
    let row: Option<(i64, Option<i64>)> = sqlx::query_as(
        "SELECT completed_episodes, last_consolidation FROM learning_state WHERE namespace = ?",
    )
    .bind(namespace)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(row
        .map(|(completed_episodes, last)| LearningProgress {
            completed_episodes,
            last_consolidation: last.unwrap_or(0),
        })
        .unwrap_or_default())
}

/// Up to `limit` of the namespace's completed episodes scoring at least
/// `min_score` (any, without), latest completed first.
pub(super) async fn completed_episodes(
    conn: &mut SqliteConnection,
    namespace: &str,
    min_score: Option<f64>,
    limit: usize,
) -> Result<Vec<Episode>> {
    let rows = sqlx::query(
        "SELECT * FROM episodes WHERE namespace = ? AND status = ? AND (?3 IS NULL OR score >= ?3) \
         ORDER BY complete_time DESC, seq DESC LIMIT ?4",
    )
    .bind(namespace)
    .bind(EpisodeStatus::Completed.code())
    .bind(min_score)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter().map(episodes::episode_from_row).collect()
}

pub(super) async fn mark_consolidated(conn: &mut SqliteConnection, namespace: &str) -> Result<()> {
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
    top_cards: usize,
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
        top_mistake_cards: list_cards(conn, namespace, None, None, top_cards, None).await?,
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
    query: &KnowledgeQuery,
) -> Result<TaskKnowledge> {
    let namespace = scope.namespace.as_str();
    let limit = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let rules = |task: &str, limit: i64| {
        sqlx::query("SELECT * FROM task_rules WHERE namespace = ? AND task_id = ? ORDER BY seq DESC LIMIT ?")
            .bind(namespace.to_owned())
            .bind(task.to_owned())
            .bind(limit)
    };
    let mut knowledge = TaskKnowledge::default();
    if !task_id.is_empty() {
        let rows = rules(task_id, limit(query.task_rules))
            .fetch_all(&mut *conn)
            .await
            .map_err(db_error)?;
        knowledge.task_rules = rows.iter().map(rule_from_row).collect::<Result<_>>()?;
    }
    let rows = rules(GLOBAL, limit(query.global_rules))
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
    .bind(limit(query.mistakes))
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
    knowledge.mistake_cards =
        list_cards(conn, namespace, None, None, query.mistake_cards, None).await?;

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
            .push_bind(limit(query.recent_episodes));
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
        let advice = LearningFilter {
            min_confidence: query.min_heuristic_confidence,
            ..filter.clone()
        };
        knowledge.heuristics =
            outcomes::list_heuristics(conn, scope, &advice, query.heuristics, None).await?;
        knowledge.anti_patterns =
            outcomes::list_anti_patterns(conn, scope, &filter, query.anti_patterns, None).await?;
    }
    Ok(knowledge)
}
