//! Which database the suite's servers keep their data in.

/// The variable that says which database the suite's servers use.
pub const BACKEND_VAR: &str = "ENGRAM_TEST_BACKEND";

/// Which database a test server keeps its data in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file in the server's temporary folder.
    Sqlite,
    /// A fresh database on the PostgreSQL server of
    /// [`postgres::URL_VAR`](crate::postgres::URL_VAR), dropped after the
    /// server.
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
