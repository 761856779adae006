// Retries only where they are safe, across a server restart and a server
// that sheds calls, and a watch that resumes across a restart. Each test
// has a server of its own, to stop and start again on the same port.

import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  Code,
  Engram,
  EngramError,
  type MemoryEvent,
  type MemoryWatch,
  RetryPolicy,
  RevisionAction,
  type ScopeInit,
  type StepInit,
  WriteResult,
  step,
} from "engram-client";

import { Server } from "./server.js";

// Retries patient enough to outlast a server restart.
const PATIENT = new RetryPolicy({ maxAttempts: 100, initialBackoffMs: 50, maxBackoffMs: 200 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

/** A server of the test's own, stopped and removed after the test. */
async function ownServer(...args: string[]): Promise<Server> {
  const server = await Server.start(...args);
  cleanups.push(() => server.dispose());
  return server;
}

/** A client closed after the test. */
function client(...args: ConstructorParameters<typeof Engram>): Engram {
  const engram = new Engram(...args);
  cleanups.push(() => engram.close());
  return engram;
}

/** What the memories of `scope` say, sorted. */
async function contents(engram: Engram, scope: ScopeInit): Promise<string[]> {
  const listed = await engram.memory.listMemories({ scope });
  return listed.memories.map((m) => m.content).sort();
}

/** `promise`, with a flag that says whether it has settled. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  watched.catch(() => {}); // awaited later; not an unhandled rejection meanwhile
  return { promise: watched, settled: () => settled };
}

test("reads, creates with a request id and step streams are retried across a restart", async () => {
  const server = await ownServer();
  const retried = new Set<string>();
  const engram = client(server.address, { retry: PATIENT, onRetry: (event) => retried.add(event.rpc) });
  const scope = { namespace: "restart" };
  await engram.memory.create(scope, "fact", "before the restart");
  const run = await engram.memory.episode(scope, "restart", "Steps across a restart");
  await server.stop();

  // While the server is down: a create without a request id fails at once
  // (repeating it could store it twice), while a read, a create with a
  // request id and a step stream keep trying until the server is back.
  const unsafe = await engram.memory.create(scope, "fact", "no request id").then(
    () => assert.fail("a create without a request id succeeded with the server down"),
    (error: unknown) => error,
  );
  assert.ok(unsafe instanceof EngramError && unsafe.code === Code.Unavailable && unsafe.isRetryable, String(unsafe));

  const reader = tracked(contents(engram, scope));
  const creator = tracked(engram.memory.create(scope, "fact", "with a request id", { requestId: "restart-1" }));
  const streamer = tracked(run.streamSteps([step(1, "shell", "wait"), step(2, "shell", "go on")]));
  await sleep(500);
  assert.ok(!reader.settled() && !creator.settled() && !streamer.settled(), "they wait for the server");
  await server.start();
  assert.ok((await reader.promise).includes("before the restart"), "the read may land before or after the create");
  assert.equal((await creator.promise).result, WriteResult.CREATED);
  assert.equal((await streamer.promise).accepted, 2);
  assert.deepEqual(await contents(engram, scope), ["before the restart", "with a request id"]);
  for (const rpc of ["ListMemories", "CreateMemory", "StreamSteps"]) {
    assert.ok(retried.has(rpc), `${rpc} was retried: ${[...retried].join(", ")}`);
  }
});

test("retries give up after maxAttempts", async () => {
  const server = await ownServer();
  const retries: number[] = [];
  const engram = client(server.address, {
    retry: new RetryPolicy({ maxAttempts: 3, initialBackoffMs: 10 }),
    onRetry: (event) => retries.push(event.attempt),
  });
  const scope = { namespace: "down" };
  await engram.learning.getStats({ scope });
  await server.stop();
  const started = Date.now();
  await assert.rejects(engram.learning.getStats({ scope }), (error: unknown) => {
    assert.ok(error instanceof EngramError);
    assert.equal(error.codeName, "UNAVAILABLE");
    return true;
  });
  assert.deepEqual(retries, [2, 3], "tried three times in all");
  assert.ok(Date.now() - started < 5_000);
});

test("a write the server shed is sent again once it has room", async () => {
  // One call at a time: an open step stream holds the only slot.
  const server = await ownServer("--max-concurrent-calls", "1");
  const scope = { namespace: "shed" };
  const patient = client(server.address, { retry: PATIENT });
  const hasty = client(server.address, { retry: RetryPolicy.none() });
  const run = await patient.memory.episode(scope, "hold", "Hold the only slot");
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  async function* held(): AsyncGenerator<StepInit> {
    yield step(1, "shell", "hold the slot");
    await released;
  }
  const holder = tracked(run.streamSteps(held()));
  try {
    const shed = await probeUntilShed(hasty, scope);
    assert.equal(shed.code, Code.ResourceExhausted);
    assert.ok(shed.isShed && 0 < (shed.retryAfterMs ?? 0) && (shed.retryAfterMs ?? 0) <= 5_000, "a delay to wait, as data");
    const writer = tracked(patient.memory.create(scope, "fact", "let through"));
    await sleep(300);
    assert.ok(!writer.settled(), "a shed write waits for room, though it has no request id");
    release();
    assert.equal((await holder.promise).accepted, 1);
    assert.equal((await writer.promise).result, WriteResult.CREATED);
    assert.deepEqual(await contents(patient, scope), ["let through"]);
  } finally {
    release();
    await holder.promise.catch(() => {});
  }
});

/**
 * The error of the first read the server sheds (reads pass until the stream
 * that holds its only slot has opened).
 */
async function probeUntilShed(engram: Engram, scope: ScopeInit): Promise<EngramError> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      await engram.memory.search(scope, "probe");
    } catch (error) {
      if (error instanceof EngramError && error.isShed) {
        return error;
      }
    }
    await sleep(10);
  }
  assert.fail("no call was shed while the server's only slot was held");
}

