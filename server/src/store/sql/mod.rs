//! The SQL both databases share, written once.
//!
//! SQLite and PostgreSQL hold the same schema (each with its own
//! migrations) and take the same statements but for a few spellings. So
//! each statement is written here once, generic over [`Dialect`]: a
//! connection of either database, with what truly differs between them
//! (its errors, row locking, how values are bound and read). The backends
//! (`store/sqlite/`, `store/postgres/`) keep what is theirs alone: opening
//! the database, the writer or the retrying transaction, the change feed's
//! wake-ups, migrations, backup.
//!
//! A statement is built with [`Sql`] — text, and values bound in place
//! ([`Sql::bind`]) so each dialect writes its own placeholders — and run
//! with the dialect's [`Dialect::fetch_all`], [`Dialect::fetch_optional`]
//! or [`Dialect::execute`]; rows become domain values in [`rows`].

pub mod entities;
pub mod episodes;
pub mod feed;
pub mod learning;
pub mod links;
pub mod memories;
pub mod migrations;
pub mod outcomes;
pub mod provenance;
pub mod relations;
pub mod requests;
pub mod rows;
pub mod store;
pub mod transfer;
pub mod tx;
pub mod usage;
mod value;
pub mod vectors;

use std::fmt::Display;
use std::future::Future;

use sqlx::{Database, QueryBuilder};

pub use value::{Bind, Column};

use crate::domain::{Memory, Micros};
use crate::error::{Error, Result};
use crate::store::tx::{Identity, MemoryInsert};

/// A connection of one of the two databases, and what the shared SQL needs
/// to know of its dialect.
pub trait Dialect: sqlx::Connection + Send + Sized + 'static {
    /// What ends the subquery that picks the rows a bulk delete removes, so
    /// that two deleters (another replica's purge) skip each other's rows
    /// instead of waiting: PostgreSQL's ` FOR UPDATE SKIP LOCKED`; nothing
    /// on SQLite, whose one writer never meets another.
    const SKIP_LOCKED: &'static str;

    /// A SELECT of one value: the change feed's head, the number of the
    /// newest committed change (no row or NULL before any).
    const FEED_HEAD: &'static str;

    /// A statement whose one row's `bytes` is the database's size.
    const DATABASE_BYTES: &'static str;

    /// What follows a JSON column to read it as text (`::text` on
    /// PostgreSQL, whose `jsonb` columns are not text; nothing on SQLite).
    const JSON_AS_TEXT: &'static str;

    /// A memory's columns as [`rows::memory`] reads them:
    /// `rows::memory_columns!(JSON_AS_TEXT)`.
    const MEMORY_COLUMNS: &'static str;

    /// What follows a placeholder of JSON text to store it in a JSON column
    /// (`::jsonb` on PostgreSQL; nothing on SQLite, which keeps the text).
    const JSON_PARAM: &'static str;

    /// An error of this database as Engram's (busy and unreachable are
    /// UNAVAILABLE, a full disk RESOURCE_EXHAUSTED, the rest INTERNAL).
    fn db_error(err: sqlx::Error) -> Error;

    /// What ends a SELECT of memories (alias `m`) whose rows the unit of
    /// work will change, to lock them until it ends: PostgreSQL's
    /// ` FOR UPDATE OF m`; nothing on SQLite, whose one writer holds them all.
    const LOCK_FOR_WRITE: &'static str;

    /// What memories are read from when they are looked up by sequence
    /// number, with their access bookkeeping: on SQLite, `NOT INDEXED`, so
    /// that a rowid lookup is never traded for a walk of a namespace's index
    /// that a visibility rule would invite.
    const MEMORIES_BY_SEQ: &'static str;

    /// What follows `memories m` when its rows are picked by sequence number
    /// among few: SQLite's ` NOT INDEXED` (see [`Dialect::MEMORIES_BY_SEQ`]).
    const NOT_INDEXED: &'static str;

    /// What begins a read-only transaction on one snapshot, for reads of
    /// several statements that must agree with each other.
    const BEGIN_SNAPSHOT: &'static str;

    /// What begins a transaction that writes (an import): SQLite takes the
    /// write lock at once, so the import never fails midway for want of it.
    const BEGIN_WRITE: &'static str;

    /// The first placeholder of a statement's text (`?` or `$1`), for
    /// [`Dialect::rows_where`].
    const FIRST_PARAM: &'static str;

    /// Whether text and JSON may hold U+0000 (PostgreSQL's may not).
    const TEXT_HOLDS_NUL: bool;

    /// Appends `column IN (seqs)`: a list of placeholders on SQLite, one
    /// array (`= ANY(…)`, so that the statement is prepared once whatever
    /// the number) on PostgreSQL.
    fn push_in_seqs(query: &mut QueryBuilder<Self::Database>, column: &str, seqs: &[i64]);

    /// Appends that the JSON array `column` holds the string `tag`.
    fn push_has_tag(query: &mut QueryBuilder<Self::Database>, column: &str, tag: &str);

    /// Appends that the JSON object `column` maps `key` to the string `value`.
    fn push_has_entry(
        query: &mut QueryBuilder<Self::Database>,
        column: &str,
        key: &str,
        value: &str,
    );

    /// Reads the memories (with [`rows::memory`]'s columns) `sql` returns,
    /// one row at a time, until they pass `max_bytes` of text: the row past
    /// the budget is the last one kept (see [`crate::store::budget`]).
    fn memories_within(
        &mut self,
        sql: Sql<Self>,
        max_bytes: Option<usize>,
    ) -> impl Future<Output = Result<Vec<Memory>>> + Send;

    /// Takes the unit of work's lock on `key` until it ends (PostgreSQL: a
    /// transaction-scoped advisory lock; SQLite's one writer serialises
    /// every unit already).
    fn lock(&mut self, key: &str) -> impl Future<Output = Result<()>> + Send;

    /// The memories of these identities, expired ones included, with their
    /// content hashes; locked when `for_write`.
    fn identical_memories(
        &mut self,
        identities: &[Identity],
        for_write: bool,
    ) -> impl Future<Output = Result<Vec<(Memory, String)>>> + Send;

    /// Stores new memories; returns them as stored.
    fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> impl Future<Output = Result<Vec<Memory>>> + Send;

    /// Binds `value` at the end of `query`.
    fn push_value<T: Bind>(query: &mut QueryBuilder<Self::Database>, value: T);

    /// The `column` of `row` as a `T`.
    fn value<T: Column>(row: &Row<Self>, column: &str) -> sqlx::Result<T>;

    /// Every row `sql` returns.
    fn fetch_all(&mut self, sql: Sql<Self>) -> impl Future<Output = Result<Vec<Row<Self>>>> + Send;

    /// The row `sql` returns, if any.
    fn fetch_optional(
        &mut self,
        sql: Sql<Self>,
    ) -> impl Future<Output = Result<Option<Row<Self>>>> + Send;

    /// Runs `sql`; how many rows it changed.
    fn execute(&mut self, sql: Sql<Self>) -> impl Future<Output = Result<u64>> + Send;

    /// Runs `script`, statements separated by semicolons, without
    /// parameters (a migration).
    fn run_script(&mut self, script: &'static str) -> impl Future<Output = Result<()>> + Send;

    /// The rows of `text`, whose one parameter ([`Dialect::FIRST_PARAM`])
    /// is `value`, read as the stream is polled.
    fn rows_where(
        &mut self,
        text: String,
        value: String,
    ) -> futures_util::stream::BoxStream<'_, Result<Row<Self>>>;

    /// Runs `sql`; how many rows it changed, or `None` when a unique key
    /// refused it.
    fn execute_unique(
        &mut self,
        sql: Sql<Self>,
    ) -> impl Future<Output = Result<Option<u64>>> + Send;
}

