// Engram from Node.js: the interop scenario.
//
// Talks to a running Engram server with @grpc/grpc-js, loading the repo's
// proto/engram/v1/*.proto at run time with @grpc/proto-loader (no code
// generation), and checks every answer with node:assert/strict: any mismatch
// exits non-zero with a message saying what was expected and what came back.
//
// Environment:
//   ENGRAM_ADDR       host:port of the server (required)
//   ENGRAM_NAMESPACE  the namespace to work in (default: a fresh
//                     "interop-node-<hex>", so the script can run again and
//                     again against the same server)
//
// Run it with tests/interop/node/run.sh (or `node scenario.js` in this folder).
//
// With the loader options used here, messages are plain objects whose field
// names are exactly those of the .proto files (keepCase), enums are their
// names ("MEMORY_TYPE_LESSON"), 64-bit integers are decimal strings
// (seen_count "2"), and unset fields come back with their default values.

"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");

const addr = process.env.ENGRAM_ADDR;
if (!addr) {
  console.error("node interop: FAILED: ENGRAM_ADDR is not set (host:port of the Engram server)");
  process.exit(2);
}
const ns = process.env.ENGRAM_NAMESPACE || "interop-node-" + crypto.randomBytes(4).toString("hex");

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const definition = protoLoader.loadSync(["engram/v1/memory.proto", "engram/v1/policy.proto"], {
  includeDirs: [path.resolve(__dirname, "../../../proto")],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const { MemoryService, PolicyService } = grpc.loadPackageDefinition(definition).engram.v1;

const credentials = grpc.credentials.createInsecure();
const memories = new MemoryService(addr, credentials);
const policy = new PolicyService(addr, credentials);

// Calls a unary method as a promise, with a deadline: a hung server fails the
// call instead of blocking it.
function call(client, method, request, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + timeoutMs }, (err, response) =>
      err ? reject(err) : resolve(response),
    );
  });
}

const PREFERENCE = "Alice prefers concise answers with code first";
const LESSON = "Checkout deploys failed because the orders migration locked the table";

