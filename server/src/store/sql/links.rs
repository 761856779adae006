//! SQL for links between memories, shared by both databases: one row each
//! way, so either memory lists the other.

use super::{Columns, Dialect, Row, Sql, count};
use crate::domain::{LinkKind, MemoryLink, Micros};
use crate::error::{Error, Result};

/// Links the memories `a` and `b` of `namespace` both ways (nothing when
/// they are linked so already).
pub async fn link<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    (a, b): (&str, &str),
    kind: LinkKind,
    reason: &str,
    now: Micros,
) -> Result<()> {
    let mut sql = Sql::new(
        "INSERT INTO memory_links (namespace, memory_id, other_id, kind, reason, create_time) VALUES ",
    );
    for (i, (from, to)) in [(a, b), (b, a)].into_iter().enumerate() {
        if i > 0 {
            sql.push(", ");
        }
        sql.push("(")
            .values(|v| {
                v.bind(namespace.to_owned())
                    .bind(from.to_owned())
                    .bind(to.to_owned())
                    .bind(kind.code())
                    .bind(reason.to_owned())
                    .bind(now);
            })
            .push(")");
    }
    sql.push(" ON CONFLICT (memory_id, other_id, kind) DO NOTHING");
    conn.execute(sql).await?;
    Ok(())
}

/// The first `limit` links from the memory `id`, oldest first.
pub async fn of<D: Dialect>(conn: &mut D, id: &str, limit: usize) -> Result<Vec<MemoryLink>> {
    let mut sql =
        Sql::new("SELECT other_id, kind, reason, create_time FROM memory_links WHERE memory_id = ");
    sql.bind(id.to_owned())
        .push(" ORDER BY create_time, other_id LIMIT ")
        .bind(count(limit));
    super::fetch(conn, sql, link_row::<D>).await
}

fn link_row<D: Dialect>(row: &Row<D>) -> Result<MemoryLink> {
    let c = Columns::<D>::of(row);
    Ok(MemoryLink {
        kind: LinkKind::from_code(c.get("kind")?)
            .ok_or_else(|| Error::Internal("corrupt memory link row: bad kind".into()))?,
        memory_id: c.get("other_id")?,
        reason: c.get("reason")?,
        create_time: c.get("create_time")?,
    })
}
