//! `engram-server import`: reads an export into a database, creating it
//! when missing.
//!
//! What it decides:
//! - **Each namespace is one transaction**: imported whole or not at all.
//!   A problem stops the import at once, naming the line: the namespaces
//!   before it stay imported, the one it is in is not, and nothing after it
//!   is read.
//! - **Nothing is overwritten, nothing is doubled**: a record whose key
//!   (its id; a step's episode and number; a memory revision's memory,
//!   version and action; an agent scope's agent) is already in the
//!   database is skipped when identical to the file's (but for access
//!   counts, which every search changes) and stops the import when it
//!   differs — so importing a file twice changes nothing, and an import
//!   stopped half-way can simply be run again once the problem is fixed. A record that may not stand beside one already
//!   there (an identical memory under another id) stops the import too.
//! - **History comes as it was**: a memory's revisions are records of their
//!   own, stored as the file has them (action, time, actor, changed fields,
//!   version, order), so its history lists as it did where it was exported.
//!   A file older than [`FIRST_WITH_HISTORY`] has none: each memory it
//!   brings gets the one revision an import gave it then — created, at its
//!   create time, by no one — and a revision record in it is refused.
//! - **Only with the server stopped**: a running server would not see
//!   what is imported behind its back until it wrote something itself. The
//!   import holds the search index folder as a server does, so it refuses
//!   to run beside a server and no server starts until it is done; the next
//!   server to start indexes the imported memories from the change feed
//!   (and embeds them, with an embedder).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, anyhow, bail};

use super::namespaces::Namespaces;
use super::progress::Progress;
use crate::archive::records::{Kind, MemoryRecord, MemoryRevisionRecord, Record};
use crate::archive::{End, FIRST_WITH_HISTORY, FORMAT, Frame, NamespaceLine, TIMES, VERSION};
use crate::config::{Config, Database, ImportArgs};
use crate::index::{self, IndexOptions};
use crate::store::transfer::{Importing, Inserted, Transfer};

/// `--from` that means standard input.
const STDIN: &str = "-";

/// What one namespace's import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub namespace: String,
    /// The records read, by kind (kinds with none left out).
    pub records: BTreeMap<Kind, u64>,
    /// Records stored.
    pub new: u64,
    /// Records already there, identical, skipped.
    pub identical: u64,
}

/// Imports `args.from` into `--database`, reporting on standard error.
pub async fn run(config: &Config, args: &ImportArgs) -> anyhow::Result<()> {
    let database = config.database()?;
    // A SQLite server's index follows its own writes only: it must be
    // stopped, and the next one to start indexes the import. PostgreSQL
    // replicas follow the database's change feed, which the import writes
    // to, so they may keep running.
    let _index = match database {
        Database::Sqlite(_) => Some(
            index::hold(&IndexOptions {
                dir: config.index_dir()?,
            })
            .context("import needs the server stopped")?,
        ),
        Database::Postgres(_) => None,
    };
    let transfer = super::open_to_write(&database, config.sqlite_busy_timeout).await?;
    let namespaces = Namespaces::new(args.namespaces.clone());
    let started = Instant::now();
    let input: Box<dyn BufRead + Send> = if args.from == STDIN {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        let file = std::fs::File::open(Path::new(&args.from))
            .with_context(|| format!("cannot open {}", args.from))?;
        Box::new(std::io::BufReader::new(file))
    };
    let imported = read(transfer.as_ref(), &namespaces, input).await?;
    let new: u64 = imported.iter().map(|i| i.new).sum();
    let identical: u64 = imported.iter().map(|i| i.identical).sum();
    let indexed = match database {
        Database::Sqlite(_) => "the next server to start indexes them",
        Database::Postgres(_) => "running replicas index them from the change feed",
    };
    eprintln!(
        "imported {new} records of {} namespaces into {database} in {:.1}s ({identical} already there, identical, skipped); \
         {indexed}",
        imported.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Reads an export from `input` into `transfer`, one transaction per
/// namespace; returns what each namespace's import did. On error, says
/// which namespaces were imported before it.
pub async fn read(
    transfer: &dyn Transfer,
    namespaces: &Namespaces,
    input: impl BufRead,
) -> anyhow::Result<Vec<Imported>> {
    let mut import = Import::new(transfer, namespaces.clone());
    for (index, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("reading line {}", index + 1))?;
        import.line(&line).await?;
    }
    import.finish()
}

/// An import fed an export line by line, as [`read`] feeds it a file's
/// and `migrate-data` the lines an export of another database makes.
pub struct Import<'t> {
    reader: Reader<'t>,
    /// The number of the last line fed.
    last: usize,
}

