//! PostgreSQL's side of the SQL both databases share ([`crate::store::sql`]).

use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::{db_error, memories};
use crate::domain::{Memory, Micros};
use crate::error::{Error, Result};
use crate::store::budget;
use crate::store::sql::{Bind, Column, Dialect, Row, Sql, rows};
use crate::store::tx::{Identity, MemoryInsert};

impl Dialect for PgConnection {
    type Db = Postgres;

    /// Rows another replica's Forget or purge holds are left to it.
    const SKIP_LOCKED: &'static str = " FOR UPDATE SKIP LOCKED";

    /// The newest number visible: numbers become visible in the order they
    /// were given (see `feed.rs`), never the identity's sequence, which
    /// runs ahead of what is committed.
    const FEED_HEAD: &'static str = "SELECT max(seq) FROM memory_changes";

    /// Tables, indexes and TOAST, as PostgreSQL counts them.
    const DATABASE_BYTES: &'static str = "SELECT pg_database_size(current_database()) AS bytes";

    const JSON_AS_TEXT: &'static str = "::text";

    const MEMORY_COLUMNS: &'static str = rows::memory_columns!("::text");

    const JSON_PARAM: &'static str = "::jsonb";

    const LOCK_FOR_WRITE: &'static str = " FOR UPDATE OF m";

    const MEMORIES_BY_SEQ: &'static str = rows::FROM_MEMORIES;

    fn push_in_seqs(query: &mut QueryBuilder<Postgres>, column: &str, seqs: &[i64]) {
        query
            .push(format_args!("{column} = ANY("))
            .push_bind(seqs.to_vec())
            .push(")");
    }

    fn push_has_tag(query: &mut QueryBuilder<Postgres>, column: &str, tag: &str) {
        query
            .push(format_args!(" AND {column} @> jsonb_build_array("))
            .push_bind(tag.to_owned())
            .push("::text)");
    }

    fn push_has_entry(query: &mut QueryBuilder<Postgres>, column: &str, key: &str, value: &str) {
        query
            .push(format_args!(" AND {column} @> jsonb_build_object("))
            .push_bind(key.to_owned())
            .push("::text, ")
            .push_bind(value.to_owned())
            .push("::text)");
    }

    async fn memories_within(
        &mut self,
        sql: Sql<Self>,
        max_bytes: Option<usize>,
    ) -> Result<Vec<Memory>> {
        let mut query = sql.into_query();
        let found = budget::rows_of(query.build().fetch(self), db_error);
        budget::memories_within(found, max_bytes, rows::memory::<Self>).await
    }

    /// A transaction-scoped advisory lock on the key's hash (see
    /// [`super::tx::lock_key`]).
    async fn lock(&mut self, key: &str) -> Result<()> {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(super::tx::lock_key(key))
            .execute(self)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn identical_memories(
        &mut self,
        identities: &[Identity],
        for_write: bool,
    ) -> Result<Vec<(Memory, String)>> {
        memories::identical(self, identities, for_write).await
    }

    async fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        memories::insert(self, inserts, now).await
    }

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

    async fn execute_unique(&mut self, sql: Sql<Self>) -> Result<Option<u64>> {
        let mut query = sql.into_query();
        match query.build().execute(self).await {
            Ok(done) => Ok(Some(done.rows_affected())),
            Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Ok(None),
            Err(err) => Err(db_error(err)),
        }
    }
}
