//! A response body that tells a watcher when it ends: at the trailers that
//! carry a call's status, or when it fails or ends without them. A watcher
//! dropped before (the client went away) sees nothing, so its `Drop` is
//! where that case goes. The metrics and concurrency layers use it to know
//! when a call is over, which for a stream is long after the handler's
//! response.

use std::pin::Pin;
use std::task::{Context, Poll};

use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

/// The code number in a `grpc-status` header (of a trailers-only response)
/// or trailer, if there is one; 2 (UNKNOWN) for a value that is not a number.
pub fn status_code(headers: &HeaderMap) -> Option<usize> {
    let value = headers.get("grpc-status")?;
    Some(
        value
            .to_str()
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(tonic::Code::Unknown as usize),
    )
}

/// Told once, when the body it watches ends.
pub trait BodyWatcher {
    /// The body ended with these trailers, or without (`None`: it failed,
    /// or ended without a status).
    fn ended(self, trailers: Option<&HeaderMap>);
}

pin_project! {
    /// `inner`, watched by `watcher` until it ends.
    pub struct WatchedBody<B, W> {
        #[pin]
        inner: B,
        watcher: Option<W>,
    }
}

impl<B, W> WatchedBody<B, W> {
    pub fn new(inner: B, watcher: Option<W>) -> WatchedBody<B, W> {
        WatchedBody { inner, watcher }
    }
}

/// An empty body watched by no one (what a layer in front answers with).
impl<B: Default, W> Default for WatchedBody<B, W> {
    fn default() -> Self {
        WatchedBody::new(B::default(), None)
    }
}

impl<B: Body, W: BodyWatcher> Body for WatchedBody<B, W> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        let ended = match &polled {
            Poll::Pending => None,
            Poll::Ready(Some(Ok(frame))) => frame.trailers_ref().map(Some),
            Poll::Ready(Some(Err(_)) | None) => Some(None),
        };
        if let Some(trailers) = ended
            && let Some(watcher) = this.watcher.take()
        {
            watcher.ended(trailers);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
