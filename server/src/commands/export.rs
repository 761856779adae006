//! `engram-server export`: every record of a database (or of some
//! namespaces) to a JSON Lines file or standard output, from one consistent
//! snapshot — a running server may go on writing meanwhile.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use async_trait::async_trait;
use futures_util::TryStreamExt as _;

use super::files::{WholeFile, human_size};
use super::namespaces::Namespaces;
use super::progress::Progress;
use crate::archive::records::{Kind, Record};
use crate::archive::{End, FORMAT, Frame, Header, NamespaceLine, TIMES, VERSION};
use crate::config::{Config, ExportArgs};
use crate::domain::now_micros;
use crate::store::transfer::Transfer;

/// `--to` that means standard output.
const STDOUT: &str = "-";

/// What an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exported {
    pub namespaces: u64,
    pub records: u64,
}

/// Exports `--database` as `args` say, reporting on standard error.
pub async fn run(config: &Config, args: &ExportArgs) -> anyhow::Result<()> {
    let transfer = super::open_to_read(&config.database()?, config.sqlite_busy_timeout).await?;
    let namespaces = Namespaces::new(args.namespaces.clone());
    let started = Instant::now();
    let (exported, size, place) = if args.to == STDOUT {
        let mut out = Counted::new(std::io::BufWriter::new(std::io::stdout()));
        let exported = write(transfer.as_ref(), &namespaces, &mut ToWriter::new(&mut out)).await?;
        out.flush().context("writing to standard output")?;
        (exported, out.bytes, "standard output".to_owned())
    } else {
        let target = PathBuf::from(&args.to);
        let file = WholeFile::prepare(&target, args.force)?;
        let mut out = std::io::BufWriter::new(file.create()?);
        let exported = write(transfer.as_ref(), &namespaces, &mut ToWriter::new(&mut out))
            .await
            .with_context(|| format!("exporting to {}", target.display()))?;
        out.flush()
            .with_context(|| format!("writing {}", target.display()))?;
        drop(out);
        (exported, file.commit()?, target.display().to_string())
    };
    eprintln!(
        "exported {} records of {} namespaces ({}) to {place} in {:.1}s",
        exported.records,
        exported.namespaces,
        human_size(size),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Where an export's lines go, in order: the header, each namespace's line
/// and records, the end line.
#[async_trait]
pub trait Sink: Send {
    /// Takes a line that is not a record.
    async fn frame(&mut self, frame: &Frame) -> anyhow::Result<()>;

    /// Takes a record's line.
    async fn record(&mut self, record: &Record) -> anyhow::Result<()>;
}

/// Writes the lines to a file or a pipe.
pub struct ToWriter<'a> {
    out: &'a mut (dyn Write + Send),
}

impl<'a> ToWriter<'a> {
    pub fn new(out: &'a mut (dyn Write + Send)) -> Self {
        ToWriter { out }
    }

    fn line(&mut self, value: &impl serde::Serialize) -> anyhow::Result<()> {
        serde_json::to_writer(&mut *self.out, value)?;
        self.out.write_all(b"\n")?;
        Ok(())
    }
}

#[async_trait]
impl Sink for ToWriter<'_> {
    async fn frame(&mut self, frame: &Frame) -> anyhow::Result<()> {
        self.line(frame)
    }

    async fn record(&mut self, record: &Record) -> anyhow::Result<()> {
        self.line(record)
    }
}

/// Passes the records of `namespaces` from one snapshot of `transfer` to
/// `sink`, with progress on standard error. Each record is read from the
/// database as the sink takes the one before: a slow sink slows the
/// reading, it never piles records up.
pub async fn write(
    transfer: &dyn Transfer,
    namespaces: &Namespaces,
    sink: &mut dyn Sink,
) -> anyhow::Result<Exported> {
    let mut snapshot = transfer.snapshot().await?;
    let chosen: Vec<String> = snapshot
        .namespaces()
        .await?
        .into_iter()
        .filter(|ns| namespaces.includes(ns))
        .collect();
    sink.frame(&Frame::Header(Header {
        format: FORMAT.into(),
        version: VERSION,
        times: TIMES.into(),
        exported_at: now_micros(),
        engram_version: env!("CARGO_PKG_VERSION").into(),
    }))
    .await?;
    let mut exported = Exported::default();
    let mut progress = Progress::new();
    for namespace in &chosen {
        let mut counts = std::collections::BTreeMap::new();
        for kind in Kind::ALL {
            let count = snapshot.count(namespace, kind).await?;
            if count > 0 {
                counts.insert(kind, count);
            }
        }
        let total: u64 = counts.values().sum();
        sink.frame(&Frame::Namespace(NamespaceLine {
            namespace: namespace.clone(),
            records: counts,
        }))
        .await?;
        let mut written = 0u64;
        for kind in Kind::ALL {
            let mut records = snapshot.records(namespace, kind);
            while let Some(record) = records.try_next().await? {
                sink.record(&record).await?;
                written += 1;
                progress.tick(|| format!("exporting {namespace}: {written}/{total} records"));
            }
        }
        eprintln!("exported {namespace}: {written} records");
        exported.namespaces += 1;
        exported.records += written;
    }
    sink.frame(&Frame::End(End {
        namespaces: exported.namespaces,
        records: exported.records,
    }))
    .await?;
    Ok(exported)
}

/// A writer that counts what goes through it.
struct Counted<W> {
    inner: W,
    bytes: u64,
}

impl<W> Counted<W> {
    fn new(inner: W) -> Self {
        Counted { inner, bytes: 0 }
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
