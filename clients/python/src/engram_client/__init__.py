"""A typed Python client for Engram, the long-term memory service for AI
agents.

Connect once with `Engram` (blocking; `engram_client.aio.Engram` is the
asyncio twin), then call the three services through ``engram.memory``,
``engram.learning`` and ``engram.policy``. Every RPC is a method that takes
its request message (from ``engram_client.v1``) and returns the response
message; helpers such as ``engram.memory.create`` take plain arguments for
the common calls. A failed call raises `EngramError`, which carries the
status code and the server's field violations as data. Reads, and creates
that carry a ``request_id``, are retried with backoff when the server is
unavailable; any call the server shed is retried after the delay it asks.

    from engram_client import Engram, Scope

    engram = Engram("127.0.0.1:50051")
    shop = Scope(namespace="demo", project_id="shop")
    engram.memory.create(shop, "lesson", "Run the migration before deploying")
    hits = engram.memory.search(shop, "deploy").hits
"""

from grpc import StatusCode

from engram_client._sync.client import Engram, EpisodeRun, LearningClient, MemoryClient, MemoryWatch, PolicyClient
from engram_client.errors import EngramError, FieldViolation
from engram_client.messages import MemoryLevelName, MemoryTypeName, step
from engram_client.retry import RetryPolicy
from engram_client.settings import DEFAULT_ADDRESS, DEFAULT_TIMEOUT, Tls
from engram_client.v1.common_pb2 import MemoryLevel, MemoryType, Scope
from engram_client.v1.memory_pb2 import Step, StepResult, WriteResult

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_TIMEOUT",
    "Engram",
    "EngramError",
    "EpisodeRun",
    "FieldViolation",
    "LearningClient",
    "MemoryClient",
    "MemoryLevel",
    "MemoryLevelName",
    "MemoryType",
    "MemoryTypeName",
    "MemoryWatch",
    "PolicyClient",
    "RetryPolicy",
    "Scope",
    "StatusCode",
    "Step",
    "StepResult",
    "Tls",
    "WriteResult",
    "step",
]
