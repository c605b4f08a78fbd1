/**
 * MCP Apps for a web host built on {@link createHost}: which tools have a view, a view's HTML and
 * rendering metadata read through the server that owns it, and a view's own tool calls run under
 * the host's consent policy. A page renders the view with `createAppBridge` (host/app-bridge.ts),
 * handing it {@link HostApps.bridgeFunctions}'s functions (over whatever carries them to the page).
 * Create the host with `apps: true` so servers that check the client's capability offer views.
 */
import { map, type Observable } from '../lib/rx.ts'
import { APP_MIME_TYPE, appUriOf, isAppCallable, type AppResourceMeta } from '../lib/apps.ts'
import { InvalidParamsError, ResourceNotFoundError } from '../lib/jsonrpc/errors.ts'
import type { CallToolResult, ReadResourceResult } from '../lib/schema/types.ts'
import type { Host } from './host.ts'
import type { HostCallOptions, HostTool } from './view.ts'

/** A tool of the aggregated view that has an MCP App view. */
export interface HostApp {
  /** The tool (its namespaced name, its server, its definition). */
  readonly tool: HostTool
  /** The `ui://` URI of its view. */
  readonly uri: string
}

/** A view's HTML and how to render it, read from its server. */
export interface AppContent {
  readonly uri: string
  readonly html: string
  /** `_meta.ui` of the read contents, else of the `resources/list` entry (SEP-1865's order). */
  readonly meta: AppResourceMeta
}

/** The functions a bridge needs for one view, bound to the view's server and the host's policy. */
export interface AppBridgeFunctions {
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>
  readResource(uri: string): Promise<ReadResourceResult>
}

/** The app side of a host, from {@link hostApps}. */
export interface HostApps {
  /** The tools with a view, now and on every change of the aggregated tools. */
  readonly list: Observable<readonly HostApp[]>
  /** The tools with a view now. */
  current(): readonly HostApp[]
  /** The app of a tool by its aggregated name, if it has one. */
  appOf(toolName: string): HostApp | undefined
  /**
   * Reads a tool's view (`resources/read` of its `ui://` URI at the tool's server).
   * @throws InvalidParamsError when the tool is unknown or has no view; ResourceNotFoundError when
   * the server gives no HTML of the app mimeType.
   */
  read(toolName: string): Promise<AppContent>
  /**
   * Calls, for the view of `appTool`, a tool of the same server by its own name: refused unless
   * that tool's visibility includes `app`; then the host's call, consent included (the consent
   * request carries `app`: the view's URI).
   */
  callTool(appTool: string, name: string, args?: Record<string, unknown>, options?: HostCallOptions): Promise<CallToolResult>
  /** Reads, for the view of `appTool`, a resource of the same server. */
  readResource(appTool: string, uri: string): Promise<ReadResourceResult>
  /** `callTool` and `readResource` bound to one view, the shape `createAppBridge` takes. */
  bridgeFunctions(appTool: string): AppBridgeFunctions
}

/**
 * The MCP Apps API of a host.
 * @example
 * const host = createHost(config, { apps: true, consent })
 * const apps = hostApps(host)
 * const { html, meta } = await apps.read('clock__get-time')
 * const result = await apps.callTool('clock__get-time', 'get-time', {})   // as the view would
 */
export function hostApps(host: Host): HostApps {
  const appsOf = (tools: readonly HostTool[]): HostApp[] => tools.flatMap(tool => {
    const uri = appUriOf(tool.tool)
    return uri === undefined ? [] : [{ tool, uri }]
  })
  const appOf = (toolName: string): HostApp | undefined => appsOf(host.currentTools().filter(tool => tool.name === toolName))[0]
  const requireApp = (toolName: string): HostApp => {
    const app = appOf(toolName)
    if (app === undefined) throw new InvalidParamsError(`Invalid params: tool ${JSON.stringify(toolName)} has no app`)
    return app
  }
  const clientOf = (server: string) => {
    const client = host.client(server)
    if (client === undefined) throw new Error(`Server ${server} is not ready`)
    return client
  }
  const apps: HostApps = {
    list: host.tools.pipe(map(appsOf)),
    current: () => appsOf(host.currentTools()),
    appOf,
    async read(toolName) {
      const app = requireApp(toolName)
      const result = await clientOf(app.tool.server).readResource(app.uri)
      const content = result.contents.find(item => item.uri === app.uri && 'text' in item) ?? result.contents.find(item => 'text' in item)
      if (content === undefined || !('text' in content) || (content.mimeType !== undefined && content.mimeType !== APP_MIME_TYPE)) {
        throw new ResourceNotFoundError(`${app.tool.server}: ${app.uri} has no ${APP_MIME_TYPE} text`, { uri: app.uri })
      }
      const listed = listedMeta(host, app)
      const meta = (content._meta?.ui ?? listed ?? {}) as AppResourceMeta
      return { uri: app.uri, html: content.text, meta }
    },
    async callTool(appTool, name, args = {}, options = {}) {
      const app = requireApp(appTool)
      const target = host.currentTools().find(tool => tool.server === app.tool.server && tool.tool.name === name)
      // MCP Apps: a view calls only tools of its own server, and only those visible to apps.
      if (target === undefined) throw new InvalidParamsError(`Invalid params: ${app.tool.server} has no tool ${JSON.stringify(name)}`)
      if (!isAppCallable(target.tool)) throw new InvalidParamsError(`Invalid params: tool ${JSON.stringify(name)} is not callable by apps`)
      return host.callTool(target.name, args, { ...options, app: app.uri })
    },
    async readResource(appTool, uri) {
      const app = requireApp(appTool)
      return clientOf(app.tool.server).readResource(uri)
    },
    bridgeFunctions(appTool) {
      return {
        callTool: (name, args) => apps.callTool(appTool, name, args),
        readResource: uri => apps.readResource(appTool, uri),
      }
    },
  }
  return apps
}

/** `_meta.ui` of the view's `resources/list` entry, when its server listed it. */
function listedMeta(host: Host, app: HostApp): unknown {
  // host.resources replays the current list to a new subscriber, synchronously.
  let found: unknown
  const subscription = host.resources.subscribe(resources => {
    found = resources.find(entry => entry.server === app.tool.server && entry.resource.uri === app.uri)?.resource._meta?.ui
  })
  subscription.unsubscribe()
  return found
}
