/**
 * rxmcp: the Model Context Protocol as RxJS pipelines and actors. This is the public list: what an
 * application writes code against (servers, clients, transports, handler and context types, the
 * errors it catches). The rest sits behind subpaths: `rxmcp/server` and `rxmcp/client` (every
 * option and default), `rxmcp/errors` (every error class and code), `rxmcp/tasks`, `rxmcp/skills`,
 * `rxmcp/schema` (wire types, guards, negotiation), `rxmcp/kernel` (connection, codecs, operators,
 * actors: for transport writers and embedders), `rxmcp/auth`, `rxmcp/transports/*`, `rxmcp/host`.
 * `rxmcp/browser` is this list without what needs Node (spec/layout/public-surface.spec.ts checks
 * both the count and that rule).
 */
export { createServer } from './actors/server.ts'
export type {
  McpServer, ServerSession, ServerContext, ServerOptions, ToolDefinition, ToolHandler, MethodHandler,
  ResourceDefinition, ResourceHandler, ResourceTemplateDefinition, TemplateHandler, PromptDefinition, PromptHandler,
  Completer, Registration, ReadOutcome, InputOptions, CacheHint, ToolInputSchema, ToolOutputSchema,
  StructuredToolResult, ToolResultFor, ServerEvent, ServerTaskOptions, TaskHandle, MethodOptions, McpRequest,
  McpHandler, Middleware, EventBus,
} from './actors/server.ts'
export { requireScopes, permissions, permissionOf, grants, OPEN_METHODS, rateLimit, audit } from './actors/server/middleware.ts'
export type { PermissionPolicy, RateLimitOptions, AuditEntry } from './actors/server/middleware.ts'
export type { Principal, Authenticator } from './lib/auth.ts'
export { createMemoryRateLimiterStore } from './lib/token-bucket.ts'
export type { RateLimiterStore } from './lib/token-bucket.ts'
export { createMemoryTaskStore } from './actors/tasks/store.ts'
export type { TaskStore } from './actors/tasks/store.ts'
export { connect } from './actors/client.ts'
export type {
  McpClient, ClientOptions, ClientState, CallToolOptions, SamplingHandler, ElicitationHandler, ClientEra, ListenEvent,
  ServerDescription, SubscriptionFilter,
} from './actors/client.ts'
export type { RequestContext, Era, TraceContext } from './actors/context.ts'
export type { HandlerOutcome } from './actors/request.ts'
export type { RequestOptions } from './lib/connection.ts'
export type { Transport, TransportServer, Inbound, Envelope, ResponseStream, Reply, ReplyEnvelope, SendOptions, RequestInfo } from './lib/transport.ts'
export {
  ErrorCode, McpError, MethodNotFoundError, InvalidParamsError, InternalError, ResourceNotFoundError,
  UrlElicitationRequiredError, ForbiddenError, RateLimitedError, TimeoutError, CancelledError, ConnectionClosedError,
  TransportError, HttpStatusError, CapabilityError,
} from './lib/jsonrpc/errors.ts'
export { UnauthorizedError } from './lib/unauthorized-error.ts'
export type { RequestId, ProgressToken, Meta, JsonObject } from './lib/jsonrpc/message.ts'
export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from './lib/schema/types.ts'
export { resultOf, progressOf } from './lib/operators/progress.ts'
export type { RequestEvent, ProgressEvent, ResultEvent } from './lib/operators/progress.ts'
export type { StandardSchemaV1, InferInput, InferOutput } from './lib/standard-schema.ts'
export { stdio, stdioClient } from './transports/stdio.ts'
export type { StdioOptions, StdioClientOptions } from './transports/stdio.ts'
export { streamableHttp } from './transports/streamable-http.ts'
export type { StreamableHttpServer, StreamableHttpOptions } from './transports/streamable-http.ts'
export { webHandler } from './transports/http-handler.ts'
export { streamableHttpClient, sseClient, httpClient } from './transports/http-client.ts'
export type { HttpClientOptions } from './transports/http-client.ts'
export { websocket } from './transports/websocket.ts'
export type { McpWebSocketServer, WebSocketServerOptions } from './transports/websocket.ts'
export { websocketClient } from './transports/websocket-client.ts'
export type { WebSocketClientOptions } from './transports/websocket-client.ts'
export { createMemoryPair } from './transports/memory.ts'
