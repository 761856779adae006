# Generated from ../_async/client.py by generate.py: edit that file and run
# generate.py again.
"""The blocking client: a connection to Engram and its three services, with
helpers for the common calls."""

from __future__ import annotations

import time
import logging
import os
from collections.abc import Iterator  # Iterator in the blocking twin
from collections.abc import Iterable, Mapping
from types import TracebackType

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from engram_client._sync.connection import Connection
from engram_client._sync.services import LearningService, MemoryService, PolicyService
from engram_client.messages import (
    ClassifyModeName,
    ContradictionPolicyName,
    EntityTypeName,
    MemoryLevelName,
    MemoryTypeName,
    Replay,
    classify_mode,
    contradiction_policy,
    entity_type,
    memory_level,
    memory_type,
)
from engram_client.errors import EngramError
from engram_client.retry import RetryPolicy, retry_wait
from engram_client.settings import DEFAULT_ADDRESS, DEFAULT_TIMEOUT, Tls, settings
from engram_client.v1 import common_pb2, memory_pb2, policy_pb2

_log = logging.getLogger("engram_client")


class Engram:
    """A connection to an Engram server, with its three services as
    `memory`, `learning` and `policy`. The blocking client.

    `addr` is ``host:port``, ``http://host:port`` or ``https://host:port``
    (TLS). `api_key` is sent as ``authorization: Bearer <key>`` with every
    call. `tls` is True for TLS with the system's certificate authorities, or
    a `Tls` with a private CA, a client certificate or a server name. Each try
    of a call may take `timeout` seconds (None: no limit); failed calls are
    tried again as `retry` says. The channel reconnects by itself after the
    server restarts. Close it with `close`, or use the client as a context
    manager.
    """

    memory: MemoryClient
    """The memory service: memories, search, context and episodes."""
    learning: LearningClient
    """The learning service: outcomes, heuristics, anti-patterns, task rules,
    mistake cards, consolidation, forgetting and statistics."""
    policy: PolicyClient
    """The policy service: decide what is worth remembering, and remember it."""

    def __init__(
        self,
        addr: str = DEFAULT_ADDRESS,
        *,
        api_key: str | None = None,
        tls: bool | Tls = False,
        timeout: float | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy = RetryPolicy(),
    ) -> None:
        """Opens a channel to `addr`; it connects on the first call. Raises
        ValueError for settings that cannot work."""
        self._connection = Connection(settings(addr, api_key=api_key, tls=tls, timeout=timeout, retry=retry))
        self.memory = MemoryClient(self._connection)
        self.learning = LearningClient(self._connection)
        self.policy = PolicyClient(self._connection)

    @classmethod
    def from_env(cls, *, timeout: float | None = DEFAULT_TIMEOUT, retry: RetryPolicy = RetryPolicy()) -> Engram:
        """A client for ``$ENGRAM_SERVER`` (default 127.0.0.1:50051) with the
        API key in ``$ENGRAM_API_KEY``, if set: the variables the ``engram``
        command reads too."""
        return cls(
            os.environ.get("ENGRAM_SERVER") or DEFAULT_ADDRESS,
            api_key=os.environ.get("ENGRAM_API_KEY") or None,
            timeout=timeout,
            retry=retry,
        )

    @property
    def channel(self) -> grpc.Channel:
        """The underlying channel, for services this client does not wrap
        (such as ``grpc.health.v1.Health``). Calls made on it carry no API key."""
        return self._connection.channel

    def close(self) -> None:
        """Closes the connection; calls still in flight are cancelled."""
        self._connection.close()

    def __enter__(self) -> Engram:
        """The client itself."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Closes the connection."""
        self.close()


