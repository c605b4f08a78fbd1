/**
 * `rxmcp/kernel`: What a transport writer or an embedder builds with: the connection (frames to
 * handlers and back), codecs, the stream operators, the actor kernel, handler outcomes, validators,
 * URI templates, rate-limit buckets.
 */
export { TokenBuckets, memoryRateLimiterStore } from '../lib/token-bucket.ts'
export type { TokenBucketOptions, TokenBucketState, RateLimiter } from '../lib/token-bucket.ts'
export { clientAddressKey } from '../lib/client-address.ts'
export { traceContextOf } from '../actors/context.ts'
export {
  createActor, createActorSystem, fromObservable, effect, NONE, isFinal, backoff, backoffDelay, canRetry, backoffTimer, retryWithBackoff, BACKOFF_DEFAULTS,
} from '../actors/actor.ts'
export type {
  ActorLogic, ActorSelf, ActorStatus, Address, ChildMessage, Effect, Snapshot, SpawnEffect, Step, Supervision,
  ActorInspectionEvent, ActorRef, ActorSystem, ActorSystemOptions, SpawnOptions, Backoff, BackoffOptions,
} from '../actors/actor.ts'
export { mapOutcome } from '../actors/request.ts'
export { createConnection, DEFAULT_REQUEST_TIMEOUT, DEFAULTS as CONNECTION_DEFAULTS } from '../lib/connection.ts'
export type { IncomingRequest, Connection, ConnectionOptions, RequestHandler, InspectionEvent } from '../lib/connection.ts'
export { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
export type { Codec, Decoder, DecoderOptions, Encode } from '../lib/codec/codec.ts'
export { STRUCTURE_DEFAULTS } from '../lib/codec/structure.ts'
export type { StructureLimits } from '../lib/codec/structure.ts'
export { jsonLines } from '../lib/codec/json-lines.ts'
export { json, decodeJsonFrame } from '../lib/codec/json.ts'
export { msgpack, encodeMsgpack, decodeMsgpackFrame, loadMsgpack, isMsgpackLoaded } from '../lib/codec/msgpack.ts'
export { encodeSseEvent, encodeSseComment, createSseParser } from '../lib/codec/sse.ts'
export type { SseEvent, SseParser } from '../lib/codec/sse.ts'
export { withTimeout } from '../lib/operators/with-timeout.ts'
export type { WithTimeoutConfig } from '../lib/operators/with-timeout.ts'
export { cancelOnUnsubscribe } from '../lib/operators/cancel-on-unsubscribe.ts'
export { untilAborted } from '../lib/operators/until-aborted.ts'
export { isResultEvent, isProgressEvent } from '../lib/operators/progress.ts'
export { paginate } from '../lib/operators/paginate.ts'
export type { Page } from '../lib/operators/paginate.ts'
export { applyDefaults, lazyValidator, loadJsonSchema, loadedJsonSchema, isObjectSchema, jsonSchemaSource, canGenerateCode } from '../lib/validator.ts'
export type { Validator, LazyValidator, ValidationResult, ValidationIssue, JsonSchemaCompiler, JsonSchemaSource, JsonSchemaValidatorOption } from '../lib/validator.ts'
export { isStandardSchema, validateStandard, standardJsonSchema } from '../lib/standard-schema.ts'
export type {
  StandardSchemaProps, StandardResult, StandardIssue, StandardValidateOptions, StandardJsonSchemaConverter,
  StandardJsonSchemaOptions, StandardVerdict,
} from '../lib/standard-schema.ts'
export { uriTemplate } from '../lib/uri-template.ts'
export type { UriTemplate } from '../lib/uri-template.ts'