impl<'t> Import<'t> {
    /// An import of `namespaces` into `transfer`.
    pub fn new(transfer: &'t dyn Transfer, namespaces: Namespaces) -> Self {
        Import {
            reader: Reader {
                transfer,
                namespaces,
                exact: false,
                group: None,
                done: Vec::new(),
                records: 0,
                groups: 0,
                version: 0,
                started: false,
                ended: false,
                progress: Progress::new(),
            },
            last: 0,
        }
    }

    /// Refuses, before its commit, a namespace of which the database then
    /// holds records that the lines did not bring: the database must end up
    /// holding exactly the namespace's records, no more.
    pub fn exactly(mut self) -> Self {
        self.reader.exact = true;
        self
    }

    /// Reads the next line (without its newline). An error names the line,
    /// says what was imported before it, and ends the import: the namespace
    /// it is in is rolled back.
    pub async fn line(&mut self, line: &str) -> anyhow::Result<()> {
        self.last += 1;
        let read = self.reader.line(self.last, line).await;
        read.map_err(|err| self.reader.failed(err))
    }

    /// Checks that the lines were a whole export; returns what each
    /// namespace's import did.
    pub fn finish(mut self) -> anyhow::Result<Vec<Imported>> {
        if !self.reader.ended {
            let last = self.last;
            let err = if last == 0 {
                anyhow!("the file is empty: not an Engram export")
            } else {
                anyhow!(
                    "the file ends at line {last} without its end line: it is incomplete (cut short?)"
                )
            };
            return Err(self.reader.failed(err));
        }
        Ok(self.reader.done)
    }
}

/// A namespace being imported.
struct Group<'t> {
    namespace: String,
    /// The line that opened it.
    line: usize,
    expected: BTreeMap<Kind, u64>,
    seen: BTreeMap<Kind, u64>,
    /// `None` when the namespace is not chosen: its records are read and
    /// checked, not imported.
    tx: Option<Box<dyn Importing + 't>>,
    imported: Imported,
}

struct Reader<'t> {
    transfer: &'t dyn Transfer,
    namespaces: Namespaces,
    /// Whether a namespace must end up holding only the records read (see
    /// [`Import::exactly`]).
    exact: bool,
    group: Option<Group<'t>>,
    done: Vec<Imported>,
    /// Records and groups read so far, for the end line's check.
    records: u64,
    groups: u64,
    /// The file's format version, once the header has been read.
    version: u32,
    /// Whether the header has been read.
    started: bool,
    ended: bool,
    progress: Progress,
}

