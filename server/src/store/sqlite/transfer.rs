//! Transfers on SQLite ([`SqlTransfer`]): a snapshot is a read
//! transaction (in WAL mode it blocks no writer, so a running server goes
//! on writing while it is read); an import is a write transaction.

use std::path::Path;
use std::time::Duration;

use anyhow::bail;
use sqlx::sqlite::SqlitePoolOptions;
use sqlx::{ConnectOptions as _, Connection as _, SqliteConnection};

use super::{SqliteOptions, connect_options, migrate, schema_version};
use crate::store::sql::migrations;
use crate::store::transfer::SqlTransfer;

/// Records in and out of a SQLite database.
pub type SqliteTransfer = SqlTransfer<SqliteConnection>;

impl SqlTransfer<SqliteConnection> {
    /// For export: the database at `path` must exist and have this server's
    /// schema. It is only read (never migrated), so a running server may
    /// keep using it.
    pub async fn open_to_read(path: &Path, busy_timeout: Duration) -> anyhow::Result<Self> {
        if !path.is_file() {
            bail!("there is no database at {}", path.display());
        }
        let transfer = open(path, busy_timeout, true).await?;
        let mut conn = transfer.pool().acquire().await?;
        migrations::check_version(&mut *conn, schema_version(), &path.display().to_string())
            .await?;
        drop(conn);
        Ok(transfer)
    }

    /// For import: the database at `path` is created when missing and its
    /// schema brought up to date.
    pub async fn open_to_write(path: &Path, busy_timeout: Duration) -> anyhow::Result<Self> {
        let mut options = SqliteOptions::new(path);
        options.busy_timeout = busy_timeout;
        let mut conn = connect_options(path, &options)?
            .create_if_missing(true)
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        migrate(&mut conn).await?;
        conn.close().await?;
        open(path, busy_timeout, false).await
    }
}

/// A transfer on connections of its own to the database at `path`.
async fn open(
    path: &Path,
    busy_timeout: Duration,
    read_only: bool,
) -> anyhow::Result<SqliteTransfer> {
    let mut options = SqliteOptions::new(path);
    options.busy_timeout = busy_timeout;
    let pool = SqlitePoolOptions::new()
        .max_connections(crate::store::transfer::CONNECTIONS)
        .acquire_timeout(busy_timeout)
        .connect_with(connect_options(path, &options)?.read_only(read_only))
        .await
        .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
    Ok(SqlTransfer::new(pool, None))
}
