import type { ServerEvent } from '../../lib/events.ts'
import type { Observable } from '../../lib/rx.ts'
import type { Connection, RequestOptions } from '../../lib/connection.ts'
import type { DrainOptions, Transport, TransportServer } from '../../lib/transport.ts'
import type { RegistryHealth } from './registry-sync.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { LifecycleState } from '../../lib/lifecycle.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import type { InferInput, InferOutput, StandardSchemaV1 } from '../../lib/standard-schema.ts'
import type {
  CallToolResult, ClientCapabilities, CompleteResult, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, GetPromptResult, Icon, Implementation, ListRootsResult, LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool, ToolAnnotations, ServerRequests, ServerNotifications, ClientNotifications, ParamsArgument, RequestParams, RequestResult, NotificationParams, OtherMethod, ObjectJsonSchema, InferJsonSchema,
} from '../../lib/schema/types.ts'
import type { ActorSystem } from '../actor.ts'
import type { RequestContext } from '../context.ts'
import type { HandlerOutcome } from '../request.ts'
import type { Mount, Mountable, MountOptions } from './mountable.ts'


/*
 * The server's public types and defaults: a leaf of actors/server/, so the server's parts import
 * them without importing the server (actors/server.ts re-exports them with createServer).
 */

/** The state of one resources/subscribe's actor (a child of its session): its URI, the updates it passed on. */
export interface SubscriptionState { readonly uri: string; readonly updates: number }
/** What a subscription actor hears: its resource changed. */
export type SubscriptionMessage = { readonly type: 'updated' }


