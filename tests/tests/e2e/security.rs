//! API keys and TLS over the real server: `--auth-keys` guards the engram.v1
//! services and leaves health open; `--tls-cert`/`--tls-key` serve TLS to
//! clients that trust the certificate — the Rust client, the `engram`
//! command and grpcurl.

use std::path::Path;
use std::process::Command as StdCommand;

use engram_client::proto::{self, GetStatsRequest, MemoryType, Scope};
use engram_client::{Code, CreateMemory, Engram, Error};
use engram_tests::{Server, cli_binary, interop_tool, refuses_to_start};
use tempfile::TempDir;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

fn stats() -> GetStatsRequest {
    GetStatsRequest {
        scope: Some(Scope::new("secure")),
    }
}

async fn connect_with_key(server: &Server, key: Option<&str>) -> Engram {
    let mut builder = Engram::builder(&server.url);
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    builder.connect().await.expect("connect")
}

#[tokio::test]
async fn with_auth_keys_only_callers_with_a_listed_key_get_in() {
    let dir = TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "# agents of the shop project\nkey-one\n\nkey-two\n").expect("keys");
    let server = Server::start_with_args(&["--auth-keys", keys.to_str().expect("utf-8")]).await;

    for (key, expected) in [
        (None, Some("missing API key")),
        (Some("key-three"), Some("unknown API key")),
        (Some("key-one"), None),
        (Some("key-two"), None),
    ] {
        let engram = connect_with_key(&server, key).await;
        let answer = engram.learning().get_stats(stats()).await;
        match expected {
            None => assert!(answer.is_ok(), "{key:?}: {answer:?}"),
            Some(message) => {
                let error = answer.unwrap_err();
                assert!(matches!(error, Error::Status(_)), "{error:?}");
                assert_eq!(error.code(), Code::Unauthenticated, "{key:?}");
                assert!(error.message().contains(message), "{error}");
            }
        }
    }
    // Nothing was written by a refused call.
    let refused = connect_with_key(&server, None).await;
    let create = CreateMemory::new(Scope::new("secure"), MemoryType::Fact, "refused");
    assert_eq!(
        refused
            .memory()
            .create_memory(create)
            .await
            .unwrap_err()
            .code(),
        Code::Unauthenticated
    );
    let allowed = connect_with_key(&server, Some("key-one")).await;
    assert_eq!(
        allowed
            .learning()
            .get_stats(stats())
            .await
            .expect("stats")
            .memories_per_type,
        []
    );

    // Health stays open for load balancers.
    let mut health = HealthClient::new(refused.channel());
    let status = health
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("health without a key")
        .into_inner()
        .status();
    assert_eq!(status, ServingStatus::Serving);

    // The command line sends ENGRAM_API_KEY.
    let run = |key: Option<&str>| {
        let mut command = StdCommand::new(cli_binary());
        command
            .args(["-n", "secure", "stats"])
            .env("ENGRAM_SERVER", &server.url);
        match key {
            Some(key) => command.env("ENGRAM_API_KEY", key),
            None => command.env_remove("ENGRAM_API_KEY"),
        };
        command.output().expect("run engram")
    };
    let with_key = run(Some("key-two"));
    assert!(with_key.status.success(), "{with_key:?}");
    let without = run(None);
    assert_eq!(without.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&without.stderr).contains("UNAUTHENTICATED"),
        "{without:?}"
    );
}

#[tokio::test]
async fn a_key_file_without_keys_stops_the_server_at_start() {
    let dir = TempDir::new().expect("temp dir");
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "# to be filled in\n").expect("keys");
    refuses_to_start(
        &["--auth-keys", keys.to_str().expect("utf-8")],
        &[],
        "holds no key",
    )
    .await;
}

/// Runs the openssl command, which makes the tests' certificates.
fn openssl(args: &[&str]) {
    let output = StdCommand::new("openssl")
        .args(args)
        .output()
        .expect("run openssl");
    assert!(output.status.success(), "openssl {args:?}: {output:?}");
}

