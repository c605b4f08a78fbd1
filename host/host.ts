/**
 * The host (MCP architecture): one client per configured server, each supervised, isolated from
 * the others, and one aggregated view of what they offer, kept live from their list_changed
 * notifications, with calls routed to the owning client under the host's security policy.
 */
import { realpathSync } from 'node:fs'
import { resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BehaviorSubject, Subject, asyncScheduler, lastValueFrom, take, toArray, type Observable, type SchedulerLike, type Subscription } from '../lib/rx.ts'
import { diffHostConfig, type HostConfig, type HostServerConfig } from '../lib/host-config.ts'
import { namespacedNames } from '../lib/tool-names.ts'
import { InvalidParamsError, ResourceNotFoundError } from '../lib/jsonrpc/errors.ts'
import type { LoggingLevel, CallToolResult, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool } from '../lib/schema/types.ts'
import { connect, type ClientOptions, type McpClient } from '../actors/client.ts'
import { stdioClient } from '../transports/stdio.ts'
import { httpClient, sseClient } from '../transports/http-client.ts'
import { websocketClient } from '../transports/websocket-client.ts'
import { SupervisedServer, type RestartPolicy, type ServerState, type StartedClient } from './supervisor.ts'
import type { HostCallOptions, HostTool, HostView } from './view.ts'
import { samplingViaModel, type ModelAdapter } from './model.ts'
import { outcomePromise, type HandlerOutcome } from '../actors/request.ts'
import { HOST_LIMIT_DEFAULTS, boundList, coalescedRefresh, maxItems, type HostLimits, type OfferKind } from './bounds.ts'

/** What the consent hook is asked about. */
export type ConsentRequest =
  | { readonly kind: 'tool'; readonly server: string; readonly tool: string; readonly arguments: Record<string, unknown> }
  | { readonly kind: 'sampling'; readonly server: string; readonly params: CreateMessageParams }
  | { readonly kind: 'elicitation'; readonly server: string; readonly params: ElicitParams }

/** The user's answer: this once, from now on (per server and tool, or per server for sampling and elicitation), or no. */
export type ConsentAnswer = 'allow-once' | 'allow-always' | 'deny'

/** Options of {@link createHost}. */
export interface HostOptions {
  /** The host's name and version, told to every server (default rxmcp-host). */
  info?: { name: string; version: string }
  /** Restart policy of every server. */
  restart?: RestartPolicy
  /** Human in the loop: asked before each tool call, sampling and elicitation (default: everything allowed). */
  consent?: (request: ConsentRequest) => ConsentAnswer | Promise<ConsentAnswer>
  /** The model that answers servers' sampling requests (after consent), through `samplingViaModel`. */
  model?: ModelAdapter
  /** Answers servers' sampling requests (after consent) instead of `model`; without either, servers are not offered sampling. */
  sampling?: (params: CreateMessageParams, server: string) => HandlerOutcome<CreateMessageResult>
  /** Answers servers' form elicitations (after consent); without it servers are not offered elicitation. */
  elicitation?: (params: ElicitParams, server: string) => Promise<ElicitResult>
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
  /** Where restart backoff and list_changed coalescing wait (default: the real clock). */
  scheduler?: SchedulerLike
  /** How a server's client is started (default: by its configuration; tests may inject). */
  start?: (config: HostServerConfig, options: ClientOptions, stderr: (chunk: string) => void) => Promise<StartedClient>
}

/** A log message a server sent (`notifications/message`), with the server that sent it. */
export interface HostLog { readonly server: string; readonly level: LoggingLevel; readonly logger?: string; readonly data: unknown }

/** A resource of the aggregated view, with the server that owns it. */
export interface HostResource { readonly server: string; readonly resource: Resource }
/** A prompt of the aggregated view: its name in the view, the server that owns it, and the prompt as that server listed it. */
export interface HostPrompt { readonly name: string; readonly server: string; readonly prompt: Prompt }