class MemoryClient(MemoryService):
    """The memory service (``engram.v1.MemoryService``): every RPC as a
    method taking its request message, and helpers for the common calls
    that take plain arguments."""

    def create(
        self,
        scope: common_pb2.Scope,
        kind: MemoryTypeName | common_pb2.MemoryType.ValueType,
        content: str,
        *,
        summary: str = "",
        tags: Iterable[str] = (),
        metadata: Mapping[str, str] | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        level: MemoryLevelName | common_pb2.MemoryLevel.ValueType | None = None,
        request_id: str = "",
        contradictions: ContradictionPolicyName | memory_pb2.ContradictionPolicy.ValueType | None = None,
    ) -> memory_pb2.CreateMemoryResponse:
        """Stores one memory of type `kind` (``"fact"``, ``"preference"``,
        ``"lesson"``, ``"decision"``, ``"event"`` or ``"note"``), or
        reinforces the identical one already stored (``result`` is then
        MERGED). Unset fields take the server's defaults (the level: the
        narrowest the scope allows). With a `request_id` it is retried after
        UNAVAILABLE, and a repeat gets the first answer. Older memories of
        the same owner it contradicts are invalidated (their ids in
        ``invalidated_memory_ids``) unless `contradictions` is ``"off"``
        (unset: the server's default)."""
        memory = memory_pb2.MemoryInput(
            memory_type=memory_type(kind),
            content=content,
            summary=summary,
            tags=list(tags),
            metadata=dict(metadata or {}),
            importance=importance,
            confidence=confidence,
            level=memory_level(level) if level is not None else common_pb2.MEMORY_LEVEL_UNSPECIFIED,
        )
        request = memory_pb2.CreateMemoryRequest(
            scope=scope,
            memory=memory,
            request_id=request_id,
            contradictions=(
                contradiction_policy(contradictions)
                if contradictions is not None
                else memory_pb2.CONTRADICTION_POLICY_UNSPECIFIED
            ),
        )
        return self.create_memory(request)

    def search(
        self,
        scope: common_pb2.Scope,
        query: str,
        *,
        limit: int = 0,
        types: Iterable[MemoryTypeName | common_pb2.MemoryType.ValueType] = (),
        tags: Iterable[str] = (),
        min_importance: float = 0.0,
        entities: Iterable[str] = (),
    ) -> memory_pb2.SearchMemoriesResponse:
        """Finds the memories visible from `scope` that match `query`, ranked
        by relevance, recency and importance (at most `limit`; 0: the
        server's default), optionally only of some `types`, carrying every
        one of `tags`, at least `min_importance`, or naming every one of
        `entities` (each by id or any of its names)."""
        memory_filter = memory_pb2.MemoryFilter(
            memory_types=[memory_type(t) for t in types],
            tags=list(tags),
            min_importance=min_importance,
            entities=list(entities),
        )
        request = memory_pb2.SearchMemoriesRequest(scope=scope, query=query, limit=limit, filter=memory_filter)
        return self.search_memories(request)

    def entities(
        self,
        scope: common_pb2.Scope,
        *,
        types: Iterable[EntityTypeName | memory_pb2.EntityType.ValueType] = (),
        prefix: str = "",
        page_size: int = 0,
        page_token: str = "",
    ) -> memory_pb2.ListEntitiesResponse:
        """One page of the entities (people, organizations, projects,
        services, tools, places) the memories visible from `scope` name, by
        name: optionally only of some `types`, or whose name starts with
        `prefix` (without case)."""
        request = memory_pb2.ListEntitiesRequest(
            scope=scope,
            entity_types=[entity_type(t) for t in types],
            name_prefix=prefix,
            page_size=page_size,
            page_token=page_token,
        )
        return self.list_entities(request)

    def entity(
        self,
        scope: common_pb2.Scope,
        name: str,
        *,
        valid_at: Timestamp | None = None,
        memory_limit: int = 0,
    ) -> memory_pb2.GetEntityResponse:
        """The entity `name` (its id or any of its names, without case): its
        names, and what the memories visible from `scope` said of it at
        `valid_at` (now when None) — the memories that name it, newest truth
        first, and the attributes they state."""
        request = memory_pb2.GetEntityRequest(scope=scope, entity=name, valid_at=valid_at, memory_limit=memory_limit)
        return self.get_entity(request)

    def context(
        self,
        scope: common_pb2.Scope,
        *,
        query: str = "",
        task_id: str = "",
        task_type: str = "",
        token_budget: int = 0,
    ) -> memory_pb2.BuildContextResponse:
        """A context block for an agent's prompt: rules, mistakes, advice,
        memories relevant to `query`, preferences and recent episodes of
        `task_id`, within `token_budget` tokens (0: the server's default)."""
        request = memory_pb2.BuildContextRequest(
            scope=scope, query=query, task_id=task_id, task_type=task_type, token_budget=token_budget
        )
        return self.build_context(request)

    def episode(
        self,
        scope: common_pb2.Scope,
        task_id: str,
        description: str,
        *,
        task_type: str = "",
        request_id: str = "",
    ) -> EpisodeRun:
        """Starts recording an episode of work on `task_id` (the task family,
        e.g. ``"deploy_checkout"``), described by `description` (what this run
        is to do), and returns it, to stream its steps and complete it. With a `request_id` the start is retried after
        UNAVAILABLE, and a repeat gets the first episode."""
        request = memory_pb2.StartEpisodeRequest(
            scope=scope, task_id=task_id, description=description, task_type=task_type, request_id=request_id
        )
        return EpisodeRun(self, scope, self.start_episode(request))


    def watch(
        self,
        scope: common_pb2.Scope,
        *,
        types: Iterable[MemoryTypeName | common_pb2.MemoryType.ValueType] = (),
        levels: Iterable[MemoryLevelName | common_pb2.MemoryLevel.ValueType] = (),
        tags: Iterable[str] = (),
        cursor: str = "",
    ) -> MemoryWatch:
        """Follows the changes to the memories visible from `scope`
        (``WatchMemories``): creates, merges, updates, deletes and expiries,
        in commit order, optionally only of some `types`, `levels` or
        carrying every one of `tags`. From now, or from a `cursor` an earlier
        watch handed out (`MemoryWatch.cursor`, `MemoryEvent.cursor`).
        Returns once the server has started the watch: a change committed
        after this returns is delivered. Iterate the returned `MemoryWatch`
        for the events; it resumes by itself after UNAVAILABLE (a restart,
        a shutdown, a broken connection) or a shed call, from the last
        cursor it delivered, so no event is missed or repeated."""
        event_filter = memory_pb2.MemoryEventFilter(
            memory_types=[memory_type(t) for t in types],
            levels=[memory_level(level) for level in levels],
            tags=list(tags),
        )
        request = memory_pb2.WatchMemoriesRequest(scope=scope, filter=event_filter)
        watch = MemoryWatch(self._connection, self._stub.WatchMemories, request, cursor)
        watch._start()
        return watch


