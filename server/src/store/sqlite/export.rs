//! Reading whole records for export: where each kind lives, the order it
//! was written in, what identifies one, and its rows as records.

use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use sqlx::sqlite::SqliteRow;
use sqlx::{AssertSqlSafe, QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use super::memories::{COLUMNS, FROM_MEMORIES};
use crate::error::{Error, Result};
use crate::store::sql::rows;
use crate::store::transfer::rows::{LESSON_MISTAKE, LESSON_SUCCESS};
use crate::store::transfer::tables::{self, Table};
use crate::transfer::records::{
    AgentScopeRecord, HeuristicRecord, Kind, LearningStateRecord, LessonKind, LessonRecord,
    MemoryRevisionRecord, Record, RevisionAction, StepRecord, StepResult,
};

/// Where `kind`'s records are in SQLite: a memory's columns are those
/// [`rows::memory`] reads.
fn table(kind: Kind) -> Table {
    Table::of(kind, COLUMNS, FROM_MEMORIES)
}

/// Every namespace holding a record of any kind, in order.
pub(super) async fn namespaces(conn: &mut SqliteConnection) -> Result<Vec<String>> {
    QueryBuilder::<Sqlite>::new(tables::namespaces_sql(table))
        .build_query_scalar()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)
}

/// How many records of `kind` `namespace` holds.
pub(super) async fn count(conn: &mut SqliteConnection, namespace: &str, kind: Kind) -> Result<u64> {
    let table = table(kind);
    let mut qb = QueryBuilder::<Sqlite>::new(format!(
        "SELECT count(*) FROM {} WHERE {} = ",
        table.from, table.namespace
    ));
    qb.push_bind(namespace);
    let count: i64 = qb
        .build_query_scalar()
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// Every record of `kind` in `namespace`, in the order they were written,
/// read as the stream is polled.
pub(super) fn records<'a>(
    conn: &'a mut SqliteConnection,
    namespace: &str,
    kind: Kind,
) -> BoxStream<'a, Result<Record>> {
    let table = table(kind);
    let sql = format!(
        "SELECT {} FROM {} WHERE {} = ? ORDER BY {}",
        table.columns, table.from, table.namespace, table.order
    );
    sqlx::query(AssertSqlSafe(sql))
        .bind(namespace.to_owned())
        .fetch(conn)
        .map(move |row| row.map_err(db_error).and_then(|row| record(kind, &row)))
        .boxed()
}

/// The record stored under `record`'s key (whatever its namespace, for a
/// key without one), if any: the first written, should a key that no index
/// keeps unique (a memory revision's) be there twice.
pub(super) async fn find(conn: &mut SqliteConnection, record: &Record) -> Result<Option<Record>> {
    let kind = record.kind();
    let table = table(kind);
    let mut qb = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {} FROM {} WHERE ",
        table.columns, table.from
    ));
    tables::push_key(&mut qb, &table, record);
    qb.push(format!(" ORDER BY {} LIMIT 1", table.order));
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.map(|row| self::record(kind, &row)).transpose()
}

fn corrupt(kind: Kind, what: &str) -> Error {
    Error::Internal(format!("corrupt {} row: bad {what}", kind.name()))
}

/// A row of `kind`'s table as a record.
fn record(kind: Kind, row: &SqliteRow) -> Result<Record> {
    let text = |column: &str| row.try_get::<String, _>(column).map_err(db_error);
    let number = |column: &str| row.try_get::<i64, _>(column).map_err(db_error);
    Ok(match kind {
        Kind::Memory => Record::Memory(rows::memory::<SqliteConnection>(row)?.into()),
        Kind::MemoryRevision => {
            let revision = rows::revision::<SqliteConnection>(row)?;
            Record::MemoryRevision(MemoryRevisionRecord {
                namespace: text("namespace")?,
                memory_id: revision.memory_id,
                version: revision.version,
                action: RevisionAction::from_code(revision.action)
                    .ok_or_else(|| corrupt(kind, "action"))?,
                time: revision.time,
                key_id: revision.actor.key_id,
                agent_id: revision.actor.agent_id,
                changed_fields: revision.changed_fields,
            })
        }
        Kind::Episode => Record::Episode(rows::episode::<SqliteConnection>(row)?.into()),
        Kind::Step => Record::Step(StepRecord {
            namespace: text("namespace")?,
            episode_id: text("episode_id")?,
            step_number: row.try_get("step_number").map_err(db_error)?,
            tool: text("tool")?,
            action: text("action")?,
            parameters: text("parameters")?,
            result: StepResult::from_code(row.try_get("result").map_err(db_error)?)
                .ok_or_else(|| corrupt(kind, "result"))?,
            output: text("output")?,
            latency_ms: number("latency_ms")?,
            time: number("time")?,
        }),
        Kind::TaskRule => Record::TaskRule(rows::rule::<SqliteConnection>(row)?.into()),
        Kind::EpisodeLesson => Record::EpisodeLesson(LessonRecord {
            id: text("id")?,
            namespace: text("namespace")?,
            lesson_kind: match row.try_get::<i32, _>("kind").map_err(db_error)? {
                LESSON_MISTAKE => LessonKind::Mistake,
                LESSON_SUCCESS => LessonKind::Success,
                _ => return Err(corrupt(kind, "kind")),
            },
            text: text("text")?,
            seen_count: number("seen_count")?,
            last_seen: number("last_seen")?,
            create_time: number("create_time")?,
            update_time: number("update_time")?,
        }),
        Kind::MistakeCard => Record::MistakeCard(rows::card::<SqliteConnection>(row)?.into()),
        Kind::LearningState => Record::LearningState(LearningStateRecord {
            namespace: text("namespace")?,
            completed_episodes: number("completed_episodes")?,
            tick: number("tick")?,
            last_consolidation: row.try_get("last_consolidation").map_err(db_error)?,
        }),
        Kind::Outcome => Record::Outcome(rows::outcome::<SqliteConnection>(row)?.into()),
        Kind::Heuristic => Record::Heuristic(HeuristicRecord::new(
            rows::heuristic::<SqliteConnection>(row)?,
            text("match_key")?,
        )),
        Kind::AntiPattern => {
            Record::AntiPattern(rows::anti_pattern::<SqliteConnection>(row)?.into())
        }
        Kind::AgentScope => {
            let list = |column: &str| -> Result<Vec<String>> {
                serde_json::from_str(&text(column)?).map_err(|_| corrupt(kind, column))
            };
            Record::AgentScope(AgentScopeRecord {
                namespace: text("namespace")?,
                agent_id: text("agent_id")?,
                can_learn: list("can_learn")?,
                cannot_learn: list("cannot_learn")?,
                min_occurrences: number("min_occurrences")?,
                create_time: number("create_time")?,
                update_time: number("update_time")?,
                version: number("version")?,
            })
        }
    })
}
