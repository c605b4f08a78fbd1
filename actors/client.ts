import {
  Observable, Subject, asyncScheduler, defer, distinctUntilChanged, filter, lastValueFrom, map, mergeMap, switchMap, take, tap, throwIfEmpty,
} from '../lib/rx.ts'
import type { Instrumentation } from '../lib/request-observer.ts'
import { telemetryOf } from './telemetry-option.ts'
import { shapeForRevision } from '../lib/schema/shape.ts'
import { createConnection, type Connection, type RequestOptions } from '../lib/connection.ts'
import type { Transport } from '../lib/transport.ts'
import type { JsonObject, RequestId } from '../lib/jsonrpc/message.ts'
import { CapabilityError, ConnectionClosedError } from '../lib/jsonrpc/errors.ts'
import { createIdGenerator } from '../lib/jsonrpc/ids.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import { gateIncomingRequest } from '../lib/lifecycle.ts'
import { Feature } from '../lib/schema/negotiate.ts'
import { hasCapability } from '../lib/schema/capabilities.ts'
import { MODERN_PROTOCOL_VERSIONS, isModernVersion } from '../lib/schema/modern.ts'
import { resultOf, type RequestEvent } from '../lib/operators/progress.ts'
import {
  SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult, type ClientCapabilities, type Implementation, type ListToolsResult, type Root, type ServerCapabilities, type Tool,
} from '../lib/schema/types.ts'
import { createActorSystem, type ActorRef, type ActorSystem } from './actor.ts'
import type { Era } from './context.ts'
import { clientConnections, RECONNECT_DEFAULTS } from './client/connection.ts'
import { backoff } from '../lib/operators/retry-policy.ts'
import { declaredCapabilities, inputHandlers, registerClientHandlers, type InputHandler } from './client/handlers.ts'
import { handshake } from './client/handshake.ts'
import { ModernRequests } from './client/modern-request.ts'
import { ToolTaskSupportError } from './client/errors.ts'
import { ResourceSubscriptions, listenLegacy, listenModern } from './client/listen.ts'
import { listenAcross } from './client/listen-across.ts'
import { INVALIDATING_NOTIFICATIONS, ResultCache } from './client/cache.ts'
import { ToolCatalog } from './client/tool-catalog.ts'
import { jsonSchemaSource } from '../lib/validator.ts'
import { clientLogic, type ClientEvent, type ClientStateSource } from './client/state.ts'
import { gateOutgoing } from './client/gate-outgoing.ts'
import { withTaskRequests } from './client/task-requests.ts'
import { UrlElicitations } from './client/url-elicitations.ts'
import { rootsProblem } from '../lib/schema/input-requests.ts'
import { ClientSkills } from './client/skills.ts'
import { ClientCalls, cursorParams, resultOfLast } from './client/calls.ts'
import {
  ClientTasks, callToolAsTask, lastResult, type CallToolAsTaskOptions, type TaskClientHost, type ToolTaskEvent,
} from './client/tasks.ts'
import {
  CLIENT_DEFAULTS, type CallToolOptions, type ClientMessage, type ClientOptions, type ClientState, type ListenEvent, type McpClient, type SubscriptionFilter,
} from './client/api.ts'

export { CLIENT_DEFAULTS, RECONNECT_DEFAULTS }
export { InputRoundsExceededError, InvalidResultError, InvalidToolError, NoCommonVersionError, ToolTaskSupportError } from './client/errors.ts'
export { ClientTasks, TASK_POLL_DEFAULTS, readTask } from './client/tasks.ts'
export { ClientSkills } from './client/skills.ts'
export type { LoadedSkill, SkillFile } from './client/skills.ts'
export type { CallToolAsTaskOptions, TaskInfo, ToolTaskEvent } from './client/tasks.ts'
export type { TelemetryOptions } from '../lib/request-observer.ts'
export type {
  CallToolOptions, ClientEra, ClientOptions, ClientState, ElicitationHandler, ListenEvent, McpClient, SamplingHandler, ServerDescription, SubscriptionFilter,
} from './client/api.ts'

