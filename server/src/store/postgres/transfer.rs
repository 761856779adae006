//! [`Transfer`] for PostgreSQL: a snapshot is a REPEATABLE READ, read-only
//! transaction (running replicas go on writing while it is read); an import
//! is a transaction of its own. Rows are read as JSON objects
//! (`to_jsonb`), which [`rows::record`] turns into records, and written
//! from [`rows::row`], each value cast to its column's type as the schema
//! names it.

use std::collections::HashMap;

use anyhow::bail;
use async_trait::async_trait;
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use sqlx::{AssertSqlSafe, PgPool, Postgres, QueryBuilder, Transaction};

use super::{PostgresUrl, connect, db_error, migrate, schema_version};
use crate::error::{Error, Result};
use crate::store::sql::rows::FROM_MEMORIES;
use crate::store::transfer::rows::{self, Row};
use crate::store::transfer::tables::{self, Table};
use crate::store::transfer::{Importing, Inserted, Snapshot, Transfer};
use crate::transfer::records::{Kind, MemoryRecord, Record, RevisionAction};

/// A memory's columns as [`rows::record`] reads them: its own, with its
/// access bookkeeping.
const MEMORY_COLUMNS: &str =
    "m.*, coalesce(a.access_count, 0) AS access_count, a.last_access_time AS last_access_time";

/// Connections a transfer keeps: one snapshot or import at a time, and one
/// for the lookups beside it.
const CONNECTIONS: u32 = 2;

fn table(kind: Kind) -> Table {
    Table::of(kind, MEMORY_COLUMNS, FROM_MEMORIES)
}

/// Records in and out of a PostgreSQL database.
pub struct PostgresTransfer {
    pool: PgPool,
    /// Each table's column types (`information_schema`'s names, e.g.
    /// `bigint`, `jsonb`), for the casts of an insert.
    types: HashMap<String, HashMap<String, String>>,
}

impl PostgresTransfer {
    /// For export: the database must have this server's schema; it is only
    /// read (never migrated), so running replicas may keep using it.
    pub async fn open_to_read(url: &PostgresUrl) -> anyhow::Result<Self> {
        let pool = connect(url, CONNECTIONS).await?;
        let version: Option<i64> = sqlx::query_scalar("SELECT max(version) FROM schema_migrations")
            .fetch_one(&pool)
            .await
            .map_err(|_| anyhow::anyhow!("{url} is not an Engram database"))?;
        let (version, expected) = (version.unwrap_or(0), schema_version());
        if version != expected {
            bail!(
                "{url} has schema version {version}, this engram-server reads version {expected}: \
                 run the engram-server that matches it, or start this one on it once to upgrade it"
            );
        }
        PostgresTransfer::with_types(pool).await
    }

    /// For import: the database's schema is brought up to date (under the
    /// migrations' advisory lock, as a replica's start does).
    pub async fn open_to_write(url: &PostgresUrl) -> anyhow::Result<Self> {
        let pool = connect(url, CONNECTIONS).await?;
        migrate(&pool).await?;
        PostgresTransfer::with_types(pool).await
    }

    async fn with_types(pool: PgPool) -> anyhow::Result<Self> {
        let columns: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT table_name::text, column_name::text, \
               CASE WHEN data_type = 'USER-DEFINED' THEN udt_name::text ELSE data_type::text END \
             FROM information_schema.columns WHERE table_schema = current_schema()",
        )
        .fetch_all(&pool)
        .await?;
        let mut types: HashMap<String, HashMap<String, String>> = HashMap::new();
        for (table, column, data_type) in columns {
            types.entry(table).or_default().insert(column, data_type);
        }
        Ok(PostgresTransfer { pool, types })
    }
}

#[async_trait]
impl Transfer for PostgresTransfer {
    async fn snapshot(&self) -> Result<Box<dyn Snapshot + '_>> {
        let mut tx = self.pool.begin().await.map_err(db_error)?;
        sqlx::raw_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await
            .map_err(db_error)?;
        Ok(Box::new(PgSnapshot(tx)))
    }

    async fn begin_import(&self) -> Result<Box<dyn Importing + '_>> {
        let tx = self.pool.begin().await.map_err(db_error)?;
        Ok(Box::new(PgImport {
            tx,
            types: &self.types,
        }))
    }
}

/// A snapshot: one transaction, so one view of the database.
struct PgSnapshot(Transaction<'static, Postgres>);

#[async_trait]
impl Snapshot for PgSnapshot {
    async fn namespaces(&mut self) -> Result<Vec<String>> {
        sqlx::query_scalar(AssertSqlSafe(tables::namespaces_sql(table)))
            .fetch_all(&mut *self.0)
            .await
            .map_err(db_error)
    }

    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64> {
        count(&mut self.0, namespace, kind).await
    }

    fn records<'a>(&'a mut self, namespace: &str, kind: Kind) -> BoxStream<'a, Result<Record>> {
        let table = table(kind);
        let sql = format!(
            "SELECT to_jsonb(r)::text FROM (SELECT {} FROM {} WHERE {} = $1 ORDER BY {}) r",
            table.columns, table.from, table.namespace, table.order
        );
        sqlx::query_scalar::<_, String>(AssertSqlSafe(sql))
            .bind(namespace.to_owned())
            .fetch(&mut *self.0)
            .map(move |json| json.map_err(db_error).and_then(|json| record(kind, &json)))
            .boxed()
    }
}

