/**
 * The client: a connection to Engram and its three services, with helpers
 * for the common calls.
 *
 * @module
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { CallOptions, Client, Transport } from "@connectrpc/connect";

import { Connection } from "./connection.js";
import { MemoryLevel, type MemoryType, type ScopeSchema } from "./gen/engram/v1/common_pb.js";
import { LearningService } from "./gen/engram/v1/learning_pb.js";
import {
  type AppendStepsResponse,
  type BuildContextResponse,
  type CompleteEpisodeResponse,
  ContradictionPolicy,
  type CreateMemoryResponse,
  type EntityType,
  type Episode,
  type GetEntityResponse,
  type ListEntitiesResponse,
  MemoryService,
  type SearchMemoriesResponse,
  type StreamStepsRequestSchema,
  type StreamStepsResponse,
} from "./gen/engram/v1/memory_pb.js";
import { type ClassifyMode, PolicyService, type RememberResponse } from "./gen/engram/v1/policy_pb.js";
import {
  type ClassifyModeName,
  type ContradictionPolicyName,
  type EntityTypeName,
  type MemoryLevelName,
  type MemoryTypeName,
  Replay,
  type StepInit,
  classifyMode,
  contradictionPolicy,
  entityType,
  memoryLevel,
  memoryType,
} from "./messages.js";
import { DEFAULT_ADDRESS, type EngramOptions, settings } from "./settings.js";
import { MemoryWatch } from "./watch.js";

/**
 * Who is asking: a `Scope` message or its fields, e.g.
 * `{ namespace: "demo", projectId: "shop" }`.
 */
export type ScopeInit = MessageInitShape<typeof ScopeSchema>;

/** A client stream of StreamSteps messages, as `streamStepsFrom` sends it. */
type StepStream = AsyncIterable<MessageInitShape<typeof StreamStepsRequestSchema>>;

/**
 * A connection to an Engram server, with its three services as
 * {@link Engram.memory}, {@link Engram.learning} and {@link Engram.policy}.
 *
 * `address` is `host:port`, `http://host:port` or `https://host:port` (TLS).
 * The options set an API key (sent as `authorization: Bearer <key>` with
 * every call), TLS, the deadline of each try of a call, and how failed
 * calls are tried again. The connection (HTTP/2) opens on the first call and
 * again by itself after the server restarts. Close it with
 * {@link Engram.close}.
 */
export class Engram {
  /** The memory service: memories, search, context, episodes and watches. */
  readonly memory: MemoryClient;
  /**
   * The learning service: outcomes, heuristics, anti-patterns, task rules,
   * mistake cards, consolidation, forgetting and statistics.
   */
  readonly learning: LearningClient;
  /** The policy service: decide what is worth remembering, and remember it. */
  readonly policy: PolicyClient;
  private readonly connection: Connection;

  /**
   * A client of the server at `address`; nothing is sent until the first
   * call. Throws a TypeError for settings that cannot work.
   */
  constructor(address: string = DEFAULT_ADDRESS, options: EngramOptions = {}) {
    this.connection = new Connection(settings(address, options));
    this.memory = new MemoryClient(this.connection);
    this.learning = new LearningClient(this.connection);
    this.policy = new PolicyClient(this.connection);
  }

  /**
   * A client of `$ENGRAM_SERVER` (default 127.0.0.1:50051) with the API key
   * in `$ENGRAM_API_KEY`, if set: the variables the `engram` command reads
   * too.
   */
  static fromEnv(options: Omit<EngramOptions, "apiKey"> = {}): Engram {
    const apiKey = process.env["ENGRAM_API_KEY"];
    return new Engram(process.env["ENGRAM_SERVER"] || DEFAULT_ADDRESS, {
      ...options,
      ...(apiKey ? { apiKey } : {}),
    });
  }

  /**
   * The gRPC transport, for services this client does not wrap (such as
   * `grpc.health.v1.Health`) with Connect's `createClient`. Calls made on it
   * carry the API key but are not retried.
   */
  get transport(): Transport {
    return this.connection.transport;
  }

  /**
   * Closes the connection for good: calls made later (retries and watches
   * resuming too) fail at once with CANCELLED, and calls still waiting for
   * an answer are ended.
   */
  close(): void {
    this.connection.close();
  }
}

/** The optional fields of {@link MemoryClient.create}. */
export interface CreateOptions {
  /** A one-line summary (at most 1,000 characters), shown in contexts instead of the content. */
  summary?: string;
  /** Labels, searchable and filterable. */
  tags?: string[];
  /** Key/value pairs, filterable by equality. */
  metadata?: Record<string, string>;
  /** How much it matters, 0 to 1. Unset: 0.5. */
  importance?: number;
  /** How sure the writer is, 0 to 1. Unset: 1. */
  confidence?: number;
  /** How widely it is visible. Unset: the narrowest level the scope allows. */
  level?: MemoryLevelName | MemoryLevel;
  /** An idempotency key: a repeat gets the first answer, so the create is retried after UNAVAILABLE. */
  requestId?: string;
  /**
   * What it does to older memories of the same owner it contradicts:
   * `"invalidate"` them (their ids in `invalidatedMemoryIds`) or `"off"`.
   * Unset: the server's default.
   */
  contradictions?: ContradictionPolicyName | ContradictionPolicy;
}

