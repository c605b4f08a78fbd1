import { Observable, Subject, defer, filter, from, lastValueFrom, map, mergeMap, switchMap, take, tap, throwIfEmpty } from '../lib/rx.ts'
import { shapeForRevision } from '../lib/schema/shape.ts'
import { createConnection, type Connection, type RequestOptions } from '../lib/connection.ts'
import type { Transport } from '../lib/transport.ts'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import { CapabilityError, ConnectionClosedError, InvalidParamsError, ProtocolError, UnsupportedVersionError } from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import { canSendRequest, gateIncomingRequest, stepLifecycle } from '../lib/lifecycle.ts'
import { Feature, isVersionAccepted } from '../lib/schema/negotiate.ts'
import { hasCapability, requiredCapability } from '../lib/schema/capabilities.ts'
import { paginate } from '../lib/operators/paginate.ts'
import { resultOf, type RequestEvent } from '../lib/operators/progress.ts'
import { loadJsonSchema, type Validator } from '../lib/validator.ts'
import {
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult, type ClientCapabilities, type CompleteParams, type CompleteResult, type GetPromptResult, type Implementation,
  type InitializeResult, type ListPromptsResult, type ListResourceTemplatesResult, type ListResourcesResult,
  type ListToolsResult, type LoggingLevel, type Prompt, type ReadResourceResult, type Resource, type ResourceTemplate,
  type Root, type ServerCapabilities, type Tool,
} from '../lib/schema/types.ts'
import { createActor, type ActorRef } from './actor.ts'
import { clientConnections, RECONNECT_DEFAULTS } from './client/connection.ts'
import { declaredCapabilities, registerClientHandlers } from './client/handlers.ts'
import { CLIENT_DEFAULTS, type CallToolOptions, type ClientMessage, type ClientOptions, type ClientState, type McpClient } from './client/api.ts'

export { CLIENT_DEFAULTS, RECONNECT_DEFAULTS }
export type { CallToolOptions, ClientOptions, ClientState, ElicitationHandler, McpClient, SamplingHandler } from './client/api.ts'

/**
 * Connects to a server over `transport`: sends initialize, checks the version the server chose,
 * sends `notifications/initialized`, and resolves with the client.
 *
 * Rejects with `UnsupportedVersionError` (after closing the transport) when the server answers
 * with a version this client does not accept, and with the server's error or `TimeoutError` when
 * initialize fails.
 *
 * @example
 * const client = await connect(stdioClient({ command: 'node', args: ['server.js'] }), { name: 'me', version: '1' })
 * const result = await client.callTool('echo', { text: 'hi' })
 */
export async function connect(transport: Transport | (() => Transport), info: Implementation, options: ClientOptions = {}): Promise<McpClient> {
  const client = new Client(typeof transport === 'function' ? transport : () => transport, info, options)
  try {
    await client.ready
  } catch (error) {
    await client.close()
    throw error
  }
  return client
}

class Client implements McpClient {
  readonly actor: ActorRef<ClientState, ClientMessage>
  readonly closed: Promise<void>
  /** Resolves once the first handshake succeeded; rejects with its failure. */
  readonly ready: Promise<void>
  readonly #info: Implementation
  readonly #options: ClientOptions
  readonly #makeTransport: () => Transport
  readonly #capabilities: ClientCapabilities
  /** outputSchema validators of tools seen in tools/list, by tool name. */
  readonly #outputValidators = new Map<string, Validator>()
  /** Every live connection, one per session (see clientConnections); completes when the client is done. */
  readonly #connections: Observable<Connection>
  /** Emits once, from close(): ends the connection stream wherever it is (operating, handshake, backoff). */
  readonly #closing = new Subject<void>()
  /** The newest connection opened, live or not: the fast path of requests reads it. */
  #connection: Connection | undefined
  /** Set by close(): a drop after it is no reason to reconnect. */
  #isClosing = false
  #resolveClosed!: () => void

