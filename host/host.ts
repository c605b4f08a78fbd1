/**
 * The host (MCP architecture): one client per configured server, each supervised, isolated from
 * the others, and one aggregated view of what they offer, kept live from their list_changed
 * notifications, with calls routed to the owning client under the host's security policy.
 */
import { realpathSync } from 'node:fs'
import { resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Subject, asyncScheduler, distinctUntilChanged, map, type Observable, type SchedulerLike } from '../lib/rx.ts'
import { diffHostConfig, type HostConfig, type HostServerConfig } from '../lib/host-config.ts'
import { InvalidParamsError, ResourceNotFoundError } from '../lib/jsonrpc/errors.ts'
import type { LoggingLevel, CallToolResult, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, GetPromptResult, ReadResourceResult } from '../lib/schema/types.ts'
import { createActorSystem, type ActorRef, type ActorSystem } from '../actors/actor.ts'
import { connect, type ClientOptions, type McpClient } from '../actors/client.ts'
import { proxyClientOptions } from '../actors/proxy.ts'
import type { JsonSchemaValidatorOption } from '../lib/validator.ts'
import { stdioClient } from '../transports/stdio.ts'
import { httpClient, sseClient } from '../transports/http-client.ts'
import { websocketClient } from '../transports/websocket-client.ts'
import { restartPolicy, supervisorLogic, type FullRestartPolicy, type RestartPolicy, type ServerState, type StartedClient } from './supervisor.ts'
import { hostLogic, type HostMessage, type HostPrompt, type HostResource, type HostState } from './host-logic.ts'
import { serverRun } from './server-run.ts'
import type { HostCallOptions, HostTool, HostView } from './view.ts'
import { samplingViaModel, type ModelAdapter } from './model.ts'
import { outcomePromise, type HandlerOutcome } from '../actors/request.ts'
import { HOST_LIMIT_DEFAULTS, type HostLimits } from './bounds.ts'
import { uiCapability } from '../lib/apps.ts'

/** What the consent hook is asked about. */
export type ConsentRequest =
  | {
    readonly kind: 'tool'; readonly server: string; readonly tool: string; readonly arguments: Record<string, unknown>
    /** Set when an MCP App's view made the call (`callAppTool` of host/apps.ts): the view's `ui://` URI. */
    readonly app?: string
  }
  | { readonly kind: 'sampling'; readonly server: string; readonly params: CreateMessageParams }
  | { readonly kind: 'elicitation'; readonly server: string; readonly params: ElicitParams }

/** The user's answer: this once, from now on (per server and tool, or per server for sampling and elicitation), or no. */
export type ConsentAnswer = 'allow-once' | 'allow-always' | 'deny'