impl<'t> Reader<'t> {
    async fn line(&mut self, number: usize, line: &str) -> anyhow::Result<()> {
        if line.trim().is_empty() {
            return Ok(());
        }
        if self.ended {
            bail!("line {number}: there is more after the end line");
        }
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| anyhow!("line {number}: not a JSON object ({e})"))?;
        let kind = value
            .get("kind")
            .and_then(|k| k.as_str())
            .ok_or_else(|| anyhow!("line {number}: no \"kind\""))?
            .to_owned();
        let is_frame = matches!(kind.as_str(), "header" | "namespace" | "end");
        if !self.started {
            self.started = true;
            self.version = header(number, value)?;
            return Ok(());
        }
        if kind == "header" {
            bail!("line {number}: a second header");
        }
        if is_frame {
            let frame: Frame =
                serde_json::from_value(value).map_err(|e| anyhow!("line {number}: {e}"))?;
            match frame {
                Frame::Namespace(opened) => self.open(number, opened).await,
                Frame::End(end) => self.end(number, end).await,
                Frame::Header(_) => bail!("line {number}: a second header"),
            }
        } else {
            let record: Record =
                serde_json::from_value(value).map_err(|e| anyhow!("line {number}: {kind}: {e}"))?;
            self.record(number, record.with_defaults()).await
        }
    }

    /// Starts the group a namespace line opens.
    async fn open(&mut self, number: usize, opened: NamespaceLine) -> anyhow::Result<()> {
        self.close().await?;
        if self.done.iter().any(|d| d.namespace == opened.namespace) {
            bail!(
                "line {number}: namespace {} has a second group",
                opened.namespace
            );
        }
        let tx = if self.namespaces.includes(&opened.namespace) {
            Some(self.transfer.begin_import().await?)
        } else {
            None
        };
        self.groups += 1;
        self.group = Some(Group {
            imported: Imported {
                namespace: opened.namespace.clone(),
                records: BTreeMap::new(),
                new: 0,
                identical: 0,
            },
            namespace: opened.namespace,
            line: number,
            expected: opened.records,
            seen: BTreeMap::new(),
            tx,
        });
        Ok(())
    }

    async fn record(&mut self, number: usize, record: Record) -> anyhow::Result<()> {
        let described = record.describe();
        record
            .validate()
            .map_err(|problem| anyhow!("line {number}: {described}: {problem}"))?;
        if record.kind() == Kind::MemoryRevision && self.version < FIRST_WITH_HISTORY {
            bail!(
                "line {number}: {described}: a file of format version {} holds no history \
                 (memory_revision records came with version {FIRST_WITH_HISTORY})",
                self.version
            );
        }
        let Some(group) = &mut self.group else {
            bail!("line {number}: {described} comes before any namespace line");
        };
        if record.namespace() != group.namespace {
            bail!(
                "line {number}: {described} is of namespace {}, in the group of namespace {}",
                record.namespace(),
                group.namespace
            );
        }
        *group.seen.entry(record.kind()).or_default() += 1;
        self.records += 1;
        let Some(tx) = &mut group.tx else {
            return Ok(());
        };
        match tx.insert(&record).await? {
            Inserted::New => {
                group.imported.new += 1;
                if let Record::Memory(memory) = &record
                    && self.version < FIRST_WITH_HISTORY
                {
                    record_creation(tx.as_mut(), memory)
                        .await
                        .map_err(|err| anyhow!("line {number}: {described}: {err:#}"))?;
                }
            }
            Inserted::Exists(existing) => {
                let differences = differences(&existing, &record);
                if !differences.is_empty() {
                    bail!(
                        "line {number}: {described} is already in the database and differs from \
                         the file's in {}; import never overwrites: import into a fresh database, \
                         or leave this namespace out (--namespace)",
                        differences.join(", ")
                    );
                }
                group.imported.identical += 1;
            }
            Inserted::Refused(reason) => {
                bail!("line {number}: {described} cannot be imported: {reason}")
            }
        }
        let expected: u64 = group.expected.values().sum();
        let read: u64 = group.seen.values().sum();
        let namespace = &group.namespace;
        self.progress
            .tick(|| format!("importing {namespace}: {read}/{expected} records"));
        Ok(())
    }

    /// Checks the open group against its namespace line and commits it.
    async fn close(&mut self) -> anyhow::Result<()> {
        let Some(group) = self.group.take() else {
            return Ok(());
        };
        for kind in Kind::ALL {
            let expected = group.expected.get(&kind).copied().unwrap_or(0);
            let seen = group.seen.get(&kind).copied().unwrap_or(0);
            if expected != seen {
                bail!(
                    "namespace {} (opened at line {}) should hold {expected} {} records, the file has {seen}",
                    group.namespace,
                    group.line,
                    kind.name()
                );
            }
        }
        if let Some(mut tx) = group.tx {
            if self.exact {
                only_these(tx.as_mut(), &group.namespace, &group.expected).await?;
            }
            tx.commit().await?;
            eprintln!(
                "imported {}: {} records ({} already there)",
                group.namespace, group.imported.new, group.imported.identical
            );
            let mut imported = group.imported;
            imported.records = group.seen;
            self.done.push(imported);
        }
        Ok(())
    }

    async fn end(&mut self, number: usize, end: End) -> anyhow::Result<()> {
        self.close().await?;
        if end.records != self.records || end.namespaces != self.groups {
            bail!(
                "line {number}: the end line counts {} records in {} namespaces, the file has {} in {}",
                end.records,
                end.namespaces,
                self.records,
                self.groups
            );
        }
        self.ended = true;
        Ok(())
    }

    /// `err`, saying what was imported before it and what was not.
    fn failed(&mut self, err: anyhow::Error) -> anyhow::Error {
        let imported: Vec<&str> = self.done.iter().map(|d| d.namespace.as_str()).collect();
        let mut told = format!("{err:#}");
        if let Some(group) = self.group.take().filter(|g| g.tx.is_some()) {
            told.push_str(&format!(
                "\nnothing of namespace {} was imported",
                group.namespace
            ));
        }
        if imported.is_empty() {
            told.push_str("\nno namespace was imported");
        } else {
            told.push_str(&format!(
                "\nimported before the problem (each whole): {}",
                imported.join(", ")
            ));
        }
        anyhow!(told)
    }
}

