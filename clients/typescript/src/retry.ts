/**
 * When a failed call is tried again, and after how long.
 *
 * @module
 */

import type { EngramError } from "./errors.js";

/** The fields of a {@link RetryPolicy}, each optional where one is made. */
export interface RetryPolicyInit {
  /** How many times a call is tried in all, the first try included; 1 turns retries off. Default 4. */
  maxAttempts?: number;
  /** The wait before the first retry, in milliseconds. Default 100. */
  initialBackoffMs?: number;
  /** The longest wait between two tries, in milliseconds. Default 2,000. */
  maxBackoffMs?: number;
  /** How much each wait grows over the one before. Default 2. */
  multiplier?: number;
}

/**
 * How failed calls are tried again, as the Rust client and the Python
 * package do.
 *
 * After UNAVAILABLE (the server unreachable, restarting, or its database
 * busy) only calls that are safe to repeat are retried: reads, and creates
 * that carry a `requestId` (the server answers a repeat with the first
 * result); see `REPEAT`. After the server shed a call (RESOURCE_EXHAUSTED
 * with a retry delay: too many calls in flight, or the API key's rate limit)
 * every call is retried, writes too: the server refused it unread. Waits grow
 * exponentially from `initialBackoffMs` up to `maxBackoffMs`, each shortened
 * by a random part of up to half so that many clients do not retry in step;
 * a `google.rpc.RetryInfo` from the server replaces the wait, cut to
 * `maxBackoffMs` and the call's timeout.
 */
export class RetryPolicy {
  /** How many times a call is tried in all, the first try included. */
  readonly maxAttempts: number;
  /** The wait before the first retry, in milliseconds. */
  readonly initialBackoffMs: number;
  /** The longest wait between two tries, in milliseconds. */
  readonly maxBackoffMs: number;
  /** How much each wait grows over the one before. */
  readonly multiplier: number;

  /** A policy with the given fields and the defaults for the others. */
  constructor(init: RetryPolicyInit = {}) {
    this.maxAttempts = init.maxAttempts ?? 4;
    this.initialBackoffMs = init.initialBackoffMs ?? 100;
    this.maxBackoffMs = init.maxBackoffMs ?? 2_000;
    this.multiplier = init.multiplier ?? 2;
  }

  /** Never retry: every failure is thrown at once. */
  static none(): RetryPolicy {
    return new RetryPolicy({ maxAttempts: 1 });
  }

  /**
   * The wait in milliseconds before retry number `retry` (1 for the first):
   * a random fraction in [0.5, 1) of the exponential wait.
   */
  backoffMs(retry: number): number {
    const growth = Math.max(this.multiplier, 1) ** Math.max(retry - 1, 0);
    const full = Math.min(this.initialBackoffMs * growth, this.maxBackoffMs);
    return full * (0.5 + Math.random() / 2);
  }
}

/** What {@link retryWaitMs} needs to know about a failed try. */
export interface FailedTry {
  /** Whether the call is safe to send again after UNAVAILABLE. */
  repeat: boolean;
  /** The number of the try that failed, 1 for the first. */
  attempt: number;
  /** The policy in force. */
  policy: RetryPolicy;
  /** The deadline of one try, in milliseconds; undefined: none. */
  timeoutMs: number | undefined;
}

/**
 * How many milliseconds to wait before trying a call again after try
 * number `attempt` failed with `error`; undefined when it may not be tried
 * again.
 *
 * A shed call is always tried again; one that met UNAVAILABLE only when
 * `repeat` says the call is safe to repeat. The server's own delay is taken
 * when it gives one, but never longer than the policy's longest wait or the
 * call's `timeoutMs`.
 */
export function retryWaitMs(error: EngramError, { repeat, attempt, policy, timeoutMs }: FailedTry): number | undefined {
  if (attempt >= policy.maxAttempts) {
    return undefined;
  }
  if (!(error.isShed || (repeat && error.isRetryable))) {
    return undefined;
  }
  const asked = error.retryAfterMs;
  const wait = asked !== undefined ? Math.min(asked, policy.maxBackoffMs) : policy.backoffMs(attempt);
  return timeoutMs === undefined ? wait : Math.min(wait, timeoutMs);
}
