//! [`Transfer`] for SQLite: a snapshot is a read transaction on a
//! connection of its own (in WAL mode it blocks no writer, so a running
//! server goes on writing while it is read); an import is a write
//! transaction on another.

use std::path::Path;
use std::time::Duration;

use anyhow::bail;
use async_trait::async_trait;
use futures_util::stream::BoxStream;
use sqlx::{ConnectOptions as _, Connection as _, SqliteConnection};

use super::{SqliteOptions, connect_options, db_error, export, import, migrate, schema_version};
use crate::error::Result;
use crate::store::transfer::{Importing, Inserted, Snapshot, Transfer};
use crate::transfer::records::{Kind, Record};

/// Records in and out of a SQLite database.
pub struct SqliteTransfer {
    options: SqliteOptions,
    read_only: bool,
}

impl SqliteTransfer {
    /// For export: the database at `path` must exist and have this server's
    /// schema. It is only read (never migrated), so a running server may
    /// keep using it.
    pub async fn open_to_read(path: &Path, busy_timeout: Duration) -> anyhow::Result<Self> {
        if !path.is_file() {
            bail!("there is no database at {}", path.display());
        }
        let transfer = SqliteTransfer::new(path, busy_timeout, true);
        let mut conn = transfer.connect().await?;
        let version: Option<i64> = sqlx::query_scalar("SELECT max(version) FROM schema_migrations")
            .fetch_one(&mut conn)
            .await
            .map_err(|_| anyhow::anyhow!("{} is not an Engram database", path.display()))?;
        let (version, expected) = (version.unwrap_or(0), schema_version());
        if version != expected {
            bail!(
                "{} has schema version {version}, this engram-server reads version {expected}: \
                 run the engram-server that matches it, or start this one on it once to upgrade it",
                path.display()
            );
        }
        conn.close().await?;
        Ok(transfer)
    }

    /// For import: the database at `path` is created when missing and its
    /// schema brought up to date.
    pub async fn open_to_write(path: &Path, busy_timeout: Duration) -> anyhow::Result<Self> {
        let transfer = SqliteTransfer::new(path, busy_timeout, false);
        let mut conn = connect_options(path, &transfer.options)?
            .create_if_missing(true)
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        migrate(&mut conn).await?;
        conn.close().await?;
        Ok(transfer)
    }

    fn new(path: &Path, busy_timeout: Duration, read_only: bool) -> Self {
        let mut options = SqliteOptions::new(path);
        options.busy_timeout = busy_timeout;
        SqliteTransfer { options, read_only }
    }

    async fn connect(&self) -> anyhow::Result<SqliteConnection> {
        let options = connect_options(&self.options.path, &self.options)?.read_only(self.read_only);
        options
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", self.options.path.display()))
    }

    async fn begin(&self, sql: &'static str) -> Result<SqliteConnection> {
        let mut conn = self
            .connect()
            .await
            .map_err(|e| crate::error::Error::Internal(format!("{e:#}")))?;
        sqlx::raw_sql(sql)
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(conn)
    }
}

#[async_trait]
impl Transfer for SqliteTransfer {
    async fn snapshot(&self) -> Result<Box<dyn Snapshot + '_>> {
        // The snapshot is taken by the first read and kept until the end.
        Ok(Box::new(SqliteSnapshot(self.begin("BEGIN").await?)))
    }

    async fn begin_import(&self) -> Result<Box<dyn Importing + '_>> {
        Ok(Box::new(SqliteImport(self.begin("BEGIN IMMEDIATE").await?)))
    }
}

/// A read transaction; closing the connection ends it.
struct SqliteSnapshot(SqliteConnection);

#[async_trait]
impl Snapshot for SqliteSnapshot {
    async fn namespaces(&mut self) -> Result<Vec<String>> {
        export::namespaces(&mut self.0).await
    }

    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64> {
        export::count(&mut self.0, namespace, kind).await
    }

    fn records<'a>(&'a mut self, namespace: &str, kind: Kind) -> BoxStream<'a, Result<Record>> {
        export::records(&mut self.0, namespace, kind)
    }
}

/// A write transaction; closing the connection uncommitted rolls it back.
struct SqliteImport(SqliteConnection);

#[async_trait]
impl Importing for SqliteImport {
    async fn insert(&mut self, record: &Record) -> Result<Inserted> {
        import::insert(&mut self.0, record).await
    }

    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64> {
        export::count(&mut self.0, namespace, kind).await
    }

    async fn commit(mut self: Box<Self>) -> Result<()> {
        sqlx::raw_sql("COMMIT")
            .execute(&mut self.0)
            .await
            .map_err(db_error)?;
        Ok(())
    }
}
