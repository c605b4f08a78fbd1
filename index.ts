/**
 * rxmcp: the Model Context Protocol as RxJS pipelines and actors. This is the public list.
 */
export { createServer, SERVER_DEFAULTS } from './actors/server.ts'
export type {
  McpServer, ServerSession, ServerContext, ServerOptions, SessionState, ToolDefinition, ToolHandler, MethodHandler, ResourceDefinition,
  ResourceHandler, ResourceTemplateDefinition, TemplateHandler, PromptDefinition, PromptHandler, Completer, Registration,
  ReadOutcome, SubscriptionState, SubscriptionMessage, InputOptions, CacheHint, ToolInputSchema, ToolOutputSchema, ObjectStandardSchema, StructuredToolResult,
  ToolResultFor, ServerEvent, ServerTaskOptions, TaskHandle, MethodOptions, McpRequest, McpHandler, Middleware, EventBus,
} from './actors/server.ts'
export { requireScopes, permissions, permissionOf, grants, OPEN_METHODS, rateLimit, audit } from './actors/server/middleware.ts'
export type { PermissionPolicy, RateLimitOptions, AuditEntry } from './actors/server/middleware.ts'
export { principalKey, missingScopes, impliedScopes, withImpliedScopes, operationScopes, targetOf, authorizeMessage, PrincipalKind } from './lib/auth.ts'
export type { Principal, ScopeHierarchy, ScopeRules, Authenticator, AuthRequest, AuthAnswer, AuthOutcome, AuthRefusal, MessageAuthorization } from './lib/auth.ts'
export { credentialContext, isAuthorizationContextSource, ANONYMOUS_CONTEXT } from './lib/authorization-context.ts'
export type { AuthorizationContext, AuthorizationContextSource } from './lib/authorization-context.ts'
export { TokenBuckets, memoryRateLimiterStore, createMemoryRateLimiterStore } from './lib/token-bucket.ts'
export type { TokenBucketOptions, TokenBucketState, RateLimiter, RateLimiterStore } from './lib/token-bucket.ts'
export { TASKS_EXTENSION, SERVER_TASKS_DEFAULTS, TooManyRunningTasksError, TOO_MANY_RUNNING_TASKS_ERROR_CODE } from './actors/server/tasks.ts'
export { clientAddressKey } from './lib/client-address.ts'
export {
  RELATED_TASK_META, withRelatedTask, settledAnswer, createTask, stepTask, canTransition, isTerminalStatus, taskToWire, taskToModernWire, TaskTransitionError, TaskExpiredError,
  TASK_DEFAULTS, TERMINAL_STATUSES, TASK_TRANSITION_ERROR_CODE, TASK_EXPIRED_ERROR_CODE,
} from './actors/tasks/task.ts'
export type { TaskState, TaskMessage, TaskOptions, TaskRef } from './actors/tasks/task.ts'
export { createMemoryTaskStore, MEMORY_TASK_STORE_DEFAULTS, TaskStoreFullError, TASK_STORE_FULL_ERROR_CODE, randomTaskId } from './actors/tasks/store.ts'
export type { TaskStore, TaskCreate, TaskPage, MemoryTaskStoreOptions, TaskStoreLimits } from './actors/tasks/store.ts'
export { connect, CLIENT_DEFAULTS, RECONNECT_DEFAULTS, InputRoundsExceededError, InvalidResultError, InvalidToolError, NoCommonVersionError, ToolTaskSupportError } from './actors/client.ts'
export type {
  McpClient, ClientOptions, ClientState, CallToolOptions, SamplingHandler, ElicitationHandler, ClientEra, ListenEvent,
  ServerDescription, SubscriptionFilter, CallToolAsTaskOptions, TaskInfo, ToolTaskEvent,
} from './actors/client.ts'
export { ClientTasks, TASK_POLL_DEFAULTS, readTask } from './actors/client.ts'
export type { ClientTaskOptions } from './actors/client/task-requests.ts'
export { ClientSkills } from './actors/client.ts'
export type { LoadedSkill, SkillFile } from './actors/client.ts'
export { serveSkills } from './actors/server/skills.ts'
export type { ServeSkillsOptions, ServedSkills } from './actors/server/skills.ts'
export { skillsDirectory, readSkills } from './transports/skills-directory.ts'
export type { SkillsDirectoryOptions } from './transports/skills-directory.ts'
export {
  SKILLS_EXTENSION, SKILL_MANIFEST, SKILL_LIMITS, SKILL_NAME, SkillVerificationError, sha256Digest, checkSkillEntry, verifySkillFile,
  readSkillEntry, skillNameOf, skillRootOf,
} from './lib/skills.ts'
export type { SkillEntry, SkillResource, SkillFolder, SkillProblem } from './lib/skills.ts'
export { readFrontmatter, parseYamlBlock } from './lib/frontmatter.ts'
export type { Frontmatter } from './lib/frontmatter.ts'
export { traceContextOf } from './actors/context.ts'
export type { RequestContext, Era, TraceContext } from './actors/context.ts'
export { createActor, withEffects } from './actors/actor.ts'
export type { ActorRef, ActorOptions, Behaviour, Step, Effect, SupervisionStrategy, ActorInspectionEvent } from './actors/actor.ts'
export { mapOutcome } from './actors/request.ts'
export type { HandlerOutcome } from './actors/request.ts'

