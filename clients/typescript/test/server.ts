/**
 * A real engram-server for the tests, from the workspace's build, on a free
 * port with a database in a temporary folder; tests that stop or restart a
 * server get one of their own.
 *
 * ENGRAM_SERVER_BINARY names the binary; by default it is the workspace's
 * debug build (target/debug/engram-server, or under $CARGO_TARGET_DIR),
 * which the test command builds first. ENGRAM_REPO names the repository
 * when the compiled tests run outside it (check.sh runs them beside the
 * installed package).
 */

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/** How long a server may take to start or stop, in milliseconds. */
const STARTUP_TIMEOUT_MS = 30_000;
/** The line the server prints once it listens, followed by its address. */
const LISTENING = "engram-server listening on ";

/** The repository: $ENGRAM_REPO, or the one this file was compiled in (dist/test/ of clients/typescript). */
export const REPO = process.env["ENGRAM_REPO"] ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** The engram-server binary the tests run. */
export function serverBinary(): string {
  const configured = process.env["ENGRAM_SERVER_BINARY"];
  if (configured) {
    return resolve(configured);
  }
  let target = process.env["CARGO_TARGET_DIR"] || join(REPO, "target");
  if (!isAbsolute(target)) {
    target = join(REPO, target);
  }
  return join(target, "debug", "engram-server");
}

/**
 * An engram-server process on a database of its own, which can be stopped
 * and started again on the same database and port, as a restarted service
 * comes back for its clients.
 */
export class Server {
  /** The folder of its database, logs and any files a test gives it. */
  readonly folder: string;
  /** The port it listens on (0 before its first start). */
  port = 0;
  /** The extra flags it runs with; a test may add some (files in `folder`) before it starts. */
  readonly args: string[];
  private process: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;
  private starts = 0;

  /** A server run with extra flags `args`, in a fresh temporary folder; not started yet. */
  constructor(...args: string[]) {
    this.folder = mkdtempSync(join(tmpdir(), "engram-ts-"));
    this.args = args;
  }

  /** A server started with extra flags `args`. */
  static async start(...args: string[]): Promise<Server> {
    return new Server(...args).start();
  }

  /** `127.0.0.1:PORT`. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts the server (on the port it had, if it ran before) and waits until it listens. */
  async start(): Promise<this> {
    const binary = serverBinary();
    if (!existsSync(binary)) {
      throw new Error(`no engram-server at ${binary}: build it (cargo build -p engram-server) or set ENGRAM_SERVER_BINARY`);
    }
    this.starts += 1;
    const stdoutPath = join(this.folder, `stdout.${this.starts}`);
    const stdout = openSync(stdoutPath, "w");
    const stderr = openSync(join(this.folder, "server.log"), "a");
    const child = spawn(
      binary,
      [
        "--listen", `127.0.0.1:${this.port}`,
        "--database", `sqlite://${join(this.folder, "engram.db")}`,
        "--log", "warn",
        ...this.args,
      ],
      { stdio: ["ignore", stdout, stderr] },
    );
    closeSync(stdout);
    closeSync(stderr);
    this.process = child;
    this.exited = new Promise((done) => child.once("exit", (code) => done(code)));
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (Date.now() < deadline) {
      for (const line of readFileSync(stdoutPath, "utf8").split("\n")) {
        if (line.startsWith(LISTENING)) {
          this.port = Number(line.slice(LISTENING.length).split(":").pop());
          return this;
        }
      }
      if (child.exitCode !== null) {
        throw new Error(`engram-server exited with ${child.exitCode}:\n${this.log()}`);
      }
      await sleep(20);
    }
    throw new Error(`engram-server did not listen within ${STARTUP_TIMEOUT_MS} ms:\n${this.log()}`);
  }

  /** Stops the server cleanly (SIGTERM) and checks that it exited 0. */
  async stop(): Promise<void> {
    const child = this.process;
    if (child === undefined) {
      return;
    }
    this.process = undefined;
    child.kill("SIGTERM");
    const code = await Promise.race([this.exited, sleep(STARTUP_TIMEOUT_MS, "timeout" as const, { ref: false })]);
    if (code !== 0) {
      child.kill("SIGKILL");
      throw new Error(`engram-server exited with ${String(code)}:\n${this.log()}`);
    }
  }

  /** Stops the server if it runs, and removes its folder. */
  async dispose(): Promise<void> {
    try {
      await this.stop();
    } finally {
      this.process?.kill("SIGKILL");
      rmSync(this.folder, { recursive: true, force: true });
    }
  }

  /** What the server wrote to standard error. */
  log(): string {
    const path = join(this.folder, "server.log");
    return existsSync(path) ? readFileSync(path, "utf8") : "";
  }
}

/** A fresh namespace, so tests sharing a server see only their own records. */
export function freshNamespace(): string {
  return "ts-" + randomBytes(4).toString("hex");
}
