import { BehaviorSubject, Observable, Subject, defer, timer, type Subscription } from '../../lib/rx.ts'
import { DRAIN_DEFAULTS, type DrainOptions, type Transport, type TransportGauge, type TransportServer } from '../../lib/transport.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { checkSchemaShape, jsonSchemaSource, type JsonSchemaSource } from '../../lib/validator.ts'
import { isStandardSchema, standardJsonSchema, type StandardSchemaV1 } from '../../lib/standard-schema.ts'
import { uriTemplate } from '../../lib/uri-template.ts'
import { ToolNameWarning, toolNameIssues } from '../../lib/tool-names.ts'
import { ProgressWarning } from '../../lib/operators/progress.ts'
import type {
  Implementation, LoggingLevel, Prompt, PromptArgument, Resource, ResourceTemplate, ServerCapabilities, Tool,
} from '../../lib/schema/types.ts'
import { compact, compileToolSchemas, type ListKind, type PromptEntry, type ResourceEntry, type TemplateEntry, type ToolEntry } from './registry.ts'
import {
  type McpServer, type PromptDefinition, type PromptHandler, type Registration,
  type ResourceDefinition, type ResourceHandler, type ResourceTemplateDefinition, type ServerSession,
  type TemplateHandler, type ToolDefinition, type ToolHandler,
  type CacheHint, type MethodHandler, type MethodOptions, type McpHandler, type Middleware, type ServerContext, type ServerHealth,
} from './api.ts'
import type { BusEvent, ServerEvent } from '../../lib/events.ts'
import { RegistryMismatchWarning, RegistrySync, type SyncedEntry } from './registry-sync.ts'
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
import { ListViews } from './list-views.ts'
import { createActorSystem, type ActorSystem } from '../actor.ts'
import { deferredMountable, mountSource } from './mount.ts'
import type { Mount, Mountable, MountOptions } from './mountable.ts'

export type { ListKind }
import { LEGACY_TASKS_CAPABILITY, ServerTasks, TASKS_EXTENSION } from './tasks.ts'

