//! SQL for episodes and their steps.

use super::rows::{self, episode_columns};
use super::{Dialect, Sql, count};
use crate::domain::episode::{
    Episode, EpisodeContext, EpisodeQuery, EpisodeStatus, NewEpisode, Step, StepWindow,
};
use crate::domain::{Micros, Scope};
use crate::error::{Error, Result};

/// Steps written or read per statement: 9 parameters each stays far below
/// either database's limit on bound parameters.
const STEPS_PER_STATEMENT: usize = 500;

/// Appends the rule that an episode (alias `e`) is visible from `scope`:
/// same namespace, and where the scope names an agent, user or project,
/// the episode's must match it or be empty.
pub fn push_visible<D: Dialect>(sql: &mut Sql<D>, scope: &Scope) {
    sql.push("e.namespace = ").bind(scope.namespace.as_str());
    for (column, value) in [
        ("e.agent_id", &scope.agent_id),
        ("e.user_id", &scope.user_id),
        ("e.project_id", &scope.project_id),
    ] {
        if !value.is_empty() {
            sql.push(format_args!(" AND {column} IN ('', "))
                .bind(value.as_str())
                .push(")");
        }
    }
}

/// `SELECT` of episodes (alias `e`) `WHERE `, conditions to follow.
pub fn select_episodes<D: Dialect>() -> Sql<D> {
    Sql::new(format!(
        "SELECT {} FROM episodes e WHERE ",
        episode_columns::<D>("e")
    ))
}

fn json(context: &EpisodeContext) -> String {
    serde_json::to_string(context).unwrap_or_else(|_| "{}".into())
}

/// The episode a statement returned.
pub(super) async fn returned<D: Dialect>(conn: &mut D, sql: Sql<D>) -> Result<Episode> {
    let row = conn
        .fetch_optional(sql)
        .await?
        .ok_or_else(|| Error::Internal("a statement returned no episode".into()))?;
    rows::episode::<D>(&row)
}

/// Stores a new RUNNING episode.
pub async fn insert<D: Dialect>(conn: &mut D, new: &NewEpisode, now: Micros) -> Result<Episode> {
    let mut sql = Sql::new(
        "INSERT INTO episodes (id, namespace, agent_id, user_id, project_id, session_id, task_id, \
         description, task_type, context, status, create_time, update_time) VALUES (",
    );
    sql.values(|v| {
        v.bind(uuid::Uuid::now_v7().to_string())
            .bind(new.scope.namespace.as_str())
            .bind(new.scope.agent_id.as_str())
            .bind(new.scope.user_id.as_str())
            .bind(new.scope.project_id.as_str())
            .bind(new.scope.session_id.as_str())
            .bind(new.task_id.as_str())
            .bind(new.description.as_str())
            .bind(new.task_type.as_str())
            .bind(json(&new.context))
            .bind(EpisodeStatus::Running.code())
            .bind(now)
            .bind(now);
    })
    .push(format_args!(") RETURNING {}", episode_columns::<D>("")));
    returned(conn, sql).await
}

/// The episode `id` if it is visible from `scope`, without its steps.
pub async fn get<D: Dialect>(conn: &mut D, scope: &Scope, id: &str) -> Result<Option<Episode>> {
    let mut sql = select_episodes::<D>();
    push_visible(&mut sql, scope);
    sql.push(" AND e.id = ").bind(id);
    let row = conn.fetch_optional(sql).await?;
    row.as_ref().map(rows::episode::<D>).transpose()
}

/// The episode with the steps in `window`.
pub async fn get_with_steps<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    id: &str,
    window: StepWindow,
) -> Result<Option<Episode>> {
    let Some(mut episode) = get(conn, scope, id).await? else {
        return Ok(None);
    };
    let mut sql = Sql::new("SELECT * FROM episode_steps WHERE episode_seq = ");
    sql.bind(episode.seq)
        .push(" AND step_number > ")
        .bind(window.after)
        .push(" ORDER BY step_number LIMIT ")
        .bind(count(window.limit));
    let steps = conn.fetch_all(sql).await?;
    episode.steps = rows::all::<D, _>(&steps, rows::step::<D>)?;
    Ok(Some(episode))
}

/// The stored steps of episode `episode_seq` among `numbers`.
pub async fn stored_steps<D: Dialect>(
    conn: &mut D,
    episode_seq: i64,
    numbers: &[i32],
) -> Result<Vec<Step>> {
    let mut stored = Vec::new();
    for chunk in numbers.chunks(STEPS_PER_STATEMENT) {
        let mut sql = Sql::new("SELECT * FROM episode_steps WHERE episode_seq = ");
        sql.bind(episode_seq).push(" AND step_number IN (");
        sql.values(|v| {
            for number in chunk {
                v.bind(*number);
            }
        })
        .push(")");
        for row in &conn.fetch_all(sql).await? {
            stored.push(rows::step::<D>(row)?);
        }
    }
    Ok(stored)
}

/// Stores steps of episode `episode_seq`.
pub async fn insert_steps<D: Dialect>(
    conn: &mut D,
    episode_seq: i64,
    steps: &[Step],
) -> Result<()> {
    for chunk in steps.chunks(STEPS_PER_STATEMENT) {
        let mut sql = Sql::new(
            "INSERT INTO episode_steps (episode_seq, step_number, tool, action, parameters, \
             result, output, latency_ms, time) VALUES ",
        );
        for (at, step) in chunk.iter().enumerate() {
            sql.push(if at == 0 { "(" } else { ", (" })
                .values(|v| {
                    v.bind(episode_seq)
                        .bind(step.number)
                        .bind(step.tool.as_str())
                        .bind(step.action.as_str())
                        .bind(step.parameters.as_str())
                        .bind(step.result)
                        .bind(step.output.as_str())
                        .bind(step.latency_ms)
                        .bind(step.time);
                })
                .push(")");
        }
        conn.execute(sql).await?;
    }
    Ok(())
}

/// Writes an episode's step count, last step, update time and version as given.
pub async fn save_step_progress<D: Dialect>(conn: &mut D, e: &Episode) -> Result<()> {
    let mut sql = Sql::new("UPDATE episodes SET step_count = ");
    sql.bind(e.step_count)
        .push(", last_step = ")
        .bind(e.last_step)
        .push(", update_time = ")
        .bind(e.update_time)
        .push(", version = ")
        .bind(e.version)
        .push(" WHERE seq = ")
        .bind(e.seq);
    conn.execute(sql).await?;
    Ok(())
}

/// One page of episodes (plus one), newest first, without steps.
pub async fn list<D: Dialect>(conn: &mut D, query: &EpisodeQuery) -> Result<Vec<Episode>> {
    let mut sql = select_episodes::<D>();
    push_visible(&mut sql, &query.scope);
    if let Some(task_id) = &query.task_id {
        sql.push(" AND e.task_id = ").bind(task_id.as_str());
    }
    if let Some(status) = query.status {
        sql.push(" AND e.status = ").bind(status.code());
    }
    if let Some(after) = query.started_after {
        sql.push(" AND e.create_time >= ").bind(after);
    }
    if let Some(before) = query.started_before {
        sql.push(" AND e.create_time < ").bind(before);
    }
    if let Some((create_time, seq)) = query.after {
        sql.push(" AND (e.create_time, e.seq) < (")
            .bind(create_time)
            .push(", ")
            .bind(seq)
            .push(")");
    }
    sql.push(" ORDER BY e.create_time DESC, e.seq DESC LIMIT ")
        .bind(count(query.page_size + 1));
    let rows = conn.fetch_all(sql).await?;
    rows::all::<D, _>(&rows, rows::episode::<D>)
}
