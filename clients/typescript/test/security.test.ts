// API keys and TLS: servers started with --auth-keys and --tls-cert.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { Code, Engram, EngramError, RetryPolicy, WriteResult } from "engram-client";

import { Server } from "./server.js";

/** The code `promise` fails with as an EngramError. */
async function failingCode(promise: Promise<unknown>): Promise<Code> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof EngramError, String(error));
    return error.code;
  }
  assert.fail("the call succeeded");
}

test("an API key is sent with every call as a bearer token", async () => {
  const server = new Server();
  const keys = join(server.folder, "keys");
  writeFileSync(keys, "ts-secret-key write keyed\n");
  server.args.push("--auth-keys", keys);
  await server.start();
  try {
    const scope = { namespace: "keyed" };
    const keyed = new Engram(server.address, { apiKey: "ts-secret-key" });
    assert.equal((await keyed.memory.create(scope, "note", "only with a key")).result, WriteResult.CREATED);
    assert.equal((await keyed.memory.search(scope, "key")).hits.length, 1);
    const outside = await failingCode(keyed.memory.search({ namespace: "elsewhere" }, "key"));
    assert.equal(outside, Code.PermissionDenied, "a key stays within its namespaces");
    keyed.close();

    const anonymous = new Engram(server.address);
    assert.equal(await failingCode(anonymous.memory.search(scope, "key")), Code.Unauthenticated);
    anonymous.close();
    const wrong = new Engram(server.address, { apiKey: "not-the-key" });
    assert.equal(await failingCode(wrong.memory.search(scope, "key")), Code.Unauthenticated);
    wrong.close();
  } finally {
    await server.dispose();
  }
});

test("TLS with a private certificate authority and a server name", async () => {
  const server = new Server();
  const cert = join(server.folder, "cert.pem");
  const key = join(server.folder, "key.pem");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-days", "1", "-subj", "/CN=engram.test", "-addext", "subjectAltName=DNS:engram.test",
    "-keyout", key, "-out", cert,
  ], { stdio: "ignore" });
  server.args.push("--tls-cert", cert, "--tls-key", key);
  await server.start();
  try {
    const scope = { namespace: "tls" };
    // The certificate names engram.test, not the address connected to.
    const trusted = { rootCertificates: readFileSync(cert), serverName: "engram.test" };
    const engram = new Engram(`https://${server.address}`, { tls: trusted });
    assert.equal((await engram.memory.create(scope, "fact", "over TLS")).result, WriteResult.CREATED);
    engram.close();

    const untrusted = new Engram(`https://${server.address}`, { retry: RetryPolicy.none() });
    await assert.rejects(untrusted.memory.search(scope, "TLS"), (error: unknown) => {
      // Connect reports a failed TLS handshake as INTERNAL, with Node's reason.
      assert.ok(error instanceof EngramError && error.code === Code.Internal, String(error));
      assert.match(error.rawMessage, /self-signed certificate/);
      return true;
    }, "a certificate of an unknown authority is refused");
    untrusted.close();
    const plaintext = new Engram(server.address, { retry: RetryPolicy.none(), timeoutMs: 5_000 });
    // The server ends the stream (Connect reports CANCELLED); nothing gets through.
    await assert.rejects(plaintext.memory.search(scope, "TLS"), EngramError, "a plaintext client gets nothing from a TLS server");
    plaintext.close();
  } finally {
    await server.dispose();
  }
});