export { createConnection, DEFAULT_REQUEST_TIMEOUT, DEFAULTS as CONNECTION_DEFAULTS } from './lib/connection.ts'
export type { IncomingRequest } from './lib/connection.ts'
export type { Connection, ConnectionOptions, RequestOptions, RequestHandler, InspectionEvent } from './lib/connection.ts'
export type { Transport, TransportServer, Inbound, SendOptions, HeaderSource, RequestInfo } from './lib/transport.ts'
export type { Codec, Decoder, DecoderOptions, Encode } from './lib/codec/codec.ts'
export { STRUCTURE_DEFAULTS } from './lib/codec/structure.ts'
export type { StructureLimits } from './lib/codec/structure.ts'
export { DEFAULT_MAX_MESSAGE_SIZE } from './lib/codec/codec.ts'
export { jsonLines } from './lib/codec/json-lines.ts'
export { json, decodeJsonFrame } from './lib/codec/json.ts'
export { msgpack, encodeMsgpack, decodeMsgpackFrame, loadMsgpack, isMsgpackLoaded } from './lib/codec/msgpack.ts'
export { encodeSseEvent, encodeSseComment, createSseParser } from './lib/codec/sse.ts'
export type { SseEvent, SseParser } from './lib/codec/sse.ts'
export {
  ErrorCode, LocalErrorCode, McpError, ParseError, InvalidRequestError, MethodNotFoundError, InvalidParamsError,
  InternalError, ResourceNotFoundError, UrlElicitationRequiredError, HeaderMismatchError, MissingRequiredClientCapabilityError,
  UnsupportedProtocolVersionError, ForbiddenError, RateLimitedError, LocalError, TimeoutError, CancelledError, TaskCancelledError,
  ConnectionClosedError, TransportError, HttpStatusError, ResponseLostError, FrameTooLargeError, CapabilityError, ProtocolError, UnsupportedVersionError,
  StructureLimitError, ElicitationContentError, RXMCP_ERROR_CODE_RANGE, LegacyErrorCode,
} from './lib/jsonrpc/errors.ts'
export type { StructureBound, UrlElicitationRequiredData } from './lib/jsonrpc/errors.ts'
export { ToolNameWarning, toolNameIssues, TOOL_NAME_MAX_LENGTH } from './lib/tool-names.ts'
export { metaKeyIssues, isReservedMetaKey } from './lib/meta-keys.ts'
export { memoryRequestStateStore, REQUEST_STATE_STORE_DEFAULTS } from './actors/server/request-state.ts'
export type { RequestStateStore } from './actors/server/request-state.ts'
export type { FrameTooLargeDetails } from './lib/jsonrpc/errors.ts'
export { UnauthorizedError } from './lib/unauthorized-error.ts'
export type { Challenge } from './lib/www-authenticate.ts'
export type {
  RequestId, ProgressToken, Meta, JsonObject, JsonRpcRequest, JsonRpcNotification, JsonRpcResponse, JsonRpcResultResponse,
  JsonRpcErrorResponse, JsonRpcErrorObject, JsonRpcMessage, JsonRpcPayload,
} from './lib/jsonrpc/message.ts'
export { checkMessage, isRequest, isNotification, isResponse, isJsonObject } from './lib/jsonrpc/guards.ts'
export { createIdGenerator } from './lib/jsonrpc/ids.ts'
export type { IdGenerator } from './lib/jsonrpc/ids.ts'
export { stepLifecycle, gateIncomingRequest, canSendRequest } from './lib/lifecycle.ts'
export type { LifecycleState, LifecycleEvent, Role } from './lib/lifecycle.ts'
export { negotiateVersion, isVersionAccepted, Feature } from './lib/schema/negotiate.ts'
export { shapeForRevision, shapeResult, FIELDS_SINCE } from './lib/schema/shape.ts'
export type { ShapeKind } from './lib/schema/shape.ts'
export { requiredCapability, hasCapability } from './lib/schema/capabilities.ts'
export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, LOGGING_LEVELS } from './lib/schema/types.ts'
export {
  MODERN_PROTOCOL_VERSIONS, LATEST_MODERN_VERSION, isModernVersion, MetaKey, readModernMeta, encodeHeaderValue, decodeHeaderValue,
  headerParamsOf,
} from './lib/schema/modern.ts'
export type { ModernMeta, HeaderParam, HeaderParams } from './lib/schema/modern.ts'
export type {
  ClientRequests, ServerRequests, ClientNotifications, ServerNotifications, ParamsArgument, RequestParams, RequestResult,
  NotificationParams, OtherMethod, ObjectJsonSchema, InferJsonSchema,
} from './lib/schema/types.ts'
export { withTimeout } from './lib/operators/with-timeout.ts'
export type { WithTimeoutConfig } from './lib/operators/with-timeout.ts'
export { cancelOnUnsubscribe } from './lib/operators/cancel-on-unsubscribe.ts'
export { resultOf, progressOf, isResultEvent, isProgressEvent, ProgressWarning } from './lib/operators/progress.ts'
export type { RequestEvent, ProgressEvent, ResultEvent } from './lib/operators/progress.ts'
export { paginate } from './lib/operators/paginate.ts'
export type { Page } from './lib/operators/paginate.ts'
export { applyDefaults, lazyValidator, loadJsonSchema, isObjectSchema } from './lib/validator.ts'
export type { Validator, LazyValidator, ValidationResult, ValidationIssue, JsonSchemaCompiler } from './lib/validator.ts'
export { isStandardSchema, validateStandard, standardJsonSchema } from './lib/standard-schema.ts'
export type {
  StandardSchemaV1, StandardSchemaProps, StandardResult, StandardIssue, StandardValidateOptions, StandardJsonSchemaConverter,
  StandardJsonSchemaOptions, StandardVerdict, InferInput, InferOutput,
} from './lib/standard-schema.ts'
export { uriTemplate } from './lib/uri-template.ts'
export type { UriTemplate } from './lib/uri-template.ts'

