"""The blocking client against a real server: the helpers, every RPC's
request and response messages, errors as data, and retries only where they
are safe, across a server restart and a server that sheds calls."""

from __future__ import annotations

import logging
import math
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import Server
from engram_client import (
    Engram,
    EngramError,
    FieldViolation,
    MemoryWatch,
    RetryPolicy,
    Scope,
    StatusCode,
    Tls,
    WriteResult,
    step,
)
from engram_client.v1 import learning_pb2, memory_pb2, policy_pb2

# Retries patient enough to outlast a server restart.
PATIENT = RetryPolicy(max_attempts=100, initial_backoff=0.05, max_backoff=0.2)

PREFERENCE = "Alice prefers concise answers with code first"
LESSON = "Checkout deploys failed because the orders migration locked the table"


@pytest.fixture
def engram(server: Server) -> Iterator[Engram]:
    """A client of the shared server."""
    with Engram(server.address) as client:
        yield client


def contents(engram: Engram, scope: Scope) -> list[str]:
    """What the memories of `scope` say, in storing order."""
    listed = engram.memory.list_memories(memory_pb2.ListMemoriesRequest(scope=scope))
    return sorted(m.content for m in listed.memories)


def test_an_identical_memory_is_merged_and_a_retried_request_id_gets_the_first_answer(
    engram: Engram, namespace: str
) -> None:
    alice = Scope(namespace=namespace, user_id="alice")
    first = engram.memory.create(alice, "preference", PREFERENCE, importance=0.9)
    assert first.result == WriteResult.WRITE_RESULT_CREATED
    assert (first.memory.content, first.memory.seen_count) == (PREFERENCE, 1)
    again = engram.memory.create(alice, "preference", PREFERENCE)
    assert again.result == WriteResult.WRITE_RESULT_MERGED
    assert (again.memory.id, again.memory.seen_count) == (first.memory.id, 2)

    metadata = {f"k{i}": str(i) for i in range(20)}
    created = engram.memory.create(alice, "event", "Rotated the password", metadata=metadata, request_id="rotate")
    retried = engram.memory.create(
        alice, "event", "Rotated the password", metadata=dict(reversed(metadata.items())), request_id="rotate"
    )
    assert retried == created, "a retry with the same request_id gets the first answer, not a merge"


def test_a_contradicting_memory_invalidates_the_older_one_which_stays_readable(
    engram: Engram, namespace: str
) -> None:
    alice = Scope(namespace=namespace, user_id="alice")
    old = engram.memory.create(alice, "fact", "The staging DB is on port 5433.")
    kept = engram.memory.create(alice, "fact", "staging db -> port 6432 now", contradictions="off")
    assert list(kept.invalidated_memory_ids) == []
    new = engram.memory.create(alice, "fact", "The staging database listens on port 7000 now.")
    assert set(new.invalidated_memory_ids) == {old.memory.id, kept.memory.id}
    gone = engram.memory.get_memory(memory_pb2.GetMemoryRequest(scope=alice, id=old.memory.id))
    assert gone.HasField("valid_to") and gone.invalidated_by == new.memory.id
    assert contents(engram, alice) == ["The staging database listens on port 7000 now."]
    then = engram.memory.list_memories(
        memory_pb2.ListMemoriesRequest(scope=alice, filter=memory_pb2.MemoryFilter(valid_at=old.memory.valid_from))
    )
    assert [m.content for m in then.memories] == ["The staging DB is on port 5433."]


def test_entities_are_listed_read_at_a_time_and_filter_searches(engram: Engram, namespace: str) -> None:
    alice = Scope(namespace=namespace, user_id="alice")
    acme = engram.memory.create(alice, "fact", "Alice Chen works at Acme.")
    engram.memory.create(alice, "fact", "Alice Chen now works at Globex.")
    engram.memory.create(alice, "note", "Priya Patel reviews the Globex contract.")
    people = engram.memory.entities(alice, types=["person"])
    assert [e.name for e in people.entities] == ["Alice Chen", "Priya Patel"]
    now = engram.memory.entity(alice, "alice chen")
    assert [(r.predicate, r.object) for r in now.relations] == [("employer", "Globex")]
    then = engram.memory.entity(alice, "Alice Chen", valid_at=acme.memory.valid_from)
    assert [m.id for m in then.memories] == [acme.memory.id]
    hits = engram.memory.search(alice, "Globex", entities=["Priya Patel"]).hits
    assert [h.memory.content for h in hits] == ["Priya Patel reviews the Globex contract."]


