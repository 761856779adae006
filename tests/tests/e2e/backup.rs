//! `engram-server backup` and restoring what it wrote, against the real
//! server: a backup taken while writes go on holds every write acknowledged
//! before it began, whole; a restored backup serves its data — search
//! included — and nothing written after it.
//!
//! SQLite only, whatever the suite's backend: `backup` copies a SQLite
//! database file (a PostgreSQL database is backed up with its own tools),
//! so every server here keeps its data in one.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use engram_client::Engram;
use engram_client::proto::{self, MemoryType};
use engram_tests::{
    Backend, DATABASE_FILE, Server, create_batch, input, list_all, run_operator_script, scope,
    search, server_binary,
};
use tempfile::TempDir;
use tokio::process::Command;
use tokio::sync::Mutex;

/// A server on a SQLite database file, which is what `backup` copies.
async fn sqlite_server() -> Server {
    Server::start_on_backend(Backend::Sqlite).await
}

/// Concurrent writers during the backup.
const WRITERS: usize = 8;
/// Memories stored before the writers start, so the copy has some work.
const PREFILLED: usize = 4_000;
/// Writes acknowledged before the backup starts, at least.
const ACKED_BEFORE: usize = 200;
/// Writes acknowledged after it started, at least, before the writers stop.
const ACKED_AFTER: usize = 300;
/// The flags the writers read: the backup has started, has finished.
const STARTED: usize = 0;
const FINISHED: usize = 1;

/// A write as the writers made it: what its memory must hold.
#[derive(Debug, Clone, PartialEq)]
struct Written {
    content: String,
    tags: Vec<String>,
    metadata: BTreeMap<String, String>,
    /// Acknowledged before the backup was started.
    before_backup: bool,
    /// Sent after the backup had finished.
    after_backup: bool,
}

/// The memory one writer writes as its `n`th.
fn nth_write(writer: usize, n: usize) -> proto::MemoryInput {
    proto::MemoryInput {
        memory_type: MemoryType::Fact.into(),
        // "w3n7" tells writer 3's fact 7 from writer 7's fact 3 in a search.
        content: format!("writer {writer} stored fact w{writer}n{n} while the backup ran"),
        tags: vec![format!("writer-{writer}")],
        metadata: [("n".to_owned(), n.to_string())].into(),
        importance: Some(0.5),
        ..Default::default()
    }
}

/// Writes until told to stop, recording each acknowledged write by id.
async fn write_until_stopped(
    engram: Engram,
    writer: usize,
    written: Arc<Mutex<HashMap<String, Written>>>,
    backup: Arc<[AtomicBool; 2]>,
    acked: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) {
    let ns = scope("busy");
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) {
        let memory = nth_write(writer, n);
        let after_backup = backup[FINISHED].load(Ordering::SeqCst);
        let created = engram
            .memory()
            .create_memory(proto::CreateMemoryRequest {
                scope: Some(ns.clone()),
                memory: Some(memory.clone()),
                ..Default::default()
            })
            .await
            .expect("create");
        // Read after the answer came: false means it came before the flag
        // was set, which is before the backup was started.
        let before_backup = !backup[STARTED].load(Ordering::SeqCst);
        let id = created.memory.expect("the memory").id;
        written.lock().await.insert(
            id,
            Written {
                content: memory.content,
                tags: memory.tags,
                metadata: memory.metadata.into_iter().collect(),
                before_backup,
                after_backup,
            },
        );
        acked.fetch_add(1, Ordering::SeqCst);
        n += 1;
    }
}

async fn backup_command(server: &Server, to: &std::path::Path) -> std::process::Output {
    Command::new(server_binary())
        .args(["backup", "--database", &server.database_url(), "--to"])
        .arg(to)
        .output()
        .await
        .expect("run engram-server backup")
}

