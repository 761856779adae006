/**
 * The one error a call throws: the status code, the message, and the
 * details the server attached (field violations, a retry delay) as data.
 *
 * @module
 */

import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";

import { BadRequestSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";

/**
 * A gRPC status code by its name in the gRPC specification, e.g.
 * `"INVALID_ARGUMENT"` for Connect's `Code.InvalidArgument`.
 */
export type StatusName =
  | "OK"
  | "CANCELLED"
  | "UNKNOWN"
  | "INVALID_ARGUMENT"
  | "DEADLINE_EXCEEDED"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "PERMISSION_DENIED"
  | "RESOURCE_EXHAUSTED"
  | "FAILED_PRECONDITION"
  | "ABORTED"
  | "OUT_OF_RANGE"
  | "UNIMPLEMENTED"
  | "INTERNAL"
  | "UNAVAILABLE"
  | "DATA_LOSS"
  | "UNAUTHENTICATED";

// The names of the codes, by their numbers (the same in gRPC and Connect).
const STATUS_NAMES: readonly StatusName[] = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

/**
 * The gRPC name of a status code: `statusName(Code.NotFound)` is
 * `"NOT_FOUND"`.
 */
export function statusName(code: Code): StatusName {
  return STATUS_NAMES[code] ?? "UNKNOWN";
}

/**
 * One offending field of a request the server refused as INVALID_ARGUMENT
 * (a `google.rpc.BadRequest.FieldViolation`).
 */
export interface FieldViolation {
  /** The field's path in the request, e.g. `memory.content`. */
  readonly field: string;
  /** What is wrong with it, e.g. `must be between 0 and 1 (got 3)`. */
  readonly description: string;
}

/**
 * A call to Engram that failed: the server answered with an error status,
 * or the call never got an answer (the server unreachable or restarting:
 * UNAVAILABLE; no answer in time: DEADLINE_EXCEEDED).
 *
 * Everything the server said is data: {@link EngramError.code},
 * {@link EngramError.rawMessage}, the {@link EngramError.fieldViolations}
 * of a bad request, the {@link EngramError.retryAfterMs} of a shed call, and
 * every `google.rpc` detail through {@link EngramError.detail}. The
 * `ConnectError` it was made from is its `cause`.
 */
export class EngramError extends Error {
  /** The status code (Connect's `Code`, numbered as gRPC's). */
  readonly code: Code;
  /** The server's status message, or Connect's for a call that got no answer. */
  readonly rawMessage: string;
  /** The `ConnectError` this error was made from; its `details` hold every detail. */
  override readonly cause: ConnectError;

  /**
   * An error for `cause`. Its `message` reads `CODE_NAME: raw message`,
   * e.g. `INVALID_ARGUMENT: memory.content: is required`.
   */
  constructor(cause: ConnectError) {
    super(`${statusName(cause.code)}: ${cause.rawMessage}`, { cause });
    this.name = "EngramError";
    this.code = cause.code;
    this.rawMessage = cause.rawMessage;
    this.cause = cause;
  }

  /**
   * `reason` as an EngramError: itself when it is one, else the
   * ConnectError Connect makes of it (an error that is no ConnectError
   * becomes UNKNOWN, an aborted call CANCELLED).
   */
  static from(reason: unknown): EngramError {
    return reason instanceof EngramError ? reason : new EngramError(ConnectError.from(reason));
  }

  /** The gRPC name of {@link EngramError.code}, e.g. `"INVALID_ARGUMENT"`. */
  get codeName(): StatusName {
    return statusName(this.code);
  }

  /**
   * The details of type `schema` the server sent (e.g. `RetryInfoSchema`
   * from `engram-client/google/rpc`), decoded, in the server's order; empty
   * when it sent none.
   */
  detail<Desc extends DescMessage>(schema: Desc): MessageShape<Desc>[] {
    return this.cause.findDetails(schema);
  }

  /**
   * The offending fields of an INVALID_ARGUMENT answer, from its
   * `google.rpc.BadRequest`, in the server's order; empty otherwise.
   */
  get fieldViolations(): FieldViolation[] {
    return this.detail(BadRequestSchema).flatMap((bad) =>
      bad.fieldViolations.map((v) => ({ field: v.field, description: v.description })),
    );
  }

  /**
   * How many milliseconds the server asked the client to wait before trying
   * again (`google.rpc.RetryInfo`), if it said; else undefined.
   */
  get retryAfterMs(): number | undefined {
    const delay = this.detail(RetryInfoSchema)[0]?.retryDelay;
    if (delay === undefined) {
      return undefined;
    }
    return Number(delay.seconds) * 1000 + delay.nanos / 1_000_000;
  }

  /**
   * Whether the server shed the call: RESOURCE_EXHAUSTED with a retry delay,
   * which Engram sends only for a call it refused unread (too many calls in
   * flight, or the API key's rate limit). Nothing was done, so any call, a
   * write too, may be sent again after {@link EngramError.retryAfterMs}; the
   * client's retries do.
   */
  get isShed(): boolean {
    return this.code === Code.ResourceExhausted && this.retryAfterMs !== undefined;
  }

  /**
   * Whether the same call may succeed if tried again: the server was
   * unreachable or busy (UNAVAILABLE), or it shed the call.
   */
  get isRetryable(): boolean {
    return this.code === Code.Unavailable || this.isShed;
  }
}
