//! SQL for memories: visibility, filters, keyset paging, the create-or-merge
//! of DESIGN §3, and reading the change feed that search indexes follow.

use std::collections::{HashMap, HashSet};

use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row as _, Sqlite, SqliteConnection};

use super::db_error;
use super::requests;
use crate::domain::{
    Actor, Created, ListQuery, Memory, MemoryChange, MemoryFilter, MemoryLevel, MemoryOrder,
    MemoryPatch, MemorySource, MemoryType, Micros, Neighbours, NewMemory, RequestKey, Revision,
    Scope, TimeRange, WriteResult,
};
use crate::engine::dedup::content_hash;
use crate::engine::policy::Decision;
use crate::error::{Error, Result};
use crate::store::Remembered;

/// Rows are decoded by column name, so every memory column can be selected
/// as `m.*` (the content hash comes along and is ignored); the access
/// bookkeeping comes from its own table ([`FROM_MEMORIES`]).
pub(super) const COLUMNS: &str =
    "m.*, coalesce(a.access_count, 0) AS access_count, a.last_access_time AS last_access_time";
/// Memories with their access bookkeeping, for [`COLUMNS`].
pub(super) const FROM_MEMORIES: &str =
    "memories m LEFT JOIN memory_access a ON a.memory_seq = m.seq";

/// Selects the memories with these sequence numbers (conditions may be
/// appended). NOT INDEXED: they are looked up by rowid, never by walking a
/// namespace's index, which a visibility rule would otherwise invite.
fn select_by_seq(seqs: &[i64]) -> QueryBuilder<Sqlite> {
    let mut qb = QueryBuilder::new(format!(
        "SELECT {COLUMNS} FROM memories m NOT INDEXED \
         LEFT JOIN memory_access a ON a.memory_seq = m.seq WHERE m.seq IN "
    ));
    push_list(&mut qb, seqs);
    qb
}

/// Appends `(?, ?, …)` binding `seqs`.
pub(super) fn push_list(qb: &mut QueryBuilder<Sqlite>, seqs: &[i64]) {
    qb.push("(");
    let mut list = qb.separated(", ");
    for &seq in seqs {
        list.push_bind(seq);
    }
    qb.push(")");
}

fn select_from_memories() -> QueryBuilder<Sqlite> {
    QueryBuilder::new(format!("SELECT {COLUMNS} FROM {FROM_MEMORIES} WHERE "))
}

/// Appends the visibility rule of DESIGN §3 for `scope`, and hides expired rows.
pub(super) fn push_visible(qb: &mut QueryBuilder<Sqlite>, scope: &Scope, now: Micros) {
    push_in_scope(qb, scope);
    qb.push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .push_bind(now)
        .push(")");
}

/// Appends the visibility rule of DESIGN §3 for `scope`, expired rows included.
pub(super) fn push_in_scope(qb: &mut QueryBuilder<Sqlite>, scope: &Scope) {
    qb.push("m.namespace = ")
        .push_bind(scope.namespace.clone())
        .push(" AND (m.level = ")
        .push_bind(MemoryLevel::Global.code())
        .push(" OR (m.level = ")
        .push_bind(MemoryLevel::Workspace.code())
        .push(" AND m.project_id = ")
        .push_bind(scope.project_id.clone())
        .push(" AND m.project_id <> '') OR (m.level = ")
        .push_bind(MemoryLevel::Conversation.code())
        .push(" AND m.session_id = ")
        .push_bind(scope.session_id.clone())
        .push(" AND m.session_id <> ''))");
    if !scope.agent_id.is_empty() {
        qb.push(" AND m.agent_id IN ('', ")
            .push_bind(scope.agent_id.clone())
            .push(")");
    }
    if !scope.user_id.is_empty() {
        qb.push(" AND m.user_id IN ('', ")
            .push_bind(scope.user_id.clone())
            .push(")");
    }
}

fn push_filter(qb: &mut QueryBuilder<Sqlite>, filter: &MemoryFilter) {
    push_in(
        qb,
        "m.memory_type",
        filter.memory_types.iter().map(|t| t.code()),
    );
    push_in(qb, "m.level", filter.levels.iter().map(|l| l.code()));
    for tag in &filter.tags {
        qb.push(" AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ")
            .push_bind(tag.clone())
            .push(")");
    }
    if filter.min_importance > 0.0 {
        qb.push(" AND m.importance >= ")
            .push_bind(filter.min_importance);
    }
    push_range(qb, "m.create_time", filter.created);
    push_range(qb, "m.occurred_at", filter.occurred);
    for (key, value) in &filter.metadata {
        qb.push(" AND EXISTS (SELECT 1 FROM json_each(m.metadata) WHERE json_each.key = ")
            .push_bind(key.clone())
            .push(" AND json_each.value = ")
            .push_bind(value.clone())
            .push(")");
    }
}