def test_search_ranks_the_matching_memory_first_with_its_component_scores(engram: Engram, namespace: str) -> None:
    shop = Scope(namespace=namespace, project_id="shop")
    lesson = engram.memory.create(shop, "lesson", LESSON, tags=["deploy", "postgres"]).memory
    engram.memory.create(shop, "fact", "The shop sells tea and coffee")
    assert lesson.level == 2, "a scope with a project stores WORKSPACE memories"

    found = engram.memory.search(shop, "why did the deploy fail?", limit=5)
    assert found.hits[0].memory.id == lesson.id
    assert found.hits[0].score > 0 and found.hits[0].relevance > 0
    only_facts = engram.memory.search(shop, "deploy", types=["fact"])
    assert all(hit.memory.memory_type == 1 for hit in only_facts.hits)
    tagged = engram.memory.search(shop, "deploy", tags=["postgres"])
    assert [hit.memory.id for hit in tagged.hits] == [lesson.id]


def test_context_gathers_preferences_and_lessons_within_the_budget(engram: Engram, namespace: str) -> None:
    engram.memory.create(Scope(namespace=namespace, user_id="alice"), "preference", PREFERENCE)
    engram.memory.create(Scope(namespace=namespace, project_id="shop"), "lesson", LESSON)
    both = Scope(namespace=namespace, project_id="shop", user_id="alice")
    context = engram.memory.context(both, query="deploying checkout", token_budget=200)
    assert PREFERENCE in context.text and LESSON in context.text
    assert 0 < context.token_estimate <= 200
    assert engram.memory.context(Scope(namespace=namespace + "-empty")).text == ""


def test_an_episode_streams_its_steps_as_they_come_and_learns_from_its_outcome(
    engram: Engram, namespace: str
) -> None:
    shop = Scope(namespace=namespace, project_id="shop")
    run = engram.memory.episode(shop, "deploy_checkout", "Deploy checkout", task_type="deployment")
    assert run.id and run.episode.status == memory_pb2.EPISODE_STATUS_RUNNING

    def work() -> Iterator[memory_pb2.Step]:
        """Steps yielded as an agent does them."""
        yield step(1, "shell", "run the orders migration", latency_ms=1200)
        yield step(2, "shell", "deploy checkout", parameters={"env": "production"})
        yield step(3, "http", "smoke-test checkout", ok=False, output="502 Bad Gateway")

    streamed = run.stream_steps(work())
    assert (streamed.accepted, streamed.rejected, streamed.already_stored) == (3, 0, 0)
    again = run.stream_steps([step(3, "http", "smoke-test checkout", ok=False, output="502 Bad Gateway")])
    assert (again.accepted, again.already_stored) == (1, 1), "a step sent again is acknowledged, not stored twice"

    completed = run.complete(
        score=0.9, success=True, summary="Deployed after migrating first", successes=["migrate before deploying"]
    )
    assert completed.episode.status == memory_pb2.EPISODE_STATUS_COMPLETED
    assert list(completed.learned.rules_added) == ["[WORKS] migrate before deploying"]

    fetched = engram.memory.get_episode(memory_pb2.GetEpisodeRequest(scope=shop, id=run.id))
    assert [s.step_number for s in fetched.steps] == [1, 2, 3]
    assert fetched.steps[1].parameters == '{"env": "production"}'
    assert fetched.steps[2].result == memory_pb2.STEP_RESULT_ERROR
    assert math.isclose(fetched.outcome.score, 0.9)
    with pytest.raises(EngramError) as twice:
        run.complete(score=0.5, success=False)
    assert twice.value.code == StatusCode.FAILED_PRECONDITION


def test_remember_stores_what_the_policy_finds_worth_keeping(engram: Engram, namespace: str) -> None:
    alice = Scope(namespace=namespace, user_id="alice")
    kept = engram.policy.remember_transcript(alice, "User: please never use semicolons in our JavaScript.")
    assert kept.decision.should_store and kept.HasField("memory")
    assert kept.memory.memory_type == 2, "a PREFERENCE"
    chatter = engram.policy.remember_transcript(alice, "User: thanks, that's all!", request_id="turn-42")
    assert not chatter.decision.should_store and not chatter.HasField("memory")
    assert engram.policy.classify(policy_pb2.ClassifyRequest(scope=alice, transcript="User: hi!")).decision.reason


def test_the_learning_service_is_reached_through_its_messages(engram: Engram, namespace: str) -> None:
    scope = Scope(namespace=namespace, agent_id="tester")
    outcome = learning_pb2.RecordOutcomeRequest(
        scope=scope, task="validate the signup form", success=True, strategy="fill every field, then submit"
    )
    recorded = engram.learning.record_outcome(outcome)
    assert recorded.outcome.task_type == "form_testing", "inferred from the task"
    stats = engram.learning.get_stats(learning_pb2.GetStatsRequest(scope=scope))
    assert stats.outcomes == 1


