// The client against a real server: the helpers, the RPC methods with their
// request and response messages, and errors as data.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { equals } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Engram,
  EngramError,
  EpisodeStatus,
  MemoryLevel,
  MemoryType,
  RevisionAction,
  type ScopeInit,
  type StepInit,
  StepResult,
  WriteResult,
  step,
} from "engram-client";
import { CreateMemoryResponseSchema } from "engram-client/v1";

import { Server, freshNamespace } from "./server.js";

const PREFERENCE = "Alice prefers concise answers with code first";
const LESSON = "Checkout deploys failed because the orders migration locked the table";

let server: Server;
let engram: Engram;

before(async () => {
  server = await Server.start();
  engram = new Engram(server.address);
});

after(async () => {
  engram?.close();
  await server?.dispose();
});

/** The EngramError `promise` fails with (and fails the test if it succeeds). */
async function failure(promise: Promise<unknown>): Promise<EngramError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof EngramError, `an EngramError, not ${String(error)}`);
    return error;
  }
  assert.fail("the call succeeded");
}

test("an identical memory is merged and a retried request id gets the first answer", async () => {
  const alice = { namespace: freshNamespace(), userId: "alice" };
  const first = await engram.memory.create(alice, "preference", PREFERENCE, { importance: 0.9 });
  assert.equal(first.result, WriteResult.CREATED);
  assert.equal(first.memory?.content, PREFERENCE);
  assert.equal(first.memory?.seenCount, 1n);
  const again = await engram.memory.create(alice, "preference", PREFERENCE);
  assert.equal(again.result, WriteResult.MERGED);
  assert.equal(again.memory?.id, first.memory?.id);
  assert.equal(again.memory?.seenCount, 2n);

  const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, String(i)]));
  const reversed = Object.fromEntries(Object.entries(metadata).reverse());
  const created = await engram.memory.create(alice, "event", "Rotated the password", { metadata, requestId: "rotate" });
  const retried = await engram.memory.create(alice, "event", "Rotated the password", { metadata: reversed, requestId: "rotate" });
  assert.ok(equals(CreateMemoryResponseSchema, retried, created), "a retry with the same request id gets the first answer, not a merge");
  assert.equal(retried.result, WriteResult.CREATED);
});

test("a contradicting memory invalidates the older one, which stays readable", async () => {
  const alice = { namespace: freshNamespace(), userId: "alice" };
  const old = await engram.memory.create(alice, "fact", "The staging DB is on port 5433.");
  const kept = await engram.memory.create(alice, "fact", "staging db -> port 6432 now", {
    contradictions: "off",
  });
  assert.deepEqual(kept.invalidatedMemoryIds, []);
  const fresh = await engram.memory.create(alice, "fact", "The staging database listens on port 7000 now.");
  assert.deepEqual(
    [...fresh.invalidatedMemoryIds].sort(),
    [old.memory?.id, kept.memory?.id].sort(),
  );
  const gone = await engram.memory.getMemory({ scope: alice, id: old.memory?.id ?? "" });
  assert.ok(gone.validTo !== undefined);
  assert.equal(gone.invalidatedBy, fresh.memory?.id);
});

test("entities are listed, read at a time and filter searches", async () => {
  const alice = { namespace: freshNamespace(), userId: "alice" };
  const acme = (await engram.memory.create(alice, "fact", "Alice Chen works at Acme.")).memory!;
  await engram.memory.create(alice, "fact", "Alice Chen now works at Globex.");
  await engram.memory.create(alice, "note", "Priya Patel reviews the Globex contract.");
  const people = await engram.memory.entities(alice, { types: ["person"] });
  assert.deepEqual(
    people.entities.map((e) => e.name),
    ["Alice Chen", "Priya Patel"],
  );
  const now = await engram.memory.entity(alice, "alice chen");
  assert.deepEqual(
    now.relations.map((r) => [r.predicate, r.object]),
    [["employer", "Globex"]],
  );
  const then = await engram.memory.entity(alice, "Alice Chen", { validAt: acme.validFrom });
  assert.deepEqual(
    then.memories.map((m) => m.id),
    [acme.id],
  );
  const hits = await engram.memory.search(alice, "Globex", { entities: ["Priya Patel"] });
  assert.deepEqual(
    hits.hits.map((h) => h.memory?.content),
    ["Priya Patel reviews the Globex contract."],
  );
});

