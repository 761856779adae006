//! A TCP proxy a test can cut: it stands between a server and its
//! database, so that a test can make the database unreachable (every open
//! connection closed, every new one closed at once) and reachable again,
//! without stopping the database other tests share.

use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A proxy to one address, forwarding while it is up.
pub struct TcpProxy {
    address: String,
    up: Arc<watch::Sender<bool>>,
    task: JoinHandle<()>,
}

impl TcpProxy {
    /// Starts forwarding connections to `target` (`host:port`) from a free
    /// port of 127.0.0.1.
    pub async fn start(target: String) -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let up = Arc::new(watch::Sender::new(true));
        let task = tokio::spawn(accept(listener, target, up.clone()));
        TcpProxy { address, up, task }
    }

    /// `127.0.0.1:PORT`, to connect to instead of the target.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Closes every forwarded connection and, until [`TcpProxy::mend`],
    /// every new one as soon as it is accepted.
    pub fn cut(&self) {
        self.up.send_replace(false);
    }

    /// Forwards new connections again.
    pub fn mend(&self) {
        self.up.send_replace(true);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}

async fn accept(listener: TcpListener, target: String, up: Arc<watch::Sender<bool>>) {
    loop {
        let Ok((mut client, _)) = listener.accept().await else {
            return;
        };
        if !*up.borrow() {
            continue; // dropped: closed at once
        }
        let mut state = up.subscribe();
        let target = target.clone();
        tokio::spawn(async move {
            let Ok(mut server) = TcpStream::connect(&target).await else {
                return;
            };
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                _ = state.wait_for(|up| !*up) => {}
            }
        });
    }
}
