//! SQL for entities, shared by both databases: linking a written memory to
//! the entities it names (creating the ones first named), listing and
//! finding them as a scope sees them, their memories, and merging two.
//!
//! A reader sees an entity when a memory it sees (unexpired, true or not)
//! names it: entities carry no scope of their own.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::memories::{push_filter, push_visible};
use super::rows::{self, FROM_MEMORIES};
use super::{Columns, Dialect, Row, Sql, count};
use crate::domain::entity::{Entity, EntityQuery, EntityType, Mention, key};
use crate::domain::{Memory, MemoryFilter, Micros, Scope, Validity};
use crate::error::{Error, Result};

/// The lock that serialises creating a namespace's entities where several
/// writers run at once: two writers naming a new entity create it once.
fn creation_lock(namespace: &str) -> String {
    format!("entities\0{namespace}")
}

/// Links each memory (by sequence number) to the entities it names,
/// creating those no name of which is known yet.
pub async fn link<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    links: &[(i64, Vec<Mention>)],
    now: Micros,
) -> Result<()> {
    // The first mention of each key names a new entity.
    let mut first: BTreeMap<String, &Mention> = BTreeMap::new();
    for mention in links.iter().flat_map(|(_, mentions)| mentions) {
        first.entry(key(&mention.name)).or_insert(mention);
    }
    if first.is_empty() {
        return Ok(());
    }
    // Most writes name entities already known: one statement links them.
    let named_pairs: BTreeSet<(i64, String)> = links
        .iter()
        .flat_map(|(seq, mentions)| mentions.iter().map(|m| (*seq, key(&m.name))))
        .collect();
    if named_pairs.len() <= MAX_ROWS
        && link_known(conn, namespace, &named_pairs).await? == named_pairs.len() as u64
    {
        return Ok(());
    }
    let keys: Vec<&str> = first.keys().map(String::as_str).collect();
    let mut known = named(conn, namespace, &keys).await?;
    if known.len() < keys.len() {
        conn.lock(&creation_lock(namespace)).await?;
        // Another writer may have created some while this one waited.
        known = named(conn, namespace, &keys).await?;
        let new: Vec<(&String, &Mention)> = first
            .iter()
            .filter(|(k, _)| !known.contains_key(k.as_str()))
            .map(|(k, m)| (k, *m))
            .collect();
        for chunk in new.chunks(MAX_ROWS) {
            for (k, id) in create(conn, namespace, chunk, now).await? {
                known.insert(k, id);
            }
        }
    }
    let mut pairs: BTreeSet<(i64, &str)> = BTreeSet::new();
    for (seq, mentions) in links {
        for mention in mentions {
            if let Some(id) = known.get(&key(&mention.name)) {
                pairs.insert((*seq, id));
            }
        }
    }
    let pairs: Vec<(i64, &str)> = pairs.into_iter().collect();
    for chunk in pairs.chunks(MAX_ROWS) {
        insert_links(conn, chunk).await?;
    }
    Ok(())
}

/// The most rows one statement writes or looks up: a batch of memories
/// naming many entities stays far within either database's limit of
/// bound values per statement.
const MAX_ROWS: usize = 1000;

/// Links each memory to the entity known by each key (memory sequence
/// number, key) names; returns how many links it made. Fewer than
/// `pairs` when a key names no entity yet (or two keys of one memory name
/// one entity): [`link`] then goes the long way, which makes the rest.
async fn link_known<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    pairs: &BTreeSet<(i64, String)>,
) -> Result<u64> {
    let mut sql = Sql::new(
        "INSERT INTO memory_entities (memory_seq, entity_id) \
         SELECT v.column1, n.entity_id FROM (VALUES ",
    );
    push_pairs(&mut sql, pairs.iter().map(|(seq, k)| (*seq, k.as_str())));
    sql.push(") AS v JOIN entity_names n ON n.namespace = ")
        .bind(namespace.to_owned())
        .push(" AND n.key = v.column2 ")
        .push(STILL_STORED);
    conn.execute(sql).await
}

/// The end of a statement linking the memories of `v.column1`: only those
/// still stored (the backfill links memories it read before its
/// transaction, and one may have been deleted since), each link once.
const STILL_STORED: &str = "WHERE EXISTS (SELECT 1 FROM memories m WHERE m.seq = v.column1) \
     ON CONFLICT (memory_seq, entity_id) DO NOTHING";

/// Appends `(seq, text), …` to `sql`: the rows of a `VALUES` list.
fn push_pairs<'a, D: Dialect>(sql: &mut Sql<D>, pairs: impl Iterator<Item = (i64, &'a str)>) {
    for (i, (seq, text)) in pairs.enumerate() {
        if i > 0 {
            sql.push(", ");
        }
        sql.push("(")
            .bind(seq)
            .push(", ")
            .bind(text.to_owned())
            .push(")");
    }
}

