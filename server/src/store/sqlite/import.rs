//! Inserting whole records for import: every column as the record's row
//! has it ([`rows::row`]: ids, times, counters, versions), nothing where a
//! record is already. A memory's history is its revision records, never
//! what the triggers of migration 0009 would record of the import itself.

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::{db_error, export};
use crate::error::{Error, Result};
use crate::store::transfer::Inserted;
use crate::store::transfer::rows::{self, Row, Value};
use crate::transfer::records::{MemoryRecord, Record, RevisionAction};

/// Inserts `record` unless a record with its key, or one it may not stand
/// beside, is there already.
pub(super) async fn insert(conn: &mut SqliteConnection, record: &Record) -> Result<Inserted> {
    let row = rows::row(record);
    let stored = match record {
        Record::Memory(r) => memory(conn, &row, r).await?,
        Record::MemoryRevision(r) => {
            // No index keeps a revision's key unique (`seq` is the table's
            // own key): it is looked for.
            let mut qb = insert_into(&row, "SELECT ");
            qb.push(
                " WHERE NOT EXISTS (SELECT 1 FROM memory_revisions \
                 WHERE namespace = ",
            )
            .push_bind(r.namespace.clone())
            .push(" AND memory_id = ")
            .push_bind(r.memory_id.clone())
            .push(" AND version = ")
            .push_bind(r.version)
            .push(" AND action = ")
            .push_bind(r.action as i32)
            .push(")");
            execute(conn, qb).await?
        }
        Record::Step(r) => {
            // Keyed by its episode's row, found by the episode's id.
            let mut qb = QueryBuilder::<Sqlite>::new(format!(
                "INSERT INTO episode_steps (episode_seq, {}) SELECT seq, ",
                row.column_list("")
            ));
            push_values(&mut qb, &row);
            qb.push(" FROM episodes WHERE id = ")
                .push_bind(r.episode_id.clone())
                .push(" AND namespace = ")
                .push_bind(r.namespace.clone())
                .push(" ON CONFLICT DO NOTHING");
            execute(conn, qb).await?
        }
        _ => {
            let mut qb = insert_into(&row, "VALUES (");
            qb.push(") ON CONFLICT DO NOTHING");
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

/// `INSERT INTO table (columns) {values}` and the row's values, bound.
fn insert_into(row: &Row, values: &str) -> QueryBuilder<Sqlite> {
    let mut qb = QueryBuilder::<Sqlite>::new(format!(
        "INSERT INTO {} ({}) {values}",
        row.table,
        row.column_list("")
    ));
    push_values(&mut qb, row);
    qb
}

/// The row's values, bound, separated by commas. JSON is stored as text.
fn push_values(qb: &mut QueryBuilder<Sqlite>, row: &Row) {
    let mut values = qb.separated(", ");
    for (_, value) in &row.columns {
        match value {
            Value::Text(text) => values.push_bind(text.clone()),
            Value::Integer(number) => values.push_bind(*number),
            Value::Real(number) => values.push_bind(*number),
            Value::Boolean(flag) => values.push_bind(*flag),
            Value::Json(json) => values.push_bind(json.to_string()),
            Value::Null => values.push_bind(None::<i64>),
        };
    }
}

/// Runs an insert; says whether it stored a row.
async fn execute(conn: &mut SqliteConnection, mut qb: QueryBuilder<Sqlite>) -> Result<bool> {
    let done = qb.build().execute(&mut *conn).await.map_err(db_error)?;
    Ok(done.rows_affected() > 0)
}

async fn memory(conn: &mut SqliteConnection, row: &Row, r: &MemoryRecord) -> Result<bool> {
    let mut qb = insert_into(row, "VALUES (");
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
    if done.rows_affected() != 1 {
        // Without this the memory would keep a creation nobody made: better
        // no import than a history that lies.
        return Err(Error::Internal(format!(
            "importing memory {}: its insert did not record its creation as expected",
            r.id
        )));
    }
    Ok(())
}
