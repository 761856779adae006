//! SQL for learning from outcomes (DESIGN §5): the outcomes, heuristics and
//! anti-patterns the engine reads and writes when it records an outcome,
//! agent scopes, the lists, and Forget.

use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use crate::domain::outcome::{
    AgentScope, AgentScopeSet, AntiPattern, Heuristic, LearningFilter, NewOutcome, Owner,
    TaskOutcome, TaskTypeStats,
};
use crate::domain::{Micros, Scope};
use crate::error::{Error, Result};
use crate::store::tx::{NewAntiPattern, NewHeuristic, Stale};

/// Appends the rule that a learning record (alias `t`) is visible from
/// `scope`: same namespace, and where the scope names an agent or a project,
/// the record's must match it or be empty.
fn push_visible(qb: &mut QueryBuilder<Sqlite>, scope: &Scope) {
    qb.push("t.namespace = ").push_bind(scope.namespace.clone());
    for (column, value) in [
        ("t.agent_id", &scope.agent_id),
        ("t.project_id", &scope.project_id),
    ] {
        if !value.is_empty() {
            qb.push(format!(" AND {column} IN ('', "))
                .push_bind(value.clone())
                .push(")");
        }
    }
}

/// Appends the rule that a learning record (alias `t`) is owned by exactly
/// this namespace, agent and project: what Forget may delete, and what an
/// outcome learns into. An empty agent or project matches only records that
/// leave it empty.
fn push_owned(qb: &mut QueryBuilder<Sqlite>, owner: &Owner) {
    qb.push("t.namespace = ")
        .push_bind(owner.namespace.clone())
        .push(" AND t.agent_id = ")
        .push_bind(owner.agent_id.clone())
        .push(" AND t.project_id = ")
        .push_bind(owner.project_id.clone());
}

impl FromRow<'_, SqliteRow> for TaskOutcome {
    fn from_row(row: &SqliteRow) -> sqlx::Result<Self> {
        Ok(TaskOutcome {
            seq: row.try_get("seq")?,
            id: row.try_get("id")?,
            namespace: row.try_get("namespace")?,
            agent_id: row.try_get("agent_id")?,
            project_id: row.try_get("project_id")?,
            task: row.try_get("task")?,
            task_type: row.try_get("task_type")?,
            task_type_inferred: row.try_get("task_type_inferred")?,
            success: row.try_get("success")?,
            strategy: row.try_get("strategy")?,
            duration_ms: row.try_get("duration_ms")?,
            error: row.try_get("error")?,
            feedback: row.try_get("feedback")?,
            create_time: row.try_get("create_time")?,
        })
    }
}

impl FromRow<'_, SqliteRow> for Heuristic {
    fn from_row(row: &SqliteRow) -> sqlx::Result<Self> {
        Ok(Heuristic {
            seq: row.try_get("seq")?,
            id: row.try_get("id")?,
            namespace: row.try_get("namespace")?,
            agent_id: row.try_get("agent_id")?,
            project_id: row.try_get("project_id")?,
            task_type: row.try_get("task_type")?,
            strategy: row.try_get("strategy")?,
            confidence: row.try_get("confidence")?,
            occurrence_count: row.try_get("occurrence_count")?,
            success_count: row.try_get("success_count")?,
            last_validated_time: row.try_get("last_validated_time")?,
            create_time: row.try_get("create_time")?,
            update_time: row.try_get("update_time")?,
            version: row.try_get("version")?,
        })
    }
}

impl FromRow<'_, SqliteRow> for AntiPattern {
    fn from_row(row: &SqliteRow) -> sqlx::Result<Self> {
        Ok(AntiPattern {
            seq: row.try_get("seq")?,
            id: row.try_get("id")?,
            namespace: row.try_get("namespace")?,
            agent_id: row.try_get("agent_id")?,
            project_id: row.try_get("project_id")?,
            task_type: row.try_get("task_type")?,
            strategy: row.try_get("strategy")?,
            error: row.try_get("error")?,
            occurrence_count: row.try_get("occurrence_count")?,
            better_alternative: row.try_get("better_alternative")?,
            better_alternative_heuristic_id: row.try_get("better_alternative_heuristic_id")?,
            last_seen_time: row.try_get("last_seen_time")?,
            create_time: row.try_get("create_time")?,
            update_time: row.try_get("update_time")?,
            version: row.try_get("version")?,
        })
    }
}