/**
 * The next `count` events of `watch`, within 30 seconds (else the watch is
 * closed, which ends the wait, and the test fails).
 */
async function events(watch: MemoryWatch, count: number): Promise<MemoryEvent[]> {
  const timer = setTimeout(() => watch.close(), 30_000);
  try {
    const taken: MemoryEvent[] = [];
    while (taken.length < count) {
      const next = await watch.next();
      assert.ok(!next.done, `the watch ended after ${taken.length} of ${count} events`);
      taken.push(next.value);
    }
    return taken;
  } finally {
    clearTimeout(timer);
  }
}

/** The events as (action, memory id) pairs. */
function named(taken: MemoryEvent[]): [string, string][] {
  return taken.map((e) => [RevisionAction[e.action], e.memoryId]);
}

test("a watch streams changes in commit order and resumes across a restart", async () => {
  const server = await ownServer();
  const resumed: string[] = [];
  const engram = client(server.address, { retry: PATIENT, onRetry: (event) => resumed.push(event.rpc) });
  const scope = { namespace: "watched" };
  const watch = await engram.memory.watch(scope, { types: ["fact"] });
  cleanups.push(() => watch.close());
  const first = (await engram.memory.create(scope, "fact", "the first fact")).memory!;
  const note = (await engram.memory.create(scope, "note", "a note the filter leaves out")).memory!;

  const [created] = await events(watch, 1);
  assert.deepEqual(named([created!]), [["CREATED", first.id]]);

  // The server restarts: its watches end with UNAVAILABLE, and this one
  // opens again from its cursor — nothing missed, nothing twice.
  await server.stop();
  await server.start();
  const second = (await engram.memory.create(scope, "fact", "the second fact")).memory!;
  await engram.memory.deleteMemory({ scope, id: first.id });
  assert.deepEqual(named(await events(watch, 2)), [
    ["CREATED", second.id],
    ["DELETED", first.id],
  ]);
  assert.ok(resumed.includes("WatchMemories"), "the watch was opened again");

  // A new watch from an event's cursor starts right after that event (no
  // filter now: the note too).
  const later = await engram.memory.watch(scope, { cursor: created!.cursor });
  cleanups.push(() => later.close());
  assert.deepEqual(named(await events(later, 3)), [
    ["CREATED", note.id],
    ["CREATED", second.id],
    ["DELETED", first.id],
  ]);
});