/// The methods of [`Dialect`] that run statements, the same text for both
/// databases (sqlx's executors are implemented per connection type, so
/// they are written in each `impl Dialect` by this macro), given the
/// dialect's error mapping.
macro_rules! run_statements {
    ($db_error:path) => {
        fn db_error(err: sqlx::Error) -> $crate::error::Error {
            $db_error(err)
        }

        async fn memories_within(
            &mut self,
            sql: $crate::store::sql::Sql<Self>,
            max_bytes: Option<usize>,
        ) -> $crate::error::Result<Vec<$crate::domain::Memory>> {
            let mut query = sql.into_query();
            let found = $crate::store::budget::rows_of(query.build().fetch(self), $db_error);
            $crate::store::budget::memories_within(
                found,
                max_bytes,
                $crate::store::sql::rows::memory::<Self>,
            )
            .await
        }

        async fn fetch_all(
            &mut self,
            sql: $crate::store::sql::Sql<Self>,
        ) -> $crate::error::Result<Vec<$crate::store::sql::Row<Self>>> {
            let mut query = sql.into_query();
            query.build().fetch_all(self).await.map_err($db_error)
        }

        async fn fetch_optional(
            &mut self,
            sql: $crate::store::sql::Sql<Self>,
        ) -> $crate::error::Result<Option<$crate::store::sql::Row<Self>>> {
            let mut query = sql.into_query();
            query.build().fetch_optional(self).await.map_err($db_error)
        }

        async fn execute(
            &mut self,
            sql: $crate::store::sql::Sql<Self>,
        ) -> $crate::error::Result<u64> {
            let mut query = sql.into_query();
            let done = query.build().execute(self).await.map_err($db_error)?;
            Ok(done.rows_affected())
        }

        async fn run_script(&mut self, script: &'static str) -> $crate::error::Result<()> {
            sqlx::raw_sql(sqlx::AssertSqlSafe(script))
                .execute(self)
                .await
                .map_err($db_error)?;
            Ok(())
        }

        fn rows_where(
            &mut self,
            text: String,
            value: String,
        ) -> futures_util::stream::BoxStream<'_, $crate::error::Result<$crate::store::sql::Row<Self>>>
        {
            use futures_util::StreamExt as _;
            sqlx::query(sqlx::AssertSqlSafe(text))
                .bind(value)
                .fetch(self)
                .map(|row| row.map_err($db_error))
                .boxed()
        }

        async fn execute_unique(
            &mut self,
            sql: $crate::store::sql::Sql<Self>,
        ) -> $crate::error::Result<Option<u64>> {
            let mut query = sql.into_query();
            match query.build().execute(self).await {
                Ok(done) => Ok(Some(done.rows_affected())),
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Ok(None),
                Err(err) => Err($db_error(err)),
            }
        }
    };
}
pub(crate) use run_statements;