  constructor(makeTransport: () => Transport, info: Implementation, options: ClientOptions) {
    this.#info = info
    this.#options = options
    this.#makeTransport = makeTransport
    this.#capabilities = declaredCapabilities(options)
    this.actor = createActor<ClientState, ClientMessage>({
      status: 'awaiting-initialize',
      protocolVersion: options.protocolVersion ?? CLIENT_DEFAULTS.protocolVersion,
      serverCapabilities: {},
      roots: options.roots ?? [],
    }, (state, message) => {
      switch (message.type) {
        case 'initialize': return { ...state, status: stepLifecycle(state.status, message) }
        case 'initialized': return {
          ...state, status: stepLifecycle(state.status, message), protocolVersion: message.result.protocolVersion,
          serverInfo: message.result.serverInfo, serverCapabilities: message.result.capabilities ?? {}, instructions: message.result.instructions,
        }
        case 'roots': return { ...state, roots: message.roots }
        // A fresh session: the handshake starts over, the version asked for is the first one again.
        case 'reconnecting': return { ...state, status: 'awaiting-initialize', protocolVersion: options.protocolVersion ?? CLIENT_DEFAULTS.protocolVersion }
        case 'closed': return { ...state, status: stepLifecycle(state.status, message) }
      }
    }, { name: `client:${info.name}` })
    this.closed = new Promise(resolve => { this.#resolveClosed = resolve })
    let resolveReady!: () => void
    let rejectReady!: (error: unknown) => void
    this.ready = new Promise((resolve, reject) => { resolveReady = resolve; rejectReady = reject })
    this.#connections = clientConnections({
      open: () => this.#open(),
      initialize: connection => this.#initialize(connection),
      reconnect: options.reconnect,
      scheduler: options.scheduler,
      isClosing: () => this.#isClosing,
      closing: this.#closing,
      onReconnecting: () => this.actor.send({ type: 'reconnecting' }),
      reportError: error => options.reportUnhandledError?.(error),
    }, rejectReady)
    // The client's own subscription keeps the stream hot; its end is the client's end, once the
    // last transport has closed.
    this.#connections.subscribe({ next: resolveReady, complete: () => void this.#lastClosed().then(() => this.#finish()) })
  }

  get connection(): Connection { return this.#connection! }

  #open(): Connection {
    const options = this.#options
    const transport = this.#makeTransport()
    const connection = createConnection(transport, {
      gateRequest: request => gateIncomingRequest('client', this.actor.state.status, request.method),
      gateOutgoing: (method, params) => this.#gateOutgoing(method, params),
      allowBatch: () => Feature.batch(this.actor.state.protocolVersion),
      // What goes out fits the negotiated revision (before the answer to initialize: the one asked for).
      shapeOutgoing: (kind, method, payload) => shapeForRevision(kind, method, payload, this.actor.state.protocolVersion),
      timeout: options.timeout,
      captureStack: options.captureStack,
      inspect: options.inspect,
      reportUnhandledError: options.reportUnhandledError,
    })
    this.#connection = connection
    registerClientHandlers(connection, this.#options, this.#capabilities, this.actor)
    connection.start()
    return connection
  }

  /** Resolves once the newest connection has closed (at once when none was opened). */
  async #lastClosed(): Promise<void> {
    await this.#connection?.closed
  }