/** What {@link createHost} returns. */
export interface Host extends HostView {
  /** Every configured server's state, by name (enabled ones), now and on every change. */
  readonly states: Observable<ReadonlyMap<string, ServerState>>
  currentStates(): ReadonlyMap<string, ServerState>
  readonly resources: Observable<readonly HostResource[]>
  readonly prompts: Observable<readonly HostPrompt[]>
  /** Every server's log messages, as they come (hot). */
  readonly logs: Observable<HostLog>
  readResource(uri: string): Promise<ReadResourceResult>
  getPrompt(name: string, args?: Record<string, string>): Promise<GetPromptResult>
  /** The client of a ready server, for what the aggregated view does not cover. */
  client(server: string): McpClient | undefined
  /** The process id of a stdio server's running child. */
  pid(server: string): number | undefined
  /** Applies a new configuration: added servers start, removed ones stop, changed ones restart, the rest keep running. */
  reload(config: HostConfig): Promise<void>
  /** Stops every server. */
  close(): Promise<void>
}

/** One ready server's offer, as last listed (and cut to the limits), and the last warning of each kind. */
interface Offer { tools: Tool[]; resources: Resource[]; prompts: Prompt[]; subscriptions: Subscription[]; warnings: Partial<Record<OfferKind, string>> }

/**
 * Starts a host: one supervised client per enabled server of `config`.
 * @example
 * const host = createHost(parseHostConfig(JSON.parse(readFileSync('mcp.json', 'utf8')), process.env))
 * const result = await host.callTool('files__read_file', { path: '/tmp/a.txt' })
 */
export function createHost(config: HostConfig, options: HostOptions = {}): Host {
  return new HostActor(config, options)
}

class HostActor implements Host {
  readonly #servers = new Map<string, SupervisedServer>()
  readonly #offers = new Map<string, Offer>()
  readonly #states = new BehaviorSubject<ReadonlyMap<string, ServerState>>(new Map())
  readonly #tools = new BehaviorSubject<readonly HostTool[]>([])
  readonly #resources = new BehaviorSubject<readonly HostResource[]>([])
  readonly #prompts = new BehaviorSubject<readonly HostPrompt[]>([])
  readonly #logs = new Subject<HostLog>()
  readonly logs = this.#logs.asObservable()
  readonly #allowedAlways = new Set<string>()
  /** The aggregated tools by name (see #publish). */
  #toolsByName = new Map<string, HostTool>()
  readonly #stateWatch = new Map<string, Subscription>()
  #config: HostConfig
  #isClosed = false
  readonly #limits: HostLimits
  readonly states = this.#states.asObservable()
  readonly tools = this.#tools.asObservable()
  readonly resources = this.#resources.asObservable()
  readonly prompts = this.#prompts.asObservable()

  constructor(config: HostConfig, readonly options: HostOptions) {
    this.#config = config
    this.#limits = { ...HOST_LIMIT_DEFAULTS, ...options.limits }
    for (const server of config.servers.values()) if (!server.disabled) this.#add(server)
  }

