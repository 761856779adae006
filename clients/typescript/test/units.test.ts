// The client's own decisions, without a server: when a call is retried and
// after how long, how errors read their details, how steps are replayed,
// and which settings are refused.

import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";

import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Engram,
  EngramError,
  MemoryType,
  Replay,
  RetryPolicy,
  StepResult,
  memoryType,
  retryWaitMs,
  step,
} from "engram-client";
import { BadRequestSchema, RetryInfoSchema } from "engram-client/google/rpc";

/** RESOURCE_EXHAUSTED with a retry delay, as the server sheds a call. */
function shed(ms: number): EngramError {
  const info = create(RetryInfoSchema, { retryDelay: durationFromMs(ms) });
  return new EngramError(
    new ConnectError("the server is busy", Code.ResourceExhausted, undefined, [{ desc: RetryInfoSchema, value: info }]),
  );
}

const UNAVAILABLE = new EngramError(new ConnectError("connect ECONNREFUSED 127.0.0.1:1", Code.Unavailable));

/** Every item of `items` (Array.fromAsync is newer than Node 20). */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

function wait(error: EngramError, repeat: boolean, attempt = 1, timeoutMs: number | undefined = 30_000): number | undefined {
  return retryWaitMs(error, { repeat, attempt, policy: new RetryPolicy(), timeoutMs });
}

test("waits grow exponentially up to the cap with jitter of at most half", () => {
  const policy = new RetryPolicy();
  for (const [retry, full] of [[1, 100], [2, 200], [3, 400], [5, 1600], [6, 2000], [40, 2000]] as const) {
    for (let i = 0; i < 50; i++) {
      const waited = policy.backoffMs(retry);
      assert.ok(full / 2 <= waited && waited <= full, `retry ${retry} waited ${waited} ms, not within [${full / 2}, ${full}]`);
    }
  }
});

test("only shed calls and repeatable unavailable ones are tried again", () => {
  assert.equal(wait(shed(250), false), 250, "a shed write waits the server's delay");
  assert.equal(wait(shed(60_000), false, 1, 300), 300, "never longer than the call's timeout");
  assert.equal(wait(shed(60_000), true, 1, undefined), new RetryPolicy().maxBackoffMs, "nor the policy's longest wait");
  const tooLarge = new EngramError(new ConnectError("message too large", Code.ResourceExhausted));
  assert.equal(wait(tooLarge, true), undefined, "RESOURCE_EXHAUSTED without a delay was not shed");
  assert.equal(wait(UNAVAILABLE, false), undefined, "a write that may have been done is not repeated");
  const backoff = wait(UNAVAILABLE, true) ?? 0;
  assert.ok(50 <= backoff && backoff <= 100, `the first backoff is 50-100 ms, not ${backoff}`);
  assert.equal(wait(new EngramError(new ConnectError("no such memory", Code.NotFound)), true), undefined);
});

test("retries stop after maxAttempts", () => {
  assert.notEqual(wait(UNAVAILABLE, true, 3), undefined);
  assert.equal(wait(UNAVAILABLE, true, 4), undefined);
  assert.equal(retryWaitMs(shed(100), { repeat: true, attempt: 1, policy: RetryPolicy.none(), timeoutMs: undefined }), undefined);
});

test("an error reads its details as data", () => {
  const bad = create(BadRequestSchema, { fieldViolations: [{ field: "memory.content", description: "is required" }] });
  const error = new EngramError(
    new ConnectError("invalid request", Code.InvalidArgument, undefined, [{ desc: BadRequestSchema, value: bad }]),
  );
  assert.deepEqual(error.fieldViolations, [{ field: "memory.content", description: "is required" }]);
  assert.equal(error.message, "INVALID_ARGUMENT: invalid request");
  assert.equal(error.codeName, "INVALID_ARGUMENT");
  assert.equal(error.rawMessage, "invalid request");
  assert.equal(error.retryAfterMs, undefined);
  assert.ok(!error.isRetryable && !error.isShed);
  assert.equal(shed(250).retryAfterMs, 250);
  assert.ok(shed(250).isShed && shed(250).isRetryable);
  assert.ok(UNAVAILABLE.isRetryable);
  assert.deepEqual(UNAVAILABLE.fieldViolations, []);
  assert.equal(EngramError.from(error), error, "an EngramError is kept as it is");
  assert.equal(EngramError.from(new Error("boom")).code, Code.Unknown);
});

