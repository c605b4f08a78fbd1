/**
 * The host side of an MCP App (SEP-1865) in a web page: renders a tool's view in a sandboxed
 * iframe and answers its postMessage JSON-RPC. It reaches MCP only through the plain functions it
 * is given (`callTool`, `readResource`, `consent`), so the web inspector, a page on `createHost`'s
 * app API (host/apps.ts) or any other web host can use it. It runs in a browser page and imports
 * nothing Node-only.
 *
 * Why not ext-apps' own `AppBridge`: it extends the official client SDK's `Protocol` (its
 * constructor wants that SDK's `Client`, or null and handlers), and bundled for a page it weighs
 * 146 KB gzipped, the whole budget of the web inspector. This module speaks the same protocol in
 * a few KB and is tested against the official example apps, which run ext-apps' `App`.
 *
 * The frames (SEP-1865: a web host MUST put a sandbox proxy on another origin between itself and
 * the view):
 *
 * ```
 * host page ──postMessage──▶ proxy frame ──postMessage──▶ view frame
 * (your origin)              sandbox="allow-scripts"       sandbox="allow-scripts allow-forms"
 *                            srcdoc: opaque origin          srcdoc: the app's HTML with its CSP
 *                            (or `proxyUrl` on another      as a <meta>, `allow` from the
 *                            origin you serve)              permissions granted
 * ```
 *
 * The handshake and what follows:
 *
 * ```
 * proxy ─ ui/notifications/sandbox-proxy-ready ─▶ bridge
 * bridge ─ ui/notifications/sandbox-resource-ready {html, sandbox, csp, permissions} ─▶ proxy (makes the view frame)
 * view ─ ui/initialize {appInfo, appCapabilities, protocolVersion} ─▶ bridge ─▶ {hostInfo, hostCapabilities, hostContext}
 * view ─ ui/notifications/initialized ─▶ bridge           (`ready` resolves; queued tool input/result go out)
 * bridge ─ ui/notifications/tool-input / tool-result / tool-cancelled / host-context-changed ─▶ view
 * view ─ tools/call ─▶ consent? ─▶ callTool ─▶ result    (refused: a JSON-RPC error to the view)
 * view ─ ui/open-link, ui/message, ui/update-model-context ─▶ consent? ─▶ your handler
 * view ─ ui/notifications/size-changed ─▶ the frame's height follows; a `size` event
 * bridge ─ ui/resource-teardown ─▶ view, then the frames are removed      (close())
 * ```
 */
import { Subject, type Observable } from '../lib/rx.ts'
import {
  APP_PROTOCOL_VERSION, APP_PROTOCOL_VERSIONS, APP_SANDBOX, AppMethod, appAllow, appCsp,
  type AppHostContext, type AppInfo, type AppResourceMeta,
} from '../lib/apps.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import type { CallToolResult, Implementation, ReadResourceResult, Tool } from '../lib/schema/types.ts'

/** What the view asks for that leaves the sandbox; `consent` decides each one. */
export type AppRequest =
  | { readonly kind: 'tools/call'; readonly name: string; readonly arguments: Record<string, unknown> }
  | { readonly kind: 'resources/read'; readonly uri: string }
  | { readonly kind: 'open-link'; readonly url: string }
  | { readonly kind: 'message'; readonly params: JsonObject }
  | { readonly kind: 'update-model-context'; readonly params: JsonObject }

/** What a bridge reports, in order: every message both ways, the handshake, size changes, the view's requests to close, its logs. */
export type AppBridgeEvent =
  | { readonly type: 'message'; readonly direction: 'in' | 'out'; readonly message: JsonObject }
  | { readonly type: 'initialized'; readonly app: AppInfo }
  | { readonly type: 'size'; readonly width?: number; readonly height?: number }
  | { readonly type: 'log'; readonly level: string; readonly logger?: string; readonly data: unknown }
  | { readonly type: 'teardown-requested' }
  | { readonly type: 'error'; readonly error: Error }

