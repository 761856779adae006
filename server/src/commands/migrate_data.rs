//! `engram-server migrate-data`: every record of one database copied into
//! another — SQLite up to PostgreSQL, or back — by an export of the source
//! read straight into an import of the target, line by line, without a
//! file. Each line goes through the same checks as `import` reading a
//! file, and each namespace is one transaction of the target, which must
//! end up holding exactly the source's records ([`Import::exactly`]): so
//! an interrupted migration is simply run again (the namespaces already
//! copied are found identical), and a target holding anything else is
//! refused before anything of that namespace is committed.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context as _, bail};
use async_trait::async_trait;

use super::export::{Sink, write};
use super::import::Import;
use super::namespaces::Namespaces;
use super::{open_to_read, open_to_write};
use crate::archive::Frame;
use crate::archive::records::{Kind, Record};
use crate::config::{Config, Database, MigrateArgs, beside, parse_database_flag};
use crate::index::{self, IndexOptions};

/// Copies `args.from` into `args.to`, reporting on standard error.
pub async fn run(config: &Config, args: &MigrateArgs) -> anyhow::Result<()> {
    let from = parse_database_flag("--from", &args.from)?;
    let to = parse_database_flag("--to", &args.to)?;
    if from == to {
        bail!("--from and --to name the same database ({from})");
    }
    // A SQLite target's index follows its server's own writes only: no
    // server may run on it, and the next to start indexes the copy.
    // PostgreSQL replicas follow the change feed the copy writes to.
    let _index = match &to {
        Database::Sqlite(path) => Some(
            index::hold(&IndexOptions { dir: beside(path) })
                .context("migrating into a SQLite database needs its server stopped")?,
        ),
        Database::Postgres(_) => None,
    };
    let source = open_to_read(&from, config.sqlite_busy_timeout)
        .await
        .with_context(|| format!("opening --from {from}"))?;
    let target = open_to_write(&to, config.sqlite_busy_timeout)
        .await
        .with_context(|| format!("opening --to {to}"))?;
    eprintln!("migrating {from} into {to}");
    let started = Instant::now();
    let namespaces = Namespaces::new(args.namespaces.clone());
    let mut into = IntoImport {
        import: Import::new(target.as_ref(), namespaces.clone()).exactly(),
    };
    write(source.as_ref(), &namespaces, &mut into).await?;
    let imported = into.import.finish()?;

    let mut by_kind: BTreeMap<Kind, u64> = BTreeMap::new();
    for namespace in &imported {
        for (&kind, &count) in &namespace.records {
            *by_kind.entry(kind).or_default() += count;
        }
    }
    let new: u64 = imported.iter().map(|i| i.new).sum();
    let identical: u64 = imported.iter().map(|i| i.identical).sum();
    let kinds = by_kind
        .iter()
        .map(|(kind, count)| format!("{count} {}", kind.name()))
        .collect::<Vec<_>>()
        .join(", ");
    eprintln!(
        "migrated {} namespaces from {from} to {to} in {:.1}s: {} records ({kinds}); \
         {new} copied, {identical} already there",
        imported.len(),
        started.elapsed().as_secs_f64(),
        new + identical,
    );
    Ok(())
}

/// An export's lines fed to an import as they are made.
struct IntoImport<'t> {
    import: Import<'t>,
}

#[async_trait]
impl Sink for IntoImport<'_> {
    async fn frame(&mut self, frame: &Frame) -> anyhow::Result<()> {
        self.import.line(&serde_json::to_string(frame)?).await
    }

    async fn record(&mut self, record: &Record) -> anyhow::Result<()> {
        self.import.line(&serde_json::to_string(record)?).await
    }
}