/// Appends the conditions that `column` is in `range`.
fn push_range(qb: &mut QueryBuilder<Sqlite>, column: &str, range: TimeRange) {
    if let Some(after) = range.after {
        qb.push(format!(" AND {column} >= ")).push_bind(after);
    }
    if let Some(before) = range.before {
        qb.push(format!(" AND {column} < ")).push_bind(before);
    }
}

/// Appends `column IN (codes)`. The codes are the server's own enum
/// numbers, written as literals so that the planner sees them: a single one
/// becomes `column = code`, which lets SQLite use a partial index for that
/// value (preferences have one).
fn push_in(qb: &mut QueryBuilder<Sqlite>, column: &str, codes: impl ExactSizeIterator<Item = i32>) {
    let codes: Vec<String> = codes.map(|code| code.to_string()).collect();
    match codes.as_slice() {
        [] => {}
        [code] => {
            qb.push(format!(" AND {column} = {code}"));
        }
        many => {
            qb.push(format!(" AND {column} IN ({})", many.join(", ")));
        }
    }
}

pub(super) fn memory_from_row(row: &SqliteRow) -> Result<Memory> {
    let enum_value =
        |column: &str| -> Result<i32> { row.try_get::<i32, _>(column).map_err(db_error) };
    let text =
        |column: &str| -> Result<String> { row.try_get::<String, _>(column).map_err(db_error) };
    let corrupt = |what: &str| Error::Internal(format!("corrupt memory row: bad {what}"));
    Ok(Memory {
        seq: row.try_get("seq").map_err(db_error)?,
        id: text("id")?,
        scope: Scope {
            namespace: text("namespace")?,
            agent_id: text("agent_id")?,
            user_id: text("user_id")?,
            project_id: text("project_id")?,
            session_id: text("session_id")?,
        },
        level: MemoryLevel::from_code(enum_value("level")?).ok_or_else(|| corrupt("level"))?,
        memory_type: MemoryType::from_code(enum_value("memory_type")?)
            .ok_or_else(|| corrupt("memory_type"))?,
        content: text("content")?,
        summary: text("summary")?,
        tags: serde_json::from_str(&text("tags")?).map_err(|_| corrupt("tags"))?,
        metadata: serde_json::from_str(&text("metadata")?).map_err(|_| corrupt("metadata"))?,
        importance: row.try_get("importance").map_err(db_error)?,
        confidence: row.try_get("confidence").map_err(db_error)?,
        source: MemorySource::from_code(enum_value("source")?).ok_or_else(|| corrupt("source"))?,
        seen_count: row.try_get("seen_count").map_err(db_error)?,
        access_count: row.try_get("access_count").map_err(db_error)?,
        create_time: row.try_get("create_time").map_err(db_error)?,
        update_time: row.try_get("update_time").map_err(db_error)?,
        last_access_time: row.try_get("last_access_time").map_err(db_error)?,
        expire_time: row.try_get("expire_time").map_err(db_error)?,
        occurred_at: row.try_get("occurred_at").map_err(db_error)?,
        origin_session_id: text("origin_session_id")?,
        version: row.try_get("version").map_err(db_error)?,
    })
}

