import { Observable, Subject, defer, timer, type Subscription } from '../../lib/rx.ts'
import { DRAIN_DEFAULTS, type DrainOptions, type Transport, type TransportGauge, type TransportServer } from '../../lib/transport.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { jsonSchemaSource, type JsonSchemaSource } from '../../lib/validator.ts'
import { uriTemplate } from '../../lib/uri-template.ts'
import { ToolNameWarning, toolNameIssues } from '../../lib/tool-names.ts'
import { ProgressWarning } from '../../lib/operators/progress.ts'
import type { Implementation, LoggingLevel, Resource, ResourceTemplate, ServerCapabilities } from '../../lib/schema/types.ts'
import { compact, type ListKind, type PromptEntry, type ResourceEntry, type TemplateEntry, type ToolEntry } from './registry.ts'
import {
  type McpServer, type PromptDefinition, type PromptHandler, type Registration,
  type ResourceDefinition, type ResourceHandler, type ResourceTemplateDefinition, type ServerSession,
  type TemplateHandler, type ToolDefinition, type ToolHandler,
  type CacheHint, type MethodHandler, type MethodOptions, type McpHandler, type Middleware, type ServerContext, type ServerHealth,
} from './api.ts'
import type { ServerEvent } from '../../lib/events.ts'
import { RegistryMismatchWarning } from './registry-sync.ts'
import { RegistryWiring } from './registry-wiring.ts'
import type { Instrumentation } from '../../lib/request-observer.ts'
import { telemetryOf } from '../telemetry-option.ts'
import { SERVER_DEFAULTS, type ServerOptions } from './options.ts'
import { MODERN_PROTOCOL_VERSIONS, isModernVersion } from '../../lib/schema/modern.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/schema/types.ts'
import { RequestStateCodec, memoryRequestStateStore, type RequestStateStore } from './request-state.ts'
import { outcomeObservable, type HandlerOutcome } from '../request.ts'
import { Router, type RouteHandler } from './router.ts'
import { SESSION_METHODS, Session } from './session.ts'
import { serveSessionless } from './sessionless.ts'
import type { ServerCore } from './core.ts'
import type { ListViews } from './list-views.ts'
import { ListChanges } from './list-changes.ts'
import { createActorSystem, type ActorSystem } from '../actor.ts'
import { ServerMounts } from './server-mounts.ts'
import type { Mount, Mountable, MountOptions } from './mountable.ts'
import { applyPromptDefinition, applyToolDefinition } from './entry-definitions.ts'
import { offeredCapabilities } from './offered-capabilities.ts'
import { ServerTasks } from './tasks.ts'

export type { ListKind }

/** How often a drain looks again for requests still in flight (bounded by its deadline). */
const DRAIN_POLL_MS = 20

/**
 * The server: registries of tools, resources and prompts, the event bus, and the sessions it
 * serves. Handling requests belongs to the {@link Router}; sessions and modern requests call it.
 */
export class Server implements McpServer, ServerCore {
  readonly info: Implementation
  readonly options: ServerOptions
  readonly pageSize: number
  readonly tools = new Map<string, ToolEntry>()
  readonly resources = new Map<string, ResourceEntry>()
  readonly templates = new Map<string, TemplateEntry>()
  readonly prompts = new Map<string, PromptEntry>()
  /** Methods registered with {@link Server.method}: an extension's, or the application's own. */
  readonly methods = new Map<string, RouteHandler>()
  /** Extensions declared with {@link Server.extension}, by identifier, with their settings. */
  readonly extensions = new Map<string, JsonObject>()
  readonly #sessions = new Set<Session>()
  readonly listViews: ListViews | undefined
  /** List changes batched per microtask, and who hears of each (with listVisibility). */
  readonly #lists: ListChanges
  /** The sessions' one subscription to the event bus, while there are sessions (see #toSessions). */
  #sessionEvents: Subscription | undefined
  /** Transport servers being listened on, with the subscription to their sessions. */
  readonly #listeners = new Map<TransportServer, Subscription>()
  /** The listeners' gauges by name (telemetry on): one gauge per name reports the sum over listeners. */
  readonly #gauges = new Map<string, TransportGauge[]>()
  /** The event bus (see McpServer.events). */
  readonly #events = new Subject<ServerEvent>()
  readonly events: Observable<ServerEvent> = this.#events.asObservable()
  /** Emits once when the server starts closing: listen streams end with their result first. */
  readonly #closing = new Subject<void>()
  /** The registrations' sync with the other instances (ServerOptions.eventBus), and the health. */
  readonly #registry: RegistryWiring
  readonly health: Observable<ServerHealth>
  readonly closing: Observable<void> = this.#closing.asObservable()
  /** The methods over the registries, shared by every session and modern request. */
  readonly router: Router
  /** The server's tasks (both eras). */
  readonly tasks: ServerTasks
  /** The server's actors (sessions, their requests and subscriptions, tasks), on `options.scheduler`. */
  readonly system: ActorSystem
  /** Signs and checks the `requestState` of MRTR rounds (made on the first round). */
  #requestStates: RequestStateCodec | undefined
  /** The JSON Schema validator (ServerOptions.jsonSchemaValidator), chosen once; its module loads on first need. */
  readonly jsonSchema: JsonSchemaSource

