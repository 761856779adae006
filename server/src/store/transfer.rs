//! Whole records in and out of a database, for `export` and `import`
//! (see [`crate::transfer`]). A backend offers a consistent snapshot to read
//! every record from, and a transaction that inserts records as they are
//! (ids, times and counters included), telling which already exist; what to
//! make of those is the importer's decision.

pub mod rows;
pub mod tables;

use async_trait::async_trait;
use futures_util::stream::BoxStream;

use crate::error::Result;
use crate::transfer::records::{Kind, Record};

/// A database's records, read and written whole.
#[async_trait]
pub trait Transfer: Send + Sync {
    /// A snapshot of the database as it is now: what it reads agrees with
    /// itself, whatever is written meanwhile.
    async fn snapshot(&self) -> Result<Box<dyn Snapshot + '_>>;

    /// A transaction to import into; dropped uncommitted, it leaves nothing.
    async fn begin_import(&self) -> Result<Box<dyn Importing + '_>>;
}

/// A consistent view of a database to export from.
#[async_trait]
pub trait Snapshot: Send {
    /// Every namespace that holds a record of any kind, in order.
    async fn namespaces(&mut self) -> Result<Vec<String>>;

    /// How many records of `kind` `namespace` holds.
    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64>;

    /// Every record of `kind` in `namespace`, in the order they were first
    /// written (which every listing's tie-breaks follow, so an import that
    /// keeps it lists them alike), read from the database as the stream is
    /// polled: a reader that waits holds back the reading.
    fn records<'a>(&'a mut self, namespace: &str, kind: Kind) -> BoxStream<'a, Result<Record>>;
}

/// What inserting a record did.
#[derive(Debug, Clone, PartialEq)]
pub enum Inserted {
    /// It was stored.
    New,
    /// A record with its key is already there (as returned); nothing was
    /// stored.
    Exists(Box<Record>),
    /// Another record is already there that it may not stand beside (an
    /// identical memory under another id, a rule of the same text, a step
    /// of an episode that is not there); nothing was stored. Says which.
    Refused(String),
}

/// An import transaction.
#[async_trait]
pub trait Importing: Send {
    /// Inserts `record` as it is, unless [`Inserted`] says otherwise. Every
    /// memory inserted is a change of the feed the search indexes follow,
    /// but no change of its history: its revisions are records of their
    /// own ([`Kind::MemoryRevision`]), inserted in the order they come, after
    /// the revisions already there.
    async fn insert(&mut self, record: &Record) -> Result<Inserted>;

    /// How many records of `kind` `namespace` holds, those this
    /// transaction inserted included.
    async fn count(&mut self, namespace: &str, kind: Kind) -> Result<u64>;

    /// Commits everything inserted.
    async fn commit(self: Box<Self>) -> Result<()>;
}
