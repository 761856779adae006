//! A running `engram-server` process: how it is spawned and what can be
//! read of it. `start` has the ways to start one, `lifecycle` stops,
//! signals and restarts it, `metrics` scrapes it, and `storage` is where
//! it keeps its data.

mod lifecycle;
mod metrics;
mod start;
mod storage;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use engram_client::Engram;
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use crate::backend::Backend;
use storage::{Storage, database_url, index_dir};

pub use start::refuses_to_start;
pub use storage::DATABASE_FILE;

/// How long a server may take to start or stop.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// `--listen` for a server on any free port.
const ANY_PORT: &str = "127.0.0.1:0";

/// A running `engram-server` process with its own database.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `127.0.0.1:PORT` of the metrics endpoint, with `--metrics-listen`.
    pub metrics: Option<String>,
    dir: Arc<TempDir>,
    /// The folder of the database and its index: `dir`, or another (e.g. a
    /// small file system mounted for the test) with the log kept in `dir`.
    data: PathBuf,
    binary: PathBuf,
    extra_args: Vec<String>,
    envs: Vec<(String, String)>,
    storage: Storage,
}

impl Server {
    async fn start_with(
        dir: Arc<TempDir>,
        binary: PathBuf,
        extra_args: Vec<String>,
        envs: Vec<(String, String)>,
        listen: &str,
        data: Option<PathBuf>,
        storage: Option<Storage>,
    ) -> Server {
        let data = data.unwrap_or_else(|| dir.path().to_owned());
        let storage = match storage {
            Some(storage) => storage,
            None => Storage::fresh(Backend::from_env()).await,
        };
        let mut database_args = vec!["--database".to_owned(), database_url(&storage, &data)];
        if matches!(storage, Storage::Postgres(_) | Storage::PostgresAt(..))
            && !extra_args.iter().any(|arg| arg == "--index-dir")
        {
            // No database file to put the index beside: it goes where it
            // would be beside one, so `index_dir` holds for both backends
            // (unless the test names a folder itself).
            database_args.push("--index-dir".to_owned());
            database_args.push(index_dir(&data).display().to_string());
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.path().join("server.log"))
            .expect("server log");
        let mut child = Command::new(&binary)
            .args(["--listen", listen])
            .args(&database_args)
            // Tests may raise it through their own environment.
            .env("ENGRAM_LOG", "info")
            .args(&extra_args)
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("spawn engram-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        // The metrics address, if any, comes first; the gRPC address last,
        // once the server serves.
        let mut metrics = None;
        let address = loop {
            let line = tokio::time::timeout(STARTUP_TIMEOUT, lines.next_line())
                .await
                .expect("engram-server did not start in time")
                .expect("read engram-server output");
            match line.as_deref() {
                Some(l) if l.starts_with("engram-server metrics on ") => {
                    metrics = l
                        .strip_prefix("engram-server metrics on ")
                        .map(str::to_owned);
                }
                Some(l) if l.starts_with("engram-server listening on ") => {
                    break l["engram-server listening on ".len()..].to_owned();
                }
                _ => {
                    let log =
                        std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default();
                    panic!("engram-server did not start: {line:?}\n{log}");
                }
            }
        };
        Server {
            url: format!("http://{address}"),
            metrics,
            child,
            dir,
            data,
            binary,
            extra_args,
            envs,
            storage,
        }
    }

    /// A client connected to this server.
    pub async fn client(&self) -> Engram {
        Engram::connect(self.url.clone())
            .await
            .expect("connect to engram-server")
    }

    /// A client of the server that sends the API key `key`.
    pub async fn client_with_key(&self, key: &str) -> Engram {
        Engram::builder(&self.url)
            .api_key(key)
            .connect()
            .await
            .expect("connect to engram-server")
    }

    /// The folder of the server's search index (the default: beside its
    /// database).
    pub fn index_dir(&self) -> PathBuf {
        index_dir(&self.data)
    }

    /// The folder holding the server's database (`engram.db`) and its search
    /// index (and its log, unless started with [`Server::start_on_data_dir`]).
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// `--database` of the server.
    pub fn database_url(&self) -> String {
        database_url(&self.storage, &self.data)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("server still running")
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The id the key on `line` of the server's key file goes by (in
    /// history, watch events and the log), as the server logged it when it
    /// last read the file.
    pub fn key_id(&self, line: usize) -> String {
        let log = self.log();
        let wanted = format!(" line={line} ");
        log.lines()
            .rev()
            .filter(|entry| entry.contains("API key ") && entry.contains(&wanted))
            .find_map(|entry| {
                let (_, rest) = entry.split_once(" key=")?;
                Some(rest.split_whitespace().next()?.to_owned())
            })
            .unwrap_or_else(|| panic!("no key id logged for line {line}:\n{log}"))
    }

    /// Whether the server keeps its data in PostgreSQL (else a SQLite file
    /// in its data folder).
    pub fn on_postgres(&self) -> bool {
        matches!(self.storage, Storage::Postgres(_))
    }

    /// `127.0.0.1:PORT`, the address the server listens on.
    pub fn address(&self) -> &str {
        self.url.strip_prefix("http://").unwrap_or(&self.url)
    }
}