  #finish(): void {
    this.actor.send({ type: 'closed' })
    void this.actor.stop()
    this.#resolveClosed()
  }

  get state(): ClientState { return this.actor.state }
  get states(): Observable<ClientState> { return this.actor.states }
  get serverInfo(): Implementation { return this.actor.state.serverInfo! }
  get serverCapabilities(): ServerCapabilities { return this.actor.state.serverCapabilities }
  get protocolVersion(): string { return this.actor.state.protocolVersion }
  get instructions(): string | undefined { return this.actor.state.instructions }

  /** The legacy handshake on a fresh connection; closes it and rejects when the handshake fails. */
  async #initialize(connection: Connection): Promise<void> {
    const supported = this.#options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS
    const params = { protocolVersion: this.actor.state.protocolVersion, capabilities: this.#capabilities, clientInfo: this.#info } as unknown as JsonObject
    const request = lastValueFrom(connection.request<InitializeResult & JsonObject>('initialize', params, { progress: false }).pipe(resultOf()))
    this.actor.send({ type: 'initialize' })
    let result: InitializeResult
    try {
      result = await request
    } catch (error) {
      await connection.close()
      throw error
    }
    if (!isVersionAccepted(result.protocolVersion, supported)) {
      // MCP lifecycle: a client that does not support the server's version SHOULD disconnect.
      await connection.close()
      throw new UnsupportedVersionError(String(result.protocolVersion), supported)
    }
    if (!isJsonObject(result.serverInfo)) {
      await connection.close()
      throw new ProtocolError('The initialize result has no serverInfo')
    }
    this.actor.send({ type: 'initialized', result })
    connection.transport.setProtocolVersion?.(result.protocolVersion)
    await connection.notify('notifications/initialized')
  }

  #gateOutgoing(method: string, params: JsonObject | undefined): Error | undefined {
    const state = this.actor.state
    if (!canSendRequest('client', state.status, method)) return new ProtocolError(`Cannot send ${method} while the session is ${state.status}`)
    const needed = requiredCapability(method, params)
    if (needed !== undefined && !hasCapability(state.serverCapabilities, needed)) {
      return new CapabilityError(`The server did not declare the ${needed.join('.')} capability, which ${method} needs`)
    }
    return undefined
  }



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
    if (connection !== undefined && !connection.isClosed && this.actor.state.status === 'operating') return connection.request<R>(method, params, options)
    // Between sessions: wait for the next live connection; none comes once the client closed or gave up.
    return this.#connections.pipe(
      filter(next => !next.isClosed), take(1),
      throwIfEmpty(() => new ConnectionClosedError(`Cannot send ${method}: the connection is closed`)),
      mergeMap(next => next.request<R>(method, params, options)))
  }

  async notify(method: string, params?: object): Promise<void> {
    const connection = this.#connection
    if (connection === undefined) throw new ConnectionClosedError(`Cannot send ${method}: the connection is closed`)
    await connection.notify(method, params as JsonObject | undefined)
  }

  notifications<P extends JsonObject = JsonObject>(method: string): Observable<P> {
    // The live connection's notifications, switching at each reconnect; the stream of connections
    // completes when the client is done, and then so does this (at once when subscribed after).
    return this.#connections.pipe(filter(connection => !connection.isClosed), switchMap(connection => connection.notifications<P>(method)))
  }

  #call<R>(method: string, params?: JsonObject, options?: RequestOptions): Promise<R> {
    // Without a progress token only the result can arrive: its event is the last one, no filtering needed.
    return lastValueFrom(this.#requestNow<JsonObject>(method, params, { progress: false, ...options })).then(resultOfLast) as Promise<R>
  }

  async ping(options?: RequestOptions): Promise<void> {
    await this.#call('ping', undefined, options)
  }

  tools(): Observable<Tool> {
    return paginate(cursor => this.request<ListToolsResult & JsonObject>('tools/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), mergeMap(result => from(this.#rememberTools(result.tools).then(() => result))), map(result => ({ items: result.tools, nextCursor: result.nextCursor }))))
  }

  async listTools(cursor?: string, options?: RequestOptions): Promise<ListToolsResult> {
    const result = await this.#call<ListToolsResult>('tools/list', cursorParams(cursor), options)
    await this.#rememberTools(result.tools)
    return result
  }

  /**
   * Keeps a validator for each tool's outputSchema. The JSON Schema compiler loads here, the first
   * time a listed tool has an outputSchema, so a client that never meets one never loads it.
   */
  async #rememberTools(tools: Tool[]): Promise<void> {
    if (!tools.some(tool => tool.outputSchema !== undefined)) {
      for (const tool of tools) this.#outputValidators.delete(tool.name)
      return
    }
    const { compileSchema, isSecureSchema } = await loadJsonSchema()
    for (const tool of tools) {
      // A server's schema is untrusted: one that could make validation slow on purpose is not run.
      if (tool.outputSchema === undefined || !isSecureSchema(tool.outputSchema)) { this.#outputValidators.delete(tool.name); continue }
      try { this.#outputValidators.set(tool.name, compileSchema(tool.outputSchema)) } catch { this.#outputValidators.delete(tool.name) }
    }
  }

  async callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult> {
    const onProgress = options?.onProgress
    const params: JsonObject = args === undefined ? { name } : { name, arguments: args }
    const events = this.#requestNow<CallToolResult & JsonObject>('tools/call', params, { ...options, progress: onProgress !== undefined })
    const result = onProgress === undefined ? resultOfLast(await lastValueFrom(events))
      : await lastValueFrom(events.pipe(tap(event => { if (event.type === 'progress') onProgress(event) }), resultOf()))
    return this.#checkToolResult(name, result)
  }

  callTool$(name: string, args?: Record<string, unknown>, options?: RequestOptions): Observable<RequestEvent<CallToolResult>> {
    const params: JsonObject = args === undefined ? { name } : { name, arguments: args }
    return this.#request<CallToolResult & JsonObject>('tools/call', params, options).pipe(
      map(event => event.type === 'result' ? { type: 'result' as const, result: this.#checkToolResult(name, event.result) } : event))
  }

  #checkToolResult(name: string, result: CallToolResult): CallToolResult {
    const validate = this.#outputValidators.get(name)
    if (validate === undefined || result.isError === true) return result
    if (result.structuredContent === undefined) throw new InvalidParamsError(`Tool ${name} has an outputSchema but returned no structuredContent`)
    const check = validate(result.structuredContent)
    if (!check.valid) throw new InvalidParamsError(`Tool ${name} returned structuredContent that does not match its outputSchema: ${check.message}`)
    return result
  }

  resources(): Observable<Resource> {
    return paginate(cursor => this.request<ListResourcesResult & JsonObject>('resources/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), map(result => ({ items: result.resources, nextCursor: result.nextCursor }))))
  }

  listResources(cursor?: string, options?: RequestOptions): Promise<ListResourcesResult> {
    return this.#call('resources/list', cursorParams(cursor), options)
  }

  resourceTemplates(): Observable<ResourceTemplate> {
    return paginate(cursor => this.request<ListResourceTemplatesResult & JsonObject>('resources/templates/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), map(result => ({ items: result.resourceTemplates, nextCursor: result.nextCursor }))))
  }

  listResourceTemplates(cursor?: string, options?: RequestOptions): Promise<ListResourceTemplatesResult> {
    return this.#call('resources/templates/list', cursorParams(cursor), options)
  }

  readResource(uri: string, options?: RequestOptions): Promise<ReadResourceResult> {
    return this.#call('resources/read', { uri }, options)
  }

  async subscribeResource(uri: string, options?: RequestOptions): Promise<void> {
    await this.#call('resources/subscribe', { uri }, options)
  }

  async unsubscribeResource(uri: string, options?: RequestOptions): Promise<void> {
    await this.#call('resources/unsubscribe', { uri }, options)
  }

  prompts(): Observable<Prompt> {
    return paginate(cursor => this.request<ListPromptsResult & JsonObject>('prompts/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), map(result => ({ items: result.prompts, nextCursor: result.nextCursor }))))
  }

  listPrompts(cursor?: string, options?: RequestOptions): Promise<ListPromptsResult> {
    return this.#call('prompts/list', cursorParams(cursor), options)
  }

  getPrompt(name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult> {
    return this.#call('prompts/get', args === undefined ? { name } : { name, arguments: args }, options)
  }

  complete(params: CompleteParams, options?: RequestOptions): Promise<CompleteResult> {
    return this.#call('completion/complete', params as unknown as JsonObject, options)
  }

  async setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<void> {
    await this.#call('logging/setLevel', { level }, options)
  }

  setRoots(roots: Root[]): void {
    if (this.#capabilities.roots === undefined) throw new CapabilityError('This client did not declare roots; pass `roots` to connect()')
    this.actor.send({ type: 'roots', roots })
    if (this.actor.state.status === 'operating' && !this.connection.isClosed) void this.connection.notify('notifications/roots/list_changed')
  }

  async close(): Promise<void> {
    this.#isClosing = true
    // Ends the stream wherever it is; the session's teardown closes its connection.
    this.#closing.next()
    await this.#connection?.close()
    await this.closed
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

/** The result of a request's last event (a request asked without progress emits only its result). */
function resultOfLast<R>(event: RequestEvent<R>): R {
  return (event as { result: R }).result
}

function cursorParams(cursor: string | undefined): JsonObject | undefined {
  return cursor === undefined ? undefined : { cursor }
}