/** Options of {@link createHost}. */
export interface HostOptions {
  /** The host's name and version, told to every server (default rxmcp-host). */
  info?: { name: string; version: string }
  /**
   * Restart policy of every server: the one retry policy (`initial` 500 ms, `factor` 2, `max` 30 s,
   * `jitter` 0, `retries` 5 restarts in a row before the server is `failed`) with `stableMs` (60 s)
   * and `startTimeoutMs` (30 s); defaults in RESTART_DEFAULTS.
   */
  restart?: RestartPolicy
  /** Human in the loop: asked before each tool call, sampling and elicitation (default: everything allowed). */
  consent?: (request: ConsentRequest) => ConsentAnswer | Promise<ConsentAnswer>
  /** The model that answers servers' sampling requests (after consent), through `samplingViaModel`. */
  model?: ModelAdapter
  /** Answers servers' sampling requests (after consent) instead of `model`; without either, servers are not offered sampling. */
  sampling?: (params: CreateMessageParams, server: string) => HandlerOutcome<CreateMessageResult>
  /**
   * Answers servers' elicitations (after consent); without it servers are not offered elicitation.
   * A function answers form mode (as before); `{ form, url }` answers each mode given (URL mode:
   * open `params.url` for the user, answer `accept` once it is opened, MCP 2025-11-25).
   */
  elicitation?: HostElicitation | { form?: HostElicitation; url?: HostElicitation }
  /**
   * Serving a gateway (`hostServer`): every server's client declares sampling (with tools),
   * elicitation (form and URL) and roots, so servers may ask while serving a gateway caller's call;
   * such asks are answered by that caller. The handlers above answer what no call raised (refused
   * without them). Default false: servers are offered only what the handlers above answer.
   */
  gateway?: boolean
  /** Directories any server's roots must lie in (default: no limit beyond each server's own list). */
  allowedRoots?: readonly string[]
  /** The level asked of every server that logs (default info); its messages come out on `host.logs`. */
  logLevel?: LoggingLevel
  /**
   * Bounds of what one server may put into the aggregated view, and how often its list_changed
   * notifications make the host list again (defaults in {@link HOST_LIMIT_DEFAULTS}).
   */
  limits?: Partial<HostLimits>
  /** Told when a server's offer was cut to fit `limits` (default: a line on stderr through console.warn). */
  onTrimmed?: (server: string, warning: string) => void
  /** Where the host's actor system runs its time: restart backoff, start timeouts, list_changed coalescing (default: the real clock). */
  scheduler?: SchedulerLike
  /**
   * The JSON Schema validator of every server's client, which checks tool results against their
   * outputSchemas (default `'auto'`; see `ClientOptions.jsonSchemaValidator`). The gateway's own
   * server takes its choice from `GatewayOptions.server`.
   */
  jsonSchemaValidator?: JsonSchemaValidatorOption
  /**
   * Telemetry of every server's client (`ClientOptions.telemetry`): a CLIENT span per request, its
   * context in the request's `_meta`, child of the span current where the call was made (a gateway's
   * SERVER span), so one trace runs through the host. Default off.
   */
  telemetry?: ClientOptions['telemetry']
  /**
   * Whether the host renders MCP Apps (SEP-1865): every server's client declares the
   * `io.modelcontextprotocol/ui` extension, so servers that check it offer their views (default
   * false). The app API for a web page is host/apps.ts.
   */
  apps?: boolean
  /** How a server's client is started (default: by its configuration; tests may inject). */
  start?: (config: HostServerConfig, options: ClientOptions, stderr: (chunk: string) => void) => Promise<StartedClient>
}

/** Answers one server's elicitation in one mode (see HostOptions.elicitation). */
export type HostElicitation = (params: ElicitParams, server: string) => Promise<ElicitResult>

/** A log message a server sent (`notifications/message`), with the server that sent it. */
export interface HostLog { readonly server: string; readonly level: LoggingLevel; readonly logger?: string; readonly data: unknown }

/** What {@link createHost} returns. */
export interface Host extends HostView {
  /** Every configured server's state, by name (enabled ones), now and on every change; completes when the host is closed. */
  readonly states: Observable<ReadonlyMap<string, ServerState>>
  currentStates(): ReadonlyMap<string, ServerState>
  readonly resources: Observable<readonly HostResource[]>
  readonly prompts: Observable<readonly HostPrompt[]>
  /** Every server's log messages, as they come (hot). */
  readonly logs: Observable<HostLog>
  /**
   * The host's actor system (on the `scheduler` option): the host actor (`host/host`), one
   * supervisor per running server (`host/host/<server>`) and its current run
   * (`host/host/<server>/client`). Its `inspect`
   * shows every message, transition, restart and end as events (nothing is built while nobody
   * subscribes).
   */
  readonly system: ActorSystem
  readResource(uri: string): Promise<ReadResourceResult>
  getPrompt(name: string, args?: Record<string, string>): Promise<GetPromptResult>
  /** The client of a connected server, for what the aggregated view does not cover. */
  client(server: string): McpClient | undefined
  /**
   * Starts another client of `server` (outside supervision: the caller closes it), with the host's
   * handlers and roots unless `overrides` gives its own (`sampling`, `elicitation`, `roots`): the
   * gateway's per-session mode makes one per gateway session this way.
   */
  startClient(server: string, overrides?: ClientOptions): Promise<McpClient>
  /**
   * Asks the consent hook (unless `allow-always` was answered before for the same key): true when
   * allowed. The gateway asks it before each tool call it forwards. Answers `true` at once, not a
   * Promise, when nothing needs asking (no hook, or allowed always), so a caller may go on in the
   * same turn.
   */
  consent(request: ConsentRequest): boolean | Promise<boolean>
  /** The process id of a stdio server's running child. */
  pid(server: string): number | undefined
  /** Applies a new configuration: added servers start, removed ones stop, changed ones restart, the rest keep running. */
  reload(config: HostConfig): Promise<void>
  /** Stops every server (the host actor, each supervisor and each client, children first); resolves once their clients closed. */
  close(): Promise<void>
}

