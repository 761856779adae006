//! PostgreSQL's side of the SQL both databases share ([`crate::store::sql`]).

use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::{db_error, memories};
use crate::domain::{Memory, Micros};
use crate::error::Result;
use crate::store::sql::{Bind, Column, Dialect, Row, rows};
use crate::store::tx::{Identity, MemoryInsert};

impl Dialect for PgConnection {
    crate::store::sql::run_statements!(db_error);

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

    /// The rows are locked until the transaction ends, and a row another
    /// transaction is writing is read as that one commits it (READ
    /// COMMITTED reads the newest version of a row it waited for). So two
    /// replicas reinforcing, updating or deleting one memory take turns,
    /// and the second decides on what the first wrote (no lost sighting, a
    /// stale etag seen as stale).
    const LOCK_FOR_WRITE: &'static str = " FOR UPDATE OF m";

    const MEMORIES_BY_SEQ: &'static str = rows::FROM_MEMORIES;

    const NOT_INDEXED: &'static str = "";

    const BEGIN_SNAPSHOT: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

    const BEGIN_WRITE: &'static str = "BEGIN";

    const FIRST_PARAM: &'static str = "$1";

    const TEXT_HOLDS_NUL: bool = false;

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

    fn push_value<T: Bind>(query: &mut QueryBuilder<Postgres>, value: T) {
        value.bind_postgres(query);
    }

    fn value<T: Column>(row: &Row<Self>, column: &str) -> sqlx::Result<T> {
        T::get_postgres(row, column)
    }
}
