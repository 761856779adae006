"""The client's own decisions, without a server: when a call is retried and
after how long, how errors read their details, how steps are replayed, and
which settings are refused."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from datetime import timedelta

import grpc
import pytest
from google.rpc import error_details_pb2
from google.protobuf import any_pb2

from engram_client import EngramError, FieldViolation, RetryPolicy, Tls, step
from engram_client.messages import Replay, memory_type
from engram_client.retry import retry_wait
from engram_client.settings import settings
from engram_client.v1 import common_pb2, memory_pb2


def packed(detail: object) -> any_pb2.Any:
    """`detail` packed as a google.rpc detail."""
    message = any_pb2.Any()
    message.Pack(detail)  # type: ignore[arg-type]
    return message


def shed(seconds: float) -> EngramError:
    """RESOURCE_EXHAUSTED with a retry delay, as the server sheds a call."""
    info = error_details_pb2.RetryInfo()
    info.retry_delay.FromTimedelta(timedelta(seconds=seconds))
    return EngramError(grpc.StatusCode.RESOURCE_EXHAUSTED, "the server is busy", [packed(info)])


UNAVAILABLE = EngramError(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses")


def wait(error: EngramError, *, repeat: bool, attempt: int = 1, timeout: float | None = 30.0) -> float | None:
    return retry_wait(error, repeat=repeat, attempt=attempt, policy=RetryPolicy(), timeout=timeout)


def test_waits_grow_exponentially_up_to_the_cap_with_jitter_of_at_most_half() -> None:
    policy = RetryPolicy()
    for retry, full in [(1, 0.1), (2, 0.2), (3, 0.4), (5, 1.6), (6, 2.0), (40, 2.0)]:
        for _ in range(50):
            assert full / 2 <= policy.backoff(retry) <= full


def test_only_shed_calls_and_repeatable_unavailable_ones_are_tried_again() -> None:
    assert wait(shed(0.25), repeat=False) == 0.25, "a shed write waits the server's delay"
    assert wait(shed(60), repeat=False, timeout=0.3) == 0.3, "never longer than the call's timeout"
    assert wait(shed(60), repeat=True, timeout=None) == RetryPolicy().max_backoff, "nor the policy's longest wait"
    too_large = EngramError(grpc.StatusCode.RESOURCE_EXHAUSTED, "message too large")
    assert wait(too_large, repeat=True) is None, "RESOURCE_EXHAUSTED without a delay was not shed"
    assert wait(UNAVAILABLE, repeat=False) is None, "a write that may have been done is not repeated"
    assert 0.05 <= (wait(UNAVAILABLE, repeat=True) or 0) <= 0.1
    assert wait(EngramError(grpc.StatusCode.NOT_FOUND, "no such memory"), repeat=True) is None


def test_retries_stop_after_max_attempts() -> None:
    assert wait(UNAVAILABLE, repeat=True, attempt=3) is not None
    assert wait(UNAVAILABLE, repeat=True, attempt=4) is None
    assert retry_wait(shed(0.1), repeat=True, attempt=1, policy=RetryPolicy.none(), timeout=None) is None


def test_an_error_reads_its_details_as_data() -> None:
    bad = error_details_pb2.BadRequest()
    bad.field_violations.add(field="memory.content", description="is required")
    error = EngramError(grpc.StatusCode.INVALID_ARGUMENT, "invalid request", [packed(bad)])
    assert error.field_violations == [FieldViolation("memory.content", "is required")]
    assert str(error) == "INVALID_ARGUMENT: invalid request"
    assert error.retry_after is None and not error.is_retryable and not error.is_shed
    assert shed(0.25).retry_after == 0.25 and shed(0.25).is_shed and shed(0.25).is_retryable
    assert UNAVAILABLE.is_retryable and UNAVAILABLE.field_violations == []
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.message, copy.field_violations) == (error.code, error.message, error.field_violations)


def test_a_replay_sends_what_was_drawn_again_then_draws_the_rest() -> None:
    drawn: list[int] = []

    def numbers() -> Iterator[int]:
        for n in range(1, 5):
            drawn.append(n)
            yield n

    replay = Replay(numbers())
    first = iter(replay)
    assert [next(first), next(first)] == [1, 2]
    assert drawn == [1, 2], "nothing is drawn before it is needed"
    assert list(replay) == [1, 2, 3, 4]
    assert list(replay) == [1, 2, 3, 4]
    assert drawn == [1, 2, 3, 4], "each item is drawn once"


def test_steps_and_enums_are_built_from_plain_values() -> None:
    built = step(2, "shell", "deploy", ok=False, parameters={"env": "production"}, latency_ms=5)
    assert built == memory_pb2.Step(
        step_number=2,
        tool="shell",
        action="deploy",
        parameters='{"env": "production"}',
        result=memory_pb2.STEP_RESULT_ERROR,
        latency_ms=5,
    )
    assert memory_type("lesson") == common_pb2.MEMORY_TYPE_LESSON
    assert memory_type(common_pb2.MEMORY_TYPE_FACT) == common_pb2.MEMORY_TYPE_FACT


@pytest.mark.parametrize(
    ("addr", "options", "complaint"),
    [
        ("127.0.0.1", {}, "host:port"),
        ("grpc://127.0.0.1:1", {}, "host:port"),
        ("http://127.0.0.1:1", {"tls": True}, "https://"),
        ("127.0.0.1:1", {"api_key": "clé"}, "printable ASCII"),
        ("127.0.0.1:1", {"tls": Tls(root_certificates=b"not a certificate")}, "PEM"),
        ("127.0.0.1:1", {"tls": Tls(certificate_chain=b"-----BEGIN CERTIFICATE-----")}, "private key"),
        ("127.0.0.1:1", {"timeout": 0.0}, "timeout"),
        ("127.0.0.1:1", {"retry": RetryPolicy(max_attempts=0)}, "at least once"),
    ],
)
def test_settings_that_cannot_work_are_refused_before_anything_is_sent(
    addr: str, options: dict[str, object], complaint: str
) -> None:
    arguments: dict[str, object] = {"api_key": None, "tls": False, "timeout": 30.0, "retry": RetryPolicy()}
    arguments.update(options)
    with pytest.raises(ValueError, match=complaint):
        settings(addr, **arguments)  # type: ignore[arg-type]


def test_an_address_picks_plaintext_or_tls_and_the_key_is_sent_as_a_bearer_token() -> None:
    plain = settings("http://127.0.0.1:50051", api_key="k", tls=False, timeout=None, retry=RetryPolicy())
    assert (plain.target, plain.credentials, plain.metadata) == ("127.0.0.1:50051", None, (("authorization", "Bearer k"),))
    secure = settings("https://engram.internal:443", api_key=None, tls=False, timeout=None, retry=RetryPolicy())
    assert secure.target == "engram.internal:443" and secure.credentials is not None
    named = settings("10.0.0.7:50051", api_key=None, tls=Tls(server_name="engram.internal"), timeout=None, retry=RetryPolicy())
    assert ("grpc.ssl_target_name_override", "engram.internal") in named.options


def test_reprs_never_show_the_api_key_or_the_private_key() -> None:
    made = settings("127.0.0.1:50051", api_key="sk-very-secret-key", tls=False, timeout=None, retry=RetryPolicy())
    assert "sk-very-secret-key" not in repr(made) and "sk-very-secret-key" not in str(made)
    assert made.metadata == (("authorization", "Bearer sk-very-secret-key"),)
    pem = b"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n"
    tls = Tls(certificate_chain=b"-----BEGIN CERTIFICATE-----", private_key=pem)
    assert b"MIIEvQIBADANBg".decode() not in repr(tls)
    assert tls.private_key == pem