/** The context a server handler receives: the request's, plus the session and requests back to the client. */
export interface ServerContext extends RequestContext {
  /**
   * The legacy session the request arrived on; undefined for a request that belongs to no session
   * (every modern-era request over Streamable HTTP; a modern request on a stdio or WebSocket
   * connection is served on that connection's session).
   */
  readonly session: ServerSession | undefined
  /** The client's declared capabilities (from initialize, or from `_meta` in the modern era). */
  readonly clientCapabilities: ClientCapabilities
  /** The client's name and version, as it gave them in initialize. */
  readonly clientInfo: Implementation | undefined
  /** The least severe level `log()` sends now (`logging/setLevel`, else the server's default). */
  readonly logLevel: LoggingLevel
  /** Sends `notifications/message` to this session, if the level passes its `logging/setLevel`. */
  log(level: LoggingLevel, data: unknown, logger?: string): void
  /**
   * Asks the client's model for a completion (`sampling/createMessage`). Legacy era: a live request
   * to the client. Modern era: an input request of an `input_required` round (see {@link InputOptions}).
   */
  sample(params: CreateMessageParams, options?: InputOptions): Promise<CreateMessageResult>
  /** Asks the user for input (`elicitation/create`, form or URL mode); in either era, as `sample` does. */
  elicit(params: ElicitParams, options?: InputOptions): Promise<ElicitResult>
  /** Asks the client for its roots (`roots/list`); in either era, as `sample` does. */
  listRoots(options?: InputOptions): Promise<ListRootsResult>
  /**
   * Modern era: what this handler carried from the previous round of the request with
   * `setRequestState` (undefined on the first round, and always in the legacy era, where a request
   * is one run). It came back sealed: the client cannot read or change it.
   */
  readonly requestState: unknown
  /**
   * Modern era: a JSON value to carry into the next round if this run ends `input_required`
   * (sealed into the round's `requestState` with the answers so far). Ignored in the legacy era.
   */
  setRequestState(value: unknown): void
  /** Set while the handler runs as a task: its id, and a way to say what it is doing now. */
  readonly task: TaskHandle | undefined
  /**
   * Runs `work` as a task of this request when the request may become one (legacy: the client sent
   * `params.task`; modern: the client declared the `io.modelcontextprotocol/tasks` extension), and
   * returns the task's CreateTaskResult; otherwise runs `work` here and returns its result. For a
   * tool registered with `taskStart: 'handler'`: only a tools/call becomes a task (the one request
   * type a server declares tasks for); any other request runs `work` here, its `task` ignored.
   * The promise's value is what the handler returns (typed as the work's result; on the wire it is
   * the CreateTaskResult). What comes before (an `elicit` in the modern era, an MRTR round) is
   * answered synchronously, and only `work` becomes the task.
   * @example
   * async (args, ctx) => {
   *   const { content } = await ctx.elicit(form('Your name?'))   // an input_required round
   *   return ctx.runAsTask(async () => ({ content: [{ type: 'text', text: await longJob(content) }] }))
   * }
   */
  runAsTask<R extends JsonObject>(work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R>
}

/** What a handler running as a task knows of its task. */
export interface TaskHandle {
  readonly taskId: string
  /** Sets the task's `statusMessage` (what tasks/get and status notifications show). */
  setStatusMessage(message: string): void
}

/**
 * Options of the context's `elicit`, `sample` and `listRoots`.
 *
 * How one handler serves both eras: in the legacy era each call is a live request to the client
 * and resolves with its answer. In the modern era (MCP 2026-07-28, MRTR) a call resolves at once
 * when the client's retry carried the answer for its `key`; otherwise the request is answered
 * `input_required` with every input asked in the same turn (a `Promise.all`, say), the handler's
 * promise never settles, and when the client re-issues the request with the answers the handler
 * runs again from the start, this time getting them. Code before the first input therefore runs
 * once per round: keep side effects after the inputs, or guard them with `requestState`. A call
 * whose capability the client did not declare rejects with -32021 (MissingRequiredClientCapability).
 */
export interface InputOptions extends RequestOptions {
  /**
   * The input request's key in `inputRequests` (modern era). Default: the method and the call's
   * order in the run (`elicitation-1`, `sampling-1`, `roots-1`), which stay the same across rounds
   * as long as the handler asks in the same order.
   */
  key?: string
  /**
   * Legacy era (MCP 2025-11-25): ask the client to run this sampling or elicitation as a task
   * (`params.task`, with a retention when given); the answer is awaited with `tasks/result`. The
   * client must have declared `tasks.requests.sampling.createMessage` / `.elicitation.create`
   * (else CapabilityError). Ignored in the modern era.
   */
  task?: { ttlMs?: number }
}

/** Cache hints of a cacheable result (MCP 2026-07-28 caching): how long it stays fresh, who may share it. */
export interface CacheHint {
  /** Ms the client may reuse the result (0: stale at once). */
  ttlMs: number
  /** 'public': no per-user data, shared caches may keep it; 'private': only within one authorization context. */
  cacheScope: 'public' | 'private'
}

/**
 * A tool's handler: arguments (validated against `inputSchema`) in, a result out. With a Standard
 * Schema, `args` is what the schema's validator gave back (defaults and transforms applied); `R`
 * is the result, {@link StructuredToolResult} for a Standard Schema `outputSchema`.
 */
export type ToolHandler<A = Record<string, unknown>, R = CallToolResult> = (args: A, ctx: ServerContext) => HandlerOutcome<R>

/**
 * What the handler of a tool with a Standard Schema `outputSchema` returns: a result whose
 * `structuredContent` is the schema's input type, or a failure (`isError: true`) without it.
 */
export type StructuredToolResult<T> = (CallToolResult & { structuredContent: T }) | (CallToolResult & { isError: true })

/**
 * What a tool's handler returns for an `outputSchema` `O`: typed by a Standard Schema, else any
 * result. (`O` is `never` while TypeScript still infers a handler whose definition has no
 * `outputSchema`; that is any result too.)
 */
export type ToolResultFor<O> = [O] extends [never] ? CallToolResult
  : [O] extends [ObjectStandardSchema] ? StructuredToolResult<InferInput<O>> : CallToolResult

/** A Standard Schema (zod 4, valibot, arktype, ...) whose values are objects, as tool and prompt arguments are. */
export type ObjectStandardSchema = StandardSchemaV1<unknown, object>

/** What a tool's `inputSchema` may be: a JSON Schema of an object, or an {@link ObjectStandardSchema}. */
export type ToolInputSchema = ObjectJsonSchema | ObjectStandardSchema

/** What a tool's `outputSchema` may be: a JSON Schema of an object, or an {@link ObjectStandardSchema}. */
export type ToolOutputSchema = ObjectJsonSchema | ObjectStandardSchema

/** How a tool is described to clients. */
export interface ToolDefinition<S extends ToolInputSchema = ToolInputSchema, O extends ToolOutputSchema = ToolOutputSchema> {
  title?: string
  description?: string
  /**
   * The arguments' schema. Default: any object.
   * - JSON Schema (2020-12 unless `$schema` says otherwise) with `type: 'object'`: sent as is,
   *   checked with the built-in validator.
   * - A Standard Schema (zod 4, valibot, arktype): checked with its own validator (async ones too),
   *   the handler's arguments are inferred from it, and the JSON Schema sent in `tools/list` comes
   *   from its Standard JSON Schema converter (zod 4) or from `inputJsonSchema`.
   */
  inputSchema?: S
  /**
   * The JSON Schema to send for a Standard Schema `inputSchema`, for libraries that cannot convert
   * themselves (valibot, arktype without a converter); wins over the converter when both exist.
   */
  inputJsonSchema?: ObjectJsonSchema
  /**
   * When set, every successful result must carry `structuredContent` matching it (else the call
   * fails with -32603). A JSON Schema is sent as is; a Standard Schema types the handler's
   * `structuredContent`, checks it with its own validator (the value it gives back is what is
   * sent), and is described in `tools/list` by the JSON Schema of its output type, from its
   * converter or from `outputJsonSchema`.
   */
  outputSchema?: O
  /** The JSON Schema to send for a Standard Schema `outputSchema` (of its output type), for libraries that cannot convert themselves. */
  outputJsonSchema?: ObjectJsonSchema
  annotations?: ToolAnnotations
  icons?: Icon[]
  /**
   * Whether the tool may run as a task (MCP tasks: 2025-11-25 and the 2026-07-28 extension):
   * `forbidden` (default), `optional` (the client chooses in the legacy era; the server runs it as
   * a task whenever the client declared the extension in the modern era) or `required` (a call that
   * cannot be a task is refused: -32601 legacy, -32021 modern).
   */
  execution?: Tool['execution']
  /**
   * When a task-capable call becomes a task: `'call'` (default) before the handler runs, the whole
   * handler being the task's work; `'handler'` when the handler calls `ctx.runAsTask(work)`, so it
   * can gather input first (an MRTR round in the modern era).
   */
  taskStart?: 'call' | 'handler'
  _meta?: JsonObject
}

/** A registered tool, resource, template or prompt: change or remove it later. */
export interface Registration<D> {
  /** Replaces parts of the definition; clients are told the list changed. */
  update(changes: Partial<D>): void
  /** Hides or shows it without removing it. */
  enable(): void
  disable(): void
  readonly isEnabled: boolean
  /** Removes it; clients are told the list changed. */
  remove(): void
}

/** What a resource handler may return: the full result, a list of contents, one content, or text. */
export type ReadOutcome = ReadResourceResult | ResourceContents[] | ResourceContents | string

/** A static resource's reader. */
export type ResourceHandler = (uri: string, ctx: ServerContext) => HandlerOutcome<ReadOutcome>

/** A template resource's reader: receives the variables matched from the URI. */
export type TemplateHandler = (uri: string, variables: Record<string, string | string[]>, ctx: ServerContext) => HandlerOutcome<ReadOutcome>

/** Completes one argument or variable: returns candidate values (at most 100 are sent). */
export type Completer = (value: string, context: { arguments: Record<string, string>; ctx: ServerContext }) =>
  HandlerOutcome<string[] | CompleteResult['completion']>

/** How a static resource is described; `cache` gives the hints of its `resources/read` results (modern era). */
export type ResourceDefinition = Omit<Resource, 'uri'> & { cache?: CacheHint }

/** How a resource template is described, with optional listing and completion. */
export interface ResourceTemplateDefinition extends Omit<ResourceTemplate, 'uriTemplate'> {
  /** Resources of this template to show in resources/list. */
  list?: (ctx: ServerContext) => HandlerOutcome<Resource[]>
  /** Completers for the template's variables, by variable name. */
  complete?: Record<string, Completer>
  /** Cache hints of the `resources/read` results of this template's resources (modern era). */
  cache?: CacheHint
}

/** How a prompt is described, with optional completion of its arguments. */
export interface PromptDefinition<S extends ObjectStandardSchema = ObjectStandardSchema> extends Omit<Prompt, 'name'> {
  complete?: Record<string, Completer>
  /**
   * The arguments as a Standard Schema of an object of strings (zod 4, valibot, arktype): `prompts/get`
   * checks them with it (a failure is -32602) and the handler gets what it gives back, typed. Unless
   * `arguments` is given, the listed arguments (name, description, required) come from the
   * schema's JSON Schema: its Standard JSON Schema converter (zod 4) or `argumentsJsonSchema`.
   */
  argumentsSchema?: S
  /** The JSON Schema of `argumentsSchema`, for libraries that cannot convert themselves. */
  argumentsJsonSchema?: JsonObject
}

/**
 * The handler of a method registered with `server.method`: the request's params (as sent) and
 * context in, the result out (a value, a Promise, or an Observable whose last value is the result).
 * It runs in both eras; throw an `McpError` to answer with that JSON-RPC error.
 */
export type MethodHandler<R extends JsonObject = JsonObject> = (params: JsonObject | undefined, ctx: ServerContext) => HandlerOutcome<R>

/** Options of `server.method`. */
export interface MethodOptions {
  /**
   * The method's results are cacheable (MCP 2026-07-28): modern-era results carry these `ttlMs`
   * and `cacheScope` unless the handler's result has its own.
   */
  cache?: CacheHint
}

/** A prompt's handler: string arguments in (or, with `argumentsSchema`, what it gave back), messages out. */
export type PromptHandler<A = Record<string, string>> = (args: A, ctx: ServerContext) => HandlerOutcome<GetPromptResult>

/** The state of one session, as its actor holds it. */
export interface SessionState {
  status: LifecycleState
  protocolVersion: string
  clientInfo?: Implementation
  clientCapabilities: ClientCapabilities
  logLevel: LoggingLevel
  /**
   * The URIs of this session's resource subscriptions, each one a child actor of the session
   * (`subscription:<uri>` in `server.system.inspect`). Updated in place (O(1) a change), so it is
   * the same Set from one state to the next.
   */
  subscriptions: ReadonlySet<string>
}

/** One session of a server with one client. */
export interface ServerSession {
  readonly id: string
  /** The state of the session's actor, as its last snapshot told it (read from its snapshots, never from the actor). */
  readonly state: SessionState
  /** The state now and after every change (the session actor's snapshots); completes when the session ends. */
  readonly states: Observable<SessionState>
  readonly connection: Connection
  /**
   * Sends a request to the client (capabilities checked locally first), as a cold Observable of
   * progress events and the result. A method of {@link ServerRequests} has its params checked and
   * its result typed: `session.request('roots/list')` emits `RequestEvent<ListRootsResult>`.
   */
  request<M extends keyof ServerRequests>(method: M, ...args: [...ParamsArgument<RequestParams<ServerRequests, M>>, options?: RequestOptions]): Observable<RequestEvent<RequestResult<ServerRequests, M>>>
  /** Any other method: params are a `JsonObject`, and the result is `R` (an unchecked claim). */
  request<R extends JsonObject = JsonObject, M extends string = string>(method: OtherMethod<ServerRequests, M>, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>>
  /** Sends a notification to the client; a method of {@link ServerNotifications} has its params checked. */
  notify<M extends keyof ServerNotifications>(method: M, ...args: ParamsArgument<ServerNotifications[M]>): void
  notify<M extends string>(method: OtherMethod<ServerNotifications, M>, params?: JsonObject): void
  /**
   * Notifications from the client, by method, as their params (e.g. `notifications/roots/list_changed`):
   * typed for a method of {@link ClientNotifications}. Hot; completes when the session ends.
   */
  notifications<M extends keyof ClientNotifications>(method: M): Observable<NotificationParams<ClientNotifications, M>>
  notifications<P extends JsonObject = JsonObject, M extends string = string>(method: OtherMethod<ClientNotifications, M>): Observable<P>
  /** Sends `notifications/message` if `level` passes the session's level. */
  log(level: LoggingLevel, data: unknown, logger?: string): void
  sample(params: CreateMessageParams, options?: InputOptions): Promise<CreateMessageResult>
  elicit(params: ElicitParams, options?: InputOptions): Promise<ElicitResult>
  listRoots(options?: RequestOptions): Promise<ListRootsResult>
  /** Tells the client a URL elicitation finished (`notifications/elicitation/complete`). */
  completeElicitation(elicitationId: string): void
  /** Resolves when the session has ended. */
  readonly closed: Promise<void>
  close(): Promise<void>
}

/**
 * An MCP server: registries of tools, resources and prompts, shared by every session it serves.
 * @see createServer
 */
export interface McpServer {
  readonly info: Implementation
  /**
   * Registers a tool whose arguments are a Standard Schema (zod 4, valibot, arktype): the handler's
   * arguments are the schema's output type.
   * @throws TypeError when no JSON Schema can be had for it (no converter, no `inputJsonSchema`),
   *   naming the tool, or when that JSON Schema is not of an object.
   * @example
   * server.tool('add', { inputSchema: z.object({ a: z.number(), b: z.number() }) },
   *   ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }))
   */
  tool<S extends ObjectStandardSchema, O extends ToolOutputSchema = ToolOutputSchema>(name: string, definition: ToolDefinition<S, O> & { inputSchema: S }, handler: ToolHandler<InferOutput<S>, ToolResultFor<O>>): Registration<ToolDefinition<S, O>>
  /**
   * Registers a tool whose arguments are a JSON Schema. The handler's arguments are typed from an
   * `as const` schema ({@link InferJsonSchema}), and are `Record<string, unknown>` otherwise.
   */
  tool<S extends ObjectJsonSchema, O extends ToolOutputSchema = ToolOutputSchema>(name: string, definition: ToolDefinition<S, O> & { inputSchema: S }, handler: ToolHandler<InferJsonSchema<S>, ToolResultFor<O>>): Registration<ToolDefinition>
  /**
   * Registers a tool from any definition (a JSON Schema, none, or a `ToolDefinition` value whose
   * schema kind is not known statically), its arguments typed as `A` on the caller's word.
   */
  tool<A = Record<string, unknown>, O extends ToolOutputSchema = ToolOutputSchema>(name: string, definition: ToolDefinition<ToolInputSchema, O>, handler: ToolHandler<A, ToolResultFor<O>>): Registration<ToolDefinition>
  resource(uri: string, definition: ResourceDefinition, handler: ResourceHandler): Registration<ResourceDefinition>
  resourceTemplate(uriTemplate: string, definition: ResourceTemplateDefinition, handler: TemplateHandler): Registration<ResourceTemplateDefinition>
  /**
   * Registers a prompt whose arguments are a Standard Schema; the handler's arguments are its output type.
   * @throws TypeError when the arguments cannot be listed (no `arguments`, no converter, no
   *   `argumentsJsonSchema`), naming the prompt.
   */
  prompt<S extends ObjectStandardSchema>(name: string, definition: PromptDefinition<S> & { argumentsSchema: S }, handler: PromptHandler<InferOutput<S>>): Registration<PromptDefinition<S>>
  prompt(name: string, definition: PromptDefinition, handler: PromptHandler): Registration<PromptDefinition>
  /**
   * Answers a method the server has no handler of its own for (an extension's, or the
   * application's), in both eras and on every transport, sessions already open included. A modern
   * request's result is finished like the built-in ones (`resultType`, server info in `_meta`).
   * @throws TypeError when the server already answers `method`.
   * @example
   * server.method('acme/ping', (params, ctx) => ({ pong: true }))
   */
  method<R extends JsonObject = JsonObject>(method: string, handler: MethodHandler<R>, options?: MethodOptions): { remove(): void }
  /**
   * Declares an extension under `capabilities.extensions` (initialize and server/discover), with
   * its settings (default `{}`); `remove()` withdraws it. Declaring it does not answer its
   * methods: register those with {@link McpServer.method}.
   * @throws TypeError when `id` is not of the form `prefix/name`.
   */
  extension(id: string, settings?: JsonObject): { remove(): void }
  /**
   * Wraps request handling in middleware, for every method but initialize and ping, in both eras and on
   * every transport: each middleware takes the next handler and returns a handler of its own
   * (`(next) => (request, ctx) => Observable`). The first given runs outermost; calling `use`
   * again adds inside the earlier ones. A middleware may look at the request and `ctx.principal`,
   * refuse it by returning an error Observable (a McpError reaches the client as is), change the
   * params, or map the result. `remove()` takes these out again.
   * @example
   * server.use(next => (request, ctx) => request.method === 'tools/call' && ctx.principal === undefined
   *   ? throwError(() => new ForbiddenError('Sign in first'))
   *   : next(request, ctx))
   */
  use(...middleware: Middleware[]): { remove(): void }
  /**
   * Serves what `source` offers as part of this server: another server of this process (reached
   * through an in-process client, see `mountableServer`) or a connected client (`proxy(client)`).
   * Tools and prompts are named `<prefix>__<name>` (the host's rule: sanitized, hashed when too
   * long; `''` keeps the names), resources and templates keep their URIs; a name or URI this server
   * has already stays its owner's. Requests are forwarded unvalidated (the source validates), with
   * progress, cancellation, and what the source asks meanwhile (sampling, elicitation, roots)
   * answered by the caller; the source's list changes, log messages and resource updates (while a
   * session or listen stream here subscribes) come through. `remove()` takes it all out again.
   * @example
   * const app = createServer({ name: 'app', version: '1' })
   * app.mount('weather', weatherServer)            // weather__forecast, ...
   * app.mount('docs', proxy(await connect(stdioClient({ command: 'docs-server' }), info)))
   */
  mount(prefix: string, source: McpServer | Mountable, options?: MountOptions): Mount
  /** Tells every session subscribed to `uri` that it changed. */
  notifyResourceUpdated(uri: string): void
  /**
   * The server's event bus: every list change (once per kind per microtask) and every resource
   * update, as they happen. Sessions take what they asked for from it; an application may watch it
   * too. Hot: a subscriber sees what happens after it subscribed; it never completes.
   */
  readonly events: Observable<ServerEvent>
  /**
   * The server's actor system: its sessions, their in-flight requests and subscriptions, its tasks.
   * `server.system.inspect` shows every spawn, message, transition and end as events (nothing is
   * built while nobody subscribes).
   */
  readonly system: ActorSystem
  /** Sends a log message to every session (each filters by its own level). */
  log(level: LoggingLevel, data: unknown, logger?: string): void
  /** Serves one client over `transport`; resolves once the transport is being read. */
  listen(transport: Transport): Promise<ServerSession>
  /**
   * Serves every session a transport server (an HTTP listener) opens; resolves once it accepts.
   * `close()` stops it too.
   */
  listen(transportServer: TransportServer): Promise<TransportServer>
  /** Sessions now open. */
  readonly sessions: ReadonlySet<ServerSession>
  /**
   * The server's health, replaying the current value: `serving`, `draining` (once `drain` is
   * called), `closed`; and how its registry compares with the other instances' (scale-out, with
   * `ServerOptions.eventBus`): `alone` until one answered, `agrees`, or `differs` with the
   * instances and entries that differ (each difference is also reported once as a
   * `RegistryMismatchWarning`: console.warn by default). Completes when the server closes.
   * @example
   * server.health.subscribe(({ status, registry }) => metrics.set({ status, registry: registry.status }))
   */
  readonly health: Observable<ServerHealth>
  /**
   * Leaves gracefully, for a rolling restart (call it on SIGTERM, then exit): `health` says
   * `draining`, every listener drains (its health endpoint answers 503, it stops taking new
   * sessions after `healthGraceMs`, lets requests in flight finish up to `timeoutMs`, hands its
   * sessions over to the other instances, closes its SSE streams and WebSocket connections so
   * clients resume elsewhere), then the server closes. Resolves once closed; a second call
   * returns the same drain.
   * @example
   * process.once('SIGTERM', () => void server.drain({ timeoutMs: 20_000 }).then(() => process.exit(0)))
   */
  drain(options?: DrainOptions): Promise<void>
  /** Ends every session. */
  close(): Promise<void>
}

/** See {@link McpServer.health}. */
export interface ServerHealth {
  readonly status: 'serving' | 'draining' | 'closed'
  readonly registry: RegistryHealth
}

/** One request as middleware sees it: its method and params (`_meta` included). */
export interface McpRequest {
  readonly method: string
  readonly params: JsonObject | undefined
}

/** A handler in the middleware pipeline: the request and its context in, an Observable of the result out (its last value counts). */
export type McpHandler = (request: McpRequest, ctx: ServerContext) => Observable<JsonObject>

/** A step of the request pipeline: given the rest of it (`next`), the handler that runs before, around or instead of it. See McpServer.use. */
export type Middleware = (next: McpHandler) => McpHandler

/** What the router calls for one method: params and the request's context in, the result out. */
export type RouteHandler = (params: JsonObject | undefined, ctx: ServerContext) => HandlerOutcome<JsonObject>
