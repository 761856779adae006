"""The asyncio client (engram_client.aio) against a real server: the same
helpers, errors and retries as the blocking one, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from conftest import Server
from engram_client import EngramError, RetryPolicy, Scope, StatusCode, WriteResult, step
from engram_client.aio import Engram
from engram_client.v1 import memory_pb2

LESSON = "Checkout deploys failed because the orders migration locked the table"


@pytest.mark.asyncio
async def test_the_common_calls_are_awaited(server: Server, namespace: str) -> None:
    async with Engram(server.address) as engram:
        shop = Scope(namespace=namespace, project_id="shop", user_id="alice")
        created = await engram.memory.create(shop, "lesson", LESSON, tags=["deploy"])
        assert created.result == WriteResult.WRITE_RESULT_CREATED
        hits = (await engram.memory.search(shop, "why did the deploy fail?")).hits
        assert hits[0].memory.id == created.memory.id
        context = await engram.memory.context(shop, query="deploying checkout", token_budget=200)
        assert LESSON in context.text
        kept = await engram.policy.remember_transcript(shop, "User: I prefer tabs over spaces.")
        assert kept.decision.should_store and kept.memory.content

        with pytest.raises(EngramError) as caught:
            await engram.memory.create(shop, "fact", "", importance=3)
        assert caught.value.code == StatusCode.INVALID_ARGUMENT
        assert [v.field for v in caught.value.field_violations] == ["memory.content", "memory.importance"]


@pytest.mark.asyncio
async def test_an_episode_streams_steps_from_an_async_generator(server: Server, namespace: str) -> None:
    async with Engram(server.address) as engram:
        scope = Scope(namespace=namespace)
        run = await engram.memory.episode(scope, "crawl", "Crawl the docs")

        async def pages() -> AsyncIterator[memory_pb2.StreamStepsRequest]:
            for n in (1, 2, 3):
                await asyncio.sleep(0)  # as an agent awaiting its tools
                yield memory_pb2.StreamStepsRequest(
                    scope=scope, episode_id=run.id, steps=[step(n, "http", f"fetch page {n}")]
                )

        streamed = await engram.memory.stream_steps_from(pages)
        assert (streamed.accepted, streamed.rejected) == (3, 0)
        more = await run.stream_steps([step(4, "http", "fetch the index")])
        assert more.accepted == 1
        completed = await run.complete(score=0.3, success=False, mistakes=["fetched pages one by one"])
        assert completed.episode.step_count == 4
        assert list(completed.learned.rules_added) == ["[AVOID] fetched pages one by one"]


@pytest.mark.asyncio
async def test_a_read_is_retried_across_a_restart(own_server: Server) -> None:
    scope = Scope(namespace="restart")
    patient = RetryPolicy(max_attempts=100, initial_backoff=0.05, max_backoff=0.2)
    async with Engram(own_server.address, retry=patient) as engram:
        await engram.memory.create(scope, "fact", "before the restart")
        own_server.stop()
        with pytest.raises(EngramError) as unsafe:
            await engram.memory.create(scope, "fact", "no request id")
        assert unsafe.value.code == StatusCode.UNAVAILABLE

        search = asyncio.ensure_future(engram.memory.search(scope, "restart"))
        await asyncio.sleep(0.5)
        assert not search.done(), "it waits for the server"
        await asyncio.to_thread(own_server.start)
        hits = (await asyncio.wait_for(search, 30)).hits
        assert [hit.memory.content for hit in hits] == ["before the restart"]


@pytest.mark.asyncio
async def test_a_watch_is_an_async_iterator_of_the_changes(server: Server, namespace: str) -> None:
    async with Engram(server.address) as engram:
        scope = Scope(namespace=namespace)
        watch = await engram.memory.watch(scope, tags=["deploy"])
        untagged = await engram.memory.create(scope, "fact", "not about deploys")
        tagged = await engram.memory.create(scope, "lesson", LESSON, tags=["deploy"])
        await engram.memory.delete_memory(
            memory_pb2.DeleteMemoryRequest(scope=scope, id=tagged.memory.id)
        )
        seen = []
        for _ in range(2):
            event = await asyncio.wait_for(anext(watch), timeout=30)
            seen.append((event.action, event.memory_id))
        assert seen == [
            (memory_pb2.REVISION_ACTION_CREATED, tagged.memory.id),
            (memory_pb2.REVISION_ACTION_DELETED, tagged.memory.id),
        ], f"only the tagged memory, not {untagged.memory.id}"
        await watch.close()