def test_from_env_connects_to_the_server_the_engram_command_would(
    server: Server, scope: Scope, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_SERVER", f"http://{server.address}")
    monkeypatch.delenv("ENGRAM_API_KEY", raising=False)
    with Engram.from_env() as engram:
        assert len(engram.memory.search(scope, "anything").hits) == 0


def test_a_bad_request_names_every_offending_field_as_data(engram: Engram, scope: Scope) -> None:
    with pytest.raises(EngramError) as caught:
        engram.memory.create(scope, "fact", "  ", importance=3, confidence=-1)
    error = caught.value
    assert error.code == StatusCode.INVALID_ARGUMENT
    assert [v.field for v in error.field_violations] == ["memory.content", "memory.importance", "memory.confidence"]
    assert all(isinstance(v, FieldViolation) and v.description for v in error.field_violations)
    assert "memory.content" in error.message and str(error).startswith("INVALID_ARGUMENT: ")
    assert isinstance(error.__cause__, Exception), "the grpc error it came from"

    with pytest.raises(EngramError) as missing:
        engram.memory.get_memory(memory_pb2.GetMemoryRequest(scope=scope, id="0196d1a4-2b6e-7c3d-9e1f-0a1b2c3d4e5f"))
    assert missing.value.code == StatusCode.NOT_FOUND and missing.value.field_violations == []


def test_reads_creates_with_a_request_id_and_step_streams_are_retried_across_a_restart(
    own_server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    scope = Scope(namespace="restart")
    engram = Engram(own_server.address, retry=PATIENT)
    engram.memory.create(scope, "fact", "before the restart")
    run = engram.memory.episode(scope, "restart", "Steps across a restart")
    own_server.stop()

    # While the server is down: a create without a request id fails at once
    # (repeating it could store it twice), while a read, a create with a
    # request id and a step stream keep trying until the server is back.
    with pytest.raises(EngramError) as unsafe:
        engram.memory.create(scope, "fact", "no request id")
    assert unsafe.value.code == StatusCode.UNAVAILABLE and unsafe.value.is_retryable

    caplog.set_level(logging.INFO, logger="engram_client")
    with ThreadPoolExecutor(3) as pool:
        reader = pool.submit(contents, engram, scope)
        creator = pool.submit(engram.memory.create, scope, "fact", "with a request id", request_id="restart-1")
        streamer = pool.submit(run.stream_steps, [step(1, "shell", "wait"), step(2, "shell", "go on")])
        time.sleep(0.5)
        assert not (reader.done() or creator.done() or streamer.done()), "they wait for the server"
        own_server.start()
        assert "before the restart" in reader.result(timeout=30), "the read may land before or after the create"
        assert creator.result(timeout=30).result == WriteResult.WRITE_RESULT_CREATED
        assert streamer.result(timeout=30).accepted == 2
    assert contents(engram, scope) == ["before the restart", "with a request id"]
    retried = {record.getMessage().split()[0] for record in caplog.records}
    assert {"ListMemories", "CreateMemory", "StreamSteps"} <= retried, caplog.text
    engram.close()


def test_retries_give_up_after_max_attempts(own_server: Server) -> None:
    engram = Engram(own_server.address, retry=RetryPolicy(max_attempts=3, initial_backoff=0.01))
    engram.learning.get_stats(learning_pb2.GetStatsRequest(scope=Scope(namespace="down")))
    own_server.stop()
    started = time.monotonic()
    with pytest.raises(EngramError) as caught:
        engram.learning.get_stats(learning_pb2.GetStatsRequest(scope=Scope(namespace="down")))
    assert caught.value.code == StatusCode.UNAVAILABLE
    assert time.monotonic() - started < 5
    own_server.start()
    engram.close()


def probe_until_shed(engram: Engram, scope: Scope) -> EngramError:
    """The error of the first read the server sheds (reads pass until the
    stream that holds its only slot has opened)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            engram.memory.search(scope, "probe")
        except EngramError as error:
            if error.is_shed:
                return error
        time.sleep(0.01)
    raise AssertionError("no call was shed while the server's only slot was held")


def test_a_write_the_server_shed_is_sent_again_once_it_has_room(tmp_path_factory: pytest.TempPathFactory) -> None:
    # One call at a time: an open step stream holds the only slot.
    with Server(tmp_path_factory.mktemp("shedding"), "--max-concurrent-calls", "1") as server:
        scope = Scope(namespace="shed")
        patient = Engram(server.address, retry=PATIENT)
        hasty = Engram(server.address, retry=RetryPolicy.none())
        run = patient.memory.episode(scope, "hold", "Hold the only slot")
        release = threading.Event()

        def held() -> Iterator[memory_pb2.Step]:
            yield step(1, "shell", "hold the slot")
            release.wait(30)

        with ThreadPoolExecutor(2) as pool:
            holder = pool.submit(run.stream_steps, held())
            shed = probe_until_shed(hasty, scope)
            assert shed.code == StatusCode.RESOURCE_EXHAUSTED
            assert shed.is_shed and 0 < (shed.retry_after or 0) <= 5, "a delay to wait, as data"
            writer = pool.submit(patient.memory.create, scope, "fact", "let through")
            time.sleep(0.3)
            assert not writer.done(), "a shed write waits for room, though it has no request id"
            release.set()
            assert holder.result(timeout=30).accepted == 1
            assert writer.result(timeout=30).result == WriteResult.WRITE_RESULT_CREATED
        assert contents(patient, scope) == ["let through"]
        patient.close()
        hasty.close()


def test_an_api_key_is_sent_with_every_call(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("keys")
    (folder / "keys").write_text("py-secret-key write keyed\n")
    with Server(folder, "--auth-keys", str(folder / "keys")) as server:
        scope = Scope(namespace="keyed")
        with Engram(server.address, api_key="py-secret-key") as keyed:
            assert keyed.memory.create(scope, "note", "only with a key").result == WriteResult.WRITE_RESULT_CREATED
        with Engram(server.address) as anonymous, pytest.raises(EngramError) as refused:
            anonymous.memory.search(scope, "key")
        assert refused.value.code == StatusCode.UNAUTHENTICATED


def test_tls_with_a_private_certificate_authority_and_a_server_name(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "1", "-subj", "/CN=engram.test", "-addext", "subjectAltName=DNS:engram.test",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    with Server(folder, "--tls-cert", str(cert), "--tls-key", str(key)) as server:
        scope = Scope(namespace="tls")
        # The certificate names engram.test, not the address connected to.
        trusted = Tls(root_certificates=cert.read_bytes(), server_name="engram.test")
        with Engram(f"https://{server.address}", tls=trusted) as engram:
            assert engram.memory.create(scope, "fact", "over TLS").result == WriteResult.WRITE_RESULT_CREATED
        with Engram(server.address, retry=RetryPolicy.none()) as plaintext, pytest.raises(EngramError) as refused:
            plaintext.memory.search(scope, "TLS")
        assert refused.value.code == StatusCode.UNAVAILABLE


def test_a_watch_streams_changes_in_commit_order_and_resumes_across_a_restart(own_server: Server) -> None:
    scope = Scope(namespace="watched")
    engram = Engram(own_server.address, retry=PATIENT)
    watch = engram.memory.watch(scope, types=["fact"])
    first = engram.memory.create(scope, "fact", "the first fact").memory
    note = engram.memory.create(scope, "note", "a note the filter leaves out").memory

    def events(of: MemoryWatch, count: int) -> list[memory_pb2.MemoryEvent]:
        """The next `count` events of `of`, within 30 seconds (else the
        watch is closed, which ends the wait, and the test fails)."""
        pool = ThreadPoolExecutor(1)
        try:
            return pool.submit(lambda: [next(of) for _ in range(count)]).result(timeout=30)
        except TimeoutError:
            of.close()
            raise
        finally:
            pool.shutdown(wait=False)

    def named(taken: list[memory_pb2.MemoryEvent]) -> list[tuple[int, str]]:
        return [(e.action, e.memory_id) for e in taken]

    (created,) = events(watch, 1)
    assert named([created]) == [(memory_pb2.REVISION_ACTION_CREATED, first.id)]

    # The server restarts: its watches end with UNAVAILABLE, and this one
    # opens again from its cursor — nothing missed, nothing twice.
    own_server.stop()
    own_server.start()
    second = engram.memory.create(scope, "fact", "the second fact").memory
    engram.memory.delete_memory(memory_pb2.DeleteMemoryRequest(scope=scope, id=first.id))
    assert named(events(watch, 2)) == [
        (memory_pb2.REVISION_ACTION_CREATED, second.id),
        (memory_pb2.REVISION_ACTION_DELETED, first.id),
    ]

    # A new watch from an event's cursor starts right after that event (no
    # filter now: the note too).
    resumed = engram.memory.watch(scope, cursor=created.cursor)
    assert named(events(resumed, 3)) == [
        (memory_pb2.REVISION_ACTION_CREATED, note.id),
        (memory_pb2.REVISION_ACTION_CREATED, second.id),
        (memory_pb2.REVISION_ACTION_DELETED, first.id),
    ]
    watch.close()
    resumed.close()
    engram.close()
