//! Fresh PostgreSQL databases for tests, made on the server that
//! `ENGRAM_TEST_POSTGRES_URL` names. `scripts/postgres.sh` starts a
//! throwaway server and sets it; the test command runs the tests through it.
//! Without it a test that needs PostgreSQL fails: it is never skipped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection as _, PgConnection};
use url::Url;

/// The variable naming the PostgreSQL server tests make databases on: the
/// URL of a role that may create them (its database is only used to
/// connect).
pub const URL_VAR: &str = "ENGRAM_TEST_POSTGRES_URL";

/// An empty database of its own for one test, or one test server and its
/// restarts; dropped when this value is.
pub struct TestDatabase {
    name: String,
    url: String,
    admin: String,
}

impl TestDatabase {
    /// Creates an empty database on the server of [`URL_VAR`].
    pub async fn create() -> TestDatabase {
        TestDatabase::create_on(admin_url()).await
    }

    /// Creates an empty database on the server `admin` names: the URL of a
    /// role that may create databases (its database is only used to
    /// connect).
    pub async fn create_on(admin: String) -> TestDatabase {
        let name = unique_name();
        let mut conn = PgConnection::connect(&admin)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to the PostgreSQL server: {e}"));
        // The name is made of letters, digits and underscores: it needs no quoting.
        sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
        let _ = conn.close().await;
        let mut url = Url::parse(&admin).unwrap_or_else(|e| panic!("{admin:?} is no URL: {e}"));
        url.set_path(&format!("/{name}"));
        TestDatabase {
            name,
            url: url.into(),
            admin,
        }
    }

    /// `postgres://…/NAME`: the URL to connect to it, password included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Like [`TestDatabase::url`], with the server reached at `address`
    /// (`host:port`) instead.
    pub fn url_at(&self, address: &str) -> String {
        let mut url = Url::parse(&self.url).expect("a URL");
        let (host, port) = address.rsplit_once(':').expect("host:port");
        url.set_host(Some(host)).expect("a host");
        url.set_port(Some(port.parse().expect("a port")))
            .expect("a port");
        url.into()
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The `host:port` of the PostgreSQL server of [`URL_VAR`].
pub fn server_address() -> String {
    let admin = admin_url();
    let url = Url::parse(&admin).unwrap_or_else(|e| panic!("{URL_VAR} is no URL: {e}"));
    format!(
        "{}:{}",
        url.host_str().expect("a host"),
        url.port().unwrap_or(5432)
    )
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let admin = self.admin.clone();
        let drop_database = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop may run inside an async runtime, which cannot block on a
        // future; a thread with a runtime of its own can. FORCE ends the
        // connections still open, e.g. of a server killed a moment ago.
        let dropped = std::thread::spawn(move || -> Result<(), String> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let mut conn = PgConnection::connect(&admin)
                    .await
                    .map_err(|e| e.to_string())?;
                sqlx::raw_sql(AssertSqlSafe(drop_database))
                    .execute(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?;
                conn.close().await.map_err(|e| e.to_string())
            })
        })
        .join();
        // Never a panic in drop: a database left behind goes with the
        // throwaway server at the end of the run.
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("could not drop test database {}: {error}", self.name),
            Err(_) => eprintln!("could not drop test database {}", self.name),
        }
    }
}

fn admin_url() -> String {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "{URL_VAR} is not set: run the tests through scripts/postgres.sh \
             (./scripts/test.sh does), which starts a throwaway PostgreSQL server and sets it"
        ),
    }
}

/// `engram_test_<pid>_<n>_<time>`: unique among the test processes running
/// at once (by pid and counter) and against leftovers of earlier runs on the
/// same server (by time).
fn unique_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    format!("engram_test_{}_{n}_{micros:x}", std::process::id())
}
