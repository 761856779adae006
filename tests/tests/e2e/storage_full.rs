//! A full disk: writes that add data are refused with RESOURCE_EXHAUSTED
//! "storage is full", every acknowledged write stays, reads, searches and
//! deletes keep working, writes resume by themselves once space is freed,
//! and a server started on a full disk serves reads.
//!
//! The data folder (database, its log, the search index) is a small tmpfs
//! mounted for the test: it needs root, as CI has. A test that cannot mount
//! fails, naming why.
//!
//! SQLite only, whatever the suite's backend: what fills up here is the
//! database file on the server's own disk. A PostgreSQL database lives on
//! the database server's disk, which reports a full disk itself (SQLSTATE
//! 53100, answered as "storage is full" too).

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use engram_client::proto::{self, MemoryType};
use engram_client::{Code, Engram};
use engram_tests::{Server, input, list_all, scope};
use tempfile::TempDir;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// The data folder's size.
const TMPFS_MIB: u64 = 32;
/// Room left beside the filler file, which the memories then fill.
const ROOM_BYTES: u64 = 6 << 20;
/// A memory's content, large so that the disk fills in a few hundred writes.
const CONTENT_WORDS: usize = 2_000;
/// Writes before the disk must have filled.
const MAX_WRITES: usize = 20_000;
/// How long the server may take to notice that space is back.
const RESUME_TIMEOUT: Duration = Duration::from_secs(60);
/// The health service's name for writes (engram_server::server::WRITES_HEALTH).
const WRITES_HEALTH: &str = "engram.writes";

/// A tmpfs mounted on a temporary folder, unmounted when dropped.
struct Tmpfs {
    dir: TempDir,
}

impl Tmpfs {
    fn mount(mib: u64) -> Tmpfs {
        let dir = TempDir::new().expect("temp dir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("run mount");
        assert!(
            mounted.status.success(),
            "this test mounts a {mib} MiB tmpfs as the data folder and needs root (CI runs \
             as root): mount failed: {}",
            String::from_utf8_lossy(&mounted.stderr)
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A file that takes all the room left but `room` bytes.
    fn fill_leaving(&self, room: u64) -> PathBuf {
        let filler = self.path().join("filler");
        let mut file = std::fs::File::create(&filler).expect("create the filler");
        let chunk = vec![0xA5u8; 1 << 16];
        let mut written = 0u64;
        loop {
            match file.write_all(&chunk) {
                Ok(()) => written += chunk.len() as u64,
                Err(err) if err.raw_os_error() == Some(28) => break, // ENOSPC
                Err(err) => panic!("filling the tmpfs: {err}"),
            }
        }
        file.set_len(written.saturating_sub(room))
            .expect("shrink the filler");
        file.sync_all().expect("sync the filler");
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let path = self.dir.path();
        let unmounted = Command::new("umount").arg(path).output();
        if !unmounted.is_ok_and(|out| out.status.success()) {
            // Still busy (a failed test's server not yet reaped): detach it
            // now; it goes once unused.
            let _ = Command::new("umount").arg("-l").arg(path).output();
        }
    }
}

/// A memory's content: a unique marker word, then words that compress badly.
fn content(i: usize) -> String {
    let mut seed = (i as u64).wrapping_mul(6_364_136_223_846_793_005) | 1;
    let mut text = format!("marker{i} ");
    for _ in 0..CONTENT_WORDS {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        text.push_str(&format!("w{:x} ", seed >> 40));
    }
    text
}

async fn create(
    engram: &Engram,
    ns: &proto::Scope,
    i: usize,
) -> Result<proto::Memory, engram_client::Error> {
    let created = engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(ns.clone()),
            memory: Some(input(MemoryType::Fact, &content(i))),
            ..Default::default()
        })
        .await?;
    Ok(created.memory.expect("a created memory"))
}

fn assert_storage_full(err: &engram_client::Error) {
    assert_eq!(err.code(), Code::ResourceExhausted, "{err}");
    assert!(
        err.message().starts_with("storage is full"),
        "{}",
        err.message()
    );
}

async fn health(engram: &Engram, service: &str) -> ServingStatus {
    HealthClient::new(engram.channel())
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .expect("health check")
        .into_inner()
        .status()
}

async fn delete(engram: &Engram, ns: &proto::Scope, id: &str) {
    engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns.clone()),
            id: id.into(),
            etag: String::new(),
        })
        .await
        .expect("a delete works on a full disk");
}

async fn search_ids(engram: &Engram, ns: &proto::Scope, query: &str) -> Vec<String> {
    engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: query.into(),
            limit: 10,
            ..Default::default()
        })
        .await
        .expect("search works on a full disk")
        .hits
        .into_iter()
        .filter_map(|hit| hit.memory.map(|m| m.id))
        .collect()
}

