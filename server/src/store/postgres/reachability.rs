//! Whether the database answers. While it does not, calls fail at once
//! with UNAVAILABLE ("the database cannot be reached") instead of each
//! waiting for a connection until the pool gives up — which would make a
//! client with a deadline of a few seconds see DEADLINE_EXCEEDED — and the
//! health of writes is NOT_SERVING, so a load balancer sends writes to a
//! replica whose database answers.
//!
//! The feed's listener is the one that finds out: its connection breaks
//! when the database goes (unreachable), and its reads of the feed's head,
//! at least every second, say when it is back.

use tokio::sync::watch;

/// What a call hears while the database cannot be reached.
pub const UNREACHABLE: &str = "the database cannot be reached; retry";

/// Whether the database answers, as last found out.
#[derive(Debug)]
pub struct Reachability {
    state: watch::Sender<bool>,
}

impl Default for Reachability {
    fn default() -> Self {
        Reachability {
            state: watch::Sender::new(true),
        }
    }
}

impl Reachability {
    /// Whether the database answered last time it was tried.
    pub fn reachable(&self) -> bool {
        *self.state.borrow()
    }

    /// Records what the last try found, saying so in the log when it changes.
    pub fn set(&self, reachable: bool) {
        let changed = self.state.send_if_modified(|state| {
            let changed = *state != reachable;
            *state = reachable;
            changed
        });
        if changed && reachable {
            tracing::info!("the database answers again");
        } else if changed {
            tracing::warn!(
                "the database cannot be reached: calls fail with UNAVAILABLE until it answers"
            );
        }
    }

    /// Follows whether the database answers.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.state.subscribe()
    }

    /// Resolves once the database is found unreachable.
    pub async fn lost(&self) {
        let mut state = self.state.subscribe();
        let _ = state.wait_for(|reachable| !*reachable).await;
    }
}