/// Makes a certificate authority `{name}.pem` (key `{name}.key`) in `dir`.
fn certificate_authority(dir: &Path, name: &str) -> String {
    let path = |file: &str| dir.join(file).to_str().expect("utf-8").to_owned();
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        &format!("/CN=Engram test {name}"),
        "-keyout",
        &path(&format!("{name}.key")),
        "-out",
        &path(&format!("{name}.pem")),
    ]);
    path(&format!("{name}.pem"))
}

/// Makes a certificate `{name}.pem` with key `{name}.key`, for `subject`
/// with the X.509 `extensions`, signed by the authority `ca`; returns the
/// paths of the certificate and its key.
fn signed_certificate(
    dir: &Path,
    ca: &str,
    name: &str,
    subject: &str,
    extensions: &str,
) -> [String; 2] {
    let path = |file: &str| dir.join(file).to_str().expect("utf-8").to_owned();
    openssl(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        subject,
        "-keyout",
        &path(&format!("{name}.key")),
        "-out",
        &path(&format!("{name}.csr")),
    ]);
    std::fs::write(dir.join(format!("{name}.ext")), extensions).expect("extensions");
    openssl(&[
        "x509",
        "-req",
        "-in",
        &path(&format!("{name}.csr")),
        "-CA",
        &path(&format!("{ca}.pem")),
        "-CAkey",
        &path(&format!("{ca}.key")),
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        &path(&format!("{name}.ext")),
        "-out",
        &path(&format!("{name}.pem")),
    ]);
    [path(&format!("{name}.pem")), path(&format!("{name}.key"))]
}

/// Makes a certificate authority and a certificate it signed for
/// `localhost` and 127.0.0.1; returns the paths of the CA certificate, the
/// server certificate and its key.
fn certificates(dir: &Path) -> [String; 3] {
    let ca = certificate_authority(dir, "ca");
    let [cert, key] = signed_certificate(
        dir,
        "ca",
        "server",
        "/CN=localhost",
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    );
    [ca, cert, key]
}

/// A client certificate for `agent`, signed by the authority `ca`.
fn client_certificate(dir: &Path, ca: &str, agent: &str) -> [String; 2] {
    signed_certificate(
        dir,
        ca,
        agent,
        &format!("/CN={agent}"),
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
}

#[tokio::test]
async fn tls_serves_clients_that_trust_the_certificate() {
    let dir = TempDir::new().expect("temp dir");
    let [ca, cert, key] = certificates(dir.path());
    let server = Server::start_with_args(&["--tls-cert", &cert, "--tls-key", &key]).await;
    let https = format!(
        "https://localhost:{}",
        server.address().rsplit(':').next().expect("port")
    );
    let ca_pem = std::fs::read(&ca).expect("ca");

    let engram = Engram::builder(&https)
        .tls_ca_certificate(ca_pem.clone())
        .connect()
        .await
        .expect("a TLS connection to a trusted server");
    let created = engram
        .memory()
        .create_memory(CreateMemory::new(
            Scope::new("tls"),
            MemoryType::Fact,
            "sent over TLS",
        ))
        .await
        .expect("create over TLS");
    let read = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(Scope::new("tls")),
            id: created.memory.expect("memory").id,
        })
        .await
        .expect("get over TLS");
    assert_eq!(read.content, "sent over TLS");

    // A client that does not trust the CA, or speaks plaintext, gets nothing.
    let untrusted = Engram::builder(&https).connect().await;
    assert!(matches!(untrusted, Err(Error::Connect(_))), "{untrusted:?}");
    let plaintext = Engram::builder(&server.url)
        .retry(engram_client::RetryPolicy::none())
        .connect()
        .await;
    let refused = match plaintext {
        Err(error) => error,
        Ok(engram) => engram.learning().get_stats(stats()).await.unwrap_err(),
    };
    assert!(
        !matches!(refused, Error::Status(_)),
        "no server answer over plaintext: {refused:?}"
    );

    // grpcurl and the command line, given the CA.
    let grpcurl = StdCommand::new(interop_tool(".venv/bin/grpcurl"))
        .args([
            "-cacert",
            &ca,
            &https.replace("https://", ""),
            "list",
            "engram.v1.PolicyService",
        ])
        .output()
        .expect("run grpcurl");
    assert_eq!(
        String::from_utf8_lossy(&grpcurl.stdout),
        "engram.v1.PolicyService.Classify\nengram.v1.PolicyService.Remember\n",
        "{grpcurl:?}"
    );
    let cli = StdCommand::new(cli_binary())
        .args(["--server", &https, "--tls-ca", &ca, "-n", "tls", "list"])
        .output()
        .expect("run engram");
    let listed = String::from_utf8_lossy(&cli.stdout);
    assert!(
        cli.status.success() && listed.contains("sent over TLS"),
        "{cli:?}"
    );
}

