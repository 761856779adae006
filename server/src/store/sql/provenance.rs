//! SQL for memories' provenance, shared by both databases: a row a memory,
//! written in the statement after the memories' own, gone with the memory.

use super::{Columns, Dialect, Row, Sql};
use crate::domain::provenance::{Origin, Provenance, WriteMethod};
use crate::domain::{Actor, Memory};
use crate::error::{Error, Result};
use crate::store::tx::MemoryInsert;

/// Rows a statement writes at most: nine values each, well within both
/// databases' limits on bound values.
const ROWS_A_STATEMENT: usize = 500;

/// Records where each of `stored` (the memories `inserts` made, in order)
/// came from.
pub async fn insert<D: Dialect>(
    conn: &mut D,
    inserts: &[MemoryInsert],
    stored: &[Memory],
) -> Result<()> {
    let pairs: Vec<(&MemoryInsert, &Memory)> = inserts.iter().zip(stored).collect();
    for chunk in pairs.chunks(ROWS_A_STATEMENT) {
        let mut sql = Sql::new(
            "INSERT INTO memory_provenance (memory_id, namespace, method, key_id, agent_id, \
             episode_id, transcript_hash, transcript, create_time) VALUES ",
        );
        for (i, (insert, memory)) in chunk.iter().enumerate() {
            let (new, origin) = (&insert.new, &insert.new.origin);
            if i > 0 {
                sql.push(", ");
            }
            sql.push("(")
                .values(|v| {
                    v.bind(memory.id.clone())
                        .bind(memory.scope.namespace.clone())
                        .bind(origin.method.code())
                        .bind(new.actor.key_id.clone())
                        .bind(new.actor.agent_id.clone())
                        .bind(origin.episode_id.clone())
                        .bind(origin.transcript_hash.clone())
                        .bind(origin.transcript.clone())
                        .bind(memory.create_time);
                })
                .push(")");
        }
        conn.execute(sql).await?;
    }
    Ok(())
}

/// The provenance of the memory `id`; `None` for a memory written before
/// provenance was kept.
pub async fn of<D: Dialect>(conn: &mut D, id: &str) -> Result<Option<Provenance>> {
    let mut sql = Sql::new(
        "SELECT method, key_id, agent_id, episode_id, transcript_hash, transcript, create_time \
         FROM memory_provenance WHERE memory_id = ",
    );
    sql.bind(id.to_owned());
    Ok(super::fetch(conn, sql, provenance_row::<D>).await?.pop())
}

fn provenance_row<D: Dialect>(row: &Row<D>) -> Result<Provenance> {
    let c = Columns::<D>::of(row);
    Ok(Provenance {
        origin: Origin {
            method: WriteMethod::from_code(c.get("method")?)
                .ok_or_else(|| Error::Internal("corrupt provenance row: bad method".into()))?,
            episode_id: c.get("episode_id")?,
            transcript_hash: c.get("transcript_hash")?,
            transcript: c.get("transcript")?,
        },
        actor: Actor {
            key_id: c.get("key_id")?,
            agent_id: c.get("agent_id")?,
        },
        create_time: c.get("create_time")?,
    })
}