class MemoryWatch:
    """A running watch, from `MemoryClient.watch`: iterate it for the
    `MemoryEvent` messages (each with its memory as it is now, or the
    tombstone of a removed one). It ends only when the server ends it
    without an error; a failure that may not be retried (as `RetryPolicy`
    decides: a try budget reset by every message that arrives) is raised as
    `EngramError`. Close it with `close` to stop the call."""

    def __init__(
        self,
        connection: Connection,
        method: grpc.UnaryStreamMultiCallable[memory_pb2.WatchMemoriesRequest, memory_pb2.WatchMemoriesResponse],
        request: memory_pb2.WatchMemoriesRequest,
        cursor: str,
    ) -> None:
        """A watch of `request` with `method` from `cursor`; `_start` opens it."""
        self._connection = connection
        self._method = method
        self._request = request
        self._call: grpc.Call | None = None
        self._messages: Iterator[memory_pb2.WatchMemoriesResponse] | None = None
        self._pending: list[memory_pb2.MemoryEvent] = []
        self._message_cursor = cursor
        self.cursor = cursor
        """Where the watch stands: the cursor after the last event returned
        (or the heartbeat after it). A new watch from it resumes without a
        gap or a repeat."""

    def _start(self) -> None:
        """Opens the call and takes the server's first message, which comes
        at once with the cursor of the watch's start."""
        self._take(self._next_message())

    def _take(self, message: memory_pb2.WatchMemoriesResponse) -> None:
        """Queues `message`'s events; a message without any moves the cursor."""
        self._pending.extend(message.events)
        self._message_cursor = message.cursor
        if not self._pending:
            self.cursor = message.cursor

    def _next_message(self) -> memory_pb2.WatchMemoriesResponse:
        """The next message, opening the call again from `cursor` after a
        failure the policy lets it ride out. StopIteration when the
        server ended the watch."""
        attempt = 1
        while True:
            try:
                if self._messages is None:
                    request = memory_pb2.WatchMemoriesRequest()
                    request.CopyFrom(self._request)
                    request.cursor = self.cursor
                    call = self._method(request, metadata=self._connection.settings.metadata)
                    self._call, self._messages = call, iter(call)
                return next(self._messages)
            except grpc.RpcError as error:
                self._call = self._messages = None
                failure = EngramError.from_rpc_error(error)
                policy = self._connection.settings.retry
                wait = retry_wait(failure, repeat=True, attempt=attempt, policy=policy, timeout=None)
                if wait is None:
                    raise failure from error
            attempt += 1
            _log.info("WatchMemories failed (%s); resuming in %.3f s, try %d", failure, wait, attempt)
            time.sleep(wait)

    def __iter__(self) -> MemoryWatch:
        """The watch itself."""
        return self

    def __next__(self) -> memory_pb2.MemoryEvent:
        """The next event, waiting for it."""
        while not self._pending:
            self._take(self._next_message())
        event = self._pending.pop(0)
        self.cursor = event.cursor if self._pending else self._message_cursor
        return event

    def close(self) -> None:
        """Ends the call; iterating the watch opens it again."""
        if self._call is not None:
            self._call.cancel()
        self._call = self._messages = None


