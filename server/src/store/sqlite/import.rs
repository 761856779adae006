//! Inserting whole records for import: every column as the record's row
//! has it ([`rows::row`]: ids, times, counters, versions), nothing where a
//! record is already. A memory's history is its revision records, never
//! what the triggers of migration 0009 would record of the import itself.

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::{db_error, export};
use crate::error::Result;
use crate::store::transfer::Inserted;
use crate::store::transfer::rows::{self, Row};
use crate::store::transfer::tables;
use crate::transfer::records::{MemoryRecord, Record, RevisionAction};

/// Inserts `record` unless a record with its key, or one it may not stand
/// beside, is there already.
pub(super) async fn insert(conn: &mut SqliteConnection, record: &Record) -> Result<Inserted> {
    let row = rows::row(record);
    let stored = match record {
        Record::Memory(r) => memory(conn, &row, r).await?,
        _ => {
            let (prefix, values) = tables::insert_head(record);
            let mut qb = insert_into(&row, prefix, values);
            tables::push_insert_end(&mut qb, record);
            execute(conn, qb).await?
        }
    };
    if stored {
        return Ok(Inserted::New);
    }
    Ok(match export::find(conn, record).await? {
        Some(existing) => Inserted::Exists(Box::new(existing)),
        None => Inserted::Refused(rows::refusal(record).into()),
    })
}

/// `INSERT INTO table ({prefix}columns) {values}` and the row's values,
/// bound.
fn insert_into(row: &Row, prefix: &str, values: &str) -> QueryBuilder<Sqlite> {
    let mut qb = QueryBuilder::<Sqlite>::new(format!(
        "INSERT INTO {} ({prefix}{}) {values}",
        row.table,
        row.column_list("")
    ));
    push_values(&mut qb, row);
    qb
}

/// The row's values, separated by commas. JSON is stored as text.
fn push_values(qb: &mut QueryBuilder<Sqlite>, row: &Row) {
    for (i, (_, value)) in row.columns.iter().enumerate() {
        if i > 0 {
            qb.push(", ");
        }
        rows::push_value(qb, value);
    }
}

/// Runs an insert; says whether it stored a row.
async fn execute(conn: &mut SqliteConnection, mut qb: QueryBuilder<Sqlite>) -> Result<bool> {
    let done = qb.build().execute(&mut *conn).await.map_err(db_error)?;
    Ok(done.rows_affected() > 0)
}

async fn memory(conn: &mut SqliteConnection, row: &Row, r: &MemoryRecord) -> Result<bool> {
    let mut qb = insert_into(row, "", "VALUES (");
    qb.push(") ON CONFLICT DO NOTHING RETURNING seq");
    let seq: Option<i64> = qb
        .build_query_scalar()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    let Some(seq) = seq else { return Ok(false) };
    forget_trigger_creation(conn, r).await?;
    if r.access_count > 0 || r.last_access_time.is_some() {
        sqlx::query(
            "INSERT INTO memory_access (memory_seq, access_count, last_access_time) VALUES (?, ?, ?)",
        )
        .bind(seq)
        .bind(r.access_count)
        .bind(r.last_access_time.unwrap_or(0))
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    }
    Ok(true)
}

/// Takes back the revision the insert's trigger just recorded of `r` (its
/// creation, by no one, as if the import had made it): its history is its
/// own revision records. That revision is the newest row of its table, as
/// this transaction is the database's only writer and `seq` only grows.
async fn forget_trigger_creation(conn: &mut SqliteConnection, r: &MemoryRecord) -> Result<()> {
    let done = sqlx::query(
        "DELETE FROM memory_revisions WHERE seq = (SELECT max(seq) FROM memory_revisions) \
         AND namespace = ? AND memory_id = ? AND action = ?",
    )
    .bind(&r.namespace)
    .bind(&r.id)
    .bind(RevisionAction::Created as i32)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    rows::creation_taken_back(done.rows_affected(), &r.id)?;
    Ok(())
}