/** Options of {@link createAppBridge}. */
export interface AppBridgeOptions {
  /** The element the proxy frame is appended to. */
  container: HTMLElement
  /** The view's HTML: the text of the tool's `ui://` resource. */
  html: string
  /** The resource's `_meta.ui` (from its `resources/read` contents, else its `resources/list` entry): CSP, permissions, border. */
  meta?: AppResourceMeta
  /** The tool whose view this is, as `tools/list` gave it (told to the view as `hostContext.toolInfo`). */
  tool: Tool
  /** The host's name and version, told to the view. */
  hostInfo: Implementation
  /** Theme, display mode, container size, locale: the rest of the `hostContext` (default `{ displayMode: 'inline', platform: 'web' }`). */
  hostContext?: AppHostContext
  /**
   * Calls a tool of the view's server by its own name (not a host's namespaced one); rejects or
   * resolves with an `isError` result as `tools/call` does. Reached only after `consent`.
   */
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>
  /** Reads a resource of the view's server; without it the view is not offered `serverResources`. Reached only after `consent`. */
  readResource?(uri: string): Promise<ReadResourceResult>
  /**
   * Decides every request of the view that leaves the sandbox (its tool calls, resource reads,
   * links, messages). `false` answers the view with an error (-32000 for tools/call and
   * resources/read, `isError: true` for the ui/ requests) and reaches nothing.
   */
  consent(request: AppRequest): boolean | Promise<boolean>
  /** Opens a URL the view asked for (after consent); without it the view is not offered `openLinks`. */
  openLink?(url: string): void | Promise<void>
  /** Takes a message the view adds to the conversation (`ui/message` params: role and content), after consent; without it the view is not offered `message`. */
  message?(params: JsonObject): void | Promise<void>
  /** Takes what the view wants the model to see (`ui/update-model-context` params), after consent; without it not offered. */
  updateModelContext?(params: JsonObject): void | Promise<void>
  /**
   * The sandbox proxy's URL, a page that serves {@link sandboxProxyHtml} from an origin other than
   * the host page's. Default: the proxy in a `srcdoc` frame without `allow-same-origin`, whose
   * origin is opaque (it inherits the host page's CSP, which must then allow inline scripts).
   */
  proxyUrl?: string
  /** Whether the frame's height follows the view's `size-changed` (default true). */
  autoResize?: boolean
  /** How long `close()` waits for the view to answer `ui/resource-teardown` (default 2000 ms). */
  teardownTimeoutMs?: number
}

/** One view on the page, from {@link createAppBridge}. */
export interface AppBridge {
  /** The outer (proxy) frame, in `container`. */
  readonly frame: HTMLIFrameElement
  /** Everything the bridge sees, hot, in order; completes on `close()`. */
  readonly events: Observable<AppBridgeEvent>
  /** Resolves with the view's info once it sent `ui/notifications/initialized`; rejects if the bridge closes first. */
  readonly ready: Promise<AppInfo>
  /** Sends the tool's complete arguments (held until the view is initialized; a later call replaces a held one). */
  sendToolInput(args: Record<string, unknown>): void
  /** Sends the arguments so far while they stream (dropped unless the view is initialized). */
  sendToolInputPartial(args: Record<string, unknown>): void
  /** Sends the tool's result (held until the view is initialized and has had its input). */
  sendToolResult(result: CallToolResult): void
  /** Tells the view the call was cancelled. */
  sendToolCancelled(reason?: string): void
  /** Merges `changes` into the host context and tells the view (`ui/notifications/host-context-changed`). */
  setHostContext(changes: AppHostContext): void
  /** Asks the view to tear down (`ui/resource-teardown`, bounded by `teardownTimeoutMs`), then removes the frames and completes `events`. */
  close(): Promise<void>
}

/** Defaults of {@link AppBridgeOptions}. */
export const APP_BRIDGE_DEFAULTS = { autoResize: true, teardownTimeoutMs: 2_000 } as const

