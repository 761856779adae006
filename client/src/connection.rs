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

    /// Sends `message` with `send`, trying again after UNAVAILABLE when
    /// `repeat` allows it and the policy has tries left.
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
            if !repeat || attempt >= self.retry.max_attempts {
                // The last try: the message itself, no copy kept.
                return self.call(send(self.request(message, true))).await;
            }
            let error = match self.call(send(self.request(message.clone(), true))).await {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            if !error.is_retryable() {
                return Err(error);
            }
            // The server's own suggestion, but never longer than the policy allows.
            let wait = error
                .retry_after()
                .map(|wait| wait.min(self.retry.max_backoff))
                .unwrap_or_else(|| self.retry.backoff(attempt));
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
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
/// carries one) or `never`.
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