test("search ranks the matching memory first with its component scores", async () => {
  const shop = { namespace: freshNamespace(), projectId: "shop" };
  const lesson = (await engram.memory.create(shop, "lesson", LESSON, { tags: ["deploy", "postgres"] })).memory!;
  await engram.memory.create(shop, "fact", "The shop sells tea and coffee");
  assert.equal(lesson.level, MemoryLevel.WORKSPACE, "a scope with a project stores WORKSPACE memories");

  const found = await engram.memory.search(shop, "why did the deploy fail?", { limit: 5 });
  assert.equal(found.hits[0]?.memory?.id, lesson.id);
  assert.ok(found.hits[0].score > 0 && found.hits[0].relevance > 0);
  const onlyFacts = await engram.memory.search(shop, "deploy", { types: ["fact"] });
  assert.ok(onlyFacts.hits.every((hit) => hit.memory?.memoryType === MemoryType.FACT));
  const tagged = await engram.memory.search(shop, "deploy", { tags: ["postgres"] });
  assert.deepEqual(tagged.hits.map((hit) => hit.memory?.id), [lesson.id]);
});

test("context gathers preferences and lessons within the budget", async () => {
  const namespace = freshNamespace();
  await engram.memory.create({ namespace, userId: "alice" }, "preference", PREFERENCE);
  await engram.memory.create({ namespace, projectId: "shop" }, "lesson", LESSON);
  const both = { namespace, projectId: "shop", userId: "alice" };
  const context = await engram.memory.context(both, { query: "deploying checkout", tokenBudget: 200 });
  assert.ok(context.text.includes(PREFERENCE) && context.text.includes(LESSON), context.text);
  assert.ok(context.tokenEstimate > 0 && context.tokenEstimate <= 200);
  assert.equal((await engram.memory.context({ namespace: namespace + "-empty" })).text, "");
});

test("an episode streams its steps as they come and learns from its outcome", async () => {
  const shop: ScopeInit = { namespace: freshNamespace(), projectId: "shop" };
  const run = await engram.memory.episode(shop, "deploy_checkout", "Deploy checkout", { taskType: "deployment" });
  assert.ok(run.id);
  assert.equal(run.episode.status, EpisodeStatus.RUNNING);

  // Steps yielded as an agent does them.
  async function* work(): AsyncGenerator<StepInit> {
    yield step(1, "shell", "run the orders migration", { latencyMs: 1200 });
    yield step(2, "shell", "deploy checkout", { parameters: { env: "production" } });
    yield step(3, "http", "smoke-test checkout", { ok: false, output: "502 Bad Gateway" });
  }
  const streamed = await run.streamSteps(work());
  assert.deepEqual([streamed.accepted, streamed.rejected, streamed.alreadyStored], [3, 0, 0]);
  const again = await run.streamSteps([step(3, "http", "smoke-test checkout", { ok: false, output: "502 Bad Gateway" })]);
  assert.deepEqual([again.accepted, again.alreadyStored], [1, 1], "a step sent again is acknowledged, not stored twice");
  const appended = await run.appendSteps([step(4, "shell", "roll back the canary")]);
  assert.equal(appended.stepCount, 4);

  const completed = await run.complete({
    score: 0.9,
    success: true,
    summary: "Deployed after migrating first",
    successes: ["migrate before deploying"],
  });
  assert.equal(completed.episode?.status, EpisodeStatus.COMPLETED);
  assert.deepEqual(completed.learned?.rulesAdded, ["[WORKS] migrate before deploying"]);

  const fetched = await engram.memory.getEpisode({ scope: shop, id: run.id });
  assert.deepEqual(fetched.steps.map((s) => s.stepNumber), [1, 2, 3, 4]);
  assert.equal(fetched.steps[1]?.parameters, '{"env":"production"}');
  assert.equal(fetched.steps[2]?.result, StepResult.ERROR);
  assert.equal(fetched.steps[0]?.latencyMs, 1200n);
  assert.ok(Math.abs((fetched.outcome?.score ?? 0) - 0.9) < 1e-9);
  const twice = await failure(run.complete({ score: 0.5, success: false }));
  assert.equal(twice.code, Code.FailedPrecondition);
});

test("the raw StreamSteps method takes an async iterable of requests", async () => {
  const scope = { namespace: freshNamespace() };
  const episode = await engram.memory.startEpisode({ scope, taskId: "raw", description: "Raw stream" });
  async function* messages() {
    yield { scope, episodeId: episode.id, steps: [step(1, "shell", "first")] };
    yield { episodeId: episode.id, steps: [step(2, "shell", "second"), step(2, "shell", "a repeated number")] };
  }
  const answer = await engram.memory.streamSteps(messages());
  assert.equal(answer.accepted, 2);
  assert.equal(answer.rejected, 1);
  assert.deepEqual(answer.rejections.map((r) => r.stepNumber), [2]);
  assert.ok(answer.rejections[0]?.reason, "the rejection says why");
});

