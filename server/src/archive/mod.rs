//! The archive: the file `engram-server export` writes a database's records
//! to and `engram-server import` reads them from, into a database of this
//! backend or another one (see [`crate::commands`]).
//!
//! The file is JSON Lines: one JSON object a line, each with a `kind`.
//!
//! ```text
//! {"kind":"header","format":"engram-export","version":4,"times":"unix_micros",...}
//! {"kind":"namespace","namespace":"a","records":{"memory":2,"memory_revision":5,...}}
//! {"kind":"memory","id":"0196…","namespace":"a",...}
//! {"kind":"memory",...}
//! {"kind":"memory_revision","namespace":"a","memory_id":"0196…","version":1,...}
//! ...
//! {"kind":"episode",...}
//! {"kind":"step",...}
//! {"kind":"namespace","namespace":"b","records":{...}}
//! ...
//! {"kind":"end","namespaces":2,"records":57}
//! ```
//!
//! The first line is the [`Header`]: a reader refuses a file of another
//! format or of a newer version than it knows. Then each namespace's
//! records, as a group that opens with a [`NamespaceLine`] counting them by
//! kind, in the order of [`records::Kind::ALL`] and, within a kind, in the
//! order they were first written. The last line is the [`End`], so a file
//! cut short is told from a complete one. The records are described in
//! [`records`].
//!
//! Versions: 1 holds every kind but `memory_revision`; 2 adds memories'
//! history ([`FIRST_WITH_HISTORY`]); 3 adds links between memories
//! (`memory_link`), entities and their names (`entity`, `entity_name`); 4
//! adds which entities each memory names (`memory_entity`) and what the
//! model read it to state of them (`memory_relation`); 5 adds where each
//! memory came from (`memory_provenance`). A version 1 file is
//! still read: its memories are imported with the history imports gave them then (see
//! [`crate::commands::import`]). A file before 4 has no links to
//! entities: its memories name theirs again once imported, as the rules
//! find them (the server's entity backfill reads every imported memory).

pub mod records;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use self::records::Kind;
use crate::domain::Micros;

/// The header's `format`.
pub const FORMAT: &str = "engram-export";
/// The version of the format this server writes, and the newest it reads.
pub const VERSION: u32 = 5;
/// The first version whose files carry memories' history
/// (`memory_revision` records).
pub const FIRST_WITH_HISTORY: u32 = 2;
/// The header's `times`: how every time in the file is written.
pub const TIMES: &str = "unix_micros";

/// The first line of a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format's version: [`VERSION`] for this server.
    pub version: u32,
    /// Always [`TIMES`]: microseconds since the Unix epoch, UTC.
    pub times: String,
    /// When the export was taken.
    pub exported_at: Micros,
    /// The version of the engram-server that wrote it.
    pub engram_version: String,
}

/// Opens a namespace's group of records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceLine {
    pub namespace: String,
    /// How many records of each kind follow (kinds with none left out).
    pub records: BTreeMap<Kind, u64>,
}

/// The last line of a complete file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    /// How many namespace groups the file holds.
    pub namespaces: u64,
    /// How many records, all namespaces together.
    pub records: u64,
}

/// A line that is not a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Frame {
    Header(Header),
    Namespace(NamespaceLine),
    End(End),
}
