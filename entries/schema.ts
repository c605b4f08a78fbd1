/**
 * `rxmcp/schema`: The protocol's data: JSON-RPC message types and guards, request ids, MCP's wire
 * types by method, protocol revisions and their negotiation, per-revision shaping, capabilities, the
 * modern era's `_meta` keys and headers, the lifecycle state machine, tool-name rules.
 */
export { toolNameIssues, TOOL_NAME_MAX_LENGTH } from '../lib/tool-names.ts'
export { metaKeyIssues, isReservedMetaKey } from '../lib/meta-keys.ts'
export type {
  JsonRpcRequest, JsonRpcNotification, JsonRpcResponse, JsonRpcResultResponse, JsonRpcErrorResponse, JsonRpcErrorObject,
  JsonRpcMessage, JsonRpcPayload,
} from '../lib/jsonrpc/message.ts'
export { checkMessage, isRequest, isNotification, isResponse, isJsonObject } from '../lib/jsonrpc/guards.ts'
export { createIdGenerator } from '../lib/jsonrpc/ids.ts'
export type { IdGenerator } from '../lib/jsonrpc/ids.ts'
export { stepLifecycle, gateIncomingRequest, canSendRequest } from '../lib/lifecycle.ts'
export type { LifecycleState, LifecycleEvent, Role } from '../lib/lifecycle.ts'
export { negotiateVersion, isVersionAccepted, Feature } from '../lib/schema/negotiate.ts'
export { shapeForRevision, shapeResult, FIELDS_SINCE } from '../lib/schema/shape.ts'
export type { ShapeKind } from '../lib/schema/shape.ts'
export { requiredCapability, hasCapability } from '../lib/schema/capabilities.ts'
export { LOGGING_LEVELS } from '../lib/schema/types.ts'
export type {
  ClientRequests, ServerRequests, ClientNotifications, ServerNotifications, ParamsArgument, RequestParams,
  RequestResult, NotificationParams, OtherMethod, ObjectJsonSchema, InferJsonSchema,
} from '../lib/schema/types.ts'
export {
  MODERN_PROTOCOL_VERSIONS, LATEST_MODERN_VERSION, isModernVersion, MetaKey, readModernMeta, encodeHeaderValue,
  decodeHeaderValue, headerParamsOf,
} from '../lib/schema/modern.ts'
export type { ModernMeta, HeaderParam, HeaderParams } from '../lib/schema/modern.ts'
