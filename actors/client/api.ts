import type { CallToolAsTaskOptions, ClientTasks, ToolTaskEvent } from './tasks.ts'
import type { TelemetryOptions } from '../../lib/request-observer.ts'
import type { ClientTaskOptions } from './task-requests.ts'
import type { ClientSkills } from './skills.ts'
import type { Observable, SchedulerLike } from '../../lib/rx.ts'
import type { Connection, InspectionEvent, RequestOptions } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { LifecycleState } from '../../lib/lifecycle.ts'
import type { ProgressEvent, RequestEvent } from '../../lib/operators/progress.ts'
import {
  LATEST_PROTOCOL_VERSION,
  type CallToolResult, type ClientCapabilities, type CompleteParams, type CompleteResult, type CreateMessageParams,
  type CreateMessageResult, type ElicitParams, type ElicitResult, type GetPromptResult, type Implementation,
  type InitializeResult, type ListPromptsResult, type ListResourceTemplatesResult, type ListResourcesResult,
  type ListToolsResult, type LoggingLevel, type Prompt, type ReadResourceResult, type Resource, type ResourceTemplate,
  type Root, type ServerCapabilities, type Tool, type ClientRequests, type ClientNotifications, type ServerNotifications,
  type ParamsArgument, type RequestParams, type RequestResult, type NotificationParams, type OtherMethod,
} from '../../lib/schema/types.ts'
import type { Era, RequestContext } from '../context.ts'
import type { ActorSystem } from '../actor.ts'
import type { BackoffOptions } from '../../lib/operators/retry-policy.ts'
import type { HandlerOutcome } from '../request.ts'
import type { JsonSchemaValidatorOption } from '../../lib/validator.ts'

/** Answers the server's `sampling/createMessage`. */
export type SamplingHandler = (params: CreateMessageParams, ctx: RequestContext) => HandlerOutcome<CreateMessageResult>

/** Answers the server's `elicitation/create` in one mode. */
export type ElicitationHandler = (params: ElicitParams, ctx: RequestContext) => HandlerOutcome<ElicitResult>

