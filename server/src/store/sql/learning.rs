//! SQL for what is learned from episodes: the rules, lessons, mistake cards
//! and learning progress the engine reads and writes when an episode
//! completes or a mistake is recorded, statistics, and the knowledge
//! BuildContext shows.

use std::collections::BTreeMap;

use super::episodes::{self, returned};
use super::rows::{self, episode_columns};
use super::{Columns, Dialect, Row, Sql, count, fetch, fetch_one, memories, outcomes};
use crate::domain::episode::{
    Episode, EpisodeStatus, GLOBAL, MistakeCard, ReportedMistake, RuleOrigin, Stats, TaskKnowledge,
    TaskRule, TaskStats,
};
use crate::domain::outcome::LearningFilter;
use crate::domain::{Micros, Scope};
use crate::error::{Error, Result};
use crate::store::KnowledgeQuery;
use crate::store::transfer::rows::{LESSON_MISTAKE, LESSON_SUCCESS};
use crate::store::tx::{CardKey, LearningProgress, Lesson, NewMistakeCard};

/// The `episode_lessons.kind` of a lesson.
fn lesson_code(kind: Lesson) -> i32 {
    match kind {
        Lesson::Mistake => LESSON_MISTAKE,
        Lesson::Success => LESSON_SUCCESS,
    }
}

/// Writes an episode's end as given.
pub async fn finish_episode<D: Dialect>(conn: &mut D, e: &Episode) -> Result<Episode> {
    let outcome = e
        .outcome
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| Error::Internal(format!("outcome: {e}")))?;
    let mut sql = Sql::new("UPDATE episodes SET status = ");
    sql.bind(e.status.code())
        .push(", score = ")
        .bind(e.outcome.as_ref().map(|o| o.score))
        .push(", outcome = ")
        .bind(outcome.as_deref())
        .push(D::JSON_PARAM)
        .push(", complete_time = ")
        .bind(e.complete_time)
        .push(", update_time = ")
        .bind(e.update_time)
        .push(", version = ")
        .bind(e.version)
        .push(" WHERE seq = ")
        .bind(e.seq)
        .push(format_args!(" RETURNING {}", episode_columns::<D>("")));
    returned(conn, sql).await
}

/// Adds a rule unless the same text is already a rule of that task.
pub async fn insert_rule<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    task_id: &str,
    text: &str,
    origin: RuleOrigin,
    now: Micros,
) -> Result<Option<TaskRule>> {
    let mut sql = Sql::new(
        "INSERT INTO task_rules (id, namespace, task_id, text, origin, create_time) VALUES (",
    );
    sql.values(|v| {
        v.bind(uuid::Uuid::now_v7().to_string())
            .bind(namespace)
            .bind(task_id)
            .bind(text)
            .bind(origin.code())
            .bind(now);
    })
    .push(") ON CONFLICT (namespace, task_id, text) DO NOTHING RETURNING *");
    let row = conn.fetch_optional(sql).await?;
    row.as_ref().map(rows::rule::<D>).transpose()
}

/// Deletes all but the task's `keep` newest rules.
pub async fn trim_rules<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    task_id: &str,
    keep: usize,
) -> Result<()> {
    let mut sql = Sql::new("DELETE FROM task_rules WHERE namespace = ");
    sql.bind(namespace)
        .push(" AND task_id = ")
        .bind(task_id)
        .push(" AND seq NOT IN (SELECT seq FROM task_rules WHERE namespace = ")
        .bind(namespace)
        .push(" AND task_id = ")
        .bind(task_id)
        .push(" ORDER BY seq DESC LIMIT ")
        .bind(count(keep))
        .push(")");
    conn.execute(sql).await?;
    Ok(())
}

