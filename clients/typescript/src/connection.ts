/**
 * One connection: the gRPC transport, the API key, the deadline and retries,
 * shared by every RPC of a client.
 *
 * @module
 */

import { setTimeout as sleep } from "node:timers/promises";
import { inspect } from "node:util";

import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  type CallOptions,
  type Client,
  Code,
  ConnectError,
  type Interceptor,
  type Transport,
  createClient,
} from "@connectrpc/connect";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";

import { EngramError } from "./errors.js";
import { mayRepeat } from "./repeat.js";
import { retryWaitMs } from "./retry.js";
import type { Settings } from "./settings.js";

/** Any method of a Connect client, as this module wraps them. */
type AnyCall = (request: unknown, options?: CallOptions) => unknown;

/**
 * The HTTP/2 connection to one server and the settings every call carries.
 * The connection is opened on the first call and again after it breaks
 * (a server restart), by Connect's session manager.
 */
export class Connection {
  /** The checked settings. */
  readonly settings: Settings;
  /** The gRPC transport (HTTP/2), with the API key on every call. */
  readonly transport: Transport;
  private readonly sessions: Http2SessionManager;
  private closed = false;

  /** A connection with `settings`; nothing is sent until the first call. */
  constructor(settings: Settings) {
    this.settings = settings;
    this.sessions = new Http2SessionManager(settings.baseUrl, {}, settings.nodeOptions);
    // Every call: refused once the connection is closed (the session
    // manager would open a new session), else sent with the API key. Async,
    // so that a refusal is a rejected promise: Connect clears the call's
    // deadline timer only then, not after a synchronous throw.
    const open: Interceptor = (next) => async (request) => {
      if (this.closed) {
        throw new ConnectError("the Engram client was closed", Code.Canceled);
      }
      for (const [name, value] of Object.entries(settings.headers)) {
        request.header.set(name, value);
      }
      return await next(request);
    };
    this.transport = createGrpcTransport({
      baseUrl: settings.baseUrl,
      sessionManager: this.sessions,
      interceptors: [open],
    });
  }

  /**
   * Closes the connection for good: later calls (retries too) fail at
   * once with CANCELLED, and calls still waiting for an answer are ended.
   */
  close(): void {
    this.closed = true;
    this.sessions.abort(new ConnectError("the Engram client was closed", Code.Canceled));
  }

  /**
   * What `console.log`, `util.inspect` and `JSON.stringify` show of the
   * connection (and so of a client): the server and the settings, never the
   * API key or a TLS private key.
   */
  toJSON(): Record<string, unknown> {
    const { baseUrl, headers, nodeOptions, timeoutMs } = this.settings;
    return {
      baseUrl,
      apiKey: "authorization" in headers ? "[hidden]" : null,
      tlsClientKey: nodeOptions.key !== undefined ? "[hidden]" : null,
      timeoutMs: timeoutMs ?? null,
      closed: this.closed,
    };
  }

  [inspect.custom](): string {
    return `Connection ${inspect(this.toJSON())}`;
  }

  /**
   * A client of `service` whose methods throw {@link EngramError}: unary
   * calls each try with the connection's deadline (unless the call's
   * options give one) and tried again as `REPEAT` and the retry policy
   * allow; streams sent once, without a deadline.
   */
  client<S extends DescService>(service: S): Client<S> {
    const raw = createClient(service, this.transport) as unknown as Record<string, AnyCall>;
    const client: Record<string, AnyCall> = {};
    for (const method of service.methods) {
      const call = raw[method.localName]!;
      client[method.localName] = this.wrap(service, method, call);
    }
    return client as Client<S>;
  }

  /** `call`, the Connect method of `method`, with errors as EngramError and unary retries. */
  private wrap(service: DescService, method: DescMethod, call: AnyCall): AnyCall {
    switch (method.methodKind) {
      case "unary":
        return async (request, options) => {
          const repeat = mayRepeat(service.name, method.name, request as { requestId?: unknown });
          return this.withRetries(method.name, repeat, () => call(request, this.tryOptions(options)) as Promise<unknown>);
        };
      case "client_streaming":
        return async (request, options) => {
          try {
            return await (call(request, options) as Promise<unknown>);
          } catch (reason) {
            throw EngramError.from(reason);
          }
        };
      case "server_streaming":
      case "bidi_streaming":
        return (request, options) => engramErrors(call(request, options) as AsyncIterable<unknown>);
    }
  }

  /**
   * Sends a client stream made by `make` with `call` (RPC `rpc`), making it
   * anew and trying again after UNAVAILABLE or a shed call while the policy
   * has tries left: for streams whose messages may be sent twice.
   */
  repeatableStream<I, O>(
    rpc: string,
    call: (request: AsyncIterable<I>, options?: CallOptions) => Promise<O>,
    make: () => AsyncIterable<I>,
    options?: CallOptions,
  ): Promise<O> {
    return this.withRetries(rpc, true, () => call(make(), options));
  }

  /**
   * Calls `send` until it succeeds or may not be tried again, waiting
   * between tries as the retry policy says; throws the last failure as an
   * EngramError.
   */
  async withRetries<T>(rpc: string, repeat: boolean, send: () => Promise<T>): Promise<T> {
    const { retry: policy, timeoutMs, onRetry } = this.settings;
    for (let attempt = 1; ; attempt++) {
      try {
        return await send();
      } catch (reason) {
        const error = EngramError.from(reason);
        const waitMs = retryWaitMs(error, { repeat, attempt, policy, timeoutMs });
        if (waitMs === undefined) {
          throw error;
        }
        onRetry({ rpc, error, attempt: attempt + 1, waitMs });
        await sleep(waitMs);
      }
    }
  }

  /** The options of one try: the caller's, with the connection's deadline unless they set one. */
  private tryOptions(options: CallOptions | undefined): CallOptions {
    return { ...options, timeoutMs: options?.timeoutMs ?? this.settings.timeoutMs };
  }
}

/** The messages of `stream`, its failure thrown as an EngramError. */
async function* engramErrors<T>(stream: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* stream;
  } catch (reason) {
    throw EngramError.from(reason);
  }
}
