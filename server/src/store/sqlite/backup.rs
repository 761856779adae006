//! Online backups: a consistent copy of a live database, taken while a
//! server keeps reading and writing it.
//!
//! `VACUUM INTO` rather than SQLite's backup API: it copies inside one read
//! transaction, so the copy is a snapshot of one moment, and in WAL mode a
//! reader blocks no writer, so the server never waits for it. (The backup
//! API, stepped, starts over whenever another connection writes — against a
//! busy server it may never finish — and, in one step, copies the pages as
//! they are, free space and all; `VACUUM INTO` writes a compact file.)

use std::path::Path;
use std::str::FromStr as _;
use std::time::Duration;

use anyhow::{Context as _, bail};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions as _, Connection as _};

/// What a backup holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// Memories in the copy, expired ones included.
    pub memories: i64,
}

/// Copies the database at `source` into the new file `into`, consistently,
/// while other connections go on writing `source`; checks the copy and
/// returns what it holds. `into` must not exist.
///
/// The copy gets a database id of its own: restored, it is another history
/// of changes than the database it was copied from (whose later changes it
/// lacks, and whose change numbers it will reuse), so a search index built
/// from that database must be rebuilt rather than trusted — and is, since an
/// index remembers the id of the database it was built from.
pub async fn copy(source: &Path, into: &Path, busy_timeout: Duration) -> anyhow::Result<Copied> {
    if !source.is_file() {
        bail!("there is no database at {}", source.display());
    }
    let mut reader = SqliteConnectOptions::from_str("sqlite:")?
        .filename(source)
        .read_only(true)
        .busy_timeout(busy_timeout)
        .connect()
        .await
        .with_context(|| format!("cannot open {}", source.display()))?;
    let identified: Option<String> =
        sqlx::query_scalar("SELECT value FROM engram_meta WHERE key = 'database_id'")
            .fetch_optional(&mut reader)
            .await
            .ok()
            .flatten();
    if identified.is_none() {
        bail!("{} is not an Engram database", source.display());
    }
    let target = into
        .to_str()
        .with_context(|| format!("{} is not a UTF-8 path", into.display()))?;
    sqlx::query("VACUUM INTO ?")
        .bind(target)
        .execute(&mut reader)
        .await
        .with_context(|| format!("copying {} failed", source.display()))?;
    reader.close().await?;

    // The copy on its own, as a restored database: its own id, every page
    // checked, and no write-ahead log beside it.
    let mut copy = SqliteConnectOptions::from_str("sqlite:")?
        .filename(into)
        .journal_mode(SqliteJournalMode::Delete)
        .synchronous(SqliteSynchronous::Full)
        .connect()
        .await
        .with_context(|| format!("cannot open the copy {}", into.display()))?;
    sqlx::query(
        "UPDATE engram_meta SET value = lower(hex(randomblob(16))) WHERE key = 'database_id'",
    )
    .execute(&mut copy)
    .await?;
    let check: String = sqlx::query_scalar("PRAGMA quick_check")
        .fetch_one(&mut copy)
        .await?;
    if check != "ok" {
        bail!("the copy failed its integrity check: {check}");
    }
    let memories = sqlx::query_scalar("SELECT count(*) FROM memories")
        .fetch_one(&mut copy)
        .await?;
    copy.close().await?;
    Ok(Copied { memories })
}