  currentStates(): ReadonlyMap<string, ServerState> { return this.#states.value }
  currentTools(): readonly HostTool[] { return this.#tools.value }
  client(server: string): McpClient | undefined { return this.#servers.get(server)?.client }
  pid(server: string): number | undefined { return this.#servers.get(server)?.pid }

  #add(config: HostServerConfig): void {
    const supervised = new SupervisedServer(config, (server, stderr) => this.#start(server, stderr), this.options.restart ?? {}, this.options.scheduler ?? asyncScheduler,
      client => client === undefined ? this.#withdraw(config.name) : this.#offer(config.name, client))
    this.#servers.set(config.name, supervised)
    this.#stateWatch.set(config.name, supervised.states.subscribe(state => {
      const states = new Map(this.#states.value)
      states.set(config.name, state)
      this.#states.next(states)
    }))
    supervised.run()
  }

  async #remove(name: string): Promise<void> {
    const supervised = this.#servers.get(name)
    this.#servers.delete(name)
    await supervised?.stop()
    this.#stateWatch.get(name)?.unsubscribe()
    this.#stateWatch.delete(name)
    const states = new Map(this.#states.value)
    states.delete(name)
    this.#states.next(states)
  }

  /** Starts one server's client by its configuration, with the host's handlers. */
  #start(config: HostServerConfig, stderr: (chunk: string) => void): Promise<StartedClient> {
    const clientOptions: ClientOptions = { roots: this.#roots(config), timeout: config.timeout }
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
      clientOptions.elicitation = {
        form: async params => {
          const answer = await this.#ask({ kind: 'elicitation', server: config.name, params }, `elicitation:${config.name}`)
          return answer ? elicitation(params, config.name) : { action: 'decline' }
        },
      }
    }
    if (this.options.start !== undefined) return this.options.start(config, clientOptions, stderr)
    return startServerClient(config, clientOptions, stderr, this.options.info)
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

  async #offer(name: string, client: McpClient): Promise<void> {
    this.#withdraw(name, false)
    const offer: Offer = { tools: [], resources: [], prompts: [], subscriptions: [], warnings: {} }
    this.#offers.set(name, offer)
    const capabilities = client.serverCapabilities
    const limits = this.#limits
    const trimmed = this.options.onTrimmed ?? ((server: string, warning: string) => console.warn(`rxmcp host: ${server}: ${warning}`))
    // One past the count bound is listed, to know there were more; pagination stops there.
    const list = <T extends { readonly description?: string }>(kind: OfferKind, items: Observable<T>): Promise<T[]> => lastValueFrom(items.pipe(take(maxItems(kind, limits) + 1), toArray())).then(listed => {
      const { items: kept, warning } = boundList(kind, listed, limits)
      // Said once, not again on every listing that finds the same.
      if (warning !== undefined && warning !== offer.warnings[kind] && this.#offers.get(name) === offer) trimmed(name, warning)
      offer.warnings[kind] = warning
      return kept
    })
    const relist = async (kind: OfferKind) => {
      try {
        if (kind === 'tools' && capabilities.tools !== undefined) offer.tools = await list(kind, client.tools())
        if (kind === 'resources' && capabilities.resources !== undefined) offer.resources = await list(kind, client.resources())
        if (kind === 'prompts' && capabilities.prompts !== undefined) offer.prompts = await list(kind, client.prompts())
      } catch {
        // The server went away while listing: its withdrawal follows.
      }
      if (this.#offers.get(name) === offer) this.#publish()
    }
    // The first listing of each kind now; then list_changed, coalesced: a storm of them is one
    // listing at once and one per interval while it lasts, never two of a kind at once.
    const listed = (['tools', 'resources', 'prompts'] as const).map(kind => new Promise<void>(resolve => {
      const changes = client.notifications(`notifications/${kind}/list_changed` as 'notifications/tools/list_changed')
      offer.subscriptions.push(coalescedRefresh(changes, () => relist(kind), limits.listChangedIntervalMs, this.options.scheduler ?? asyncScheduler, resolve))
    }))
    if (capabilities.logging !== undefined) {
      offer.subscriptions.push(client.notifications('notifications/message').subscribe(params => {
        const { level, logger, data } = params as { level: LoggingLevel; logger?: string; data: unknown }
        this.#logs.next(logger === undefined ? { server: name, level, data } : { server: name, level, logger, data })
      }))
      client.setLoggingLevel(this.options.logLevel ?? 'info').catch(() => {})
    }
    await Promise.all(listed)
  }

  #withdraw(name: string, publish = true): void {
    const offer = this.#offers.get(name)
    if (offer === undefined) return
    for (const subscription of offer.subscriptions) subscription.unsubscribe()
    this.#offers.delete(name)
    if (publish) this.#publish()
  }

  /** Recomputes the aggregated lists from every ready server's offer, in configuration order. */
  #publish(): void {
    const tools: { server: string; tool: Tool }[] = []
    const resources: HostResource[] = []
    const prompts: { server: string; prompt: Prompt }[] = []
    for (const name of this.#config.servers.keys()) {
      const offer = this.#offers.get(name)
      const config = this.#config.servers.get(name)
      if (offer === undefined || config === undefined) continue
      for (const tool of offer.tools) if (isToolAllowed(config, tool.name)) tools.push({ server: name, tool })
      for (const resource of offer.resources) resources.push({ server: name, resource })
      for (const prompt of offer.prompts) prompts.push({ server: name, prompt })
    }
    const toolNames = namespacedNames(tools.map(({ server, tool }) => ({ server, name: tool.name })))
    const promptNames = namespacedNames(prompts.map(({ server, prompt }) => ({ server, name: prompt.name })))
    const hostTools = tools.map((entry, index) => ({ name: toolNames[index]!, ...entry }))
    // Calls look their tool up by name on every request (the gateway's hot path): a map, not a scan.
    this.#toolsByName = new Map(hostTools.map(tool => [tool.name, tool]))
    this.#tools.next(hostTools)
    this.#resources.next(resources)
    this.#prompts.next(prompts.map((entry, index) => ({ name: promptNames[index]!, ...entry })))
  }

  /** The ready client of `server`, or an error saying why there is none. */
  #clientOf(server: string): McpClient {
    const supervised = this.#servers.get(server)
    const client = supervised?.client
    if (client === undefined) throw new Error(`Server ${server} is not ready (${supervised?.state.status ?? 'not configured'})`)
    return client
  }

