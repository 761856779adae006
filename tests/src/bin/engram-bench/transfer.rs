//! `transfer`: backup under writes, export, import and the first start on
//! the import.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, scope};

use crate::footprint::disk_mib;
use crate::start;
use crate::text::Text;
use crate::workload::{create_request, fill};

/// Runs `engram-server` with `args`; fails with its standard error unless
/// it succeeds.
async fn operator(args: &[&str]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let output = tokio::process::Command::new(engram_tests::server_binary())
        .args(args)
        .output()
        .await?;
    if !output.status.success() {
        bail!(
            "engram-server {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(started.elapsed())
}

fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

pub async fn transfer(
    memories: usize,
    namespaces: usize,
    concurrency: usize,
) -> anyhow::Result<()> {
    let mut server = start(None, &[]).await;
    let engram = server.client().await;
    let mut rng = Text::new(7);
    let started = Instant::now();
    for n in 0..namespaces {
        let count = memories / namespaces + usize::from(n < memories % namespaces);
        fill(
            &[engram.memory()],
            &scope(&format!("tenant-{n}")),
            MemoryType::Fact,
            &mut rng,
            0,
            count,
        )
        .await?;
    }
    println!(
        "filled {memories} memories in {namespaces} namespaces in {:.1}s; database folder {:.1} MiB",
        started.elapsed().as_secs_f64(),
        disk_mib(&server)
    );

    let work = tempfile::TempDir::new()?;
    let database = server.database_url();
    let backup = work.path().join("backup.db");
    let writing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let writers: Vec<_> = (0..concurrency)
        .map(|writer| {
            let (client, writing) = (engram.memory(), writing.clone());
            tokio::spawn(async move {
                let namespace = scope("writers");
                let mut written = 0usize;
                while writing.load(std::sync::atomic::Ordering::SeqCst) {
                    let content = format!("writer {writer} fact {written}");
                    client
                        .clone()
                        .create_memory(create_request(&namespace, content))
                        .await?;
                    written += 1;
                }
                anyhow::Ok(written)
            })
        })
        .collect();
    let backup_time = operator(&[
        "backup",
        "--database",
        &database,
        "--to",
        backup.to_str().context("path")?,
    ])
    .await?;
    writing.store(false, std::sync::atomic::Ordering::SeqCst);
    let mut written = 0;
    for writer in writers {
        written += writer.await??;
    }
    println!(
        "backup: {:.2}s, {:.1} MB, while {written} creates were acknowledged ({concurrency} in flight)",
        backup_time.as_secs_f64(),
        file_mb(&backup)
    );

    let export = work.path().join("export.jsonl");
    let export_time = operator(&[
        "export",
        "--database",
        &database,
        "--to",
        export.to_str().context("path")?,
    ])
    .await?;
    println!(
        "export: {:.2}s, {:.1} MB",
        export_time.as_secs_f64(),
        file_mb(&export)
    );
    server.stop().await;

    let target = tempfile::TempDir::new()?;
    let imported = format!("sqlite://{}", target.path().join("engram.db").display());
    let import_time = operator(&[
        "import",
        "--database",
        &imported,
        "--from",
        export.to_str().context("path")?,
    ])
    .await?;
    let database_mb: f64 = ["engram.db", "engram.db-wal"]
        .iter()
        .map(|file| file_mb(&target.path().join(file)))
        .sum();
    println!(
        "import: {:.2}s, database {database_mb:.1} MB",
        import_time.as_secs_f64()
    );
    let started = Instant::now();
    let server = Server::start_in(target).await;
    println!(
        "first start on the import (indexing it): {:.2}s",
        started.elapsed().as_secs_f64()
    );
    let stats = server
        .client()
        .await
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope("tenant-0")),
        })
        .await?;
    let count: i64 = stats.memories_per_type.iter().map(|t| t.count).sum();
    println!("tenant-0 after the import: {count} memories");
    Ok(())
}
