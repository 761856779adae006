//! Where each kind of record is stored, in the tables both backends share
//! (PostgreSQL's schema copies SQLite's): the columns to read, the tables,
//! the namespace column, the order records were written in, and the
//! columns that identify one.

use sqlx::{Database, Encode, QueryBuilder, Type};

use crate::transfer::records::{Kind, Record};

/// Where a kind's records are.
pub struct Table {
    /// Every column its records need.
    pub columns: &'static str,
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
        columns: "t.*",
        from: format!("{table} t"),
        namespace: "t.namespace",
        order: "t.seq",
        key: &["t.id"],
    }
}

impl Table {
    /// Where `kind`'s records are; a memory's `memory_columns` from
    /// `from_memories` (alias `m`), which each backend reads its own way.
    pub fn of(kind: Kind, memory_columns: &'static str, from_memories: &str) -> Table {
        match kind {
            Kind::Memory => Table {
                columns: memory_columns,
                from: from_memories.into(),
                namespace: "m.namespace",
                order: "m.seq",
                key: &["m.id"],
            },
            Kind::MemoryRevision => Table {
                columns: "t.*",
                from: "memory_revisions t".into(),
                namespace: "t.namespace",
                order: "t.seq",
                key: &["t.namespace", "t.memory_id", "t.version", "t.action"],
            },
            Kind::Episode => Table {
                columns: "e.*",
                from: "episodes e".into(),
                namespace: "e.namespace",
                order: "e.seq",
                key: &["e.id"],
            },
            Kind::Step => Table {
                columns: "s.*, e.id AS episode_id, e.namespace AS namespace",
                from: "episode_steps s JOIN episodes e ON e.seq = s.episode_seq".into(),
                namespace: "e.namespace",
                order: "s.episode_seq, s.step_number",
                key: &["e.id", "s.step_number"],
            },
            Kind::TaskRule => by_id("task_rules"),
            Kind::EpisodeLesson => by_id("episode_lessons"),
            Kind::MistakeCard => by_id("mistake_cards"),
            Kind::LearningState => Table {
                columns: "t.*",
                from: "learning_state t".into(),
                namespace: "t.namespace",
                order: "t.namespace",
                key: &["t.namespace"],
            },
            Kind::Outcome => by_id("outcomes"),
            Kind::Heuristic => by_id("heuristics"),
            Kind::AntiPattern => by_id("anti_patterns"),
            Kind::AgentScope => Table {
                columns: "t.*",
                from: "agent_scopes t".into(),
                namespace: "t.namespace",
                order: "t.agent_id",
                key: &["t.namespace", "t.agent_id"],
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
        Record::AgentScope(r) => vec![Text(&r.namespace), Text(&r.agent_id)],
        other => vec![Text(other.namespace())],
    }
}

/// Every namespace holding a record of any kind, in order, with the tables
/// `table` says (the backend's memory columns matter not here).
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
pub fn push_key<DB>(qb: &mut QueryBuilder<DB>, table: &Table, record: &Record)
where
    DB: Database,
    String: for<'t> Encode<'t, DB> + Type<DB>,
    i64: for<'t> Encode<'t, DB> + Type<DB>,
{
    for (i, (column, value)) in table.key.iter().zip(key(record)).enumerate() {
        if i > 0 {
            qb.push(" AND ");
        }
        qb.push(format!("{column} = "));
        match value {
            KeyValue::Text(text) => qb.push_bind(text.to_owned()),
            KeyValue::Number(number) => qb.push_bind(number),
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
        _ => ("", "VALUES ("),
    }
}

/// Pushes the end of an insert of `record` begun as [`insert_head`] says,
/// storing nothing where a record with its key is: a revision, which no
/// index keeps unique, is looked for; a step is keyed by its episode's row,
/// found by the episode's id.
pub fn push_insert_end<DB>(qb: &mut QueryBuilder<DB>, record: &Record)
where
    DB: Database,
    String: for<'t> Encode<'t, DB> + Type<DB>,
    i64: for<'t> Encode<'t, DB> + Type<DB>,
{
    if !push_insert_tail(qb, record) {
        qb.push(") ON CONFLICT DO NOTHING");
    }
}

/// Pushes the end of an insert of `record` whose values were pushed after
/// `SELECT` (a revision's, which no index keeps unique, so it is looked
/// for) or `SELECT seq, ` (a step's, keyed by its episode's row, found by
/// the episode's id); `false` for the other kinds, which end `VALUES (…)`.
fn push_insert_tail<DB>(qb: &mut QueryBuilder<DB>, record: &Record) -> bool
where
    DB: Database,
    String: for<'t> Encode<'t, DB> + Type<DB>,
    i64: for<'t> Encode<'t, DB> + Type<DB>,
{
    match record {
        Record::MemoryRevision(r) => {
            qb.push(" WHERE NOT EXISTS (SELECT 1 FROM memory_revisions WHERE namespace = ")
                .push_bind(r.namespace.clone())
                .push(" AND memory_id = ")
                .push_bind(r.memory_id.clone())
                .push(" AND version = ")
                .push_bind(r.version)
                .push(" AND action = ")
                .push_bind(r.action as i64)
                .push(")");
            true
        }
        Record::Step(r) => {
            qb.push(" FROM episodes WHERE id = ")
                .push_bind(r.episode_id.clone())
                .push(" AND namespace = ")
                .push_bind(r.namespace.clone())
                .push(" ON CONFLICT DO NOTHING");
            true
        }
        _ => false,
    }
}