#[tokio::test]
async fn a_backup_taken_while_writes_go_on_holds_every_write_acknowledged_before_it_whole() {
    let server = sqlite_server().await;
    let engram = server.client().await;
    let ns = scope("busy");
    for batch in 0..PREFILLED / 500 {
        let memories = (0..500)
            .map(|i| input(MemoryType::Note, &format!("prefilled note {batch}-{i}")))
            .collect();
        create_batch(&engram, &ns, memories).await;
    }

    let written = Arc::new(Mutex::new(HashMap::new()));
    let backup = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let acked = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            tokio::spawn(write_until_stopped(
                engram.clone(),
                writer,
                written.clone(),
                backup.clone(),
                acked.clone(),
                stop.clone(),
            ))
        })
        .collect();
    while acked.load(Ordering::SeqCst) < ACKED_BEFORE {
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }

    let backups = TempDir::new().expect("temp dir");
    let file = backups.path().join("busy.db");
    backup[STARTED].store(true, Ordering::SeqCst);
    let acked_at_start = acked.load(Ordering::SeqCst);
    let output = backup_command(&server, &file).await;
    backup[FINISHED].store(true, Ordering::SeqCst);
    let acked_during = acked.load(Ordering::SeqCst) - acked_at_start;
    let report = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{report}");
    assert!(report.contains("backed up"), "{report}");
    assert!(acked_during > 0, "writes went on during the backup");
    let acked_at_end = acked.load(Ordering::SeqCst);
    while acked.load(Ordering::SeqCst)
        < (acked_at_start + ACKED_AFTER).max(acked_at_end + WRITERS + 1)
    {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.await.expect("writer");
    }
    let written = written.lock().await.clone();

    // The copy opens as a database of its own.
    let restored_dir = TempDir::new().expect("temp dir");
    std::fs::copy(&file, restored_dir.path().join(DATABASE_FILE)).expect("copy the backup");
    let restored = Server::start_in(restored_dir).await;
    let copy = restored.client().await;
    let memories = list_all(&copy, &ns, 1000).await;

    let mut from_writers = 0;
    for memory in &memories {
        if memory.content.starts_with("prefilled note") {
            continue;
        }
        let expected = written
            .get(&memory.id)
            .unwrap_or_else(|| panic!("{} was never acknowledged: {memory:?}", memory.id));
        assert_eq!(memory.content, expected.content, "{}", memory.id);
        assert_eq!(memory.tags, expected.tags, "{}", memory.id);
        assert_eq!(
            memory
                .metadata
                .clone()
                .into_iter()
                .collect::<BTreeMap<_, _>>(),
            expected.metadata,
            "{}",
            memory.id
        );
        from_writers += 1;
    }
    let prefilled = memories.len() - from_writers;
    assert_eq!(prefilled, PREFILLED, "every prefilled memory");
    let by_id: HashMap<&str, &proto::Memory> =
        memories.iter().map(|m| (m.id.as_str(), m)).collect();
    let before: Vec<&String> = written
        .iter()
        .filter(|(_, w)| w.before_backup)
        .map(|(id, _)| id)
        .collect();
    assert!(before.len() >= ACKED_BEFORE);
    for id in before {
        assert!(
            by_id.contains_key(id.as_str()),
            "{id} was acknowledged before the backup began but is not in it"
        );
    }
    let later: Vec<&String> = written
        .iter()
        .filter(|(_, w)| w.after_backup)
        .map(|(id, _)| id)
        .collect();
    assert!(!later.is_empty());
    for id in later {
        assert!(
            !by_id.contains_key(id.as_str()),
            "{id} was written after the backup finished but is in it"
        );
    }

    // Search works on the copy: its index is built from it.
    let hits = found(&copy, &ns, "stored fact w3n7").await;
    assert_eq!(hits[0], nth_write(3, 7).content);
}

