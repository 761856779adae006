//! Following WatchMemories: a stream of events that resumes by itself from
//! the last one delivered when the connection breaks or the server goes
//! away, so that its consumer sees every change once.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use tonic::Status;
use tonic::codec::Streaming;
use tonic::transport::Channel;

use crate::connection::Connection;
use crate::{Error, proto};

type Generated = proto::memory_service_client::MemoryServiceClient<Channel>;

/// How many heartbeat intervals of silence make the client take the
/// connection for dead (and resume): the server sends a message at least
/// once an interval, so two leave room for a slow network.
const SILENT_HEARTBEATS: u32 = 2;

/// A running watch ([`MemoryClient::watch_memories`](crate::MemoryClient::watch_memories)):
/// a [`Stream`] of the changes to the memories its scope sees, oldest
/// first, each once.
///
/// When the connection breaks, the server restarts or shuts down
/// (UNAVAILABLE) or goes silent for two of its heartbeat intervals, the
/// watch is opened again from the last cursor it delivered — no event is
/// skipped or repeated — trying as the connection's [`RetryPolicy`]
/// retries a read: up to `max_attempts` tries in a row with growing waits,
/// counted afresh after every message. Any other error (and the last failed
/// try) is the stream's last item. Give a long-lived watch a patient policy.
///
/// [`RetryPolicy`]: crate::RetryPolicy
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), engram_client::Error> {
/// # let engram = engram_client::Engram::from_env().await?;
/// use futures_util::StreamExt as _;
/// use engram_client::{CreateMemory, WatchMemories, proto::{MemoryType, RevisionAction, Scope}};
///
/// let scope = Scope::new("docs-watch");
/// let mut watch = engram.memory().watch_memories(WatchMemories::new(scope.clone())).await?;
/// engram.memory().create_memory(CreateMemory::new(scope, MemoryType::Fact, "Builds run on Linux")).await?;
/// let event = watch.next().await.expect("an event")?;
/// assert_eq!(event.action(), RevisionAction::Created);
/// assert_eq!(event.memory.unwrap().content, "Builds run on Linux");
/// assert_eq!(watch.cursor(), event.cursor);
/// # Ok(())
/// # }
/// ```
pub struct MemoryWatch {
    /// The next item, being made.
    step: Option<Step>,
    /// Where the consumer stands.
    cursor: String,
}

/// What the follower hands the stream: an event, or how far a message took
/// the watch past its events.
enum Item {
    /// Boxed: an event is many times the size of a cursor.
    Event(Box<proto::MemoryEvent>),
    Cursor(String),
}

type Step = Pin<Box<dyn Future<Output = (Follower, Option<Result<Item, Error>>)> + Send>>;

impl MemoryWatch {
    /// Opens a watch of `request` (the first message with its start cursor
    /// received, so every change committed from then on is reported).
    pub(crate) async fn open(
        connection: Connection,
        client: Generated,
        request: proto::WatchMemoriesRequest,
    ) -> Result<MemoryWatch, Error> {
        let mut follower = Follower {
            connection,
            client,
            request,
            messages: None,
            pending: VecDeque::new(),
            silence: None,
            failures: 0,
            ended: false,
        };
        follower.connect_at_first().await?;
        // The first message holds no event, only where the watch starts.
        let start = match follower.pending.back() {
            Some(Item::Cursor(cursor)) if follower.pending.len() == 1 => cursor.clone(),
            _ => follower.request.cursor.clone(),
        };
        Ok(MemoryWatch {
            step: Some(Box::pin(follower.into_step())),
            cursor: start,
        })
    }

    /// Where the watch stands: past every event it delivered, and past the
    /// changes after them it does not report. Keep it to resume later (say,
    /// after the program restarts) with
    /// [`WatchMemories::cursor`](crate::WatchMemories::cursor).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), engram_client::Error> {
    /// # let engram = engram_client::Engram::from_env().await?;
    /// use futures_util::StreamExt as _;
    /// use engram_client::{CreateMemory, WatchMemories, proto::{MemoryType, Scope}};
    ///
    /// let scope = Scope::new("docs-watch-cursor");
    /// let watch = engram.memory().watch_memories(WatchMemories::new(scope.clone())).await?;
    /// let saved = watch.cursor().to_owned();
    /// drop(watch);
    /// // Written while nobody watched: a watch from the saved cursor reports it.
    /// engram.memory().create_memory(CreateMemory::new(scope.clone(), MemoryType::Note, "Written meanwhile")).await?;
    /// let mut resumed = engram.memory().watch_memories(WatchMemories::new(scope).cursor(saved)).await?;
    /// let event = resumed.next().await.expect("an event")?;
    /// assert_eq!(event.memory.unwrap().content, "Written meanwhile");
    /// # Ok(())
    /// # }
    /// ```
    pub fn cursor(&self) -> &str {
        &self.cursor
    }
}

impl std::fmt::Debug for MemoryWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryWatch")
            .field("cursor", &self.cursor)
            .field("ended", &self.step.is_none())
            .finish()
    }
}

