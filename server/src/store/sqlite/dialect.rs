//! SQLite's side of the SQL both databases share ([`crate::store::sql`]).

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::db_error;
use crate::error::{Error, Result};
use crate::store::sql::{Bind, Column, Dialect, Row, Sql, rows};

impl Dialect for SqliteConnection {
    type Db = Sqlite;

    /// One writer: no other deleter to skip.
    const SKIP_LOCKED: &'static str = "";

    /// The file's pages, free ones included.
    const DATABASE_BYTES: &'static str =
        "SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()";

    const JSON_AS_TEXT: &'static str = "";

    const MEMORY_COLUMNS: &'static str = rows::memory_columns!("");

    const JSON_PARAM: &'static str = "";

    fn db_error(err: sqlx::Error) -> Error {
        db_error(err)
    }

    fn push_value<T: Bind>(query: &mut QueryBuilder<Sqlite>, value: T) {
        value.bind_sqlite(query);
    }

    fn value<T: Column>(row: &Row<Self>, column: &str) -> sqlx::Result<T> {
        T::get_sqlite(row, column)
    }

    async fn fetch_all(&mut self, sql: Sql<Self>) -> Result<Vec<Row<Self>>> {
        let mut query = sql.into_query();
        query.build().fetch_all(self).await.map_err(db_error)
    }

    async fn fetch_optional(&mut self, sql: Sql<Self>) -> Result<Option<Row<Self>>> {
        let mut query = sql.into_query();
        query.build().fetch_optional(self).await.map_err(db_error)
    }

    async fn execute(&mut self, sql: Sql<Self>) -> Result<u64> {
        let mut query = sql.into_query();
        let done = query.build().execute(self).await.map_err(db_error)?;
        Ok(done.rows_affected())
    }
}