#[tokio::test]
async fn a_backup_never_replaces_a_file_unless_forced() {
    let server = sqlite_server().await;
    let dir = TempDir::new().expect("temp dir");
    let file = dir.path().join("taken.db");
    std::fs::write(&file, "precious").expect("write");
    let refused = backup_command(&server, &file).await;
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("already exists"), "{message}");
    assert!(message.contains("--force"), "{message}");
    assert_eq!(std::fs::read(&file).expect("read"), b"precious");

    let forced = Command::new(server_binary())
        .args(["backup", "--database", &server.database_url(), "--force"])
        .arg("--to")
        .arg(&file)
        .output()
        .await
        .expect("run engram-server backup");
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
    assert_ne!(std::fs::read(&file).expect("read"), b"precious");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("list").count(),
        1,
        "no temporary file is left beside it"
    );

    let missing = Command::new(server_binary())
        .args(["backup", "--database"])
        .arg(format!("sqlite://{}", dir.path().join("none.db").display()))
        .arg("--to")
        .arg(dir.path().join("copy.db"))
        .output()
        .await
        .expect("run engram-server backup");
    assert!(!missing.status.success());
    let message = String::from_utf8_lossy(&missing.stderr);
    assert!(message.contains("there is no database at"), "{message}");
    assert!(!dir.path().join("copy.db").exists());
}

/// The contents of the hits of `query` in `ns`, best first.
async fn found(engram: &Engram, ns: &proto::Scope, query: &str) -> Vec<String> {
    search(
        engram,
        proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: query.into(),
            limit: 50,
            ..Default::default()
        },
    )
    .await
    .into_iter()
    .map(|hit| hit.memory.expect("memory").content)
    .collect()
}

#[tokio::test]
async fn a_restored_backup_serves_its_data_and_nothing_written_after_it() {
    let mut server = sqlite_server().await;
    let engram = server.client().await;
    let ns = scope("restore");
    let mut ids = Vec::new();
    for i in 0..20 {
        let content = format!("alpha fact {i} from before the backup");
        let created = engram_tests::create(&engram, &ns, input(MemoryType::Fact, &content)).await;
        ids.push(created.memory.expect("memory").id);
    }
    let backed_up = list_all(&engram, &ns, 100).await;

    // readme: tests/operator/backup.sh, with the server running.
    run_operator_script("backup.sh", server.data_dir()).await;

    // After the backup: new memories, a deletion and an update — all of
    // them committed to the search index before the server stops.
    for i in 0..10 {
        let content = format!("omega fact {i} from after the backup");
        engram_tests::create(&engram, &ns, input(MemoryType::Fact, &content)).await;
    }
    engram
        .memory()
        .delete_memory(proto::DeleteMemoryRequest {
            scope: Some(ns.clone()),
            id: ids[0].clone(),
            etag: String::new(),
        })
        .await
        .expect("delete");
    engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(ns.clone()),
            id: ids[1].clone(),
            memory: Some(input(MemoryType::Fact, "omega rewrite after the backup")),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into()],
            }),
            etag: String::new(),
        })
        .await
        .expect("update");
    assert_eq!(found(&engram, &ns, "omega").await.len(), 11);
    server.stop().await;

    // readme: tests/operator/restore.sh, with the server stopped; the index
    // folder, which has the later writes, stays where it is.
    assert!(server.index_dir().join("meta.json").exists());
    run_operator_script("restore.sh", server.data_dir()).await;
    let restored = server.start_anew().await;
    let engram = restored.client().await;

    assert_eq!(list_all(&engram, &ns, 100).await, backed_up);
    assert_eq!(
        found(&engram, &ns, "omega").await,
        Vec::<String>::new(),
        "nothing written after the backup is found"
    );
    let alphas = found(&engram, &ns, "alpha").await;
    assert_eq!(alphas.len(), 20, "{alphas:?}");
    assert!(alphas.contains(&"alpha fact 1 from before the backup".to_owned()));
    let log = restored.log();
    assert!(
        log.contains("rebuilding the search index: it was built from another database"),
        "{log}"
    );

    // The deleted memory is back, as the backup had it.
    let got = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: ids[0].clone(),
        })
        .await
        .expect("get");
    assert_eq!(got.content, "alpha fact 0 from before the backup");
}
