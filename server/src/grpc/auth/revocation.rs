//! Key reloads reach open streams (DESIGN §9): a WatchMemories watch or a
//! StreamSteps stream outlives any one look at the key file, so each keeps
//! watching it, and ends — UNAUTHENTICATED when its key is gone,
//! PERMISSION_DENIED when the key's role or namespaces no longer cover it —
//! as soon as a reload takes its grant away.
//!
//! The check rides on the call's bodies, so a handler needs nothing for it:
//! a server stream's response ends with the refusal in its trailers, and a
//! client stream's next request message is the refusal, which the handler
//! returns as any error of its stream.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::watch;
use tonic::Status;

use super::key_file::{KeyDigest, KeyFile, Role};

/// The error of a revocable body: the inner body's, or the refusal.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The namespace a streaming call works in, told by its handler once the
/// first message is read (see [`crate::grpc::enter_namespace`]), so a reload
/// that narrows the key's namespaces can end it.
#[derive(Debug, Clone, Default)]
pub struct CallNamespace(Arc<OnceLock<String>>);

impl CallNamespace {
    /// Records the call's namespace (the first one told counts).
    pub fn record(&self, namespace: &str) {
        let _ = self.0.set(namespace.to_owned());
    }
}

/// What a streaming call was let in with, to check again at each reload.
pub struct Revocation {
    pub changes: watch::Receiver<Arc<KeyFile>>,
    pub digest: KeyDigest,
    pub needed: Role,
    pub namespace: CallNamespace,
}

impl Revocation {
    /// Why the call may no longer go on under `file`, if it may not.
    fn refusal(&self, file: &KeyFile) -> Option<Status> {
        let Some(grant) = file.grants.get(&self.digest) else {
            return Some(Status::unauthenticated(
                "the API key of this stream was revoked (the server's key file was reloaded)",
            ));
        };
        if grant.role < self.needed {
            return Some(Status::permission_denied(format!(
                "the API key of this stream now has the {} role, and this call needs {}",
                grant.role, self.needed
            )));
        }
        match self.namespace.0.get() {
            Some(namespace) if !grant.namespaces.allows(namespace) => {
                Some(Status::permission_denied(
                    "the API key of this stream may no longer use the namespace named in the request",
                ))
            }
            _ => None,
        }
    }

    /// Resolves with the refusal once a reload takes the grant away; never
    /// while it stays.
    pub async fn revoked(mut self) -> Status {
        loop {
            if self.changes.changed().await.is_err() {
                // The keys are gone with the server: nothing will revoke.
                return std::future::pending().await;
            }
            let file = self.changes.borrow_and_update().clone();
            if let Some(status) = self.refusal(&file) {
                tracing::info!(code = ?status.code(), "ending a stream whose API key no longer covers it");
                return status;
            }
        }
    }
}

/// How a revoked body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// A response: trailers carrying the refusal.
    Trailers,
    /// A request: an error the handler reads as the refusal.
    Error,
}

pin_project_lite::pin_project! {
    /// A call's request or response body that ends when its key is revoked
    /// (a body without a [`Revocation`] is passed through as it is).
    pub struct RevocableBody<B> {
        #[pin]
        inner: B,
        revoked: Option<Pin<Box<dyn Future<Output = Status> + Send>>>,
        ending: Ending,
        done: bool,
    }
}

impl<B> RevocableBody<B> {
    /// `inner`, unchanged.
    pub fn plain(inner: B) -> Self {
        Self::new(inner, None, Ending::Error)
    }

    /// A request body that fails with the refusal once `revoked` resolves.
    pub fn request(inner: B, revoked: impl Future<Output = Status> + Send + 'static) -> Self {
        Self::new(inner, Some(Box::pin(revoked)), Ending::Error)
    }

    /// A response body that ends with the refusal in its trailers once
    /// `revoked` resolves.
    pub fn response(inner: B, revoked: impl Future<Output = Status> + Send + 'static) -> Self {
        Self::new(inner, Some(Box::pin(revoked)), Ending::Trailers)
    }

    fn new(
        inner: B,
        revoked: Option<Pin<Box<dyn Future<Output = Status> + Send>>>,
        ending: Ending,
    ) -> Self {
        RevocableBody {
            inner,
            revoked,
            ending,
            done: false,
        }
    }
}

impl<B> Default for RevocableBody<B>
where
    B: Default,
{
    fn default() -> Self {
        Self::plain(B::default())
    }
}

impl<B> Body for RevocableBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        if let Some(revoked) = this.revoked.as_mut()
            && let Poll::Ready(status) = revoked.as_mut().poll(cx)
        {
            *this.done = true;
            return Poll::Ready(Some(match this.ending {
                Ending::Error => Err(Box::new(status)),
                Ending::Trailers => {
                    let mut trailers = http::HeaderMap::new();
                    match status.add_header(&mut trailers) {
                        Ok(()) => Ok(Frame::trailers(trailers)),
                        Err(status) => Err(Box::new(status)),
                    }
                }
            }));
        }
        this.inner.poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        if self.revoked.is_some() {
            // It may end early.
            let mut hint = SizeHint::new();
            if let Some(upper) = self.inner.size_hint().upper() {
                hint.set_upper(upper);
            }
            hint
        } else {
            self.inner.size_hint()
        }
    }
}