  constructor(info: Implementation, options: ServerOptions) {
    this.info = info
    this.options = options
    this.pageSize = options.pageSize ?? SERVER_DEFAULTS.pageSize
    this.jsonSchema = jsonSchemaSource(options.jsonSchemaValidator ?? SERVER_DEFAULTS.jsonSchemaValidator)
    this.#lists = new ListChanges(this, options.listVisibility, event => this.#emit(event))
    this.listViews = this.#lists.views
    this.system = createActorSystem({ name: info.name, scheduler: options.scheduler, reportError: error => this.report(error) })
    this.router = new Router(this)
    this.tasks = new ServerTasks(this, event => this.#emit(event))
    // Other instances' events come in as if raised here; this server's own go out through #emit.
    this.#registry = new RegistryWiring(this, options.eventBus, options.scheduler, event => this.#events.next(event))
    this.health = this.#registry.health
    // Telemetry's module and @opentelemetry/api load only when asked for; listen waits for them.
    const telemetry = telemetryOf(options.telemetry)
    if (telemetry !== undefined) {
      this.#telemetryLoaded = telemetry.then(instrumentation => {
        this.instrumentation = instrumentation
        if (instrumentation.serverEvent !== undefined) this.#telemetryEvents = this.#events.subscribe(event => instrumentation.serverEvent!(event))
      })
      // Reported by listen; not an unhandled rejection meanwhile.
      this.#telemetryLoaded.catch(() => {})
    }
  }

  /** The server's telemetry (ServerOptions.telemetry), once loaded. */
  instrumentation: Instrumentation | undefined = undefined
  /** Settles once the telemetry asked for is loaded (rejects when it cannot be). */
  readonly #telemetryLoaded: Promise<void> | undefined = undefined
  /** Telemetry's view of the event bus (tasks' status changes). */
  #telemetryEvents: Subscription | undefined = undefined

  /** The server's name, title and version: what each modern result says of it (discover says all). */
  get briefInfo(): Implementation {
    return this.#briefInfo ??= compact({ name: this.info.name, title: this.info.title, version: this.info.version }) as Implementation
  }
  #briefInfo: Implementation | undefined

  get requestStates(): RequestStateCodec {
    return this.#requestStates ??= new RequestStateCodec(this.options.requestStateKey, this.options.requestStateTtlMs ?? SERVER_DEFAULTS.requestStateTtlMs)
  }

  /** Remembers the `requestState`s already used (ServerOptions.requestStateStore; made on the first retry). */
  get usedRequestStates(): RequestStateStore {
    return this.#usedRequestStates ??= this.options.requestStateStore ?? memoryRequestStateStore()
  }
  #usedRequestStates: RequestStateStore | undefined

  /** Versions this server serves in each era, newest first (from `protocolVersions`, else all). */
  get versions(): { all: readonly string[]; legacy: readonly string[]; modern: readonly string[] } {
    return this.#versions ??= versionsOf(this.options.protocolVersions)
  }
  #versions: { all: readonly string[]; legacy: readonly string[]; modern: readonly string[] } | undefined

  get sessions(): ReadonlySet<ServerSession> { return this.#sessions }

  method(method: string, handler: MethodHandler, options: MethodOptions = {}): { remove(): void } {
    if (typeof method !== 'string' || method.length === 0) throw new TypeError('A method needs a name')
    if (SESSION_METHODS.has(method) || this.router.routes.has(method) || this.methods.has(method)) {
      throw new TypeError(`Method ${JSON.stringify(method)} is already answered by this server`)
    }
    const route = handler as RouteHandler
    this.methods.set(method, route)
    if (options.cache !== undefined) (this.methodCacheHints ??= new Map()).set(method, options.cache)
    return {
      remove: () => {
        if (this.methods.get(method) !== route) return
        this.methods.delete(method)
        this.methodCacheHints?.delete(method)
      },
    }
  }

  /** The middleware, outermost first (see McpServer.use). */
  #middleware: readonly Middleware[] = []
  /** Each route wrapped in the middleware, made on its first request after a change. */
  #wrapped = new WeakMap<RouteHandler, RouteHandler>()


  use(...middleware: Middleware[]): { remove(): void } {
    for (const each of middleware) if (typeof each !== 'function') throw new TypeError('Middleware is a function from the next handler to a handler')
    this.#middleware = [...this.#middleware, ...middleware]
    this.#wrapped = new WeakMap()
    return {
      remove: () => {
        this.#middleware = this.#middleware.filter(each => !middleware.includes(each))
        this.#wrapped = new WeakMap()
      },
    }
  }

  /** `route` of `method` inside the middleware (itself when there is none), made once per route. */
  wrap(method: string, route: RouteHandler): RouteHandler {
    if (this.#middleware.length === 0) return route
    let wrapped = this.#wrapped.get(route)
    if (wrapped === undefined) this.#wrapped.set(route, wrapped = this.compose(method, route))
    return wrapped
  }

  /** `route` of `method` inside the middleware, made now: outermost first, the route innermost. */
  compose(method: string, route: RouteHandler): RouteHandler {
    const innermost: McpHandler = (request, ctx) => defer(() => outcomeObservable(route(request.params, ctx)))
    const handler = this.#middleware.reduceRight<McpHandler>((next, middleware) => middleware(next), innermost)
    return (params, ctx) => handler({ method, params }, ctx)
  }

  /**
   * `run`, one of the server's own methods (not a route), through the middleware as `method`; the
   * context is made only when there is middleware to see it.
   */
  throughMiddleware(method: string, params: JsonObject | undefined, context: () => ServerContext, run: () => unknown): unknown {
    if (this.#middleware.length === 0) return run()
    return this.compose(method, () => run() as HandlerOutcome<JsonObject>)(params, context())
  }

  /** Cache hints of the methods registered with one (`server.method`'s `cache`); made on the first. */
  methodCacheHints: Map<string, CacheHint> | undefined

  extension(id: string, settings: JsonObject = {}): { remove(): void } {
    if (typeof id !== 'string' || !id.includes('/')) throw new TypeError(`An extension identifier is "vendor-prefix/name", not ${JSON.stringify(id)}`)
    if (!isJsonObject(settings)) throw new TypeError(`The settings of extension ${id} must be an object`)
    this.extensions.set(id, settings)
    this.#capabilities = undefined
    return { remove: () => { if (this.extensions.get(id) === settings && this.extensions.delete(id)) this.#capabilities = undefined } }
  }

  tool(name: string, definition: ToolDefinition<any>, handler: ToolHandler<any>): Registration<ToolDefinition<any>> {
    if (typeof name !== 'string' || name.length === 0) throw new TypeError('A tool needs a name')
    if (this.tools.has(name)) throw new TypeError(`Tool ${JSON.stringify(name)} is already registered`)
    // MCP tool names (SEP-986) are SHOULDs: a name outside them is served, and warned about once.
    const issues = toolNameIssues(name)
    if (issues.length > 0) this.report(new ToolNameWarning(name, issues))
    const entry = { name, handler, isEnabled: true } as ToolEntry
    const apply = (next: ToolDefinition) => applyToolDefinition(entry, next, this.jsonSchema)
    apply(definition)
    this.tools.set(name, entry)
    this.changed('tools')
    return this.#registry.registration(`tool:${name}`, entry, apply, () => this.tools.get(name) === entry && this.tools.delete(name) && this.changed('tools'), 'tools')
  }

  resource(uri: string, definition: ResourceDefinition, handler: ResourceHandler): Registration<ResourceDefinition> {
    if (this.resources.has(uri)) throw new TypeError(`Resource ${JSON.stringify(uri)} is already registered`)
    const entry = { uri, handler, isEnabled: true } as ResourceEntry
    const apply = (next: ResourceDefinition) => {
      entry.definition = next
      const { cache: _cache, ...described } = next
      entry.wire = compact({ uri, ...described }) as Resource
    }
    apply(definition)
    this.resources.set(uri, entry)
    this.changed('resources')
    return this.#registry.registration(`resource:${uri}`, entry, apply, () => this.resources.get(uri) === entry && this.resources.delete(uri) && this.changed('resources'), 'resources')
  }

  resourceTemplate(template: string, definition: ResourceTemplateDefinition, handler: TemplateHandler): Registration<ResourceTemplateDefinition> {
    if (this.templates.has(template)) throw new TypeError(`Resource template ${JSON.stringify(template)} is already registered`)
    const entry = { template: uriTemplate(template), handler, isEnabled: true } as TemplateEntry
    const apply = (next: ResourceTemplateDefinition) => {
      entry.definition = next
      const { list: _list, complete: _complete, cache: _cache, ...described } = next
      entry.wire = compact({ uriTemplate: template, ...described }) as ResourceTemplate
    }
    apply(definition)
    this.templates.set(template, entry)
    this.changed('resources')
    return this.#registry.registration(`template:${template}`, entry, apply, () => this.templates.get(template) === entry && this.templates.delete(template) && this.changed('resources'), 'resources')
  }

  prompt(name: string, definition: PromptDefinition<any>, handler: PromptHandler<any>): Registration<PromptDefinition<any>> {
    if (this.prompts.has(name)) throw new TypeError(`Prompt ${JSON.stringify(name)} is already registered`)
    const entry = { name, handler, isEnabled: true } as PromptEntry
    const apply = (next: PromptDefinition) => applyPromptDefinition(entry, next)
    apply(definition)
    this.prompts.set(name, entry)
    this.changed('prompts')
    return this.#registry.registration(`prompt:${name}`, entry, apply, () => this.prompts.get(name) === entry && this.prompts.delete(name) && this.changed('prompts'), 'prompts')
  }

  /** Marks a list changed; sessions hear of it once, at the end of the current microtask. */
  changed(kind: ListKind): true {
    this.#capabilities = undefined
    this.tasks?.changed()
    if (this.#events.observed) this.#lists.add(kind)
    return true
  }

  /**
   * The capabilities a session is offered: what is registered, plus what the options add. Kept
   * until the registries change (every request of the modern era asks).
   */
  capabilities(): ServerCapabilities {
    return this.#capabilities ??= offeredCapabilities(this)
  }
  #capabilities: ServerCapabilities | undefined

  notifyResourceUpdated(uri: string): void {
    this.#emit({ type: 'resource_updated', uri })
  }

  mount(prefix: string, source: McpServer | Mountable, options: MountOptions = {}): Mount {
    return this.#mounts.mount(prefix, source, options)
  }

  /** The mounts in place and the watches their sources keep (close() removes the mounts). */
  readonly #mounts = new ServerMounts(this)

  subscribed(uri: string): Promise<void> | undefined { return this.#mounts.subscribed(uri) }
  unsubscribed(uri: string): void { this.#mounts.unsubscribed(uri) }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    for (const session of this.#sessions) session.log(level, data, logger)
  }

  listen(transport: Transport): Promise<ServerSession>
  listen(transportServer: TransportServer): Promise<TransportServer>
  async listen(source: Transport | TransportServer): Promise<ServerSession | TransportServer> {
    if (this.#telemetryLoaded !== undefined) await this.#telemetryLoaded
    // What was registered so far is this instance's boot configuration: from now on, changes are shared.
    this.#registry.start()
    if (!('connections' in source)) return this.#open(source)
    const subscription = source.connections.subscribe({
      next: transport => { this.#open(transport) },
      error: error => this.report(error),
    })
    // Requests that belong to no session come with their reply: each is served as it is.
    if (source.requests !== undefined) {
      subscription.add(source.requests.subscribe({
        next: envelope => serveSessionless(this, envelope),
        error: error => this.report(error),
      }))
    }
    this.#listeners.set(source, subscription)
    if (source.gauges !== undefined) this.#observeGauges(source.gauges())
    await source.start?.()
    return source
  }

  /**
   * What a listener counts about itself (SSE events stored), as gauges, only with telemetry: one
   * gauge per name, reporting the sum over every listener that has it (two HTTP listeners' stores).
   */
  #observeGauges(gauges: readonly TransportGauge[]): void {
    const instrumentation = this.instrumentation
    if (instrumentation?.observe === undefined) return
    for (const gauge of gauges) {
      const same = this.#gauges.get(gauge.name)
      if (same !== undefined) { same.push(gauge); continue }
      const all = [gauge]
      this.#gauges.set(gauge.name, all)
      instrumentation.observe(gauge.name, gauge.description, () => all.reduce((sum, each) => sum + each.read(), 0), gauge.unit)
    }
  }

  #open(transport: Transport): ServerSession {
    const session = new Session(this, transport)
    this.#sessions.add(session)
    // A legacy session hears list changes (once operating) and updates of what it subscribed to:
    // through one subscription for all sessions, held while there is one (see #toSessions).
    this.#sessionEvents ??= this.#events.subscribe(event => this.#toSessions(event))
    void session.closed.then(() => {
      this.#sessions.delete(session)
      if (this.#sessions.size > 0) return
      this.#sessionEvents?.unsubscribe()
      this.#sessionEvents = undefined
    })
    session.connection.start()
    return session
  }

  /**
   * An event of the bus to every legacy session, in the order they opened: a list change (sent once
   * operating), an update of a resource (sent where subscribed), a task's status (to its session).
   * One session's failure is reported and the others still hear it.
   */
  #toSessions(event: ServerEvent): void {
    const memo = event.type === 'list_changed' ? this.#lists.memo() : undefined
    for (const session of this.#sessions) {
      try {
        if (event.type === 'list_changed') {
          if (this.#lists.tells(session, session.principal, event.kind, memo)) session.listChanged(event.kind)
        }
        else if (event.type === 'resource_updated') session.resourceUpdated(event.uri)
        else if (event.sessionId === session.id) session.taskChanged(event.task)
      } catch (error) { this.report(error) }
    }
  }

  /**
   * An event raised here: to this server's bus, and to the other instances when they share it. A
   * list change stays here: each instance raises its own when its registry changes (a runtime
   * change reaches them through the registry sync), so each session hears it once.
   */
  #emit(event: ServerEvent): void {
    this.#events.next(event)
    if (event.type !== 'list_changed') this.options.eventBus?.publish(event)
  }

  /**
   * Leaves gracefully (see McpServer.drain): health says `draining`, every listener drains (in
   * parallel), the sessions of plain transports (stdio, WebSocket without a drain) are given the
   * time left for their requests in flight, then the server closes.
   */
  async drain(options: DrainOptions = {}): Promise<void> {
    if (this.#registry.status !== 'serving') return this.#drained
    this.#registry.setStatus('draining')
    options.onProgress?.('draining')
    const timeoutMs = options.timeoutMs ?? DRAIN_DEFAULTS.timeoutMs
    const deadline = Date.now() + timeoutMs
    this.#drained = (async () => {
      await Promise.all([...this.#listeners.keys()].map(listener => listener.drain?.(options)))
      // What is left: sessions of single transports (stdio, memory) and of listeners without a drain.
      while (Date.now() < deadline && [...this.#sessions].some(session => session.connection.incoming.size > 0)) {
        await new Promise<void>(resolve => timer(DRAIN_POLL_MS, this.options.scheduler).subscribe(() => resolve()))
      }
      await this.close()
    })()
    return this.#drained
  }
  #drained: Promise<void> = Promise.resolve()

  async close(): Promise<void> {
    this.#mounts.close()
    this.#registry.close()
    this.#telemetryEvents?.unsubscribe()
    this.#closing.next()
    this.#closing.complete()
    const listeners = [...this.#listeners]
    this.#listeners.clear()
    for (const [, subscription] of listeners) subscription.unsubscribe()
    await Promise.all([...listeners.map(([listener]) => listener.close()), ...[...this.#sessions].map(session => session.close())])
    await this.tasks.close()
  }

  report(error: unknown): void {
    if (this.options.reportUnhandledError) this.options.reportUnhandledError(error)
    else if (error instanceof ToolNameWarning || error instanceof ProgressWarning || error instanceof RegistryMismatchWarning) console.warn(`[rxmcp] ${error.message}`)
    else console.error('[rxmcp]', error)
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The versions of each era among `given` (default: every revision rxmcp speaks), newest first. */
function versionsOf(given: readonly string[] | undefined): { all: readonly string[]; legacy: readonly string[]; modern: readonly string[] } {
  const all = given ?? [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS]
  return { all, legacy: all.filter(version => !isModernVersion(version)), modern: all.filter(isModernVersion) }
}
