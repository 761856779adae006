//! Where each kind of record is stored, in the tables both backends share
//! (PostgreSQL's schema copies SQLite's): the columns to read, the tables,
//! the namespace column, the order records were written in, and the
//! columns that identify one.

use crate::archive::records::{Kind, MemoryEntityRecord, MemoryRelationRecord, Record};
use crate::store::sql::{Dialect, Sql, rows};

/// Where a kind's records are.
pub struct Table {
    /// Every column its records need, as [`super::rows::record`] reads them.
    pub columns: String,
    /// The tables they come from.
    pub from: String,
    /// The namespace column.
    pub namespace: &'static str,
    /// The order they were written in.
    pub order: &'static str,
    /// The columns that identify one record (see [`key`]).
    pub key: &'static [&'static str],
}

/// A table of records with an `id`, in insertion order.
fn by_id(table: &str) -> Table {
    Table {
        columns: "t.*".into(),
        from: format!("{table} t"),
        namespace: "t.namespace",
        order: "t.seq",
        key: &["t.id"],
    }
}

impl Table {
    /// Where `kind`'s records are in `D`'s database (whose JSON columns
    /// are read as text).
    pub fn of<D: Dialect>(kind: Kind) -> Table {
        match kind {
            Kind::Memory => Table {
                columns: D::MEMORY_COLUMNS.into(),
                from: rows::FROM_MEMORIES.into(),
                namespace: "m.namespace",
                order: "m.seq",
                key: &["m.id"],
            },
            Kind::MemoryRevision => Table {
                columns: "t.*".into(),
                from: "memory_revisions t".into(),
                namespace: "t.namespace",
                order: "t.seq",
                key: &["t.namespace", "t.memory_id", "t.version", "t.action"],
            },
            Kind::MemoryLink => Table {
                columns: "t.*".into(),
                from: "memory_links t".into(),
                namespace: "t.namespace",
                order: "t.create_time, t.memory_id, t.other_id",
                key: &["t.memory_id", "t.other_id", "t.kind"],
            },
            Kind::MemoryProvenance => Table {
                columns: "t.*".into(),
                from: "memory_provenance t".into(),
                namespace: "t.namespace",
                order: "t.create_time, t.memory_id",
                key: &["t.memory_id"],
            },
            Kind::Episode => Table {
                columns: rows::episode_columns::<D>("e"),
                from: "episodes e".into(),
                namespace: "e.namespace",
                order: "e.seq",
                key: &["e.id"],
            },
            Kind::Step => Table {
                columns: "s.*, e.id AS episode_id, e.namespace AS namespace".into(),
                from: "episode_steps s JOIN episodes e ON e.seq = s.episode_seq".into(),
                namespace: "e.namespace",
                order: "s.episode_seq, s.step_number",
                key: &["e.id", "s.step_number"],
            },
            Kind::TaskRule => by_id("task_rules"),
            Kind::EpisodeLesson => by_id("episode_lessons"),
            Kind::MistakeCard => by_id("mistake_cards"),
            Kind::LearningState => Table {
                columns: "t.*".into(),
                from: "learning_state t".into(),
                namespace: "t.namespace",
                order: "t.namespace",
                key: &["t.namespace"],
            },
            Kind::Outcome => by_id("outcomes"),
            Kind::Heuristic => by_id("heuristics"),
            Kind::AntiPattern => by_id("anti_patterns"),
            Kind::AgentScope => Table {
                columns: "t.*".into(),
                from: "agent_scopes t".into(),
                namespace: "t.namespace",
                order: "t.agent_id",
                key: &["t.namespace", "t.agent_id"],
            },
            Kind::Entity => by_id("entities"),
            Kind::EntityName => Table {
                columns: "t.*".into(),
                from: "entity_names t".into(),
                namespace: "t.namespace",
                order: "t.key",
                key: &["t.namespace", "t.key"],
            },
            Kind::MemoryEntity => Table {
                columns: "l.entity_id, m.id AS memory_id, m.namespace AS namespace".into(),
                from: "memory_entities l JOIN memories m ON m.seq = l.memory_seq".into(),
                namespace: "m.namespace",
                order: "l.memory_seq, l.entity_id",
                key: &["m.id", "l.entity_id"],
            },
            Kind::MemoryRelation => Table {
                columns: "r.*, m.id AS memory_id, m.namespace AS namespace".into(),
                from: "memory_relations r JOIN memories m ON m.seq = r.memory_seq".into(),
                namespace: "m.namespace",
                order: "r.memory_seq, r.position",
                key: &["m.id", "r.position"],
            },
        }
    }
}

/// A value of a record's key.
pub enum KeyValue<'a> {
    Text(&'a str),
    Number(i64),
}

