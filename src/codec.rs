//! The protobuf codec of the generated services: prost's, except that a
//! message that cannot be decoded is INVALID_ARGUMENT — on a server, bytes
//! that are not valid protobuf or a string that is not UTF-8 are the
//! caller's fault, not an internal error (tonic's own codec says INTERNAL).

use std::marker::PhantomData;

use tonic::Status;
use tonic::codec::{BufferSettings, DecodeBuf, Decoder};
use tonic_prost::{ProstCodec, ProstEncoder};

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
    U: prost::Message + Default + Send + 'static,
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

impl<U: prost::Message + Default> Decoder for InvalidArgumentDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        U::decode(buf).map(Some).map_err(|error| {
            Status::invalid_argument(format!(
                "the message cannot be decoded (it must be valid protobuf of the RPC's request \
                 type, with UTF-8 strings): {error}"
            ))
        })
    }
}