fn json<T: serde::Serialize>(value: &T) -> String {
    // Serialising a Vec<String> or a map of strings cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

/// The memory `id` if it is visible from `scope`.
pub(super) async fn get(
    conn: &mut SqliteConnection,
    scope: &Scope,
    id: &str,
    now: Micros,
) -> Result<Option<Memory>> {
    let mut qb = select_from_memories();
    push_visible(&mut qb, scope, now);
    qb.push(" AND m.id = ").push_bind(id.to_owned());
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.as_ref().map(memory_from_row).transpose()
}

/// The memory `id` unless it has expired, whatever its scope (the caller
/// has established that the scope may see it).
async fn get_unexpired(
    conn: &mut SqliteConnection,
    id: &str,
    now: Micros,
) -> Result<Option<Memory>> {
    let mut qb = select_from_memories();
    qb.push("m.id = ")
        .push_bind(id.to_owned())
        .push(" AND (m.expire_time IS NULL OR m.expire_time > ")
        .push_bind(now)
        .push(")");
    let row = qb
        .build()
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    row.as_ref().map(memory_from_row).transpose()
}

/// Stores `new` (merging identical memories), honouring the request id.
pub(super) async fn create(
    conn: &mut SqliteConnection,
    namespace: String,
    request: Option<RequestKey>,
    new: Vec<Prepared>,
    now: Micros,
) -> Result<Vec<Created>> {
    if let Some(request) = &request
        && let Some(first) = requests::replay(conn, &namespace, request).await?
    {
        return reload(conn, &request.id, &first, now).await;
    }
    let created = create_many(conn, &new, now).await?;
    if let Some(request) = &request {
        let results: Vec<(&str, i32)> = created
            .iter()
            .map(|c| (c.memory.id.as_str(), c.result as i32))
            .collect();
        requests::remember(conn, &namespace, request, &json(&results), now).await?;
    }
    Ok(created)
}

/// The memories a first create returned (`results`: its ids and write
/// results), as they are now.
async fn reload(
    conn: &mut SqliteConnection,
    request_id: &str,
    results: &str,
    now: Micros,
) -> Result<Vec<Created>> {
    let results: Vec<(String, i32)> = serde_json::from_str(results)
        .map_err(|_| Error::Internal("corrupt create_requests row".into()))?;
    let mut first = Vec::with_capacity(results.len());
    for (id, result) in results {
        let memory = get_unexpired(conn, &id, now).await?.ok_or_else(|| {
            Error::FailedPrecondition(format!(
                "request_id {request_id} was already used for memory {id}, which has since been deleted or has expired"
            ))
        })?;
        let result = if result == WriteResult::Merged as i32 {
            WriteResult::Merged
        } else {
            WriteResult::Created
        };
        first.push(Created { memory, result });
    }
    Ok(first)
}

/// What a Remember remembers under its request id.
#[derive(serde::Serialize, serde::Deserialize)]
struct RememberAnswer {
    decision: Decision,
    /// The stored memory's id and write result number.
    memory: Option<(String, i32)>,
}

/// The first answer of a Remember with this request id, if it ran.
pub(super) async fn replay_remember(
    conn: &mut SqliteConnection,
    namespace: &str,
    request: &RequestKey,
    now: Micros,
) -> Result<Option<Remembered>> {
    let Some(first) = requests::replay(conn, namespace, request).await? else {
        return Ok(None);
    };
    let answer: RememberAnswer = serde_json::from_str(&first)
        .map_err(|_| Error::Internal("corrupt create_requests row".into()))?;
    let created = match answer.memory {
        Some((id, result)) => reload(conn, &request.id, &json(&[(id, result)]), now)
            .await?
            .into_iter()
            .next(),
        None => None,
    };
    Ok(Some(Remembered {
        decision: answer.decision,
        created,
    }))
}

/// Stores a Remember's memory and remembers its answer, in one transaction.
pub(super) async fn remember(
    conn: &mut SqliteConnection,
    namespace: String,
    request: Option<RequestKey>,
    decision: Decision,
    memory: Option<NewMemory>,
    now: Micros,
) -> Result<Remembered> {
    if let Some(request) = &request
        && let Some(first) = replay_remember(conn, &namespace, request, now).await?
    {
        return Ok(first);
    }
    let created = match memory {
        Some(memory) => Some(create_one(conn, &Prepared::new(memory), now).await?),
        None => None,
    };
    if let Some(request) = &request {
        let answer = RememberAnswer {
            decision: decision.clone(),
            memory: created
                .as_ref()
                .map(|c| (c.memory.id.clone(), c.result as i32)),
        };
        let answer = serde_json::to_string(&answer)
            .map_err(|e| Error::Internal(format!("remember: {e}")))?;
        requests::remember(conn, &namespace, request, &answer, now).await?;
    }
    Ok(Remembered { decision, created })
}

/// The columns a create writes, in the order [`upsert`] binds them.
const INSERT: &str = "INSERT INTO memories (id, namespace, agent_id, user_id, project_id, session_id, level, \
     memory_type, content, content_hash, summary, tags, metadata, importance, confidence, source, create_time, \
     update_time, expire_time, occurred_at, origin_session_id, actor_key, actor_agent) ";
/// An identical memory is reinforced instead (DESIGN §3). An expired twin is
/// not (as far as anyone can see, it is gone): no row comes back for it.
/// What comes back is what the insert did not know: the rest of an inserted
/// memory is what was given.
const MERGE: &str = " ON CONFLICT (namespace, level, agent_id, user_id, project_id, session_id, memory_type, content_hash) \
     DO UPDATE SET seen_count = seen_count + 1, update_time = excluded.update_time, \
     actor_key = excluded.actor_key, actor_agent = excluded.actor_agent, \
     importance = max(importance, excluded.importance), version = version + 1, \
     occurred_at = max(occurred_at, excluded.occurred_at), \
     expire_time = CASE WHEN expire_time IS NULL OR excluded.expire_time IS NULL THEN NULL \
                        ELSE max(expire_time, excluded.expire_time) END \
     WHERE expire_time IS NULL OR expire_time > excluded.update_time \
     RETURNING seq, id, importance, seen_count, create_time, update_time, expire_time, occurred_at, origin_session_id, version";
/// The most rows of one multi-row upsert (23 parameters a row, well under
/// SQLite's limit of 32,766). A statement of each size is prepared once and
/// kept in the write connection's statement cache ([`super::WRITER_STATEMENTS`]).
pub(super) const MAX_UPSERT_ROWS: usize = 256;

/// A memory ready to be inserted: its new id and what derives from its
/// content, computed by the caller so that the single writer only writes.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    id: String,
    hash: String,
    tags: String,
    metadata: String,
    new: NewMemory,
}