/// The namespace's next tick.
pub async fn tick<D: Dialect>(conn: &mut D, namespace: &str) -> Result<i64> {
    let mut sql = Sql::new("INSERT INTO learning_state (namespace, tick) VALUES (");
    sql.bind(namespace).push(
        ", 1) ON CONFLICT (namespace) DO UPDATE SET tick = learning_state.tick + 1 \
         RETURNING tick",
    );
    fetch_one(conn, sql, |row| Columns::<D>::of(row).get("tick")).await
}

/// Counts one more sighting of a lesson of the namespace.
pub async fn count_lesson<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    kind: Lesson,
    text: &str,
    last_seen: i64,
    now: Micros,
) -> Result<()> {
    let mut sql = Sql::new(
        "INSERT INTO episode_lessons (id, namespace, kind, text, last_seen, create_time, \
         update_time) VALUES (",
    );
    sql.values(|v| {
        v.bind(uuid::Uuid::now_v7().to_string())
            .bind(namespace)
            .bind(lesson_code(kind))
            .bind(text)
            .bind(last_seen)
            .bind(now)
            .bind(now);
    })
    .push(
        ") ON CONFLICT (namespace, kind, text) DO UPDATE SET \
         seen_count = episode_lessons.seen_count + 1, last_seen = excluded.last_seen, \
         update_time = excluded.update_time",
    );
    conn.execute(sql).await?;
    Ok(())
}

/// The mistake card of `key`, if there is one.
pub async fn mistake_card<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    key: &CardKey,
) -> Result<Option<MistakeCard>> {
    let mut sql = Sql::new("SELECT * FROM mistake_cards WHERE namespace = ");
    sql.bind(namespace)
        .push(" AND mistake_type = ")
        .bind(key.mistake_type.as_str())
        .push(" AND task_id = ")
        .bind(key.task_id.as_str())
        .push(" AND worker_id = ")
        .bind(key.worker_id.as_str())
        .push(" AND correct_decision = ")
        .bind(key.correct_decision.as_str());
    let row = conn.fetch_optional(sql).await?;
    row.as_ref().map(rows::card::<D>).transpose()
}

pub async fn insert_mistake_card<D: Dialect>(
    conn: &mut D,
    new: &NewMistakeCard,
    now: Micros,
) -> Result<MistakeCard> {
    let mut sql = Sql::new(
        "INSERT INTO mistake_cards (id, namespace, mistake_type, task_id, worker_id, \
         correct_decision, evidence, lesson, first_seen_episode_id, last_seen_episode_id, \
         last_seen, create_time, update_time) VALUES (",
    );
    sql.values(|v| {
        v.bind(uuid::Uuid::now_v7().to_string())
            .bind(new.namespace.as_str())
            .bind(new.key.mistake_type.as_str())
            .bind(new.key.task_id.as_str())
            .bind(new.key.worker_id.as_str())
            .bind(new.key.correct_decision.as_str())
            .bind(new.evidence.as_str())
            .bind(new.lesson.as_str())
            .bind(new.episode_id.as_str())
            .bind(new.episode_id.as_str())
            .bind(new.last_seen)
            .bind(now)
            .bind(now);
    })
    .push(") RETURNING *");
    fetch_one(conn, sql, rows::card::<D>).await
}

pub async fn update_mistake_card<D: Dialect>(
    conn: &mut D,
    card: &MistakeCard,
) -> Result<MistakeCard> {
    let mut sql = Sql::new("UPDATE mistake_cards SET seen_count = ");
    sql.bind(card.seen_count)
        .push(", evidence = ")
        .bind(card.evidence.as_str())
        .push(", lesson = ")
        .bind(card.lesson.as_str())
        .push(", last_seen_episode_id = ")
        .bind(card.last_seen_episode_id.as_str())
        .push(", last_seen = ")
        .bind(card.last_seen)
        .push(", update_time = ")
        .bind(card.update_time)
        .push(", version = ")
        .bind(card.version)
        .push(" WHERE id = ")
        .bind(card.id.as_str())
        .push(" RETURNING *");
    fetch_one(conn, sql, rows::card::<D>).await
}

