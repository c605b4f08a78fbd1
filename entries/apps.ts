/**
 * `rxmcp/apps`: MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension) on both sides.
 *
 * - Server: `appResource` registers a tool's HTML view (`ui://…`, `text/html;profile=mcp-app`,
 *   its CSP and permissions), `appTool` registers a tool linked to it; both declare the extension.
 * - Host, in a web page: `createAppBridge` renders a view in a sandboxed iframe (behind a sandbox
 *   proxy) and answers its postMessage JSON-RPC, reaching MCP only through the functions it is
 *   given. Nothing in this entry imports `node:`, so a page bundles it as it is.
 * - Host, on `createHost` (Node side): `hostApps(host)` is in `rxmcp/host`.
 *
 * @example
 * import { createServer } from 'rxmcp/server'
 * import { appResource, appTool } from 'rxmcp/apps'
 * const server = createServer({ name: 'clock', version: '1.0.0' })
 * appResource(server, 'ui://clock/view.html', { name: 'Clock', html })
 * appTool(server, 'get-time', { description: 'The time', resourceUri: 'ui://clock/view.html' },
 *   () => ({ content: [{ type: 'text', text: new Date().toISOString() }] }))
 */
export {
  UI_EXTENSION, APP_MIME_TYPE, APP_PROTOCOL_VERSION, APP_PROTOCOL_VERSIONS, APP_SANDBOX, AppMethod,
  uiCapability, hasUiExtension, appUriOf, isAppCallable, isModelVisible, appCsp, appAllow,
} from '../lib/apps.ts'
export type {
  AppCsp, AppPermissions, AppResourceMeta, ToolVisibility, AppToolMeta, AppDisplayMode, AppHostContext, AppInfo,
} from '../lib/apps.ts'
export { appResource, appTool } from '../actors/server/apps.ts'
export type { AppResourceDefinition, AppToolDefinition } from '../actors/server/apps.ts'
export { createAppBridge, sandboxProxyHtml, withCsp, APP_BRIDGE_DEFAULTS } from '../host/app-bridge.ts'
export type { AppBridge, AppBridgeOptions, AppBridgeEvent, AppRequest } from '../host/app-bridge.ts'
