/**
 * The `google.rpc` error details the server attaches to a failed call
 * (`BadRequest`, `RetryInfo`, ...), for `EngramError.detail`:
 * `error.detail(RetryInfoSchema)`.
 *
 * @module
 */

export * from "./gen/google/rpc/error_details_pb.js";
