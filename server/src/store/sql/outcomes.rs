//! SQL for learning from outcomes (DESIGN §5): the outcomes, heuristics and
//! anti-patterns the engine reads and writes when it records an outcome,
//! agent scopes, the lists, and Forget.

use super::{Columns, Dialect, Sql, count, fetch, fetch_one, rows};
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
fn push_visible<D: Dialect>(sql: &mut Sql<D>, scope: &Scope) {
    sql.push("t.namespace = ").bind(scope.namespace.as_str());
    for (column, value) in [
        ("t.agent_id", &scope.agent_id),
        ("t.project_id", &scope.project_id),
    ] {
        if !value.is_empty() {
            sql.push(format_args!(" AND {column} IN ('', "))
                .bind(value.as_str())
                .push(")");
        }
    }
}

/// Appends the rule that a learning record (alias `t`) is owned by exactly
/// this namespace, agent and project: what Forget may delete, and what an
/// outcome learns into. An empty agent or project matches only records that
/// leave it empty.
fn push_owned<D: Dialect>(sql: &mut Sql<D>, owner: &Owner) {
    sql.push("t.namespace = ")
        .bind(owner.namespace.as_str())
        .push(" AND t.agent_id = ")
        .bind(owner.agent_id.as_str())
        .push(" AND t.project_id = ")
        .bind(owner.project_id.as_str());
}

/// The agent's learning scope, if one was set.
pub async fn agent_scope<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    agent_id: &str,
) -> Result<Option<AgentScope>> {
    let mut sql = Sql::new("SELECT * FROM agent_scopes WHERE namespace = ");
    sql.bind(namespace).push(" AND agent_id = ").bind(agent_id);
    let Some(row) = conn.fetch_optional(sql).await? else {
        return Ok(None);
    };
    let c = Columns::<D>::of(&row);
    let list = |column: &str| -> Result<Vec<String>> {
        let text: String = c.get(column)?;
        serde_json::from_str(&text)
            .map_err(|_| Error::Internal(format!("corrupt agent scope: bad {column}")))
    };
    Ok(Some(AgentScope {
        namespace: namespace.to_owned(),
        agent_id: agent_id.to_owned(),
        can_learn: list("can_learn")?,
        cannot_learn: list("cannot_learn")?,
        min_occurrences: c.get("min_occurrences")?,
        set: Some(AgentScopeSet {
            create_time: c.get("create_time")?,
            update_time: c.get("update_time")?,
            version: c.get("version")?,
        }),
    }))
}

/// Writes an agent's learning scope as given (its `set` times and version
/// included).
pub async fn save_agent_scope<D: Dialect>(conn: &mut D, scope: &AgentScope) -> Result<()> {
    let set = scope
        .set
        .ok_or_else(|| Error::Internal("an agent scope to save has no version".into()))?;
    let json = |list: &Vec<String>| {
        serde_json::to_string(list).map_err(|e| Error::Internal(format!("agent scope: {e}")))
    };
    let (can_learn, cannot_learn) = (json(&scope.can_learn)?, json(&scope.cannot_learn)?);
    let mut sql = Sql::new(
        "INSERT INTO agent_scopes (namespace, agent_id, can_learn, cannot_learn, \
         min_occurrences, create_time, update_time, version) VALUES (",
    );
    sql.values(|v| {
        v.bind(scope.namespace.as_str())
            .bind(scope.agent_id.as_str())
            .bind(can_learn)
            .bind(cannot_learn)
            .bind(scope.min_occurrences)
            .bind(set.create_time)
            .bind(set.update_time)
            .bind(set.version);
    })
    .push(
        ") ON CONFLICT (namespace, agent_id) DO UPDATE SET \
         can_learn = excluded.can_learn, cannot_learn = excluded.cannot_learn, \
         min_occurrences = excluded.min_occurrences, create_time = excluded.create_time, \
         update_time = excluded.update_time, version = excluded.version",
    );
    conn.execute(sql).await?;
    Ok(())
}

/// Stores an outcome.
pub async fn insert_outcome<D: Dialect>(
    conn: &mut D,
    new: &NewOutcome,
    now: Micros,
) -> Result<TaskOutcome> {
    let mut sql = Sql::new(
        "INSERT INTO outcomes (id, namespace, agent_id, project_id, task, task_type, \
         task_type_inferred, success, strategy, duration_ms, error, feedback, create_time) \
         VALUES (",
    );
    sql.values(|v| {
        v.bind(uuid::Uuid::now_v7().to_string())
            .bind(new.scope.namespace.as_str())
            .bind(new.scope.agent_id.as_str())
            .bind(new.scope.project_id.as_str())
            .bind(new.task.as_str())
            .bind(new.task_type.as_str())
            .bind(new.task_type_inferred)
            .bind(new.success)
            .bind(new.strategy.as_str())
            .bind(new.duration_ms)
            .bind(new.error.as_str())
            .bind(new.feedback.as_str())
            .bind(now);
    })
    .push(") RETURNING *");
    fetch_one(conn, sql, rows::outcome::<D>).await
}

