//! PostgreSQL's write of a batch of access bookkeeping (see
//! [`crate::store::access`]). Each replica writes its own batches, adding
//! its counts to the row's: the upsert's row lock makes concurrent batches
//! add up rather than overwrite, and a batch is sorted by memory so two
//! never lock rows in opposite orders.

use sqlx::PgPool;

use super::db_error;
use super::retry::{Retries, is_conflict};
use crate::error::{Error, Result};
use crate::store::access::Access;

/// SQLSTATE of a batch that names a memory deleted (by any replica) after
/// the batch checked that it exists: run again, the check leaves it out.
const FOREIGN_KEY_VIOLATION: &str = "23503";

pub(super) async fn write_with_retries(pool: &PgPool, batch: &[(i64, Access)]) -> Result<()> {
    let mut retries = Retries::default();
    loop {
        match write(pool, batch).await {
            Err(err) if is_conflict(&err) => retries.pause().await?,
            done => return done,
        }
    }
}

async fn write(pool: &PgPool, batch: &[(i64, Access)]) -> Result<()> {
    let seqs: Vec<i64> = batch.iter().map(|(seq, _)| *seq).collect();
    let counts: Vec<i64> = batch.iter().map(|(_, a)| a.count).collect();
    let lasts: Vec<i64> = batch.iter().map(|(_, a)| a.last).collect();
    let written = sqlx::query(
        "INSERT INTO memory_access (memory_seq, access_count, last_access_time) \
         SELECT a.seq, a.n, a.last FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) \
         AS a(seq, n, last) WHERE EXISTS (SELECT 1 FROM memories m WHERE m.seq = a.seq) \
         ON CONFLICT (memory_seq) DO UPDATE SET \
         access_count = memory_access.access_count + excluded.access_count, \
         last_access_time = greatest(memory_access.last_access_time, excluded.last_access_time)",
    )
    .bind(seqs)
    .bind(counts)
    .bind(lasts)
    .execute(pool)
    .await;
    match written {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some(FOREIGN_KEY_VIOLATION) => {
            Err(Error::Unavailable(super::retry::CONFLICT.into()))
        }
        Err(err) => Err(db_error(err)),
    }
}
