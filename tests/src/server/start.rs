//! The ways to start a server: on which database, binary, address, flags
//! and environment; and a start that must be refused.

use std::path::Path;
use std::sync::Arc;

use tempfile::TempDir;
use tokio::process::Command;

use super::storage::{DATABASE_FILE, Storage};
use super::{ANY_PORT, STARTUP_TIMEOUT, Server};
use crate::backend::Backend;
use crate::binaries::server_binary;
use crate::model::test_model;
use crate::postgres::TestDatabase;

impl Server {
    /// Starts a server on a fresh, empty database of the suite's backend
    /// ([`Backend::from_env`]), as every constructor does unless it says
    /// otherwise.
    pub async fn start() -> Server {
        Server::start_fresh(None).await
    }

    /// Starts a server on a fresh, empty database of `backend`, whatever the
    /// suite's backend is: for tests of one backend.
    pub async fn start_on_backend(backend: Backend) -> Server {
        Server::start_fresh(Some(Storage::fresh(backend).await)).await
    }

    /// Starts a server with extra command-line flags on a fresh, empty
    /// database of `backend`, whatever the suite's backend is.
    pub async fn start_on_backend_with_args(backend: Backend, args: &[&str]) -> Server {
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            server_binary(),
            args.iter().map(|a| (*a).to_owned()).collect(),
            Vec::new(),
            ANY_PORT,
            None,
            Some(Storage::fresh(backend).await),
        )
        .await
    }

    /// A server with the defaults on `storage` (else the suite's backend).
    async fn start_fresh(storage: Option<Storage>) -> Server {
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            server_binary(),
            Vec::new(),
            Vec::new(),
            ANY_PORT,
            None,
            storage,
        )
        .await
    }

    /// Starts another build of the server (e.g. an older one, to compare
    /// against) on a fresh database with extra flags.
    pub async fn start_binary(binary: &Path, args: &[&str]) -> Server {
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            binary.to_owned(),
            args.iter().map(|a| (*a).to_owned()).collect(),
            Vec::new(),
            ANY_PORT,
            None,
            None,
        )
        .await
    }

    /// Starts `binary` (this build's when `None`) with extra flags on a
    /// fresh database made on the PostgreSQL server `admin_url` names (a
    /// role that may create databases), dropped after the server and its
    /// replicas: for benchmarks, which are given the server to use.
    pub async fn start_on_postgres_server(
        binary: Option<&Path>,
        args: &[&str],
        admin_url: &str,
    ) -> Server {
        let database = TestDatabase::create_on(admin_url.to_owned()).await;
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            binary.map_or_else(server_binary, Path::to_owned),
            args.iter().map(|a| (*a).to_owned()).collect(),
            Vec::new(),
            ANY_PORT,
            None,
            Some(Storage::Postgres(Arc::new(database))),
        )
        .await
    }

    /// Starts a server with extra flags on a fresh PostgreSQL database that
    /// it reaches at `address` (a
    /// [`tcp_proxy::TcpProxy`](crate::tcp_proxy::TcpProxy) in front of the
    /// test server, say), whatever the suite's backend.
    pub async fn start_on_postgres_at(address: &str, args: &[&str]) -> Server {
        let database = Arc::new(TestDatabase::create().await);
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            server_binary(),
            args.iter().map(|a| (*a).to_owned()).collect(),
            Vec::new(),
            ANY_PORT,
            None,
            Some(Storage::PostgresAt(database, address.to_owned())),
        )
        .await
    }

    /// Starts a server on a fresh database with extra flags and environment variables.
    pub async fn start_with_env(args: &[&str], envs: &[(&str, &str)]) -> Server {
        let args = args.iter().map(|a| (*a).to_owned()).collect();
        let envs = envs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            server_binary(),
            args,
            envs,
            ANY_PORT,
            None,
            None,
        )
        .await
    }

    /// Starts a server on the SQLite database `engram.db` in `dir` (created
    /// when missing), e.g. a restored backup put there; SQLite whatever the
    /// suite's backend, since the database is that file.
    pub async fn start_in(dir: TempDir) -> Server {
        Server::start_with(
            Arc::new(dir),
            server_binary(),
            Vec::new(),
            Vec::new(),
            ANY_PORT,
            None,
            Some(Storage::Sqlite),
        )
        .await
    }

    /// Starts a server, with extra flags, on the SQLite database `engram.db`
    /// in `data` (created when missing), e.g. a small file system mounted
    /// for the test; its log stays in a temporary folder of its own. SQLite
    /// whatever the suite's backend, since the database is that file.
    pub async fn start_on_data_dir(data: &Path, args: &[&str]) -> Server {
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            server_binary(),
            args.iter().map(|a| (*a).to_owned()).collect(),
            Vec::new(),
            ANY_PORT,
            Some(data.to_owned()),
            Some(Storage::Sqlite),
        )
        .await
    }

    /// Starts a server on a fresh database with semantic search by the
    /// test model ([`test_model`]).
    pub async fn start_with_test_model() -> Server {
        let model = format!("local:{}", test_model().display());
        Server::start_with_args(&["--embedder", &model]).await
    }

    /// Starts a server listening on `listen` (e.g. `0.0.0.0:0`) with extra
    /// flags, on a fresh database of the suite's backend.
    pub async fn start_listening_on(listen: &str, args: &[&str]) -> Server {
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            server_binary(),
            args.iter().map(|a| (*a).to_owned()).collect(),
            Vec::new(),
            listen,
            None,
            None,
        )
        .await
    }

    /// Starts a server on a fresh database with extra command-line flags.
    pub async fn start_with_args(args: &[&str]) -> Server {
        let args = args.iter().map(|a| (*a).to_owned()).collect();
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            server_binary(),
            args,
            Vec::new(),
            ANY_PORT,
            None,
            None,
        )
        .await
    }
}

/// Runs `engram-server` with `args` and `envs` on a fresh SQLite database
/// (unless `args` name a `--database`) and asserts it exits with an error
/// naming `reason` before it ever said it listens; returns what it wrote on
/// standard error.
pub async fn refuses_to_start(args: &[&str], envs: &[(&str, &str)], reason: &str) -> String {
    let dir = TempDir::new().expect("temp dir");
    let mut command = Command::new(server_binary());
    if !args.contains(&"--listen") {
        command.args(["--listen", ANY_PORT]);
    }
    command.args(args);
    if !args.contains(&"--database") {
        command.arg("--database").arg(format!(
            "sqlite://{}",
            dir.path().join(DATABASE_FILE).display()
        ));
    }
    let output = command
        .envs(envs.iter().copied())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(STARTUP_TIMEOUT, output)
        .await
        .expect("engram-server did not stop in time")
        .expect("run engram-server");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains(reason), "{stderr}");
    assert!(
        String::from_utf8_lossy(&output.stdout).is_empty(),
        "it never listened"
    );
    stderr
}