/// Deletes all but the namespace's `keep` strongest cards.
pub async fn trim_mistake_cards<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    keep: usize,
) -> Result<()> {
    let mut sql = Sql::new("DELETE FROM mistake_cards WHERE namespace = ");
    sql.bind(namespace)
        .push(" AND seq NOT IN (SELECT seq FROM mistake_cards WHERE namespace = ")
        .bind(namespace)
        .push(" ORDER BY seen_count DESC, last_seen DESC LIMIT ")
        .bind(count(keep))
        .push(")");
    conn.execute(sql).await?;
    Ok(())
}

pub async fn mistake_card_exists<D: Dialect>(conn: &mut D, id: &str) -> Result<bool> {
    let mut sql = Sql::new("SELECT EXISTS (SELECT 1 FROM mistake_cards WHERE id = ");
    sql.bind(id).push(") AS found");
    fetch_one(conn, sql, |row| Columns::<D>::of(row).get("found")).await
}

/// Counts one more completed episode of the namespace: the row's lock
/// makes concurrent completions count one after another, each seeing the
/// count with its own.
pub async fn count_completion<D: Dialect>(
    conn: &mut D,
    namespace: &str,
) -> Result<LearningProgress> {
    let mut sql = Sql::new("INSERT INTO learning_state (namespace, completed_episodes) VALUES (");
    sql.bind(namespace).push(
        ", 1) ON CONFLICT (namespace) DO UPDATE SET \
         completed_episodes = learning_state.completed_episodes + 1 \
         RETURNING completed_episodes, last_consolidation",
    );
    fetch_one(conn, sql, progress::<D>).await
}

fn progress<D: Dialect>(row: &Row<D>) -> Result<LearningProgress> {
    let c = Columns::<D>::of(row);
    let last: Option<i64> = c.get("last_consolidation")?;
    Ok(LearningProgress {
        completed_episodes: c.get("completed_episodes")?,
        last_consolidation: last.unwrap_or(0),
    })
}

/// How far the namespace's learning has got (nothing yet: zeros).
pub async fn learning_progress<D: Dialect>(
    conn: &mut D,
    namespace: &str,
) -> Result<LearningProgress> {
    let mut sql = Sql::new(
        "SELECT completed_episodes, last_consolidation FROM learning_state WHERE namespace = ",
    );
    sql.bind(namespace);
    let row = conn.fetch_optional(sql).await?;
    Ok(row
        .as_ref()
        .map(progress::<D>)
        .transpose()?
        .unwrap_or_default())
}

/// Up to `limit` of the namespace's completed episodes scoring at least
/// `min_score` (any, without), latest completed first.
pub async fn completed_episodes<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    min_score: Option<f64>,
    limit: usize,
) -> Result<Vec<Episode>> {
    let mut sql = Sql::new(format!(
        "SELECT {} FROM episodes WHERE namespace = ",
        episode_columns::<D>("")
    ));
    sql.bind(namespace)
        .push(" AND status = ")
        .bind(EpisodeStatus::Completed.code());
    if let Some(min_score) = min_score {
        sql.push(" AND score >= ").bind(min_score);
    }
    sql.push(" ORDER BY complete_time DESC, seq DESC LIMIT ")
        .bind(count(limit));
    fetch(conn, sql, rows::episode::<D>).await
}

/// Notes that the namespace's completed episodes so far are consolidated.
pub async fn mark_consolidated<D: Dialect>(conn: &mut D, namespace: &str) -> Result<()> {
    let mut sql = Sql::new("INSERT INTO learning_state (namespace, last_consolidation) VALUES (");
    sql.bind(namespace).push(
        ", 0) ON CONFLICT (namespace) DO UPDATE SET \
         last_consolidation = learning_state.completed_episodes",
    );
    conn.execute(sql).await?;
    Ok(())
}

