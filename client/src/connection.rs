//! One unary call: headers, deadline and retries, shared by every RPC.

use std::future::Future;
use std::time::Duration;

use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::{Error, RetryPolicy};

/// The channel and the settings every call carries.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    pub(crate) channel: Channel,
    pub(crate) authorization: Option<AsciiMetadataValue>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) retry: RetryPolicy,
}

impl Connection {
    /// The `authorization: Bearer <key>` value for `api_key`.
    pub(crate) fn bearer(api_key: &str) -> Result<AsciiMetadataValue, Error> {
        let mut value = MetadataValue::try_from(format!("Bearer {api_key}")).map_err(|_| {
            Error::Config("the API key must be printable ASCII to be sent as a header".into())
        })?;
        // Kept out of Debug output and of HTTP/2 header compression.
        value.set_sensitive(true);
        Ok(value)
    }

    /// Wraps `message` in a request with this connection's API key and
    /// deadline (sent as `grpc-timeout`, so the server stops waiting too).
    pub(crate) fn request<T>(&self, message: T, with_deadline: bool) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        if let Some(authorization) = &self.authorization {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
        }
        if let (true, Some(timeout)) = (with_deadline, self.timeout) {
            request.set_timeout(timeout);
        }
        request
    }

    /// Sends `message` with `send`, trying again while the policy has tries
    /// left: after UNAVAILABLE when `repeat` allows it, and after the server
    /// shed the call ([`Error::is_shed`]) whatever the call, since a shed
    /// call was never read.
    pub(crate) async fn unary<Req, Resp, Fut>(
        &self,
        message: Req,
        repeat: bool,
        mut send: impl FnMut(tonic::Request<Req>) -> Fut,
    ) -> Result<Resp, Error>
    where
        Req: Clone,
        Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
    {
        let mut attempt = 1;
        loop {
            if attempt >= self.retry.max_attempts {
                // The last try: the message itself, no copy kept.
                return self.call(send(self.request(message, true))).await;
            }
            let error = match self.call(send(self.request(message.clone(), true))).await {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            let Some(wait) = self.retry_wait(&error, repeat, attempt) else {
                return Err(error);
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Sends a client stream made by `make` with `send`, making it anew and
    /// trying again while the policy has tries left, after UNAVAILABLE or a
    /// shed call: for streams whose messages may be sent twice (steps: one
    /// resent with the content of a stored one is acknowledged as stored).
    /// No deadline: a stream lasts as long as its messages.
    pub(crate) async fn repeatable_stream<S, Resp, Fut>(
        &self,
        mut make: impl FnMut() -> S,
        mut send: impl FnMut(tonic::Request<S>) -> Fut,
    ) -> Result<Resp, Error>
    where
        Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
    {
        let mut attempt = 1;
        loop {
            let error = match send(self.request(make(), false)).await {
                Ok(response) => return Ok(response.into_inner()),
                Err(status) => Error::from_call(status),
            };
            if attempt >= self.retry.max_attempts {
                return Err(error);
            }
            let Some(wait) = self.retry_wait(&error, true, attempt) else {
                return Err(error);
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// How long to wait before trying again after retry number `attempt`
    /// failed with `error`; `None` when the call may not be tried again.
    /// The server's own delay is taken when it gives one, but never longer
    /// than the policy's longest wait or the call's timeout.
    pub(crate) fn retry_wait(&self, error: &Error, repeat: bool, attempt: u32) -> Option<Duration> {
        if !(error.is_shed() || repeat && error.is_retryable()) {
            return None;
        }
        let wait = match error.retry_after() {
            Some(delay) => delay.min(self.retry.max_backoff),
            None => self.retry.backoff(attempt),
        };
        Some(self.timeout.map_or(wait, |timeout| wait.min(timeout)))
    }

    /// Waits for one try, within the client's own deadline (for a server
    /// that accepted the connection but does not answer at all).
    async fn call<Resp>(
        &self,
        call: impl Future<Output = Result<tonic::Response<Resp>, Status>>,
    ) -> Result<Resp, Error> {
        let result = match self.timeout {
            Some(timeout) => tokio::time::timeout(timeout, call)
                .await
                .unwrap_or_else(|_| Err(deadline_exceeded(timeout))),
            None => call.await,
        };
        result
            .map(tonic::Response::into_inner)
            .map_err(Error::from_call)
    }
}

/// The status of a call the client gave up waiting for; it counts as a
/// transport failure, so it carries its cause.
fn deadline_exceeded(timeout: Duration) -> Status {
    let message = format!("no answer within {timeout:?}");
    let mut status = Status::new(Code::DeadlineExceeded, message.clone());
    status.set_source(std::sync::Arc::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        message,
    )));
    status
}

/// Defines the unary RPC methods of a sub-client: each takes anything that
/// converts into its request message (the message itself or a builder),
/// returns the response message, and says whether it may be repeated after
/// UNAVAILABLE: `safe` (reads), `with_request_id` (creates, when the request
/// carries one) or `never` (a shed call is repeated whatever this says).
macro_rules! unary_rpcs {
    ($(
        $(#[$doc:meta])*
        $name:ident($request:ident) -> $response:ident, $repeat:ident;
    )*) => {
        $(
            $(#[$doc])*
            pub async fn $name(
                &self,
                request: impl Into<proto::$request>,
            ) -> Result<proto::$response, Error> {
                let request: proto::$request = request.into();
                let repeat = unary_rpcs!(@repeat $repeat, request);
                let client = &self.client;
                self.connection
                    .unary(request, repeat, |request| {
                        let mut client = client.clone();
                        async move { client.$name(request).await }
                    })
                    .await
            }
        )*
    };
    (@repeat safe, $request:ident) => { true };
    (@repeat never, $request:ident) => { false };
    (@repeat with_request_id, $request:ident) => { !$request.request_id.is_empty() };
}
pub(crate) use unary_rpcs;

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use tonic_types::{ErrorDetails, StatusExt as _};

    use super::*;

    fn connection(timeout: Option<Duration>) -> Connection {
        Connection {
            channel: Channel::from_static("http://127.0.0.1:1").connect_lazy(),
            authorization: None,
            timeout,
            retry: RetryPolicy::default(),
        }
    }

    fn shed(delay: Duration) -> Status {
        Status::with_error_details(
            Code::ResourceExhausted,
            "the server is busy",
            ErrorDetails::with_retry_info(Some(delay)),
        )
    }

    #[tokio::test]
    async fn a_shed_write_is_tried_again_until_it_is_let_through() {
        let tries = AtomicU32::new(0);
        let answer = connection(None)
            .unary("write", false, |_| {
                let tried = tries.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    if tried < 3 {
                        Err(shed(Duration::from_millis(1)))
                    } else {
                        Ok(tonic::Response::new("stored"))
                    }
                }
            })
            .await;
        assert_eq!(answer.expect("stored in the end"), "stored");
        assert_eq!(tries.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn only_shed_calls_and_repeatable_unavailable_ones_are_tried_again() {
        let connection = connection(Some(Duration::from_millis(300)));
        let error = |status| Error::from_call(status);
        let delay = Duration::from_millis(250);
        assert_eq!(
            connection.retry_wait(&error(shed(delay)), false, 1),
            Some(delay),
            "a shed write waits the server's delay"
        );
        assert_eq!(
            connection.retry_wait(&error(shed(Duration::from_secs(60))), false, 1),
            Some(Duration::from_millis(300)),
            "never longer than the call's timeout"
        );
        assert_eq!(
            connection.retry_wait(
                &error(Status::resource_exhausted("message too large")),
                true,
                1
            ),
            None,
            "RESOURCE_EXHAUSTED without a delay was not shed"
        );
        assert_eq!(
            connection.retry_wait(&error(Status::unavailable("busy")), false, 1),
            None,
            "a write that may have been done is not repeated"
        );
        assert!(
            connection
                .retry_wait(&error(Status::unavailable("busy")), true, 1)
                .is_some()
        );
        let long = Connection {
            timeout: None,
            ..connection
        };
        assert_eq!(
            long.retry_wait(&error(shed(Duration::from_secs(60))), true, 1),
            Some(RetryPolicy::default().max_backoff),
            "never longer than the policy's longest wait"
        );
    }
}