/// Links memories to entities (memory sequence number, entity id).
async fn insert_links<D: Dialect>(conn: &mut D, pairs: &[(i64, &str)]) -> Result<()> {
    let mut sql = Sql::new(
        "INSERT INTO memory_entities (memory_seq, entity_id) \
         SELECT v.column1, v.column2 FROM (VALUES ",
    );
    push_pairs(&mut sql, pairs.iter().copied());
    sql.push(") AS v ").push(STILL_STORED);
    conn.execute(sql).await?;
    Ok(())
}

/// Creates an entity for each new name (its key, as first mentioned);
/// returns each key with its entity's id.
async fn create<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    new: &[(&String, &Mention)],
    now: Micros,
) -> Result<Vec<(String, String)>> {
    if new.is_empty() {
        return Ok(Vec::new());
    }
    let created: Vec<(String, String)> = new
        .iter()
        .map(|(k, _)| ((*k).clone(), uuid::Uuid::now_v7().to_string()))
        .collect();
    let mut entities = Sql::new(
        "INSERT INTO entities (id, namespace, key, name, entity_type, create_time) VALUES ",
    );
    let mut names = Sql::new("INSERT INTO entity_names (namespace, key, entity_id, name) VALUES ");
    for (i, ((k, mention), (_, id))) in new.iter().zip(&created).enumerate() {
        if i > 0 {
            entities.push(", ");
            names.push(", ");
        }
        entities
            .push("(")
            .values(|v| {
                v.bind(id.clone())
                    .bind(namespace.to_owned())
                    .bind((*k).clone())
                    .bind(mention.name.clone())
                    .bind(mention.entity_type.code())
                    .bind(now);
            })
            .push(")");
        names
            .push("(")
            .values(|v| {
                v.bind(namespace.to_owned())
                    .bind((*k).clone())
                    .bind(id.clone())
                    .bind(mention.name.clone());
            })
            .push(")");
    }
    conn.execute(entities).await?;
    conn.execute(names).await?;
    Ok(created)
}

/// The entities of `namespace` known by these keys: key → entity id.
pub async fn named<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    keys: &[&str],
) -> Result<HashMap<String, String>> {
    let mut named = HashMap::with_capacity(keys.len());
    for chunk in keys.chunks(MAX_ROWS) {
        let mut sql = Sql::new("SELECT key, entity_id FROM entity_names WHERE namespace = ");
        sql.bind(namespace.to_owned()).push(" AND key IN (");
        sql.values(|v| {
            for k in chunk {
                v.bind((*k).to_owned());
            }
        })
        .push(")");
        for row in conn.fetch_all(sql).await? {
            let c = Columns::<D>::of(&row);
            named.insert(c.get("key")?, c.get("entity_id")?);
        }
    }
    Ok(named)
}

/// The names of the entities of `namespace` that are one of `runs` or
/// start with one of them and a space (a first name of a full one):
/// (key, entity id) pairs.
pub async fn named_loosely<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    runs: &[&str],
) -> Result<Vec<(String, String)>> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = Sql::new("SELECT key, entity_id FROM entity_names WHERE namespace = ");
    sql.bind(namespace.to_owned()).push(" AND (key IN (");
    sql.values(|v| {
        for run in runs {
            v.bind((*run).to_owned());
        }
    })
    .push(")");
    for run in runs {
        sql.push(" OR (key > ")
            .bind(format!("{run} "))
            .push(" AND key < ")
            .bind(format!("{run} {}", char::MAX))
            .push(")");
    }
    sql.push(") LIMIT ").bind(count(MAX_LOOSE_NAMES));
    let mut named = Vec::new();
    for row in conn.fetch_all(sql).await? {
        let c = Columns::<D>::of(&row);
        named.push((c.get("key")?, c.get("entity_id")?));
    }
    Ok(named)
}

/// The most names [`named_loosely`] returns.
const MAX_LOOSE_NAMES: usize = 256;

/// Removes the links of the memory `seq` (its content changed: they are
/// made again from the new one).
pub async fn unlink<D: Dialect>(conn: &mut D, seq: i64) -> Result<()> {
    let mut sql = Sql::new("DELETE FROM memory_entities WHERE memory_seq = ");
    sql.bind(seq);
    conn.execute(sql).await?;
    Ok(())
}

/// The columns of an entity as a reader sees it (alias `e`, with the
/// reader's memories naming it as `m`), grouped per entity.
const ENTITY_COLUMNS: &str = "e.seq, e.id, e.key, e.name, e.entity_type, e.create_time, \
     max(m.create_time) AS last_mention_time, \
     CAST(sum(CASE WHEN m.valid_to IS NULL OR m.valid_to > ";