export { stdio, stdioClient, STDIO_DEFAULTS } from './transports/stdio.ts'
export type { StdioOptions, StdioClientOptions, StdioClientTransport } from './transports/stdio.ts'
export { streamableHttp, STREAMABLE_HTTP_DEFAULTS } from './transports/streamable-http.ts'
export type { StreamableHttpServer, StreamableHttpOptions } from './transports/streamable-http.ts'
export { streamableHttpClient, sseClient, httpClient, HTTP_CLIENT_DEFAULTS } from './transports/http-client.ts'
export type { HttpClientOptions, HttpClientTransport } from './transports/http-client.ts'
export { createMemoryEventStore, MEMORY_EVENT_STORE_DEFAULTS } from './transports/event-store.ts'
export { websocket, WEBSOCKET_DEFAULTS } from './transports/websocket.ts'
export type { McpWebSocketServer, WebSocketServerOptions } from './transports/websocket.ts'
export { websocketClient, WS_SUBPROTOCOL, WEBSOCKET_CLIENT_DEFAULTS } from './transports/websocket-client.ts'
export type { WebSocketClientOptions, WebSocketConstructor, WebSocketLike } from './transports/websocket-client.ts'
export { bridge, bridgeChild, shareUpstream, isLoopbackHost, BRIDGE_DEFAULTS, SHARED_UPSTREAM_DEFAULTS } from './transports/bridge.ts'
export type { Bridge, BridgeOptions, BridgeChildOptions, SharedUpstream, SharedUpstreamOptions } from './transports/bridge.ts'
export type { EventStore, MemoryEventStoreOptions, MemoryEventStore, MemoryEventStoreStats, StoredEventContext } from './transports/event-store.ts'
export { createMemoryPair } from './transports/memory.ts'
export type { MemoryTransport, MemoryPairOptions } from './transports/memory.ts'