impl Prepared {
    pub(super) fn new(new: NewMemory) -> Prepared {
        Prepared {
            id: uuid::Uuid::now_v7().to_string(),
            hash: content_hash(&new.content),
            tags: json(&new.tags),
            metadata: json(&new.metadata),
            new,
        }
    }

    fn identity(&self) -> Identity {
        identity(
            &self.new.scope,
            self.new.level,
            self.new.memory_type,
            &self.hash,
        )
    }

    /// The memory this insert stored, given what the database returned.
    fn stored(&self, row: &SqliteRow) -> Result<Memory> {
        let new = &self.new;
        Ok(Memory {
            seq: row.try_get("seq").map_err(db_error)?,
            id: self.id.clone(),
            scope: new.scope.clone(),
            level: new.level,
            memory_type: new.memory_type,
            content: new.content.clone(),
            summary: new.summary.clone(),
            tags: new.tags.clone(),
            metadata: new.metadata.clone(),
            importance: row.try_get("importance").map_err(db_error)?,
            confidence: new.confidence,
            source: new.source,
            seen_count: row.try_get("seen_count").map_err(db_error)?,
            access_count: 0,
            create_time: row.try_get("create_time").map_err(db_error)?,
            update_time: row.try_get("update_time").map_err(db_error)?,
            last_access_time: None,
            expire_time: row.try_get("expire_time").map_err(db_error)?,
            occurred_at: row.try_get("occurred_at").map_err(db_error)?,
            origin_session_id: row.try_get("origin_session_id").map_err(db_error)?,
            version: row.try_get("version").map_err(db_error)?,
        })
    }
}

/// What makes memories identical: the merge key of DESIGN §3.
type Identity = (Scope, MemoryLevel, MemoryType, String);

fn identity(scope: &Scope, level: MemoryLevel, memory_type: MemoryType, hash: &str) -> Identity {
    (scope.clone(), level, memory_type, hash.to_owned())
}

/// Inserts or reinforces each of `inserts` in one statement; returns a row
/// for each, except those an expired twin blocks.
async fn upsert(
    conn: &mut SqliteConnection,
    inserts: &[Prepared],
    now: Micros,
) -> Result<Vec<SqliteRow>> {
    let mut qb = QueryBuilder::<Sqlite>::new(INSERT);
    qb.push_values(inserts, |mut row, insert| {
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
            .push_bind(insert.hash.as_str())
            .push_bind(new.summary.as_str())
            .push_bind(insert.tags.as_str())
            .push_bind(insert.metadata.as_str())
            .push_bind(new.importance)
            .push_bind(new.confidence)
            .push_bind(new.source.code())
            .push_bind(now)
            .push_bind(now)
            .push_bind(new.expire_time)
            .push_bind(new.occurred_at.unwrap_or(now))
            .push_bind(new.origin_session_id.as_str())
            .push_bind(new.actor.key_id.as_str())
            .push_bind(new.actor.agent_id.as_str());
    });
    qb.push(MERGE);
    qb.build().fetch_all(&mut *conn).await.map_err(db_error)
}