test("remember stores what the policy finds worth keeping", async () => {
  const alice = { namespace: freshNamespace(), userId: "alice" };
  const kept = await engram.policy.rememberTranscript(alice, "User: please never use semicolons in our JavaScript.");
  assert.ok(kept.decision?.shouldStore && kept.memory !== undefined);
  assert.equal(kept.memory.memoryType, MemoryType.PREFERENCE);
  const chatter = await engram.policy.rememberTranscript(alice, "User: thanks, that's all!", { requestId: "turn-42" });
  assert.ok(!chatter.decision?.shouldStore && chatter.memory === undefined);
  assert.equal(chatter.result, WriteResult.UNSPECIFIED);
  const classified = await engram.policy.classify({ scope: alice, transcript: "User: hi!" });
  assert.ok(classified.decision?.reason);
});

test("the learning service is reached through its messages", async () => {
  const scope = { namespace: freshNamespace(), agentId: "tester" };
  const recorded = await engram.learning.recordOutcome({
    scope,
    task: "validate the signup form",
    success: true,
    strategy: "fill every field, then submit",
  });
  assert.equal(recorded.outcome?.taskType, "form_testing", "inferred from the task");
  const stats = await engram.learning.getStats({ scope });
  assert.equal(stats.outcomes, 1n);
});

test("fromEnv connects to the server the engram command would", async () => {
  const saved = { server: process.env["ENGRAM_SERVER"], key: process.env["ENGRAM_API_KEY"] };
  process.env["ENGRAM_SERVER"] = `http://${server.address}`;
  delete process.env["ENGRAM_API_KEY"];
  try {
    const fromEnv = Engram.fromEnv();
    assert.equal((await fromEnv.memory.search({ namespace: freshNamespace() }, "anything")).hits.length, 0);
    fromEnv.close();
  } finally {
    for (const [name, value] of [["ENGRAM_SERVER", saved.server], ["ENGRAM_API_KEY", saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test("a closed client fails every later call at once", async () => {
  const closing = new Engram(server.address);
  const scope = { namespace: freshNamespace() };
  assert.equal((await closing.memory.search(scope, "before")).hits.length, 0);
  closing.close();
  const refused = await failure(closing.memory.search(scope, "after"));
  assert.equal(refused.code, Code.Canceled);
  assert.match(refused.message, /closed/);
});

test("a bad request names every offending field as data", async () => {
  const scope = { namespace: freshNamespace() };
  const error = await failure(engram.memory.create(scope, "fact", "  ", { importance: 3, confidence: -1 }));
  assert.equal(error.code, Code.InvalidArgument);
  assert.equal(error.codeName, "INVALID_ARGUMENT");
  assert.deepEqual(
    error.fieldViolations.map((v) => v.field),
    ["memory.content", "memory.importance", "memory.confidence"],
  );
  assert.deepEqual(error.fieldViolations[1], { field: "memory.importance", description: "must be between 0 and 1 (got 3)" });
  assert.ok(error.fieldViolations.every((v) => v.description.length > 0));
  assert.ok(error.rawMessage.includes("memory.content") && error.message.startsWith("INVALID_ARGUMENT: "), error.message);
  assert.ok(error.cause instanceof ConnectError, "the Connect error it came from");
  assert.ok(!error.isRetryable);

  const missing = await failure(engram.memory.getMemory({ scope, id: "0196d1a4-2b6e-7c3d-9e1f-0a1b2c3d4e5f" }));
  assert.equal(missing.code, Code.NotFound);
  assert.deepEqual(missing.fieldViolations, []);
});

test("a watch delivers the changes committed after it started", async () => {
  const scope = { namespace: freshNamespace() };
  const watch = await engram.memory.watch(scope, { types: ["fact"] });
  const fact = (await engram.memory.create(scope, "fact", "watched")).memory!;
  await engram.memory.create(scope, "note", "a note the filter leaves out");
  await engram.memory.updateMemory({
    scope,
    id: fact.id,
    memory: { content: "watched, then changed" },
    updateMask: { paths: ["content"] },
  });
  const seen: string[] = [];
  for await (const event of watch) {
    seen.push(`${RevisionAction[event.action]} ${event.memoryId} [${event.changedFields.join(",")}]`);
    if (seen.length === 2) break; // ends the watch
  }
  assert.deepEqual(seen, [`CREATED ${fact.id} []`, `UPDATED ${fact.id} [content]`]);
  assert.equal((await watch.next()).done, true, "a watch left by its loop has ended");
});
