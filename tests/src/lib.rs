//! The end-to-end test harness: starts the real `engram-server` binary on an
//! ephemeral port with a temporary database and connects the client crate to it.

pub mod fake_embeddings;
pub mod fake_llm;
pub mod fake_openai;
pub mod postgres;
pub mod scrape;
pub mod tcp_proxy;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use engram_client::{Code, Engram, Error, proto};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use crate::postgres::TestDatabase;

/// How long a server may take to start or stop.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the background embedding of a test's memories may take.
const EMBEDDING_TIMEOUT: Duration = Duration::from_secs(60);
/// How long other background work (a retention run) may take to show.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(60);

/// `engram-server`, built (with every binary of the workspace, see
/// [`binaries_dir`]) in the profile this program was built in — debug for
/// tests, release for benchmarks — so a stale binary is never run.
pub fn server_binary() -> PathBuf {
    binary("engram-server")
}

/// The `engram` command, built like the server.
pub fn cli_binary() -> PathBuf {
    binary("engram")
}

fn binary(name: &str) -> PathBuf {
    let path = binaries_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} not found", path.display());
    path
}

/// What `cargo test` sets for a test program besides `CARGO_PKG_*`.
const CARGO_TEST_VARS: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
];

/// Builds every binary of the workspace once per process and returns the
/// directory they are in. One `cargo build --workspace --bins` resolves
/// dependency features as `cargo test --workspace` does, so the two share
/// their compiled artifacts instead of rebuilding each other's.
fn binaries_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // Tests run from target/<profile>/deps/, binaries from target/<profile>/.
        let exe = std::env::current_exe().expect("current_exe");
        let mut profile_dir = exe.parent().expect("target/<profile>");
        if profile_dir.ends_with("deps") {
            profile_dir = profile_dir.parent().expect("target/<profile>");
        }
        let mut build = vec!["build", "--quiet", "--workspace", "--bins"];
        if profile_dir.ends_with("release") {
            build.push("--release");
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = std::process::Command::new(cargo);
        // Without what `cargo test` sets for this test program: build
        // scripts (ring's, through the `cc` crate) name some of these as
        // inputs, and a build that sees other values than the shell's
        // rebuilds them and all that depends on them — once here, and once
        // more at the next cargo command of the shell.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("CARGO_PKG_") || CARGO_TEST_VARS.contains(&name.as_ref()) {
                command.env_remove(name.as_ref());
            }
        }
        let status = command.args(&build).status().expect("run cargo build");
        assert!(status.success(), "building the workspace's binaries failed");
        profile_dir.to_owned()
    })
}

/// A tool that `tests/interop/setup.sh` installs (the test command runs it
/// first), by its path under `tests/interop/`.
pub fn interop_tool(relative: &str) -> PathBuf {
    let path = interop_dir().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run tests/interop/setup.sh first (./scripts/test.sh does)",
        path.display()
    );
    path
}

/// `tests/interop/`.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop")
}

/// The variable that says which database the suite's servers use.
pub const BACKEND_VAR: &str = "ENGRAM_TEST_BACKEND";

/// Which database a test server keeps its data in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file in the server's temporary folder.
    Sqlite,
    /// A fresh database on the PostgreSQL server of
    /// [`postgres::URL_VAR`], dropped after the server.
    Postgres,
}

impl Backend {
    /// The suite's backend: [`BACKEND_VAR`] is `sqlite` (or unset) or
    /// `postgres`, for running the same end-to-end suite against each.
    pub fn from_env() -> Backend {
        Backend::parse(std::env::var(BACKEND_VAR).ok().as_deref())
    }

    fn parse(value: Option<&str>) -> Backend {
        match value {
            None | Some("" | "sqlite") => Backend::Sqlite,
            Some("postgres") => Backend::Postgres,
            Some(other) => panic!("{BACKEND_VAR}={other:?}: expected sqlite or postgres"),
        }
    }
}

/// Where one test server (and its restarts) keeps its data.
#[derive(Clone)]
enum Storage {
    /// `engram.db` in the server's data folder.
    Sqlite,
    Postgres(Arc<TestDatabase>),
    /// A fresh PostgreSQL database reached at another address (a proxy's).
    PostgresAt(Arc<TestDatabase>, String),
}

