//! The PostgreSQL backend (DESIGN §7): several stateless replicas behind a
//! load balancer share one database. What exists so far is its foundation:
//! connecting ([`connect`]), the schema (`server/migrations/postgres/`) and
//! its migrations ([`migrate`]), applied by every replica at start. The
//! [`Store`](super::Store) implementation is written against the engine's
//! unit of work; until it exists the server refuses PostgreSQL URLs with
//! [`NOT_FINISHED`].
//!
//! The change feed keeps SQLite's contract, `seq > last` never misses a
//! change, with concurrent writers on several replicas: a change's sequence
//! number is taken at commit under a lock, so numbers become visible in the
//! order they were given. The schema's comment on `memory_changes` says how
//! and what it costs; a commit that appends to it notifies [`FEED_CHANNEL`].

mod migrate;
mod url;

#[cfg(test)]
mod schema_tests;

use std::time::Duration;

use anyhow::Context as _;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

pub use self::migrate::{migrate, schema_version};
pub use self::url::{InvalidUrl, PostgresUrl};

/// What the server says when given a PostgreSQL database to serve, until the
/// store exists.
pub const NOT_FINISHED: &str = "the PostgreSQL backend is not finished (its schema and migrations are, its store is not yet); use --database sqlite://PATH";

/// The most connections a server opens to the database, unless
/// `--database-pool-size` says otherwise.
pub const DEFAULT_POOL_SIZE: u32 = 10;

/// The largest `--database-pool-size`: far beyond what one replica can use,
/// well below what makes a PostgreSQL server suffer.
pub const MAX_POOL_SIZE: u32 = 1000;

/// The channel that a commit which changed memories notifies (LISTEN/NOTIFY,
/// without a payload): it only wakes followers of the change feed, which
/// then read `memory_changes` after the last sequence number they applied.
pub const FEED_CHANNEL: &str = "engram_changes";

/// How long a call waits for a free connection before it fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The connections' `application_name` (unless the URL names one), so that
/// `pg_stat_activity` tells Engram's connections from others.
const APPLICATION_NAME: &str = "engram-server";

/// A pool of at most `pool_size` connections to the database at `url`; one
/// is opened now, so a wrong address or password fails here.
pub async fn connect(url: &PostgresUrl, pool_size: u32) -> anyhow::Result<PgPool> {
    let mut options = url.connect_options()?;
    if options.get_application_name().is_none() {
        options = options.application_name(APPLICATION_NAME);
    }
    PgPoolOptions::new()
        .max_connections(pool_size)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .with_context(|| format!("cannot connect to {url}"))
}
