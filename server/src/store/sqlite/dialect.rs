//! SQLite's side of the SQL both databases share ([`crate::store::sql`]).

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::db_error;
use super::memories::{self, feed_head_sql};
use crate::domain::{Memory, Micros};
use crate::error::Result;
use crate::store::sql::{Bind, Column, Dialect, Row, rows};
use crate::store::tx::{Identity, MemoryInsert};

impl Dialect for SqliteConnection {
    crate::store::sql::run_statements!(db_error);

    /// One writer: no other deleter to skip.
    const SKIP_LOCKED: &'static str = "";

    /// AUTOINCREMENT keeps the highest number ever used, which is also the
    /// newest change's (numbers are never reused).
    const FEED_HEAD: &'static str = feed_head_sql!();

    /// The file's pages, free ones included.
    const DATABASE_BYTES: &'static str =
        "SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()";

    const JSON_AS_TEXT: &'static str = "";

    const MEMORY_COLUMNS: &'static str = rows::memory_columns!("");

    const JSON_PARAM: &'static str = "";

    const LOCK_FOR_WRITE: &'static str = "";

    const MEMORIES_BY_SEQ: &'static str =
        "memories m NOT INDEXED LEFT JOIN memory_access a ON a.memory_seq = m.seq";

    const NOT_INDEXED: &'static str = " NOT INDEXED";

    const BEGIN_SNAPSHOT: &'static str = "BEGIN";

    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";

    const FIRST_PARAM: &'static str = "?";

    const TEXT_HOLDS_NUL: bool = true;

    fn push_in_seqs(query: &mut QueryBuilder<Sqlite>, column: &str, seqs: &[i64]) {
        query.push(format_args!("{column} IN ("));
        let mut list = query.separated(", ");
        for &seq in seqs {
            list.push_bind(seq);
        }
        query.push(")");
    }

    fn push_has_tag(query: &mut QueryBuilder<Sqlite>, column: &str, tag: &str) {
        query
            .push(format_args!(
                " AND EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = "
            ))
            .push_bind(tag.to_owned())
            .push(")");
    }

    fn push_has_entry(query: &mut QueryBuilder<Sqlite>, column: &str, key: &str, value: &str) {
        query
            .push(format_args!(
                " AND EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.key = "
            ))
            .push_bind(key.to_owned())
            .push(" AND json_each.value = ")
            .push_bind(value.to_owned())
            .push(")");
    }

    /// The one writer serialises every unit of work already.
    async fn lock(&mut self, _key: &str) -> Result<()> {
        Ok(())
    }

    /// Nothing to lock: the one writer holds the database.
    async fn identical_memories(
        &mut self,
        identities: &[Identity],
        _for_write: bool,
    ) -> Result<Vec<(Memory, String)>> {
        memories::identical(self, identities).await
    }

    async fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        memories::insert(self, inserts, now).await
    }

    fn push_value<T: Bind>(query: &mut QueryBuilder<Sqlite>, value: T) {
        value.bind_sqlite(query);
    }

    fn value<T: Column>(row: &Row<Self>, column: &str) -> sqlx::Result<T> {
        T::get_sqlite(row, column)
    }
}