/**
 * The sandbox proxy page: it waits for `ui/notifications/sandbox-resource-ready` from its parent,
 * makes the view's frame from it (srcdoc with the CSP as a `<meta>`, the sandbox and `allow`
 * given), then relays every other message between its parent and the view, nothing else. A host
 * that serves it on its own origin passes that URL as `proxyUrl`; `csp` (when given) is also the
 * proxy's own policy, which a srcdoc view inherits.
 */
export function sandboxProxyHtml(csp?: string): string {
  const policy = csp === undefined ? '' : `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">`
  return `<!doctype html><html><head><meta charset="utf-8">${policy}<style>html,body{margin:0;padding:0;height:100%;overflow:hidden}iframe{border:0;width:100%;height:100%;display:block}</style></head><body><script>${PROXY_SCRIPT}</script></body></html>`
}

/** The proxy's script (see {@link sandboxProxyHtml}): relays by `event.source`, never by origin, since both other frames may be opaque. */
const PROXY_SCRIPT = `(() => {
  let view
  addEventListener('message', event => {
    const message = event.data
    if (event.source === parent) {
      if (message && message.method === '${AppMethod.SandboxResourceReady}' && view === undefined) {
        const p = message.params || {}
        view = document.createElement('iframe')
        view.setAttribute('sandbox', typeof p.sandbox === 'string' ? p.sandbox : '${APP_SANDBOX}')
        if (typeof p.allow === 'string' && p.allow !== '') view.setAttribute('allow', p.allow)
        view.srcdoc = String(p.html)
        document.body.appendChild(view)
        return
      }
      if (view && view.contentWindow) view.contentWindow.postMessage(message, '*')
    } else if (view && event.source === view.contentWindow) {
      parent.postMessage(message, '*')
    }
  })
  parent.postMessage({ jsonrpc: '2.0', method: '${AppMethod.SandboxProxyReady}', params: {} }, '*')
})()`

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}

/**
 * The view's HTML with its CSP as the first thing in `<head>` (a `<meta>` policy applies only to
 * what comes after it), so no script of the view runs before the policy does.
 */
export function withCsp(html: string, csp: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">`
  const head = /<head(\s[^>]*)?>/i.exec(html)
  if (head !== null) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length)
  const root = /<html(\s[^>]*)?>/i.exec(html)
  if (root !== null) return `${html.slice(0, root.index + root[0].length)}<head>${meta}</head>${html.slice(root.index + root[0].length)}`
  return `<!doctype html><html><head>${meta}</head><body>${html}</body></html>`
}

/**
 * Renders a tool's view in a sandboxed iframe inside `container` and carries the host side of its
 * protocol (see the diagram at the top of this module). The frames exist from the call on; the
 * view is usable once `ready` resolves.
 * @example
 * const { contents } = await client.readResource(appUriOf(tool)!)
 * const bridge = createAppBridge({
 *   container: document.querySelector('#app')!, html: contents[0].text, meta: contents[0]._meta?.ui, tool,
 *   hostInfo: { name: 'my-host', version: '1.0.0' },
 *   callTool: (name, args) => client.callTool(name, args),
 *   consent: request => confirm(`Allow the app: ${JSON.stringify(request)}?`),
 * })
 * bridge.sendToolInput(args)
 * bridge.sendToolResult(await client.callTool(tool.name, args))
 */
export function createAppBridge(options: AppBridgeOptions): AppBridge {
  return new PageAppBridge(options)
}

/** A JSON-RPC error as sent to the view. */
class AppError extends Error {
  constructor(readonly code: number, message: string) { super(message) }
}

