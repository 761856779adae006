//! SQL for what memories say of the entities they name, as (subject,
//! predicate, object) triples read by the model, shared by both databases.

use super::{Columns, Dialect, Row, Sql};
use crate::domain::entity::StatedRelation;
use crate::error::Result;

/// Replaces what the memory `seq` says of its entities with `relations`
/// (in order); nothing is stored for a memory gone meanwhile.
pub async fn set<D: Dialect>(conn: &mut D, seq: i64, relations: &[StatedRelation]) -> Result<()> {
    let mut sql = Sql::new("DELETE FROM memory_relations WHERE memory_seq = ");
    sql.bind(seq);
    conn.execute(sql).await?;
    for (position, relation) in relations.iter().enumerate() {
        let mut sql = Sql::new(
            "INSERT INTO memory_relations (memory_seq, position, subject_key, predicate, object) SELECT seq, ",
        );
        sql.bind(position as i64)
            .push(", ")
            .bind(relation.subject_key.clone())
            .push(", ")
            .bind(relation.predicate.clone())
            .push(", ")
            .bind(relation.object.clone())
            .push(" FROM memories WHERE seq = ")
            .bind(seq);
        conn.execute(sql).await?;
    }
    Ok(())
}

/// What the memories `seqs` say of their entities: (memory, relation), in
/// the order given for each memory.
pub async fn of<D: Dialect>(conn: &mut D, seqs: &[i64]) -> Result<Vec<(i64, StatedRelation)>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql =
        Sql::new("SELECT memory_seq, subject_key, predicate, object FROM memory_relations WHERE ");
    sql.in_seqs("memory_seq", seqs)
        .push(" ORDER BY memory_seq, position");
    super::fetch(conn, sql, relation_row::<D>).await
}

fn relation_row<D: Dialect>(row: &Row<D>) -> Result<(i64, StatedRelation)> {
    let c = Columns::<D>::of(row);
    Ok((
        c.get("memory_seq")?,
        StatedRelation {
            subject_key: c.get("subject_key")?,
            predicate: c.get("predicate")?,
            object: c.get("object")?,
        },
    ))
}