/// The values of [`Table::key`] for `record`.
pub fn key(record: &Record) -> Vec<KeyValue<'_>> {
    use KeyValue::{Number, Text};
    if let Some(id) = record.id() {
        return vec![Text(id)];
    }
    match record {
        Record::MemoryRevision(r) => vec![
            Text(&r.namespace),
            Text(&r.memory_id),
            Number(r.version),
            Number(r.action as i64),
        ],
        Record::Step(r) => vec![Text(&r.episode_id), Number(r.step_number.into())],
        Record::MemoryLink(r) => vec![
            Text(&r.memory_id),
            Text(&r.other_id),
            Number(r.link_kind.code().into()),
        ],
        Record::MemoryProvenance(r) => vec![Text(&r.memory_id)],
        Record::AgentScope(r) => vec![Text(&r.namespace), Text(&r.agent_id)],
        Record::EntityName(r) => vec![Text(&r.namespace), Text(&r.key)],
        Record::MemoryEntity(r) => vec![Text(&r.memory_id), Text(&r.entity_id)],
        Record::MemoryRelation(r) => vec![Text(&r.memory_id), Number(r.position)],
        other => vec![Text(other.namespace())],
    }
}

/// Every namespace holding a record of any kind, in order (column
/// `namespace`), with the tables `table` says.
pub fn namespaces_sql(table: impl Fn(Kind) -> Table) -> String {
    Kind::ALL
        .iter()
        .map(|&kind| {
            let table = table(kind);
            format!("SELECT {} FROM {}", table.namespace, table.from)
        })
        .collect::<Vec<_>>()
        .join(" UNION ")
        + " ORDER BY 1"
}

/// Pushes `record`'s key as conditions on `table`'s key columns, joined by
/// AND, each value bound.
pub fn push_key<D: Dialect>(sql: &mut Sql<D>, table: &Table, record: &Record) {
    for (i, (column, value)) in table.key.iter().zip(key(record)).enumerate() {
        if i > 0 {
            sql.push(" AND ");
        }
        sql.push(format_args!("{column} = "));
        match value {
            KeyValue::Text(text) => sql.bind(text),
            KeyValue::Number(number) => sql.bind(number),
        };
    }
}

/// How an insert of `record`'s row starts: the columns before the row's
/// own (a step's episode row) and what precedes its values; the values are
/// followed by [`push_insert_end`].
pub fn insert_head(record: &Record) -> (&'static str, &'static str) {
    match record {
        Record::MemoryRevision(_) => ("", "SELECT "),
        Record::Step(_) => ("episode_seq, ", "SELECT seq, "),
        Record::MemoryEntity(_) | Record::MemoryRelation(_) => ("memory_seq, ", "SELECT seq, "),
        _ => ("", "VALUES ("),
    }
}

/// Pushes the end of an insert of `record` begun as [`insert_head`] says,
/// storing nothing where a record with its key is: a revision, which no
/// index keeps unique, is looked for; a step is keyed by its episode's row,
/// found by the episode's id.
pub fn push_insert_end<D: Dialect>(sql: &mut Sql<D>, record: &Record) {
    if !push_insert_tail(sql, record) {
        sql.push(") ON CONFLICT DO NOTHING");
    }
}

/// Pushes the end of an insert of `record` whose values were pushed after
/// `SELECT` (a revision's, which no index keeps unique, so it is looked
/// for) or `SELECT seq, ` (a step's, keyed by its episode's row, or a
/// memory's entity or relation, keyed by its memory's row, found by its
/// id); `false` for the other kinds, which end `VALUES (…)`.
fn push_insert_tail<D: Dialect>(sql: &mut Sql<D>, record: &Record) -> bool {
    match record {
        Record::MemoryRevision(r) => {
            sql.push(" WHERE NOT EXISTS (SELECT 1 FROM memory_revisions WHERE namespace = ")
                .bind(r.namespace.as_str())
                .push(" AND memory_id = ")
                .bind(r.memory_id.as_str())
                .push(" AND version = ")
                .bind(r.version)
                .push(" AND action = ")
                .bind(r.action as i64)
                .push(")");
            true
        }
        Record::Step(r) => {
            push_from_owner(sql, "episodes", &r.episode_id, &r.namespace);
            true
        }
        Record::MemoryEntity(MemoryEntityRecord {
            memory_id,
            namespace,
            ..
        })
        | Record::MemoryRelation(MemoryRelationRecord {
            memory_id,
            namespace,
            ..
        }) => {
            push_from_owner(sql, "memories", memory_id, namespace);
            true
        }
        _ => false,
    }
}

/// Ends an insert whose values began `SELECT seq, ` with the row of
/// `table` (episodes or memories) of `id` in `namespace`: nothing is
/// stored when it is not there, or when the record's key is taken.
fn push_from_owner<D: Dialect>(sql: &mut Sql<D>, table: &str, id: &str, namespace: &str) {
    sql.push(format_args!(" FROM {table} WHERE id = "))
        .bind(id)
        .push(" AND namespace = ")
        .bind(namespace)
        .push(" ON CONFLICT DO NOTHING");
}
