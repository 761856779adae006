"""The asyncio client, on grpc.aio: the same classes as engram_client with
``async`` methods.

    async with Engram("127.0.0.1:50051") as engram:
        hits = await engram.memory.search(Scope(namespace="demo"), "deploy")
"""

from engram_client._async.client import Engram, EpisodeRun, LearningClient, MemoryClient, MemoryWatch, PolicyClient

__all__ = ["Engram", "EpisodeRun", "LearningClient", "MemoryClient", "MemoryWatch", "PolicyClient"]
