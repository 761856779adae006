//! Configuring a connection.

use std::time::Duration;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

use crate::connection::Connection;
use crate::error::source_chain;
use crate::{Engram, Error, RetryPolicy};

/// How long one call may take by default, retries not included.
///
/// ```
/// assert_eq!(engram_client::DEFAULT_TIMEOUT.as_secs(), 30);
/// ```
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long making the connection may take by default.
///
/// ```
/// assert_eq!(engram_client::DEFAULT_CONNECT_TIMEOUT.as_secs(), 5);
/// ```
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Settings for a connection, from [`Engram::builder`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), engram_client::Error> {
/// use std::time::Duration;
/// use engram_client::Engram;
///
/// let url = "http://127.0.0.1:50051";
/// # let url = &std::env::var("ENGRAM_SERVER").unwrap_or(url.into());
/// let engram = Engram::builder(url).timeout(Duration::from_secs(5)).connect().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
#[must_use = "a builder does nothing until .connect() is called"]
pub struct EngramBuilder {
    url: String,
    api_key: Option<String>,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    retry: RetryPolicy,
    tls_ca_certificate: Option<Vec<u8>>,
    tls_domain: Option<String>,
    tls_identity: Option<(Vec<u8>, Vec<u8>)>,
}

/// Shows every setting but the API key.
impl std::fmt::Debug for EngramBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngramBuilder")
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<hidden>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("retry", &self.retry)
            .field("tls_ca_certificate", &self.tls_ca_certificate.is_some())
            .field("tls_domain", &self.tls_domain)
            .field("tls_identity", &self.tls_identity.is_some())
            .finish()
    }
}

impl EngramBuilder {
    pub(crate) fn new(url: String) -> EngramBuilder {
        EngramBuilder {
            url,
            api_key: None,
            timeout: Some(DEFAULT_TIMEOUT),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            tls_ca_certificate: None,
            tls_domain: None,
            tls_identity: None,
        }
    }

    /// Sends `authorization: Bearer <api_key>` with every call.
    ///
    /// ```
    /// use engram_client::Engram;
    ///
    /// let builder = Engram::builder("http://127.0.0.1:50051").api_key("secret-key");
    /// assert!(!format!("{builder:?}").contains("secret-key"), "Debug hides the key");
    /// ```
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// How long one try of a call may take (default 30 s); the server is
    /// told too (`grpc-timeout`). `None` waits for ever. Streams have no
    /// deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// use engram_client::Engram;
    ///
    /// let patient = Engram::builder("http://127.0.0.1:50051").timeout(Duration::from_secs(120));
    /// let unbounded = Engram::builder("http://127.0.0.1:50051").timeout(None);
    /// # drop((patient, unbounded));
    /// ```
    pub fn timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = timeout.into();
        self
    }

    /// How long making the connection may take (default 5 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// use engram_client::Engram;
    ///
    /// let builder = Engram::builder("http://127.0.0.1:50051").connect_timeout(Duration::from_millis(500));
    /// # drop(builder);
    /// ```
    pub fn connect_timeout(mut self, connect_timeout: Duration) -> Self {
        self.connect_timeout = connect_timeout;
        self
    }

    /// How calls that are safe to repeat are retried after UNAVAILABLE.
    ///
    /// ```
    /// use engram_client::{Engram, RetryPolicy};
    ///
    /// let builder = Engram::builder("http://127.0.0.1:50051").retry(RetryPolicy { max_attempts: 8, ..RetryPolicy::default() });
    /// # drop(builder);
    /// ```
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Trusts this PEM certificate authority, instead of the system's roots,
    /// for an `https://` server (a private CA, or a self-signed server
    /// certificate).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use engram_client::{Engram, Error};
    ///
    /// // A PEM file from a private CA; this one is not a certificate at all.
    /// let error = Engram::builder("https://engram.internal:50051")
    ///     .tls_ca_certificate(b"not a certificate".to_vec())
    ///     .connect()
    ///     .await
    ///     .unwrap_err();
    /// assert!(matches!(error, Error::Config(_)));
    /// # }
    /// ```
    pub fn tls_ca_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls_ca_certificate = Some(pem.into());
        self
    }

    /// The name the server's certificate must carry, when it differs from
    /// the URL's host (e.g. connecting by IP address).
    ///
    /// ```
    /// use engram_client::Engram;
    ///
    /// // Connecting by address to a server whose certificate names engram.internal.
    /// let builder = Engram::builder("https://10.0.0.7:50051").tls_domain("engram.internal");
    /// # drop(builder);
    /// ```
    pub fn tls_domain(mut self, domain: impl Into<String>) -> Self {
        self.tls_domain = Some(domain.into());
        self
    }

    /// Presents this PEM client certificate and its private key to an
    /// `https://` server that asks for one (mutual TLS, a server started
    /// with `--tls-client-ca`).
    ///
    /// ```
    /// use engram_client::Engram;
    ///
    /// # let (certificate, key) = (Vec::<u8>::new(), Vec::<u8>::new());
    /// // certificate and key: the PEM files of the agent's client certificate.
    /// let builder = Engram::builder("https://engram.internal:50051")
    ///     .tls_client_certificate(certificate, key);
    /// # drop(builder);
    /// ```
    pub fn tls_client_certificate(
        mut self,
        certificate_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls_identity = Some((certificate_pem.into(), key_pem.into()));
        self
    }

    /// Connects, failing with [`Error::Connect`] if the server cannot be
    /// reached within the connect timeout.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use engram_client::{Engram, Error};
    ///
    /// let refused = Engram::builder("http://127.0.0.1:1").connect().await;
    /// assert!(matches!(refused, Err(Error::Connect(_))));
    /// let malformed = Engram::builder("not a url").connect().await;
    /// assert!(matches!(malformed, Err(Error::Config(_))));
    /// # }
    /// ```
    pub async fn connect(self) -> Result<Engram, Error> {
        let authorization = self
            .api_key
            .as_deref()
            .map(Connection::bearer)
            .transpose()?;
        let mut endpoint = Endpoint::from_shared(self.url.clone())
            .map_err(|error| Error::Config(format!("invalid server URL {:?}: {error}", self.url)))?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true);
        let tls = self
            .url
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
        if tls {
            let mut config = ClientTlsConfig::new();
            config = match &self.tls_ca_certificate {
                Some(pem) => {
                    // tonic skips what it cannot parse; say so instead.
                    if !String::from_utf8_lossy(pem).contains("-----BEGIN CERTIFICATE-----") {
                        return Err(Error::Config(
                            "the TLS CA certificate holds no PEM certificate".into(),
                        ));
                    }
                    config.ca_certificate(Certificate::from_pem(pem))
                }
                None => config.with_native_roots(),
            };
            if let Some(domain) = &self.tls_domain {
                config = config.domain_name(domain.clone());
            }
            if let Some((certificate, key)) = &self.tls_identity {
                config = config.identity(Identity::from_pem(certificate, key));
            }
            endpoint = endpoint
                .tls_config(config)
                .map_err(|error| Error::Config(format!("TLS: {}", source_chain(&error))))?;
        } else if self.tls_ca_certificate.is_some()
            || self.tls_domain.is_some()
            || self.tls_identity.is_some()
        {
            return Err(Error::Config(format!(
                "TLS settings need an https:// server URL, not {:?}",
                self.url
            )));
        }
        let channel = endpoint.connect().await.map_err(Error::Connect)?;
        Ok(Engram {
            connection: Connection {
                channel,
                authorization,
                timeout: self.timeout,
                retry: self.retry,
            },
        })
    }
}
