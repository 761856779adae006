//! PostgreSQL's side of the SQL both databases share ([`crate::store::sql`]).

use sqlx::{PgConnection, Postgres, QueryBuilder, Row as _};

use super::db_error;
use crate::domain::{Memory, Micros};
use crate::error::Result;
use crate::store::sql::{self, Bind, Column, Dialect, Row, rows};
use crate::store::tx::{Identity, MemoryInsert};

/// A memory's columns, as [`rows::memory`] reads them.
const MEMORY_COLUMNS: &str = <PgConnection as Dialect>::MEMORY_COLUMNS;

impl Dialect for PgConnection {
    crate::store::sql::run_statements!(db_error);

    /// Rows another replica's Forget or purge holds are left to it.
    const SKIP_LOCKED: &'static str = " FOR UPDATE SKIP LOCKED";

    /// The newest number visible: numbers become visible in the order they
    /// were given (see `feed.rs`), never the identity's sequence, which
    /// runs ahead of what is committed.
    const FEED_HEAD: &'static str = "SELECT max(seq) FROM memory_changes";

    /// Tables, indexes and TOAST, as PostgreSQL counts them.
    const DATABASE_BYTES: &'static str = "SELECT pg_database_size(current_database()) AS bytes";

    const JSON_AS_TEXT: &'static str = "::text";

    const MEMORY_COLUMNS: &'static str = rows::memory_columns!("::text");

    const JSON_PARAM: &'static str = "::jsonb";

    /// The rows are locked until the transaction ends, and a row another
    /// transaction is writing is read as that one commits it (READ
    /// COMMITTED reads the newest version of a row it waited for). So two
    /// replicas reinforcing, updating or deleting one memory take turns,
    /// and the second decides on what the first wrote (no lost sighting, a
    /// stale etag seen as stale).
    const LOCK_FOR_WRITE: &'static str = " FOR UPDATE OF m";

    const MEMORIES_BY_SEQ: &'static str = rows::FROM_MEMORIES;

    const NOT_INDEXED: &'static str = "";

    const BEGIN_SNAPSHOT: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

    const BEGIN_WRITE: &'static str = "BEGIN";

    const FIRST_PARAM: &'static str = "$1";

    const TEXT_HOLDS_NUL: bool = false;

    fn push_in_seqs(query: &mut QueryBuilder<Postgres>, column: &str, seqs: &[i64]) {
        query
            .push(format_args!("{column} = ANY("))
            .push_bind(seqs.to_vec())
            .push(")");
    }

    fn push_has_tag(query: &mut QueryBuilder<Postgres>, column: &str, tag: &str) {
        query
            .push(format_args!(" AND {column} @> jsonb_build_array("))
            .push_bind(tag.to_owned())
            .push("::text)");
    }

    fn push_has_entry(query: &mut QueryBuilder<Postgres>, column: &str, key: &str, value: &str) {
        query
            .push(format_args!(" AND {column} @> jsonb_build_object("))
            .push_bind(key.to_owned())
            .push("::text, ")
            .push_bind(value.to_owned())
            .push("::text)");
    }