/// The agent's learning scope, if one was set.
pub(super) async fn agent_scope(
    conn: &mut SqliteConnection,
    namespace: &str,
    agent_id: &str,
) -> Result<Option<AgentScope>> {
    let row = sqlx::query("SELECT * FROM agent_scopes WHERE namespace = ? AND agent_id = ?")
        .bind(namespace)
        .bind(agent_id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let list = |column: &str| -> Result<Vec<String>> {
        let text: String = row.try_get(column).map_err(db_error)?;
        serde_json::from_str(&text)
            .map_err(|_| Error::Internal(format!("corrupt agent scope: bad {column}")))
    };
    Ok(Some(AgentScope {
        namespace: namespace.to_owned(),
        agent_id: agent_id.to_owned(),
        can_learn: list("can_learn")?,
        cannot_learn: list("cannot_learn")?,
        min_occurrences: row.try_get("min_occurrences").map_err(db_error)?,
        set: Some(AgentScopeSet {
            create_time: row.try_get("create_time").map_err(db_error)?,
            update_time: row.try_get("update_time").map_err(db_error)?,
            version: row.try_get("version").map_err(db_error)?,
        }),
    }))
}

/// Writes an agent's learning scope as given (its `set` times and version
/// included).
pub(super) async fn save_agent_scope(
    conn: &mut SqliteConnection,
    scope: &AgentScope,
) -> Result<()> {
    let set = scope
        .set
        .ok_or_else(|| Error::Internal("an agent scope to save has no version".into()))?;
    let json = |list: &Vec<String>| {
        serde_json::to_string(list).map_err(|e| Error::Internal(format!("agent scope: {e}")))
    };
    sqlx::query(
        "INSERT INTO agent_scopes (namespace, agent_id, can_learn, cannot_learn, min_occurrences, create_time, \
         update_time, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, agent_id) DO UPDATE SET \
         can_learn = excluded.can_learn, cannot_learn = excluded.cannot_learn, \
         min_occurrences = excluded.min_occurrences, create_time = excluded.create_time, \
         update_time = excluded.update_time, version = excluded.version",
    )
    .bind(&scope.namespace)
    .bind(&scope.agent_id)
    .bind(json(&scope.can_learn)?)
    .bind(json(&scope.cannot_learn)?)
    .bind(scope.min_occurrences)
    .bind(set.create_time)
    .bind(set.update_time)
    .bind(set.version)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Stores an outcome.
pub(super) async fn insert_outcome(
    conn: &mut SqliteConnection,
    new: &NewOutcome,
    now: Micros,
) -> Result<TaskOutcome> {
    sqlx::query_as(
        "INSERT INTO outcomes (id, namespace, agent_id, project_id, task, task_type, task_type_inferred, success, \
         strategy, duration_ms, error, feedback, create_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&new.scope.namespace)
    .bind(&new.scope.agent_id)
    .bind(&new.scope.project_id)
    .bind(&new.task)
    .bind(&new.task_type)
    .bind(new.task_type_inferred)
    .bind(new.success)
    .bind(&new.strategy)
    .bind(new.duration_ms)
    .bind(&new.error)
    .bind(&new.feedback)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

/// The owner's latest `limit` outcomes of `task_type`, newest first.
pub(super) async fn recent_outcomes(
    conn: &mut SqliteConnection,
    owner: &Owner,
    task_type: &str,
    limit: i64,
) -> Result<Vec<TaskOutcome>> {
    let mut qb = QueryBuilder::<Sqlite>::new("SELECT t.* FROM outcomes t WHERE ");
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned())
        .push(" ORDER BY t.seq DESC LIMIT ")
        .push_bind(limit);
    qb.build_query_as()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// The strategies of the owner's latest `recent` outcomes of `task_type`
/// and of its heuristics of that type (match key and strategy), without
/// repeats.
pub(super) async fn compared_strategies(
    conn: &mut SqliteConnection,
    owner: &Owner,
    task_type: &str,
    recent: i64,
) -> Result<Vec<String>> {
    let mut qb = QueryBuilder::<Sqlite>::new(
        "SELECT strategy FROM (SELECT t.strategy FROM outcomes t WHERE ",
    );
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned())
        .push(" ORDER BY t.seq DESC LIMIT ")
        .push_bind(recent)
        .push(") UNION SELECT t.match_key FROM heuristics t WHERE ");
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned())
        .push(" UNION SELECT t.strategy FROM heuristics t WHERE ");
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned());
    qb.build_query_scalar()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// The rows of `table` that belong to `owner` and `task_type`, oldest first.
async fn of_task_type<T>(
    conn: &mut SqliteConnection,
    table: &str,
    owner: &Owner,
    task_type: &str,
) -> Result<Vec<T>>
where
    T: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
{
    let mut qb = QueryBuilder::<Sqlite>::new(format!("SELECT t.* FROM {table} t WHERE "));
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned())
        .push(" ORDER BY t.seq");
    qb.build_query_as()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// A heuristic and the wording it is matched by.
struct Grouped(Heuristic, String);

impl FromRow<'_, SqliteRow> for Grouped {
    fn from_row(row: &SqliteRow) -> sqlx::Result<Self> {
        Ok(Grouped(
            Heuristic::from_row(row)?,
            row.try_get("match_key")?,
        ))
    }
}

/// The owner's heuristics of `task_type`, oldest first, with their match keys.
pub(super) async fn heuristics_of(
    conn: &mut SqliteConnection,
    owner: &Owner,
    task_type: &str,
) -> Result<Vec<(Heuristic, String)>> {
    let rows: Vec<Grouped> = of_task_type(conn, "heuristics", owner, task_type).await?;
    Ok(rows.into_iter().map(|Grouped(h, key)| (h, key)).collect())
}

/// The owner's anti-patterns of `task_type`, oldest first.
pub(super) async fn anti_patterns_of(
    conn: &mut SqliteConnection,
    owner: &Owner,
    task_type: &str,
) -> Result<Vec<AntiPattern>> {
    of_task_type(conn, "anti_patterns", owner, task_type).await
}

pub(super) async fn insert_heuristic(
    conn: &mut SqliteConnection,
    new: &NewHeuristic,
    now: Micros,
) -> Result<Heuristic> {
    sqlx::query_as(
        "INSERT INTO heuristics (id, namespace, agent_id, project_id, task_type, strategy, match_key, confidence, \
         occurrence_count, success_count, last_validated_time, create_time, update_time) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&new.owner.namespace)
    .bind(&new.owner.agent_id)
    .bind(&new.owner.project_id)
    .bind(&new.task_type)
    .bind(&new.strategy)
    .bind(&new.match_key)
    .bind(new.confidence)
    .bind(new.occurrence_count)
    .bind(new.success_count)
    .bind(now)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

pub(super) async fn update_heuristic(
    conn: &mut SqliteConnection,
    h: &Heuristic,
) -> Result<Heuristic> {
    sqlx::query_as(
        "UPDATE heuristics SET strategy = ?, occurrence_count = ?, success_count = ?, confidence = ?, \
         last_validated_time = ?, update_time = ?, version = ? WHERE seq = ? RETURNING *",
    )
    .bind(&h.strategy)
    .bind(h.occurrence_count)
    .bind(h.success_count)
    .bind(h.confidence)
    .bind(h.last_validated_time)
    .bind(h.update_time)
    .bind(h.version)
    .bind(h.seq)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

pub(super) async fn insert_anti_pattern(
    conn: &mut SqliteConnection,
    new: &NewAntiPattern,
    now: Micros,
) -> Result<AntiPattern> {
    sqlx::query_as(
        "INSERT INTO anti_patterns (id, namespace, agent_id, project_id, task_type, strategy, error, \
         occurrence_count, better_alternative, better_alternative_heuristic_id, last_seen_time, create_time, \
         update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&new.owner.namespace)
    .bind(&new.owner.agent_id)
    .bind(&new.owner.project_id)
    .bind(&new.task_type)
    .bind(&new.strategy)
    .bind(&new.error)
    .bind(new.occurrence_count)
    .bind(&new.better_alternative)
    .bind(&new.better_alternative_heuristic_id)
    .bind(now)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

pub(super) async fn update_anti_pattern(
    conn: &mut SqliteConnection,
    p: &AntiPattern,
) -> Result<AntiPattern> {
    sqlx::query_as(
        "UPDATE anti_patterns SET strategy = ?, error = ?, occurrence_count = ?, better_alternative = ?, \
         better_alternative_heuristic_id = ?, last_seen_time = ?, update_time = ?, version = ? \
         WHERE seq = ? RETURNING *",
    )
    .bind(&p.strategy)
    .bind(&p.error)
    .bind(p.occurrence_count)
    .bind(&p.better_alternative)
    .bind(&p.better_alternative_heuristic_id)
    .bind(p.last_seen_time)
    .bind(p.update_time)
    .bind(p.version)
    .bind(p.seq)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)
}

/// Up to `limit` outcomes visible from `scope`, newest first, after `after` (a seq).
pub(super) async fn list_outcomes(
    conn: &mut SqliteConnection,
    scope: &Scope,
    filter: &LearningFilter,
    limit: usize,
    after: Option<i64>,
) -> Result<Vec<TaskOutcome>> {
    let mut qb = QueryBuilder::new("SELECT t.* FROM outcomes t WHERE ");
    push_visible(&mut qb, scope);
    if let Some(task_type) = &filter.task_type {
        qb.push(" AND t.task_type = ").push_bind(task_type.clone());
    }
    if let Some(success) = filter.success {
        qb.push(" AND t.success = ").push_bind(success);
    }
    if let Some(seq) = after {
        qb.push(" AND t.seq < ").push_bind(seq);
    }
    qb.push(" ORDER BY t.seq DESC LIMIT ")
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
    qb.build_query_as()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// Ends a listing query with one keyset page, highest `column` first (ties
/// newest first): rows after the `(column, seq)` cursor, at most `limit`.
fn push_keyset_page<T>(
    qb: &mut QueryBuilder<Sqlite>,
    column: &'static str,
    after: Option<(T, i64)>,
    limit: usize,
) where
    T: for<'t> sqlx::Encode<'t, Sqlite> + sqlx::Type<Sqlite>,
{
    if let Some((value, seq)) = after {
        qb.push(format_args!(" AND (t.{column}, t.seq) < ("))
            .push_bind(value)
            .push(", ")
            .push_bind(seq)
            .push(")");
    }
    qb.push(format_args!(" ORDER BY t.{column} DESC, t.seq DESC LIMIT "))
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
}

/// Up to `limit` heuristics, most confident first, after a (confidence, seq) cursor.
pub(super) async fn list_heuristics(
    conn: &mut SqliteConnection,
    scope: &Scope,
    filter: &LearningFilter,
    limit: usize,
    after: Option<(f64, i64)>,
) -> Result<Vec<Heuristic>> {
    let mut qb = QueryBuilder::new("SELECT t.* FROM heuristics t WHERE ");
    push_visible(&mut qb, scope);
    if let Some(task_type) = &filter.task_type {
        qb.push(" AND t.task_type = ").push_bind(task_type.clone());
    }
    if filter.min_confidence > 0.0 {
        qb.push(" AND t.confidence >= ")
            .push_bind(filter.min_confidence);
    }
    push_keyset_page(&mut qb, "confidence", after, limit);
    qb.build_query_as()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// Up to `limit` anti-patterns, most frequent first, after an (occurrence_count, seq) cursor.
pub(super) async fn list_anti_patterns(
    conn: &mut SqliteConnection,
    scope: &Scope,
    filter: &LearningFilter,
    limit: usize,
    after: Option<(i64, i64)>,
) -> Result<Vec<AntiPattern>> {
    let mut qb = QueryBuilder::new("SELECT t.* FROM anti_patterns t WHERE ");
    push_visible(&mut qb, scope);
    if let Some(task_type) = &filter.task_type {
        qb.push(" AND t.task_type = ").push_bind(task_type.clone());
    }
    push_keyset_page(&mut qb, "occurrence_count", after, limit);
    qb.build_query_as()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// Counts the records `stale` names (`limit` none), or deletes up to
/// `limit` of them; returns how many.
pub(super) async fn stale(
    conn: &mut SqliteConnection,
    stale: &Stale,
    limit: Option<usize>,
) -> Result<i64> {
    let (table, alias) = match stale {
        Stale::Outcomes { .. } => ("outcomes", "t"),
        Stale::Heuristics { .. } => ("heuristics", "t"),
        Stale::AntiPatterns { .. } => ("anti_patterns", "t"),
        Stale::ExpiredMemories { .. } => ("memories", "m"),
    };
    let mut qb = match limit {
        None => QueryBuilder::<Sqlite>::new("SELECT count(*) FROM "),
        Some(_) => QueryBuilder::<Sqlite>::new(format!(
            "DELETE FROM {table} WHERE seq IN (SELECT {alias}.seq FROM "
        )),
    };
    qb.push(format!("{table} AS {alias} WHERE "));
    match stale {
        Stale::Outcomes {
            owner,
            created_before,
        } => {
            push_owned(&mut qb, owner);
            qb.push(" AND t.create_time < ").push_bind(*created_before);
        }
        Stale::Heuristics {
            owner,
            confidence_below,
        } => {
            push_owned(&mut qb, owner);
            qb.push(" AND t.confidence < ").push_bind(*confidence_below);
        }
        Stale::AntiPatterns {
            owner,
            last_seen_before,
        } => {
            push_owned(&mut qb, owner);
            qb.push(" AND t.last_seen_time < ")
                .push_bind(*last_seen_before);
        }
        Stale::ExpiredMemories { scope, at } => {
            qb.push("m.namespace = ")
                .push_bind(scope.namespace.clone())
                .push(" AND m.agent_id = ")
                .push_bind(scope.agent_id.clone())
                .push(" AND m.user_id = ")
                .push_bind(scope.user_id.clone())
                .push(" AND m.project_id = ")
                .push_bind(scope.project_id.clone())
                .push(" AND m.session_id = ")
                .push_bind(scope.session_id.clone())
                .push(" AND m.expire_time IS NOT NULL AND m.expire_time <= ")
                .push_bind(*at);
        }
    }
    match limit {
        None => qb
            .build_query_scalar::<i64>()
            .fetch_one(&mut *conn)
            .await
            .map_err(db_error),
        Some(limit) => {
            qb.push(" LIMIT ")
                .push_bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .push(")");
            let done = qb.build().execute(&mut *conn).await.map_err(db_error)?;
            Ok(i64::try_from(done.rows_affected()).unwrap_or(i64::MAX))
        }
    }
}

/// Per task type: outcomes, successes, heuristics and anti-patterns visible from `scope`.
pub(super) async fn task_type_stats(
    conn: &mut SqliteConnection,
    scope: &Scope,
) -> Result<Vec<TaskTypeStats>> {
    let mut qb = QueryBuilder::new(
        "SELECT task_type, sum(outcomes), sum(successes), sum(heuristics), sum(anti_patterns) FROM (\
         SELECT t.task_type, 1 AS outcomes, t.success AS successes, 0 AS heuristics, 0 AS anti_patterns \
         FROM outcomes t WHERE ",
    );
    push_visible(&mut qb, scope);
    qb.push(" UNION ALL SELECT t.task_type, 0, 0, 1, 0 FROM heuristics t WHERE ");
    push_visible(&mut qb, scope);
    qb.push(" UNION ALL SELECT t.task_type, 0, 0, 0, 1 FROM anti_patterns t WHERE ");
    push_visible(&mut qb, scope);
    qb.push(") GROUP BY task_type ORDER BY task_type");
    let rows: Vec<(String, i64, i64, i64, i64)> = qb
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(rows
        .into_iter()
        .map(
            |(task_type, outcomes, successes, heuristics, anti_patterns)| TaskTypeStats {
                task_type,
                outcomes,
                successes,
                heuristics,
                anti_patterns,
            },
        )
        .collect())
}