/// One page (plus one) of rules, newest first: of a task, global ones (task
/// `Some("")`), or all (`None`).
pub async fn list_rules<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    task_id: Option<&str>,
    page_size: usize,
    after_seq: Option<i64>,
) -> Result<Vec<TaskRule>> {
    let mut sql = Sql::new("SELECT * FROM task_rules WHERE namespace = ");
    sql.bind(namespace);
    if let Some(task_id) = task_id {
        sql.push(" AND task_id = ").bind(task_id);
    }
    if let Some(seq) = after_seq {
        sql.push(" AND seq < ").bind(seq);
    }
    sql.push(" ORDER BY seq DESC LIMIT ")
        .bind(count(page_size + 1));
    fetch(conn, sql, rows::rule::<D>).await
}

/// Up to `limit` cards, strongest first. `after` is the (seen_count,
/// last_seen) of the previous page's last card.
pub async fn list_cards<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    task_id: Option<&str>,
    mistake_type: Option<&str>,
    limit: usize,
    after: Option<(i64, i64)>,
) -> Result<Vec<MistakeCard>> {
    let mut sql = Sql::new("SELECT * FROM mistake_cards WHERE namespace = ");
    sql.bind(namespace);
    if let Some(task_id) = task_id {
        sql.push(" AND task_id = ").bind(task_id);
    }
    if let Some(mistake_type) = mistake_type {
        sql.push(" AND mistake_type = ").bind(mistake_type);
    }
    if let Some((seen_count, last_seen)) = after {
        sql.push(" AND (seen_count, last_seen) < (")
            .bind(seen_count)
            .push(", ")
            .bind(last_seen)
            .push(")");
    }
    sql.push(" ORDER BY seen_count DESC, last_seen DESC LIMIT ")
        .bind(count(limit));
    fetch(conn, sql, rows::card::<D>).await
}

/// The one count `sql` (aliased `n`) returns.
async fn count_of<D: Dialect>(conn: &mut D, sql: Sql<D>) -> Result<i64> {
    fetch_one(conn, sql, |row| Columns::<D>::of(row).get("n")).await
}

/// How many rows of `table` the namespace holds where `condition` holds.
async fn count_in_namespace<D: Dialect>(
    conn: &mut D,
    table: &str,
    namespace: &str,
    condition: &str,
) -> Result<i64> {
    let mut sql = Sql::new(format!(
        "SELECT count(*) AS n FROM {table} WHERE namespace = "
    ));
    sql.bind(namespace).push(condition);
    count_of(conn, sql).await
}