/// `SELECT` of entities named by memories `scope` sees at `now`, `WHERE`
/// conditions on `e` to follow (after an ` AND`).
fn select_entities<D: Dialect>(scope: &Scope, now: Micros) -> Sql<D> {
    let mut sql = Sql::new(format!("SELECT {ENTITY_COLUMNS}"));
    sql.bind(now).push(
        " THEN 1 ELSE 0 END) AS BIGINT) AS memory_count \
         FROM entities e \
         JOIN memory_entities me ON me.entity_id = e.id \
         JOIN memories m ON m.seq = me.memory_seq WHERE ",
    );
    push_visible(&mut sql, scope, now);
    sql.push(" AND e.namespace = ")
        .bind(scope.namespace.clone());
    sql
}

/// Ends a [`select_entities`]: one row per entity, in listing order.
fn group_entities<D: Dialect>(sql: &mut Sql<D>) {
    sql.push(
        " GROUP BY e.seq, e.id, e.key, e.name, e.entity_type, e.create_time \
         ORDER BY e.key, e.seq",
    );
}

/// An entity's row, aliases still to be read.
fn entity<D: Dialect>(row: &Row<D>) -> Result<Entity> {
    let c = Columns::<D>::of(row);
    Ok(Entity {
        seq: c.get("seq")?,
        id: c.get("id")?,
        key: c.get("key")?,
        name: c.get("name")?,
        entity_type: EntityType::from_code(c.get("entity_type")?)
            .ok_or_else(|| Error::Internal("corrupt entity row: bad entity_type".into()))?,
        aliases: Vec::new(),
        memory_count: c.get("memory_count")?,
        create_time: c.get("create_time")?,
        last_mention_time: c.get("last_mention_time")?,
    })
}

/// Fills in the aliases of `entities`: every name each goes by but the
/// one it is shown by.
async fn with_aliases<D: Dialect>(conn: &mut D, mut entities: Vec<Entity>) -> Result<Vec<Entity>> {
    if entities.is_empty() {
        return Ok(entities);
    }
    let mut sql = Sql::new("SELECT entity_id, key, name FROM entity_names WHERE entity_id IN (");
    sql.values(|v| {
        for e in &entities {
            v.bind(e.id.clone());
        }
    })
    .push(") ORDER BY key");
    let mut aliases: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for row in conn.fetch_all(sql).await? {
        let c = Columns::<D>::of(&row);
        aliases
            .entry(c.get("entity_id")?)
            .or_default()
            .push((c.get("key")?, c.get("name")?));
    }
    for e in &mut entities {
        e.aliases = aliases
            .remove(&e.id)
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| *k != e.key)
            .map(|(_, name)| name)
            .collect();
    }
    Ok(entities)
}

/// One page of the entities `query` asks for (plus one, so the caller
/// can tell whether another page follows).
pub async fn list<D: Dialect>(
    conn: &mut D,
    query: &EntityQuery,
    now: Micros,
) -> Result<Vec<Entity>> {
    let mut sql = select_entities::<D>(&query.scope, now);
    let types: Vec<String> = query.types.iter().map(|t| t.code().to_string()).collect();
    if !types.is_empty() {
        // The server's own enum numbers, as literals.
        sql.push(format_args!(" AND e.entity_type IN ({})", types.join(", ")));
    }
    if !query.prefix.is_empty() {
        // Every key that starts with the prefix sorts between it and it
        // followed by the greatest character.
        sql.push(" AND e.key >= ")
            .bind(query.prefix.clone())
            .push(" AND e.key < ")
            .bind(format!("{}{}", query.prefix, char::MAX));
    }
    if let Some(after) = &query.after {
        sql.push(" AND (e.key, e.seq) > (")
            .bind(after.key.clone())
            .push(", ")
            .bind(after.seq)
            .push(")");
    }
    group_entities(&mut sql);
    sql.push(" LIMIT ").bind(count(query.page_size + 1));
    let found = super::fetch(conn, sql, entity::<D>).await?;
    with_aliases(conn, found).await
}

/// The id of the entity of `namespace` that `entity` names: its id, or
/// any of its names.
pub async fn find<D: Dialect>(
    conn: &mut D,
    namespace: &str,
    entity: &str,
) -> Result<Option<String>> {
    let mut sql = Sql::new("SELECT id FROM entities WHERE namespace = ");
    sql.bind(namespace.to_owned())
        .push(" AND id = ")
        .bind(entity.to_owned())
        .push(" UNION SELECT entity_id AS id FROM entity_names WHERE namespace = ")
        .bind(namespace.to_owned())
        .push(" AND key = ")
        .bind(key(entity));
    let found = conn.fetch_optional(sql).await?;
    found
        .map(|row| Columns::<D>::of(&row).get("id"))
        .transpose()
}

