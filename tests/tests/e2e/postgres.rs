//! PostgreSQL in the harness (a fresh database per test server, for
//! ENGRAM_TEST_BACKEND=postgres), a server on its database, and what is
//! SQLite's alone. The test command provides the PostgreSQL server
//! (scripts/postgres.sh); without it these tests fail.

use engram_client::proto::{self, MemoryType};
use engram_client::{Code, CreateMemory, Engram, RetryPolicy};
use engram_tests::postgres::{self, TestDatabase, URL_VAR};
use engram_tests::tcp_proxy::TcpProxy;
use engram_tests::{Backend, Server, create, input, list_all, refuses_to_start, scope};
use tonic_health::pb::health_check_response::ServingStatus;

/// The health service's name for writes (`engram_server::server::WRITES_HEALTH`).
const WRITES: &str = "engram.writes";
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
async fn a_server_on_the_postgres_backend_keeps_its_memories_in_its_database() {
    let server = Server::start_on_backend(Backend::Postgres).await;
    let engram = server.client().await;
    let created = create(
        &engram,
        &scope("pg"),
        input(MemoryType::Fact, "The build runs on two cores"),
    )
    .await
    .memory
    .expect("a memory");

    let mut conn = PgConnection::connect(&server.database_url()).await.unwrap();
    let (content, changes): (String, i64) = sqlx::query_as(
        "SELECT content, (SELECT count(*) FROM memory_changes) FROM memories WHERE id = $1",
    )
    .bind(&created.id)
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(content, "The build runs on two cores");
    assert_eq!(changes, 1, "the create is a change of the feed");
}

#[tokio::test]
async fn a_database_that_cannot_be_reached_stops_the_server_without_its_password() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://engram:s3cret@127.0.0.1:{port}/engram");
    let stderr = refuses_to_start(
        &["--database", &url, "--index-dir", "/nonexistent/index"],
        &[("RUST_BACKTRACE", "0")],
        "cannot connect to postgres://engram:***@127.0.0.1",
    )
    .await;
    assert!(!stderr.contains("s3cret"), "{stderr}");
}

#[tokio::test]
async fn commands_that_work_on_a_sqlite_file_say_so_for_postgres() {
    let database = TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    // Export, import and migrate-data work on either backend
    // (tests/tests/e2e/transfer.rs); a backup copies a SQLite file.
    for command in [vec!["backup", "--to", out]] {
        let mut args = vec!["--database", database.url()];
        args.extend(&command);
        let output = tokio::process::Command::new(engram_tests::server_binary())
            .args(&args)
            .env("RUST_BACKTRACE", "0")
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{command:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{} works on a SQLite database file only",
                command[0]
            )),
            "{command:?}: {stderr}"
        );
    }
}

/// The health of `service` on `server` now.
async fn health_of(server: &Server, service: &str) -> i32 {
    let engram = server.client().await;
    let mut health = tonic_health::pb::health_client::HealthClient::new(engram.channel());
    health
        .check(tonic_health::pb::HealthCheckRequest {
            service: service.to_owned(),
        })
        .await
        .expect("health answers")
        .into_inner()
        .status
}

/// Waits until `service`'s health on `server` is `status`.
async fn until_health(server: &Server, service: &str, status: ServingStatus) {
    let started = std::time::Instant::now();
    while health_of(server, service).await != status as i32 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{service} did not become {status:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn while_the_database_is_unreachable_calls_fail_fast_and_writes_are_not_serving() {
    let proxy = TcpProxy::start(postgres::server_address()).await;
    let server = Server::start_on_postgres_at(proxy.address(), &[]).await;
    // A client with a typical deadline.
    let engram = Engram::builder(&server.url)
        .retry(RetryPolicy::none())
        .timeout(std::time::Duration::from_secs(5))
        .connect()
        .await
        .expect("connect");
    let ns = scope("outage");
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "written before the outage"),
    )
    .await;
    until_health(&server, WRITES, ServingStatus::Serving).await;

    proxy.cut();
    until_health(&server, WRITES, ServingStatus::NotServing).await;
    // The client hears UNAVAILABLE, with the right words, before its
    // deadline — not DEADLINE_EXCEEDED.
    let started = std::time::Instant::now();
    let refused = engram
        .memory()
        .create_memory(CreateMemory::new(
            ns.clone(),
            MemoryType::Fact,
            "written during the outage",
        ))
        .await
        .expect_err("the database is down");
    println!("refused after {:?}", started.elapsed());
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(
        refused.message().contains("cannot be reached"),
        "{refused:?}"
    );
    let read = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(ns.clone()),
            ..Default::default()
        })
        .await
        .expect_err("reads need the database too");
    assert_eq!(read.code(), Code::Unavailable, "{read:?}");

    proxy.mend();
    until_health(&server, WRITES, ServingStatus::Serving).await;
    create(
        &engram,
        &ns,
        input(MemoryType::Fact, "written after the outage"),
    )
    .await;
    assert_eq!(list_all(&engram, &ns, 50).await.len(), 2);
}
