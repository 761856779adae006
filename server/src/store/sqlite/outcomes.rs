//! SQL for learning from outcomes (DESIGN §5): recording an outcome and the
//! heuristics and anti-patterns it creates or updates (one transaction),
//! agent scopes, the lists, and Forget.

use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::{db_error, requests};
use crate::domain::outcome::{
    AgentScope, AgentScopeSet, AntiPattern, Change, ForgetKind, ForgetRequest, Forgotten,
    Heuristic, LearningFilter, NewOutcome, Recorded, TaskOutcome, TaskTypeStats,
};
use crate::domain::{Micros, RequestKey, Scope};
use crate::engine::outcomes::{
    DEFAULT_MIN_OCCURRENCES, MIN_FAILURES, MIN_SUCCESS_RATE, RECENT_OUTCOMES, StrategyVectors,
    may_learn, similar_errors,
};
use crate::error::{Error, Result};

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
fn push_owned(qb: &mut QueryBuilder<Sqlite>, namespace: &str, agent_id: &str, project_id: &str) {
    qb.push("t.namespace = ")
        .push_bind(namespace.to_owned())
        .push(" AND t.agent_id = ")
        .push_bind(agent_id.to_owned())
        .push(" AND t.project_id = ")
        .push_bind(project_id.to_owned());
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

/// The agent's learning scope, or the defaults.
pub(super) async fn agent_scope(
    conn: &mut SqliteConnection,
    namespace: &str,
    agent_id: &str,
) -> Result<AgentScope> {
    let row = sqlx::query("SELECT * FROM agent_scopes WHERE namespace = ? AND agent_id = ?")
        .bind(namespace)
        .bind(agent_id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    let Some(row) = row else {
        return Ok(AgentScope {
            namespace: namespace.to_owned(),
            agent_id: agent_id.to_owned(),
            can_learn: Vec::new(),
            cannot_learn: Vec::new(),
            min_occurrences: DEFAULT_MIN_OCCURRENCES,
            set: None,
        });
    };
    let list = |column: &str| -> Result<Vec<String>> {
        let text: String = row.try_get(column).map_err(db_error)?;
        serde_json::from_str(&text)
            .map_err(|_| Error::Internal(format!("corrupt agent scope: bad {column}")))
    };
    Ok(AgentScope {
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
    })
}

/// Replaces an agent's learning scope; with an `etag`, only if it is current.
pub(super) async fn set_agent_scope(
    conn: &mut SqliteConnection,
    wanted: AgentScope,
    etag: Option<String>,
    now: Micros,
) -> Result<AgentScope> {
    let current = agent_scope(conn, &wanted.namespace, &wanted.agent_id).await?;
    if let Some(etag) = etag
        && etag != current.etag()
    {
        return Err(Error::Aborted(format!(
            "the agent scope of {} has changed; read it again and retry",
            wanted.agent_id
        )));
    }
    let json = |list: &Vec<String>| {
        serde_json::to_string(list).map_err(|e| Error::Internal(format!("agent scope: {e}")))
    };
    sqlx::query(
        "INSERT INTO agent_scopes (namespace, agent_id, can_learn, cannot_learn, min_occurrences, create_time, \
         update_time) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, agent_id) DO UPDATE SET \
         can_learn = excluded.can_learn, cannot_learn = excluded.cannot_learn, \
         min_occurrences = excluded.min_occurrences, update_time = excluded.update_time, version = version + 1",
    )
    .bind(&wanted.namespace)
    .bind(&wanted.agent_id)
    .bind(json(&wanted.can_learn)?)
    .bind(json(&wanted.cannot_learn)?)
    .bind(wanted.min_occurrences)
    .bind(now)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    agent_scope(conn, &wanted.namespace, &wanted.agent_id).await
}

/// Records an outcome and learns from it (DESIGN §5), in the caller's transaction.
pub(super) async fn record(
    conn: &mut SqliteConnection,
    new: NewOutcome,
    request: Option<RequestKey>,
    vectors: &StrategyVectors,
    now: Micros,
) -> Result<Recorded> {
    let (namespace, agent_id) = (new.scope.namespace.clone(), new.scope.agent_id.clone());
    if let Some(request) = &request
        && let Some(first) = requests::replay(conn, &namespace, request).await?
    {
        return serde_json::from_str(&first)
            .map_err(|_| Error::Internal("corrupt create_requests row".into()));
    }
    let scope = agent_scope(conn, &namespace, &agent_id).await?;
    if !may_learn(
        &scope.can_learn,
        &scope.cannot_learn,
        &new.task_type,
        &new.task,
    ) {
        return Err(Error::FailedPrecondition(format!(
            "agent {agent_id} may not learn from this task (task type {}); see its agent scope",
            new.task_type
        )));
    }
    let outcome: TaskOutcome = sqlx::query_as(
        "INSERT INTO outcomes (id, namespace, agent_id, project_id, task, task_type, task_type_inferred, success, \
         strategy, duration_ms, error, feedback, create_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&namespace)
    .bind(&agent_id)
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

    // The agent's latest outcomes of this task type and project, newest first.
    let recent: Vec<(bool, String, String)> = sqlx::query_as(
        "SELECT success, strategy, error FROM outcomes WHERE namespace = ? AND agent_id = ? AND project_id = ? \
         AND task_type = ? ORDER BY seq DESC LIMIT ?",
    )
    .bind(&namespace)
    .bind(&agent_id)
    .bind(&outcome.project_id)
    .bind(&outcome.task_type)
    .bind(RECENT_OUTCOMES)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;

    let heuristic =
        learn_heuristic(conn, &outcome, &recent, scope.min_occurrences, vectors, now).await?;
    let anti_pattern = if !outcome.success && !outcome.error.trim().is_empty() {
        learn_anti_pattern(conn, &outcome, &recent, vectors, now).await?
    } else {
        None
    };
    let recorded = Recorded {
        outcome,
        heuristic,
        anti_pattern,
    };
    if let Some(request) = &request {
        let snapshot = serde_json::to_string(&recorded)
            .map_err(|e| Error::Internal(format!("snapshot: {e}")))?;
        requests::remember(conn, &namespace, request, &snapshot, now).await?;
    }
    Ok(recorded)
}

/// The strategies a new outcome's is compared with when it is recorded: those
/// of the agent's latest outcomes of its task type and project, and of their
/// heuristics (as first worded and as last seen). Without repeats.
pub(super) async fn compared_strategies(
    conn: &mut SqliteConnection,
    new: &NewOutcome,
) -> Result<Vec<String>> {
    let (namespace, agent_id, project_id) = (
        &new.scope.namespace,
        &new.scope.agent_id,
        &new.scope.project_id,
    );
    let mut qb = QueryBuilder::<Sqlite>::new(
        "SELECT strategy FROM (SELECT t.strategy FROM outcomes t WHERE ",
    );
    push_owned(&mut qb, namespace, agent_id, project_id);
    qb.push(" AND t.task_type = ")
        .push_bind(new.task_type.clone())
        .push(" ORDER BY t.seq DESC LIMIT ")
        .push_bind(RECENT_OUTCOMES)
        .push(") UNION SELECT t.match_key FROM heuristics t WHERE ");
    push_owned(&mut qb, namespace, agent_id, project_id);
    qb.push(" AND t.task_type = ")
        .push_bind(new.task_type.clone())
        .push(" UNION SELECT t.strategy FROM heuristics t WHERE ");
    push_owned(&mut qb, namespace, agent_id, project_id);
    qb.push(" AND t.task_type = ")
        .push_bind(new.task_type.clone());
    qb.build_query_scalar()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// `columns` of the rows of `table` that belong to the outcome's agent,
/// project and task type.
async fn of_task_type<T>(
    conn: &mut SqliteConnection,
    columns: &str,
    table: &str,
    outcome: &TaskOutcome,
) -> Result<Vec<T>>
where
    T: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
{
    let mut qb = QueryBuilder::<Sqlite>::new(format!("SELECT {columns} FROM {table} t WHERE "));
    push_owned(
        &mut qb,
        &outcome.namespace,
        &outcome.agent_id,
        &outcome.project_id,
    );
    qb.push(" AND t.task_type = ")
        .push_bind(outcome.task_type.clone())
        .push(" ORDER BY t.seq");
    qb.build_query_as()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// Creates or updates the heuristic of the outcome's strategy group. An
/// existing group takes the outcome as one more piece of evidence; a new
/// group needs enough similar outcomes among the agent's recent ones.
async fn learn_heuristic(
    conn: &mut SqliteConnection,
    outcome: &TaskOutcome,
    recent: &[(bool, String, String)],
    min_occurrences: i64,
    vectors: &StrategyVectors,
    now: Micros,
) -> Result<Option<(Heuristic, Change)>> {
    let groups: Vec<(i64, String)> =
        of_task_type(conn, "seq, match_key", "heuristics", outcome).await?;
    if let Some(seq) = vectors.best_match(
        &outcome.strategy,
        groups.iter().map(|(seq, key)| (*seq, key.as_str())),
    ) {
        let updated: Heuristic = sqlx::query_as(
            "UPDATE heuristics SET strategy = ?1, occurrence_count = occurrence_count + 1, \
             success_count = success_count + ?2, \
             confidence = CAST(success_count + ?2 AS REAL) / (occurrence_count + 1), \
             last_validated_time = ?3, update_time = ?3, version = version + 1 WHERE seq = ?4 RETURNING *",
        )
        .bind(&outcome.strategy)
        .bind(i64::from(outcome.success))
        .bind(now)
        .bind(seq)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
        return Ok(Some((updated, Change::Updated)));
    }
    let similar: Vec<bool> = recent
        .iter()
        .filter(|(_, strategy, _)| vectors.similar(&outcome.strategy, strategy))
        .map(|(success, _, _)| *success)
        .collect();
    let occurrences = i64::try_from(similar.len()).unwrap_or(i64::MAX);
    let successes = i64::try_from(similar.iter().filter(|s| **s).count()).unwrap_or(i64::MAX);
    let confidence = successes as f64 / occurrences.max(1) as f64;
    if occurrences < min_occurrences || confidence <= MIN_SUCCESS_RATE {
        return Ok(None);
    }
    let created: Heuristic = sqlx::query_as(
        "INSERT INTO heuristics (id, namespace, agent_id, project_id, task_type, strategy, match_key, confidence, \
         occurrence_count, success_count, last_validated_time, create_time, update_time) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&outcome.namespace)
    .bind(&outcome.agent_id)
    .bind(&outcome.project_id)
    .bind(&outcome.task_type)
    .bind(&outcome.strategy)
    .bind(&outcome.strategy)
    .bind(confidence)
    .bind(occurrences)
    .bind(successes)
    .bind(now)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(Some((created, Change::Created)))
}

/// Creates or updates the anti-pattern of the failed outcome's error: an
/// existing one counts one more failure (and keeps the most general
/// wording); a new one needs repeated similar failures among recent outcomes.
async fn learn_anti_pattern(
    conn: &mut SqliteConnection,
    outcome: &TaskOutcome,
    recent: &[(bool, String, String)],
    vectors: &StrategyVectors,
    now: Micros,
) -> Result<Option<(AntiPattern, Change)>> {
    let (alternative, alternative_id) = better_alternative(conn, outcome, vectors).await?;
    let patterns: Vec<(i64, String)> =
        of_task_type(conn, "seq, error", "anti_patterns", outcome).await?;
    if let Some((seq, _)) = patterns
        .iter()
        .find(|(_, error)| similar_errors(&outcome.error, error))
    {
        let updated: AntiPattern = sqlx::query_as(
            "UPDATE anti_patterns SET strategy = ?1, occurrence_count = occurrence_count + 1, \
             error = CASE WHEN length(?2) < length(error) THEN ?2 ELSE error END, \
             better_alternative = ?3, better_alternative_heuristic_id = ?4, last_seen_time = ?5, \
             update_time = ?5, version = version + 1 WHERE seq = ?6 RETURNING *",
        )
        .bind(&outcome.strategy)
        .bind(outcome.error.trim())
        .bind(&alternative)
        .bind(&alternative_id)
        .bind(now)
        .bind(*seq)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
        return Ok(Some((updated, Change::Updated)));
    }
    let failures: Vec<&str> = recent
        .iter()
        .filter(|(success, _, error)| !success && similar_errors(&outcome.error, error))
        .map(|(_, _, error)| error.trim())
        .collect();
    if i64::try_from(failures.len()).unwrap_or(i64::MAX) < MIN_FAILURES {
        return Ok(None);
    }
    // The most general wording: the shortest of the similar errors.
    let error = failures
        .iter()
        .min_by_key(|e| e.chars().count())
        .copied()
        .unwrap_or(outcome.error.as_str());
    let created: AntiPattern = sqlx::query_as(
        "INSERT INTO anti_patterns (id, namespace, agent_id, project_id, task_type, strategy, error, \
         occurrence_count, better_alternative, better_alternative_heuristic_id, last_seen_time, create_time, \
         update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&outcome.namespace)
    .bind(&outcome.agent_id)
    .bind(&outcome.project_id)
    .bind(&outcome.task_type)
    .bind(&outcome.strategy)
    .bind(error)
    .bind(i64::try_from(failures.len()).unwrap_or(i64::MAX))
    .bind(&alternative)
    .bind(&alternative_id)
    .bind(now)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(Some((created, Change::Created)))
}

/// The strategy (and heuristic id) to suggest instead of a failing one: the
/// most confident heuristic of the task type that works more often than not
/// and is not the failing strategy itself. Empty when there is none.
async fn better_alternative(
    conn: &mut SqliteConnection,
    outcome: &TaskOutcome,
    vectors: &StrategyVectors,
) -> Result<(String, String)> {
    let heuristics: Vec<(String, String, f64)> =
        of_task_type(conn, "id, strategy, confidence", "heuristics", outcome).await?;
    Ok(heuristics
        .into_iter()
        .filter(|(_, strategy, confidence)| {
            *confidence > MIN_SUCCESS_RATE && !vectors.similar(&outcome.strategy, strategy)
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(id, strategy, _)| (strategy, id))
        .unwrap_or_default())
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

/// Forgets what `request` names, in `kinds`: with `dry_run`, counts all of
/// it; otherwise deletes at most `limit` rows of each kind (a Forget of
/// many rows is several of these, each its own transaction, so that no
/// single one holds the writer for long), and reports how many of each.
pub(super) async fn forget(
    conn: &mut SqliteConnection,
    request: &ForgetRequest,
    kinds: &[ForgetKind],
    limit: usize,
    now: Micros,
) -> Result<Forgotten> {
    let mut forgotten = Forgotten::default();
    let scope = &request.scope;
    for kind in kinds {
        let (table, alias) = match kind {
            ForgetKind::Outcomes => ("outcomes", "t"),
            ForgetKind::Heuristics => ("heuristics", "t"),
            ForgetKind::AntiPatterns => ("anti_patterns", "t"),
            ForgetKind::Memories => ("memories", "m"),
        };
        let mut qb = if request.dry_run {
            QueryBuilder::<Sqlite>::new("SELECT count(*) FROM ")
        } else {
            QueryBuilder::<Sqlite>::new(format!(
                "DELETE FROM {table} WHERE seq IN (SELECT {alias}.seq FROM "
            ))
        };
        qb.push(format!("{table} AS {alias} WHERE "));
        match kind {
            ForgetKind::Outcomes => {
                push_owned(
                    &mut qb,
                    &scope.namespace,
                    &scope.agent_id,
                    &scope.project_id,
                );
                qb.push(" AND t.create_time < ")
                    .push_bind(request.stale_before);
            }
            ForgetKind::Heuristics => {
                push_owned(
                    &mut qb,
                    &scope.namespace,
                    &scope.agent_id,
                    &scope.project_id,
                );
                qb.push(" AND t.confidence < ")
                    .push_bind(request.below_confidence);
            }
            ForgetKind::AntiPatterns => {
                push_owned(
                    &mut qb,
                    &scope.namespace,
                    &scope.agent_id,
                    &scope.project_id,
                );
                qb.push(" AND t.last_seen_time < ")
                    .push_bind(request.stale_before);
            }
            ForgetKind::Memories => {
                qb.push("m.namespace = ")
                    .push_bind(scope.namespace.clone())
                    .push(" AND m.agent_id = ")
                    .push_bind(scope.agent_id.clone())
                    .push(" AND m.user_id = ")
                    .push_bind(scope.user_id.clone())
                    .push(" AND m.project_id = ")
                    .push_bind(scope.project_id.clone())
                    .push(" AND m.session_id = ")
                    .push_bind(scope.session_id.clone());
                qb.push(" AND m.expire_time IS NOT NULL AND m.expire_time <= ")
                    .push_bind(now);
            }
        }
        let count = if request.dry_run {
            qb.build_query_scalar::<i64>()
                .fetch_one(&mut *conn)
                .await
                .map_err(db_error)?
        } else {
            qb.push(" LIMIT ")
                .push_bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .push(")");
            let done = qb.build().execute(&mut *conn).await.map_err(db_error)?;
            i64::try_from(done.rows_affected()).unwrap_or(i64::MAX)
        };
        match kind {
            ForgetKind::Outcomes => forgotten.outcomes = count,
            ForgetKind::Heuristics => forgotten.heuristics = count,
            ForgetKind::AntiPatterns => forgotten.anti_patterns = count,
            ForgetKind::Memories => forgotten.memories = count,
        }
    }
    Ok(forgotten)
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
