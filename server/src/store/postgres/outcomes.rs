//! SQL for learning from outcomes on PostgreSQL (DESIGN §5): outcomes,
//! heuristics and anti-patterns, agent scopes, the lists, and Forget.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Postgres, QueryBuilder, Row as _};

use super::db_error;
use super::memories::limit_of;
use super::rows;
use crate::domain::Micros;
use crate::domain::Scope;
use crate::domain::outcome::{
    AgentScope, AgentScopeSet, AntiPattern, Heuristic, LearningFilter, NewOutcome, Owner,
    TaskOutcome, TaskTypeStats,
};
use crate::error::{Error, Result};
use crate::store::tx::{NewAntiPattern, NewHeuristic, Stale};

/// Appends the rule that a learning record (alias `t`) is visible from
/// `scope`: same namespace, and where the scope names an agent or a project,
/// the record's must match it or be empty.
fn push_visible(qb: &mut QueryBuilder<Postgres>, scope: &Scope) {
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
/// this namespace, agent and project.
fn push_owned(qb: &mut QueryBuilder<Postgres>, owner: &Owner) {
    qb.push("t.namespace = ")
        .push_bind(owner.namespace.clone())
        .push(" AND t.agent_id = ")
        .push_bind(owner.agent_id.clone())
        .push(" AND t.project_id = ")
        .push_bind(owner.project_id.clone());
}

/// Runs `qb` and decodes its rows with `decode`.
async fn fetch<T>(
    conn: &mut PgConnection,
    mut qb: QueryBuilder<Postgres>,
    decode: fn(&PgRow) -> Result<T>,
) -> Result<Vec<T>> {
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows::all(&rows, decode)
}

/// The agent's learning scope, if one was set.
pub(super) async fn agent_scope(
    conn: &mut PgConnection,
    namespace: &str,
    agent_id: &str,
) -> Result<Option<AgentScope>> {
    let row = sqlx::query("SELECT * FROM agent_scopes WHERE namespace = $1 AND agent_id = $2")
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

/// Writes an agent's learning scope as given.
pub(super) async fn save_agent_scope(conn: &mut PgConnection, scope: &AgentScope) -> Result<()> {
    let set = scope
        .set
        .ok_or_else(|| Error::Internal("an agent scope to save has no version".into()))?;
    let json = |list: &Vec<String>| {
        serde_json::to_string(list).map_err(|e| Error::Internal(format!("agent scope: {e}")))
    };
    sqlx::query(
        "INSERT INTO agent_scopes (namespace, agent_id, can_learn, cannot_learn, min_occurrences, \
         create_time, update_time, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (namespace, agent_id) DO UPDATE SET \
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
    conn: &mut PgConnection,
    new: &NewOutcome,
    now: Micros,
) -> Result<TaskOutcome> {
    let row = sqlx::query(
        "INSERT INTO outcomes (id, namespace, agent_id, project_id, task, task_type, \
         task_type_inferred, success, strategy, duration_ms, error, feedback, create_time) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *",
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
    .map_err(db_error)?;
    rows::outcome(&row)
}

/// The owner's latest `limit` outcomes of `task_type`, newest first.
pub(super) async fn recent_outcomes(
    conn: &mut PgConnection,
    owner: &Owner,
    task_type: &str,
    limit: i64,
) -> Result<Vec<TaskOutcome>> {
    let mut qb = QueryBuilder::<Postgres>::new("SELECT t.* FROM outcomes t WHERE ");
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned())
        .push(" ORDER BY t.seq DESC LIMIT ")
        .push_bind(limit);
    fetch(conn, qb, rows::outcome).await
}

/// The strategies of the owner's latest `recent` outcomes of `task_type`
/// and of its heuristics of that type (match key and strategy), without
/// repeats.
pub(super) async fn compared_strategies(
    conn: &mut PgConnection,
    owner: &Owner,
    task_type: &str,
    recent: i64,
) -> Result<Vec<String>> {
    let mut qb = QueryBuilder::<Postgres>::new(
        "SELECT strategy FROM (SELECT t.strategy FROM outcomes t WHERE ",
    );
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned())
        .push(" ORDER BY t.seq DESC LIMIT ")
        .push_bind(recent)
        .push(") AS recent UNION SELECT t.match_key FROM heuristics t WHERE ");
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

/// `SELECT t.* FROM {table} t WHERE` the rows owned by `owner` of
/// `task_type`, oldest first.
fn of_task_type(table: &str, owner: &Owner, task_type: &str) -> QueryBuilder<Postgres> {
    let mut qb = QueryBuilder::<Postgres>::new(format!("SELECT t.* FROM {table} t WHERE "));
    push_owned(&mut qb, owner);
    qb.push(" AND t.task_type = ")
        .push_bind(task_type.to_owned())
        .push(" ORDER BY t.seq");
    qb
}

/// A heuristic and the wording it is matched by.
fn grouped(row: &PgRow) -> Result<(Heuristic, String)> {
    Ok((
        rows::heuristic(row)?,
        row.try_get("match_key").map_err(db_error)?,
    ))
}

/// The owner's heuristics of `task_type`, oldest first, with their match keys.
pub(super) async fn heuristics_of(
    conn: &mut PgConnection,
    owner: &Owner,
    task_type: &str,
) -> Result<Vec<(Heuristic, String)>> {
    fetch(conn, of_task_type("heuristics", owner, task_type), grouped).await
}

/// The owner's anti-patterns of `task_type`, oldest first.
pub(super) async fn anti_patterns_of(
    conn: &mut PgConnection,
    owner: &Owner,
    task_type: &str,
) -> Result<Vec<AntiPattern>> {
    fetch(
        conn,
        of_task_type("anti_patterns", owner, task_type),
        rows::anti_pattern,
    )
    .await
}

pub(super) async fn insert_heuristic(
    conn: &mut PgConnection,
    new: &NewHeuristic,
    now: Micros,
) -> Result<Heuristic> {
    let row = sqlx::query(
        "INSERT INTO heuristics (id, namespace, agent_id, project_id, task_type, strategy, match_key, \
         confidence, occurrence_count, success_count, last_validated_time, create_time, update_time) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $11) RETURNING *",
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
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    rows::heuristic(&row)
}

pub(super) async fn update_heuristic(conn: &mut PgConnection, h: &Heuristic) -> Result<Heuristic> {
    let row = sqlx::query(
        "UPDATE heuristics SET strategy = $1, occurrence_count = $2, success_count = $3, \
         confidence = $4, last_validated_time = $5, update_time = $6, version = $7 WHERE seq = $8 \
         RETURNING *",
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
    .map_err(db_error)?;
    rows::heuristic(&row)
}

pub(super) async fn insert_anti_pattern(
    conn: &mut PgConnection,
    new: &NewAntiPattern,
    now: Micros,
) -> Result<AntiPattern> {
    let row = sqlx::query(
        "INSERT INTO anti_patterns (id, namespace, agent_id, project_id, task_type, strategy, error, \
         occurrence_count, better_alternative, better_alternative_heuristic_id, last_seen_time, \
         create_time, update_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $11) \
         RETURNING *",
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
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    rows::anti_pattern(&row)
}

pub(super) async fn update_anti_pattern(
    conn: &mut PgConnection,
    p: &AntiPattern,
) -> Result<AntiPattern> {
    let row = sqlx::query(
        "UPDATE anti_patterns SET strategy = $1, error = $2, occurrence_count = $3, \
         better_alternative = $4, better_alternative_heuristic_id = $5, last_seen_time = $6, \
         update_time = $7, version = $8 WHERE seq = $9 RETURNING *",
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
    .map_err(db_error)?;
    rows::anti_pattern(&row)
}

/// Up to `limit` outcomes visible from `scope`, newest first, after `after` (a seq).
pub(super) async fn list_outcomes(
    conn: &mut PgConnection,
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
        .push_bind(limit_of(limit));
    fetch(conn, qb, rows::outcome).await
}

/// Ends a listing query with one keyset page, highest `column` first (ties
/// newest first): rows after the `(column, seq)` cursor, at most `limit`.
fn push_keyset_page<T>(
    qb: &mut QueryBuilder<Postgres>,
    column: &'static str,
    after: Option<(T, i64)>,
    limit: usize,
) where
    T: for<'t> sqlx::Encode<'t, Postgres> + sqlx::Type<Postgres> + Send + 'static,
{
    if let Some((value, seq)) = after {
        qb.push(format_args!(" AND (t.{column}, t.seq) < ("))
            .push_bind(value)
            .push(", ")
            .push_bind(seq)
            .push(")");
    }
    qb.push(format_args!(" ORDER BY t.{column} DESC, t.seq DESC LIMIT "))
        .push_bind(limit_of(limit));
}

/// Up to `limit` heuristics, most confident first, after a (confidence, seq) cursor.
pub(super) async fn list_heuristics(
    conn: &mut PgConnection,
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
    fetch(conn, qb, rows::heuristic).await
}

/// Up to `limit` anti-patterns, most frequent first, after an (occurrence_count, seq) cursor.
pub(super) async fn list_anti_patterns(
    conn: &mut PgConnection,
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
    fetch(conn, qb, rows::anti_pattern).await
}

/// Counts the records `stale` names (`limit` none), or deletes up to
/// `limit` of them; returns how many.
pub(super) async fn stale(
    conn: &mut PgConnection,
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
        None => QueryBuilder::<Postgres>::new("SELECT count(*) FROM "),
        Some(_) => QueryBuilder::<Postgres>::new(format!(
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
            // Rows another Forget or purge holds are left to it.
            qb.push(" LIMIT ")
                .push_bind(limit_of(limit))
                .push(" FOR UPDATE SKIP LOCKED)");
            let done = qb.build().execute(&mut *conn).await.map_err(db_error)?;
            Ok(i64::try_from(done.rows_affected()).unwrap_or(i64::MAX))
        }
    }
}

/// Per task type: outcomes, successes, heuristics and anti-patterns visible from `scope`.
pub(super) async fn task_type_stats(
    conn: &mut PgConnection,
    scope: &Scope,
) -> Result<Vec<TaskTypeStats>> {
    let mut qb = QueryBuilder::new(
        "SELECT task_type, sum(outcomes)::bigint, sum(successes)::bigint, sum(heuristics)::bigint, \
         sum(anti_patterns)::bigint FROM (\
         SELECT t.task_type, 1 AS outcomes, t.success::int AS successes, 0 AS heuristics, \
         0 AS anti_patterns FROM outcomes t WHERE ",
    );
    push_visible(&mut qb, scope);
    qb.push(" UNION ALL SELECT t.task_type, 0, 0, 1, 0 FROM heuristics t WHERE ");
    push_visible(&mut qb, scope);
    qb.push(" UNION ALL SELECT t.task_type, 0, 0, 0, 1 FROM anti_patterns t WHERE ");
    push_visible(&mut qb, scope);
    qb.push(") AS counted GROUP BY task_type ORDER BY task_type");
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
