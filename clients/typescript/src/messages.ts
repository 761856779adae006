/**
 * Small builders for the messages the helpers take: enum values by their
 * short names, steps of an episode, and a replayable stream of steps.
 *
 * @module
 */

import type { MessageInitShape } from "@bufbuild/protobuf";

import { MemoryLevel, MemoryType } from "./gen/engram/v1/common_pb.js";
import { ContradictionPolicy, EntityType, type StepSchema, StepResult } from "./gen/engram/v1/memory_pb.js";
import { ClassifyMode } from "./gen/engram/v1/policy_pb.js";

/** A memory type by its short name, as the helpers take it. */
export type MemoryTypeName = "fact" | "preference" | "lesson" | "decision" | "event" | "note";

/** A memory level by its short name, as the helpers take it. */
export type MemoryLevelName = "global" | "workspace" | "conversation";

/** An entity type by its short name, as the helpers take it. */
export type EntityTypeName = "person" | "organization" | "project" | "service" | "tool" | "place" | "other";

/** `"person"` → `EntityType.PERSON`; an enum value is kept as it is. */
export function entityType(value: EntityTypeName | EntityType): EntityType {
  return typeof value === "string" ? EntityType[value.toUpperCase() as Uppercase<EntityTypeName>] : value;
}

/** A classifier by its short name, as the helpers take it. */
export type ClassifyModeName = "auto" | "rules" | "llm";

/** A step of an episode as the helpers take it: a `Step` message or its fields. */
export type StepInit = MessageInitShape<typeof StepSchema>;

/** `"lesson"` → `MemoryType.LESSON`; an enum value is kept as it is. */
export function memoryType(value: MemoryTypeName | MemoryType): MemoryType {
  return typeof value === "string" ? MemoryType[value.toUpperCase() as Uppercase<MemoryTypeName>] : value;
}

/** `"workspace"` → `MemoryLevel.WORKSPACE`; an enum value is kept as it is. */
export function memoryLevel(value: MemoryLevelName | MemoryLevel): MemoryLevel {
  return typeof value === "string" ? MemoryLevel[value.toUpperCase() as Uppercase<MemoryLevelName>] : value;
}

/** What a write does to older memories it contradicts, by its short name. */
export type ContradictionPolicyName = "invalidate" | "link" | "off";

/** `"off"` → `ContradictionPolicy.OFF`; an enum value is kept as it is. */
export function contradictionPolicy(value: ContradictionPolicyName | ContradictionPolicy): ContradictionPolicy {
  return typeof value === "string"
    ? ContradictionPolicy[value.toUpperCase() as Uppercase<ContradictionPolicyName>]
    : value;
}

/** `"rules"` → `ClassifyMode.RULES`; an enum value is kept as it is. */
export function classifyMode(value: ClassifyModeName | ClassifyMode): ClassifyMode {
  return typeof value === "string" ? ClassifyMode[value.toUpperCase() as Uppercase<ClassifyModeName>] : value;
}

/** The optional parts of a step, for {@link step}. */
export interface StepOptions {
  /** Whether the action succeeded. Default true. */
  ok?: boolean;
  /** What the action produced (the server may cut it to 16 KiB). */
  output?: string;
  /** The tool's parameters: JSON text, or an object sent as JSON. */
  parameters?: string | Record<string, unknown>;
  /** How long the action took, in milliseconds (rounded to a whole number). */
  latencyMs?: number;
}

/**
 * One step of an episode: step `number` (increasing, from 1) used `tool` to
 * do `action`, and succeeded unless `ok` is false. `parameters` is JSON
 * text, or an object that is sent as JSON (`JSON.stringify`).
 */
export function step(number: number, tool: string, action: string, options: StepOptions = {}): StepInit {
  const { ok = true, output = "", parameters = "", latencyMs = 0 } = options;
  return {
    stepNumber: number,
    tool,
    action,
    parameters: typeof parameters === "string" ? parameters : JSON.stringify(parameters),
    result: ok ? StepResult.OK : StepResult.ERROR,
    output,
    latencyMs: BigInt(Math.round(latencyMs)),
  };
}

/**
 * Items of a one-pass (async) iterable, drawn as they are needed, that can
 * be iterated again from the start: each iteration gives the items drawn so
 * far, then draws more. A stream retried after a failure sends every step
 * again this way, from a generator too.
 */
export class Replay<T> implements AsyncIterable<T> {
  private readonly source: AsyncIterator<T> | Iterator<T>;
  private readonly drawn: T[] = [];
  private exhausted = false;
  // The draw in progress, which iterations that catch up with it share.
  private drawing: Promise<void> | undefined;

  /** Replays `items`, drawn no further than some iteration asks. */
  constructor(items: AsyncIterable<T> | Iterable<T>) {
    this.source = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  }

  /** The items drawn so far, then the rest as they come. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (let index = 0; ; index++) {
      while (index === this.drawn.length) {
        if (this.exhausted) {
          return;
        }
        this.drawing ??= this.draw();
        await this.drawing;
      }
      yield this.drawn[index]!;
    }
  }

  /** Draws one more item from the source, or learns that it has none. */
  private async draw(): Promise<void> {
    try {
      const next = await this.source.next();
      if (next.done === true) {
        this.exhausted = true;
      } else {
        this.drawn.push(next.value);
      }
    } finally {
      this.drawing = undefined;
    }
  }
}
