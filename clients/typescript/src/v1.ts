/**
 * Every message, enum and service of Engram's API (`engram.v1`), as
 * protobuf-es generates them from proto/engram/v1: `import { MemorySchema,
 * RevisionAction } from "engram-client/v1"`. Build messages with `create`
 * from `@bufbuild/protobuf`, or pass their fields as plain objects.
 *
 * @module
 */

export * from "./gen/engram/v1/common_pb.js";
export * from "./gen/engram/v1/learning_pb.js";
export * from "./gen/engram/v1/memory_pb.js";
export * from "./gen/engram/v1/policy_pb.js";
