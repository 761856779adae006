//! SQLite's side of the SQL both databases share ([`crate::store::sql`]).

use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use crate::domain::{Memory, Micros};
use crate::error::Result;
use crate::store::sql::{self, Bind, Column, Dialect, Row, rows};
use crate::store::tx::{Identity, MemoryInsert};

/// A memory's columns, as [`rows::memory`] reads them.
const COLUMNS: &str = <SqliteConnection as Dialect>::MEMORY_COLUMNS;

/// The columns a create writes, in the order `insert_memories` binds them.
const INSERT: &str = "INSERT INTO memories (id, namespace, agent_id, user_id, project_id, session_id, level, \
     memory_type, content, content_hash, summary, tags, metadata, importance, confidence, source, create_time, \
     update_time, expire_time, occurred_at, valid_from, origin_session_id, actor_key, actor_agent) ";
/// The most rows of one multi-row upsert (24 parameters a row, well under
/// SQLite's limit of 32,766). A statement of each size is prepared once and
/// kept in the write connection's statement cache ([`super::WRITER_STATEMENTS`]).
pub(super) const MAX_UPSERT_ROWS: usize = 256;

/// The statement that reads the change feed's head: AUTOINCREMENT keeps the
/// highest number ever used, which is also the newest change's (numbers are
/// never reused). No row before the first change.
macro_rules! feed_head_sql {
    () => {
        "SELECT seq FROM sqlite_sequence WHERE name = 'memory_changes'"
    };
}
pub(super) use feed_head_sql;

/// The newest change's sequence number, 0 before any.
pub(super) async fn feed_head(conn: &mut SqliteConnection) -> Result<i64> {
    let head: Option<i64> = sqlx::query_scalar(feed_head_sql!())
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(head.unwrap_or(0))
}

impl Dialect for SqliteConnection {
    crate::store::sql::run_statements!(db_error);

    /// One writer: no other deleter to skip.
    const SKIP_LOCKED: &'static str = "";

    /// AUTOINCREMENT keeps the highest number ever used, which is also the
    /// newest change's (numbers are never reused).
    const FEED_HEAD: &'static str = feed_head_sql!();

    /// The file's pages, free ones included.
    const DATABASE_BYTES: &'static str =
        "SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()";

    const JSON_AS_TEXT: &'static str = "";

    const MEMORY_COLUMNS: &'static str = rows::memory_columns!("");

    const JSON_PARAM: &'static str = "";

    const LOCK_FOR_WRITE: &'static str = "";

    const MEMORIES_BY_SEQ: &'static str =
        "memories m NOT INDEXED LEFT JOIN memory_access a ON a.memory_seq = m.seq";

    const NOT_INDEXED: &'static str = " NOT INDEXED";

    const BEGIN_SNAPSHOT: &'static str = "BEGIN";

    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";

    const FIRST_PARAM: &'static str = "?";

    const TEXT_HOLDS_NUL: bool = true;

    fn push_in_seqs(query: &mut QueryBuilder<Sqlite>, column: &str, seqs: &[i64]) {
        query.push(format_args!("{column} IN ("));
        let mut list = query.separated(", ");
        for &seq in seqs {
            list.push_bind(seq);
        }
        query.push(")");
    }

    fn push_has_tag(query: &mut QueryBuilder<Sqlite>, column: &str, tag: &str) {
        query
            .push(format_args!(
                " AND EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = "
            ))
            .push_bind(tag.to_owned())
            .push(")");
    }

    fn push_has_entry(query: &mut QueryBuilder<Sqlite>, column: &str, key: &str, value: &str) {
        query
            .push(format_args!(
                " AND EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.key = "
            ))
            .push_bind(key.to_owned())
            .push(" AND json_each.value = ")
            .push_bind(value.to_owned())
            .push(")");
    }

    /// The one writer serialises every unit of work already.
    async fn lock(&mut self, _key: &str) -> Result<()> {
        Ok(())
    }

