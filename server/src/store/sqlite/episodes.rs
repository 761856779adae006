//! SQL for episodes and their steps.

use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use crate::domain::episode::{
    Episode, EpisodeContext, EpisodeQuery, EpisodeStatus, NewEpisode, Step, StepWindow,
};
use crate::domain::{Micros, Scope};
use crate::error::{Error, Result};

/// Steps inserted per statement: 9 parameters each stays far below SQLite's
/// limit on bound parameters.
const STEPS_PER_INSERT: usize = 500;

/// Appends the rule that an episode is visible from `scope`: same namespace,
/// and where the scope names an agent, user or project, the episode's must
/// match it or be empty.
pub(super) fn push_visible(qb: &mut QueryBuilder<Sqlite>, scope: &Scope) {
    qb.push("e.namespace = ").push_bind(scope.namespace.clone());
    for (column, value) in [
        ("e.agent_id", &scope.agent_id),
        ("e.user_id", &scope.user_id),
        ("e.project_id", &scope.project_id),
    ] {
        if !value.is_empty() {
            qb.push(format!(" AND {column} IN ('', "))
                .push_bind(value.clone())
                .push(")");
        }
    }
}

pub(super) fn episode_from_row(row: &SqliteRow) -> Result<Episode> {
    let text =
        |column: &str| -> Result<String> { row.try_get::<String, _>(column).map_err(db_error) };
    let corrupt = |what: &str| Error::Internal(format!("corrupt episode row: bad {what}"));
    let outcome: Option<String> = row.try_get("outcome").map_err(db_error)?;
    Ok(Episode {
        seq: row.try_get("seq").map_err(db_error)?,
        id: text("id")?,
        scope: Scope {
            namespace: text("namespace")?,
            agent_id: text("agent_id")?,
            user_id: text("user_id")?,
            project_id: text("project_id")?,
            session_id: text("session_id")?,
        },
        task_id: text("task_id")?,
        description: text("description")?,
        task_type: text("task_type")?,
        context: serde_json::from_str(&text("context")?).map_err(|_| corrupt("context"))?,
        status: EpisodeStatus::from_code(row.try_get("status").map_err(db_error)?)
            .ok_or_else(|| corrupt("status"))?,
        steps: Vec::new(),
        step_count: row.try_get("step_count").map_err(db_error)?,
        last_step: row.try_get("last_step").map_err(db_error)?,
        outcome: outcome
            .map(|o| serde_json::from_str(&o))
            .transpose()
            .map_err(|_| corrupt("outcome"))?,
        create_time: row.try_get("create_time").map_err(db_error)?,
        update_time: row.try_get("update_time").map_err(db_error)?,
        complete_time: row.try_get("complete_time").map_err(db_error)?,
        version: row.try_get("version").map_err(db_error)?,
    })
}

fn json(context: &EpisodeContext) -> String {
    serde_json::to_string(context).unwrap_or_else(|_| "{}".into())
}