impl Stream for MemoryWatch {
    type Item = Result<proto::MemoryEvent, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let Some(step) = this.step.as_mut() else {
                return Poll::Ready(None);
            };
            let (follower, item) = std::task::ready!(step.as_mut().poll(cx));
            this.step = item
                .is_some()
                .then(|| Box::pin(follower.into_step()) as Step);
            match item {
                None => return Poll::Ready(None),
                Some(Ok(Item::Cursor(cursor))) => this.cursor = cursor,
                Some(Ok(Item::Event(event))) => {
                    this.cursor.clone_from(&event.cursor);
                    return Poll::Ready(Some(Ok(*event)));
                }
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
            }
        }
    }
}

/// The watch's connection to the server, and what it received but has not
/// handed on yet (one message at most: the next is read only once the
/// consumer took it all, so a slow consumer slows the server's sending).
struct Follower {
    connection: Connection,
    client: Generated,
    /// Its cursor is that of the last item handed on: where to resume.
    request: proto::WatchMemoriesRequest,
    messages: Option<Streaming<proto::WatchMemoriesResponse>>,
    pending: VecDeque<Item>,
    /// How long the server may stay silent before the connection is taken
    /// for dead (from its heartbeat interval).
    silence: Option<Duration>,
    /// Failed tries since the last message.
    failures: u32,
    ended: bool,
}

impl Follower {
    async fn into_step(mut self) -> (Follower, Option<Result<Item, Error>>) {
        let item = self.next_item().await;
        (self, item)
    }

    /// The first connection: retried like a read, and its error returned.
    async fn connect_at_first(&mut self) -> Result<(), Error> {
        loop {
            let error = match self.connect().await {
                Ok(()) => return Ok(()),
                Err(error) => error,
            };
            self.failures += 1;
            match self.resume_wait(&error) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return Err(error),
            }
        }
    }

    async fn next_item(&mut self) -> Option<Result<Item, Error>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                self.request.cursor = match &item {
                    Item::Event(event) => event.cursor.clone(),
                    Item::Cursor(cursor) => cursor.clone(),
                };
                return Some(Ok(item));
            }
            if self.ended {
                return None;
            }
            let received = match self.messages.as_mut() {
                Some(messages) => receive(messages, self.silence)
                    .await
                    .map(|message| self.take(message)),
                None => self.connect().await,
            };
            let Err(error) = received else {
                continue;
            };
            self.messages = None;
            self.failures += 1;
            match self.resume_wait(&error) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => {
                    self.ended = true;
                    return Some(Err(error));
                }
            }
        }
    }

    /// Opens the watch from the request's cursor and waits for its first
    /// message (within the connection's timeout, as a call would).
    async fn connect(&mut self) -> Result<(), Error> {
        let request = self.connection.request(self.request.clone(), false);
        let mut client = self.client.clone();
        let opened = async move {
            let mut messages = client.watch_memories(request).await?.into_inner();
            let first = messages.message().await?;
            Ok::<_, Status>((messages, first))
        };
        let (messages, first) = match self.connection.timeout {
            Some(timeout) => tokio::time::timeout(timeout, opened)
                .await
                .map_err(|_| silent(timeout))?,
            None => opened.await,
        }
        .map_err(Error::from_call)?;
        let first = first.ok_or_else(ended_without_status)?;
        self.messages = Some(messages);
        self.take(first);
        Ok(())
    }

    /// Keeps a message's events and cursor to hand on.
    fn take(&mut self, message: proto::WatchMemoriesResponse) {
        self.failures = 0;
        self.silence = message
            .heartbeat_interval
            .and_then(|interval| Duration::try_from(interval).ok())
            .filter(|interval| !interval.is_zero())
            .map(|interval| interval * SILENT_HEARTBEATS);
        self.pending.extend(
            message
                .events
                .into_iter()
                .map(|event| Item::Event(Box::new(event))),
        );
        self.pending.push_back(Item::Cursor(message.cursor));
    }

    /// How long to wait before resuming after `error`, or `None` when the
    /// watch ends with it: only a break of the connection, UNAVAILABLE and
    /// a shed call are resumed, while the policy has tries left.
    fn resume_wait(&self, error: &Error) -> Option<Duration> {
        let retry = &self.connection.retry;
        if self.failures >= retry.max_attempts {
            return None;
        }
        match error {
            Error::Transport(_) => Some(retry.backoff(self.failures)),
            _ => self.connection.retry_wait(error, true, self.failures),
        }
    }
}

/// The next message of `messages` — an error when the stream fails, ends,
/// or is silent longer than `silence`.
async fn receive(
    messages: &mut Streaming<proto::WatchMemoriesResponse>,
    silence: Option<Duration>,
) -> Result<proto::WatchMemoriesResponse, Error> {
    let next = match silence {
        Some(silence) => tokio::time::timeout(silence, messages.message())
            .await
            .map_err(|_| silent(silence))?,
        None => messages.message().await,
    };
    next.map_err(Error::from_call)?
        .ok_or_else(ended_without_status)
}

/// A server silent for `waited`: taken for a broken connection.
fn silent(waited: Duration) -> Error {
    Error::Transport(Status::unavailable(format!(
        "no message from the server within {waited:?}"
    )))
}

/// A watch the server ended without an error: it never does, so something
/// on the way (a proxy) cut it.
fn ended_without_status() -> Error {
    Error::Transport(Status::unavailable("the watch ended without a status"))
}