/// Writes memories until the disk is full; returns those acknowledged.
async fn fill(engram: &Engram, ns: &proto::Scope) -> Vec<proto::Memory> {
    let mut acknowledged = Vec::new();
    for i in 0..MAX_WRITES {
        match create(engram, ns, i).await {
            Ok(memory) => acknowledged.push(memory),
            Err(err) => {
                assert_storage_full(&err);
                return acknowledged;
            }
        }
    }
    panic!("{MAX_WRITES} writes did not fill {ROOM_BYTES} bytes");
}

#[tokio::test]
async fn a_full_disk_refuses_writes_keeps_every_acknowledged_one_serves_reads_and_deletes_and_recovers()
 {
    let tmpfs = Tmpfs::mount(TMPFS_MIB);
    let server =
        Server::start_on_data_dir(tmpfs.path(), &["--metrics-listen", "127.0.0.1:0"]).await;
    assert!(
        tmpfs.path().join("engram.db.reserve").exists(),
        "the reserve is written at start"
    );
    let engram = server.client().await;
    let ns = scope("full");
    let filler = tmpfs.fill_leaving(ROOM_BYTES);

    let acknowledged = fill(&engram, &ns).await;
    assert!(acknowledged.len() > 10, "{} writes", acknowledged.len());

    // Every acknowledged write is there, and nothing else.
    let listed: BTreeSet<String> = list_all(&engram, &ns, 100)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect();
    let expected: BTreeSet<String> = acknowledged.iter().map(|m| m.id.clone()).collect();
    assert_eq!(listed, expected);
    // Reads and searches work.
    let first = &acknowledged[0];
    let got = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: first.id.clone(),
        })
        .await
        .expect("a read works on a full disk");
    assert_eq!(got.content, first.content);
    let last = acknowledged.len() - 1;
    assert_eq!(
        search_ids(&engram, &ns, &format!("marker{last}")).await,
        vec![acknowledged[last].id.clone()]
    );

    // The state is reported: health for writes, the gauge.
    assert_eq!(health(&engram, "").await, ServingStatus::Serving);
    assert_eq!(
        health(&engram, "engram.v1.MemoryService").await,
        ServingStatus::Serving
    );
    assert_eq!(
        health(&engram, WRITES_HEALTH).await,
        ServingStatus::NotServing
    );
    assert_eq!(server.scrape().await.value("engram_storage_full", &[]), 1.0);
    let log = server.log();
    assert!(log.contains("storage is full"), "{log}");

    // Writes stay refused; deletes and Forget work.
    assert_storage_full(&create(&engram, &ns, MAX_WRITES).await.expect_err("full"));
    for memory in &acknowledged[..10] {
        delete(&engram, &ns, &memory.id).await;
    }
    engram
        .learning()
        .forget(proto::ForgetRequest {
            scope: Some(ns.clone()),
            kinds: vec![proto::ForgetKind::Memories.into()],
            ..Default::default()
        })
        .await
        .expect("Forget works on a full disk");
    assert!(search_ids(&engram, &ns, "marker0").await.is_empty());

    // Space comes back: writes resume, without a restart.
    std::fs::remove_file(&filler).expect("remove the filler");
    let deadline = Instant::now() + RESUME_TIMEOUT;
    let resumed = loop {
        match create(&engram, &ns, MAX_WRITES + 1).await {
            Ok(memory) => break memory,
            Err(err) => assert_storage_full(&err),
        }
        assert!(Instant::now() < deadline, "writes did not resume");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(health(&engram, WRITES_HEALTH).await, ServingStatus::Serving);
    assert_eq!(server.scrape().await.value("engram_storage_full", &[]), 0.0);
    assert_eq!(
        search_ids(&engram, &ns, &format!("marker{}", MAX_WRITES + 1)).await,
        vec![resumed.id.clone()]
    );
    let remaining = list_all(&engram, &ns, 100).await.len();
    assert_eq!(remaining, acknowledged.len() - 10 + 1);
    let mut server = server;
    server.stop().await;
}

#[tokio::test]
async fn a_server_started_on_a_full_disk_serves_reads_and_says_so_once() {
    let tmpfs = Tmpfs::mount(TMPFS_MIB);
    let mut server = Server::start_on_data_dir(tmpfs.path(), &[]).await;
    let engram = server.client().await;
    let ns = scope("restart");
    let mut stored = BTreeSet::new();
    for i in 0..5 {
        stored.insert(create(&engram, &ns, i).await.expect("room to write").id);
    }
    server.stop().await;
    // No room at all but the reserve the server left.
    let _filler = tmpfs.fill_leaving(0);

    let server = server.start_anew().await;
    let engram = server.client().await;
    let listed: BTreeSet<String> = list_all(&engram, &ns, 100)
        .await
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(listed, stored);
    assert_eq!(search_ids(&engram, &ns, "marker3").await.len(), 1);
    assert_storage_full(&create(&engram, &ns, 99).await.expect_err("full"));
    assert_eq!(
        health(&engram, WRITES_HEALTH).await,
        ServingStatus::NotServing
    );
    let log = server.log();
    assert_eq!(
        log.matches("storage is full at start").count(),
        1,
        "one clear line:\n{log}"
    );
    let mut server = server;
    server.stop().await;
}