/** The optional fields of {@link MemoryClient.search}. */
export interface SearchOptions {
  /** At most this many hits (1 to 100); 0 or unset: the server's default, 10. */
  limit?: number;
  /** Only memories of these types. */
  types?: (MemoryTypeName | MemoryType)[];
  /** Only memories carrying every one of these tags. */
  tags?: string[];
  /** Only memories at least this important. */
  minImportance?: number;
  /** Only memories naming every one of these entities, each by id or any of its names. */
  entities?: string[];
}

/** The optional fields of {@link MemoryClient.entities}. */
export interface EntitiesOptions {
  /** Only entities of these types. */
  types?: (EntityTypeName | EntityType)[];
  /** Only entities whose name starts with this, without case. */
  prefix?: string;
  /** At most this many (1 to 1,000); 0 or unset: 50. */
  pageSize?: number;
  /** The `nextPageToken` of the previous page. */
  pageToken?: string;
}

/** The optional fields of {@link MemoryClient.entity}. */
export interface EntityOptions {
  /** What was true at this time, as known now; unset: what is true now. */
  validAt?: Date | Timestamp;
  /** The most memories to return (1 to 100); 0 or unset: 20. */
  memoryLimit?: number;
}

/** The optional fields of {@link MemoryClient.context}. */
export interface ContextOptions {
  /** Adds the memories most relevant to it; without one, the most important. */
  query?: string;
  /** A task family: adds its rules, mistakes and recent episodes. */
  taskId?: string;
  /** The task type whose heuristics and anti-patterns to show. */
  taskType?: string;
  /** The most tokens the text may take (16 to 32,768); 0 or unset: 512. */
  tokenBudget?: number;
}

/** The optional fields of {@link MemoryClient.episode}. */
export interface EpisodeOptions {
  /** The task type, e.g. `"deployment"`. */
  taskType?: string;
  /** An idempotency key: the start is retried after UNAVAILABLE, and a repeat gets the first episode. */
  requestId?: string;
}

/** The optional fields of {@link MemoryClient.watch}. */
export interface WatchOptions {
  /** Only memories of these types. */
  types?: (MemoryTypeName | MemoryType)[];
  /** Only memories of these levels. */
  levels?: (MemoryLevelName | MemoryLevel)[];
  /** Only memories carrying every one of these tags. */
  tags?: string[];
  /** Start after this cursor (from `MemoryWatch.cursor` or `MemoryEvent.cursor`); unset: from now. */
  cursor?: string;
}

// Declaration merging: each client class has every RPC method of Connect's
// client of its service (assigned in its constructor), beside its helpers.
/** The RPC methods of {@link MemoryClient}, one per RPC of `engram.v1.MemoryService`. */
export interface MemoryClient extends Client<typeof MemoryService> {}

/**
 * The memory service (`engram.v1.MemoryService`): every RPC as a method
 * taking its request message (or its fields) and returning the response
 * message, and helpers for the common calls that take plain arguments.
 * A failed call throws {@link EngramError}.
 */
export class MemoryClient {
  private readonly connection: Connection;

  /** The calls of the memory service over `connection`. */
  constructor(connection: Connection) {
    Object.assign(this, connection.client(MemoryService));
    this.connection = connection;
  }

  /**
   * Like `streamSteps`, with the stream made by `make` for each try: after
   * UNAVAILABLE or a shed call the client waits (the server's delay, or the
   * retry policy's backoff) and sends a fresh stream, as many times as the
   * policy allows. Safe because a step sent again with the content of a
   * stored one is acknowledged as stored (`alreadyStored`).
   */
  streamStepsFrom(make: () => StepStream, options?: CallOptions): Promise<StreamStepsResponse> {
    return this.connection.repeatableStream("StreamSteps", this.streamSteps, make, options);
  }

