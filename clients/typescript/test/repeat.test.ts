// The retry table (src/repeat.ts) is the Python package's: which RPCs may be
// sent again after UNAVAILABLE is decided once, in clients/python/generate.py
// (REPEAT), and both clients must agree with it and with the protos.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { REPEAT, mayRepeat } from "engram-client";
import { LearningService, MemoryService, PolicyService } from "engram-client/v1";

import { REPO } from "./server.js";

/** The REPEAT table of clients/python/generate.py, read from its source. */
function pythonTable(): Record<string, Record<string, string>> {
  const source = readFileSync(join(REPO, "clients/python/generate.py"), "utf8");
  const block = /^REPEAT = \{\n([\s\S]*?)^\}/m.exec(source);
  assert.ok(block, "clients/python/generate.py has a REPEAT = {...} table");
  const table: Record<string, Record<string, string>> = {};
  let service: Record<string, string> | undefined;
  for (const line of block[1]!.split("\n")) {
    const opens = /^\s*"(\w+)": \{\s*$/.exec(line);
    const entry = /^\s*"(\w+)": "(\w+)",?\s*$/.exec(line);
    if (opens) {
      service = table[opens[1]!] = {};
    } else if (entry) {
      assert.ok(service, `an RPC outside a service: ${line}`);
      service[entry[1]!] = entry[2]!;
    } else {
      assert.match(line, /^\s*(\},?)?\s*(#.*)?$/, `a line of REPEAT this test cannot read: ${line}`);
    }
  }
  return table;
}

test("the retry table is the Python package's", () => {
  const python = pythonTable();
  assert.ok(Object.keys(python).length === 3 && Object.keys(python["MemoryService"] ?? {}).length > 10, "the table was read");
  assert.deepEqual(REPEAT, python);
});

test("the retry table names every RPC of every service, and nothing else", () => {
  for (const service of [MemoryService, LearningService, PolicyService]) {
    assert.deepEqual(
      Object.keys(REPEAT[service.name] ?? {}).sort(),
      service.methods.map((m) => m.name).sort(),
      service.typeName,
    );
    for (const method of service.methods) {
      const streams = method.methodKind === "server_streaming";
      assert.equal(REPEAT[service.name]![method.name] === "raw", streams, `${method.name}: only a server stream is "raw"`);
    }
  }
});

test("a create is repeated only with a request id, a read always, a change never", () => {
  assert.equal(mayRepeat("MemoryService", "CreateMemory", {}), false);
  assert.equal(mayRepeat("MemoryService", "CreateMemory", { requestId: "" }), false);
  assert.equal(mayRepeat("MemoryService", "CreateMemory", { requestId: "turn-1" }), true);
  assert.equal(mayRepeat("MemoryService", "SearchMemories", {}), true);
  assert.equal(mayRepeat("MemoryService", "UpdateMemory", { requestId: "x" }), false);
  assert.throws(() => mayRepeat("MemoryService", "Teleport", {}), /does not name MemoryService.Teleport/);
});
