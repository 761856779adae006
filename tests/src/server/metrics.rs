//! A server's metrics, scraped from its `--metrics-listen` endpoint.

use std::time::{Duration, Instant};

use super::Server;
use crate::scrape;

/// How long other background work (a retention run) may take to show.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(60);

impl Server {
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
}