  /**
   * Stores one memory of type `kind` (`"fact"`, `"preference"`,
   * `"lesson"`, `"decision"`, `"event"` or `"note"`), or reinforces the
   * identical one already stored (`result` is then MERGED). Unset fields take
   * the server's defaults (the level: the narrowest the scope allows). With a
   * `requestId` it is retried after UNAVAILABLE, and a repeat gets the first
   * answer.
   */
  create(
    scope: ScopeInit,
    kind: MemoryTypeName | MemoryType,
    content: string,
    options: CreateOptions = {},
  ): Promise<CreateMemoryResponse> {
    const { summary = "", tags = [], metadata = {}, importance, confidence, level, requestId = "" } = options;
    const { contradictions } = options;
    return this.createMemory({
      scope,
      memory: {
        memoryType: memoryType(kind),
        content,
        summary,
        tags,
        metadata,
        ...(importance !== undefined ? { importance } : {}),
        ...(confidence !== undefined ? { confidence } : {}),
        level: level !== undefined ? memoryLevel(level) : MemoryLevel.UNSPECIFIED,
      },
      requestId,
      contradictions:
        contradictions !== undefined ? contradictionPolicy(contradictions) : ContradictionPolicy.UNSPECIFIED,
    });
  }

  /**
   * Finds the memories visible from `scope` that match `query`, ranked by
   * relevance, recency and importance, optionally only of some `types`,
   * carrying every one of `tags`, or at least `minImportance`.
   */
  search(scope: ScopeInit, query: string, options: SearchOptions = {}): Promise<SearchMemoriesResponse> {
    const { limit = 0, types = [], tags = [], minImportance = 0, entities = [] } = options;
    return this.searchMemories({
      scope,
      query,
      limit,
      filter: { memoryTypes: types.map(memoryType), tags, minImportance, entities },
    });
  }

  /**
   * One page of the entities (people, organizations, projects, services,
   * tools, places) the memories visible from `scope` name, by name:
   * optionally only of some `types`, or whose name starts with `prefix`.
   */
  entities(scope: ScopeInit, options: EntitiesOptions = {}): Promise<ListEntitiesResponse> {
    const { types = [], prefix = "", pageSize = 0, pageToken = "" } = options;
    return this.listEntities({ scope, entityTypes: types.map(entityType), namePrefix: prefix, pageSize, pageToken });
  }

  /**
   * The entity `name` (its id or any of its names, without case): its
   * names, and what the memories visible from `scope` said of it at
   * `validAt` (now when unset) — the memories that name it, newest truth
   * first, and the attributes they state.
   */
  entity(scope: ScopeInit, name: string, options: EntityOptions = {}): Promise<GetEntityResponse> {
    const { validAt, memoryLimit = 0 } = options;
    return this.getEntity({
      scope,
      entity: name,
      memoryLimit,
      ...(validAt !== undefined ? { validAt: validAt instanceof Date ? timestampFromDate(validAt) : validAt } : {}),
    });
  }

  /**
   * A context block for an agent's prompt: rules, mistakes, advice,
   * memories relevant to `query`, preferences and recent episodes of
   * `taskId`, within `tokenBudget` tokens.
   */
  context(scope: ScopeInit, options: ContextOptions = {}): Promise<BuildContextResponse> {
    const { query = "", taskId = "", taskType = "", tokenBudget = 0 } = options;
    return this.buildContext({ scope, query, taskId, taskType, tokenBudget });
  }

  /**
   * Starts recording an episode of work on `taskId` (the task family, e.g.
   * `"deploy_checkout"`), described by `description` (what this run is to
   * do), and returns it, to stream its steps and complete it. With a
   * `requestId` the start is retried after UNAVAILABLE, and a repeat gets
   * the first episode.
   */
  async episode(
    scope: ScopeInit,
    taskId: string,
    description: string,
    options: EpisodeOptions = {},
  ): Promise<EpisodeRun> {
    const { taskType = "", requestId = "" } = options;
    const episode = await this.startEpisode({ scope, taskId, description, taskType, requestId });
    return new EpisodeRun(this, scope, episode);
  }

  /**
   * Follows the changes to the memories visible from `scope`
   * (WatchMemories): creates, merges, updates, deletes and expiries, in
   * commit order, optionally only of some `types`, `levels` or carrying
   * every one of `tags`; from now, or from a `cursor` an earlier watch
   * handed out. Resolves once the server has started the watch: a change
   * committed after that is delivered. Iterate the {@link MemoryWatch} for
   * the events; it resumes by itself after UNAVAILABLE or a shed call, from
   * the last cursor it delivered, so no event is missed or repeated.
   */
  watch(scope: ScopeInit, options: WatchOptions = {}): Promise<MemoryWatch> {
    const { types = [], levels = [], tags = [], cursor = "" } = options;
    const request = {
      scope,
      filter: { memoryTypes: types.map(memoryType), levels: levels.map(memoryLevel), tags },
    };
    return new MemoryWatch(this.connection, this.watchMemories, request, cursor).start();
  }
}

/** How an episode ended, for {@link EpisodeRun.complete}. */
export interface Outcome {
  /** 0 to 1. */
  score: number;
  /** Whether the task succeeded. */
  success: boolean;
  /** A short account of what happened. */
  summary?: string;
  /** Mistakes made (each becomes an `[AVOID]` rule when the score is low). */
  mistakes?: string[];
  /** Things that worked (each becomes a `[WORKS]` rule when the score is high). */
  successes?: string[];
}