/**
 * Connects to a server over `transport` and resolves with the client once the era is settled
 * (see `ClientOptions.era`): by default it probes with `server/discover` and speaks MCP 2026-07-28
 * (stateless, `_meta` on every request) to a modern server, and falls back to the initialize
 * handshake (checking the version the server chose, then `notifications/initialized`) otherwise.
 *
 * Rejects (after closing the transport) with `UnsupportedVersionError` when a legacy server
 * chooses a version this client does not accept, `NoCommonVersionError` when a modern server
 * speaks none of this client's modern revisions, and with the server's error or `TimeoutError`
 * when the handshake fails.
 *
 * @example
 * const client = await connect(stdioClient({ command: 'node', args: ['server.js'] }), { name: 'me', version: '1' })
 * const result = await client.callTool('echo', { text: 'hi' })
 */
export async function connect(transport: Transport | (() => Transport), info: Implementation, options: ClientOptions = {}): Promise<McpClient> {
  // Telemetry's module and @opentelemetry/api load only when asked for.
  // Awaited only when asked for: without telemetry, the client is made in the caller's turn, as before.
  const loading = telemetryOf(options.telemetry)
  const instrumentation = loading === undefined ? undefined : await loading
  const client = new Client(typeof transport === 'function' ? transport : () => transport, info, options, instrumentation)
  try {
    await client.ready
  } catch (error) {
    await client.close()
    throw error
  }
  return client
}

class Client extends ClientCalls implements McpClient {
  /** The client's actors (see McpClient.system). */
  readonly system: ActorSystem
  /** The client actor: its lifecycle, era, version, log level and roots (see clientLogic). */
  readonly #actor: ActorRef<ClientMessage, ClientState>
  /** The client actor's state as of its latest snapshot (from the client's own subscription). */
  #state!: ClientState
  /** What the client's parts reach of its state: the latest snapshot, and the actor's mailbox. */
  readonly #source: ClientStateSource
  readonly closed: Promise<void>
  /** Resolves once the first handshake succeeded; rejects with its failure. */
  readonly ready: Promise<void>
  readonly #options: ClientOptions
  readonly #makeTransport: () => Transport
  readonly #capabilities: ClientCapabilities
  /** The sampling / elicitation / roots handlers, for live requests (legacy) and input requests (modern). */
  readonly #handlers: ReadonlyMap<string, InputHandler>
  /** Modern revisions spoken, newest first. */
  readonly #modernVersions: readonly string[]
  /** Cacheable results while fresh (`ClientOptions.cache`); undefined when off. */
  readonly #cache: ResultCache | undefined
  /** The modern request path (meta, input rounds, cache, corrections). */
  readonly #modern: ModernRequests
  /** What the client knows of listed tools: outputSchema validators, x-mcp-header parameters, task support. */
  readonly #tools: ToolCatalog
  /** Every live connection, one per session (see clientConnections); completes when the client is done. */
  readonly #connections: Observable<Connection>
  /** Emits once, from close(): ends the connection stream wherever it is (operating, handshake, backoff). */
  readonly #closing = new Subject<void>()
  /** The newest connection opened, live or not: the fast path of requests reads it. */
  #connection: Connection | undefined
  /**
   * Whether the newest connection's modern era was settled over Streamable HTTP, as the envelope of
   * its discover answer said (`requestInfo.transport`): its tools/call requests then carry the
   * `Mcp-Param-*` headers, so tools whose x-mcp-header annotations are invalid are left out.
   */
  #isOverStreamableHttp = false
  /** The id of the request the newest connection sent last (a listen stream matches notifications by it). */
  #lastRequestId: RequestId | undefined
  /** Modern era: what subscribeResource asked for, served by one listen stream. */
  readonly #resourceSubscriptions = new ResourceSubscriptions(filter => this.listen(filter), error => this.#options.reportUnhandledError?.(error))
  /** The URL elicitations given and not heard completed yet: the completions the client hears (see notifications). */
  readonly #urlElicitations = new UrlElicitations()
  /** Whether the client takes URL elicitations (declared elicitation.url), so -32042 errors are read for their ids. */
  readonly #isNotingUrlElicitations: boolean
  /** The completions of those, each once, whichever connection brought it; completes when the client is done. */
  readonly #elicitationCompletions = new Subject<JsonObject>()
  /** Set by close(): a drop after it is no reason to reconnect. */
  #isClosing = false
  #resolveClosed!: () => void

