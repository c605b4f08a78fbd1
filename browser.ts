/**
 * rxmcp for browsers, workers and edge runtimes: the root list (`rxmcp`) without the names whose
 * modules load something Node-only (`node:*`, `ws`) when used, so a bundler (esbuild, Vite) ships
 * it to a page as it is. spec/layout/public-surface.spec.ts derives that set from the import graph
 * and checks this list against it.
 *
 * It has the client (`connect`, the Streamable HTTP, legacy SSE and WebSocket client transports),
 * the server core (`createServer`) for in-page use over `createMemoryPair`, the errors, and the
 * Streamable HTTP listener's factory (it loads `node:http` only when it listens). stdio and the
 * WebSocket server are only in the main entry.
 *
 * @example
 * import { connect, streamableHttpClient } from 'rxmcp/browser'
 * const client = await connect(streamableHttpClient(new URL('/mcp', location.href)), { name: 'page', version: '1' })
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
export { streamableHttp } from './transports/streamable-http.ts'
export type { StreamableHttpServer, StreamableHttpOptions } from './transports/streamable-http.ts'
export { webHandler } from './transports/http-handler.ts'
export { streamableHttpClient, sseClient, httpClient } from './transports/http-client.ts'
export type { HttpClientOptions } from './transports/http-client.ts'
export { websocketClient } from './transports/websocket-client.ts'
export type { WebSocketClientOptions } from './transports/websocket-client.ts'
export { createMemoryPair } from './transports/memory.ts'