/**
 * An episode being recorded, from {@link MemoryClient.episode}: stream (or
 * append) its steps, then complete it with its outcome.
 */
export class EpisodeRun {
  /** The episode as the server started it. */
  readonly episode: Episode;
  private readonly memory: MemoryClient;
  private readonly scope: ScopeInit;

  /** The running `episode` of `scope`, recorded through `memory`. */
  constructor(memory: MemoryClient, scope: ScopeInit, episode: Episode) {
    this.memory = memory;
    this.scope = scope;
    this.episode = episode;
  }

  /** The episode's id. */
  get id(): string {
    return this.episode.id;
  }

  /**
   * Streams `steps` (an array, or an async generator yielding them as the
   * work goes on) over one StreamSteps call, each stored as it arrives; the
   * answer counts the accepted and rejected ones. After UNAVAILABLE or a shed
   * call the stream is sent again from its first step, as the retry policy
   * allows: steps already stored are acknowledged as such
   * (`alreadyStored`), not stored twice.
   */
  streamSteps(steps: AsyncIterable<StepInit> | Iterable<StepInit>): Promise<StreamStepsResponse> {
    const replay = new Replay(steps);
    const { scope, id } = this;
    return this.memory.streamStepsFrom(async function* () {
      for await (const step of replay) {
        yield { scope, episodeId: id, steps: [step] };
      }
    });
  }

  /**
   * Appends a batch of steps (AppendSteps), durable when it resolves. Not
   * retried after UNAVAILABLE; send the same steps again to be sure (stored
   * ones are acknowledged, not stored twice).
   */
  appendSteps(steps: StepInit[]): Promise<AppendStepsResponse> {
    return this.memory.appendSteps({ scope: this.scope, episodeId: this.id, steps });
  }

  /**
   * Completes the episode with its outcome. The server learns from it in
   * the same transaction (task rules, mistake cards); the answer says what
   * it learned. FAILED_PRECONDITION when it is not running. Not retried
   * after UNAVAILABLE.
   */
  complete(outcome: Outcome): Promise<CompleteEpisodeResponse> {
    const { score, success, summary = "", mistakes = [], successes = [] } = outcome;
    return this.memory.completeEpisode({
      scope: this.scope,
      episodeId: this.id,
      outcome: { score, success, summary, mistakes, successes },
    });
  }
}

/** The RPC methods of {@link LearningClient}, one per RPC of `engram.v1.LearningService`. */
export interface LearningClient extends Client<typeof LearningService> {}

/**
 * The learning service (`engram.v1.LearningService`): every RPC as a method
 * taking its request message (or its fields) and returning the response.
 * A failed call throws {@link EngramError}.
 */
export class LearningClient {
  /** The calls of the learning service over `connection`. */
  constructor(connection: Connection) {
    Object.assign(this, connection.client(LearningService));
  }
}

/** The optional fields of {@link PolicyClient.rememberTranscript}. */
export interface RememberOptions {
  /** The task family the transcript belongs to. */
  taskId?: string;
  /** Labels for the memory, if one is stored. */
  tags?: string[];
  /** Which classifier decides: `"auto"` (default), `"rules"` or `"llm"`. */
  mode?: ClassifyModeName | ClassifyMode;
  /** An idempotency key: retried after UNAVAILABLE, and a repeat gets the first answer. */
  requestId?: string;
}

/** The RPC methods of {@link PolicyClient}, one per RPC of `engram.v1.PolicyService`. */
export interface PolicyClient extends Client<typeof PolicyService> {}

/**
 * The policy service (`engram.v1.PolicyService`): every RPC as a method
 * taking its request message (or its fields) and returning the response,
 * and {@link PolicyClient.rememberTranscript}, Remember with plain
 * arguments. A failed call throws {@link EngramError}.
 */
export class PolicyClient {
  /** The calls of the policy service over `connection`. */
  constructor(connection: Connection) {
    Object.assign(this, connection.client(PolicyService));
  }

  /**
   * Decides whether `transcript` is worth remembering (as what, how
   * important, at which level) and stores it when it is, merging like
   * {@link MemoryClient.create}; the answer carries the decision and the
   * memory, if one was stored. With a `requestId` it is retried after
   * UNAVAILABLE, and a repeat gets the first answer.
   */
  rememberTranscript(scope: ScopeInit, transcript: string, options: RememberOptions = {}): Promise<RememberResponse> {
    const { taskId = "", tags = [], mode = "auto", requestId = "" } = options;
    return this.remember({ scope, transcript, taskId, tags, mode: classifyMode(mode), requestId });
  }
}