/// The numbers GetStats reports for `scope`.
pub async fn stats<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    top_cards: usize,
    now: Micros,
) -> Result<Stats> {
    let namespace = scope.namespace.as_str();
    let mut sql = Sql::new("SELECT count(*) AS n FROM episodes e WHERE ");
    episodes::push_visible(&mut sql, scope);
    let total_episodes = count_of(conn, sql).await?;

    let mut sql =
        Sql::new("SELECT e.task_id, count(*) AS n, avg(e.score) AS mean FROM episodes e WHERE ");
    episodes::push_visible(&mut sql, scope);
    sql.push(" AND e.status = ")
        .bind(EpisodeStatus::Completed.code())
        .push(" GROUP BY e.task_id");
    let scored = conn.fetch_all(sql).await?;
    let mut sql = Sql::new("SELECT task_id, count(*) AS n FROM task_rules WHERE namespace = ");
    sql.bind(namespace)
        .push(" AND task_id <> '' GROUP BY task_id");
    let rule_counts = conn.fetch_all(sql).await?;
    let mut tasks: BTreeMap<String, TaskStats> = BTreeMap::new();
    for row in &scored {
        let c = Columns::<D>::of(row);
        let task_id: String = c.get("task_id")?;
        let task = tasks
            .entry(task_id.clone())
            .or_insert_with(|| empty_task(task_id));
        task.scored_episodes = c.get("n")?;
        // Completed episodes always have a score; a NULL mean is none.
        let mean: Option<f64> = c.get("mean")?;
        task.mean_score = mean.unwrap_or(0.0);
    }
    for row in &rule_counts {
        let c = Columns::<D>::of(row);
        let task_id: String = c.get("task_id")?;
        tasks
            .entry(task_id.clone())
            .or_insert_with(|| empty_task(task_id))
            .rules = c.get("n")?;
    }

    let (memories_per_type, invalidated_memories) =
        memories::count_per_type(conn, scope, now).await?;
    Ok(Stats {
        total_episodes,
        global_rules: count_in_namespace(conn, "task_rules", namespace, " AND task_id = ''")
            .await?,
        tasks: tasks.into_values().collect(),
        mistakes: count_in_namespace(
            conn,
            "episode_lessons",
            namespace,
            &format!(" AND kind = {LESSON_MISTAKE}"),
        )
        .await?,
        mistake_cards: count_in_namespace(conn, "mistake_cards", namespace, "").await?,
        top_mistake_cards: list_cards(conn, namespace, None, None, top_cards, None).await?,
        memories_per_type,
        invalidated_memories,
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

/// Up to `limit` of the task's rules (`GLOBAL`: the namespace-wide ones),
/// newest first.
async fn rules_of<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    task_id: &str,
    limit: usize,
) -> Result<Vec<TaskRule>> {
    let mut sql = Sql::new("SELECT * FROM task_rules WHERE namespace = ");
    sql.bind(namespace)
        .push(" AND task_id = ")
        .bind(task_id)
        .push(" ORDER BY seq DESC LIMIT ")
        .bind(count(limit));
    fetch(conn, sql, rows::rule::<D>).await
}

/// What BuildContext shows about `task_id` (empty: only namespace-wide knowledge).
pub async fn knowledge<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    task_id: &str,
    task_type: &str,
    query: &KnowledgeQuery,
) -> Result<TaskKnowledge> {
    let namespace = scope.namespace.as_str();
    let mut knowledge = TaskKnowledge::default();
    if !task_id.is_empty() {
        knowledge.task_rules = rules_of(conn, namespace, task_id, query.task_rules).await?;
    }
    knowledge.global_rules = rules_of(conn, namespace, GLOBAL, query.global_rules).await?;

    let mut sql = Sql::new("SELECT id, text FROM episode_lessons WHERE namespace = ");
    sql.bind(namespace)
        .push(" AND kind = ")
        .bind(LESSON_MISTAKE)
        .push(" ORDER BY last_seen DESC LIMIT ")
        .bind(count(query.mistakes));
    knowledge.mistakes = fetch(conn, sql, |row| {
        let c = Columns::<D>::of(row);
        Ok(ReportedMistake {
            id: c.get("id")?,
            text: c.get("text")?,
        })
    })
    .await?;
    knowledge.mistake_cards =
        list_cards(conn, namespace, None, None, query.mistake_cards, None).await?;

    if !task_id.is_empty() {
        let completed = |select: String| {
            let mut sql = Sql::<D>::new(select);
            episodes::push_visible(&mut sql, scope);
            sql.push(" AND e.task_id = ")
                .bind(task_id)
                .push(" AND e.status = ")
                .bind(EpisodeStatus::Completed.code());
            sql
        };
        let mut sql = completed(format!(
            "SELECT {} FROM episodes e WHERE ",
            episode_columns::<D>("e")
        ));
        sql.push(" ORDER BY e.complete_time DESC, e.seq DESC LIMIT ")
            .bind(count(query.recent_episodes));
        knowledge.recent_episodes = fetch(conn, sql, rows::episode::<D>).await?;
        let sql =
            completed("SELECT avg(e.score) AS mean, count(*) AS n FROM episodes e WHERE ".into());
        let (mean, n) = fetch_one(conn, sql, |row| {
            let c = Columns::<D>::of(row);
            Ok((c.get::<Option<f64>>("mean")?, c.get::<i64>("n")?))
        })
        .await?;
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
