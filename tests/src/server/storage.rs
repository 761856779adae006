//! Where a test server keeps its data, and the flags that say so.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::Backend;
use crate::postgres::TestDatabase;

/// The database file in a test server's folder.
pub const DATABASE_FILE: &str = "engram.db";

/// Where one test server (and its restarts) keeps its data.
#[derive(Clone)]
pub(super) enum Storage {
    /// `engram.db` in the server's data folder.
    Sqlite,
    Postgres(Arc<TestDatabase>),
    /// A fresh PostgreSQL database reached at another address (a proxy's).
    PostgresAt(Arc<TestDatabase>, String),
}

impl Storage {
    /// A new, empty place of `backend`.
    pub(super) async fn fresh(backend: Backend) -> Storage {
        match backend {
            Backend::Sqlite => Storage::Sqlite,
            Backend::Postgres => Storage::Postgres(Arc::new(TestDatabase::create().await)),
        }
    }
}

/// `--database` of a server that keeps its data in `storage` and `data`.
pub(super) fn database_url(storage: &Storage, data: &Path) -> String {
    match storage {
        Storage::Sqlite => format!("sqlite://{}", data.join(DATABASE_FILE).display()),
        Storage::Postgres(database) => database.url().to_owned(),
        Storage::PostgresAt(database, address) => database.url_at(address),
    }
}

/// The search index of a server whose data folder is `data`: the server's
/// default for a SQLite database there, beside the file.
pub(super) fn index_dir(data: &Path) -> PathBuf {
    data.join(format!("{DATABASE_FILE}.index"))
}