    /// A transaction-scoped advisory lock on the key's hash (see
    /// [`super::tx::lock_key`]).
    async fn lock(&mut self, key: &str) -> Result<()> {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(super::tx::lock_key(key))
            .execute(self)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    /// One statement whatever their number (the identities go as arrays,
    /// so it is prepared once), each an indexed lookup. Locked when
    /// `for_write`: a unit of work reads them to reinforce one, or to check
    /// that an update makes no twin.
    async fn identical_memories(
        &mut self,
        identities: &[Identity],
        for_write: bool,
    ) -> Result<Vec<(Memory, String)>> {
        if identities.is_empty() {
            return Ok(Vec::new());
        }
        let column = |f: fn(&Identity) -> String| identities.iter().map(f).collect::<Vec<_>>();
        let code = |f: fn(&Identity) -> i32| identities.iter().map(f).collect::<Vec<_>>();
        let lock = if for_write {
            <PgConnection as Dialect>::LOCK_FOR_WRITE
        } else {
            ""
        };
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {MEMORY_COLUMNS} FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], \
             $5::text[], $6::text[], $7::int[], $8::text[]) \
             AS v(namespace, level, agent_id, user_id, project_id, session_id, memory_type, content_hash) \
             JOIN memories m ON m.namespace = v.namespace AND m.level = v.level \
             AND m.agent_id = v.agent_id AND m.user_id = v.user_id AND m.project_id = v.project_id \
             AND m.session_id = v.session_id AND m.memory_type = v.memory_type \
             AND m.content_hash = v.content_hash \
             LEFT JOIN memory_access a ON a.memory_seq = m.seq ORDER BY m.seq{lock}"
        )))
        .bind(column(|i| i.scope.namespace.clone()))
        .bind(code(|i| i.level.code()))
        .bind(column(|i| i.scope.agent_id.clone()))
        .bind(column(|i| i.scope.user_id.clone()))
        .bind(column(|i| i.scope.project_id.clone()))
        .bind(column(|i| i.scope.session_id.clone()))
        .bind(code(|i| i.memory_type.code()))
        .bind(column(|i| i.content_hash.clone()))
        .fetch_all(&mut *self)
        .await
        .map_err(db_error)?;
        rows.iter()
            .map(|row| {
                let hash: String = row.try_get("content_hash").map_err(db_error)?;
                Ok((rows::memory::<PgConnection>(row)?, hash))
            })
            .collect()
    }

    /// One statement, the rows as arrays. Another transaction's insert of
    /// one of these identities makes it fail with a unique violation, and
    /// the unit of work runs again and finds it.
    async fn insert_memories(
        &mut self,
        inserts: &[MemoryInsert],
        now: Micros,
    ) -> Result<Vec<Memory>> {
        if inserts.is_empty() {
            return Ok(Vec::new());
        }
        let text = |f: fn(&MemoryInsert) -> &str| {
            inserts
                .iter()
                .map(|i| f(i).to_owned())
                .collect::<Vec<String>>()
        };
        let code = |f: fn(&MemoryInsert) -> i32| inserts.iter().map(f).collect::<Vec<i32>>();
        let float = |f: fn(&MemoryInsert) -> f64| inserts.iter().map(f).collect::<Vec<f64>>();
        let tags: Vec<String> = inserts
            .iter()
            .map(|i| sql::memories::json(&i.new.tags))
            .collect();
        let metadata: Vec<String> = inserts
            .iter()
            .map(|i| sql::memories::json(&i.new.metadata))
            .collect();
        let expire: Vec<Option<i64>> = inserts.iter().map(|i| i.new.expire_time).collect();
        let occurred: Vec<i64> = inserts
            .iter()
            .map(|i| i.new.occurred_at.unwrap_or(now))
            .collect();
        let rows = sqlx::query(
            "INSERT INTO memories (id, namespace, agent_id, user_id, project_id, session_id, level, \
             memory_type, content, content_hash, summary, tags, metadata, importance, confidence, source, \
             create_time, update_time, expire_time, occurred_at, valid_from, origin_session_id, actor_key, \
             actor_agent) \
             SELECT id, namespace, agent_id, user_id, project_id, session_id, level, memory_type, content, \
             content_hash, summary, tags::jsonb, metadata::jsonb, importance, confidence, source, $21, $21, \
             expire_time, occurred_at, occurred_at, origin_session_id, actor_key, actor_agent \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::int[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], \
             $14::float8[], $15::float8[], $16::int[], $17::bigint[], $18::bigint[], $19::text[], \
             $20::text[], $22::text[]) \
             AS v(id, namespace, agent_id, user_id, project_id, session_id, level, memory_type, content, \
             content_hash, summary, tags, metadata, importance, confidence, source, expire_time, \
             occurred_at, origin_session_id, actor_key, actor_agent) \
             RETURNING seq, id",
        )
        .bind(text(|i| &i.id))
        .bind(text(|i| &i.new.scope.namespace))
        .bind(text(|i| &i.new.scope.agent_id))
        .bind(text(|i| &i.new.scope.user_id))
        .bind(text(|i| &i.new.scope.project_id))
        .bind(text(|i| &i.new.scope.session_id))
        .bind(code(|i| i.new.level.code()))
        .bind(code(|i| i.new.memory_type.code()))
        .bind(text(|i| &i.new.content))
        .bind(text(|i| &i.content_hash))
        .bind(text(|i| &i.new.summary))
        .bind(tags)
        .bind(metadata)
        .bind(float(|i| i.new.importance))
        .bind(float(|i| i.new.confidence))
        .bind(code(|i| i.new.source.code()))
        .bind(expire)
        .bind(occurred)
        .bind(text(|i| &i.new.origin_session_id))
        .bind(text(|i| &i.new.actor.key_id))
        .bind(now)
        .bind(text(|i| &i.new.actor.agent_id))
        .fetch_all(&mut *self)
        .await
        .map_err(db_error)?;
        let returned = rows
            .iter()
            .map(|row| Ok((row.try_get("id")?, row.try_get("seq")?)))
            .collect::<sqlx::Result<_>>()
            .map_err(db_error)?;
        sql::memories::inserted(inserts, returned, now)
    }

    fn push_value<T: Bind>(query: &mut QueryBuilder<Postgres>, value: T) {
        value.bind_postgres(query);
    }

    fn value<T: Column>(row: &Row<Self>, column: &str) -> sqlx::Result<T> {
        T::get_postgres(row, column)
    }
}