  /** What watches the client's connections (ClientOptions.telemetry), when asked for. */
  readonly #instrumentation: Instrumentation | undefined

  constructor(makeTransport: () => Transport, info: Implementation, options: ClientOptions, instrumentation: Instrumentation | undefined) {
    super()
    this.#options = options
    this.#instrumentation = instrumentation
    this.#tools = new ToolCatalog(jsonSchemaSource(options.jsonSchemaValidator ?? CLIENT_DEFAULTS.jsonSchemaValidator))
    this.#makeTransport = makeTransport
    // MCP roots: a root's uri MUST be a file:// URI; the client never holds another.
    if (options.roots !== undefined) checkRoots(options.roots)
    const declared = declaredCapabilities(options)
    const legacyAsked = options.protocolVersion !== undefined && !isModernVersion(options.protocolVersion) ? options.protocolVersion : CLIENT_DEFAULTS.protocolVersion
    this.#modernVersions = options.modernVersions ?? (isModernVersion(options.protocolVersion)
      ? [options.protocolVersion, ...MODERN_PROTOCOL_VERSIONS.filter(version => version !== options.protocolVersion)] : MODERN_PROTOCOL_VERSIONS)
    const cache = options.cache
    if (cache !== undefined && cache !== false) {
      const scheduler = options.scheduler ?? asyncScheduler
      this.#cache = new ResultCache(() => scheduler.now(), cache === true ? CLIENT_DEFAULTS.cacheMaxEntries : cache.maxEntries ?? CLIENT_DEFAULTS.cacheMaxEntries)
    }
    this.system = createActorSystem({ name: `client:${info.name}`, scheduler: options.scheduler, reportError: error => options.reportUnhandledError?.(error) })
    this.#actor = this.system.spawn(clientLogic(legacyAsked), {
      id: 'client',
      input: { status: 'awaiting-initialize', era: undefined, protocolVersion: legacyAsked, serverCapabilities: {}, roots: options.roots ?? [] },
      onEvent: event => this.#onEvent(event as ClientEvent),
    })
    this.#actor.snapshots.subscribe(snapshot => { this.#state = snapshot.state })
    const client = this
    this.#source = { get current() { return client.#state }, send: message => client.#actor.send(message) }
    const handlers = inputHandlers(options, declared, () => this.#state.roots, this.#urlElicitations)
    // The server's sampling and elicitation requests run as tasks when it asks (MCP 2025-11-25), if allowed.
    this.#capabilities = options.tasks === undefined || options.tasks === false ? declared
      : withTaskRequests(handlers, declared, options.tasks === true ? {} : options.tasks, error => options.reportUnhandledError?.(error))
    this.#handlers = handlers
    this.#isNotingUrlElicitations = hasCapability(this.#capabilities, ['elicitation', 'url'])
    this.#modern = new ModernRequests({
      state: this.#source, info, capabilities: this.#capabilities, handlers: this.#handlers, modernVersions: this.#modernVersions,
      maxInputRounds: options.maxInputRounds ?? CLIENT_DEFAULTS.maxInputRounds, cache: this.#cache,
      headersOf: (method, params) => this.#tools.headers.headersOfRequest(method, params),
      relistTools: connection => this.#relistTools(connection),
    })
    this.closed = new Promise(resolve => { this.#resolveClosed = resolve })
    let resolveReady!: () => void
    let rejectReady!: (error: unknown) => void
    this.ready = new Promise((resolve, reject) => { resolveReady = resolve; rejectReady = reject })
    this.#connections = clientConnections({
      open: () => this.#open(),
      initialize: connection => handshake({
        state: this.#source, info, capabilities: this.#capabilities, era: options.era ?? CLIENT_DEFAULTS.era, cache: this.#cache,
        modernVersions: this.#modernVersions, legacyVersions: options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS,
        probeTimeout: options.probeTimeout ?? CLIENT_DEFAULTS.probeTimeout, scheduler: options.scheduler,
        settledOver: requestInfo => { this.#isOverStreamableHttp = requestInfo?.transport === 'streamable-http' },
      }, connection),
      reconnect: options.reconnect === undefined ? undefined : backoff(options.reconnect, RECONNECT_DEFAULTS),
      scheduler: options.scheduler,
      isClosing: () => this.#isClosing,
      closing: this.#closing,
      onReconnecting: () => this.#actor.send({ type: 'reconnecting' }),
      reportError: error => options.reportUnhandledError?.(error),
    }, rejectReady)
    // The client's own subscription keeps the stream hot; its end is the client's end, once the
    // last transport has closed.
    this.#connections.subscribe({ next: resolveReady, complete: () => void this.#lastClosed().then(() => this.#finish()) })
  }

  get connection(): Connection { return this.#connection! }
  protected get resultCache(): ResultCache | undefined { return this.#cache }
  protected get resourceSubscriptions(): ResourceSubscriptions { return this.#resourceSubscriptions }

  #open(): Connection {
    const options = this.#options
    const transport = this.#makeTransport()
    const nextId = createIdGenerator()
    const connection = createConnection(transport, {
      gateRequest: request => gateIncomingRequest('client', this.#state.status, request.method),
      // MCP 2026-07-28: servers send no requests (what they need comes as input_required results),
      // and a client writes only requests and notifications (stdio, Streamable HTTP): whatever a
      // server sends, nothing is answered, not even with an error.
      canRespond: () => this.#state.era !== 'modern',
      gateOutgoing: (method, params) => gateOutgoing(this.#state, method, params),
      allowBatch: () => this.#state.era !== 'modern' && Feature.batch(this.#state.protocolVersion),
      // A legacy session's version goes with each message once initialize answered (HTTP sends it
      // as MCP-Protocol-Version); a modern request carries its own in _meta, read from there.
      protocolVersion: () => this.#state.era === 'legacy' ? this.#state.protocolVersion : undefined,
      // What goes out fits the negotiated revision (before the answer to initialize: the one asked for).
      shapeOutgoing: (kind, method, payload) => shapeForRevision(kind, method, payload, this.#state.protocolVersion),
      idGenerator: () => (this.#lastRequestId = nextId()),
      timeout: options.timeout,
      // Request timeouts run on the client's clock too (virtual in tests).
      scheduler: options.scheduler,
      captureStack: options.captureStack,
      inspect: options.inspect,
      observer: this.#instrumentation?.connection('client', transport, () => this.#state.protocolVersion),
      reportUnhandledError: options.reportUnhandledError,
    })
    this.#connection = connection
    this.#isOverStreamableHttp = false
    registerClientHandlers(connection, this.#handlers, this.#source, options.reportUnhandledError)
    // What a listing said of task support holds for the session that listed, until its tools change.
    this.#tools.forgetTaskSupport()
    connection.notifications('notifications/tools/list_changed').subscribe(() => this.#tools.forgetTaskSupport())
    // Read once per notification, not per subscriber: hearing a completion completes its elicitation.
    connection.notifications('notifications/elicitation/complete').subscribe(params => {
      if (this.#urlElicitations.complete(params)) this.#elicitationCompletions.next(params)
    })
    const cache = this.#cache
    if (cache !== undefined) {
      // MCP caching: a change notification makes the matching cached results stale at once.
      for (const method of INVALIDATING_NOTIFICATIONS) connection.notifications(method).subscribe(params => cache.invalidate(method, params))
    }
    connection.start()
    return connection
  }

  /** Resolves once the newest connection has closed (at once when none was opened). */
  async #lastClosed(): Promise<void> {
    await this.#connection?.closed
  }

  #finish(): void {
    this.#elicitationCompletions.complete()
    // The client actor ends (done) on `closed`; the system has nothing else running.
    this.#actor.send({ type: 'closed' })
    this.system.stop()
    this.#resolveClosed()
  }

  /** What the client actor asks for (its `emit` effects): the I/O its transitions decide on. */
  #onEvent(event: ClientEvent): void {
    switch (event.type) {
      case 'roots-changed': {
        const connection = this.#connection
        if (connection !== undefined && !connection.isClosed) void connection.notify('notifications/roots/list_changed')
      }
    }
  }

  get state(): ClientState { return this.#state }
  get states(): Observable<ClientState> { return this.#actor.snapshots.pipe(map(snapshot => snapshot.state), distinctUntilChanged()) }
  protected tell(message: ClientMessage): void { this.#actor.send(message) }
  get era(): Era | undefined { return this.#state.era }
  get serverInfo(): Implementation { return this.#state.serverInfo! }
  get serverCapabilities(): ServerCapabilities { return this.#state.serverCapabilities }
  get protocolVersion(): string { return this.#state.protocolVersion }
  get instructions(): string | undefined { return this.#state.instructions }

  request<R extends JsonObject = JsonObject>(method: string, params?: object, options?: RequestOptions): Observable<RequestEvent<R>> {
    return this.#request<R>(method, params as JsonObject | undefined, options)
  }

  /**
   * A request on whichever connection is live when it is subscribed: built before a reconnect and
   * subscribed after it, it goes to the new session. Never resent: a drop while it is in flight
   * fails it with `ConnectionClosedError` (the server may have acted on it already).
   */
  #request<R extends JsonObject>(method: string, params: JsonObject | undefined, options: RequestOptions | undefined): Observable<RequestEvent<R>> {
    return defer(() => this.#requestNow<R>(method, params, options))
  }

  /**
   * The request on the connection live now. The Promise methods subscribe at once, so they call
   * this directly: no `defer` layer per call on their path.
   */
  #requestNow<R extends JsonObject>(method: string, params: JsonObject | undefined, options: RequestOptions | undefined): Observable<RequestEvent<R>> {
    const connection = this.#connection
    // The fast path, the common case: an operating session takes the request as it is, with no
    // operator added on the way of its messages.
    if (connection !== undefined && !connection.isClosed && this.#state.status === 'operating') return this.#sendOn<R>(connection, method, params, options)
    // Between sessions: wait for the next live connection; none comes once the client closed or gave up.
    return this.#live(method).pipe(mergeMap(next => this.#sendOn<R>(next, method, params, options)))
  }

  /** The next live connection, once; errors with ConnectionClosedError when none will come. */
  #live(method: string): Observable<Connection> {
    return this.#connections.pipe(
      filter(next => !next.isClosed), take(1),
      throwIfEmpty(() => new ConnectionClosedError(`Cannot send ${method}: the connection is closed`)))
  }

  /** One request on `connection`, in the era it speaks: as it is (legacy), or through the modern path. */
  #sendOn<R extends JsonObject>(connection: Connection, method: string, params: JsonObject | undefined, options: RequestOptions | undefined): Observable<RequestEvent<R>> {
    if (this.#state.era === 'modern') return this.#modern.request<R>(connection, method, params, options)
    const events = connection.request<R>(method, params, options)
    // A -32042 names URL elicitations whose completion the client waits for; only a client that takes them notes it.
    return this.#isNotingUrlElicitations ? events.pipe(tap({ error: error => this.#urlElicitations.sawError(error) })) : events
  }


  async notify(method: string, params?: object): Promise<void> {
    const connection = this.#connection
    if (connection === undefined) throw new ConnectionClosedError(`Cannot send ${method}: the connection is closed`)
    await connection.notify(method, params as JsonObject | undefined)
  }

  notifications<P extends JsonObject = JsonObject>(method: string): Observable<P> {
    if (method === 'notifications/elicitation/complete') return this.#elicitationCompletions.asObservable() as Observable<P>
    // The live connection's notifications, switching at each reconnect; the stream of connections
    // completes when the client is done, and then so does this (at once when subscribed after).
    return this.#connections.pipe(filter(connection => !connection.isClosed), switchMap(connection => connection.notifications<P>(method)))
  }

  listen(asked: SubscriptionFilter): Observable<ListenEvent> {
    if (this.#options.reconnect === undefined) return this.#live('subscriptions/listen').pipe(switchMap(connection => this.#listenOn(connection, asked)))
    // A stream a drop ended goes again on the next connection (see listenAcross).
    return listenAcross(this.#connections, connection => this.#listenOn(connection, asked), () => this.#isClosing)
  }

  /** One listen stream on `connection`, in the era it speaks (see listenModern, listenLegacy). */
  #listenOn(connection: Connection, filter: SubscriptionFilter): Observable<ListenEvent> {
    return this.#state.era === 'modern'
      ? listenModern({
        connection,
        send: params => this.#modern.request(connection, 'subscriptions/listen', params, { progress: false, timeout: 0 }),
        lastRequestId: () => this.#lastRequestId,
        isClosing: () => this.#isClosing,
      }, filter)
      : listenLegacy({
        connection,
        capabilities: this.#state.serverCapabilities,
        call: (method, params) => lastValueFrom(connection.request(method, params, { progress: false })),
        isClosing: () => this.#isClosing,
        reportError: error => this.#options.reportUnhandledError?.(error),
      }, filter)
  }

  protected call<R>(method: string, params?: JsonObject, options?: RequestOptions): Promise<R> {
    // Without a progress token only the result can arrive: its event is the last one, no filtering needed.
    return lastValueFrom(this.#requestNow<JsonObject>(method, params, { progress: false, ...options })).then(resultOfLast) as Promise<R>
  }

  /**
   * The tools to show of a listed page (see ToolCatalog.remember). MCP 2026-07-28 Streamable HTTP:
   * a client MUST leave out tools whose x-mcp-header annotations are invalid, since it could not
   * send their `Mcp-Param-*` headers; elsewhere the annotations mean nothing and every tool stays.
   * Which transport that is comes from the transport's own word on a message (see
   * #isOverStreamableHttp), never from asking the transport object: learned once per connection,
   * as the era is, because a listed page may come from the cache, with no frame of its own.
   */
  protected rememberTools(listed: Tool[]): Promise<Tool[]> {
    const isExcluding = this.#state.era === 'modern' && this.#isOverStreamableHttp
    return this.#tools.remember(listed, isExcluding, error => this.#options.reportUnhandledError?.(error))
  }

  /** Lists every tool again on `connection`, past the cache: the headers of a call retried after -32020 come from it. */
  async #relistTools(connection: Connection): Promise<void> {
    this.#cache?.clear('tools/list')
    let cursor: string | undefined
    // Bounded: a server that hands out cursors forever does not keep the retry waiting forever.
    for (let page = 0; page < MAX_RELIST_PAGES; page++) {
      const result = resultOfLast(await lastValueFrom(this.#modern.request<ListToolsResult & JsonObject>(connection, 'tools/list', cursorParams(cursor), { progress: false })))
      await this.rememberTools(result.tools)
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined
      if (cursor === undefined) return
    }
  }

  async callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult> {
    const refusal = this.#mustRunAsTask(name)
    if (refusal !== undefined) throw refusal
    const onProgress = options?.onProgress
    const params: JsonObject = args === undefined ? { name } : { name, arguments: args }
    const events = this.#requestNow<CallToolResult & JsonObject>('tools/call', params, { ...options, progress: onProgress !== undefined })
    const result = onProgress === undefined ? resultOfLast(await lastValueFrom(events))
      : await lastValueFrom(events.pipe(tap(event => { if (event.type === 'progress') onProgress(event) }), resultOf()))
    return this.#tools.checkResult(name, result)
  }

  callToolAsTask(name: string, args?: Record<string, unknown>, options?: CallToolAsTaskOptions): Observable<ToolTaskEvent> {
    return callToolAsTask(this.#extensionHost, name, args, options)
  }

  /**
   * The refusal of a plain call to `name` (MCP 2025-11-25 tasks, tool-level negotiation: a tool
   * whose `execution.taskSupport` is "required" MUST be invoked as a task, on a server that
   * declared `tasks.requests.tools.call`), as the client last listed the tool; undefined when the
   * call may go (another era, another tool, or one not listed: the server decides).
   */
  #mustRunAsTask(name: string): ToolTaskSupportError | undefined {
    if (this.#state.era !== 'legacy' || this.#tools.taskSupport(name) !== 'required') return undefined
    const tasks = this.#state.serverCapabilities.tasks
    return isJsonObject(tasks) && isJsonObject(tasks.requests) && isJsonObject(tasks.requests.tools) && isJsonObject(tasks.requests.tools.call)
      ? new ToolTaskSupportError(name, 'required') : undefined
  }

  callToolAsTaskResult(name: string, args?: Record<string, unknown>, options?: CallToolAsTaskOptions): Promise<CallToolResult> {
    return lastResult(this.callToolAsTask(name, args, options))
  }

  /** What the tasks and skills code reach of this client. */
  get #extensionHost(): TaskClientHost {
    const client = this
    return this.#extensionHostMemo ??= {
      get era() { return client.era },
      get serverCapabilities() { return client.serverCapabilities as JsonObject },
      get protocolVersion() { return client.protocolVersion },
      scheduler: this.#options.scheduler,
      capabilities: this.#capabilities,
      handlers: this.#handlers,
      notifications: method => this.notifications(method),
      request: (method, params, options) => this.#request(method, params, options),
      taskSupport: name => this.#tools.taskSupport(name),
    }
  }
  #extensionHostMemo: TaskClientHost | undefined

  get tasks(): ClientTasks { return this.#tasks ??= new ClientTasks(this.#extensionHost) }
  #tasks: ClientTasks | undefined

  get skills(): ClientSkills { return this.#skills ??= new ClientSkills(this.#extensionHost) }
  #skills: ClientSkills | undefined

  callTool$(name: string, args?: Record<string, unknown>, options?: RequestOptions): Observable<RequestEvent<CallToolResult>> {
    const params: JsonObject = args === undefined ? { name } : { name, arguments: args }
    return defer(() => {
      const refusal = this.#mustRunAsTask(name)
      if (refusal !== undefined) throw refusal
      return this.#request<CallToolResult & JsonObject>('tools/call', params, options)
    }).pipe(
      map(event => event.type === 'result' ? { type: 'result' as const, result: this.#tools.checkResult(name, event.result) } : event))
  }

  setRoots(roots: Root[]): void {
    if (this.#capabilities.roots === undefined) throw new CapabilityError('This client did not declare roots; pass `roots` to connect()')
    checkRoots(roots)
    // The actor decides whether the server is told (see clientLogic), and asks for it as an event.
    this.#actor.send({ type: 'roots', roots })
  }

  async close(): Promise<void> {
    this.#isClosing = true
    this.#resourceSubscriptions.stop()
    // Ends the stream wherever it is; the session's teardown closes its connection.
    this.#closing.next()
    await this.#connection?.close()
    await this.closed
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

/** Most pages a re-listing after -32020 reads. */
const MAX_RELIST_PAGES = 100

/** Throws TypeError when a root's uri is not a file:// URI (MCP roots: it MUST be one). */
function checkRoots(roots: readonly Root[]): void {
  const problem = rootsProblem(roots)
  if (problem !== undefined) throw new TypeError(`Invalid roots: ${problem}`)
}
