//! Transfers on PostgreSQL ([`SqlTransfer`]): a snapshot is a REPEATABLE
//! READ, read-only transaction (running replicas go on writing while it is
//! read); an import is a transaction of its own, each value cast to its
//! column's type as the schema names it.

use sqlx::{PgConnection, PgPool};

use super::{PostgresUrl, connect, migrate, schema_version};
use crate::store::sql::migrations;
use crate::store::transfer::{CONNECTIONS, ColumnTypes, SqlTransfer};

/// Records in and out of a PostgreSQL database.
pub type PostgresTransfer = SqlTransfer<PgConnection>;

impl SqlTransfer<PgConnection> {
    /// For export: the database must have this server's schema; it is only
    /// read (never migrated), so running replicas may keep using it.
    pub async fn open_to_read(url: &PostgresUrl) -> anyhow::Result<Self> {
        let pool = connect(url, CONNECTIONS).await?;
        let mut conn = pool.acquire().await?;
        migrations::check_version(&mut *conn, schema_version(), &url.to_string()).await?;
        drop(conn);
        with_types(pool).await
    }

    /// For import: the database's schema is brought up to date (under the
    /// migrations' advisory lock, as a replica's start does).
    pub async fn open_to_write(url: &PostgresUrl) -> anyhow::Result<Self> {
        let pool = connect(url, CONNECTIONS).await?;
        migrate(&pool).await?;
        with_types(pool).await
    }
}

/// A transfer through `pool`, with the types of the schema's columns.
async fn with_types(pool: PgPool) -> anyhow::Result<PostgresTransfer> {
    let columns: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text, \
               CASE WHEN data_type = 'USER-DEFINED' THEN udt_name::text ELSE data_type::text END \
             FROM information_schema.columns WHERE table_schema = current_schema()",
    )
    .fetch_all(&pool)
    .await?;
    let mut types = ColumnTypes::new();
    for (table, column, data_type) in columns {
        types.entry(table).or_default().insert(column, data_type);
    }
    Ok(SqlTransfer::new(pool, Some(types)))
}