/// Stores `inserts`, merging each into an identical memory when there is
/// one, in as few statements as it can; results in the order given.
pub(super) async fn create_many(
    conn: &mut SqliteConnection,
    inserts: &[Prepared],
    now: Micros,
) -> Result<Vec<Created>> {
    let mut seen = HashSet::new();
    if !inserts.iter().all(|insert| seen.insert(insert.identity())) {
        // Memories of the batch merge into each other, in order: one at a time.
        let mut created = Vec::with_capacity(inserts.len());
        for insert in inserts {
            created.push(create_one(conn, insert, now).await?);
        }
        return Ok(created);
    }
    let by_id: HashMap<&str, usize> = inserts
        .iter()
        .enumerate()
        .map(|(i, insert)| (insert.id.as_str(), i))
        .collect();
    let mut results: Vec<Option<Created>> = vec![None; inserts.len()];
    let mut merged = Vec::new();
    for chunk in inserts.chunks(MAX_UPSERT_ROWS) {
        for row in upsert(conn, chunk, now).await? {
            let id: String = row.try_get("id").map_err(db_error)?;
            match by_id.get(id.as_str()) {
                Some(&at) => {
                    results[at] = Some(Created {
                        memory: inserts[at].stored(&row)?,
                        result: WriteResult::Created,
                    });
                }
                None => merged.push(row.try_get::<i64, _>("seq").map_err(db_error)?),
            }
        }
    }
    if !merged.is_empty() {
        // Reinforced memories keep their own content, tags and the rest.
        let by_identity: HashMap<Identity, usize> = inserts
            .iter()
            .enumerate()
            .map(|(i, insert)| (insert.identity(), i))
            .collect();
        for (memory, hash) in by_seq_with_hash(conn, &merged).await? {
            let key = identity(&memory.scope, memory.level, memory.memory_type, &hash);
            let at = by_identity.get(&key).copied().ok_or_else(|| {
                Error::Internal("a merged memory matches none of the batch".into())
            })?;
            results[at] = Some(Created {
                memory,
                result: WriteResult::Merged,
            });
        }
    }
    let mut created = Vec::with_capacity(inserts.len());
    for (slot, insert) in results.into_iter().zip(inserts) {
        created.push(match slot {
            Some(done) => done,
            // An expired twin blocked it.
            None => create_one(conn, insert, now).await?,
        });
    }
    Ok(created)
}

/// The memories with these sequence numbers, whatever their scope, with
/// their content hashes.
async fn by_seq_with_hash(
    conn: &mut SqliteConnection,
    seqs: &[i64],
) -> Result<Vec<(Memory, String)>> {
    let rows = select_by_seq(seqs)
        .build()
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let hash: String = row.try_get("content_hash").map_err(db_error)?;
            Ok((memory_from_row(row)?, hash))
        })
        .collect()
}

/// Inserts `insert`, or reinforces the identical memory.
async fn create_one(
    conn: &mut SqliteConnection,
    insert: &Prepared,
    now: Micros,
) -> Result<Created> {
    let new = &insert.new;
    // The first attempt finds no row only when an expired twin blocks the
    // insert. It is then deleted and the insert made again.
    for _ in 0..2 {
        if let Some(row) = upsert(conn, std::slice::from_ref(insert), now)
            .await?
            .first()
        {
            let id: String = row.try_get("id").map_err(db_error)?;
            if id == insert.id {
                return Ok(Created {
                    memory: insert.stored(row)?,
                    result: WriteResult::Created,
                });
            }
            let seq: i64 = row.try_get("seq").map_err(db_error)?;
            let (memory, _) = by_seq_with_hash(conn, &[seq])
                .await?
                .pop()
                .ok_or_else(|| Error::Internal("a merged memory vanished".into()))?;
            return Ok(Created {
                memory,
                result: WriteResult::Merged,
            });
        }
        delete_expired_twin(
            conn,
            &new.scope,
            new.level,
            new.memory_type,
            &insert.hash,
            now,
        )
        .await?;
    }
    Err(Error::Internal(
        "an expired duplicate could not be replaced".into(),
    ))
}

