/**
 * Which calls may be sent again after UNAVAILABLE, as the Rust client and
 * the Python package decide. test/repeat.test.ts compares this table with
 * the Python package's (REPEAT in clients/python/generate.py), so the
 * clients cannot drift apart.
 *
 * @module
 */

/**
 * Whether a failed call may be sent again after UNAVAILABLE:
 *
 * - `"safe"`: it only reads;
 * - `"request_id"`: a create that the server answers once per `request_id`,
 *   so safe only when the request carries one;
 * - `"never"`: it could act twice;
 * - `"stream"`: StreamSteps, whose steps may be sent again (a step with the
 *   content of a stored one is acknowledged as stored);
 * - `"raw"`: a server stream, which `MemoryClient.watch` resumes from its
 *   cursor instead.
 *
 * Whatever the kind, a call the server shed (RESOURCE_EXHAUSTED with a retry
 * delay) is sent again: it was refused unread.
 */
export type RepeatKind = "safe" | "request_id" | "never" | "stream" | "raw";

/**
 * Every RPC of every service by its name in the `.proto` files, with
 * whether it may be repeated. A new RPC must be added here (and in the
 * Python package) before the client calls it with retries.
 */
export const REPEAT: Readonly<Record<string, Readonly<Record<string, RepeatKind>>>> = {
  MemoryService: {
    CreateMemory: "request_id",
    BatchCreateMemories: "request_id",
    GetMemory: "safe",
    ExplainMemory: "safe",
    UpdateMemory: "never",
    DeleteMemory: "never",
    ListMemories: "safe",
    ListMemoryRevisions: "safe",
    SearchMemories: "safe",
    BuildContext: "safe",
    StartEpisode: "request_id",
    AppendSteps: "never",
    StreamSteps: "stream",
    WatchMemories: "raw",
    CompleteEpisode: "never",
    GetEpisode: "safe",
    ListEpisodes: "safe",
    ListEntities: "safe",
    GetEntity: "safe",
    MergeEntities: "never",
  },
  LearningService: {
    RecordOutcome: "request_id",
    ListOutcomes: "safe",
    ListHeuristics: "safe",
    ListAntiPatterns: "safe",
    RecordMistake: "request_id",
    ListMistakeCards: "safe",
    ListTaskRules: "safe",
    SetAgentScope: "never",
    GetAgentScope: "safe",
    Consolidate: "never",
    Forget: "never",
    GetStats: "safe",
  },
  PolicyService: {
    Classify: "safe",
    Remember: "request_id",
  },
};

/**
 * Whether a unary `request` of RPC `rpc` of `service` may be sent again
 * after UNAVAILABLE: reads always, creates when they carry a `request_id`.
 * Throws for an RPC the table does not name.
 */
export function mayRepeat(service: string, rpc: string, request: { requestId?: unknown }): boolean {
  const kind = REPEAT[service]?.[rpc];
  switch (kind) {
    case "safe":
    case "stream":
      return true;
    case "request_id":
      return typeof request.requestId === "string" && request.requestId !== "";
    case "never":
    case "raw":
      return false;
    default:
      throw new Error(`engram-client: the retry table (src/repeat.ts) does not name ${service}.${rpc}`);
  }
}