/** Options of {@link connect}. */
export interface ClientOptions {
  /** Capabilities to declare beyond those derived from the handlers given here. */
  capabilities?: ClientCapabilities
  /** Answers sampling requests; declares `sampling` (and `sampling.tools` with `samplingTools`). */
  sampling?: SamplingHandler
  /** Declare that the sampling handler accepts `tools` / `toolChoice` (MCP 2025-11-25). */
  samplingTools?: boolean
  /**
   * Answers elicitation requests, by mode; declares `elicitation.form` / `elicitation.url`. For form
   * mode, fields the user left out get the requested schema's defaults before the answer is sent.
   */
  elicitation?: { form?: ElicitationHandler; url?: ElicitationHandler }
  /**
   * The roots offered to the server; declares `roots` with `listChanged`. Each `uri` is a
   * `file://` URI (MCP roots: it MUST be one); `connect` rejects with a TypeError otherwise.
   */
  roots?: Root[]
  /**
   * Which generation of MCP to speak (default `'auto'`):
   * - `'auto'`: probe with `server/discover` (modern `_meta`); a discover result offering a modern
   *   revision this client speaks makes the client modern. A failure that is not a modern error
   *   (any JSON-RPC error but -32020/-32021/-32022, an HTTP 4xx without a modern error body, or no
   *   answer within `probeTimeout`) makes it fall back to the legacy initialize handshake.
   *   -32022 is answered by retrying with a revision from `data.supported`.
   * - `'modern'`: MCP 2026-07-28 only (discover, no fallback).
   * - `'legacy'`: the initialize handshake only (2024-11-05 … 2025-11-25), as before.
   */
  era?: ClientEra
  /** The version asked for in initialize (default: the latest legacy revision). */
  protocolVersion?: string
  /** Legacy versions this client accepts from the server in initialize (default: every supported legacy revision). */
  protocolVersions?: readonly string[]
  /** Modern revisions this client speaks, newest (preferred) first (default: MODERN_PROTOCOL_VERSIONS). */
  modernVersions?: readonly string[]
  /** `era: 'auto'`: how long the `server/discover` probe waits before taking the server as legacy, in ms (5 s). */
  probeTimeout?: number
  /**
   * Modern era: most `input_required` rounds one request may take (default 10). Each round's input
   * requests are answered by the `sampling` / `elicitation` / `roots` handlers given here; past the
   * bound the request fails with `InputRoundsExceededError`.
   */
  maxInputRounds?: number
  /**
   * Run the server's `sampling/createMessage` and `elicitation/create` as tasks when it asks
   * (`params.task`, MCP 2025-11-25): declares `tasks.requests` for the handlers given, answers
   * CreateTaskResult at once and the server's tasks/get, tasks/result, tasks/list, tasks/cancel.
   */
  tasks?: boolean | ClientTaskOptions
  /**
   * Keep cacheable results (server/discover, tools/list, prompts/list, resources/list,
   * resources/templates/list, resources/read) while their `ttlMs` says they are fresh; a
   * list_changed or resources/updated notification drops the matching entries. Off by default;
   * `true` keeps up to 500 entries. Time comes from `scheduler`.
   */
  cache?: boolean | { maxEntries?: number }
  /** Default request timeout in ms (60 s). */
  timeout?: number
  /**
   * Reconnection when the transport drops without `close()` (needs `connect` to be given a
   * function that makes a transport), by the one retry policy (`backoff`): each attempt waits
   * `initial` ms multiplied by `factor` per failure up to `max`, spread by `jitter` (on
   * `scheduler`), and starts a fresh session (the handshake again); after `retries` failed attempts
   * in a row the client closes (the count starts over once a session operates). Requests in flight
   * at the drop fail at once with `ConnectionClosedError` (never resent); requests subscribed
   * between sessions wait for the next one. Off by default. Defaults in RECONNECT_DEFAULTS (500 ms
   * doubling to 30 s, no jitter, 10 retries); a bad field is a RangeError from `connect`.
   */
  reconnect?: BackoffOptions
  /**
   * Where time runs (default: RxJS's async scheduler): the client's actor system, request
   * timeouts, reconnect backoff waits, the discover probe's timeout and the cache's clock. A virtual-time scheduler in
   * tests.
   */
  scheduler?: SchedulerLike
  /** Keep call-site stacks of requests for their timeout errors (see ConnectionOptions.captureStack). */
  captureStack?: boolean
  inspect?: (event: InspectionEvent) => void
  /**
   * OpenTelemetry traces and metrics by the MCP semantic conventions (README, Telemetry): a CLIENT
   * span per request with its context in `_meta` (`traceparent`, `tracestate`, `baggage`), so the
   * server's span continues the caller's trace. `true` uses the globally registered providers, or
   * name a `tracerProvider` and `meterProvider`. Needs the optional peer `@opentelemetry/api`,
   * loaded only when set (`connect` fails when it is missing). Default off.
   */
  telemetry?: boolean | TelemetryOptions
  /**
   * Where errors nobody observes go, and warnings: a `ToolNameWarning` for a listed tool whose name
   * breaks the MCP rules, a `ProgressWarning` when a sampling, elicitation or roots handler reports
   * progress that does not increase (default: nowhere).
   */
  reportUnhandledError?: (error: unknown) => void
  /**
   * The JSON Schema validator that checks tool results against the outputSchemas the server lists
   * (default `'auto'`: compiled where the runtime allows code generation, interpreted where it
   * refuses it; see {@link JsonSchemaValidatorOption}). Chosen when the client is made; it loads
   * when a listed tool first has an outputSchema.
   * @example
   * await connect(transport, info, { jsonSchemaValidator: 'interpreted' })
   */
  jsonSchemaValidator?: JsonSchemaValidatorOption
}

/** How {@link connect} chooses the generation of MCP (see `ClientOptions.era`). */
export type ClientEra = 'auto' | 'modern' | 'legacy'

/** DEFAULTS of {@link ClientOptions}. */
export const CLIENT_DEFAULTS = {
  protocolVersion: LATEST_PROTOCOL_VERSION, timeout: 60_000, era: 'auto', probeTimeout: 5_000, maxInputRounds: 10, cacheMaxEntries: 500, jsonSchemaValidator: 'auto',
} as const

/** Options of a tool call. */
export interface CallToolOptions extends RequestOptions {
  /** Receives progress reports (asks the server for progress). */
  onProgress?: (progress: ProgressEvent) => void
}

/** The client's view of the session. */
export interface ClientState {
  status: LifecycleState
  /** The era in use once the handshake chose it; undefined while it runs. */
  era: Era | undefined
  /** The negotiated legacy version, or the modern revision every request declares. */
  protocolVersion: string
  serverInfo?: Implementation
  serverCapabilities: ServerCapabilities
  instructions?: string
  roots: Root[]
  /** Modern era: the level `setLoggingLevel` chose, sent as `io.modelcontextprotocol/logLevel` with every request. */
  logLevel?: LoggingLevel
}

/**
 * A client session with one server: typed requests as Observables, with Promise forms on top.
 * @see connect
 */
