//! The operator subcommands' flags (the server is not started for them).

use std::path::PathBuf;

use clap::Subcommand;

/// Operator commands (the server is not started).
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Rebuilds the full-text search index from the database, with a
    /// progress bar, and exits. The server must be stopped: the index folder
    /// serves one process at a time. (A server also rebuilds a missing or
    /// damaged index by itself at start.)
    Reindex,
    /// Copies the database into a file, consistently, while a server may be
    /// running and writing it, and exits. Restore by stopping the server and
    /// putting the file in place of the database (see the README).
    Backup(BackupArgs),
    /// Writes the database's records (memories, episodes and their steps,
    /// everything learned, agent scopes) as JSON Lines to a file or standard
    /// output, from one consistent snapshot (a server may be running), and
    /// exits. The format is described in the README.
    Export(ExportArgs),
    /// Reads an export into the database (created when missing), one
    /// transaction per namespace; records already there and identical are
    /// skipped, a differing one stops the import. A SQLite server must be
    /// stopped (the next one to start indexes what was imported);
    /// PostgreSQL replicas may keep running and index it from the feed.
    Import(ImportArgs),
    /// Copies every record of one database into another, e.g. from SQLite
    /// up to PostgreSQL (or back): an export of --from read straight into an
    /// import of --to, one transaction per namespace, without a file. The
    /// target must be empty or hold only what an earlier run of the same
    /// migration copied (so an interrupted migration is run again); servers
    /// on --from may keep running (what they write after the start is not
    /// copied), a SQLite --to must have no server.
    MigrateData(MigrateArgs),
}

/// `backup`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub struct BackupArgs {
    /// The file to write the backup to: a SQLite database, which a server
    /// can be started on as it is. It is written under a temporary name in
    /// the same folder and renamed once complete and synced, so FILE is
    /// never a partial copy.
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,

    /// Replace FILE if it already exists (by default an existing file is
    /// left alone and the backup refused).
    #[arg(long)]
    pub force: bool,
}

/// `export`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// Where to write: a file — written under a temporary name in its folder
    /// and renamed once complete, so it is never a partial export — or "-"
    /// for standard output.
    #[arg(long, value_name = "FILE|-")]
    pub to: String,

    /// Export only this namespace; repeat for several. A name ending in *
    /// takes every namespace starting with what precedes it ("team-*").
    /// Default: every namespace.
    #[arg(long = "namespace", value_name = "NAMESPACE")]
    pub namespaces: Vec<String>,

    /// Replace FILE if it already exists (by default the export is refused).
    #[arg(long)]
    pub force: bool,
}

/// `import`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// The export to read (made by `engram-server export`), or "-" for
    /// standard input. A SQLite database is created when missing, and its
    /// server must be stopped; PostgreSQL replicas may keep running.
    #[arg(long, value_name = "FILE|-")]
    pub from: String,

    /// Import only this namespace of the file; repeat for several. A name
    /// ending in * takes every namespace starting with what precedes it
    /// ("team-*"). Default: every namespace in the file.
    #[arg(long = "namespace", value_name = "NAMESPACE")]
    pub namespaces: Vec<String>,
}

/// `migrate-data`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub struct MigrateArgs {
    /// The database to copy from: sqlite://FILE or postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    /// It is only read, from one consistent snapshot: servers on it may keep
    /// running (what they write after the start is not copied — stop them
    /// for a move).
    #[arg(long, value_name = "URL")]
    pub from: String,

    /// The database to copy into: sqlite://FILE (created when missing; no
    /// server may be running on it) or postgres://… (its schema is made or
    /// brought up to date). It must be empty, or hold only what an earlier
    /// run of this migration copied.
    #[arg(long, value_name = "URL")]
    pub to: String,

    /// Copy only this namespace; repeat for several. A name ending in *
    /// takes every namespace starting with what precedes it ("team-*").
    /// Default: every namespace.
    #[arg(long = "namespace", value_name = "NAMESPACE")]
    pub namespaces: Vec<String>,
}
