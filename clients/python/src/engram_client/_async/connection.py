"""One call: the API key, the deadline and retries, shared by every RPC of
the asyncio client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
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
            grpc.aio.secure_channel(settings.target, settings.credentials, options=settings.options)
            if settings.credentials is not None
            else grpc.aio.insecure_channel(settings.target, options=settings.options)
        )

    async def close(self) -> None:
        """Closes the channel; calls still in flight are cancelled."""
        await self.channel.close()

    async def unary(
        self,
        name: str,
        method: grpc.aio.UnaryUnaryMultiCallable[_Request, _Response],
        request: _Request,
        *,
        repeat: bool,
    ) -> _Response:
        """Sends `request` with `method` (RPC `name`), trying again while the policy has
        tries left: after UNAVAILABLE when `repeat` allows it, and after the
        server shed the call whatever the call, since a shed call was never
        read. Each try has the connection's deadline."""

        async def send() -> _Response:
            return await method(request, timeout=self.settings.timeout, metadata=self.settings.metadata)

        return await self._with_retries(name, repeat, send)

    async def stream(
        self,
        method: grpc.aio.StreamUnaryMultiCallable[_Request, _Response],
        messages: AsyncIterator[_Request] | Iterable[_Request],
    ) -> _Response:
        """Sends `messages` as one client stream with `method`, once. No
        deadline: a stream lasts as long as its messages."""
        try:
            return await method(_iterator(messages), metadata=self.settings.metadata)
        except grpc.RpcError as error:
            raise EngramError.from_rpc_error(error) from error

    async def repeatable_stream(
        self,
        name: str,
        method: grpc.aio.StreamUnaryMultiCallable[_Request, _Response],
        make: Callable[[], AsyncIterator[_Request] | Iterable[_Request]],
    ) -> _Response:
        """Sends a client stream made by `make` with `method` (RPC `name`), making it anew
        and trying again after UNAVAILABLE or a shed call while the policy
        has tries left: for streams whose messages may be sent twice."""

        async def send() -> _Response:
            return await method(_iterator(make()), metadata=self.settings.metadata)

        return await self._with_retries(name, True, send)

    async def _with_retries(self, name: str, repeat: bool, send: Callable[[], Awaitable[_Response]]) -> _Response:
        """Calls `send` until it succeeds or may not be tried again."""
        attempt = 1
        while True:
            try:
                return await send()
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
            await asyncio.sleep(wait)


def _iterator(messages: AsyncIterator[_Request] | Iterable[_Request]) -> AsyncIterator[_Request] | Iterator[_Request]:
    """`messages` as an iterator, which is what grpc takes."""
    return messages if isinstance(messages, AsyncIterator) else iter(messages)