class EpisodeRun:
    """An episode being recorded, from `MemoryClient.episode`: stream its
    steps, then complete it with its outcome."""

    episode: memory_pb2.Episode
    """The episode as the server started it."""

    def __init__(self, memory: MemoryClient, scope: common_pb2.Scope, episode: memory_pb2.Episode) -> None:
        """The running `episode` of `scope`, recorded through `memory`."""
        self._memory = memory
        self._scope = scope
        self.episode = episode

    @property
    def id(self) -> str:
        """The episode's id."""
        return self.episode.id

    def stream_steps(self, steps: Iterable[memory_pb2.Step]) -> memory_pb2.StreamStepsResponse:
        """Streams `steps` (a list, or a generator yielding them as the work
        goes on), each stored as it arrives; the answer counts the accepted
        and rejected ones. After UNAVAILABLE or a shed call the stream is sent
        again from its first step, as the retry policy allows: steps already
        stored are acknowledged as such (``already_stored``), not stored twice."""
        replay = Replay(steps)

        def messages() -> Iterable[memory_pb2.StreamStepsRequest]:
            return (
                memory_pb2.StreamStepsRequest(scope=self._scope, episode_id=self.id, steps=[step]) for step in replay
            )

        return self._memory.stream_steps_from(messages)

    def complete(
        self,
        *,
        score: float,
        success: bool,
        summary: str = "",
        mistakes: Iterable[str] = (),
        successes: Iterable[str] = (),
    ) -> memory_pb2.CompleteEpisodeResponse:
        """Completes the episode with its outcome: a `score` from 0 to 1,
        whether it was a `success`, a `summary`, and what went wrong
        (`mistakes`) and right (`successes`). The server learns from it in
        the same transaction (task rules, mistake cards); the answer says
        what it learned. Not retried after UNAVAILABLE."""
        outcome = memory_pb2.EpisodeOutcome(
            score=score, success=success, summary=summary, mistakes=list(mistakes), successes=list(successes)
        )
        request = memory_pb2.CompleteEpisodeRequest(scope=self._scope, episode_id=self.id, outcome=outcome)
        return self._memory.complete_episode(request)


class LearningClient(LearningService):
    """The learning service (``engram.v1.LearningService``): every RPC as a
    method taking its request message."""


class PolicyClient(PolicyService):
    """The policy service (``engram.v1.PolicyService``): every RPC as a
    method taking its request message, and a helper for Remember that takes
    plain arguments."""

    def remember_transcript(
        self,
        scope: common_pb2.Scope,
        transcript: str,
        *,
        task_id: str = "",
        tags: Iterable[str] = (),
        mode: ClassifyModeName | policy_pb2.ClassifyMode.ValueType = "auto",
        request_id: str = "",
    ) -> policy_pb2.RememberResponse:
        """Decides whether `transcript` is worth remembering (as what, how
        important, at which level) and stores it when it is, merging like
        `MemoryClient.create`; the answer carries the decision and the
        memory, if one was stored. With a `request_id` it is retried after
        UNAVAILABLE, and a repeat gets the first answer."""
        request = policy_pb2.RememberRequest(
            scope=scope,
            transcript=transcript,
            task_id=task_id,
            tags=list(tags),
            mode=classify_mode(mode),
            request_id=request_id,
        )
        return self.remember(request)
