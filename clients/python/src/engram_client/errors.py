"""The one error a call raises: the status code, the message, and the
details the server attached (field violations, a retry delay) as data."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2

# The trailer in which a gRPC server sends a google.rpc.Status with details.
STATUS_DETAILS_KEY = "grpc-status-details-bin"

_Detail = TypeVar("_Detail", bound=Message)


@dataclass(frozen=True)
class FieldViolation:
    """One offending field of a request the server refused as
    INVALID_ARGUMENT (a ``google.rpc.BadRequest.FieldViolation``)."""

    field: str
    """The field's path in the request, e.g. ``memory.content``."""
    description: str
    """What is wrong with it, e.g. ``is required and must not be blank``."""


class _FailedCall(Protocol):
    """What a failed call of grpc (blocking or asyncio) tells about itself."""

    def code(self) -> grpc.StatusCode: ...

    def details(self) -> str | None: ...

    def trailing_metadata(self) -> Iterable[tuple[str, str | bytes]] | None: ...


class EngramError(Exception):
    """A call to Engram that failed: the server answered with an error
    status, or the call never got an answer (the server unreachable or
    restarting: UNAVAILABLE; no answer in time: DEADLINE_EXCEEDED).

    Everything the server said is data: `code`, `message`, the
    `field_violations` of a bad request, the `retry_after` delay of a shed
    call, and every detail through `detail`. The grpc error it was made from
    is its ``__cause__``.
    """

    code: grpc.StatusCode
    """The gRPC status code."""
    message: str
    """The status message: the server's, or the client library's for a call
    that got no answer."""
    details: tuple[any_pb2.Any, ...]
    """The ``google.rpc.Status`` details the server sent, still packed."""

    def __init__(
        self, code: grpc.StatusCode, message: str, details: Sequence[any_pb2.Any] = ()
    ) -> None:
        """An error with this status; `details` are packed google.rpc details."""
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.details = tuple(details)

    def __reduce__(self) -> tuple[type[EngramError], tuple[grpc.StatusCode, str, tuple[any_pb2.Any, ...]]]:
        """Pickles as its status, so it can cross process boundaries."""
        return (type(self), (self.code, self.message, self.details))

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> EngramError:
        """The error for a failed grpc call (blocking or asyncio), with the
        details of its ``grpc-status-details-bin`` trailer."""
        if not isinstance(error, (grpc.Call, grpc.aio.AioRpcError)):
            return cls(grpc.StatusCode.UNKNOWN, str(error))
        call: _FailedCall = error
        return cls(call.code(), call.details() or "", _status_details(call.trailing_metadata()))

    def detail(self, kind: type[_Detail]) -> _Detail | None:
        """The first detail of type `kind` (e.g. ``error_details_pb2.RetryInfo``),
        unpacked, or None when the server sent none."""
        for packed in self.details:
            if packed.TypeName() == kind.DESCRIPTOR.full_name:
                detail = kind()
                packed.Unpack(detail)
                return detail
        return None

    @property
    def field_violations(self) -> list[FieldViolation]:
        """The offending fields of an INVALID_ARGUMENT answer, from its
        ``google.rpc.BadRequest``, in the server's order; empty otherwise."""
        bad_request = self.detail(error_details_pb2.BadRequest)
        if bad_request is None:
            return []
        return [FieldViolation(v.field, v.description) for v in bad_request.field_violations]

    @property
    def retry_after(self) -> float | None:
        """How many seconds the server asked the client to wait before trying
        again (``google.rpc.RetryInfo``), if it said."""
        info = self.detail(error_details_pb2.RetryInfo)
        if info is None or not info.HasField("retry_delay"):
            return None
        return float(info.retry_delay.ToTimedelta().total_seconds())

    @property
    def is_shed(self) -> bool:
        """Whether the server shed the call: RESOURCE_EXHAUSTED with a retry
        delay, which Engram sends only for a call it refused unread (too many
        calls in flight, or the API key's rate limit). Nothing was done, so
        any call, a write too, may be sent again after `retry_after`; the
        client's retries do."""
        return self.code == grpc.StatusCode.RESOURCE_EXHAUSTED and self.retry_after is not None

    @property
    def is_retryable(self) -> bool:
        """Whether the same call may succeed if tried again: the server was
        unreachable or busy (UNAVAILABLE), or it shed the call."""
        return self.code == grpc.StatusCode.UNAVAILABLE or self.is_shed


def _status_details(trailing_metadata: Iterable[tuple[str, str | bytes]] | None) -> list[any_pb2.Any]:
    """The details of the google.rpc.Status in a call's trailers, if any."""
    for key, value in trailing_metadata or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            try:
                return list(status_pb2.Status.FromString(value).details)
            except DecodeError:
                return []
    return []
