# Generated from ../_async/connection.py by generate.py: edit that file and run
# generate.py again.
"""One call: the API key, the deadline and retries, shared by every RPC of
the blocking client."""

from __future__ import annotations

import time
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import grpc

from engram_client.errors import EngramError
from engram_client.retry import retry_wait
from engram_client.settings import Settings

_Request = TypeVar("_Request")
_Response = TypeVar("_Response")

_log = logging.getLogger("engram_client")


class Connection:
    """The channel and the settings every call carries."""

    def __init__(self, settings: Settings) -> None:
        """Opens a channel with `settings`; it connects on the first call."""
        self.settings = settings
        self.channel = (
            grpc.secure_channel(settings.target, settings.credentials, options=settings.options)
            if settings.credentials is not None
            else grpc.insecure_channel(settings.target, options=settings.options)
        )

    def close(self) -> None:
        """Closes the channel; calls still in flight are cancelled."""
        self.channel.close()

    def unary(
        self,
        name: str,
        method: grpc.UnaryUnaryMultiCallable[_Request, _Response],
        request: _Request,
        *,
        repeat: bool,
    ) -> _Response:
        """Sends `request` with `method` (RPC `name`), trying again while the policy has
        tries left: after UNAVAILABLE when `repeat` allows it, and after the
        server shed the call whatever the call, since a shed call was never
        read. Each try has the connection's deadline."""

        def send() -> _Response:
            return method(request, timeout=self.settings.timeout, metadata=self.settings.metadata)

        return self._with_retries(name, repeat, send)

    def stream(
        self,
        method: grpc.StreamUnaryMultiCallable[_Request, _Response],
        messages: Iterable[_Request],
    ) -> _Response:
        """Sends `messages` as one client stream with `method`, once. No
        deadline: a stream lasts as long as its messages."""
        try:
            return method(_iterator(messages), metadata=self.settings.metadata)
        except grpc.RpcError as error:
            raise EngramError.from_rpc_error(error) from error

    def repeatable_stream(
        self,
        name: str,
        method: grpc.StreamUnaryMultiCallable[_Request, _Response],
        make: Callable[[], Iterable[_Request]],
    ) -> _Response:
        """Sends a client stream made by `make` with `method` (RPC `name`), making it anew
        and trying again after UNAVAILABLE or a shed call while the policy
        has tries left: for streams whose messages may be sent twice."""

        def send() -> _Response:
            return method(_iterator(make()), metadata=self.settings.metadata)

        return self._with_retries(name, True, send)

    def _with_retries(self, name: str, repeat: bool, send: Callable[[], _Response]) -> _Response:
        """Calls `send` until it succeeds or may not be tried again."""
        attempt = 1
        while True:
            try:
                return send()
            except grpc.RpcError as error:
                failure = EngramError.from_rpc_error(error)
                wait = retry_wait(
                    failure,
                    repeat=repeat,
                    attempt=attempt,
                    policy=self.settings.retry,
                    timeout=self.settings.timeout,
                )
                if wait is None:
                    raise failure from error
            attempt += 1
            _log.info(
                "%s failed (%s); trying again in %.3f s, try %d of %d",
                name,
                failure,
                wait,
                attempt,
                self.settings.retry.max_attempts,
            )
            time.sleep(wait)


def _iterator(messages: Iterable[_Request]) -> Iterator[_Request]:
    """`messages` as an iterator, which is what grpc takes."""
    return messages if isinstance(messages, Iterator) else iter(messages)
