/**
 * What a connection is made with: the server's address, TLS, the API key,
 * the deadline of a call and the retry policy, checked once.
 *
 * @module
 */

import type { SecureClientSessionOptions } from "node:http2";

import type { EngramError } from "./errors.js";
import { RetryPolicy } from "./retry.js";

/**
 * The server a client connects to when given no address (the server's own
 * default `--listen`).
 */
export const DEFAULT_ADDRESS = "127.0.0.1:50051";

/** How long one try of a call may take by default, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * TLS settings for a server that speaks TLS (`--tls-cert`). Without any,
 * `tls: true` trusts Node's certificate authorities.
 */
export interface Tls {
  /**
   * The PEM certificate authority to trust instead of Node's (a private CA,
   * or a self-signed server certificate).
   */
  rootCertificates?: string | Uint8Array;
  /**
   * A PEM client certificate, for a server that asks for one (mutual TLS,
   * `--tls-client-ca`); needs `privateKey`.
   */
  certificateChain?: string | Uint8Array;
  /** The PEM private key of `certificateChain`. */
  privateKey?: string | Uint8Array;
  /**
   * The name the server's certificate must carry, when it differs from the
   * address's host (e.g. connecting by IP address).
   */
  serverName?: string;
}

/** A retry the client is about to make, as {@link EngramOptions.onRetry} is told it. */
export interface RetryEvent {
  /** The RPC by its name in the `.proto` files, e.g. `"SearchMemories"`. */
  rpc: string;
  /** Why the try failed. */
  error: EngramError;
  /** The number of the try about to be made (2 for the first retry). */
  attempt: number;
  /** How long the client waits before it, in milliseconds. */
  waitMs: number;
}

/** How a client connects and calls; every field is optional. */
export interface EngramOptions {
  /** Sent as `authorization: Bearer <key>` with every call (`--auth-keys`). */
  apiKey?: string;
  /**
   * `true` for TLS with Node's certificate authorities, or the {@link Tls}
   * settings of a private CA, a client certificate or a server name. An
   * `https://` address turns TLS on too.
   */
  tls?: boolean | Tls;
  /**
   * How long each try of a unary call may take, in milliseconds; `null` for
   * no limit. Default {@link DEFAULT_TIMEOUT_MS}. Streams have no deadline.
   */
  timeoutMs?: number | null;
  /** How failed calls are tried again. Default `new RetryPolicy()`. */
  retry?: RetryPolicy;
  /** Told of each retry before the client waits for it (for logs and metrics). */
  onRetry?: (event: RetryEvent) => void;
}

/** A connection's checked settings, as {@link settings} makes them. */
export interface Settings {
  /** `http://host:port` or `https://host:port`, the transport's base URL. */
  baseUrl: string;
  /** Options for `http2.connect`: TLS settings, or none for plaintext. */
  nodeOptions: SecureClientSessionOptions;
  /** Headers sent with every call (the API key). */
  headers: Record<string, string>;
  /** The deadline of one try of a unary call, in milliseconds; undefined: none. */
  timeoutMs: number | undefined;
  /** How failed calls are tried again. */
  retry: RetryPolicy;
  /** Told of each retry. */
  onRetry: (event: RetryEvent) => void;
}

const PEM_CERTIFICATE = "-----BEGIN CERTIFICATE-----";

/**
 * Checks and combines a client's arguments; throws a TypeError for
 * settings that cannot work (nothing is sent).
 */
export function settings(address: string, options: EngramOptions = {}): Settings {
  let target = address;
  let schemeTls = false;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(address);
  if (scheme !== null) {
    const name = scheme[1]!.toLowerCase();
    if (name !== "http" && name !== "https") {
      throw new TypeError(`the server address ${JSON.stringify(address)} must be host:port, http://host:port or https://host:port`);
    }
    schemeTls = name === "https";
    target = address.slice(scheme[0].length);
    if (!schemeTls && options.tls) {
      throw new TypeError(`TLS settings need an https:// server address or a bare host:port, not ${JSON.stringify(address)}`);
    }
  }
  target = target.replace(/\/+$/, "");
  const colon = target.lastIndexOf(":");
  if (colon <= 0 || !/^\d+$/.test(target.slice(colon + 1))) {
    throw new TypeError(`the server address ${JSON.stringify(address)} has no host:port`);
  }
  const tls: Tls | undefined =
    typeof options.tls === "object" ? options.tls : options.tls === true || schemeTls ? {} : undefined;
  const nodeOptions: SecureClientSessionOptions = {};
  if (tls !== undefined) {
    if ((tls.certificateChain === undefined) !== (tls.privateKey === undefined)) {
      throw new TypeError("a TLS client certificate needs its private key, and a key its certificate");
    }
    if (tls.rootCertificates !== undefined && !text(tls.rootCertificates).includes(PEM_CERTIFICATE)) {
      throw new TypeError("the TLS root certificates hold no PEM certificate");
    }
    if (tls.rootCertificates !== undefined) nodeOptions.ca = text(tls.rootCertificates);
    if (tls.certificateChain !== undefined) nodeOptions.cert = text(tls.certificateChain);
    if (tls.privateKey !== undefined) nodeOptions.key = text(tls.privateKey);
    if (tls.serverName) nodeOptions.servername = tls.serverName;
  }
  const headers: Record<string, string> = {};
  if (options.apiKey !== undefined) {
    if (!/^[\x20-\x7e]+$/.test(options.apiKey)) {
      throw new TypeError("the API key must be printable ASCII to be sent as a header");
    }
    headers["authorization"] = `Bearer ${options.apiKey}`;
  }
  const timeout = options.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : options.timeoutMs;
  if (timeout !== null && !(timeout > 0 && Number.isFinite(timeout))) {
    throw new TypeError(`the timeout must be positive milliseconds or null, not ${String(timeout)}`);
  }
  const retry = options.retry ?? new RetryPolicy();
  if (!(retry.maxAttempts >= 1)) {
    throw new TypeError("a retry policy tries at least once (maxAttempts >= 1)");
  }
  return {
    baseUrl: `${tls !== undefined ? "https" : "http"}://${target}`,
    nodeOptions,
    headers,
    timeoutMs: timeout ?? undefined,
    retry,
    onRetry: options.onRetry ?? (() => {}),
  };
}

/** PEM text of `pem`. */
function text(pem: string | Uint8Array): string {
  return typeof pem === "string" ? pem : Buffer.from(pem).toString("utf8");
}
