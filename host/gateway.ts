/**
 * The gateway: the host's aggregated view served as one MCP server, so a desktop host or a remote
 * agent talks to one endpoint (any transport, both eras) instead of to every server. Built on
 * `mount` and `proxy` (actors/proxy.ts): one mounted source per configured server, following its
 * supervised client as it restarts, under the host's policy.
 *
 * ```
 * host.states ─> server "a" ready with client A ─> gateway.mount('a', hostSource(A)) ─> a__* tools, its resources, templates, prompts
 *                server "a" restarting / removed ─> that mount removed (clients hear list_changed)
 * hostSource: proxy(A) fed the host's view of "a" (allow/deny, limits; listed once, by the host), listing only A's templates itself;
 *             tools/call asks the host's consent first (once per call, not per input round of a modern caller)
 * ```
 *
 * What a server asks while serving a call (sampling, elicitation, roots) goes to the gateway's
 * client that made the call (declared by the host's clients with `HostOptions.gateway`).
 */
import { Observable, combineLatest, distinctUntilChanged, map, type Subscription } from '../lib/rx.ts'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import { createServer, proxy, type ListedOffer, type McpServer, type Mount, type Mountable, type MountCaller, type MountOffer, type ServerOptions } from '../actors/server.ts'
import type { McpClient } from '../actors/client.ts'
import type { Implementation } from '../lib/schema/types.ts'
import type { Host } from './host.ts'

/** Options of {@link hostServer}. */
export interface GatewayOptions {
  /** The gateway's name and version (default rxmcp-gateway). */
  info?: Implementation
  /** Options of the server the gateway is (limits, versions, instructions). */
  server?: ServerOptions
  /** Told of an upstream tool, prompt, resource or template the gateway left out (its name or URI already taken); default console.error. */
  onSkipped?: (tool: string, error: unknown) => void
  /**
   * `'shared'` (default): one client per server, the host's own, for every gateway client.
   * `'session'`: each gateway session (legacy era) gets its own client per server, started with
   * the host's configuration and closed with the session, whose roots, sampling and elicitation
   * are that session's: a server then sees each user's roots, and subscriptions per user. Costs a
   * process (stdio) or a connection (HTTP) per session and server. Modern-era callers share the
   * host's clients.
   */
  mode?: 'shared' | 'session'
}

/** A running gateway: the server (listen on any transport), and `close()`, which stops following the host. */
export interface Gateway {
  readonly server: McpServer
  close(): Promise<void>
}

/**
 * Serves `host`'s aggregated view as one MCP server.
 * @example
 * const gateway = hostServer(createHost(config, { gateway: true }))
 * await gateway.server.listen(streamableHttp({ port: 3000 }))
 */
export function hostServer(host: Host, options: GatewayOptions = {}): Gateway {
  // What the servers behind offer changes as they come and go: the lists are always declared, with listChanged.
  const serverOptions = options.server ?? {}
  const server = createServer(options.info ?? { name: 'rxmcp-gateway', version: '0.1.0' }, {
    ...serverOptions,
    capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true }, ...serverOptions.capabilities },
  })
  const skipped = options.onSkipped ?? ((tool, error) => console.error(`rxmcp gateway: ${tool} left out: ${error instanceof Error ? error.message : String(error)}`))
  /** Each server's mount, with the client it follows. */
  const mounts = new Map<string, { client: McpClient; mount: Mount }>()
  const unmount = (name: string) => {
    mounts.get(name)?.mount.remove()
    mounts.delete(name)
  }
  const following: Subscription = host.states.subscribe({
    next: states => {
      for (const [name, state] of states) {
        const client = state.status === 'ready' ? host.client(name) : undefined
        if (client === mounts.get(name)?.client) continue
        unmount(name)
        if (client === undefined) continue
        const mount = server.mount(name, hostSource(host, name, client, options.mode ?? 'shared'), {
          onSkipped: (kind, key, reason) => skipped(`${kind} ${key}`, new Error(reason)),
        })
        mounts.set(name, { client, mount })
      }
      for (const name of [...mounts.keys()]) if (!states.has(name)) unmount(name)
    },
    complete: () => { for (const name of [...mounts.keys()]) unmount(name) },
  })

  return {
    server,
    close: async () => {
      following.unsubscribe()
      for (const name of [...mounts.keys()]) unmount(name)
      await server.close()
    },
  }
}

/**
 * One configured server as the gateway mounts it: the host's view of it (tools after allow/deny,
 * everything within the host's limits) plus the templates its client lists; calls and reads
 * forwarded through its client (a session's own in mode 'session'), a tool call only once the
 * host's consent allows it.
 */
function hostSource(host: Host, name: string, client: McpClient, mode: 'shared' | 'session'): Mountable {
  // The host lists the server (tools after allow/deny, everything within its limits): that one
  // listing feeds the proxy, which lists only the templates the host does not keep.
  const listed: Observable<ListedOffer> = combineLatest([host.tools, host.resources, host.prompts]).pipe(
    map(([tools, resources, prompts]) => ({
      tools: tools.filter(tool => tool.server === name).map(tool => tool.tool),
      resources: resources.filter(resource => resource.server === name).map(resource => resource.resource),
      prompts: prompts.filter(prompt => prompt.server === name).map(prompt => prompt.prompt),
    })),
    distinctUntilChanged((a, b) => a.tools === b.tools && a.resources === b.resources && a.prompts === b.prompts || JSON.stringify(a) === JSON.stringify(b)),
  )
  const proxied = proxy(client, {
    mode,
    connect: options => host.startClient(name, options),
    // The host set the level it wants of the server (HostOptions.logLevel): left as it is.
    logLevel: false,
    listed,
  })
  const offers: Observable<MountOffer> = new Observable<MountOffer>(subscriber => {
    const subscription = proxied.offers.subscribe(subscriber)
    // The client closed: the server is gone until its supervisor restarts it (a new mount then).
    void client.closed.then(() => subscriber.complete())
    return subscription
  })
  return {
    offers,
    logs: proxied.logs,
    watch: uri => proxied.watch(uri),
    watchFor: proxied.watchFor === undefined ? undefined : (uri, session) => proxied.watchFor!(uri, session),
    holds: caller => proxied.holds?.(caller) ?? false,
    close: () => proxied.close?.() ?? Promise.resolve(),
    forward: (method: string, params: JsonObject | undefined, caller: MountCaller): Observable<JsonObject> => {
      // A modern caller's retry of a call held across its rounds was consented to on its first round.
      if (method !== 'tools/call' || proxied.holds?.(caller) === true) return proxied.forward(method, params, caller)
      const tool = String(params?.name)
      const args = (params?.arguments ?? {}) as Record<string, unknown>
      const consent = host.consent({ kind: 'tool', server: name, tool, arguments: args })
      // Nothing to ask (no hook, or allowed always): forwarded in this turn, no Promise per call.
      if (consent === true) return proxied.forward(method, params, caller)
      return new Observable<JsonObject>(subscriber => {
        let forwarded: Subscription | undefined
        let isDone = false
        Promise.resolve(consent).then(isAllowed => {
          if (isDone) return
          if (!isAllowed) {
            subscriber.next({ content: [{ type: 'text', text: `${name}: tool ${tool} denied by the user` }], isError: true })
            subscriber.complete()
            return
          }
          forwarded = proxied.forward(method, params, caller).subscribe(subscriber)
        }, error => subscriber.error(error))
        return () => { isDone = true; forwarded?.unsubscribe() }
      })
    },
  }
}

