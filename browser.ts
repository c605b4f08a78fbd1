/**
 * rxmcp for browsers, workers and edge runtimes: the part of the public list that imports nothing
 * Node-only (no `node:*`, no `ws`), so a bundler (esbuild, Vite) ships it to a page as it is.
 *
 * It has the client (`connect`, the Streamable HTTP, legacy SSE and WebSocket client transports),
 * the operators, codecs and errors, the server core (`createServer`) for in-page use over
 * `createMemoryPair`, and the actor kernel. Listening transports that open ports (stdio, the
 * Streamable HTTP server, the WebSocket server) are only in the main entry.
 *
 * @example
 * import { connect, streamableHttpClient } from 'rxmcp/browser'
 * const client = await connect(streamableHttpClient(new URL('/mcp', location.href)), { name: 'page', version: '1' })
 */
export { connect, CLIENT_DEFAULTS, RECONNECT_DEFAULTS, InputRoundsExceededError, InvalidResultError, InvalidToolError, NoCommonVersionError, ToolTaskSupportError } from './actors/client.ts'
export type {
  McpClient, ClientOptions, ClientState, CallToolOptions, SamplingHandler, ElicitationHandler, ClientEra, ListenEvent,
  ServerDescription, SubscriptionFilter,
} from './actors/client.ts'
export { createServer, SERVER_DEFAULTS } from './actors/server.ts'
export type {
  McpServer, ServerSession, ServerContext, ServerOptions, SessionState, ToolDefinition, ToolHandler, ResourceDefinition,
  ResourceHandler, ResourceTemplateDefinition, TemplateHandler, PromptDefinition, PromptHandler, Completer, Registration,
  ReadOutcome, SubscriptionState, SubscriptionMessage, InputOptions, CacheHint,
} from './actors/server.ts'
export type { RequestContext, Era } from './actors/context.ts'
export { createActor, withEffects } from './actors/actor.ts'
export type { ActorRef, ActorOptions, Behaviour, Step, Effect, SupervisionStrategy, ActorInspectionEvent } from './actors/actor.ts'
export { mapOutcome } from './actors/request.ts'
export type { HandlerOutcome } from './actors/request.ts'

export { createConnection, DEFAULT_REQUEST_TIMEOUT } from './lib/connection.ts'
export type { Connection, ConnectionOptions, RequestOptions, RequestHandler, InspectionEvent, IncomingRequest } from './lib/connection.ts'
export type { Transport, TransportServer, Inbound, SendOptions, HeaderSource, RequestInfo } from './lib/transport.ts'
export type { Codec, Decoder, DecoderOptions, Encode } from './lib/codec/codec.ts'
export { STRUCTURE_DEFAULTS } from './lib/codec/structure.ts'
export type { StructureLimits } from './lib/codec/structure.ts'
export { DEFAULT_MAX_MESSAGE_SIZE } from './lib/codec/codec.ts'
export { json, decodeJsonFrame } from './lib/codec/json.ts'
export { msgpack, encodeMsgpack, decodeMsgpackFrame, loadMsgpack, isMsgpackLoaded } from './lib/codec/msgpack.ts'
export { encodeSseEvent, encodeSseComment, createSseParser } from './lib/codec/sse.ts'
export type { SseEvent, SseParser } from './lib/codec/sse.ts'
export {
  ErrorCode, LocalErrorCode, McpError, ParseError, InvalidRequestError, MethodNotFoundError, InvalidParamsError,
  InternalError, ResourceNotFoundError, UrlElicitationRequiredError, HeaderMismatchError, MissingRequiredClientCapabilityError,
  UnsupportedProtocolVersionError, LocalError, TimeoutError, CancelledError,
  ConnectionClosedError, TransportError, HttpStatusError, ResponseLostError, FrameTooLargeError, CapabilityError, ProtocolError, UnsupportedVersionError,
  StructureLimitError, ElicitationContentError,
} from './lib/jsonrpc/errors.ts'
export type { StructureBound } from './lib/jsonrpc/errors.ts'
export { ToolNameWarning, toolNameIssues, TOOL_NAME_MAX_LENGTH } from './lib/tool-names.ts'
export { memoryRequestStateStore, REQUEST_STATE_STORE_DEFAULTS } from './actors/server/request-state.ts'
export type { RequestStateStore } from './actors/server/request-state.ts'
export type {
  RequestId, ProgressToken, Meta, JsonObject, JsonRpcRequest, JsonRpcNotification, JsonRpcResponse, JsonRpcResultResponse,
  JsonRpcErrorResponse, JsonRpcErrorObject, JsonRpcMessage, JsonRpcPayload,
} from './lib/jsonrpc/message.ts'
export { checkMessage, isRequest, isNotification, isResponse, isJsonObject } from './lib/jsonrpc/guards.ts'
export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, LOGGING_LEVELS } from './lib/schema/types.ts'
export { withTimeout } from './lib/operators/with-timeout.ts'
export type { WithTimeoutConfig } from './lib/operators/with-timeout.ts'
export { cancelOnUnsubscribe } from './lib/operators/cancel-on-unsubscribe.ts'
export { resultOf, progressOf, isResultEvent, isProgressEvent } from './lib/operators/progress.ts'
export type { RequestEvent, ProgressEvent, ResultEvent } from './lib/operators/progress.ts'
export { paginate } from './lib/operators/paginate.ts'
export type { Page } from './lib/operators/paginate.ts'

export { streamableHttpClient, sseClient, httpClient, HTTP_CLIENT_DEFAULTS } from './transports/http-client.ts'
export type { HttpClientOptions, HttpClientTransport } from './transports/http-client.ts'
export { websocketClient, WS_SUBPROTOCOL, WEBSOCKET_CLIENT_DEFAULTS } from './transports/websocket-client.ts'
export type { WebSocketClientOptions, WebSocketConstructor, WebSocketLike } from './transports/websocket-client.ts'
export { createMemoryPair } from './transports/memory.ts'
export type { MemoryTransport, MemoryPairOptions } from './transports/memory.ts'