async function main() {
  // --- A user preference: stored once, then merged when stored again -------

  const alice = { namespace: ns, user_id: "alice" };
  const createPreference = {
    scope: alice,
    memory: { memory_type: "MEMORY_TYPE_PREFERENCE", content: PREFERENCE, importance: 0.9 },
  };

  const first = await call(memories, "CreateMemory", createPreference);
  assert.equal(first.result, "WRITE_RESULT_CREATED", "first create: result is not CREATED");
  assert.ok(first.memory.id, "first create: the memory has no id");
  assert.equal(first.memory.level, "MEMORY_LEVEL_GLOBAL",
    "first create: a scope without project or session should give level GLOBAL");
  assert.equal(first.memory.content, PREFERENCE, "first create: the content is not echoed");
  assert.equal(first.memory.memory_type, "MEMORY_TYPE_PREFERENCE", "first create: the memory type is not echoed");
  assert.equal(first.memory.seen_count, "1", "first create: seen_count is not 1");

  const again = await call(memories, "CreateMemory", createPreference);
  assert.equal(again.result, "WRITE_RESULT_MERGED", "second identical create: result is not MERGED");
  assert.equal(again.memory.id, first.memory.id, "second identical create: the id is not the first one's");
  assert.equal(again.memory.seen_count, "2", "second identical create: seen_count is not 2");

  // --- A project lesson, and a search that finds it ------------------------

  const shop = { namespace: ns, project_id: "shop" };
  const lesson = await call(memories, "CreateMemory", {
    scope: shop,
    memory: {
      memory_type: "MEMORY_TYPE_LESSON",
      content: "Checkout deploys failed because the orders migration locked the table",
      tags: ["deploy", "postgres"],
    },
  });
  const found = await call(memories, "SearchMemories", {
    scope: shop,
    query: "why did the deploy fail?",
  });

  assert.equal(lesson.result, "WRITE_RESULT_CREATED", "lesson create: result is not CREATED");
  assert.equal(lesson.memory.level, "MEMORY_LEVEL_WORKSPACE",
    "lesson create: a scope with a project should give level WORKSPACE");
  assert.equal(lesson.memory.content, LESSON, "lesson create: the content is not echoed");
  assert.deepEqual(lesson.memory.tags, ["deploy", "postgres"], "lesson create: the tags are not echoed");

  assert.ok(found.hits.length > 0, "search 'why did the deploy fail?': no hits");
  const top = found.hits[0];
  assert.equal(top.memory.id, lesson.memory.id, "search: the first hit is not the lesson");
  assert.ok(top.score > 0, `search: the first hit's score is not positive (${top.score})`);

  // --- Bad input: INVALID_ARGUMENT with google.rpc.BadRequest field violations

  // The error details are a serialized google.rpc.Status. Its messages are not
  // in Engram's protos: start from the google.protobuf.Any that protobufjs
  // bundles and declare the two google.rpc messages on top of it.
  const protobuf = require("protobufjs");
  const rpcTypes = protobuf.Root.fromJSON(protobuf.common.get("google/protobuf/any.proto"));
  protobuf.parse(`
    syntax = "proto3";
    package google.rpc;
    message Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }
    message BadRequest {
      message FieldViolation { string field = 1; string description = 2; }
      repeated FieldViolation field_violations = 1;
    }
  `, rpcTypes, { keepCase: true });
  const Status = rpcTypes.lookupType("google.rpc.Status");
  const BadRequest = rpcTypes.lookupType("google.rpc.BadRequest");

  let violations = null; // stays null if the call unexpectedly succeeds
  try {
    await call(memories, "CreateMemory", {
      scope: { namespace: ns },
      memory: { content: "", importance: 3 },
    });
  } catch (err) {
    if (err.code !== grpc.status.INVALID_ARGUMENT) throw err;
    violations = [];
    // The details travel, serialized, in the grpc-status-details-bin trailer.
    for (const bytes of err.metadata.get("grpc-status-details-bin")) {
      for (const detail of Status.decode(bytes).details) {
        if (detail.type_url === "type.googleapis.com/google.rpc.BadRequest") {
          violations.push(...BadRequest.decode(detail.value).field_violations);
        }
      }
    }
  }

  assert.notEqual(violations, null, "bad create (content '', importance 3) succeeded instead of INVALID_ARGUMENT");
  assert.deepEqual(violations.map((v) => v.field).sort(), ["memory.content", "memory.importance"],
    "bad create: the google.rpc.BadRequest field violations should name exactly memory.content and memory.importance");

  // --- Context for a prompt, within a token budget -------------------------

  const context = await call(memories, "BuildContext", {
    scope: { namespace: ns, project_id: "shop", user_id: "alice" },
    query: "deploying checkout",
    token_budget: 200,
  });
  assert.ok(context.text.includes(PREFERENCE), `build context: the text lacks the preference:\n${context.text}`);
  assert.ok(context.text.includes(LESSON), `build context: the text lacks the lesson:\n${context.text}`);
  assert.ok(context.token_estimate > 0 && context.token_estimate <= 200,
    `build context: token_estimate should be in 1..200, got ${context.token_estimate}`);

  // --- An episode: start, log two steps, complete, read back ---------------

  const episode = await call(memories, "StartEpisode", {
    scope: shop,
    task_id: "deploy_checkout",
    description: "deploy checkout",
    task_type: "deployment",
  });
  assert.ok(episode.id, "start episode: the episode has no id");
  assert.equal(episode.status, "EPISODE_STATUS_RUNNING", "start episode: status is not RUNNING");

  const appended = await call(memories, "AppendSteps", {
    scope: shop,
    episode_id: episode.id,
    steps: [
      { step_number: 1, tool: "shell", action: "run the orders migration", result: "STEP_RESULT_OK" },
      {
        step_number: 2,
        tool: "shell",
        action: "deploy checkout",
        parameters: JSON.stringify({ env: "production" }),
        result: "STEP_RESULT_OK",
      },
    ],
  });
  assert.equal(appended.step_count, 2, "append steps: step_count is not 2");

  const completed = await call(memories, "CompleteEpisode", {
    scope: shop,
    episode_id: episode.id,
    outcome: {
      score: 0.9,
      success: true,
      summary: "Checkout deployed after running the migration first",
      successes: ["run the migration before deploying"],
    },
  });
  assert.equal(completed.episode.status, "EPISODE_STATUS_COMPLETED", "complete episode: status is not COMPLETED");

  const fetched = await call(memories, "GetEpisode", { scope: shop, id: episode.id });
  assert.equal(fetched.status, "EPISODE_STATUS_COMPLETED", "get episode: status is not COMPLETED");
  assert.deepEqual(fetched.steps.map((s) => s.step_number), [1, 2], "get episode: expected steps 1 and 2");
  assert.equal(fetched.outcome.success, true, "get episode: the outcome is not a success");
  assert.ok(Math.abs(fetched.outcome.score - 0.9) < 1e-9,
    `get episode: the outcome score is not 0.9, got ${fetched.outcome.score}`);

  // --- The policy service: is this worth remembering? ----------------------

  const { decision } = await call(policy, "Classify", {
    scope: alice,
    transcript: "User: please never use semicolons in our JavaScript.",
  });
  assert.equal(decision.should_store, true, "classify: should_store is false for a stated preference");
  assert.equal(decision.memory_type, "MEMORY_TYPE_PREFERENCE", "classify: the memory type is not PREFERENCE");

  console.log("node interop: ok");
}

main()
  .catch((err) => {
    // An AssertionError's message says what was checked and, for equality
    // checks, shows the expected and actual values.
    const message =
      typeof err.code === "number" && err.metadata
        ? `gRPC call failed: ${grpc.status[err.code]}: ${err.details}`
        : err.message;
    console.error(`node interop: FAILED: ${message}`);
    process.exitCode = 1;
  })
  .finally(() => {
    memories.close();
    policy.close();
  });
