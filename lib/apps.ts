/**
 * MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension): the protocol's names, the
 * shapes of its metadata, and the pure rules both sides apply to them. A server links a tool to
 * an HTML view (`_meta.ui.resourceUri` on the tool, a `ui://` resource of mimeType
 * `text/html;profile=mcp-app`); a host renders that view in a sandboxed iframe and talks to it
 * over postMessage JSON-RPC (`ui/initialize`, `ui/notifications/tool-input`, …).
 *
 * Nothing here touches the DOM or a socket: the server helpers (actors/server/apps.ts), the host's
 * API (host/apps.ts) and the browser bridge (host/app-bridge.ts) build on it.
 * @see https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/
 */
import type { JsonObject } from './jsonrpc/message.ts'
import type { Implementation, Tool } from './schema/types.ts'

/** The extension's identifier, under `capabilities.extensions` on both sides. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui'
/** The mimeType of an app's HTML resource. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app'
/** The revision of the app protocol (the postMessage side) this implementation speaks. */
export const APP_PROTOCOL_VERSION = '2026-01-26'
/** The revisions of the app protocol a host accepts in `ui/initialize`. */
export const APP_PROTOCOL_VERSIONS: readonly string[] = ['2026-01-26', '2025-11-21']

/**
 * The methods of the app protocol (view <-> host over postMessage), as `as const` names.
 * `→host` are the view's requests and notifications, `→view` the host's.
 */
export const AppMethod = {
  /** →host request: the handshake; answered with the host's info, capabilities and context. */
  Initialize: 'ui/initialize',
  /** →host notification: the view is ready for tool input. */
  Initialized: 'ui/notifications/initialized',
  /** →view notification: the tool's complete arguments. */
  ToolInput: 'ui/notifications/tool-input',
  /** →view notification: the arguments so far, while the model streams them. */
  ToolInputPartial: 'ui/notifications/tool-input-partial',
  /** →view notification: the tool's result. */
  ToolResult: 'ui/notifications/tool-result',
  /** →view notification: the tool call was cancelled. */
  ToolCancelled: 'ui/notifications/tool-cancelled',
  /** →view notification: a part of the host context changed (theme, size, display mode). */
  HostContextChanged: 'ui/notifications/host-context-changed',
  /** →host notification: the view's content size changed. */
  SizeChanged: 'ui/notifications/size-changed',
  /** →host request: open a URL outside the sandbox. */
  OpenLink: 'ui/open-link',
  /** →host request: add a message to the conversation. */
  Message: 'ui/message',
  /** →host request: set what the model sees of the view in later turns. */
  UpdateModelContext: 'ui/update-model-context',
  /** →host request: change display mode (inline, fullscreen, pip). */
  RequestDisplayMode: 'ui/request-display-mode',
  /** →host notification: the view asks to be closed. */
  RequestTeardown: 'ui/notifications/request-teardown',
  /** →view request: the host is about to remove the view. */
  ResourceTeardown: 'ui/resource-teardown',
  /** proxy→host notification: the sandbox proxy is loaded. */
  SandboxProxyReady: 'ui/notifications/sandbox-proxy-ready',
  /** host→proxy notification: the view's HTML and sandbox settings for the inner frame. */
  SandboxResourceReady: 'ui/notifications/sandbox-resource-ready',
} as const
export type AppMethod = typeof AppMethod[keyof typeof AppMethod]

/**
 * The origins an app's HTML may reach, declared on its resource (`_meta.ui.csp`). Omitted lists
 * mean none: an app with no declaration gets no network at all.
 */
export interface AppCsp {
  /** `connect-src`: fetch, XHR, WebSocket. */
  connectDomains?: string[]
  /** `script-src`, `style-src`, `img-src`, `font-src`, `media-src`. */
  resourceDomains?: string[]
  /** `frame-src` (default `'none'`). */
  frameDomains?: string[]
  /** `base-uri` (default `'self'`). */
  baseUriDomains?: string[]
}

/** Browser features an app asks for (`_meta.ui.permissions`); a host may grant them through the iframe's `allow`. */
export interface AppPermissions {
  camera?: JsonObject
  microphone?: JsonObject
  geolocation?: JsonObject
  clipboardWrite?: JsonObject
}

/** What an app's resource says about how to render it (`_meta.ui` of the resource and of its contents). */
export interface AppResourceMeta {
  csp?: AppCsp
  permissions?: AppPermissions
  /** A dedicated sandbox origin the app asks for (host-specific format). */
  domain?: string
  /** Whether the app wants the host to draw a border and background around it. */
  prefersBorder?: boolean
}

/** Who may call a tool: the model, the app (of the same server), or both (default both). */
export type ToolVisibility = 'model' | 'app'

/** A tool's `_meta.ui`: its view and who may call it. */
export interface AppToolMeta {
  resourceUri?: string
  visibility?: ToolVisibility[]
}

/** The display modes of a view. */
export type AppDisplayMode = 'inline' | 'fullscreen' | 'pip'

