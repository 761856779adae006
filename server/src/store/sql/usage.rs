//! What the database holds, for operators: its size, and memories per
//! namespace.

use super::{Columns, Dialect, Sql, count};
use crate::error::Result;
use crate::store::NamespaceSizes;

/// The database's size in bytes, as the dialect measures it
/// ([`Dialect::DATABASE_BYTES`]; the write-ahead log aside).
pub async fn database_bytes<D: Dialect>(conn: &mut D) -> Result<i64> {
    let row = conn.fetch_optional(Sql::new(D::DATABASE_BYTES)).await?;
    match row {
        Some(row) => Columns::<D>::of(&row).get("bytes"),
        None => Ok(0),
    }
}

/// Memories per namespace: the `limit` largest, and the totals. Both walk an
/// index that leads with the namespace (no memory row is read).
pub async fn namespace_sizes<D: Dialect>(conn: &mut D, limit: usize) -> Result<NamespaceSizes> {
    let mut sql = Sql::new(
        "SELECT namespace, count(*) AS memories FROM memories \
         GROUP BY namespace ORDER BY memories DESC, namespace LIMIT ",
    );
    sql.bind(count(limit));
    let largest = conn
        .fetch_all(sql)
        .await?
        .iter()
        .map(|row| {
            let c = Columns::<D>::of(row);
            Ok((c.get("namespace")?, c.get("memories")?))
        })
        .collect::<Result<Vec<(String, i64)>>>()?;
    let totals = Sql::new(
        "SELECT count(*) AS memories, count(DISTINCT namespace) AS namespaces FROM memories",
    );
    let (memories, namespaces) = match conn.fetch_optional(totals).await? {
        Some(row) => {
            let c = Columns::<D>::of(&row);
            (c.get("memories")?, c.get("namespaces")?)
        }
        None => (0, 0),
    };
    Ok(NamespaceSizes {
        largest,
        memories,
        namespaces,
    })
}
