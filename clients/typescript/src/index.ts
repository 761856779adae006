/**
 * A typed TypeScript client for Engram, the long-term memory service for AI
 * agents, over gRPC (Connect for Node.js).
 *
 * Connect once with {@link Engram}, then call the three services through
 * `engram.memory`, `engram.learning` and `engram.policy`. Every RPC is a
 * method that takes its request message (or its fields) and returns the
 * response message; helpers such as `engram.memory.create` take plain
 * arguments for the common calls. A failed call throws {@link EngramError},
 * which carries the status code and the server's field violations as data.
 * Reads, and creates that carry a `requestId`, are retried with backoff
 * when the server is unavailable; any call the server shed is retried after
 * the delay it asks.
 *
 * ```ts
 * import { Engram } from "engram-client";
 *
 * const engram = new Engram("127.0.0.1:50051");
 * const shop = { namespace: "demo", projectId: "shop" };
 * await engram.memory.create(shop, "lesson", "Run the migration before deploying");
 * const { hits } = await engram.memory.search(shop, "deploy");
 * ```
 *
 * @module
 */

export { Code } from "@connectrpc/connect";

export {
  type ContextOptions,
  type CreateOptions,
  Engram,
  type EntitiesOptions,
  type EntityOptions,
  type EpisodeOptions,
  EpisodeRun,
  LearningClient,
  MemoryClient,
  type Outcome,
  PolicyClient,
  type RememberOptions,
  type ScopeInit,
  type SearchOptions,
  type WatchOptions,
} from "./client.js";
export { EngramError, type FieldViolation, type StatusName, statusName } from "./errors.js";
export {
  type ClassifyModeName,
  type ContradictionPolicyName,
  type EntityTypeName,
  type MemoryLevelName,
  type MemoryTypeName,
  Replay,
  type StepInit,
  type StepOptions,
  classifyMode,
  contradictionPolicy,
  entityType,
  memoryLevel,
  memoryType,
  step,
} from "./messages.js";
export { REPEAT, type RepeatKind, mayRepeat } from "./repeat.js";
export { type FailedTry, RetryPolicy, type RetryPolicyInit, retryWaitMs } from "./retry.js";
export {
  DEFAULT_ADDRESS,
  DEFAULT_TIMEOUT_MS,
  type EngramOptions,
  type RetryEvent,
  type Tls,
} from "./settings.js";
export { MemoryWatch, type WatchRequest } from "./watch.js";
export { MemoryLevel, MemoryType, type Scope } from "./gen/engram/v1/common_pb.js";
export {
  EpisodeStatus,
  type Memory,
  type MemoryEvent,
  RevisionAction,
  type Step,
  StepResult,
  WriteResult,
} from "./gen/engram/v1/memory_pb.js";