/// Checks that `namespace` holds no more records of any kind than the
/// `expected` ones, which were all read and either stored or found there:
/// then it holds those and nothing else.
async fn only_these(
    tx: &mut dyn Importing,
    namespace: &str,
    expected: &BTreeMap<Kind, u64>,
) -> anyhow::Result<()> {
    for kind in Kind::ALL {
        let expected = expected.get(&kind).copied().unwrap_or(0);
        let held = tx.count(namespace, kind).await?;
        if held != expected {
            bail!(
                "namespace {namespace} of the target would hold {held} {} records, the source has \
                 {expected}: the target holds records the source does not; migrate only into an \
                 empty database, or one holding the same records (a migration run again)",
                kind.name()
            );
        }
    }
    Ok(())
}

/// Records the creation of `memory`, new from a file without history, as
/// imports did before history was exported. A creation already recorded
/// (the memory was imported before, and deleted since) is left as it is.
async fn record_creation(tx: &mut dyn Importing, memory: &MemoryRecord) -> anyhow::Result<()> {
    let created = Record::MemoryRevision(MemoryRevisionRecord::stored(memory));
    match tx.insert(&created).await? {
        Inserted::New | Inserted::Exists(_) => Ok(()),
        Inserted::Refused(reason) => bail!("its creation cannot be recorded: {reason}"),
    }
}

/// Checks the first line: an Engram export of a version this server reads.
/// Returns the version.
fn header(number: usize, value: serde_json::Value) -> anyhow::Result<u32> {
    let not_ours = || anyhow!("line {number}: not an Engram export (no {FORMAT} header)");
    let Ok(Frame::Header(header)) = serde_json::from_value::<Frame>(value) else {
        return Err(not_ours());
    };
    if header.format != FORMAT {
        return Err(not_ours());
    }
    if header.version == 0 {
        bail!("line {number}: the file has format version 0, which no engram-server writes");
    }
    if header.version > VERSION {
        bail!(
            "line {number}: the file has format version {}, written by engram-server {}; this \
             engram-server reads up to version {VERSION}: import it with a newer one",
            header.version,
            header.engram_version
        );
    }
    if header.times != TIMES {
        bail!(
            "line {number}: times are {:?}, this engram-server reads {TIMES:?}",
            header.times
        );
    }
    Ok(header.version)
}

/// Bookkeeping that every search changes: a record that differs only in
/// these is the same record, used since.
const BOOKKEEPING: [&str; 2] = ["access_count", "last_access_time"];

/// The fields in which two records of the same kind differ, bookkeeping
/// aside.
fn differences(a: &Record, b: &Record) -> Vec<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return vec!["everything".into()];
    };
    a.iter()
        .filter(|(field, value)| {
            b.get(*field) != Some(value) && !BOOKKEEPING.contains(&field.as_str())
        })
        .map(|(field, _)| field.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_that_differ_only_in_access_bookkeeping_are_the_same() {
        let line = r#"{"kind":"memory","id":"m1","namespace":"n","agent_id":"","user_id":"",
            "project_id":"","session_id":"","level":"global","memory_type":"fact","content":"c",
            "summary":"","tags":[],"metadata":{},"importance":0.5,"confidence":1.0,
            "source":"explicit","seen_count":1,"access_count":0,"last_access_time":null,
            "create_time":1,"update_time":1,"expire_time":null,"occurred_at":1,
            "origin_session_id":"","version":1}"#;
        let record: Record = serde_json::from_str(line).expect("a memory");
        let Record::Memory(mut used) = record.clone() else {
            unreachable!("a memory")
        };
        used.access_count = 3;
        used.last_access_time = Some(9);
        assert!(differences(&record, &Record::Memory(used.clone())).is_empty());
        used.content = "changed".into();
        used.version = 2;
        assert_eq!(
            differences(&record, &Record::Memory(used)),
            ["content", "version"]
        );
    }
}