/// How many records of `kind` `namespace` holds, as `conn` sees them.
async fn count(conn: &mut sqlx::PgConnection, namespace: &str, kind: Kind) -> Result<u64> {
    let table = table(kind);
    let count: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
        "SELECT count(*) FROM {} WHERE {} = $1",
        table.from, table.namespace
    )))
    .bind(namespace)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// A row read as `to_jsonb` text, as a record of `kind`.
fn record(kind: Kind, json: &str) -> Result<Record> {
    let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)
        .map_err(|_| Error::Internal(format!("corrupt {} row: not an object", kind.name())))?;
    rows::record(kind, &object)
}

/// The record stored under `record`'s key, if any (the first written,
/// should a key no index keeps unique be there twice).
async fn find(conn: &mut sqlx::PgConnection, record: &Record) -> Result<Option<Record>> {
    let kind = record.kind();
    let table = table(kind);
    let mut qb = QueryBuilder::<Postgres>::new(format!(
        "SELECT to_jsonb(r)::text FROM (SELECT {} FROM {} WHERE ",
        table.columns, table.from
    ));
    tables::push_key(&mut qb, &table, record);
    qb.push(format!(" ORDER BY {} LIMIT 1) r", table.order));
    let json: Option<String> = qb
        .build_query_scalar()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    json.map(|json| self::record(kind, &json)).transpose()
}

/// An import transaction.
struct PgImport<'t> {
    tx: Transaction<'static, Postgres>,
    types: &'t HashMap<String, HashMap<String, String>>,
}

impl PgImport<'_> {
    /// `INSERT INTO table (columns) {values}` and the row's values, bound
    /// and cast to their columns' types.
    fn insert_into(&self, row: &Row, prefix: &str, values: &str) -> QueryBuilder<Postgres> {
        let mut qb = QueryBuilder::<Postgres>::new(format!(
            "INSERT INTO {} ({prefix}{}) {values}",
            row.table,
            row.column_list("")
        ));
        self.push_values(&mut qb, row);
        qb
    }

    /// The row's values, each cast to its column's type.
    fn push_values(&self, qb: &mut QueryBuilder<Postgres>, row: &Row) {
        let types = self.types.get(row.table);
        for (i, (column, value)) in row.columns.iter().enumerate() {
            if i > 0 {
                qb.push(", ");
            }
            qb.push("CAST(");
            rows::push_value(qb, value);
            let data_type = types
                .and_then(|types| types.get(*column))
                .map_or("text", String::as_str);
            qb.push(format!(" AS {data_type})"));
        }
    }

    async fn execute(&mut self, mut qb: QueryBuilder<Postgres>) -> Result<bool> {
        let done = qb.build().execute(&mut *self.tx).await.map_err(db_error)?;
        Ok(done.rows_affected() > 0)
    }

    async fn memory(&mut self, row: &Row, r: &MemoryRecord) -> Result<bool> {
        let mut qb = self.insert_into(row, "", "VALUES (");
        qb.push(") ON CONFLICT DO NOTHING RETURNING seq");
        let seq: Option<i64> = qb
            .build_query_scalar()
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(db_error)?;
        let Some(seq) = seq else { return Ok(false) };
        // Its history is its own revision records: the creation the
        // insert's trigger recorded, by no one, is taken back.
        let done = sqlx::query(
            "DELETE FROM memory_revisions WHERE seq = (SELECT max(seq) FROM memory_revisions \
             WHERE namespace = $1 AND memory_id = $2) AND action = $3",
        )
        .bind(&r.namespace)
        .bind(&r.id)
        .bind(RevisionAction::Created as i32)
        .execute(&mut *self.tx)
        .await
        .map_err(db_error)?;
        rows::creation_taken_back(done.rows_affected(), &r.id)?;
        if r.access_count > 0 || r.last_access_time.is_some() {
            sqlx::query(
                "INSERT INTO memory_access (memory_seq, access_count, last_access_time) \
                 VALUES ($1, $2, $3)",
            )
            .bind(seq)
            .bind(r.access_count)
            .bind(r.last_access_time.unwrap_or(0))
            .execute(&mut *self.tx)
            .await
            .map_err(db_error)?;
        }
        Ok(true)
    }
}

#[async_trait]
impl Importing for PgImport<'_> {
    async fn insert(&mut self, record: &Record) -> Result<Inserted> {
        let row = rows::row(record);
        if let Some(column) = row.column_with_nul() {
            return Ok(Inserted::Refused(format!(
                "its {column} holds the character U+0000, which PostgreSQL cannot store"
            )));
        }
        let stored = match record {
            Record::Memory(r) => self.memory(&row, r).await?,
            _ => {
                let (prefix, values) = tables::insert_head(record);
                let mut qb = self.insert_into(&row, prefix, values);
                tables::push_insert_end(&mut qb, record);
                self.execute(qb).await?
            }
        };
        if stored {
            return Ok(Inserted::New);
        }
        Ok(match find(&mut self.tx, record).await? {
            Some(existing) => Inserted::Exists(Box::new(existing)),
            None => Inserted::Refused(rows::refusal(record).into()),
        })
    }

    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64> {
        count(&mut self.tx, namespace, kind).await
    }

    async fn commit(self: Box<Self>) -> Result<()> {
        self.tx.commit().await.map_err(db_error)
    }
}