  async callTool(name: string, args: Record<string, unknown> = {}, options: HostCallOptions = {}): Promise<CallToolResult> {
    const entry = this.#toolsByName.get(name)
    if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown tool ${JSON.stringify(name)}`)
    await this.#consent({ kind: 'tool', server: entry.server, tool: entry.tool.name, arguments: args }, `tool:${entry.server}:${entry.tool.name}`)
    const client = this.#clientOf(entry.server)
    try {
      return await client.callTool(entry.tool.name, args, { signal: options.signal, onProgress: options.onProgress })
    } catch (error) {
      if (error instanceof Error && !(error instanceof InvalidParamsError)) error.message = `${entry.server}: ${error.message}`
      throw error
    }
  }

  async readResource(uri: string): Promise<ReadResourceResult> {
    const owner = this.#resources.value.find(entry => entry.resource.uri === uri)?.server
    // A URI no server listed may still be one of their templates': the first that reads it wins.
    const candidates = owner !== undefined ? [owner] : [...this.#offers.keys()]
    let lastError: unknown = new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
    for (const server of candidates) {
      const client = this.#servers.get(server)?.client
      if (client === undefined || client.serverCapabilities.resources === undefined) continue
      try { return await client.readResource(uri) } catch (error) { lastError = error }
    }
    throw lastError
  }

  async getPrompt(name: string, args?: Record<string, string>): Promise<GetPromptResult> {
    const entry = this.#prompts.value.find(prompt => prompt.name === name)
    if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(name)}`)
    return this.#clientOf(entry.server).getPrompt(entry.prompt.name, args)
  }

  /** True when allowed; throws when denied (tool calls). */
  async #consent(request: ConsentRequest, key: string): Promise<void> {
    if (!(await this.#ask(request, key))) throw new Error(`${request.server}: ${request.kind === 'tool' ? `tool ${request.tool}` : request.kind} denied by the user`)
  }

  async #ask(request: ConsentRequest, key: string): Promise<boolean> {
    const consent = this.options.consent
    if (consent === undefined || this.#allowedAlways.has(key)) return true
    const answer = await consent(request)
    if (answer === 'allow-always') this.#allowedAlways.add(key)
    return answer !== 'deny'
  }

  async reload(config: HostConfig): Promise<void> {
    const change = diffHostConfig(this.#config, config)
    this.#config = config
    await Promise.all([...change.removed, ...change.changed].map(name => this.#remove(name)))
    for (const name of [...change.changed, ...change.added]) this.#add(config.servers.get(name)!)
    this.#publish()
  }

  async close(): Promise<void> {
    if (this.#isClosed) return
    this.#isClosed = true
    await Promise.all([...this.#servers.keys()].map(name => this.#remove(name)))
    this.#tools.complete()
    this.#resources.complete()
    this.#prompts.complete()
    this.#logs.complete()
    this.#states.complete()
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

function isToolAllowed(config: HostServerConfig, tool: string): boolean {
  if (config.allowTools !== undefined && !config.allowTools.includes(tool)) return false
  return !config.denyTools.includes(tool)
}

/** An absolute path with symlinks resolved where it exists (so a link cannot lead out of an allowed root). */
function real(path: string): string {
  const absolute = resolve(path)
  try { return realpathSync(absolute) } catch { return absolute }
}

export type { ServerState, RestartPolicy, StartedClient }