/**
 * What the host tells the view about where it runs (`hostContext` of `ui/initialize`, and the
 * changes in `ui/notifications/host-context-changed`). Every field is optional; the spec has more
 * (styles, fonts, safe area), passed through as given.
 */
export interface AppHostContext {
  toolInfo?: { id?: string | number; tool: Tool }
  theme?: 'light' | 'dark'
  displayMode?: AppDisplayMode
  availableDisplayModes?: AppDisplayMode[]
  containerDimensions?: { width?: number; maxWidth?: number; height?: number; maxHeight?: number }
  locale?: string
  timeZone?: string
  platform?: 'web' | 'desktop' | 'mobile'
  [key: string]: unknown
}

/** The view's side of the handshake (`ui/initialize` params). */
export interface AppInfo {
  readonly appInfo: Implementation
  readonly appCapabilities: JsonObject
  readonly protocolVersion: string
}

/** A client's declaration of the extension: `{ extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } }`. */
export function uiCapability(): { extensions: Record<string, JsonObject> } {
  return { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } }
}

/** Whether a peer's capabilities declare the extension with the app mimeType. */
export function hasUiExtension(capabilities: { extensions?: Record<string, JsonObject> } | undefined): boolean {
  const settings = capabilities?.extensions?.[UI_EXTENSION]
  if (settings === undefined) return false
  const mimeTypes = settings.mimeTypes
  return !Array.isArray(mimeTypes) || mimeTypes.includes(APP_MIME_TYPE)
}

/**
 * The `ui://` URI of a tool's view, or undefined: `_meta.ui.resourceUri`, else the deprecated flat
 * key `_meta["ui/resourceUri"]` that older servers still send.
 */
export function appUriOf(tool: Pick<Tool, '_meta'>): string | undefined {
  const meta = tool._meta
  if (meta === undefined) return undefined
  const ui = meta.ui as AppToolMeta | undefined
  const uri = typeof ui?.resourceUri === 'string' ? ui.resourceUri : meta['ui/resourceUri']
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : undefined
}

/** Whether an app may call this tool (its visibility includes `app`, the default). */
export function isAppCallable(tool: Pick<Tool, '_meta'>): boolean {
  const visibility = (tool._meta?.ui as AppToolMeta | undefined)?.visibility
  return !Array.isArray(visibility) || visibility.includes('app')
}

/** Whether the model may see and call this tool (its visibility includes `model`, the default). */
export function isModelVisible(tool: Pick<Tool, '_meta'>): boolean {
  const visibility = (tool._meta?.ui as AppToolMeta | undefined)?.visibility
  return !Array.isArray(visibility) || visibility.includes('model')
}

/** A CSP source list entry is kept only when it is a plain origin (no quotes, spaces or `;`), so a server cannot widen the policy with a keyword. */
function sources(domains: readonly string[] | undefined): string[] {
  return (domains ?? []).filter(domain => /^(https?|wss?):\/\/[A-Za-z0-9.*-]+(:\d+)?\/?$/.test(domain))
}

/**
 * The Content-Security-Policy an app runs under, from its resource's declaration: inline script
 * and style (apps are single HTML files), `data:`/`blob:` images and media, and nothing from the
 * network beyond the declared origins (SEP-1865: undeclared means none). Entries that are not
 * plain origins are dropped.
 */
export function appCsp(csp: AppCsp | undefined): string {
  const resource = sources(csp?.resourceDomains).join(' ')
  const connect = sources(csp?.connectDomains)
  const frame = sources(csp?.frameDomains)
  const base = sources(csp?.baseUriDomains)
  const withResources = (base: string) => resource === '' ? base : `${base} ${resource}`
  return [
    `default-src 'none'`,
    `script-src ${withResources(`'unsafe-inline' blob:`)}`,
    `style-src ${withResources(`'unsafe-inline'`)}`,
    `img-src ${withResources('data: blob:')}`,
    `font-src ${withResources('data:')}`,
    `media-src ${withResources('data: blob:')}`,
    `connect-src ${connect.length === 0 ? `'none'` : connect.join(' ')}`,
    `frame-src ${frame.length === 0 ? `'none'` : frame.join(' ')}`,
    `base-uri ${base.length === 0 ? `'self'` : base.join(' ')}`,
    `object-src 'none'`,
    `form-action 'none'`,
  ].join('; ')
}

/** The iframe `allow` attribute (Permissions Policy) for the permissions a host grants. */
export function appAllow(permissions: AppPermissions | undefined): string {
  const features: string[] = []
  if (permissions?.camera !== undefined) features.push('camera')
  if (permissions?.microphone !== undefined) features.push('microphone')
  if (permissions?.geolocation !== undefined) features.push('geolocation')
  if (permissions?.clipboardWrite !== undefined) features.push('clipboard-write')
  return features.join('; ')
}

/** The sandbox attribute of the frame that holds the app: scripts and forms, never same-origin, top navigation or popups escaping it. */
export const APP_SANDBOX = 'allow-scripts allow-forms'
