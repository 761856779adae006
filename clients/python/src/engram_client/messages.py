"""Small builders for the messages the helpers take: enum values by their
short names, and steps of an episode."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Generic, Literal, TypeVar

from engram_client.v1 import common_pb2, memory_pb2, policy_pb2

MemoryTypeName = Literal["fact", "preference", "lesson", "decision", "event", "note"]
"""A memory type by its short name, as the helpers take it."""
MemoryLevelName = Literal["global", "workspace", "conversation"]
"""A memory level by its short name, as the helpers take it."""
ClassifyModeName = Literal["auto", "rules", "llm"]
"""A classifier by its short name, as the helpers take it."""
ContradictionPolicyName = Literal["invalidate", "link", "off"]
"""What a write does to older memories it contradicts, as the helpers take it."""
EntityTypeName = Literal["person", "organization", "project", "service", "tool", "place", "other"]
"""An entity type by its short name, as the helpers take it."""

_T = TypeVar("_T")


def memory_type(value: MemoryTypeName | common_pb2.MemoryType.ValueType) -> common_pb2.MemoryType.ValueType:
    """``"lesson"`` -> ``MEMORY_TYPE_LESSON``; an enum value is kept as it is."""
    if isinstance(value, str):
        return common_pb2.MemoryType.Value("MEMORY_TYPE_" + value.upper())
    return value


def memory_level(value: MemoryLevelName | common_pb2.MemoryLevel.ValueType) -> common_pb2.MemoryLevel.ValueType:
    """``"workspace"`` -> ``MEMORY_LEVEL_WORKSPACE``; an enum value is kept as it is."""
    if isinstance(value, str):
        return common_pb2.MemoryLevel.Value("MEMORY_LEVEL_" + value.upper())
    return value


def contradiction_policy(
    value: ContradictionPolicyName | memory_pb2.ContradictionPolicy.ValueType,
) -> memory_pb2.ContradictionPolicy.ValueType:
    """``"off"`` -> ``CONTRADICTION_POLICY_OFF``; an enum value is kept as it is."""
    if isinstance(value, str):
        return memory_pb2.ContradictionPolicy.Value("CONTRADICTION_POLICY_" + value.upper())
    return value


def entity_type(value: EntityTypeName | memory_pb2.EntityType.ValueType) -> memory_pb2.EntityType.ValueType:
    """``"person"`` -> ``ENTITY_TYPE_PERSON``; an enum value is kept as it is."""
    if isinstance(value, str):
        return memory_pb2.EntityType.Value("ENTITY_TYPE_" + value.upper())
    return value


def classify_mode(value: ClassifyModeName | policy_pb2.ClassifyMode.ValueType) -> policy_pb2.ClassifyMode.ValueType:
    """``"rules"`` -> ``CLASSIFY_MODE_RULES``; an enum value is kept as it is."""
    if isinstance(value, str):
        return policy_pb2.ClassifyMode.Value("CLASSIFY_MODE_" + value.upper())
    return value


def step(
    number: int,
    tool: str,
    action: str,
    *,
    ok: bool = True,
    output: str = "",
    parameters: str | Mapping[str, object] = "",
    latency_ms: int = 0,
) -> memory_pb2.Step:
    """One step of an episode: step `number` (increasing, from 1) used
    `tool` to do `action`, and succeeded unless `ok` is false. `parameters`
    is JSON text, or a mapping that is sent as JSON."""
    return memory_pb2.Step(
        step_number=number,
        tool=tool,
        action=action,
        parameters=parameters if isinstance(parameters, str) else json.dumps(parameters, sort_keys=True),
        result=memory_pb2.STEP_RESULT_OK if ok else memory_pb2.STEP_RESULT_ERROR,
        output=output,
        latency_ms=latency_ms,
    )


class Replay(Generic[_T]):
    """Items of a one-pass iterable, drawn as they are needed, that can be
    iterated again from the start: each iteration gives the items drawn so
    far, then draws more. A stream retried after a failure sends every step
    again this way, from a generator too. Safe to iterate from several
    threads (grpc reads a stream's messages on a thread of its own, which
    may still hold a step of a failed try)."""

    def __init__(self, items: Iterable[_T]) -> None:
        """Replays `items`, drawn no further than some iteration asks."""
        self._source = iter(items)
        self._drawn: list[_T] = []
        self._exhausted = False
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[_T]:
        """The items drawn so far, then the rest as they come."""
        index = 0
        while True:
            with self._lock:
                if index == len(self._drawn):
                    if self._exhausted:
                        return
                    try:
                        self._drawn.append(next(self._source))
                    except StopIteration:
                        self._exhausted = True
                        return
                item = self._drawn[index]
            index += 1
            yield item