impl Storage {
    /// A new, empty place of `backend`.
    async fn fresh(backend: Backend) -> Storage {
        match backend {
            Backend::Sqlite => Storage::Sqlite,
            Backend::Postgres => Storage::Postgres(Arc::new(TestDatabase::create().await)),
        }
    }
}

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
    /// it reaches at `address` (a [`tcp_proxy::TcpProxy`] in front of the
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

    /// The server's metrics, scraped now (it must run with `--metrics-listen`).
    pub async fn scrape(&self) -> scrape::Scrape {
        let address = self
            .metrics
            .as_deref()
            .expect("the server runs with --metrics-listen");
        let response = scrape::http_get(address, "/metrics")
            .await
            .expect("GET /metrics");
        assert_eq!(response.status, 200, "{response:?}");
        scrape::Scrape::parse(&response.body).expect("the metrics parse")
    }

    /// Scrapes the server's metrics until `done` holds of them, and returns
    /// that scrape; panics, naming `what`, if that takes too long.
    pub async fn scrape_until(
        &self,
        what: &str,
        done: impl Fn(&scrape::Scrape) -> bool,
    ) -> scrape::Scrape {
        let deadline = Instant::now() + BACKGROUND_TIMEOUT;
        loop {
            let scrape = self.scrape().await;
            if done(&scrape) {
                return scrape;
            }
            assert!(Instant::now() < deadline, "{what} did not happen in time");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
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

    /// Kills the server with SIGKILL, as a crash would, and waits for it.
    pub async fn kill(&mut self) {
        let pid = self.pid();
        let sent = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -KILL {pid} failed");
        tokio::time::timeout(STARTUP_TIMEOUT, self.child.wait())
            .await
            .expect("engram-server did not die in time")
            .expect("wait for engram-server");
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

    /// Sends SIGHUP: the server reads its key file again.
    pub fn hang_up(&self) {
        let pid = self.pid();
        let sent = std::process::Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -HUP {pid} failed");
    }

    /// Sends SIGTERM and waits for the process to exit; returns its exit code.
    pub async fn terminate(&mut self) -> Option<i32> {
        let pid = self.child.id().expect("server still running");
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let status = tokio::time::timeout(STARTUP_TIMEOUT, self.child.wait())
            .await
            .expect("engram-server did not stop in time")
            .expect("wait for engram-server");
        status.code()
    }

    /// Stops this server cleanly and starts a new one on the same database.
    pub async fn restart(mut self) -> Server {
        self.stop().await;
        self.start_on(ANY_PORT).await
    }

    /// Stops this server cleanly and starts a new one on the same database
    /// and environment with other flags.
    pub async fn restart_with_args(mut self, args: &[&str]) -> Server {
        self.stop().await;
        self.extra_args = args.iter().map(|a| (*a).to_owned()).collect();
        self.start_on(ANY_PORT).await
    }

    /// Starts a new server on this (stopped or killed) server's database,
    /// flags and environment, on any free port.
    pub async fn start_anew(&self) -> Server {
        self.start_on(ANY_PORT).await
    }

    /// Starts another replica of this PostgreSQL server: the same database,
    /// flags and environment, and a data folder (so a search index) of its
    /// own, as replicas behind a load balancer have.
    pub async fn start_replica(&self) -> Server {
        assert!(
            matches!(self.storage, Storage::Postgres(_)),
            "replicas share a PostgreSQL database"
        );
        Server::start_with(
            Arc::new(TempDir::new().expect("temp dir")),
            self.binary.clone(),
            self.extra_args.clone(),
            self.envs.clone(),
            ANY_PORT,
            None,
            Some(self.storage.clone()),
        )
        .await
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

    /// Stops the server cleanly; [`Server::start_again`] brings it back.
    pub async fn stop(&mut self) {
        let code = self.terminate().await;
        assert_eq!(
            code,
            Some(0),
            "engram-server exited uncleanly:\n{}",
            self.log()
        );
    }

    /// Starts a stopped server again on the same database and address, as a
    /// restarted service comes back for its clients.
    pub async fn start_again(self) -> Server {
        let address = self.address().to_owned();
        self.start_on(&address).await
    }

    /// A new server process on this one's database, flags and environment.
    async fn start_on(&self, listen: &str) -> Server {
        Server::start_with(
            self.dir.clone(),
            self.binary.clone(),
            self.extra_args.clone(),
            self.envs.clone(),
            listen,
            Some(self.data.clone()),
            Some(self.storage.clone()),
        )
        .await
    }
}

/// `--database` of a server that keeps its data in `storage` and `data`.
fn database_url(storage: &Storage, data: &Path) -> String {
    match storage {
        Storage::Sqlite => format!("sqlite://{}", data.join(DATABASE_FILE).display()),
        Storage::Postgres(database) => database.url().to_owned(),
        Storage::PostgresAt(database, address) => database.url_at(address),
    }
}

/// The search index of a server whose data folder is `data`: the server's
/// default for a SQLite database there, beside the file.
fn index_dir(data: &Path) -> PathBuf {
    data.join(format!("{DATABASE_FILE}.index"))
}

/// Runs the operator's script `tests/operator/{name}` (which the README
/// quotes) with bash in `dir`, with this build's `engram-server` and
/// `engram` first on the PATH; asserts it succeeds and returns what it wrote
/// on standard error.
pub async fn run_operator_script(name: &str, dir: &Path) -> String {
    run_operator_script_with_env(name, dir, &[]).await
}

/// [`run_operator_script`] with environment variables set for the script
/// (e.g. the database it is to use).
pub async fn run_operator_script_with_env(name: &str, dir: &Path, envs: &[(&str, &str)]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("operator")
        .join(name);
    let path = format!(
        "{}:{}",
        binaries_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg(&script)
        .current_dir(dir)
        .env("PATH", path)
        .envs(envs.iter().copied())
        .kill_on_drop(true)
        .output()
        .await
        .expect("run bash");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{} failed ({}):\n{}{stderr}",
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

/// all-MiniLM-L6-v2 for `--embedder local:DIR`: the folder in
/// `ENGRAM_TEST_MODEL`, else the one `scripts/fetch-model.sh` (run by the
/// test command) fetches into the workspace's target folder.
pub fn test_model() -> PathBuf {
    let dir = std::env::var_os("ENGRAM_TEST_MODEL").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/models/all-MiniLM-L6-v2"),
        PathBuf::from,
    );
    assert!(
        dir.join("model.safetensors").exists(),
        "no test model in {}: run scripts/fetch-model.sh",
        dir.display()
    );
    dir
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

/// GetStats' `pending_embeddings` of `scope`'s namespace: memories still
/// waiting for their vector.
pub async fn pending_embeddings(engram: &Engram, scope: &proto::Scope) -> i64 {
    engram
        .learning()
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope.clone()),
        })
        .await
        .expect("stats")
        .pending_embeddings
}

/// Waits until the backfill has embedded every memory of `scope`'s namespace
/// and searches are complete by meaning. The vectors are stored first
/// (GetStats' `pending_embeddings` reaches 0), and the backfill then reads
/// the change feed past the changes that storing them made: until it has, a
/// search reports SEMANTIC_SEARCH_PARTIAL. That is asked of a namespace of
/// its own, which holds nothing (so the probe leaves no access bookkeeping
/// behind): the status is the server's, whatever the namespace.
pub async fn embedded(engram: &Engram, scope: &proto::Scope) {
    let deadline = Instant::now() + EMBEDDING_TIMEOUT;
    while pending_embeddings(engram, scope).await > 0 {
        assert!(Instant::now() < deadline, "embedding did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let probe = proto::Scope {
        namespace: format!("{}-embedding-probe", scope.namespace),
        ..Default::default()
    };
    loop {
        let found = engram
            .memory()
            .search_memories(proto::SearchMemoriesRequest {
                scope: Some(probe.clone()),
                query: "probe".into(),
                ..Default::default()
            })
            .await
            .expect("probe search");
        if found.semantic() != proto::SemanticSearch::Partial {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "searches stayed partial by meaning"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The database file in a test server's folder.
pub const DATABASE_FILE: &str = "engram.db";

/// `--listen` for a server on any free port.
const ANY_PORT: &str = "127.0.0.1:0";

/// A scope in `namespace` with nothing else set.
pub fn scope(namespace: &str) -> proto::Scope {
    proto::Scope {
        namespace: namespace.to_owned(),
        ..Default::default()
    }
}

/// A memory input of `memory_type` with `content`, everything else default.
pub fn input(memory_type: proto::MemoryType, content: &str) -> proto::MemoryInput {
    proto::MemoryInput {
        memory_type: memory_type.into(),
        content: content.to_owned(),
        ..Default::default()
    }
}

/// Creates one memory and returns the response.
pub async fn create(
    engram: &Engram,
    scope: &proto::Scope,
    memory: proto::MemoryInput,
) -> proto::CreateMemoryResponse {
    engram
        .memory()
        .create_memory(proto::CreateMemoryRequest {
            scope: Some(scope.clone()),
            memory: Some(memory),
            request_id: String::new(),
        })
        .await
        .expect("create memory")
}

/// Creates `memories` in one BatchCreateMemories call.
pub async fn create_batch(
    engram: &Engram,
    scope: &proto::Scope,
    memories: Vec<proto::MemoryInput>,
) -> proto::BatchCreateMemoriesResponse {
    engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(scope.clone()),
            memories,
            request_id: String::new(),
        })
        .await
        .expect("batch create")
}

/// The hits of a search.
pub async fn search(
    engram: &Engram,
    request: proto::SearchMemoriesRequest,
) -> Vec<proto::SearchHit> {
    engram
        .memory()
        .search_memories(request)
        .await
        .expect("search")
        .hits
}

/// Searches `scope` for `query` (10 hits) with this semantic weight (the
/// server's default when `None`); the whole response, which says how
/// meaning was used.
pub async fn search_meaning(
    engram: &Engram,
    scope: &proto::Scope,
    query: &str,
    semantic: Option<f64>,
) -> proto::SearchMemoriesResponse {
    engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(scope.clone()),
            query: query.into(),
            limit: 10,
            weights: Some(proto::SearchWeights {
                semantic,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("search")
}

/// The contents of a search's hits, best first.
pub fn hit_contents(response: &proto::SearchMemoriesResponse) -> Vec<&str> {
    response
        .hits
        .iter()
        .map(|h| {
            h.memory
                .as_ref()
                .expect("a hit has its memory")
                .content
                .as_str()
        })
        .collect()
}

/// Every memory visible from `scope`, through all pages.
pub async fn list_all(engram: &Engram, scope: &proto::Scope, page_size: i32) -> Vec<proto::Memory> {
    let mut memories = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = engram
            .memory()
            .list_memories(proto::ListMemoriesRequest {
                scope: Some(scope.clone()),
                page_size,
                page_token,
                ..Default::default()
            })
            .await
            .expect("list memories");
        memories.extend(page.memories);
        if page.next_page_token.is_empty() {
            return memories;
        }
        page_token = page.next_page_token;
    }
}

/// The ids of the memories ListMemories returns from `scope` with `filter`
/// (up to 1,000: one page).
pub async fn listed_ids(
    engram: &Engram,
    scope: &proto::Scope,
    filter: &proto::MemoryFilter,
) -> BTreeSet<String> {
    engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(scope.clone()),
            filter: Some(filter.clone()),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("list memories")
        .memories
        .into_iter()
        .map(|m| m.id)
        .collect()
}

/// Asserts `status` is INVALID_ARGUMENT with a violation of `field`, named in
/// the message too.
pub fn assert_rejects(status: &Error, field: &str) {
    assert!(
        matches!(status, Error::Status(_)),
        "the server's answer, not a transport failure: {status:?}"
    );
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let violations = status.field_violations();
    assert!(
        violations.iter().any(|(f, _)| f == field),
        "expected a violation of {field}, got {violations:?}"
    );
    assert!(
        status.message().contains(field),
        "the message names {field}: {}",
        status.message()
    );
}

/// Asserts two scores are equal but for rounding.
pub fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "{what}: {actual} is not {expected}"
    );
}

/// Asserts `id` is a UUIDv7, the form of every server-assigned id.
pub fn uuid_v7(id: &str) {
    let parts: Vec<&str> = id.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{id} is not a UUID"
    );
    assert!(
        id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()),
        "{id} is not a UUID"
    );
    assert!(parts[2].starts_with('7'), "{id} is not a UUIDv7");
}

/// The hex SHA-256 of `text`, by the sha256sum command (as an operator
/// would compute a key's digest for the key file).
pub fn sha256_hex(text: &str) -> String {
    let output = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .expect("run sha256sum");
    String::from_utf8(output.stdout).expect("utf-8")[..64].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_runs_on_sqlite_unless_told_postgres() {
        assert_eq!(Backend::parse(None), Backend::Sqlite);
        assert_eq!(Backend::parse(Some("")), Backend::Sqlite);
        assert_eq!(Backend::parse(Some("sqlite")), Backend::Sqlite);
        assert_eq!(Backend::parse(Some("postgres")), Backend::Postgres);
    }

    #[test]
    #[should_panic(expected = "expected sqlite or postgres")]
    fn an_unknown_backend_stops_the_suite_rather_than_testing_sqlite() {
        Backend::parse(Some("postgresql"));
    }
}