const ANY_OBJECT_SCHEMA = Object.freeze({ type: 'object' as const })
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
  /** The sessions' one subscription to the event bus, while there are sessions (see #toSessions). */
  #sessionEvents: Subscription | undefined
  /** Transport servers being listened on, with the subscription to their sessions. */
  readonly #listeners = new Map<TransportServer, Subscription>()
  /** The listeners' gauges by name (telemetry on): one gauge per name reports the sum over listeners. */
  readonly #gauges = new Map<string, TransportGauge[]>()
  /** Lists that changed since the last flush; list_changed goes out once per microtask. */
  readonly #changed = new Set<ListKind>()
  /** The event bus (see McpServer.events). */
  readonly #events = new Subject<ServerEvent>()
  readonly events: Observable<ServerEvent> = this.#events.asObservable()
  /** Emits once when the server starts closing: listen streams end with their result first. */
  readonly #closing = new Subject<void>()
  /** The subscription to other instances' events (ServerOptions.eventBus). */
  readonly #remote: Subscription | undefined
  /** The registry shared with the other instances (with ServerOptions.eventBus). */
  readonly #sync: RegistrySync | undefined
  /** See McpServer.health. */
  readonly #health = new BehaviorSubject<ServerHealth>({ status: 'serving', registry: { status: 'alone', digest: undefined, differences: [] } })
  readonly health: Observable<ServerHealth> = this.#health.asObservable()
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
    this.system = createActorSystem({ name: info.name, scheduler: options.scheduler, reportError: error => this.report(error) })
    this.router = new Router(this)
    this.listViews = options.listVisibility === undefined ? undefined : new ListViews(options.listVisibility, kind => this.#listed(kind))
    this.tasks = new ServerTasks(this, event => this.#emit(event))
    // Other instances' events come in as if raised here; this server's own go out through #emit.
    // What they tell of their registries goes to the sync, never on `events`.
    const bus = options.eventBus
    if (bus !== undefined) {
      const sync = this.#sync = new RegistrySync(bus, { entries: () => this.#registryEntries(), report: error => this.report(error), scheduler: options.scheduler })
      this.#remote = bus.remote.subscribe((event: BusEvent) => { if (event.type === 'registry') sync.receive(event); else this.#events.next(event) })
      this.#remote.add(sync.health.subscribe(registry => this.#health.next({ ...this.#health.value, registry })))
    }
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
    const apply = (next: ToolDefinition) => {
      const label = `Tool ${JSON.stringify(name)}`
      const standard = isStandardSchema(next.inputSchema) ? next.inputSchema : undefined
      if (standard === undefined && next.inputJsonSchema !== undefined) throw new TypeError(`${label}: inputJsonSchema goes with a Standard Schema inputSchema`)
      const inputSchema = standard !== undefined ? wireSchemaOf(standard, next.inputJsonSchema, label, 'inputSchema', 'input') : next.inputSchema ?? ANY_OBJECT_SCHEMA
      if (!isJsonObject(inputSchema) || inputSchema.type !== 'object') throw new TypeError(`${label}: inputSchema must have type "object"`)
      const standardOutput = isStandardSchema(next.outputSchema) ? next.outputSchema : undefined
      if (standardOutput === undefined && next.outputJsonSchema !== undefined) throw new TypeError(`${label}: outputJsonSchema goes with a Standard Schema outputSchema`)
      const outputSchema = standardOutput !== undefined ? wireSchemaOf(standardOutput, next.outputJsonSchema, label, 'outputSchema', 'output') : next.outputSchema
      if (standardOutput !== undefined && (outputSchema as JsonObject).type !== 'object') throw new TypeError(`${label}: outputSchema must have type "object"`)
      entry.definition = next
      entry.standardInput = standard
      entry.standardOutput = standardOutput
      entry.jsonInput = next.inputSchema === undefined || standard !== undefined ? undefined : inputSchema
      entry.jsonOutput = next.outputSchema === undefined || standardOutput !== undefined ? undefined : next.outputSchema as object
      if (entry.jsonOutput !== undefined) checkSchemaShape(entry.jsonOutput)
      if (entry.jsonInput !== undefined) checkSchemaShape(entry.jsonInput)
      entry.validateInput = entry.validateOutput = undefined
      entry.headerParams = undefined
      // JSON Schemas compile on the tool's first call, when the validator loads: importing rxmcp
      // and answering initialize never pay for it. Once it is loaded, they compile here.
      const compiler = this.jsonSchema.loaded()
      if (compiler !== undefined) compileToolSchemas(entry, compiler, TypeError)
      entry.wire = compact({
        name, title: next.title, description: next.description, inputSchema, outputSchema,
        annotations: next.annotations, icons: next.icons, execution: next.execution, _meta: next._meta,
      }) as Tool
    }
    apply(definition)
    this.tools.set(name, entry)
    this.changed('tools')
    return this.#registration(`tool:${name}`, entry, apply, () => this.tools.get(name) === entry && this.tools.delete(name) && this.changed('tools'), 'tools')
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
    return this.#registration(`resource:${uri}`, entry, apply, () => this.resources.get(uri) === entry && this.resources.delete(uri) && this.changed('resources'), 'resources')
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
    return this.#registration(`template:${template}`, entry, apply, () => this.templates.get(template) === entry && this.templates.delete(template) && this.changed('resources'), 'resources')
  }

  prompt(name: string, definition: PromptDefinition<any>, handler: PromptHandler<any>): Registration<PromptDefinition<any>> {
    if (this.prompts.has(name)) throw new TypeError(`Prompt ${JSON.stringify(name)} is already registered`)
    const entry = { name, handler, isEnabled: true } as PromptEntry
    const apply = (next: PromptDefinition) => {
      const { complete: _complete, argumentsSchema: schema, argumentsJsonSchema: jsonSchema, ...described } = next
      const label = `Prompt ${JSON.stringify(name)}`
      if (schema !== undefined && !isStandardSchema(schema)) throw new TypeError(`${label}: argumentsSchema must be a Standard Schema (zod 4, valibot, arktype)`)
      if (schema === undefined && jsonSchema !== undefined) throw new TypeError(`${label}: argumentsJsonSchema goes with argumentsSchema`)
      // Arguments given by hand win; otherwise they are read off the schema's JSON Schema.
      const listed = schema === undefined || described.arguments !== undefined ? described.arguments
        : promptArgumentsOf(wireSchemaOf(schema, jsonSchema, label, 'argumentsSchema', 'input'), label)
      entry.definition = next
      entry.standardArguments = schema
      entry.wire = compact({ name, ...described, arguments: listed }) as Prompt
    }
    apply(definition)
    this.prompts.set(name, entry)
    this.changed('prompts')
    return this.#registration(`prompt:${name}`, entry, apply, () => this.prompts.get(name) === entry && this.prompts.delete(name) && this.changed('prompts'), 'prompts')
  }

  /**
   * The handle of one entry. With a bus (scale-out), what it changes at runtime goes to every
   * instance (registry-sync.ts), and what another instance changed comes in through `synced`.
   */
  #registration<D>(key: string, entry: { definition: D; isEnabled: boolean }, apply: (next: D) => void, remove: () => unknown, kind: ListKind): Registration<D> {
    const sync = this.#sync
    const setEnabled = (isEnabled: boolean) => { if (entry.isEnabled !== isEnabled) { entry.isEnabled = isEnabled; this.changed(kind) } }
    const removeHere = () => { sync?.delete(key, synced); remove() }
    const synced: SyncedEntry = {
      apply: (field, value, isSet) => {
        if (field === 'enabled') return setEnabled(value === true)
        if (field === 'removed') return removeHere()
        if (!field.startsWith('def.')) return
        const next = { ...entry.definition } as Record<string, unknown>
        if (isSet) next[field.slice(4)] = value
        else delete next[field.slice(4)]
        apply(next as D)
        this.changed(kind)
      },
    }
    sync?.add(key, synced)
    return {
      update: changes => {
        apply({ ...entry.definition, ...changes })
        this.changed(kind)
        if (sync === undefined) return
        const kept: string[] = []
        for (const [name, value] of Object.entries(changes)) if (!sync.local(key, `def.${name}`, value, value !== undefined)) kept.push(name)
        if (kept.length > 0) this.report(new RegistryMismatchWarning(`${key}: the update of ${kept.join(', ')} holds on this instance only: a function or a Standard Schema cannot go to the other instances (give each the same code, or JSON Schemas)`))
      },
      enable: () => { setEnabled(true); sync?.local(key, 'enabled', true) },
      disable: () => { setEnabled(false); sync?.local(key, 'enabled', false) },
      get isEnabled() { return entry.isEnabled },
      remove: () => { removeHere(); sync?.local(key, 'removed', true) },
    }
  }

  /** Every entry as the registry digest sees it: its wire form and whether it is enabled. */
  #registryEntries(): Map<string, unknown> {
    const entries = new Map<string, unknown>()
    for (const [name, entry] of this.tools) entries.set(`tool:${name}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    for (const [uri, entry] of this.resources) entries.set(`resource:${uri}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    for (const [template, entry] of this.templates) entries.set(`template:${template}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    for (const [name, entry] of this.prompts) entries.set(`prompt:${name}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    return entries
  }

  /** Marks a list changed; sessions hear of it once, at the end of the current microtask. */
  changed(kind: ListKind): true {
    this.#capabilities = undefined
    this.tasks?.changed()
    if (!this.#events.observed) return true
    if (this.#changed.size === 0) queueMicrotask(() => this.#flushChanged())
    this.#changed.add(kind)
    return true
  }

  /** The enabled items of a list, in their wire form (templates with the resources). */
  *#listed(kind: ListKind): Iterable<JsonObject> {
    const entries = kind === 'tools' ? this.tools.values() : kind === 'prompts' ? this.prompts.values() : this.resources.values()
    for (const entry of entries) if (entry.isEnabled) yield entry.wire as unknown as JsonObject
    if (kind === 'resources') for (const entry of this.templates.values()) if (entry.isEnabled) yield entry.wire as unknown as JsonObject
  }

  #flushChanged(): void {
    const kinds = [...this.#changed]
    this.#changed.clear()
    for (const kind of kinds) this.#emit({ type: 'list_changed', kind })
  }

  /**
   * The capabilities a session is offered: what is registered, plus what the options add. Kept
   * until the registries change (every request of the modern era asks).
   */
  capabilities(): ServerCapabilities {
    return this.#capabilities ??= this.#computeCapabilities()
  }
  #capabilities: ServerCapabilities | undefined

  #computeCapabilities(): ServerCapabilities {
    const declared = this.options.capabilities ?? {}
    const capabilities: ServerCapabilities = { ...declared, logging: declared.logging ?? {} }
    if (this.tools.size > 0 || declared.tools) capabilities.tools = { listChanged: true, ...declared.tools }
    if (this.resources.size > 0 || this.templates.size > 0 || declared.resources) {
      capabilities.resources = { subscribe: true, listChanged: true, ...declared.resources }
    }
    if (this.prompts.size > 0 || declared.prompts) capabilities.prompts = { listChanged: true, ...declared.prompts }
    if (declared.completions || this.#hasCompleters()) capabilities.completions = { ...declared.completions }
    if (this.extensions.size > 0) capabilities.extensions = { ...declared.extensions, ...Object.fromEntries(this.extensions) }
    if (this.tasks.isEnabled) {
      // Both declarations: initialize (2025-11-25) reads `tasks`, server/discover the extension (and drops `tasks`).
      capabilities.tasks ??= LEGACY_TASKS_CAPABILITY as unknown as JsonObject
      capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: capabilities.extensions?.[TASKS_EXTENSION] ?? {} }
    }
    return capabilities
  }

  #hasCompleters(): boolean {
    for (const entry of this.prompts.values()) if (entry.definition.complete || entry.mount?.completions) return true
    for (const entry of this.templates.values()) if (entry.definition.complete || entry.mount?.completions) return true
    return false
  }

  notifyResourceUpdated(uri: string): void {
    this.#emit({ type: 'resource_updated', uri })
  }

  mount(prefix: string, source: McpServer | Mountable, options: MountOptions = {}): Mount {
    // The proxy (and with it the client) loads when a server is first mounted, not with the server.
    const mountable = isMountable(source) ? source : deferredMountable(() => import('../proxy.ts').then(proxy => proxy.mountableServer(source, options.mode)), options.mode)
    const mount = mountSource(this.#mountHost, prefix, mountable, options)
    this.#mounts.add(mount)
    return { remove: () => { this.#mounts.delete(mount); mount.remove() } }
  }

  /** The mounts in place: close() removes them (and so closes the clients they made). */
  readonly #mounts = new Set<Mount>()

  /** What a mount reaches of this server (its registries, list changes, logging, watches). */
  get #mountHost() {
    const server = this
    return this.#mountHostMemo ??= {
      tools: this.tools, resources: this.resources, templates: this.templates, prompts: this.prompts,
      changed: (kind: ListKind) => { server.changed(kind) },
      log: (level: LoggingLevel, data: unknown, logger?: string) => server.log(level, data, logger),
      report: (error: unknown) => server.report(error),
      mountsChanged: () => server.#rewatch(),
    }
  }
  #mountHostMemo: Parameters<typeof mountSource>[0] | undefined

  /** How many sessions and listen streams subscribe to each URI now. */
  readonly #subscribers = new Map<string, number>()
  /** The watch a mounted source keeps on each subscribed URI it owns, with that source. */
  readonly #watches = new Map<string, { source: Mountable; subscription: Subscription }>()

  subscribed(uri: string): void {
    const count = (this.#subscribers.get(uri) ?? 0) + 1
    this.#subscribers.set(uri, count)
    if (count === 1) this.#watch(uri)
  }

  unsubscribed(uri: string): void {
    const count = this.#subscribers.get(uri)
    if (count === undefined) return
    if (count > 1) { this.#subscribers.set(uri, count - 1); return }
    this.#subscribers.delete(uri)
    this.#watches.get(uri)?.subscription.unsubscribe()
    this.#watches.delete(uri)
  }

  /** Asks the mounted source owning `uri` (if one does) to watch it; its updates go to the subscribers. */
  #watch(uri: string): void {
    const source = this.#ownerOf(uri)
    if (source === undefined) return
    const subscription = source.watch(uri).subscribe({ next: () => this.notifyResourceUpdated(uri), error: error => this.report(error) })
    this.#watches.set(uri, { source, subscription })
  }

  /** The mounted source a URI belongs to: its resource's, else the first template matching it; undefined when this server's own. */
  #ownerOf(uri: string): Mountable | undefined {
    const resource = this.resources.get(uri)
    if (resource !== undefined) return resource.mount?.source
    for (const entry of this.templates.values()) if (entry.template.match(uri) !== undefined) return entry.mount?.source
    return undefined
  }

  /** Mounts changed: each subscribed URI is watched by its owner now (a new one, or none). */
  #rewatch(): void {
    for (const uri of this.#subscribers.keys()) {
      const watch = this.#watches.get(uri)
      if (watch !== undefined && watch.source === this.#ownerOf(uri)) continue
      watch?.subscription.unsubscribe()
      this.#watches.delete(uri)
      this.#watch(uri)
    }
  }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    for (const session of this.#sessions) session.log(level, data, logger)
  }

  listen(transport: Transport): Promise<ServerSession>
  listen(transportServer: TransportServer): Promise<TransportServer>
  async listen(source: Transport | TransportServer): Promise<ServerSession | TransportServer> {
    if (this.#telemetryLoaded !== undefined) await this.#telemetryLoaded
    // What was registered so far is this instance's boot configuration: from now on, changes are shared.
    this.#sync?.start()
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
    // One view per principal for this change, whatever the number of its sessions.
    const memo = event.type === 'list_changed' && this.listViews !== undefined ? new Map<string, string>() : undefined
    for (const session of this.#sessions) {
      try {
        if (event.type === 'list_changed') {
          if (this.listViews === undefined || this.listViews.changed(session, session.principal, event.kind, memo)) session.listChanged(event.kind)
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
    if (this.#health.value.status !== 'serving') return this.#drained
    this.#health.next({ ...this.#health.value, status: 'draining' })
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
    for (const mount of this.#mounts) mount.remove()
    this.#mounts.clear()
    if (this.#health.value.status !== 'closed') this.#health.next({ ...this.#health.value, status: 'closed' })
    this.#health.complete()
    this.#sync?.close()
    this.#remote?.unsubscribe()
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

/** True for a {@link Mountable} (a proxy), false for a server. */
function isMountable(source: McpServer | Mountable): source is Mountable {
  return typeof (source as Mountable).forward === 'function' && 'offers' in source
}

/**
 * The JSON Schema to send for a Standard Schema: the one the user gave, else the schema's own
 * conversion. Throws a TypeError naming the tool or prompt when there is neither.
 */
function wireSchemaOf(schema: StandardSchemaV1, given: JsonObject | undefined, label: string, key: string, direction: 'input' | 'output'): JsonObject {
  if (given !== undefined) return given
  let converted: JsonObject | undefined
  try {
    converted = standardJsonSchema(schema, direction)
  } catch (error) {
    throw new TypeError(`${label}: the ${schema['~standard'].vendor} schema of ${key} cannot be converted to JSON Schema (${error instanceof Error ? error.message : String(error)}); pass its JSON Schema as ${key.replace('Schema', 'JsonSchema')}`, { cause: error })
  }
  if (converted === undefined) {
    throw new TypeError(`${label}: the ${schema['~standard'].vendor} schema of ${key} has no JSON Schema converter; pass its JSON Schema as ${key.replace('Schema', 'JsonSchema')}`)
  }
  return converted
}

/** A prompt's arguments, read off the JSON Schema of an object: each property, its description, whether required. */
function promptArgumentsOf(schema: JsonObject, label: string): PromptArgument[] {
  if (schema.type !== 'object' || (schema.properties !== undefined && !isJsonObject(schema.properties))) {
    throw new TypeError(`${label}: argumentsSchema must describe an object`)
  }
  const required = Array.isArray(schema.required) ? schema.required : []
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const described = isJsonObject(property) ? property : {}
    return compact({
      name,
      title: typeof described.title === 'string' ? described.title : undefined,
      description: typeof described.description === 'string' ? described.description : undefined,
      required: required.includes(name),
    })
  })
}

/** The versions of each era among `given` (default: every revision rxmcp speaks), newest first. */
function versionsOf(given: readonly string[] | undefined): { all: readonly string[]; legacy: readonly string[]; modern: readonly string[] } {
  const all = given ?? [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS]
  return { all, legacy: all.filter(version => !isModernVersion(version)), modern: all.filter(isModernVersion) }
}
