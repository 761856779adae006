//! What `engram-server` does: [`serve`] (no subcommand), or one operator
//! subcommand — [`backup`], [`export`], [`import`], [`migrate_data`],
//! [`reindex`] — whose flags [`crate::config`] defines.

pub mod backup;
pub mod export;
mod files;
pub mod import;
pub mod migrate_data;
mod namespaces;
mod progress;
pub mod reindex;
pub mod serve;

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Command, Config, Database, Synchronous};
use crate::index::IndexOptions;
use crate::store::Store;
use crate::store::postgres::transfer::PostgresTransfer;
use crate::store::postgres::{PostgresOptions, PostgresStore};
use crate::store::sqlite::transfer::SqliteTransfer;
use crate::store::sqlite::{SqliteOptions, SqliteStore};
use crate::store::transfer::Transfer;

/// Runs what `config` asks for: its subcommand, or else the server.
pub async fn run(config: &Config) -> anyhow::Result<()> {
    match &config.command {
        None => serve::run(config).await,
        Some(Command::Reindex) => {
            let store = open_store(config).await?;
            let index_options = IndexOptions {
                dir: config.index_dir()?,
            };
            let rebuilt = reindex::run(&index_options, store.as_ref()).await;
            store.close().await;
            rebuilt
        }
        Some(Command::Backup(args)) => backup::run(config, args).await,
        Some(Command::Export(args)) => export::run(config, args).await,
        Some(Command::Import(args)) => import::run(config, args).await,
        Some(Command::MigrateData(args)) => migrate_data::run(config, args).await,
    }
}

/// The store `--database` names, opened (and created or migrated) for
/// serving or reindexing.
async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn Store>> {
    match config.database()? {
        Database::Sqlite(path) => {
            let mut options = SqliteOptions::new(path);
            options.synchronous_full = config.sqlite_synchronous == Synchronous::Full;
            options.busy_timeout = config.sqlite_busy_timeout;
            options.readers = config.sqlite_readers;
            Ok(Arc::new(SqliteStore::open(&options).await?))
        }
        Database::Postgres(url) => {
            let options = PostgresOptions {
                url,
                pool_size: config.database_pool_size,
                index_dir: config.index_dir()?,
            };
            Ok(Arc::new(PostgresStore::open(&options).await?))
        }
    }
}

/// `database`'s records, to export from: it must exist and have this
/// server's schema, and is only read.
pub async fn open_to_read(
    database: &Database,
    busy_timeout: Duration,
) -> anyhow::Result<Box<dyn Transfer>> {
    Ok(match database {
        Database::Sqlite(path) => Box::new(SqliteTransfer::open_to_read(path, busy_timeout).await?),
        Database::Postgres(url) => Box::new(PostgresTransfer::open_to_read(url).await?),
    })
}

/// `database`'s records, to import into: created when missing (SQLite), its
/// schema brought up to date.
pub async fn open_to_write(
    database: &Database,
    busy_timeout: Duration,
) -> anyhow::Result<Box<dyn Transfer>> {
    Ok(match database {
        Database::Sqlite(path) => {
            Box::new(SqliteTransfer::open_to_write(path, busy_timeout).await?)
        }
        Database::Postgres(url) => Box::new(PostgresTransfer::open_to_write(url).await?),
    })
}