/// Stores a new RUNNING episode.
pub(super) async fn insert(
    conn: &mut SqliteConnection,
    new: &NewEpisode,
    now: Micros,
) -> Result<Episode> {
    let row = sqlx::query(
        "INSERT INTO episodes (id, namespace, agent_id, user_id, project_id, session_id, task_id, description, \
         task_type, context, status, create_time, update_time) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(&new.scope.namespace)
    .bind(&new.scope.agent_id)
    .bind(&new.scope.user_id)
    .bind(&new.scope.project_id)
    .bind(&new.scope.session_id)
    .bind(&new.task_id)
    .bind(&new.description)
    .bind(&new.task_type)
    .bind(json(&new.context))
    .bind(EpisodeStatus::Running.code())
    .bind(now)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    episode_from_row(&row)
}

/// The episode `id` if it is visible from `scope`, without its steps.
pub(super) async fn get(
    conn: &mut SqliteConnection,
    scope: &Scope,
    id: &str,
) -> Result<Option<Episode>> {
    let mut qb = QueryBuilder::new("SELECT e.* FROM episodes e WHERE ");
    push_visible(&mut qb, scope);
    qb.push(" AND e.id = ").push_bind(id.to_owned());
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.as_ref().map(episode_from_row).transpose()
}

/// The episode with the steps in `window`.
pub(super) async fn get_with_steps(
    conn: &mut SqliteConnection,
    scope: &Scope,
    id: &str,
    window: StepWindow,
) -> Result<Option<Episode>> {
    let Some(mut episode) = get(conn, scope, id).await? else {
        return Ok(None);
    };
    let rows = sqlx::query(
        "SELECT * FROM episode_steps WHERE episode_seq = ? AND step_number > ? \
         ORDER BY step_number LIMIT ?",
    )
    .bind(episode.seq)
    .bind(window.after)
    .bind(i64::try_from(window.limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    episode.steps = rows.iter().map(step_from_row).collect::<Result<_>>()?;
    Ok(Some(episode))
}

fn step_from_row(row: &SqliteRow) -> Result<Step> {
    Ok(Step {
        number: row.try_get("step_number").map_err(db_error)?,
        tool: row.try_get("tool").map_err(db_error)?,
        action: row.try_get("action").map_err(db_error)?,
        parameters: row.try_get("parameters").map_err(db_error)?,
        result: row.try_get("result").map_err(db_error)?,
        output: row.try_get("output").map_err(db_error)?,
        latency_ms: row.try_get("latency_ms").map_err(db_error)?,
        time: row.try_get("time").map_err(db_error)?,
    })
}

/// The stored steps of episode `episode_seq` among `numbers`.
pub(super) async fn stored_steps(
    conn: &mut SqliteConnection,
    episode_seq: i64,
    numbers: &[i32],
) -> Result<Vec<Step>> {
    let mut stored = Vec::new();
    for chunk in numbers.chunks(STEPS_PER_INSERT) {
        let mut qb =
            QueryBuilder::<Sqlite>::new("SELECT * FROM episode_steps WHERE episode_seq = ");
        qb.push_bind(episode_seq).push(" AND step_number IN (");
        let mut list = qb.separated(", ");
        for number in chunk {
            list.push_bind(*number);
        }
        qb.push(")");
        let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
        for row in &rows {
            stored.push(step_from_row(row)?);
        }
    }
    Ok(stored)
}

/// Stores steps of episode `episode_seq`.
pub(super) async fn insert_steps(
    conn: &mut SqliteConnection,
    episode_seq: i64,
    steps: &[Step],
) -> Result<()> {
    for chunk in steps.chunks(STEPS_PER_INSERT) {
        let mut qb = QueryBuilder::<Sqlite>::new(
            "INSERT INTO episode_steps (episode_seq, step_number, tool, action, parameters, result, output, \
             latency_ms, time) ",
        );
        qb.push_values(chunk, |mut row, step| {
            row.push_bind(episode_seq)
                .push_bind(step.number)
                .push_bind(step.tool.clone())
                .push_bind(step.action.clone())
                .push_bind(step.parameters.clone())
                .push_bind(step.result)
                .push_bind(step.output.clone())
                .push_bind(step.latency_ms)
                .push_bind(step.time);
        });
        qb.build().execute(&mut *conn).await.map_err(db_error)?;
    }
    Ok(())
}

/// Writes an episode's step count, last step, update time and version as given.
pub(super) async fn save_step_progress(conn: &mut SqliteConnection, e: &Episode) -> Result<()> {
    sqlx::query(
        "UPDATE episodes SET step_count = ?, last_step = ?, update_time = ?, version = ? WHERE seq = ?",
    )
    .bind(e.step_count)
    .bind(e.last_step)
    .bind(e.update_time)
    .bind(e.version)
    .bind(e.seq)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// One page of episodes (plus one), newest first, without steps.
pub(super) async fn list(
    conn: &mut SqliteConnection,
    query: &EpisodeQuery,
) -> Result<Vec<Episode>> {
    let mut qb = QueryBuilder::new("SELECT e.* FROM episodes e WHERE ");
    push_visible(&mut qb, &query.scope);
    if let Some(task_id) = &query.task_id {
        qb.push(" AND e.task_id = ").push_bind(task_id.clone());
    }
    if let Some(status) = query.status {
        qb.push(" AND e.status = ").push_bind(status.code());
    }
    if let Some(after) = query.started_after {
        qb.push(" AND e.create_time >= ").push_bind(after);
    }
    if let Some(before) = query.started_before {
        qb.push(" AND e.create_time < ").push_bind(before);
    }
    if let Some((create_time, seq)) = query.after {
        qb.push(" AND (e.create_time, e.seq) < (")
            .push_bind(create_time)
            .push(", ")
            .push_bind(seq)
            .push(")");
    }
    qb.push(" ORDER BY e.create_time DESC, e.seq DESC LIMIT ")
        .push_bind(i64::try_from(query.page_size + 1).unwrap_or(i64::MAX));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(episode_from_row).collect()
}
