//! Rows as domain values. Every column is read by name, so the column lists
//! below are what a query selects (or returns) to be decoded here; JSON
//! columns come as text (`::text`), which the domain types parse.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row as _};

use super::db_error;
use crate::domain::{Actor, Memory, Revision};
use crate::error::Result;
use crate::store::sql::{Dialect, rows as sql_rows};

/// A memory's columns with its access bookkeeping, as
/// [`sql_rows::memory`] reads them, from [`FROM_MEMORIES`].
pub(super) const MEMORY_COLUMNS: &str = <PgConnection as Dialect>::MEMORY_COLUMNS;
pub(super) use crate::store::sql::rows::FROM_MEMORIES;

/// A memory's row.
pub(super) fn memory(row: &PgRow) -> Result<Memory> {
    sql_rows::memory::<PgConnection>(row)
}

fn get<'r, T>(row: &'r PgRow, column: &str) -> Result<T>
where
    T: sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
{
    row.try_get(column).map_err(db_error)
}

/// Between the names in `memory_revisions.changed` (as its trigger writes
/// them).
const CHANGED_SEPARATOR: char = ',';

pub(super) fn revision(row: &PgRow) -> Result<Revision> {
    let changed: String = get(row, "changed")?;
    Ok(Revision {
        seq: get(row, "seq")?,
        memory_id: get(row, "memory_id")?,
        version: get(row, "version")?,
        action: get(row, "action")?,
        time: get(row, "time")?,
        actor: Actor {
            key_id: get(row, "key_id")?,
            agent_id: get(row, "agent_id")?,
        },
        changed_fields: changed
            .split(CHANGED_SEPARATOR)
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

/// Decodes every row with `decode`.
pub(super) fn all<T>(rows: &[PgRow], decode: fn(&PgRow) -> Result<T>) -> Result<Vec<T>> {
    rows.iter().map(decode).collect()
}
