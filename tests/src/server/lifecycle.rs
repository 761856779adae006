//! Stopping, killing, signalling and restarting a running server.

use std::sync::Arc;

use tempfile::TempDir;

use super::storage::Storage;
use super::{ANY_PORT, STARTUP_TIMEOUT, Server};

impl Server {
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