/// The owner's latest `limit` outcomes of `task_type`, newest first.
pub async fn recent_outcomes<D: Dialect>(
    conn: &mut D,
    owner: &Owner,
    task_type: &str,
    limit: i64,
) -> Result<Vec<TaskOutcome>> {
    let mut sql = Sql::new("SELECT t.* FROM outcomes t WHERE ");
    push_owned(&mut sql, owner);
    sql.push(" AND t.task_type = ")
        .bind(task_type)
        .push(" ORDER BY t.seq DESC LIMIT ")
        .bind(limit);
    fetch(conn, sql, rows::outcome::<D>).await
}

/// The strategies of the owner's latest `recent` outcomes of `task_type`
/// and of its heuristics of that type (match key and strategy), without
/// repeats.
pub async fn compared_strategies<D: Dialect>(
    conn: &mut D,
    owner: &Owner,
    task_type: &str,
    recent: i64,
) -> Result<Vec<String>> {
    let mut sql = Sql::new("SELECT strategy FROM (SELECT t.strategy FROM outcomes t WHERE ");
    push_owned(&mut sql, owner);
    sql.push(" AND t.task_type = ")
        .bind(task_type)
        .push(" ORDER BY t.seq DESC LIMIT ")
        .bind(recent)
        .push(") AS recent UNION SELECT t.match_key FROM heuristics t WHERE ");
    push_owned(&mut sql, owner);
    sql.push(" AND t.task_type = ")
        .bind(task_type)
        .push(" UNION SELECT t.strategy FROM heuristics t WHERE ");
    push_owned(&mut sql, owner);
    sql.push(" AND t.task_type = ").bind(task_type);
    fetch(conn, sql, |row| Columns::<D>::of(row).get("strategy")).await
}

/// `SELECT t.* FROM {table} t WHERE` the rows owned by `owner` of
/// `task_type`, oldest first.
fn of_task_type<D: Dialect>(table: &str, owner: &Owner, task_type: &str) -> Sql<D> {
    let mut sql = Sql::new(format!("SELECT t.* FROM {table} t WHERE "));
    push_owned(&mut sql, owner);
    sql.push(" AND t.task_type = ")
        .bind(task_type)
        .push(" ORDER BY t.seq");
    sql
}

/// The owner's heuristics of `task_type`, oldest first, with their match keys.
pub async fn heuristics_of<D: Dialect>(
    conn: &mut D,
    owner: &Owner,
    task_type: &str,
) -> Result<Vec<(Heuristic, String)>> {
    let sql = of_task_type("heuristics", owner, task_type);
    fetch(conn, sql, |row| {
        Ok((
            rows::heuristic::<D>(row)?,
            Columns::<D>::of(row).get("match_key")?,
        ))
    })
    .await
}

/// The owner's anti-patterns of `task_type`, oldest first.
pub async fn anti_patterns_of<D: Dialect>(
    conn: &mut D,
    owner: &Owner,
    task_type: &str,
) -> Result<Vec<AntiPattern>> {
    let sql = of_task_type("anti_patterns", owner, task_type);
    fetch(conn, sql, rows::anti_pattern::<D>).await
}

pub async fn insert_heuristic<D: Dialect>(
    conn: &mut D,
    new: &NewHeuristic,
    now: Micros,
) -> Result<Heuristic> {
    let mut sql = Sql::new(
        "INSERT INTO heuristics (id, namespace, agent_id, project_id, task_type, strategy, \
         match_key, confidence, occurrence_count, success_count, last_validated_time, \
         create_time, update_time) VALUES (",
    );
    sql.values(|v| {
        v.bind(uuid::Uuid::now_v7().to_string())
            .bind(new.owner.namespace.as_str())
            .bind(new.owner.agent_id.as_str())
            .bind(new.owner.project_id.as_str())
            .bind(new.task_type.as_str())
            .bind(new.strategy.as_str())
            .bind(new.match_key.as_str())
            .bind(new.confidence)
            .bind(new.occurrence_count)
            .bind(new.success_count)
            .bind(now)
            .bind(now)
            .bind(now);
    })
    .push(") RETURNING *");
    fetch_one(conn, sql, rows::heuristic::<D>).await
}

