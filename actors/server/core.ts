/**
 * The server as its parts see it (the router, the tasks, sessions, contexts, the modern and
 * sessionless paths), declared apart from the classes that implement it: each part depends on this
 * leaf, never on another part's file, so actors/server/ has no import cycle. `Server`, `Router`,
 * `ServerTasks` and `Session` implement these.
 */
import type { Instrumentation } from '../../lib/request-observer.ts'
import type { Observable } from '../../lib/rx.ts'
import type { Connection } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { ServerEvent } from '../../lib/events.ts'
import type { Implementation, LoggingLevel, ServerCapabilities } from '../../lib/schema/types.ts'
import type { ContextHost } from '../context.ts'
import type { ActorSystem } from '../actor.ts'
import type { HandlerOutcome } from '../request.ts'
import type { CacheHint, RouteHandler, ServerContext, ServerSession } from './api.ts'
import type { ServerOptions } from './options.ts'
import type { JsonSchemaSource } from '../../lib/validator.ts'
import type { RequestStateCodec, RequestStateStore } from './request-state.ts'
import type { PromptEntry, ResourceEntry, TemplateEntry, ToolEntry } from './registry.ts'
import type { ListViews } from './list-views.ts'
import type { Mountable } from './mountable.ts'

/** The versions a server serves in each era, newest first. */
export interface ServedVersions {
  readonly all: readonly string[]
  readonly legacy: readonly string[]
  readonly modern: readonly string[]
}

/** What the server's parts read and call on it. */
export interface ServerCore {
  readonly info: Implementation
  /** Name, title and version: what each modern result says of the server. */
  readonly briefInfo: Implementation
  readonly options: ServerOptions
  readonly pageSize: number
  /** The JSON Schema validator the server checks tool arguments, results and elicitation answers with. */
  readonly jsonSchema: JsonSchemaSource
  readonly versions: ServedVersions
  readonly tools: ReadonlyMap<string, ToolEntry>
  readonly resources: ReadonlyMap<string, ResourceEntry>
  readonly templates: ReadonlyMap<string, TemplateEntry>
  readonly prompts: ReadonlyMap<string, PromptEntry>
  /** Methods registered with `server.method`. */
  readonly methods: ReadonlyMap<string, RouteHandler>
  readonly methodCacheHints: ReadonlyMap<string, CacheHint> | undefined
  readonly router: RouterCore
  readonly tasks: TasksCore
  readonly requestStates: RequestStateCodec
  readonly usedRequestStates: RequestStateStore
  readonly events: Observable<ServerEvent>
  /** The server's actors (see McpServer.system). */
  readonly system: ActorSystem
  /** With `listVisibility`: what each session and listen stream was last told of its lists. */
  readonly listViews: ListViews | undefined
  /** Emits once when the server starts closing. */
  readonly closing: Observable<void>
  capabilities(): ServerCapabilities
  /** The server's telemetry (ServerOptions.telemetry), once loaded: what watches its requests. */
  readonly instrumentation: Instrumentation | undefined
  /** `route` inside the middleware, made once per route. */
  wrap(method: string, route: RouteHandler): RouteHandler
  /** `run` (one of the server's own methods) through the middleware as `method`; the context is made only when there is middleware. */
  throughMiddleware(method: string, params: JsonObject | undefined, context: () => ServerContext, run: () => unknown): unknown
  report(error: unknown): void
  /**
   * A session or listen stream subscribed to `uri` (counted: a mounted source watches it from the
   * first on). Settles once that source watches it: undefined when no mounted source owns it.
   */
  subscribed(uri: string): Promise<void> | undefined
  /** One of those ended (the last one: the source stops watching). */
  unsubscribed(uri: string): void
}

/** The router, as sessions and the modern path call it. */
export interface RouterCore {
  /** The handler of each method the registries answer. */
  readonly routes: ReadonlyMap<string, RouteHandler>
  /** The cache hints a resource's or its template's registration gives its reads, if any. */
  cacheHintOfResource(uri: string): CacheHint | undefined
  /** True when `uri` names an enabled resource or matches an enabled template. */
  resourceExists(uri: string): boolean
  /** The mounted source `uri` belongs to (its resource's, else the first matching template's); undefined when the server's own or unknown. */
  mountOf(uri: string): Mountable | undefined
}

/** The server's tasks, as the router, the contexts and sessions call them. */
export interface TasksCore {
  readonly isEnabled: boolean
  ownerOf(ctx: ServerContext, taskId: string): string
  decide(support: 'forbidden' | 'optional' | 'required', params: JsonObject | undefined, ctx: ServerContext): boolean
  runAsTask<R extends JsonObject>(ctx: ServerContext, params: JsonObject | undefined, work: (ctx: ServerContext) => HandlerOutcome<R>): Promise<R>
  start(ctx: ServerContext, params: JsonObject | undefined, work: (ctx: ServerContext) => HandlerOutcome<JsonObject>): Promise<JsonObject>
  get(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject>
  result(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject>
  list(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject>
  cancel(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject>
  update(params: JsonObject | undefined, ctx: ServerContext): Promise<JsonObject>
  sessionEnded(session: SessionCore): Promise<void>
  changed(): void
  close(): Promise<void>
}

/** A legacy session, as contexts and tasks see it. */
export interface SessionCore extends ServerSession {
  readonly server: ServerCore
  readonly scope: ServingScope
  readonly connection: Connection
  /** True once the session goes on on another instance (a shared session handed over): what it owns stays. */
  readonly isHandedOver: boolean
  /** Sends `notifications/message` if `level` passes the session's level, tied to a request when given. */
  log(level: LoggingLevel, data: unknown, logger?: string, relatedRequestId?: string | number): void
}

/**
 * Where a request is served: the server, the host its own messages go out through, and the legacy
 * session it arrived on (undefined for a request that came with its own reply stream and belongs
 * to no session). Made once per session, or once per sessionless request: never per message.
 */
export interface ServingScope {
  readonly server: ServerCore
  readonly host: ContextHost
  readonly session: SessionCore | undefined
}
