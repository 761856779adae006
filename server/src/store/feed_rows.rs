//! What both backends read of the change feed for WatchMemories: the
//! statement (in either's dialect) and the decoding of its rows into
//! [`FeedEvent`]s. The schema is the same on both (SQLite's migration 0010,
//! PostgreSQL's 0002): each change names its namespace and memory, and a
//! removed memory leaves a tombstone.

use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::domain::{
    Actor, ChangeAction, FeedEvent, Memory, MemoryLevel, MemoryType, Scope, Subject, Tombstone,
};
use crate::error::{Error, Result};

/// `memory_changes.kind` of a deletion.
pub(crate) const DELETED: i32 = 4;

/// How a backend writes the parts of [`events_sql`] its dialect spells its
/// own way.
pub(crate) struct Dialect<'a> {
    /// The memory's columns (alias `m`, with `memory_access` as `a`), as
    /// the backend's memory decoder reads them.
    pub memory_columns: &'a str,
    /// The tombstone's tags as text (`t.tags` is JSON).
    pub tomb_tags: &'a str,
    /// The placeholders of the namespace, the position after which to read
    /// and the limit.
    pub params: [&'a str; 3],
}

/// Up to a limit of one namespace's changes after a position, in feed
/// order: one statement, so one snapshot, in which a change whose memory is
/// gone finds its tombstone (written by the transaction that removed it).
/// The memory is joined by sequence number *and* id, since SQLite may reuse
/// the number of a deleted memory. The history's record of the change is
/// the newest revision of that memory and version that removed it or not,
/// as the change did. Every column but the memory's has a name of its own,
/// so that the memory decoder reads the memory's. Changes that name no
/// memory (stored vectors, changes from before the feed named them) and
/// stored vectors are left out.
pub(crate) fn events_sql(dialect: &Dialect<'_>) -> String {
    let Dialect {
        memory_columns,
        tomb_tags,
        params: [namespace, after, limit],
    } = dialect;
    format!(
        "SELECT c.seq AS change_seq, c.memory_id AS change_memory_id, \
           c.version AS change_version, c.kind AS change_kind, \
           r.action AS revision_action, r.time AS revision_time, r.key_id AS revision_key_id, \
           r.agent_id AS revision_agent_id, r.changed AS revision_changed, \
           t.agent_id AS tomb_agent_id, t.user_id AS tomb_user_id, \
           t.project_id AS tomb_project_id, t.session_id AS tomb_session_id, \
           t.level AS tomb_level, t.memory_type AS tomb_memory_type, {tomb_tags} AS tomb_tags, \
           m.id IS NOT NULL AS stored, {memory_columns} \
         FROM memory_changes c \
         LEFT JOIN memories m ON m.seq = c.memory_seq AND m.id = c.memory_id \
         LEFT JOIN memory_access a ON a.memory_seq = m.seq \
         LEFT JOIN memory_tombstones t ON m.id IS NULL \
           AND t.namespace = c.namespace AND t.memory_id = c.memory_id \
         LEFT JOIN memory_revisions r ON r.seq = ( \
           SELECT v.seq FROM memory_revisions v \
           WHERE v.namespace = c.namespace AND v.memory_id = c.memory_id \
             AND v.version = c.version AND (v.action >= 4) = (c.kind = {DELETED}) \
           ORDER BY v.seq DESC LIMIT 1) \
         WHERE c.namespace = {namespace} AND c.namespace <> '' AND c.seq > {after} \
           AND c.kind <= {DELETED} \
         ORDER BY c.seq LIMIT {limit}"
    )
}

/// The namespaces with a change a watcher is shown (of a memory's fields,
/// naming its memory) numbered above the first placeholder and up to the
/// second: a walk of the feed's key over that range, whatever the number
/// of namespaces.
pub(crate) fn changed_namespaces_sql(params: [&str; 2]) -> String {
    let [after, upto] = params;
    format!(
        "SELECT DISTINCT namespace FROM memory_changes \
         WHERE seq > {after} AND seq <= {upto} AND namespace <> '' AND kind <= {DELETED}"
    )
}

/// A row of [`events_sql`] as a [`FeedEvent`] of `namespace`; `memory`
/// decodes the memory's columns, `db_error` the backend's errors.
pub(crate) fn event<R>(
    row: &R,
    namespace: &str,
    memory: impl FnOnce(&R) -> Result<Memory>,
    db_error: fn(sqlx::Error) -> Error,
) -> Result<FeedEvent>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i32: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> bool: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    let corrupt = |what: &str| Error::Internal(format!("corrupt change feed row: bad {what}"));
    let text = |column: &str| {
        row.try_get::<Option<String>, _>(column)
            .map_err(db_error)
            .map(Option::unwrap_or_default)
    };
    let kind: i32 = row.try_get("change_kind").map_err(db_error)?;
    let recorded: Option<i32> = row.try_get("revision_action").map_err(db_error)?;
    let action = match recorded {
        Some(code) => ChangeAction::from_code(code).ok_or_else(|| corrupt("revision action"))?,
        // No history of it (SQLite keeps none from before its migration
        // 0009): what the feed says, which cannot tell an expiry from a
        // delete.
        None => match kind {
            1 => ChangeAction::Created,
            2 => ChangeAction::Updated,
            3 => ChangeAction::Merged,
            DELETED => ChangeAction::Deleted,
            _ => return Err(corrupt("kind")),
        },
    };
    let subject = if row.try_get::<bool, _>("stored").map_err(db_error)? {
        Subject::Stored(Box::new(memory(row)?))
    } else {
        Subject::Removed(tombstone(row, namespace, db_error)?)
    };
    Ok(FeedEvent {
        seq: row.try_get("change_seq").map_err(db_error)?,
        memory_id: row.try_get("change_memory_id").map_err(db_error)?,
        action,
        version: row.try_get("change_version").map_err(db_error)?,
        time: row.try_get("revision_time").map_err(db_error)?,
        actor: Actor {
            key_id: text("revision_key_id")?,
            agent_id: text("revision_agent_id")?,
        },
        changed_fields: text("revision_changed")?
            .split(',')
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect(),
        subject,
    })
}

/// The tombstone of a removed memory, from the `tomb_*` columns.
fn tombstone<R>(row: &R, namespace: &str, db_error: fn(sqlx::Error) -> Error) -> Result<Tombstone>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> i32: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    let corrupt = |what: &str| Error::Internal(format!("corrupt tombstone: bad {what}"));
    let text = |column: &str| {
        row.try_get::<Option<String>, _>(column)
            .map_err(db_error)?
            .ok_or_else(|| corrupt("row: a removed memory has no tombstone"))
    };
    let code = |column: &str| {
        row.try_get::<Option<i32>, _>(column)
            .map_err(db_error)?
            .ok_or_else(|| corrupt(column))
    };
    Ok(Tombstone {
        scope: Scope {
            namespace: namespace.to_owned(),
            agent_id: text("tomb_agent_id")?,
            user_id: text("tomb_user_id")?,
            project_id: text("tomb_project_id")?,
            session_id: text("tomb_session_id")?,
        },
        level: MemoryLevel::from_code(code("tomb_level")?).ok_or_else(|| corrupt("level"))?,
        memory_type: MemoryType::from_code(code("tomb_memory_type")?)
            .ok_or_else(|| corrupt("memory_type"))?,
        tags: serde_json::from_str(&text("tomb_tags")?).map_err(|_| corrupt("tags"))?,
    })
}