export interface McpClient extends AsyncDisposable {
  /** The client's state (lifecycle, era, version, server, roots), as of the client actor's latest snapshot. */
  readonly state: ClientState
  /** The client's state now and at each change; completes when the client is closed. */
  readonly states: Observable<ClientState>
  /**
   * The client's actor system (on `ClientOptions.scheduler`): the client actor (`client:<name>/client`),
   * whose state `state` and `states` show. `system.inspect` shows its messages and transitions
   * as events (nothing is built while nobody subscribes).
   */
  readonly system: ActorSystem
  /**
   * `'modern'` (MCP 2026-07-28, stateless) or `'legacy'` (an initialized session), see
   * `ClientOptions.era`; undefined while a reconnect's handshake chooses again.
   */
  readonly era: Era | undefined
  readonly serverInfo: Implementation
  readonly serverCapabilities: ServerCapabilities
  readonly protocolVersion: string
  readonly instructions: string | undefined
  readonly connection: Connection
  /**
   * Any request, as a cold Observable of progress events and the result. A method of
   * {@link ClientRequests} has its params checked and its result typed:
   * `client.request('tools/call', { name: 'add', arguments: { a: 1 } })` emits `RequestEvent<CallToolResult>`.
   * Subscribing sends the request on the session live at that moment (so an Observable built
   * before a reconnect runs on the new session); unsubscribing before the result sends
   * `notifications/cancelled`.
   */
  request<M extends keyof ClientRequests>(method: M, ...args: [...ParamsArgument<RequestParams<ClientRequests, M>>, options?: RequestOptions]): Observable<RequestEvent<RequestResult<ClientRequests, M>>>
  /** Any other method: params are a `JsonObject`, and the result is `R` (an unchecked claim). */
  request<R extends JsonObject = JsonObject, M extends string = string>(method: OtherMethod<ClientRequests, M>, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>>
  /**
   * Sends a notification to the server; a method of {@link ClientNotifications} has its params
   * checked. Resolves once the transport took it; rejects with `ConnectionClosedError` after close.
   */
  notify<M extends keyof ClientNotifications>(method: M, ...args: ParamsArgument<ClientNotifications[M]>): Promise<void>
  notify<M extends string>(method: OtherMethod<ClientNotifications, M>, params?: JsonObject): Promise<void>
  /**
   * Notifications from the server, by method, as their params: typed for a method of
   * {@link ServerNotifications}. Hot; follows reconnects; completes when the client closes (at
   * once when subscribed after). `notifications/elicitation/complete` emits once per URL
   * elicitation the client was given (a URL-mode elicitation/create it took, or one a -32042 error
   * listed), and never for an id it was not given or heard completed already (MCP 2025-11-25:
   * clients MUST ignore those).
   */
  notifications<M extends keyof ServerNotifications>(method: M): Observable<NotificationParams<ServerNotifications, M>>
  notifications<P extends JsonObject = JsonObject, M extends string = string>(method: OtherMethod<ServerNotifications, M>): Observable<P>
  /**
   * Resolves when the server answers: `ping` in the legacy era; `server/discover` in the modern
   * era, where ping no longer exists.
   */
  ping(options?: RequestOptions): Promise<void>
  /**
   * The server's description: in the modern era a `server/discover` (served from the cache while
   * fresh), which also refreshes `serverInfo`, `serverCapabilities` and `instructions`; in the
   * legacy era what initialize returned, in the same shape.
   */
  discover(options?: RequestOptions): Promise<ServerDescription>
  /**
   * Change notifications as one stream. Emits `{ type: 'acknowledged', notifications }` first (the
   * part of `filter` the server agreed to honour), then `{ type: 'notification', method, params }`
   * for each list change or resource update asked for.
   *
   * Modern era: one `subscriptions/listen` request, its notifications matched by subscription id;
   * completes when the server ends it gracefully (or cancels it) and when the client closes;
   * errors when the request fails or the connection drops. Unsubscribing cancels the request
   * (closes its HTTP response stream; `notifications/cancelled` on other transports).
   *
   * With `reconnect`, a drop is not the end (in either era): the server keeps no subscription
   * across it, so the stream is asked again on the next connection (MCP 2026-07-28: on stdio the
   * client MUST send `subscriptions/listen` again), and a new `acknowledged` event follows; it
   * errors with `ConnectionClosedError` once reconnecting gives up.
   *
   * Legacy era: the session's own notifications, filtered: the acknowledgement keeps what the
   * server's capabilities offer (`listChanged`, `resources.subscribe`), `resourceSubscriptions`
   * are `resources/subscribe`d first and `resources/unsubscribe`d when unsubscribed.
   */
  listen(filter: SubscriptionFilter): Observable<ListenEvent>
  /** Every tool, across pages, fetched lazily. */
  tools(): Observable<Tool>
  listTools(cursor?: string, options?: RequestOptions): Promise<ListToolsResult>
  /**
   * Calls a tool; `structuredContent` is checked against the tool's outputSchema when the tool was
   * listed. Legacy era: a listed tool whose `execution.taskSupport` is "required", on a server that
   * declared `tasks.requests.tools.call`, is refused with `ToolTaskSupportError` and nothing is sent
   * (MCP 2025-11-25: it MUST be invoked as a task; use `callToolAsTask`).
   */
  callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult>
  /** A tool call as events: progress reports, then the result. Refuses as `callTool` does. */
  callTool$(name: string, args?: Record<string, unknown>, options?: RequestOptions): Observable<RequestEvent<CallToolResult>>
  /**
   * Calls a tool as a task (MCP tasks: 2025-11-25 `params.task`, or the 2026-07-28 extension
   * declared for this request): the task as it changes (`{ type: 'task' }`), polled at its
   * `pollIntervalMs` (legacy status notifications end a wait sooner), then `{ type: 'result' }`.
   * A server that runs the call at once gives the result alone. Modern input requests inside the
   * task are answered by the client's sampling / elicitation / roots handlers, once per key.
   * Errors with the task's JSON-RPC error, or TaskCancelledError. Unsubscribing stops following
   * but does NOT cancel the task, which lives in the server: `tasks.cancel(taskId)` does (the
   * first event carries the id); `tasks.result(taskId)` picks it up again, from any connection of
   * the same owner.
   *
   * Legacy era (MCP 2025-11-25 tool-level negotiation), refused before anything is sent: with
   * `CapabilityError` when the server did not declare `tasks.requests.tools.call`, with
   * `ToolTaskSupportError` when the tool, as last listed, has `execution.taskSupport` "forbidden"
   * or none. A tool not listed (since the last `notifications/tools/list_changed` or reconnection)
   * is sent, and the server decides; so it is in the modern era, which has no per-tool task support.
   */
  callToolAsTask(name: string, args?: Record<string, unknown>, options?: CallToolAsTaskOptions): Observable<ToolTaskEvent>
  /** {@link McpClient.callToolAsTask} as a Promise of the tool's result. */
  callToolAsTaskResult(name: string, args?: Record<string, unknown>, options?: CallToolAsTaskOptions): Promise<CallToolResult>
  /** Tasks by id: get, list (legacy), cancel, and the result once it ends. */
  readonly tasks: ClientTasks
  /** The skills extension (SEP-2640): list skills, and load one only when asked, verified. */
  readonly skills: ClientSkills
  resources(): Observable<Resource>
  listResources(cursor?: string, options?: RequestOptions): Promise<ListResourcesResult>
  resourceTemplates(): Observable<ResourceTemplate>
  listResourceTemplates(cursor?: string, options?: RequestOptions): Promise<ListResourceTemplatesResult>
  readResource(uri: string, options?: RequestOptions): Promise<ReadResourceResult>
  subscribeResource(uri: string, options?: RequestOptions): Promise<void>
  unsubscribeResource(uri: string, options?: RequestOptions): Promise<void>
  prompts(): Observable<Prompt>
  listPrompts(cursor?: string, options?: RequestOptions): Promise<ListPromptsResult>
  getPrompt(name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult>
  complete(params: CompleteParams, options?: RequestOptions): Promise<CompleteResult>
  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<void>
  /**
   * Replaces the roots and tells the server (`notifications/roots/list_changed`).
   * @throws TypeError when a root's `uri` is not a `file://` URI (MCP roots), changing nothing.
   */
  setRoots(roots: Root[]): void
  readonly closed: Promise<void>
  close(): Promise<void>
}

/** What a client may ask `subscriptions/listen` for (MCP 2026-07-28 SubscriptionFilter). */
export interface SubscriptionFilter {
  toolsListChanged?: boolean
  promptsListChanged?: boolean
  resourcesListChanged?: boolean
  resourceSubscriptions?: string[]
}

/** What {@link McpClient.listen} emits: the acknowledgement first, then notifications. */
export type ListenEvent =
  | { type: 'acknowledged'; notifications: SubscriptionFilter }
  | { type: 'notification'; method: string; params: JsonObject }

/** What `server/discover` tells (modern era), or the same read from initialize (legacy era). */
export interface ServerDescription {
  supportedVersions: string[]
  capabilities: ServerCapabilities
  serverInfo: Implementation | undefined
  instructions: string | undefined
}

/** What the client actor takes (see clientLogic in actors/client/state.ts). */
export type ClientMessage =
  | { type: 'initialize' }
  | { type: 'initialized'; result: InitializeResult }
  | { type: 'discovered'; version: string; description: ServerDescription }
  | { type: 'version'; version: string }
  | { type: 'logLevel'; level: LoggingLevel }
  | { type: 'roots'; roots: Root[] }
  | { type: 'reconnecting' }
  | { type: 'closed' }
