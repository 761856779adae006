//! Whole records in and out of a database, for `export` and `import`
//! (see [`crate::archive`]). A database offers a consistent snapshot to
//! read every record from, and a transaction that inserts records as they
//! are (ids, times and counters included), telling which already exist;
//! what to make of those is the importer's decision. Both databases do so
//! with the same SQL ([`SqlTransfer`]); each opens its own pool.

pub mod rows;
pub mod tables;

use std::collections::HashMap;

use async_trait::async_trait;
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use sqlx::{Pool, Transaction};

use self::rows::Row;
use self::tables::Table;
use super::{Columns, Dialect, Sql};
use crate::archive::records::{Kind, MemoryRecord, Record, RevisionAction};
use crate::error::Result;

/// A database's records, read and written whole.
#[async_trait]
pub trait Transfer: Send + Sync {
    /// A snapshot of the database as it is now: what it reads agrees with
    /// itself, whatever is written meanwhile.
    async fn snapshot(&self) -> Result<Box<dyn Snapshot + '_>>;

    /// A transaction to import into; dropped uncommitted, it leaves nothing.
    async fn begin_import(&self) -> Result<Box<dyn Importing + '_>>;
}

/// A consistent view of a database to export from.
#[async_trait]
pub trait Snapshot: Send {
    /// Every namespace that holds a record of any kind, in order.
    async fn namespaces(&mut self) -> Result<Vec<String>>;

    /// How many records of `kind` `namespace` holds.
    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64>;

    /// Every record of `kind` in `namespace`, in the order they were first
    /// written (which every listing's tie-breaks follow, so an import that
    /// keeps it lists them alike), read from the database as the stream is
    /// polled: a reader that waits holds back the reading.
    fn records<'a>(&'a mut self, namespace: &str, kind: Kind) -> BoxStream<'a, Result<Record>>;
}

/// What inserting a record did.
#[derive(Debug, Clone, PartialEq)]
pub enum Inserted {
    /// It was stored.
    New,
    /// A record with its key is already there (as returned); nothing was
    /// stored.
    Exists(Box<Record>),
    /// Another record is already there that it may not stand beside (an
    /// identical memory under another id, a rule of the same text, a step
    /// of an episode that is not there); nothing was stored. Says which.
    Refused(String),
}

/// An import transaction.
#[async_trait]
pub trait Importing: Send {
    /// Inserts `record` as it is, unless [`Inserted`] says otherwise. Every
    /// memory inserted is a change of the feed the search indexes follow,
    /// but no change of its history: its revisions are records of their
    /// own ([`Kind::MemoryRevision`]), inserted in the order they come, after
    /// the revisions already there.
    async fn insert(&mut self, record: &Record) -> Result<Inserted>;

    /// How many records of `kind` `namespace` holds, those this
    /// transaction inserted included.
    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64>;

    /// Commits everything inserted.
    async fn commit(self: Box<Self>) -> Result<()>;
}

/// Connections a transfer keeps: one snapshot or import at a time, and one
/// for the lookups beside it.
pub const CONNECTIONS: u32 = 2;

/// Each table's column types (`information_schema`'s names, e.g. `bigint`,
/// `jsonb`), for a database whose columns take only values of their type.
pub type ColumnTypes = HashMap<String, HashMap<String, String>>;

type Db<D> = <D as sqlx::Connection>::Database;

/// Records in and out of a database of dialect `D`.
pub struct SqlTransfer<D: Dialect> {
    pool: Pool<Db<D>>,
    /// When set, every value inserted is cast to its column's type.
    types: Option<ColumnTypes>,
}

impl<D: Dialect> SqlTransfer<D> {
    /// Transfers through `pool` (of [`CONNECTIONS`]).
    pub fn new(pool: Pool<Db<D>>, types: Option<ColumnTypes>) -> Self {
        SqlTransfer { pool, types }
    }

    /// The pool the transfer reads and writes through.
    pub fn pool(&self) -> &Pool<Db<D>> {
        &self.pool
    }
}