/// Deletes the expired memory with this identity, if there is one: it is
/// gone as far as anyone can see, so it must not block a live twin.
async fn delete_expired_twin(
    conn: &mut SqliteConnection,
    scope: &Scope,
    level: MemoryLevel,
    memory_type: MemoryType,
    hash: &str,
    now: Micros,
) -> Result<()> {
    sqlx::query(
        "DELETE FROM memories WHERE namespace = ? AND level = ? AND agent_id = ? AND user_id = ? \
         AND project_id = ? AND session_id = ? AND memory_type = ? AND content_hash = ? AND expire_time <= ?",
    )
    .bind(&scope.namespace)
    .bind(level.code())
    .bind(&scope.agent_id)
    .bind(&scope.user_id)
    .bind(&scope.project_id)
    .bind(&scope.session_id)
    .bind(memory_type.code())
    .bind(hash)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// The memory `id` visible from `scope`, checked against `etag` when given.
async fn get_for_write(
    conn: &mut SqliteConnection,
    scope: &Scope,
    id: &str,
    etag: Option<&str>,
    now: Micros,
) -> Result<Memory> {
    let memory = get(conn, scope, id, now)
        .await?
        .ok_or_else(|| Error::NotFound(format!("memory {id} not found")))?;
    match etag {
        Some(etag) if etag != memory.etag() => Err(Error::Aborted(format!(
            "memory {id} has changed: etag {etag} is stale (current {}); read it again and retry",
            memory.etag()
        ))),
        _ => Ok(memory),
    }
}

pub(super) async fn update(
    conn: &mut SqliteConnection,
    scope: Scope,
    id: String,
    patch: MemoryPatch,
    etag: Option<String>,
    actor: Actor,
    now: Micros,
) -> Result<Memory> {
    let mut memory = get_for_write(conn, &scope, &id, etag.as_deref(), now).await?;
    apply_patch(&mut memory, patch);
    memory.update_time = now;
    memory.version += 1;
    let hash = content_hash(&memory.content);
    delete_expired_twin(
        conn,
        &memory.scope,
        memory.level,
        memory.memory_type,
        &hash,
        now,
    )
    .await?;
    let updated = sqlx::query(
        "UPDATE memories SET memory_type = ?, content = ?, content_hash = ?, summary = ?, tags = ?, metadata = ?, \
         importance = ?, confidence = ?, expire_time = ?, occurred_at = ?, update_time = ?, version = ?, \
         actor_key = ?, actor_agent = ? WHERE seq = ?",
    )
    .bind(memory.memory_type.code())
    .bind(&memory.content)
    .bind(&hash)
    .bind(&memory.summary)
    .bind(json(&memory.tags))
    .bind(json(&memory.metadata))
    .bind(memory.importance)
    .bind(memory.confidence)
    .bind(memory.expire_time)
    .bind(memory.occurred_at)
    .bind(memory.update_time)
    .bind(memory.version)
    .bind(&actor.key_id)
    .bind(&actor.agent_id)
    .bind(memory.seq)
    .execute(&mut *conn)
    .await;
    match updated {
        Ok(_) => Ok(memory),
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
            Err(Error::AlreadyExists(format!(
                "an identical {} memory already exists in this scope",
                memory.memory_type.label().to_lowercase()
            )))
        }
        Err(err) => Err(db_error(err)),
    }
}

fn apply_patch(memory: &mut Memory, patch: MemoryPatch) {
    let MemoryPatch {
        memory_type,
        content,
        summary,
        tags,
        metadata,
        importance,
        confidence,
        expire_time,
        occurred_at,
    } = patch;
    if let Some(v) = memory_type {
        memory.memory_type = v;
    }
    if let Some(v) = content {
        memory.content = v;
    }
    if let Some(v) = summary {
        memory.summary = v;
    }
    if let Some(v) = tags {
        memory.tags = v;
    }
    if let Some(v) = metadata {
        memory.metadata = v;
    }
    if let Some(v) = importance {
        memory.importance = v;
    }
    if let Some(v) = confidence {
        memory.confidence = v;
    }
    if let Some(v) = expire_time {
        memory.expire_time = v;
    }
    if let Some(v) = occurred_at {
        memory.occurred_at = v.unwrap_or(memory.create_time);
    }
}

pub(super) async fn delete(
    conn: &mut SqliteConnection,
    scope: Scope,
    id: String,
    etag: Option<String>,
    actor: Actor,
    now: Micros,
) -> Result<()> {
    let memory = get_for_write(conn, &scope, &id, etag.as_deref(), now).await?;
    // The history's delete trigger names whoever the row names.
    sqlx::query("UPDATE memories SET actor_key = ?, actor_agent = ? WHERE seq = ?")
        .bind(&actor.key_id)
        .bind(&actor.agent_id)
        .bind(memory.seq)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    remove(conn, &[memory.seq]).await
}

/// The history of memory `id` in `namespace`, oldest first: up to `limit`
/// revisions after `after_seq`.
pub(super) async fn revisions(
    conn: &mut SqliteConnection,
    namespace: &str,
    id: &str,
    limit: usize,
    after_seq: Option<i64>,
) -> Result<Vec<Revision>> {
    let rows = sqlx::query(
        "SELECT * FROM memory_revisions WHERE namespace = ? AND memory_id = ? AND seq > ? \
         ORDER BY seq LIMIT ?",
    )
    .bind(namespace)
    .bind(id)
    .bind(after_seq.unwrap_or(0))
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter().map(revision_from_row).collect()
}