class PageAppBridge implements AppBridge {
  readonly frame: HTMLIFrameElement
  readonly #events = new Subject<AppBridgeEvent>()
  readonly events = this.#events.asObservable()
  readonly ready: Promise<AppInfo>
  readonly #options: AppBridgeOptions
  /** Where messages to the proxy go: its origin when served from a URL, else `*` (an opaque origin cannot be named). */
  readonly #targetOrigin: string
  /** The host context told to the view, with every change merged in. */
  #hostContext: AppHostContext
  /** The view's handshake, once `ui/initialize` arrived. */
  #app: AppInfo | undefined
  /** Whether `ui/notifications/initialized` arrived: before it, tool input and result are held. */
  #isInitialized = false
  #isClosed = false
  /** Tool input and result sent before the view was initialized, in the order they must go out. */
  #held: { input?: JsonObject; result?: JsonObject } = {}
  /** Requests the bridge sent the view (teardown), by id. */
  readonly #pending = new Map<number, (message: JsonObject) => void>()
  /** The next id of a request to the view. */
  #nextId = 1
  #resolveReady!: (app: AppInfo) => void
  #rejectReady!: (error: Error) => void
  readonly #onMessage = (event: MessageEvent) => this.#receive(event)

  constructor(options: AppBridgeOptions) {
    this.#options = options
    this.#hostContext = { displayMode: 'inline', availableDisplayModes: ['inline'], platform: 'web', ...options.hostContext, toolInfo: { tool: options.tool } }
    this.ready = new Promise((resolve, reject) => { this.#resolveReady = resolve; this.#rejectReady = reject })
    this.ready.catch(() => undefined)
    this.frame = document.createElement('iframe')
    // Without allow-same-origin a srcdoc proxy's origin is opaque: another origin than the page's, as SEP-1865 asks.
    this.frame.setAttribute('sandbox', options.proxyUrl === undefined ? 'allow-scripts allow-forms' : 'allow-scripts allow-forms allow-same-origin')
    const allow = appAllow(options.meta?.permissions)
    if (allow !== '') this.frame.setAttribute('allow', allow)
    this.frame.setAttribute('title', options.tool.title ?? options.tool.name)
    this.frame.style.border = options.meta?.prefersBorder === true ? '1px solid #ccc' : '0'
    this.frame.style.width = '100%'
    this.#targetOrigin = options.proxyUrl === undefined ? '*' : new URL(options.proxyUrl, location.href).origin
    window.addEventListener('message', this.#onMessage)
    if (options.proxyUrl === undefined) this.frame.srcdoc = sandboxProxyHtml(appCsp(options.meta?.csp))
    else this.frame.src = options.proxyUrl
    options.container.appendChild(this.frame)
  }

  sendToolInput(args: Record<string, unknown>): void {
    const params = { arguments: args } as JsonObject
    if (this.#isInitialized) this.#notify(AppMethod.ToolInput, params)
    else this.#held.input = params
  }

  sendToolInputPartial(args: Record<string, unknown>): void {
    if (this.#isInitialized) this.#notify(AppMethod.ToolInputPartial, { arguments: args } as JsonObject)
  }

  sendToolResult(result: CallToolResult): void {
    if (this.#isInitialized) this.#notify(AppMethod.ToolResult, result as unknown as JsonObject)
    else this.#held.result = result as unknown as JsonObject
  }

  sendToolCancelled(reason?: string): void {
    if (this.#isInitialized) this.#notify(AppMethod.ToolCancelled, reason === undefined ? {} : { reason })
  }

  setHostContext(changes: AppHostContext): void {
    this.#hostContext = { ...this.#hostContext, ...changes }
    if (this.#isInitialized) this.#notify(AppMethod.HostContextChanged, changes as JsonObject)
  }

  async close(): Promise<void> {
    if (this.#isClosed) return
    if (this.#isInitialized) {
      const timeoutMs = this.#options.teardownTimeoutMs ?? APP_BRIDGE_DEFAULTS.teardownTimeoutMs
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        this.#request(AppMethod.ResourceTeardown, {}),
        // Bounded: a view that never answers must not keep its frame on the page.
        new Promise(resolve => { timer = setTimeout(resolve, timeoutMs) }),
      ]).finally(() => clearTimeout(timer))
    }
    this.#isClosed = true
    window.removeEventListener('message', this.#onMessage)
    this.frame.remove()
    this.#rejectReady(new Error('The app bridge closed before the view was initialized'))
    this.#events.complete()
  }

  /** One message from the window: kept only when it comes from our proxy frame and is JSON-RPC. */
  #receive(event: MessageEvent): void {
    if (this.#isClosed || event.source !== this.frame.contentWindow) return
    if (this.#targetOrigin !== '*' && event.origin !== this.#targetOrigin) return
    const message = event.data as JsonObject
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') return
    this.#events.next({ type: 'message', direction: 'in', message })
    const { method, id } = message
    if (typeof method !== 'string') {
      if (typeof id === 'number') { this.#pending.get(id)?.(message); this.#pending.delete(id) }
      return
    }
    const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as JsonObject
    if (id === undefined) { this.#notification(method, params); return }
    if (typeof id !== 'string' && typeof id !== 'number') return
    this.#answer(method, params).then(
      result => this.#post({ jsonrpc: '2.0', id, result }),
      (error: unknown) => {
        const code = error instanceof AppError ? error.code : ErrorCode.InternalError
        const text = error instanceof Error ? error.message : String(error)
        this.#post({ jsonrpc: '2.0', id, error: { code, message: text } })
      },
    )
  }

  #notification(method: string, params: JsonObject): void {
    switch (method) {
      case AppMethod.SandboxProxyReady: {
        const { meta } = this.#options
        this.#notify(AppMethod.SandboxResourceReady, {
          html: withCsp(this.#options.html, appCsp(meta?.csp)), sandbox: APP_SANDBOX, allow: appAllow(meta?.permissions),
          ...(meta?.csp === undefined ? {} : { csp: meta.csp as JsonObject }),
          ...(meta?.permissions === undefined ? {} : { permissions: meta.permissions as JsonObject }),
        })
        return
      }
      case AppMethod.Initialized: {
        if (this.#app === undefined || this.#isInitialized) return
        this.#isInitialized = true
        // MCP Apps: the host sends tool input only after the view said it is initialized, and the result after the input.
        if (this.#held.input !== undefined) this.#notify(AppMethod.ToolInput, this.#held.input)
        if (this.#held.result !== undefined) this.#notify(AppMethod.ToolResult, this.#held.result)
        this.#held = {}
        this.#events.next({ type: 'initialized', app: this.#app })
        this.#resolveReady(this.#app)
        return
      }
      case AppMethod.SizeChanged: {
        const width = typeof params.width === 'number' ? params.width : undefined
        const height = typeof params.height === 'number' ? params.height : undefined
        if (height !== undefined && (this.#options.autoResize ?? APP_BRIDGE_DEFAULTS.autoResize)) this.frame.style.height = `${Math.ceil(height)}px`
        this.#events.next({ type: 'size', ...(width === undefined ? {} : { width }), ...(height === undefined ? {} : { height }) })
        return
      }
      case AppMethod.RequestTeardown:
        this.#events.next({ type: 'teardown-requested' })
        return
      case 'notifications/message':
        this.#events.next({ type: 'log', level: String(params.level ?? 'info'), ...(typeof params.logger === 'string' ? { logger: params.logger } : {}), data: params.data })
        return
      default:
        // Unknown notifications are ignored, as JSON-RPC has it.
        return
    }
  }

  /** The answer to one request of the view. */
  async #answer(method: string, params: JsonObject): Promise<JsonObject> {
    const options = this.#options
    switch (method) {
      case AppMethod.Initialize: {
        const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : APP_PROTOCOL_VERSION
        this.#app = {
          appInfo: (params.appInfo ?? { name: 'unknown', version: '0' }) as unknown as Implementation,
          appCapabilities: (params.appCapabilities ?? {}) as JsonObject,
          protocolVersion: APP_PROTOCOL_VERSIONS.includes(requested) ? requested : APP_PROTOCOL_VERSION,
        }
        return {
          protocolVersion: this.#app.protocolVersion,
          hostInfo: options.hostInfo as unknown as JsonObject,
          hostCapabilities: this.#capabilities(),
          hostContext: this.#hostContext as JsonObject,
        }
      }
      case 'ping':
        return {}
      case 'tools/call': {
        const name = params.name
        if (typeof name !== 'string') throw new AppError(ErrorCode.InvalidParams, 'tools/call needs a tool name')
        const args = (typeof params.arguments === 'object' && params.arguments !== null ? params.arguments : {}) as Record<string, unknown>
        if (!await options.consent({ kind: 'tools/call', name, arguments: args })) throw new AppError(ErrorCode.ConnectionClosed, `The host refused the app's call of ${name}`)
        return await options.callTool(name, args) as unknown as JsonObject
      }
      case 'resources/read': {
        const uri = params.uri
        if (options.readResource === undefined) throw new AppError(ErrorCode.MethodNotFound, 'This host does not read resources for apps')
        if (typeof uri !== 'string') throw new AppError(ErrorCode.InvalidParams, 'resources/read needs a uri')
        if (!await options.consent({ kind: 'resources/read', uri })) throw new AppError(ErrorCode.ConnectionClosed, `The host refused the app's read of ${uri}`)
        return await options.readResource(uri) as unknown as JsonObject
      }
      case AppMethod.OpenLink: {
        const url = params.url
        if (options.openLink === undefined) throw new AppError(ErrorCode.MethodNotFound, 'This host does not open links for apps')
        if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return { isError: true }
        if (!await options.consent({ kind: 'open-link', url })) return { isError: true }
        await options.openLink(url)
        return {}
      }
      case AppMethod.Message: {
        if (options.message === undefined) throw new AppError(ErrorCode.MethodNotFound, 'This host does not take messages from apps')
        if (!await options.consent({ kind: 'message', params })) return { isError: true }
        await options.message(params)
        return {}
      }
      case AppMethod.UpdateModelContext: {
        if (options.updateModelContext === undefined) throw new AppError(ErrorCode.MethodNotFound, 'This host does not take model context from apps')
        if (!await options.consent({ kind: 'update-model-context', params })) return { isError: true }
        await options.updateModelContext(params)
        return {}
      }
      case AppMethod.RequestDisplayMode:
        // Only inline is offered: the answer is the mode in effect.
        return { mode: this.#hostContext.displayMode ?? 'inline' }
      default:
        throw new AppError(ErrorCode.MethodNotFound, `Method not found: ${method}`)
    }
  }

  /** What the host offers the view: what its options can do. */
  #capabilities(): JsonObject {
    const { meta, ...options } = this.#options
    const capabilities: JsonObject = { serverTools: {}, logging: {} }
    if (options.readResource !== undefined) capabilities.serverResources = {}
    if (options.openLink !== undefined) capabilities.openLinks = {}
    if (options.message !== undefined) capabilities.message = { text: {} }
    if (options.updateModelContext !== undefined) capabilities.updateModelContext = { text: {} }
    const sandbox: JsonObject = {}
    if (meta?.csp !== undefined) sandbox.csp = meta.csp as JsonObject
    if (meta?.permissions !== undefined) sandbox.permissions = meta.permissions as JsonObject
    capabilities.sandbox = sandbox
    return capabilities
  }

  #request(method: string, params: JsonObject): Promise<JsonObject> {
    const id = this.#nextId++
    return new Promise(resolve => {
      this.#pending.set(id, resolve)
      this.#post({ jsonrpc: '2.0', id, method, params })
    })
  }

  #notify(method: string, params: JsonObject): void {
    this.#post({ jsonrpc: '2.0', method, params })
  }

  #post(message: JsonObject): void {
    if (this.#isClosed) return
    this.#events.next({ type: 'message', direction: 'out', message })
    this.frame.contentWindow?.postMessage(message, this.#targetOrigin)
  }
}