/// The name the entity `id` is shown by, if it exists.
pub async fn name<D: Dialect>(conn: &mut D, id: &str) -> Result<Option<String>> {
    let mut sql = Sql::new("SELECT name FROM entities WHERE id = ");
    sql.bind(id.to_owned());
    let found = conn.fetch_optional(sql).await?;
    found
        .map(|row| Columns::<D>::of(&row).get("name"))
        .transpose()
}

/// The entity `id` as `scope` sees it at `now`; `None` when no memory it
/// sees names it.
pub async fn get<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    id: &str,
    now: Micros,
) -> Result<Option<Entity>> {
    let mut sql = select_entities::<D>(scope, now);
    sql.push(" AND e.id = ").bind(id.to_owned());
    group_entities(&mut sql);
    let found = super::fetch(conn, sql, entity::<D>).await?;
    Ok(with_aliases(conn, found).await?.pop())
}

/// Up to `limit` (plus one) memories `scope` sees that name the entity
/// `id` and count as true under `validity`, newest truth first.
pub async fn memories<D: Dialect>(
    conn: &mut D,
    scope: &Scope,
    id: &str,
    validity: Validity,
    limit: usize,
    now: Micros,
) -> Result<Vec<Memory>> {
    let mut sql = Sql::new(format!(
        "SELECT {} FROM {FROM_MEMORIES} JOIN memory_entities me ON me.memory_seq = m.seq \
         WHERE me.entity_id = ",
        D::MEMORY_COLUMNS
    ));
    sql.bind(id.to_owned()).push(" AND ");
    push_visible(&mut sql, scope, now);
    let filter = MemoryFilter {
        validity,
        ..MemoryFilter::default()
    };
    push_filter(&mut sql, &filter, now);
    sql.push(" ORDER BY m.valid_from DESC, m.seq DESC LIMIT ")
        .bind(count(limit + 1));
    let found = conn.fetch_all(sql).await?;
    rows::all::<D, _>(&found, rows::memory::<D>)
}

/// The sequence numbers of the memories of `namespace` that name every
/// one of the entities `ids`.
pub async fn mentioning<D: Dialect>(conn: &mut D, ids: &[String]) -> Result<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = Sql::new("SELECT memory_seq FROM memory_entities WHERE entity_id IN (");
    sql.values(|v| {
        for id in ids {
            v.bind(id.clone());
        }
    })
    .push(") GROUP BY memory_seq HAVING count(*) = ")
    .bind(count(ids.len()));
    let rows = conn.fetch_all(sql).await?;
    rows.iter()
        .map(|row| Columns::<D>::of(row).get("memory_seq"))
        .collect()
}

/// Of the memories `seqs`, those naming any of the entities `ids`, each
/// with how many of them it names.
pub async fn mentions_among<D: Dialect>(
    conn: &mut D,
    ids: &[String],
    seqs: &[i64],
) -> Result<Vec<(i64, i64)>> {
    if ids.is_empty() || seqs.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql =
        Sql::new("SELECT memory_seq, count(*) AS named FROM memory_entities WHERE entity_id IN (");
    sql.values(|v| {
        for id in ids {
            v.bind(id.clone());
        }
    })
    .push(") AND ")
    .in_seqs("memory_seq", seqs)
    .push(" GROUP BY memory_seq");
    let rows = conn.fetch_all(sql).await?;
    rows.iter()
        .map(|row| {
            let c = Columns::<D>::of(row);
            Ok((c.get("memory_seq")?, c.get("named")?))
        })
        .collect()
}

/// Makes the entity `from` a name of `into` (another entity): its names
/// and mentions move to `into`, and `from` is gone.
pub async fn merge<D: Dialect>(conn: &mut D, into: &str, from: &str) -> Result<()> {
    let mut names = Sql::new("UPDATE entity_names SET entity_id = ");
    names
        .bind(into.to_owned())
        .push(" WHERE entity_id = ")
        .bind(from.to_owned());
    conn.execute(names).await?;
    let mut mentions =
        Sql::new("INSERT INTO memory_entities (memory_seq, entity_id) SELECT memory_seq, ");
    mentions
        .bind(into.to_owned())
        .push(" FROM memory_entities WHERE entity_id = ")
        .bind(from.to_owned())
        .push(" ON CONFLICT (memory_seq, entity_id) DO NOTHING");
    conn.execute(mentions).await?;
    let mut unlink = Sql::new("DELETE FROM memory_entities WHERE entity_id = ");
    unlink.bind(from.to_owned());
    conn.execute(unlink).await?;
    let mut entity = Sql::new("DELETE FROM entities WHERE id = ");
    entity.bind(from.to_owned());
    conn.execute(entity).await?;
    Ok(())
}