/// A row of `memory_revisions` as a revision.
pub(super) fn revision_from_row(row: &SqliteRow) -> Result<Revision> {
    let changed: String = row.try_get("changed").map_err(db_error)?;
    Ok(Revision {
        seq: row.try_get("seq").map_err(db_error)?,
        memory_id: row.try_get("memory_id").map_err(db_error)?,
        version: row.try_get("version").map_err(db_error)?,
        action: row.try_get("action").map_err(db_error)?,
        time: row.try_get("time").map_err(db_error)?,
        actor: Actor {
            key_id: row.try_get("key_id").map_err(db_error)?,
            agent_id: row.try_get("agent_id").map_err(db_error)?,
        },
        changed_fields: changed
            .split(CHANGED_SEPARATOR)
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

/// Between the names in `memory_revisions.changed` (as its trigger writes
/// them).
pub(super) const CHANGED_SEPARATOR: char = ',';

/// Removes the memories `seqs`: the one way a memory leaves the database on
/// request (DeleteMemory) or by retention. Their deletion trigger records
/// each as a change of the feed, which the search indexes follow; whatever
/// else a removal must leave behind belongs here too.
async fn remove(conn: &mut SqliteConnection, seqs: &[i64]) -> Result<()> {
    if seqs.is_empty() {
        return Ok(());
    }
    let mut qb = QueryBuilder::<Sqlite>::new("DELETE FROM memories WHERE seq IN ");
    push_list(&mut qb, seqs);
    qb.build().execute(&mut *conn).await.map_err(db_error)?;
    Ok(())
}

/// Removes up to `limit` memories that expired at or before `now`, soonest
/// expired first; returns how many.
pub(super) async fn purge_expired(
    conn: &mut SqliteConnection,
    now: Micros,
    limit: usize,
) -> Result<usize> {
    let seqs: Vec<i64> = sqlx::query_scalar(
        "SELECT seq FROM memories WHERE expire_time IS NOT NULL AND expire_time <= ? \
         ORDER BY expire_time LIMIT ?",
    )
    .bind(now)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    remove(conn, &seqs).await?;
    Ok(seqs.len())
}

/// One page (plus one row, to tell whether another page follows).
pub(super) async fn list(
    conn: &mut SqliteConnection,
    query: &ListQuery,
    now: Micros,
) -> Result<Vec<Memory>> {
    let mut qb = select_from_memories();
    push_visible(&mut qb, &query.scope, now);
    push_filter(&mut qb, &query.filter);
    if let Some(after) = query.after {
        match query.order {
            MemoryOrder::CreateTimeDesc => qb
                .push(" AND (m.create_time, m.seq) < (")
                .push_bind(after.create_time)
                .push(", ")
                .push_bind(after.seq)
                .push(")"),
            MemoryOrder::CreateTimeAsc => qb
                .push(" AND (m.create_time, m.seq) > (")
                .push_bind(after.create_time)
                .push(", ")
                .push_bind(after.seq)
                .push(")"),
            MemoryOrder::ImportanceDesc => qb
                .push(" AND (m.importance, m.create_time, m.seq) < (")
                .push_bind(after.importance)
                .push(", ")
                .push_bind(after.create_time)
                .push(", ")
                .push_bind(after.seq)
                .push(")"),
        };
    }
    qb.push(match query.order {
        MemoryOrder::CreateTimeDesc => " ORDER BY m.create_time DESC, m.seq DESC",
        MemoryOrder::CreateTimeAsc => " ORDER BY m.create_time ASC, m.seq ASC",
        MemoryOrder::ImportanceDesc => {
            " ORDER BY m.importance DESC, m.create_time DESC, m.seq DESC"
        }
    });
    qb.push(" LIMIT ")
        .push_bind(i64::try_from(query.page_size + 1).unwrap_or(i64::MAX));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(memory_from_row).collect()
}

/// The memories with these sequence numbers that are visible from `scope`
/// and match `filter`.
pub(super) async fn by_seq(
    conn: &mut SqliteConnection,
    scope: &Scope,
    filter: &MemoryFilter,
    seqs: &[i64],
    now: Micros,
) -> Result<Vec<Memory>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let mut qb = select_by_seq(seqs);
    qb.push(" AND ");
    push_visible(&mut qb, scope, now);
    push_filter(&mut qb, filter);
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(memory_from_row).collect()
}

/// The conversation neighbours of the memories `seqs` of `namespace`: for
/// each one written in a session, the memory written just before and just
/// after it in that session (whoever may see them).
pub(super) async fn conversation_neighbours(
    conn: &mut SqliteConnection,
    namespace: &str,
    seqs: &[i64],
) -> Result<Vec<Neighbours>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    // The literal `<> ''` lets SQLite use the partial index.
    let mut qb = QueryBuilder::<Sqlite>::new(
        "SELECT m.seq, \
           (SELECT p.seq FROM memories p WHERE p.namespace = m.namespace \
              AND p.origin_session_id = m.origin_session_id AND p.origin_session_id <> '' \
              AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1) AS before, \
           (SELECT n.seq FROM memories n WHERE n.namespace = m.namespace \
              AND n.origin_session_id = m.origin_session_id AND n.origin_session_id <> '' \
              AND n.seq > m.seq ORDER BY n.seq LIMIT 1) AS after \
         FROM memories m NOT INDEXED WHERE m.origin_session_id <> '' AND m.namespace = ",
    );
    qb.push_bind(namespace).push(" AND m.seq IN ");
    push_list(&mut qb, seqs);
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter()
        .map(|row| {
            Ok(Neighbours {
                seq: row.try_get("seq").map_err(db_error)?,
                before: row.try_get("before").map_err(db_error)?,
                after: row.try_get("after").map_err(db_error)?,
            })
        })
        .collect()
}

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

/// Up to `limit` changes after `after`, each with the memory as of that
/// change or later: from `written` when it holds that very version (just
/// stored by this server), else as the database holds it now.
pub(super) async fn changes_after(
    conn: &mut SqliteConnection,
    after: i64,
    limit: usize,
    written: &Written,
) -> Result<Vec<MemoryChange>> {
    let rows: Vec<(i64, i64, i64, i32)> = sqlx::query_as(
        "SELECT seq, memory_seq, version, kind FROM memory_changes WHERE seq > ? ORDER BY seq LIMIT ?",
    )
    .bind(after)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    let mut changes: Vec<MemoryChange> = rows
        .iter()
        .map(|&(seq, memory_seq, version, kind)| MemoryChange {
            seq,
            memory_seq,
            vector: None,
            memory: if kind == DELETED {
                None
            } else {
                written.take(memory_seq, version)
            },
        })
        .collect();
    let missing: Vec<i64> = rows
        .iter()
        .zip(&changes)
        .filter(|((.., kind), change)| *kind != DELETED && change.memory.is_none())
        .map(|(_, change)| change.memory_seq)
        .collect();
    if !missing.is_empty() {
        let read = select_by_seq(&missing)
            .build()
            .fetch_all(&mut *conn)
            .await
            .map_err(db_error)?;
        let now: HashMap<i64, Memory> = read
            .iter()
            .map(|row| memory_from_row(row).map(|m| (m.seq, m)))
            .collect::<Result<_>>()?;
        for change in changes.iter_mut().filter(|c| c.memory.is_none()) {
            change.memory = now.get(&change.memory_seq).cloned();
        }
    }
    let stored: Vec<i64> = rows
        .iter()
        .filter(|(.., kind)| *kind == VECTOR_STORED)
        .map(|&(_, memory_seq, ..)| memory_seq)
        .collect();
    if !stored.is_empty() {
        let vectors = super::vectors::current(conn, &stored).await?;
        for (change, _) in changes
            .iter_mut()
            .zip(&rows)
            .filter(|(_, (.., kind))| *kind == VECTOR_STORED)
        {
            change.vector = vectors.get(&change.memory_seq).cloned();
        }
    }
    Ok(changes)
}

/// `memory_changes.kind` of a deletion.
const DELETED: i32 = 4;
/// `memory_changes.kind` of a stored vector.
const VECTOR_STORED: i32 = 5;

/// Memories this server has just written, kept for the change feed's
/// follower so that it need not read them back from the database. Keyed by
/// sequence number and version: a cached memory is exactly the state that
/// change left. Taken when read; bounded, so a follower that stops reading
/// costs nothing but its own reads.
#[derive(Default)]
pub(super) struct Written {
    memories: std::sync::Mutex<HashMap<(i64, i64), Memory>>,
}

/// The most memories [`Written`] holds.
const MAX_WRITTEN: usize = 50_000;

impl Written {
    /// Keeps `memories`, as just committed.
    pub(super) fn keep<'a>(&self, memories: impl IntoIterator<Item = &'a Memory>) {
        let mut kept = self.memories.lock().unwrap_or_else(|p| p.into_inner());
        for memory in memories {
            if kept.len() >= MAX_WRITTEN {
                break;
            }
            kept.insert((memory.seq, memory.version), memory.clone());
        }
    }

    fn take(&self, seq: i64, version: i64) -> Option<Memory> {
        self.memories
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(seq, version))
    }
}

/// Up to `limit` memories after `after_seq`, in sequence order, expired ones
/// included.
pub(super) async fn scan(
    conn: &mut SqliteConnection,
    after_seq: i64,
    limit: usize,
) -> Result<Vec<Memory>> {
    let mut qb = select_from_memories();
    qb.push("m.seq > ")
        .push_bind(after_seq)
        .push(" ORDER BY m.seq LIMIT ")
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
    let rows = qb.build().fetch_all(&mut *conn).await.map_err(db_error)?;
    rows.iter().map(memory_from_row).collect()
}