test("a replay sends what was drawn again, then draws the rest", async () => {
  const drawn: number[] = [];
  async function* numbers(): AsyncGenerator<number> {
    for (let n = 1; n <= 4; n++) {
      drawn.push(n);
      yield n;
    }
  }
  const replay = new Replay(numbers());
  const first = replay[Symbol.asyncIterator]();
  assert.deepEqual([(await first.next()).value, (await first.next()).value], [1, 2]);
  assert.deepEqual(drawn, [1, 2], "nothing is drawn before it is needed");
  assert.deepEqual(await collect(replay), [1, 2, 3, 4]);
  assert.deepEqual(await collect(replay), [1, 2, 3, 4]);
  assert.deepEqual(drawn, [1, 2, 3, 4], "each item is drawn once");
  assert.deepEqual(await collect(new Replay(["a", "b"])), ["a", "b"], "a plain iterable too");
});

test("steps and enums are built from plain values", () => {
  assert.deepEqual(step(2, "shell", "deploy", { ok: false, parameters: { env: "production" }, latencyMs: 5 }), {
    stepNumber: 2,
    tool: "shell",
    action: "deploy",
    parameters: '{"env":"production"}',
    result: StepResult.ERROR,
    output: "",
    latencyMs: 5n,
  });
  assert.equal(memoryType("lesson"), MemoryType.LESSON);
  assert.equal(memoryType(MemoryType.FACT), MemoryType.FACT);
});

test("settings that cannot work are refused before anything is sent", () => {
  const refused: [string, ConstructorParameters<typeof Engram>[1], RegExp][] = [
    ["127.0.0.1", {}, /host:port/],
    ["grpc://127.0.0.1:1", {}, /host:port/],
    ["http://127.0.0.1:1", { tls: true }, /https:\/\//],
    ["127.0.0.1:1", { apiKey: "clé" }, /printable ASCII/],
    ["127.0.0.1:1", { tls: { rootCertificates: "not a certificate" } }, /PEM/],
    ["127.0.0.1:1", { tls: { certificateChain: "-----BEGIN CERTIFICATE-----" } }, /private key/],
    ["127.0.0.1:1", { timeoutMs: 0 }, /timeout/],
    ["127.0.0.1:1", { retry: new RetryPolicy({ maxAttempts: 0 }) }, /at least once/],
  ];
  for (const [address, options, complaint] of refused) {
    assert.throws(() => new Engram(address, options), { name: "TypeError", message: complaint }, `${address} ${JSON.stringify(options)}`);
  }
  new Engram("https://engram.internal:443", { apiKey: "k", timeoutMs: null }).close();
});

test("a client never shows its API key or TLS private key", () => {
  const key = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LXByaXZhdGUta2V5\n-----END PRIVATE KEY-----\n";
  const engram = new Engram("https://engram.internal:443", {
    apiKey: "s3cret-api-key",
    tls: { certificateChain: "-----BEGIN CERTIFICATE-----\nY2VydA==\n-----END CERTIFICATE-----\n", privateKey: key },
  });
  for (const shown of [inspect(engram, { depth: 10, showHidden: true }), JSON.stringify(engram), String(engram.memory)]) {
    assert.ok(!shown.includes("s3cret-api-key"), shown);
    assert.ok(!shown.includes("c2VjcmV0LXByaXZhdGUta2V5"), shown);
  }
  assert.match(inspect(engram), /engram\.internal:443/);
  assert.match(inspect(engram), /apiKey: '\[hidden\]'/);
  engram.close();
});