/// Where `kind`'s records are in `D`'s database.
fn table<D: Dialect>(kind: Kind) -> Table {
    Table::of::<D>(kind)
}

#[async_trait]
impl<D: Dialect> Transfer for SqlTransfer<D> {
    async fn snapshot(&self) -> Result<Box<dyn Snapshot + '_>> {
        let tx = self
            .pool
            .begin_with(D::BEGIN_SNAPSHOT)
            .await
            .map_err(D::db_error)?;
        Ok(Box::new(SqlSnapshot::<D>(tx)))
    }

    async fn begin_import(&self) -> Result<Box<dyn Importing + '_>> {
        let tx = self
            .pool
            .begin_with(D::BEGIN_WRITE)
            .await
            .map_err(D::db_error)?;
        Ok(Box::new(SqlImport::<D> {
            tx,
            types: self.types.as_ref(),
            stored_memories: false,
        }))
    }
}

/// A snapshot: one transaction, so one view of the database.
struct SqlSnapshot<D: Dialect>(Transaction<'static, Db<D>>);

#[async_trait]
impl<D: Dialect> Snapshot for SqlSnapshot<D> {
    async fn namespaces(&mut self) -> Result<Vec<String>> {
        let sql = Sql::new(tables::namespaces_sql(table::<D>));
        super::fetch(&mut *self.0, sql, |row| {
            Columns::<D>::of(row).get("namespace")
        })
        .await
    }

    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64> {
        count::<D>(&mut self.0, namespace, kind).await
    }

    fn records<'a>(&'a mut self, namespace: &str, kind: Kind) -> BoxStream<'a, Result<Record>> {
        let table = table::<D>(kind);
        let sql = format!(
            "SELECT {} FROM {} WHERE {} = {} ORDER BY {}",
            table.columns,
            table.from,
            table.namespace,
            D::FIRST_PARAM,
            table.order
        );
        self.0
            .rows_where(sql, namespace.to_owned())
            .map(move |row| row.and_then(|row| rows::record::<D>(kind, &row)))
            .boxed()
    }
}

/// How many records of `kind` `namespace` holds, as `conn` sees them.
async fn count<D: Dialect>(conn: &mut D, namespace: &str, kind: Kind) -> Result<u64> {
    let table = table::<D>(kind);
    let mut sql = Sql::new(format!(
        "SELECT count(*) AS n FROM {} WHERE {} = ",
        table.from, table.namespace
    ));
    sql.bind(namespace);
    let count: i64 = super::fetch_one(conn, sql, |row| Columns::<D>::of(row).get("n")).await?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// The record stored under `record`'s key (whatever its namespace, for a
/// key without one), if any: the first written, should a key that no index
/// keeps unique (a memory revision's) be there twice.
async fn find<D: Dialect>(conn: &mut D, record: &Record) -> Result<Option<Record>> {
    let kind = record.kind();
    let table = table::<D>(kind);
    let mut sql = Sql::new(format!(
        "SELECT {} FROM {} WHERE ",
        table.columns, table.from
    ));
    tables::push_key(&mut sql, &table, record);
    sql.push(format_args!(" ORDER BY {} LIMIT 1", table.order));
    let row = conn.fetch_optional(sql).await?;
    row.map(|row| rows::record::<D>(kind, &row)).transpose()
}

/// An import transaction: every column as the record's row has it
/// ([`rows::row`]: ids, times, counters, versions), nothing where a record
/// is already. A memory's history is its revision records, never what the
/// schema's triggers would record of the import itself.
struct SqlImport<'t, D: Dialect> {
    tx: Transaction<'static, Db<D>>,
    types: Option<&'t ColumnTypes>,
    /// Whether a memory was stored: the entity backfill then reads up to
    /// the last one, to link the new ones to the entities they name.
    stored_memories: bool,
}