pub async fn update_heuristic<D: Dialect>(conn: &mut D, h: &Heuristic) -> Result<Heuristic> {
    let mut sql = Sql::new("UPDATE heuristics SET strategy = ");
    sql.bind(h.strategy.as_str())
        .push(", occurrence_count = ")
        .bind(h.occurrence_count)
        .push(", success_count = ")
        .bind(h.success_count)
        .push(", confidence = ")
        .bind(h.confidence)
        .push(", last_validated_time = ")
        .bind(h.last_validated_time)
        .push(", update_time = ")
        .bind(h.update_time)
        .push(", version = ")
        .bind(h.version)
        .push(" WHERE seq = ")
        .bind(h.seq)
        .push(" RETURNING *");
    fetch_one(conn, sql, rows::heuristic::<D>).await
}

pub async fn insert_anti_pattern<D: Dialect>(
    conn: &mut D,
    new: &NewAntiPattern,
    now: Micros,
) -> Result<AntiPattern> {
    let mut sql = Sql::new(
        "INSERT INTO anti_patterns (id, namespace, agent_id, project_id, task_type, strategy, \
         error, occurrence_count, better_alternative, better_alternative_heuristic_id, \
         last_seen_time, create_time, update_time) VALUES (",
    );
    sql.values(|v| {
        v.bind(uuid::Uuid::now_v7().to_string())
            .bind(new.owner.namespace.as_str())
            .bind(new.owner.agent_id.as_str())
            .bind(new.owner.project_id.as_str())
            .bind(new.task_type.as_str())
            .bind(new.strategy.as_str())
            .bind(new.error.as_str())
            .bind(new.occurrence_count)
            .bind(new.better_alternative.as_str())
            .bind(new.better_alternative_heuristic_id.as_str())
            .bind(now)
            .bind(now)
            .bind(now);
    })
    .push(") RETURNING *");
    fetch_one(conn, sql, rows::anti_pattern::<D>).await
}

pub async fn update_anti_pattern<D: Dialect>(conn: &mut D, p: &AntiPattern) -> Result<AntiPattern> {
    let mut sql = Sql::new("UPDATE anti_patterns SET strategy = ");
    sql.bind(p.strategy.as_str())
        .push(", error = ")
        .bind(p.error.as_str())
        .push(", occurrence_count = ")
        .bind(p.occurrence_count)
        .push(", better_alternative = ")
        .bind(p.better_alternative.as_str())
        .push(", better_alternative_heuristic_id = ")
        .bind(p.better_alternative_heuristic_id.as_str())
        .push(", last_seen_time = ")
        .bind(p.last_seen_time)
        .push(", update_time = ")
        .bind(p.update_time)
        .push(", version = ")
        .bind(p.version)
        .push(" WHERE seq = ")
        .bind(p.seq)
        .push(" RETURNING *");
    fetch_one(conn, sql, rows::anti_pattern::<D>).await
}

/// Up to `limit` outcomes visible from `scope`, newest first, after `after` (a seq).
pub async fn list_outcomes<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    filter: &LearningFilter,
    limit: usize,
    after: Option<i64>,
) -> Result<Vec<TaskOutcome>> {
    let mut sql = Sql::new("SELECT t.* FROM outcomes t WHERE ");
    push_visible(&mut sql, scope);
    if let Some(task_type) = &filter.task_type {
        sql.push(" AND t.task_type = ").bind(task_type.as_str());
    }
    if let Some(success) = filter.success {
        sql.push(" AND t.success = ").bind(success);
    }
    if let Some(seq) = after {
        sql.push(" AND t.seq < ").bind(seq);
    }
    sql.push(" ORDER BY t.seq DESC LIMIT ").bind(count(limit));
    fetch(conn, sql, rows::outcome::<D>).await
}

/// Ends a listing query with one keyset page, highest `column` first (ties
/// newest first): rows after the `(column, seq)` cursor, at most `limit`.
fn push_keyset_page<D: Dialect, T: super::Bind>(
    sql: &mut Sql<D>,
    column: &'static str,
    after: Option<(T, i64)>,
    limit: usize,
) {
    if let Some((value, seq)) = after {
        sql.push(format_args!(" AND (t.{column}, t.seq) < ("))
            .bind(value)
            .push(", ")
            .bind(seq)
            .push(")");
    }
    sql.push(format_args!(" ORDER BY t.{column} DESC, t.seq DESC LIMIT "))
        .bind(count(limit));
}

/// Up to `limit` heuristics, most confident first, after a (confidence, seq) cursor.
pub async fn list_heuristics<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    filter: &LearningFilter,
    limit: usize,
    after: Option<(f64, i64)>,
) -> Result<Vec<Heuristic>> {
    let mut sql = Sql::new("SELECT t.* FROM heuristics t WHERE ");
    push_visible(&mut sql, scope);
    if let Some(task_type) = &filter.task_type {
        sql.push(" AND t.task_type = ").bind(task_type.as_str());
    }
    if filter.min_confidence > 0.0 {
        sql.push(" AND t.confidence >= ")
            .bind(filter.min_confidence);
    }
    push_keyset_page(&mut sql, "confidence", after, limit);
    fetch(conn, sql, rows::heuristic::<D>).await
}