/**
 * Starts a host: one supervised client per enabled server of `config`.
 * @example
 * const host = createHost(parseHostConfig(JSON.parse(readFileSync('mcp.json', 'utf8')), process.env))
 * const result = await host.callTool('files__read_file', { path: '/tmp/a.txt' })
 */
export function createHost(config: HostConfig, options: HostOptions = {}): Host {
  return new HostOwner(config, options)
}

/**
 * The host as its users hold it: the owner of the host's actor system, where the actors' I/O is
 * wired (each run's start, listings and logs), and which reads the host actor only through its
 * snapshots.
 */
class HostOwner implements Host {
  readonly system: ActorSystem
  readonly #actor: ActorRef<HostMessage, HostState>
  /** The host actor's latest snapshot's state (from the owner's own subscription). */
  #state!: HostState
  readonly #logs = new Subject<HostLog>()
  readonly logs = this.#logs.asObservable()
  /** Clients closing (a run ended): close() and reload() wait for them. */
  readonly #closing = new Set<Promise<unknown>>()
  readonly #policy: FullRestartPolicy
  readonly #limits: HostLimits
  readonly #scheduler: SchedulerLike
  #isClosed = false
  readonly states: Observable<ReadonlyMap<string, ServerState>>
  readonly tools: Observable<readonly HostTool[]>
  readonly resources: Observable<readonly HostResource[]>
  readonly prompts: Observable<readonly HostPrompt[]>