/// A row of `D`'s database.
pub type Row<D> = <<D as sqlx::Connection>::Database as Database>::Row;

/// A statement being built: SQL text, with values bound where they stand.
pub struct Sql<D: Dialect> {
    query: QueryBuilder<D::Database>,
}

impl<D: Dialect> Sql<D> {
    /// A statement starting with `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Sql {
            query: QueryBuilder::new(text),
        }
    }

    /// Appends `text` as it is: SQL, never a value.
    pub fn push(&mut self, text: impl Display) -> &mut Self {
        self.query.push(text);
        self
    }

    /// Appends a placeholder for `value`, bound to it.
    pub fn bind<T: Bind>(&mut self, value: T) -> &mut Self {
        D::push_value(&mut self.query, value);
        self
    }

    /// Appends `column IN (seqs)` in the dialect's spelling
    /// ([`Dialect::push_in_seqs`]).
    pub fn in_seqs(&mut self, column: &str, seqs: &[i64]) -> &mut Self {
        D::push_in_seqs(&mut self.query, column, seqs);
        self
    }

    /// Appends ` AND` the JSON array `column` holds `tag`.
    pub fn has_tag(&mut self, column: &str, tag: &str) -> &mut Self {
        D::push_has_tag(&mut self.query, column, tag);
        self
    }

    /// Appends ` AND` the JSON object `column` maps `key` to `value`.
    pub fn has_entry(&mut self, column: &str, key: &str, value: &str) -> &mut Self {
        D::push_has_entry(&mut self.query, column, key, value);
        self
    }

    /// Appends `values` as placeholders separated by commas, e.g. inside
    /// `VALUES (…)`: each one is bound by the closure given to
    /// [`Values::bind`].
    pub fn values(&mut self, bind: impl FnOnce(&mut Values<'_, D>)) -> &mut Self {
        bind(&mut Values {
            sql: self,
            first: true,
        });
        self
    }

    /// The builder, for the dialect to run.
    pub fn into_query(self) -> QueryBuilder<D::Database> {
        self.query
    }
}

/// The comma-separated values of [`Sql::values`].
pub struct Values<'a, D: Dialect> {
    sql: &'a mut Sql<D>,
    first: bool,
}

impl<D: Dialect> Values<'_, D> {
    /// The next value.
    pub fn bind<T: Bind>(&mut self, value: T) -> &mut Self {
        if !self.first {
            self.sql.push(", ");
        }
        self.first = false;
        self.sql.bind(value);
        self
    }
}

/// A row's columns, read by name.
pub struct Columns<'r, D: Dialect> {
    row: &'r Row<D>,
}

impl<'r, D: Dialect> Columns<'r, D> {
    pub fn of(row: &'r Row<D>) -> Self {
        Columns { row }
    }

    /// The `column` as a `T`; a failure as Engram's error.
    pub fn get<T: Column>(&self, column: &str) -> Result<T> {
        D::value(self.row, column).map_err(D::db_error)
    }
}

/// Runs `sql` and decodes its rows with `decode`.
pub async fn fetch<D: Dialect, T>(
    conn: &mut D,
    sql: Sql<D>,
    decode: fn(&Row<D>) -> Result<T>,
) -> Result<Vec<T>> {
    let found = conn.fetch_all(sql).await?;
    rows::all::<D, T>(&found, decode)
}

/// The one row `sql` returns (an INSERT or UPDATE … RETURNING, an
/// aggregate), decoded with `decode`.
pub async fn fetch_one<D: Dialect, T>(
    conn: &mut D,
    sql: Sql<D>,
    decode: fn(&Row<D>) -> Result<T>,
) -> Result<T> {
    let row = conn
        .fetch_optional(sql)
        .await?
        .ok_or_else(|| Error::Internal("a statement returned no row".into()))?;
    decode(&row)
}

/// A count or limit as the `bigint` both databases compare it with.
pub fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