/// Up to `limit` anti-patterns, most frequent first, after an (occurrence_count, seq) cursor.
pub async fn list_anti_patterns<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    filter: &LearningFilter,
    limit: usize,
    after: Option<(i64, i64)>,
) -> Result<Vec<AntiPattern>> {
    let mut sql = Sql::new("SELECT t.* FROM anti_patterns t WHERE ");
    push_visible(&mut sql, scope);
    if let Some(task_type) = &filter.task_type {
        sql.push(" AND t.task_type = ").bind(task_type.as_str());
    }
    push_keyset_page(&mut sql, "occurrence_count", after, limit);
    fetch(conn, sql, rows::anti_pattern::<D>).await
}

/// Counts the records `stale` names (`limit` none), or deletes up to
/// `limit` of them; returns how many.
pub async fn stale<D: Dialect>(conn: &mut D, stale: &Stale, limit: Option<usize>) -> Result<i64> {
    let (table, alias) = match stale {
        Stale::Outcomes { .. } => ("outcomes", "t"),
        Stale::Heuristics { .. } => ("heuristics", "t"),
        Stale::AntiPatterns { .. } => ("anti_patterns", "t"),
        Stale::ExpiredMemories { .. } => ("memories", "m"),
    };
    let mut sql = match limit {
        None => Sql::new("SELECT count(*) AS n FROM "),
        Some(_) => Sql::new(format!(
            "DELETE FROM {table} WHERE seq IN (SELECT {alias}.seq FROM "
        )),
    };
    sql.push(format_args!("{table} AS {alias} WHERE "));
    match stale {
        Stale::Outcomes {
            owner,
            created_before,
        } => {
            push_owned(&mut sql, owner);
            sql.push(" AND t.create_time < ").bind(*created_before);
        }
        Stale::Heuristics {
            owner,
            confidence_below,
        } => {
            push_owned(&mut sql, owner);
            sql.push(" AND t.confidence < ").bind(*confidence_below);
        }
        Stale::AntiPatterns {
            owner,
            last_seen_before,
        } => {
            push_owned(&mut sql, owner);
            sql.push(" AND t.last_seen_time < ").bind(*last_seen_before);
        }
        Stale::ExpiredMemories { scope, at } => {
            sql.push("m.namespace = ")
                .bind(scope.namespace.as_str())
                .push(" AND m.agent_id = ")
                .bind(scope.agent_id.as_str())
                .push(" AND m.user_id = ")
                .bind(scope.user_id.as_str())
                .push(" AND m.project_id = ")
                .bind(scope.project_id.as_str())
                .push(" AND m.session_id = ")
                .bind(scope.session_id.as_str())
                .push(" AND m.expire_time IS NOT NULL AND m.expire_time <= ")
                .bind(*at);
        }
    }
    match limit {
        None => {
            let counted = fetch_one(conn, sql, |row| Columns::<D>::of(row).get("n")).await?;
            Ok(counted)
        }
        Some(limit) => {
            // Rows another Forget or purge holds are left to it.
            sql.push(" LIMIT ")
                .bind(count(limit))
                .push(D::SKIP_LOCKED)
                .push(")");
            let deleted = conn.execute(sql).await?;
            Ok(i64::try_from(deleted).unwrap_or(i64::MAX))
        }
    }
}

/// Per task type: outcomes, successes, heuristics and anti-patterns visible from `scope`.
pub async fn task_type_stats<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
) -> Result<Vec<TaskTypeStats>> {
    // sum() of integers is a bigint on both databases.
    let mut sql = Sql::new(
        "SELECT task_type, sum(outcomes) AS outcomes, sum(successes) AS successes, \
         sum(heuristics) AS heuristics, sum(anti_patterns) AS anti_patterns FROM (\
         SELECT t.task_type, 1 AS outcomes, CASE WHEN t.success THEN 1 ELSE 0 END AS successes, \
         0 AS heuristics, 0 AS anti_patterns FROM outcomes t WHERE ",
    );
    push_visible(&mut sql, scope);
    sql.push(" UNION ALL SELECT t.task_type, 0, 0, 1, 0 FROM heuristics t WHERE ");
    push_visible(&mut sql, scope);
    sql.push(" UNION ALL SELECT t.task_type, 0, 0, 0, 1 FROM anti_patterns t WHERE ");
    push_visible(&mut sql, scope);
    sql.push(") AS counted GROUP BY task_type ORDER BY task_type");
    fetch(conn, sql, |row| {
        let c = Columns::<D>::of(row);
        Ok(TaskTypeStats {
            task_type: c.get("task_type")?,
            outcomes: c.get("outcomes")?,
            successes: c.get("successes")?,
            heuristics: c.get("heuristics")?,
            anti_patterns: c.get("anti_patterns")?,
        })
    })
    .await
}
