//! The Rust types the shared SQL binds ([`Bind`]) and reads ([`Column`]),
//! each as both databases take it. The sets are closed (there are two
//! dialects): a type the shared SQL needs is added here once, for both.

use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{Postgres, QueryBuilder, Row as _, Sqlite};

/// A value bound into a statement of either database (encoded at once, so
/// it may be borrowed).
pub trait Bind: Send {
    fn bind_sqlite(self, query: &mut QueryBuilder<Sqlite>);
    fn bind_postgres(self, query: &mut QueryBuilder<Postgres>);
}

/// A value read from a column of either database's rows.
pub trait Column: Sized {
    fn get_sqlite(row: &SqliteRow, column: &str) -> sqlx::Result<Self>;
    fn get_postgres(row: &PgRow, column: &str) -> sqlx::Result<Self>;
}

/// Types both drivers bind as they are.
macro_rules! bound_as_they_are {
    ($($t:ty),* $(,)?) => {$(
        impl Bind for $t {
            fn bind_sqlite(self, query: &mut QueryBuilder<Sqlite>) {
                query.push_bind(self);
            }
            fn bind_postgres(self, query: &mut QueryBuilder<Postgres>) {
                query.push_bind(self);
            }
        }
    )*};
}

/// Types both drivers decode as they are.
macro_rules! read_as_they_are {
    ($($t:ty),* $(,)?) => {$(
        impl Column for $t {
            fn get_sqlite(row: &SqliteRow, column: &str) -> sqlx::Result<Self> {
                row.try_get(column)
            }
            fn get_postgres(row: &PgRow, column: &str) -> sqlx::Result<Self> {
                row.try_get(column)
            }
        }
    )*};
}

bound_as_they_are!(
    &str,
    String,
    i64,
    f64,
    bool,
    &[u8],
    Option<&str>,
    Option<i64>,
    Option<f64>,
);

read_as_they_are!(
    String,
    i64,
    f64,
    bool,
    Vec<u8>,
    Option<String>,
    Option<i64>,
    Option<f64>,
);

/// An `i32` of the domain (a count, a code, a step number) is bound as an
/// `integer`, which either database widens where the column is a
/// `bigint`. It is read from an INTEGER on SQLite, and from an `integer`
/// or a `bigint` on PostgreSQL (narrowed, and refused if it does not fit).
impl Bind for i32 {
    fn bind_sqlite(self, query: &mut QueryBuilder<Sqlite>) {
        query.push_bind(self);
    }
    fn bind_postgres(self, query: &mut QueryBuilder<Postgres>) {
        query.push_bind(self);
    }
}

impl Column for i32 {
    fn get_sqlite(row: &SqliteRow, column: &str) -> sqlx::Result<Self> {
        row.try_get(column)
    }
    fn get_postgres(row: &PgRow, column: &str) -> sqlx::Result<Self> {
        if let Ok(narrow) = row.try_get::<i32, _>(column) {
            return Ok(narrow);
        }
        let wide: i64 = row.try_get(column)?;
        i32::try_from(wide).map_err(|err| sqlx::Error::ColumnDecode {
            index: column.to_owned(),
            source: Box::new(err),
        })
    }
}

impl Column for Option<i32> {
    fn get_sqlite(row: &SqliteRow, column: &str) -> sqlx::Result<Self> {
        row.try_get(column)
    }
    fn get_postgres(row: &PgRow, column: &str) -> sqlx::Result<Self> {
        if let Ok(narrow) = row.try_get::<Option<i32>, _>(column) {
            return Ok(narrow);
        }
        let wide: Option<i64> = row.try_get(column)?;
        wide.map(i32::try_from)
            .transpose()
            .map_err(|err| sqlx::Error::ColumnDecode {
                index: column.to_owned(),
                source: Box::new(err),
            })
    }
}
