//! SQL for memories that both databases share: so far, who sees a memory
//! (DESIGN §3) and how many of each type a scope sees.

use super::{Columns, Dialect, Sql};
use crate::domain::{MemoryLevel, Micros, Scope};
use crate::error::Result;

/// Appends the visibility rule of DESIGN §3 for `scope` (alias `m`),
/// without memories expired at `now`.
pub fn push_visible<D: Dialect>(sql: &mut Sql<D>, scope: &Scope, now: Micros) {
    push_in_scope(sql, scope);
    sql.push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .bind(now)
        .push(")");
}

/// Appends the visibility rule of DESIGN §3 for `scope` (alias `m`),
/// expired rows included.
pub fn push_in_scope<D: Dialect>(sql: &mut Sql<D>, scope: &Scope) {
    sql.push("m.namespace = ")
        .bind(scope.namespace.as_str())
        .push(" AND (m.level = ")
        .bind(MemoryLevel::Global.code())
        .push(" OR (m.level = ")
        .bind(MemoryLevel::Workspace.code())
        .push(" AND m.project_id = ")
        .bind(scope.project_id.as_str())
        .push(" AND m.project_id <> '') OR (m.level = ")
        .bind(MemoryLevel::Conversation.code())
        .push(" AND m.session_id = ")
        .bind(scope.session_id.as_str())
        .push(" AND m.session_id <> ''))");
    for (column, value) in [
        ("m.agent_id", &scope.agent_id),
        ("m.user_id", &scope.user_id),
    ] {
        if !value.is_empty() {
            sql.push(format_args!(" AND {column} IN ('', "))
                .bind(value.as_str())
                .push(")");
        }
    }
}

/// How many memories of each type `scope` sees at `now`, by type code.
pub async fn count_per_type<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    now: Micros,
) -> Result<Vec<(i32, i64)>> {
    let mut sql = Sql::new("SELECT m.memory_type, count(*) AS n FROM memories m WHERE ");
    push_visible(&mut sql, scope, now);
    sql.push(" GROUP BY m.memory_type ORDER BY m.memory_type");
    conn.fetch_all(sql)
        .await?
        .iter()
        .map(|row| {
            let c = Columns::<D>::of(row);
            Ok((c.get("memory_type")?, c.get("n")?))
        })
        .collect()
}
