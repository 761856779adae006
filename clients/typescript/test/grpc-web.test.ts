// gRPC-web, as a browser speaks it: the server answers gRPC-web
// (application/grpc-web+proto) on its gRPC port, over HTTP/1.1 and HTTP/2,
// and CORS preflights for the origins given with --cors-allow-origin. The
// messages are the package's (engram-client/v1); the transport is Connect's
// gRPC-web transport for browsers (@connectrpc/connect-web, on Node's fetch).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport as createNodeGrpcWebTransport } from "@connectrpc/connect-node";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { Code, EngramError, MemoryType, WriteResult } from "engram-client";
import { MemoryService } from "engram-client/v1";

import { Server, freshNamespace } from "./server.js";

const APP = "https://app.example";
const LESSON = "Checkout deploys failed because the orders migration locked the table";

let server: Server;

before(async () => {
  server = await Server.start("--cors-allow-origin", APP);
});

after(async () => {
  await server?.dispose();
});

/** What a page of `origin` would send beside its gRPC-web calls. */
function fromOrigin(origin: string, seen?: (response: Response) => void): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("origin", origin);
    const response = await fetch(input, { ...init, headers });
    seen?.(response);
    return response;
  };
}

test("a browser's gRPC-web client creates and searches memories over HTTP/1.1", async () => {
  const namespace = freshNamespace();
  // readme:begin browser
  // import { createClient } from "@connectrpc/connect";
  // import { createGrpcWebTransport } from "@connectrpc/connect-web";
  // import { MemoryService } from "engram-client/v1";
  const transport = createGrpcWebTransport({ baseUrl: `http://${server.address}` });
  const memories = createClient(MemoryService, transport);
  const shop = { namespace, projectId: "shop" };
  const created = await memories.createMemory({ scope: shop, memory: { memoryType: MemoryType.LESSON, content: LESSON } });
  const found = await memories.searchMemories({ scope: shop, query: "why did the deploy fail?" });
  // readme:end browser
  assert.equal(created.result, WriteResult.CREATED);
  assert.equal(found.hits[0]?.memory?.id, created.memory?.id);
});

test("gRPC-web over HTTP/2 reaches the same service", async () => {
  const transport = createNodeGrpcWebTransport({ baseUrl: `http://${server.address}`, httpVersion: "2" });
  const memories = createClient(MemoryService, transport);
  const scope = { namespace: freshNamespace() };
  const created = await memories.createMemory({ scope, memory: { content: "over HTTP/2 gRPC-web" } });
  const again = await memories.getMemory({ scope, id: created.memory!.id });
  assert.equal(again.content, "over HTTP/2 gRPC-web");
});

test("a bad request over gRPC-web names every offending field as data", async () => {
  const memories = createClient(MemoryService, createGrpcWebTransport({ baseUrl: `http://${server.address}` }));
  const reason = await memories
    .createMemory({ scope: { namespace: freshNamespace() }, memory: { content: "", importance: 3 } })
    .then(() => assert.fail("a blank memory with importance 3 was stored"), (error: unknown) => error);
  assert.ok(reason instanceof ConnectError, String(reason));
  // The package's error reads the details of any Connect error.
  const error = new EngramError(reason);
  assert.equal(error.code, Code.InvalidArgument);
  assert.deepEqual(error.fieldViolations, [
    { field: "memory.content", description: "is required and must not be blank" },
    { field: "memory.importance", description: "must be between 0 and 1 (got 3)" },
  ]);
});

test("a CORS preflight from an allowed origin is answered, and gRPC-web answers expose their status", async () => {
  const preflight = await fetch(`http://${server.address}/engram.v1.MemoryService/CreateMemory`, {
    method: "OPTIONS",
    headers: {
      origin: APP,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type,x-grpc-web,authorization",
    },
  });
  assert.ok(preflight.status === 200 || preflight.status === 204, `preflight status ${preflight.status}`);
  assert.equal(preflight.headers.get("access-control-allow-origin"), APP);
  const allowedHeaders = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase();
  for (const header of ["content-type", "x-grpc-web", "authorization"]) {
    assert.ok(allowedHeaders.includes(header), `${header} is allowed: ${allowedHeaders}`);
  }
  assert.ok((preflight.headers.get("access-control-allow-methods") ?? "").includes("POST"));

  // The call itself, from the page: the browser lets the page read the
  // status only if the response exposes it.
  const responses: Response[] = [];
  const transport = createGrpcWebTransport({ baseUrl: `http://${server.address}`, fetch: fromOrigin(APP, (r) => responses.push(r)) });
  const memories = createClient(MemoryService, transport);
  await assert.rejects(
    memories.createMemory({ scope: { namespace: freshNamespace() }, memory: { content: "" } }),
    (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument,
  );
  const [response] = responses;
  assert.ok(response, "the call went through the page's fetch");
  assert.equal(response.headers.get("access-control-allow-origin"), APP);
  const exposed = (response.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/\s*,\s*/);
  for (const header of ["grpc-status", "grpc-message"]) {
    assert.ok(exposed.includes(header), `${header} is exposed: ${exposed.join(", ")}`);
  }
});

test("an origin that is not allowed is refused and gets no CORS permission", async () => {
  const preflight = await fetch(`http://${server.address}/engram.v1.MemoryService/CreateMemory`, {
    method: "OPTIONS",
    headers: {
      origin: "https://elsewhere.example",
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type,x-grpc-web",
    },
  });
  assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  const responses: Response[] = [];
  const transport = createGrpcWebTransport({
    baseUrl: `http://${server.address}`,
    fetch: fromOrigin("https://elsewhere.example", (r) => responses.push(r)),
  });
  // The server itself refuses a page of an origin it does not name, before
  // the call runs (a browser skips the preflight for some requests), and
  // gives no permission to hand the answer to the page.
  await assert.rejects(
    createClient(MemoryService, transport).searchMemories({ scope: { namespace: freshNamespace() }, query: "cors" }),
    (error: unknown) => error instanceof ConnectError && error.code === Code.PermissionDenied,
  );
  assert.equal(responses[0]?.headers.get("access-control-allow-origin"), null);
});
