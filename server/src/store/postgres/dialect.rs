//! PostgreSQL's side of the SQL both databases share ([`crate::store::sql`]).

use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::db_error;
use crate::error::{Error, Result};
use crate::store::sql::{Bind, Column, Dialect, Row, Sql, rows};

impl Dialect for PgConnection {
    type Db = Postgres;

    /// Rows another replica's Forget or purge holds are left to it.
    const SKIP_LOCKED: &'static str = " FOR UPDATE SKIP LOCKED";

    /// Tables, indexes and TOAST, as PostgreSQL counts them.
    const DATABASE_BYTES: &'static str = "SELECT pg_database_size(current_database()) AS bytes";

    const JSON_AS_TEXT: &'static str = "::text";

    const MEMORY_COLUMNS: &'static str = rows::memory_columns!("::text");

    const JSON_PARAM: &'static str = "::jsonb";

    fn db_error(err: sqlx::Error) -> Error {
        db_error(err)
    }

    fn push_value<T: Bind>(query: &mut QueryBuilder<Postgres>, value: T) {
        value.bind_postgres(query);
    }

    fn value<T: Column>(row: &Row<Self>, column: &str) -> sqlx::Result<T> {
        T::get_postgres(row, column)
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