#[tokio::test]
async fn with_a_client_ca_only_clients_with_a_certificate_it_signed_get_in() {
    let dir = TempDir::new().expect("temp dir");
    let [ca, cert, key] = certificates(dir.path());
    let [agent_cert, agent_key] = client_certificate(dir.path(), "ca", "agent-7");
    certificate_authority(dir.path(), "rogue-ca");
    let [rogue_cert, rogue_key] = client_certificate(dir.path(), "rogue-ca", "intruder");
    let server = Server::start_with_args(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--tls-client-ca",
        &ca,
    ])
    .await;
    let https = format!(
        "https://localhost:{}",
        server.address().rsplit(':').next().expect("port")
    );
    let read = |path: &str| std::fs::read(path).expect("read PEM");
    let stats_with = |identity: Option<(&str, &str)>| {
        let mut builder = Engram::builder(&https)
            .tls_ca_certificate(read(&ca))
            .retry(engram_client::RetryPolicy::none());
        if let Some((cert, key)) = identity {
            builder = builder.tls_client_certificate(read(cert), read(key));
        }
        async move {
            let engram = builder.connect().await?;
            engram.learning().get_stats(stats()).await
        }
    };

    let answer = stats_with(Some((&agent_cert, &agent_key))).await;
    assert!(answer.is_ok(), "a certificate the CA signed: {answer:?}");
    for (who, identity) in [
        ("no certificate", None),
        ("another CA's certificate", Some((&rogue_cert, &rogue_key))),
    ] {
        let refused = stats_with(identity.map(|(c, k)| (c.as_str(), k.as_str())))
            .await
            .expect_err(who);
        assert!(
            !matches!(refused, Error::Status(ref status) if status.code() != Code::Unavailable),
            "{who}: the server must not answer: {refused:?}"
        );
    }

    // The command line presents its certificate with --tls-cert/--tls-key.
    let cli = StdCommand::new(cli_binary())
        .args([
            "--server",
            &https,
            "--tls-ca",
            &ca,
            "--tls-cert",
            &agent_cert,
            "--tls-key",
            &agent_key,
            "-n",
            "secure",
            "stats",
        ])
        .output()
        .expect("run engram");
    assert!(cli.status.success(), "{cli:?}");
    let without = StdCommand::new(cli_binary())
        .args(["--server", &https, "--tls-ca", &ca, "-n", "secure", "stats"])
        .output()
        .expect("run engram");
    assert!(!without.status.success(), "{without:?}");
}

#[tokio::test]
async fn an_unusable_certificate_stops_the_server_before_it_listens() {
    let dir = TempDir::new().expect("temp dir");
    let [_, cert, _] = certificates(dir.path());
    let not_a_key = dir.path().join("not-a-key.pem");
    std::fs::write(
        &not_a_key,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .expect("key");
    refuses_to_start(
        &[
            "--tls-cert",
            &cert,
            "--tls-key",
            not_a_key.to_str().expect("utf-8"),
        ],
        &[],
        "--tls-cert and --tls-key",
    )
    .await;
}
