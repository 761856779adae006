/**
 * A watch of the changes to a scope's memories (WatchMemories) that
 * resumes by itself from its cursor.
 *
 * @module
 */

import { setTimeout as sleep } from "node:timers/promises";

import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CallOptions } from "@connectrpc/connect";

import type { Connection } from "./connection.js";
import { EngramError } from "./errors.js";
import type {
  MemoryEvent,
  WatchMemoriesRequestSchema,
  WatchMemoriesResponse,
} from "./gen/engram/v1/memory_pb.js";
import { retryWaitMs } from "./retry.js";

/** The WatchMemories request a watch opens (and opens again) its call with. */
export type WatchRequest = MessageInitShape<typeof WatchMemoriesRequestSchema>;

/** The raw WatchMemories method of a Connect client. */
type WatchCall = (request: WatchRequest, options?: CallOptions) => AsyncIterable<WatchMemoriesResponse>;

/**
 * A running watch, from `MemoryClient.watch`: iterate it (`for await`) for
 * the `MemoryEvent` messages, in commit order, each with its memory as it is
 * now or the tombstone of a removed one.
 *
 * It resumes by itself after UNAVAILABLE (a server restart or shutdown, a
 * broken connection) or a shed call, from the last cursor it delivered, so no
 * event is missed or repeated; it gives up, throwing the
 * {@link EngramError}, when the retry policy's tries run out (the count
 * starts again with every message that arrives) or the failure may not be
 * retried. It ends when {@link MemoryWatch.close} is called, the loop
 * iterating it stops early, or the server ends the watch without an error.
 */
export class MemoryWatch implements AsyncIterableIterator<MemoryEvent> {
  /**
   * Where the watch stands: the cursor after the last event returned (or
   * the heartbeat after it). A new watch from it resumes without a gap or a
   * repeat.
   */
  cursor: string;

  private readonly connection: Connection;
  private readonly call: WatchCall;
  private readonly request: WatchRequest;
  private readonly closing = new AbortController();
  private messages: AsyncIterator<WatchMemoriesResponse> | undefined;
  private callAbort: AbortController | undefined;
  private pending: MemoryEvent[] = [];
  private messageCursor: string;

  /**
   * A watch of `request` with `call` over `connection`, from `cursor` (empty:
   * from now). Not opened yet: `MemoryClient.watch` opens it.
   */
  constructor(connection: Connection, call: WatchCall, request: WatchRequest, cursor: string) {
    this.connection = connection;
    this.call = call;
    this.request = request;
    this.cursor = cursor;
    this.messageCursor = cursor;
  }

  /**
   * Opens the call and takes the server's first message, which comes at
   * once with the cursor of the watch's start: a change committed after
   * this returns is delivered.
   */
  async start(): Promise<this> {
    const first = await this.nextMessage();
    if (first !== undefined) {
      this.take(first);
    }
    return this;
  }

  /** The next event, waiting for it; done once the watch has ended. */
  async next(): Promise<IteratorResult<MemoryEvent, undefined>> {
    while (this.pending.length === 0) {
      const message = await this.nextMessage();
      if (message === undefined) {
        return { done: true, value: undefined };
      }
      this.take(message);
    }
    const event = this.pending.shift()!;
    this.cursor = this.pending.length > 0 ? event.cursor : this.messageCursor;
    return { done: false, value: event };
  }

  /** Ends the watch when a `for await` loop over it stops early. */
  async return(): Promise<IteratorResult<MemoryEvent, undefined>> {
    this.close();
    return { done: true, value: undefined };
  }

  /** The watch itself, to iterate with `for await`. */
  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Ends the call; iterating the watch then ends at once. */
  close(): void {
    this.closing.abort();
    this.callAbort?.abort();
    this.messages = undefined;
  }

  /** Queues `message`'s events; a message without any moves the cursor. */
  private take(message: WatchMemoriesResponse): void {
    this.pending.push(...message.events);
    this.messageCursor = message.cursor;
    if (this.pending.length === 0) {
      this.cursor = message.cursor;
    }
  }

  /**
   * The next message, opening the call again from `cursor` after a failure
   * the policy lets it ride out; undefined when the watch has ended.
   */
  private async nextMessage(): Promise<WatchMemoriesResponse | undefined> {
    const { retry: policy, onRetry } = this.connection.settings;
    for (let attempt = 1; !this.closing.signal.aborted; attempt++) {
      try {
        if (this.messages === undefined) {
          this.callAbort = new AbortController();
          const request = { ...this.request, cursor: this.cursor };
          this.messages = this.call(request, { signal: this.callAbort.signal })[Symbol.asyncIterator]();
        }
        const next = await this.messages.next();
        if (next.done === true) {
          this.messages = undefined;
          return undefined;
        }
        return next.value;
      } catch (reason) {
        this.messages = undefined;
        if (this.closing.signal.aborted) {
          return undefined;
        }
        const error = EngramError.from(reason);
        const waitMs = retryWaitMs(error, { repeat: true, attempt, policy, timeoutMs: undefined });
        if (waitMs === undefined) {
          throw error;
        }
        onRetry({ rpc: "WatchMemories", error, attempt: attempt + 1, waitMs });
        try {
          await sleep(waitMs, undefined, { signal: this.closing.signal });
        } catch {
          return undefined; // closed while waiting
        }
      }
    }
    return undefined;
  }
}