impl<D: Dialect> SqlImport<'_, D> {
    /// `INSERT INTO table ({prefix}columns) {values}` and the row's values.
    fn insert_into(&self, row: &Row, prefix: &str, values: &str) -> Sql<D> {
        let mut sql = Sql::new(format!(
            "INSERT INTO {} ({prefix}{}) {values}",
            row.table,
            row.column_list("")
        ));
        self.push_values(&mut sql, row);
        sql
    }

    /// The row's values, separated by commas; each cast to its column's
    /// type when the database wants it.
    fn push_values(&self, sql: &mut Sql<D>, row: &Row) {
        let types = self.types.map(|types| types.get(row.table));
        for (i, (column, value)) in row.columns.iter().enumerate() {
            if i > 0 {
                sql.push(", ");
            }
            let Some(types) = types else {
                rows::push_value(sql, value);
                continue;
            };
            sql.push("CAST(");
            rows::push_value(sql, value);
            let data_type = types
                .and_then(|types| types.get(*column))
                .map_or("text", String::as_str);
            sql.push(format_args!(" AS {data_type})"));
        }
    }

    async fn memory(&mut self, row: &Row, r: &MemoryRecord) -> Result<bool> {
        let mut sql = self.insert_into(row, "", "VALUES (");
        sql.push(") ON CONFLICT DO NOTHING RETURNING seq");
        let Some(inserted) = self.tx.fetch_optional(sql).await? else {
            return Ok(false);
        };
        let seq: i64 = Columns::<D>::of(&inserted).get("seq")?;
        // Its history is its own revision records: the creation the
        // insert's trigger recorded, by no one, is taken back.
        let mut sql = Sql::new(
            "DELETE FROM memory_revisions WHERE seq = (SELECT max(seq) FROM memory_revisions \
             WHERE namespace = ",
        );
        sql.bind(r.namespace.as_str())
            .push(" AND memory_id = ")
            .bind(r.id.as_str())
            .push(") AND action = ")
            .bind(i64::from(RevisionAction::Created as i32));
        let removed = self.tx.execute(sql).await?;
        rows::creation_taken_back(removed, &r.id)?;
        if r.access_count > 0 || r.last_access_time.is_some() {
            let mut sql = Sql::new(
                "INSERT INTO memory_access (memory_seq, access_count, last_access_time) VALUES (",
            );
            sql.values(|v| {
                v.bind(seq)
                    .bind(r.access_count)
                    .bind(r.last_access_time.unwrap_or(0));
            })
            .push(")");
            self.tx.execute(sql).await?;
        }
        Ok(true)
    }
}

#[async_trait]
impl<D: Dialect> Importing for SqlImport<'_, D> {
    async fn insert(&mut self, record: &Record) -> Result<Inserted> {
        let row = rows::row(record);
        if !D::TEXT_HOLDS_NUL
            && let Some(column) = row.column_with_nul()
        {
            return Ok(Inserted::Refused(format!(
                "its {column} holds the character U+0000, which PostgreSQL cannot store"
            )));
        }
        let stored = match record {
            Record::Memory(r) => {
                let stored = self.memory(&row, r).await?;
                self.stored_memories |= stored;
                stored
            }
            _ => {
                let (prefix, values) = tables::insert_head(record);
                let mut sql = self.insert_into(&row, prefix, values);
                tables::push_insert_end(&mut sql, record);
                self.tx.execute(sql).await? > 0
            }
        };
        if stored {
            return Ok(Inserted::New);
        }
        Ok(match find::<D>(&mut self.tx, record).await? {
            Some(existing) => Inserted::Exists(Box::new(existing)),
            None => Inserted::Refused(rows::refusal(record).into()),
        })
    }

    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64> {
        count::<D>(&mut self.tx, namespace, kind).await
    }

    async fn commit(mut self: Box<Self>) -> Result<()> {
        if self.stored_memories {
            let sql = Sql::new(
                "UPDATE engram_meta SET value = \
                 (SELECT CAST(coalesce(max(seq), 0) AS TEXT) FROM memories) \
                 WHERE key = 'entity_backfill_through'",
            );
            self.tx.execute(sql).await?;
        }
        self.tx.commit().await.map_err(D::db_error)
    }
}