  constructor(config: HostConfig, readonly options: HostOptions) {
    this.#policy = restartPolicy(options.restart)
    this.#limits = { ...HOST_LIMIT_DEFAULTS, ...options.limits }
    this.#scheduler = options.scheduler ?? asyncScheduler
    this.system = createActorSystem({ name: 'host', scheduler: this.#scheduler, reportError: error => console.error('rxmcp host:', error) })
    this.#actor = this.system.spawn(hostLogic, { id: 'host', input: config })
    const snapshots = this.#actor.snapshots.pipe(map(snapshot => snapshot.state))
    snapshots.subscribe(state => { this.#state = state })
    this.states = snapshots.pipe(map(state => state.states), distinctUntilChanged())
    this.tools = snapshots.pipe(map(state => state.tools), distinctUntilChanged())
    this.resources = snapshots.pipe(map(state => state.resources), distinctUntilChanged())
    this.prompts = snapshots.pipe(map(state => state.prompts), distinctUntilChanged())
    for (const server of config.servers.values()) if (!server.disabled) this.#add(server)
  }

  currentStates(): ReadonlyMap<string, ServerState> { return this.#state.states }
  currentTools(): readonly HostTool[] { return this.#state.tools }
  client(server: string): McpClient | undefined { return this.#state.servers.get(server)?.client }
  pid(server: string): number | undefined { return this.#state.servers.get(server)?.pid }

  #add(config: HostServerConfig): void {
    const trimmed = this.options.onTrimmed ?? ((server: string, warning: string) => console.warn(`rxmcp host: ${server}: ${warning}`))
    const run = serverRun({
      start: stderr => this.#start(config, stderr),
      startTimeoutMs: this.#policy.startTimeoutMs,
      scheduler: this.#scheduler,
      limits: this.#limits,
      trimmed: warning => trimmed(config.name, warning),
      logLevel: this.options.logLevel ?? 'info',
      log: (level, logger, data) => this.#logs.next(logger === undefined ? { server: config.name, level, data } : { server: config.name, level, logger, data }),
      closing: closed => {
        this.#closing.add(closed)
        void closed.finally(() => this.#closing.delete(closed))
      },
    })
    this.#actor.send({ type: 'add', config, supervisor: supervisorLogic(config.name, run, this.#policy) })
  }

  /** Resolves once every client that is closing now has closed. */
  async #closed(): Promise<void> {
    while (this.#closing.size > 0) await Promise.all([...this.#closing])
  }

  async startClient(server: string, overrides: ClientOptions = {}): Promise<McpClient> {
    const config = this.#state.config.servers.get(server)
    if (config === undefined) throw new Error(`Server ${server} is not configured`)
    return (await this.#start(config, () => {}, overrides)).client
  }

  consent(request: ConsentRequest): boolean | Promise<boolean> {
    if (this.options.consent === undefined) return true
    const key = request.kind === 'tool' ? `tool:${request.server}:${request.tool}` : `${request.kind}:${request.server}`
    return this.#state.allowedAlways.has(key) ? true : this.#ask(request, key)
  }

  /** Starts one server's client by its configuration, with the host's handlers (or those `overrides` gives). */
  #start(config: HostServerConfig, stderr: (chunk: string) => void, overrides: ClientOptions = {}): Promise<StartedClient> {
    const clientOptions: ClientOptions = { roots: this.#roots(config), timeout: config.timeout, jsonSchemaValidator: this.options.jsonSchemaValidator }
    if (this.options.telemetry !== undefined) clientOptions.telemetry = this.options.telemetry
    if (this.options.apps === true) clientOptions.capabilities = { ...clientOptions.capabilities, ...uiCapability() }
    const { elicitation } = this.options
    const viaModel = this.options.model === undefined ? undefined : samplingViaModel(this.options.model)
    const sampling = this.options.sampling ?? (viaModel === undefined ? undefined : (params: CreateMessageParams) => viaModel(params))
    if (sampling !== undefined) {
      clientOptions.sampling = async params => {
        await this.#consent({ kind: 'sampling', server: config.name, params }, `sampling:${config.name}`)
        return outcomePromise(sampling(params, config.name))
      }
    }
    if (elicitation !== undefined) {
      const modes = typeof elicitation === 'function' ? { form: elicitation } : elicitation
      const consented = (answer: HostElicitation | undefined) => answer === undefined ? undefined : async (params: ElicitParams) => {
        const isAllowed = await this.#ask({ kind: 'elicitation', server: config.name, params }, `elicitation:${config.name}`)
        return isAllowed ? answer(params, config.name) : { action: 'decline' as const }
      }
      clientOptions.elicitation = { form: consented(modes.form), url: consented(modes.url) }
    }
    // Serving a gateway: everything declared, so a server may ask; the caller answers (answerInput), these handlers the rest.
    const options = this.options.gateway === true
      ? { ...clientOptions, ...proxyClientOptions({ sampling: clientOptions.sampling, elicitation: clientOptions.elicitation, roots: clientOptions.roots }) }
      : clientOptions
    // A gateway session's own client: its handlers and roots are that session's.
    for (const key of ['sampling', 'elicitation', 'roots'] as const) if (key in overrides) (options as Record<string, unknown>)[key] = overrides[key]
    if (this.options.start !== undefined) return this.options.start(config, options, stderr)
    return startServerClient(config, options, stderr, this.options.info)
  }

  /** The server's roots as file URIs, each checked against `allowedRoots` (no way out of them, symlinks resolved). */
  #roots(config: HostServerConfig): { uri: string; name: string }[] {
    const allowed = this.options.allowedRoots?.map(real)
    return config.roots.map(root => {
      const path = real(root)
      if (allowed !== undefined && !allowed.some(base => path === base || path.startsWith(base.endsWith(sep) ? base : base + sep))) {
        throw new Error(`root ${root} of ${config.name} lies outside the allowed roots`)
      }
      return { uri: pathToFileURL(path).href, name: path }
    })
  }

  /** The ready client of `server`, or an error saying why there is none. */
  #clientOf(server: string): McpClient {
    const entry = this.#state.servers.get(server)
    const client = entry?.client
    if (client === undefined) throw new Error(`Server ${server} is not ready (${entry?.state.status ?? 'not configured'})`)
    return client
  }

  async callTool(name: string, args: Record<string, unknown> = {}, options: HostCallOptions = {}): Promise<CallToolResult> {
    const entry = this.#state.toolsByName.get(name)
    if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown tool ${JSON.stringify(name)}`)
    const request: ConsentRequest = options.app === undefined
      ? { kind: 'tool', server: entry.server, tool: entry.tool.name, arguments: args }
      : { kind: 'tool', server: entry.server, tool: entry.tool.name, arguments: args, app: options.app }
    // An app's calls are remembered apart from the model's: allow-always for one does not allow the other.
    await this.#consent(request, options.app === undefined ? `tool:${entry.server}:${entry.tool.name}` : `app:${options.app}:${entry.server}:${entry.tool.name}`)
    const client = this.#clientOf(entry.server)
    try {
      return await client.callTool(entry.tool.name, args, { signal: options.signal, onProgress: options.onProgress })
    } catch (error) {
      if (error instanceof Error && !(error instanceof InvalidParamsError)) error.message = `${entry.server}: ${error.message}`
      throw error
    }
  }

  async readResource(uri: string): Promise<ReadResourceResult> {
    const state = this.#state
    const owner = state.resources.find(entry => entry.resource.uri === uri)?.server
    // A URI no server listed may still be one of their templates': the first that reads it wins.
    const candidates = owner !== undefined ? [owner] : [...state.offers.keys()]
    let lastError: unknown = new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
    for (const server of candidates) {
      const client = state.servers.get(server)?.client
      if (client === undefined || client.serverCapabilities.resources === undefined) continue
      try { return await client.readResource(uri) } catch (error) { lastError = error }
    }
    throw lastError
  }

  async getPrompt(name: string, args?: Record<string, string>): Promise<GetPromptResult> {
    const entry = this.#state.prompts.find(prompt => prompt.name === name)
    if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(name)}`)
    return this.#clientOf(entry.server).getPrompt(entry.prompt.name, args)
  }

  /** True when allowed; throws when denied (tool calls). */
  async #consent(request: ConsentRequest, key: string): Promise<void> {
    if (!(await this.#ask(request, key))) throw new Error(`${request.server}: ${request.kind === 'tool' ? `tool ${request.tool}` : request.kind} denied by the user`)
  }

  async #ask(request: ConsentRequest, key: string): Promise<boolean> {
    const consent = this.options.consent
    if (consent === undefined || this.#state.allowedAlways.has(key)) return true
    const answer = await consent(request)
    if (answer === 'allow-always') this.#actor.send({ type: 'allow-always', key })
    return answer !== 'deny'
  }

  async reload(config: HostConfig): Promise<void> {
    const change = diffHostConfig(this.#state.config, config)
    for (const name of [...change.removed, ...change.changed]) this.#actor.send({ type: 'remove', name })
    this.#actor.send({ type: 'configure', config })
    // A changed server's old child is gone before its new one starts.
    await this.#closed()
    for (const name of [...change.changed, ...change.added]) this.#add(config.servers.get(name)!)
  }

  async close(): Promise<void> {
    if (this.#isClosed) return
    this.#isClosed = true
    // Each server stopped (its supervisor, and its run, which closes its client), then the host actor.
    for (const name of this.#state.servers.keys()) this.#actor.send({ type: 'remove', name })
    this.system.stop()
    this.#logs.complete()
    await this.#closed()
  }
}

/** A server's client, by its configuration's transport (the host's default `start`). */
export async function startServerClient(config: HostServerConfig, options: ClientOptions, stderr: (chunk: string) => void = () => {}, info: { name: string; version: string } = { name: 'rxmcp-host', version: '0.1.0' }): Promise<StartedClient> {
  if (config.type === 'stdio') {
    const transport = stdioClient({ command: config.command!, args: config.args, env: { ...config.env }, cwd: config.cwd, stderr: 'pipe' })
    // Read from the spawn on: a server that fails its handshake usually says why there.
    transport.stderr.subscribe({ next: stderr, error: () => {} })
    const client = await connect(transport, info, options).catch(async error => {
      // A child that exited has its last words in the pipe still: give them a moment to arrive.
      await Promise.race([transport.exited.catch(() => {}), new Promise(resolve => setTimeout(resolve, 200).unref())])
      await transport.close().catch(() => {})
      throw error
    })
    return { client, pid: transport.pid }
  }
  const headers = { ...config.headers }
  const transport = config.type === 'ws' ? websocketClient(config.url!, { headers })
    : config.type === 'sse' ? sseClient(config.url!, { headers }) : httpClient(config.url!, { headers })
  return { client: await connect(transport, info, options) }
}

/** An absolute path with symlinks resolved where it exists (so a link cannot lead out of an allowed root). */
function real(path: string): string {
  const absolute = resolve(path)
  try { return realpathSync(absolute) } catch { return absolute }
}

export type { ServerState, RestartPolicy, StartedClient, HostResource, HostPrompt }
