/**
 * The gateway: the host's aggregated view served as one MCP server, so a desktop host or a remote
 * agent talks to one endpoint (any transport, both eras) instead of to every server. Tools,
 * resources and prompts follow the host's view as it changes (clients get list_changed); calls are
 * routed through the host, its policy included; progress and cancellation flow through.
 */
import type { Observable, Subscription } from '../lib/rx.ts'
import { createServer, type McpServer, type Registration, type ServerOptions, type ToolDefinition } from '../actors/server.ts'
import type { Implementation } from '../lib/schema/types.ts'
import type { Host } from './host.ts'

/** Options of {@link hostServer}. */
export interface GatewayOptions {
  /** The gateway's name and version (default rxmcp-gateway). */
  info?: Implementation
  /** Options of the server the gateway is (limits, versions, instructions). */
  server?: ServerOptions
  /** Told of an upstream tool the gateway could not offer (a schema it cannot compile); default console.error. */
  onSkipped?: (tool: string, error: unknown) => void
}

/** A running gateway: the server (listen on any transport), and `close()`, which stops following the host. */
export interface Gateway {
  readonly server: McpServer
  close(): Promise<void>
}

/**
 * Serves `host`'s aggregated view as one MCP server.
 * @example
 * const gateway = hostServer(createHost(config))
 * await gateway.server.listen(streamableHttp({ port: 3000 }))
 */
export function hostServer(host: Host, options: GatewayOptions = {}): Gateway {
  // What the servers behind offer changes as they come and go: the lists are always declared, with listChanged.
  const serverOptions = options.server ?? {}
  const server = createServer(options.info ?? { name: 'rxmcp-gateway', version: '0.1.0' }, {
    ...serverOptions,
    capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true }, ...serverOptions.capabilities },
  })
  const skipped = options.onSkipped ?? ((tool, error) => console.error(`rxmcp gateway: tool ${tool} left out: ${error instanceof Error ? error.message : String(error)}`))
  const subscriptions: Subscription[] = []

  subscriptions.push(follow(host.tools, tool => tool.name, tool => {
    const { name: _name, ...definition } = tool.tool
    return [JSON.stringify(definition), () => server.tool(tool.name, definition as ToolDefinition, (args, ctx) =>
      host.callTool(tool.name, args, { signal: ctx.signal, onProgress: event => ctx.progress(event.progress, event.total, event.message) }))]
  }, skipped))
  subscriptions.push(follow(host.resources, entry => entry.resource.uri, entry => {
    const { uri, ...definition } = entry.resource
    return [JSON.stringify(definition), () => server.resource(uri, definition, () => host.readResource(uri))]
  }, skipped))
  subscriptions.push(follow(host.prompts, prompt => prompt.name, prompt => {
    const { name: _name, ...definition } = prompt.prompt
    return [JSON.stringify(definition), () => server.prompt(prompt.name, definition, args => host.getPrompt(prompt.name, args as Record<string, string>))]
  }, skipped))

  // Servers' log messages go to every session of the gateway, the server's name as logger.
  subscriptions.push(host.logs.subscribe(entry => server.log(entry.level, entry.data, entry.logger === undefined ? entry.server : `${entry.server}/${entry.logger}`)))

  return {
    server,
    close: async () => {
      for (const subscription of subscriptions) subscription.unsubscribe()
      await server.close()
    },
  }
}

/**
 * Keeps registrations in step with a list: new keys registered, gone ones removed, changed ones
 * (by their definition's JSON) registered again. Each change of the list is one pass.
 */
function follow<T>(
  list: Observable<readonly T[]>,
  keyOf: (item: T) => string,
  register: (item: T) => [definition: string, register: () => Registration<unknown>],
  skipped: (name: string, error: unknown) => void,
): Subscription {
  const current = new Map<string, { definition: string; registration: Registration<unknown> }>()
  return list.subscribe(items => {
    const seen = new Set<string>()
    for (const item of items) {
      const key = keyOf(item)
      seen.add(key)
      const [definition, make] = register(item)
      const existing = current.get(key)
      if (existing?.definition === definition) continue
      existing?.registration.remove()
      current.delete(key)
      try {
        current.set(key, { definition, registration: make() })
      } catch (error) {
        skipped(key, error)
      }
    }
    for (const [key, entry] of current) {
      if (seen.has(key)) continue
      entry.registration.remove()
      current.delete(key)
    }
  })
}
