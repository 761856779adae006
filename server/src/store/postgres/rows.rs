//! Rows as domain values. Every column is read by name, so the column lists
//! below are what a query selects (or returns) to be decoded here; JSON
//! columns come as text (`::text`), which the domain types parse.

use sqlx::PgConnection;
use sqlx::postgres::PgRow;

use crate::domain::Memory;
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

/// Decodes every row with `decode`.
pub(super) fn all<T>(rows: &[PgRow], decode: fn(&PgRow) -> Result<T>) -> Result<Vec<T>> {
    rows.iter().map(decode).collect()
}
