//! The protobuf codec of the generated services: prost's, except that a
//! message that cannot be decoded is INVALID_ARGUMENT — on a server, bytes
//! that are not valid protobuf or a string that is not UTF-8 are the
//! caller's fault, not an internal error (tonic's own codec says INTERNAL)
//! — and that a request (a message whose name ends in `Request`) with a
//! control character in any string field is INVALID_ARGUMENT too, with a
//! field violation for each (see [`crate::request_text`]), before any
//! handler sees it.

use std::marker::PhantomData;

use bytes::Buf as _;
use tonic::codec::{BufferSettings, DecodeBuf, Decoder};
use tonic::{Code, Status};
use tonic_prost::{ProstCodec, ProstEncoder};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt as _};

use crate::request_text;

/// [`ProstCodec`] with decoding errors reported as INVALID_ARGUMENT.
#[derive(Debug, Clone)]
pub struct Codec<T, U> {
    _types: PhantomData<(T, U)>,
}

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec {
            _types: PhantomData,
        }
    }
}

impl<T, U> tonic::codec::Codec for Codec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + prost::Name + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = InvalidArgumentDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::raw_encoder(BufferSettings::default())
    }

    fn decoder(&mut self) -> Self::Decoder {
        InvalidArgumentDecoder { _type: PhantomData }
    }
}

/// Decodes `U` with prost; a failure is INVALID_ARGUMENT naming the problem
/// (never echoing the bytes).
#[derive(Debug, Clone)]
pub struct InvalidArgumentDecoder<U> {
    _type: PhantomData<U>,
}

impl<U: prost::Message + prost::Name + Default> Decoder for InvalidArgumentDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        if U::NAME.ends_with("Request") {
            // A decode buffer is one contiguous chunk.
            let bytes = &buf.chunk()[..buf.remaining().min(buf.chunk().len())];
            let violations = request_text::violations(&U::full_name(), bytes);
            if !violations.is_empty() {
                buf.advance(buf.remaining());
                return Err(invalid_text(violations));
            }
        }
        U::decode(buf).map(Some).map_err(|error| {
            Status::invalid_argument(format!(
                "the message cannot be decoded (it must be valid protobuf of the RPC's request \
                 type, with UTF-8 strings): {error}"
            ))
        })
    }
}

/// INVALID_ARGUMENT naming every string field that holds a control
/// character, in the message and as `google.rpc.BadRequest` details.
fn invalid_text(violations: Vec<request_text::TextViolation>) -> Status {
    let named: Vec<String> = violations
        .iter()
        .map(|v| format!("{}: {}", v.field, v.description))
        .collect();
    Status::with_error_details(
        Code::InvalidArgument,
        format!("invalid request: {}", named.join("; ")),
        ErrorDetails::with_bad_request(
            violations
                .into_iter()
                .map(|v| FieldViolation::new(v.field, v.description))
                .collect::<Vec<_>>(),
        ),
    )
}
