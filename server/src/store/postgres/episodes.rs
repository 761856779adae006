//! SQL for episodes and their steps on PostgreSQL.

use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::db_error;
use super::memories::limit_of;
use super::rows::{self, EPISODE_COLUMNS};
use crate::domain::episode::{
    Episode, EpisodeContext, EpisodeQuery, EpisodeStatus, NewEpisode, Step, StepWindow,
};
use crate::domain::{Micros, Scope};
use crate::error::Result;

/// Appends the rule that an episode (alias `e`) is visible from `scope`:
/// same namespace, and where the scope names an agent, user or project,
/// the episode's must match it or be empty.
pub(super) fn push_visible(qb: &mut QueryBuilder<Postgres>, scope: &Scope) {
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

/// `SELECT` of episodes (alias `e`) `WHERE `, conditions to follow.
pub(super) fn select_episodes() -> QueryBuilder<Postgres> {
    QueryBuilder::new(format!("SELECT {EPISODE_COLUMNS} FROM episodes e WHERE "))
}

fn json(context: &EpisodeContext) -> String {
    serde_json::to_string(context).unwrap_or_else(|_| "{}".into())
}

/// Stores a new RUNNING episode.
pub(super) async fn insert(
    conn: &mut PgConnection,
    new: &NewEpisode,
    now: Micros,
) -> Result<Episode> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO episodes (id, namespace, agent_id, user_id, project_id, session_id, task_id, \
         description, task_type, context, status, create_time, update_time) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING {EPISODE_COLUMNS}"
    )))
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
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    rows::episode(&row)
}

/// The episode `id` if it is visible from `scope`, without its steps.
pub(super) async fn get(
    conn: &mut PgConnection,
    scope: &Scope,
    id: &str,
) -> Result<Option<Episode>> {
    let mut qb = select_episodes();
    push_visible(&mut qb, scope);
    qb.push(" AND e.id = ").push_bind(id.to_owned());
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.as_ref().map(rows::episode).transpose()
}

/// The episode with the steps in `window`.
pub(super) async fn get_with_steps(
    conn: &mut PgConnection,
    scope: &Scope,
    id: &str,
    window: StepWindow,
) -> Result<Option<Episode>> {
    let Some(mut episode) = get(conn, scope, id).await? else {
        return Ok(None);
    };
    let rows = sqlx::query(
        "SELECT * FROM episode_steps WHERE episode_seq = $1 AND step_number > $2 \
         ORDER BY step_number LIMIT $3",
    )
    .bind(episode.seq)
    .bind(i64::from(window.after))
    .bind(limit_of(window.limit))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    episode.steps = rows::all(&rows, rows::step)?;
    Ok(Some(episode))
}

/// The stored steps of episode `episode_seq` among `numbers`.
pub(super) async fn stored_steps(
    conn: &mut PgConnection,
    episode_seq: i64,
    numbers: &[i32],
) -> Result<Vec<Step>> {
    let numbers: Vec<i64> = numbers.iter().copied().map(i64::from).collect();
    let rows =
        sqlx::query("SELECT * FROM episode_steps WHERE episode_seq = $1 AND step_number = ANY($2)")
            .bind(episode_seq)
            .bind(numbers)
            .fetch_all(&mut *conn)
            .await
            .map_err(db_error)?;
    rows::all(&rows, rows::step)
}

/// Stores steps of episode `episode_seq`, in one statement.
pub(super) async fn insert_steps(
    conn: &mut PgConnection,
    episode_seq: i64,
    steps: &[Step],
) -> Result<()> {
    if steps.is_empty() {
        return Ok(());
    }
    let texts = |f: fn(&Step) -> &str| steps.iter().map(|s| f(s).to_owned()).collect::<Vec<_>>();
    sqlx::query(
        "INSERT INTO episode_steps (episode_seq, step_number, tool, action, parameters, result, \
         output, latency_ms, time) \
         SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[], \
         $7::text[], $8::bigint[], $9::bigint[])",
    )
    .bind(episode_seq)
    .bind(
        steps
            .iter()
            .map(|s| i64::from(s.number))
            .collect::<Vec<_>>(),
    )
    .bind(texts(|s| &s.tool))
    .bind(texts(|s| &s.action))
    .bind(texts(|s| &s.parameters))
    .bind(steps.iter().map(|s| s.result).collect::<Vec<_>>())
    .bind(texts(|s| &s.output))
    .bind(steps.iter().map(|s| s.latency_ms).collect::<Vec<_>>())
    .bind(steps.iter().map(|s| s.time).collect::<Vec<_>>())
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Writes an episode's step count, last step, update time and version as given.
pub(super) async fn save_step_progress(conn: &mut PgConnection, e: &Episode) -> Result<()> {
    sqlx::query(
        "UPDATE episodes SET step_count = $1, last_step = $2, update_time = $3, version = $4 \
         WHERE seq = $5",
    )
    .bind(i64::from(e.step_count))
    .bind(i64::from(e.last_step))
    .bind(e.update_time)
    .bind(e.version)
    .bind(e.seq)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// One page of episodes (plus one), newest first, without steps.
pub(super) async fn list(conn: &mut PgConnection, query: &EpisodeQuery) -> Result<Vec<Episode>> {
    let mut qb = select_episodes();
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
        .push_bind(limit_of(query.page_size + 1));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows::all(&rows, rows::episode)
}
