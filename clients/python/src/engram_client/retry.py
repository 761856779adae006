"""When a failed call is tried again, and after how long."""

from __future__ import annotations

import random
from dataclasses import dataclass

from engram_client.errors import EngramError


@dataclass(frozen=True)
class RetryPolicy:
    """How failed calls are tried again, as the Rust client does.

    After UNAVAILABLE (the server unreachable, restarting, or its database
    busy) only calls that are safe to repeat are retried: reads, and creates
    that carry a ``request_id`` (the server answers a repeat with the first
    result). After the server shed a call (RESOURCE_EXHAUSTED with a retry
    delay: too many calls in flight, or the API key's rate limit) every call
    is retried, writes too: the server refused it unread. Waits grow
    exponentially from `initial_backoff` up to `max_backoff`, each shortened
    by a random part of up to half so that many clients do not retry in step;
    a ``google.rpc.RetryInfo`` from the server replaces the wait, cut to
    `max_backoff` and the call's timeout.
    """

    max_attempts: int = 4
    """How many times a call is tried in all, the first try included; 1 turns
    retries off."""
    initial_backoff: float = 0.1
    """The wait before the first retry, in seconds."""
    max_backoff: float = 2.0
    """The longest wait between two tries, in seconds."""
    multiplier: float = 2.0
    """How much each wait grows over the one before."""

    @classmethod
    def none(cls) -> RetryPolicy:
        """Never retry: every failure is raised at once."""
        return cls(max_attempts=1)

    def backoff(self, retry: int) -> float:
        """The wait in seconds before retry number `retry` (1 for the first):
        a random fraction in [0.5, 1) of the exponential wait."""
        full = min(self.initial_backoff * max(self.multiplier, 1.0) ** max(retry - 1, 0), self.max_backoff)
        return full * random.uniform(0.5, 1.0)


def retry_wait(
    error: EngramError, *, repeat: bool, attempt: int, policy: RetryPolicy, timeout: float | None
) -> float | None:
    """How many seconds to wait before trying a call again after try number
    `attempt` failed with `error`; None when it may not be tried again.

    A shed call is always tried again; one that met UNAVAILABLE only when
    `repeat` says the call is safe to repeat. The server's own delay is taken
    when it gives one, but never longer than the policy's longest wait or
    the call's `timeout`.
    """
    if attempt >= policy.max_attempts:
        return None
    if not (error.is_shed or (repeat and error.is_retryable)):
        return None
    asked = error.retry_after
    wait = min(asked, policy.max_backoff) if asked is not None else policy.backoff(attempt)
    return wait if timeout is None else min(wait, timeout)