    /// One indexed lookup per identity; nothing to lock, the one writer
    /// holds the database.
    async fn identical_memories(
        &mut self,
        identities: &[Identity],
        _for_write: bool,
    ) -> Result<Vec<(Memory, String)>> {
        let mut found = Vec::new();
        for chunk in identities.chunks(MAX_UPSERT_ROWS) {
            let mut qb = QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM (VALUES "));
            let mut rows = qb.separated(", ");
            for identity in chunk {
                let scope = &identity.scope;
                rows.push("(")
                    .push_bind_unseparated(scope.namespace.clone())
                    .push_unseparated(", ")
                    .push_bind_unseparated(identity.level.code())
                    .push_unseparated(", ")
                    .push_bind_unseparated(scope.agent_id.clone())
                    .push_unseparated(", ")
                    .push_bind_unseparated(scope.user_id.clone())
                    .push_unseparated(", ")
                    .push_bind_unseparated(scope.project_id.clone())
                    .push_unseparated(", ")
                    .push_bind_unseparated(scope.session_id.clone())
                    .push_unseparated(", ")
                    .push_bind_unseparated(identity.memory_type.code())
                    .push_unseparated(", ")
                    .push_bind_unseparated(identity.content_hash.clone())
                    .push_unseparated(")");
            }
            qb.push(
                ") AS v JOIN memories m ON m.namespace = v.column1 AND m.level = v.column2 \
                 AND m.agent_id = v.column3 AND m.user_id = v.column4 AND m.project_id = v.column5 \
                 AND m.session_id = v.column6 AND m.memory_type = v.column7 AND m.content_hash = v.column8 \
                 LEFT JOIN memory_access a ON a.memory_seq = m.seq",
            );
            let rows = qb.build().fetch_all(&mut *self).await.map_err(db_error)?;
            for row in &rows {
                let hash: String = row.try_get("content_hash").map_err(db_error)?;
                found.push((rows::memory::<SqliteConnection>(row)?, hash));
            }
        }
        Ok(found)
    }

    /// Multi-row inserts of at most [`MAX_UPSERT_ROWS`] rows each.
    async fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        let mut stored = Vec::with_capacity(inserts.len());
        for chunk in inserts.chunks(MAX_UPSERT_ROWS) {
            let mut qb = QueryBuilder::<Sqlite>::new(INSERT);
            qb.push_values(chunk, |mut row, insert| {
                let new = &insert.new;
                row.push_bind(insert.id.as_str())
                    .push_bind(new.scope.namespace.as_str())
                    .push_bind(new.scope.agent_id.as_str())
                    .push_bind(new.scope.user_id.as_str())
                    .push_bind(new.scope.project_id.as_str())
                    .push_bind(new.scope.session_id.as_str())
                    .push_bind(new.level.code())
                    .push_bind(new.memory_type.code())
                    .push_bind(new.content.as_str())
                    .push_bind(insert.content_hash.as_str())
                    .push_bind(new.summary.as_str())
                    .push_bind(sql::memories::json(&new.tags))
                    .push_bind(sql::memories::json(&new.metadata))
                    .push_bind(new.importance)
                    .push_bind(new.confidence)
                    .push_bind(new.source.code())
                    .push_bind(now)
                    .push_bind(now)
                    .push_bind(new.expire_time)
                    .push_bind(new.occurred_at.unwrap_or(now))
                    .push_bind(new.occurred_at.unwrap_or(now))
                    .push_bind(new.origin_session_id.as_str())
                    .push_bind(new.actor.key_id.as_str())
                    .push_bind(new.actor.agent_id.as_str());
            });
            qb.push(" RETURNING seq, id");
            let rows = qb.build().fetch_all(&mut *self).await.map_err(db_error)?;
            let returned = rows
                .iter()
                .map(|row| Ok((row.try_get("id")?, row.try_get("seq")?)))
                .collect::<sqlx::Result<_>>()
                .map_err(db_error)?;
            stored.extend(sql::memories::inserted(chunk, returned, now)?);
        }
        Ok(stored)
    }

    fn push_value<T: Bind>(query: &mut QueryBuilder<Sqlite>, value: T) {
        value.bind_sqlite(query);
    }

    fn value<T: Column>(row: &Row<Self>, column: &str) -> sqlx::Result<T> {
        T::get_sqlite(row, column)
    }
}
