// The README's TypeScript sections: every snippet they quote is a region of
// this test (`readme:begin NAME` ... `readme:end NAME`), which runs against
// a real server. tests/tests/e2e/readme.rs checks that the READMEs' copies
// match.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

// readme:begin import
import { Code, Engram, EngramError, RetryPolicy, step } from "engram-client";
// readme:end import

import { Server } from "./server.js";

let server: Server;

before(async () => {
  server = await Server.start();
});

after(async () => {
  await server?.dispose();
});

test("the README's TypeScript sections run", async () => {
  const address = server.address;
  // readme:begin connect
  const engram = new Engram(address); // "host:port"; { apiKey, tls: true } when the server needs them
  const shop = { namespace: "demo", projectId: "shop" };
  // readme:end connect

  // readme:begin create-search
  const lesson = "Checkout deploys failed because the orders migration locked the table";
  const created = await engram.memory.create(shop, "lesson", lesson, { tags: ["deploy"], importance: 0.8 });
  console.log(created.memory?.id); // a UUIDv7; created.result: CREATED, or MERGED into an identical one

  const { hits } = await engram.memory.search(shop, "why did the deploy fail?", { limit: 5 });
  assert.equal(hits[0]?.memory?.content, lesson);
  // readme:end create-search

  // readme:begin context
  const context = await engram.memory.context(shop, { query: "deploying checkout", tokenBudget: 200 });
  assert.ok(context.text.includes(lesson)); // markdown for the agent's system prompt
  // readme:end context

  // readme:begin episode
  const run = await engram.memory.episode(shop, "deploy_checkout", "Deploy checkout");
  async function* work() {
    // Each step is sent as soon as the agent has taken it.
    yield step(1, "shell", "run the orders migration");
    yield step(2, "shell", "deploy checkout", { parameters: { env: "production" } });
  }
  const streamed = await run.streamSteps(work());
  assert.equal(streamed.accepted, 2);
  const done = await run.complete({ score: 0.9, success: true, successes: ["migrate before deploying"] });
  assert.deepEqual(done.learned?.rulesAdded, ["[WORKS] migrate before deploying"]);
  // readme:end episode

  // readme:begin errors
  try {
    await engram.memory.create(shop, "fact", "", { importance: 3 });
    assert.fail("a blank memory with importance 3 is refused");
  } catch (error) {
    if (!(error instanceof EngramError)) throw error;
    assert.equal(error.code, Code.InvalidArgument); // error.codeName: "INVALID_ARGUMENT"
    // Every offending field, as data.
    assert.deepEqual(error.fieldViolations.map((v) => v.field), ["memory.content", "memory.importance"]);
    console.log(error.fieldViolations[1]?.description); // must be between 0 and 1 (got 3)
  }
  // readme:end errors
  engram.close();

  // readme:begin retries
  const patient = new Engram(address, {
    retry: new RetryPolicy({ maxAttempts: 10, initialBackoffMs: 100, maxBackoffMs: 1_000 }),
    onRetry: ({ rpc, error, attempt, waitMs }) => console.log(`${rpc}: ${error.codeName}; try ${attempt} in ${waitMs} ms`),
  });
  // Retried after UNAVAILABLE: a create with a requestId (a repeat gets the first answer).
  const once = await patient.memory.create(shop, "event", "Deployed checkout 2.4", { requestId: "deploy-2.4" });
  const again = await patient.memory.create(shop, "event", "Deployed checkout 2.4", { requestId: "deploy-2.4" });
  assert.equal(again.memory?.id, once.memory?.id);
  patient.close();
  // readme:end retries
});
