//! WatchMemories at the edge: the stream of messages — the first at once,
//! then events in messages of at most 3 MiB, an empty one when the watch has
//! been quiet for its heartbeat interval — ended with UNAVAILABLE when the
//! server shuts down.
//!
//! The stream makes a message only when tonic asks for the next one, which
//! it does once the last has gone out within the client's HTTP/2 flow
//! control window: a client that stops reading stops the watch, which then
//! holds at most the message on its way.

use std::time::Duration;

use engram::v1 as pb;
use tokio::sync::watch;

use super::convert;
use super::page_token::{MAX_PAGE_BYTES, keep_within};
use super::watch_cursor::CursorKey;
use crate::engine::watch::{Event, Watch};

/// The messages of one watch (as the generated service returns a stream).
pub type WatchStream = tonic::codegen::BoxStream<pb::WatchMemoriesResponse>;

/// The shortest heartbeat interval, whatever `--stream-idle-timeout` says
/// (a zero timeout must not make the watch spin).
const MIN_HEARTBEAT: Duration = Duration::from_millis(100);

/// What a watch ended by the shutdown says.
pub const SHUTTING_DOWN: &str =
    "the server is shutting down: resume the watch from its last cursor";

/// How long a watch may go without a message: half of
/// `--stream-idle-timeout`, so that a proxy or load balancer that cuts
/// streams silent that long (the timeout's purpose for StreamSteps) never
/// cuts a quiet watch.
pub fn heartbeat_interval(stream_idle_timeout: Duration) -> Duration {
    (stream_idle_timeout / 2).max(MIN_HEARTBEAT)
}

/// The messages of `watch`, whose cursors `cursors` makes, until `stopping`
/// turns true (or its sender is gone: the server is stopping either way).
pub fn stream(
    watch: Watch,
    cursors: CursorKey,
    heartbeat: Duration,
    stopping: watch::Receiver<bool>,
) -> WatchStream {
    let follower = Follower {
        watch,
        cursors,
        heartbeat,
        stopping,
        started: false,
        ended: false,
    };
    Box::pin(futures_util::stream::unfold(
        follower,
        |mut follower| async move {
            let message = follower.next_message().await?;
            Some((message, follower))
        },
    ))
}

struct Follower {
    watch: Watch,
    cursors: CursorKey,
    heartbeat: Duration,
    stopping: watch::Receiver<bool>,
    /// Whether the first message (the start's cursor) has gone.
    started: bool,
    /// Whether the watch ended with an error (sent as the last item).
    ended: bool,
}

impl Follower {
    async fn next_message(&mut self) -> Option<Result<pb::WatchMemoriesResponse, tonic::Status>> {
        if self.ended {
            return None;
        }
        if !self.started {
            self.started = true;
            return Some(Ok(self.message(Vec::new())));
        }
        let batch = tokio::select! {
            biased;
            _ = self.stopping.wait_for(|stopping| *stopping) => {
                self.ended = true;
                return Some(Err(tonic::Status::unavailable(SHUTTING_DOWN)));
            }
            batch = self.watch.next(self.heartbeat) => batch,
        };
        let batch = match batch {
            Ok(batch) => batch,
            Err(err) => {
                self.ended = true;
                return Some(Err(err.into()));
            }
        };
        let seqs: Vec<i64> = batch.events.iter().map(|event| event.seq).collect();
        let events = batch.events.into_iter().map(|event| self.event(event));
        let (events, cut) = keep_within(events, MAX_PAGE_BYTES);
        // Cut short, the message ends the watch's position at its last event:
        // the rest are read again for the next one.
        let end = match events.len().checked_sub(1) {
            Some(last) if cut => seqs[last],
            _ => batch.end,
        };
        self.watch.advance(end);
        Some(Ok(self.message(events)))
    }

    fn event(&self, event: Event) -> pb::MemoryEvent {
        let cursor = self.cursors.encode(event.seq);
        convert::event(event, cursor)
    }

    fn message(&self, events: Vec<pb::MemoryEvent>) -> pb::WatchMemoriesResponse {
        pb::WatchMemoriesResponse {
            events,
            cursor: self.cursors.encode(self.watch.position()),
            heartbeat_interval: prost_types::Duration::try_from(self.heartbeat).ok(),
        }
    }
}
