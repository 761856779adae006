//! PostgreSQL in the harness (a fresh database per test server, for
//! ENGRAM_TEST_BACKEND=postgres) and the server's answer to a PostgreSQL URL
//! while its store is not finished. The test command provides the server
//! (scripts/postgres.sh); without it these tests fail.

use engram_tests::postgres::{TestDatabase, URL_VAR};
use engram_tests::{Backend, Server, refuses_to_start};
use sqlx::{Connection as _, PgConnection};

#[tokio::test]
async fn a_test_database_is_empty_and_dropped_afterwards() {
    let database = TestDatabase::create().await;
    let name = database.name().to_owned();
    let mut conn = PgConnection::connect(database.url()).await.unwrap();
    let tables: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(tables, 0);
    let on: String = sqlx::query_scalar("SELECT current_database()::text")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(on, name);
    // Left open on purpose: dropping ends the connections still there.

    drop(database);
    let mut admin = PgConnection::connect(&std::env::var(URL_VAR).unwrap())
        .await
        .unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_one(&mut admin)
        .await
        .unwrap();
    assert_eq!(left, 0, "{name} is dropped");
}

#[tokio::test]
async fn the_server_refuses_postgres_in_one_line_until_its_store_is_finished() {
    let database = TestDatabase::create().await;
    let stderr = refuses_to_start(
        &["--database", database.url()],
        // A backtrace would add lines to the one the operator reads.
        &[("RUST_BACKTRACE", "0"), ("RUST_LIB_BACKTRACE", "0")],
        "the PostgreSQL backend is not finished",
    )
    .await;
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    let password = url::Url::parse(database.url())
        .unwrap()
        .password()
        .map(str::to_owned);
    if let Some(password) = password {
        assert!(!stderr.contains(&password), "the password is never shown");
    }
}

// Once the PostgreSQL store lands, this becomes a server that starts on its
// own database; today the refusal shows that the harness gave it one.
#[tokio::test]
#[should_panic(expected = "the PostgreSQL backend is not finished")]
async fn a_server_on_the_postgres_backend_is_given_a_postgres_database() {
    Server::start_on_backend(Backend::Postgres).await;
}
