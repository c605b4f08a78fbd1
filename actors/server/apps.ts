/**
 * MCP Apps on the server side (SEP-1865): register a tool's HTML view as a `ui://` resource of
 * mimeType `text/html;profile=mcp-app` with its CSP and permissions, link a tool to it with
 * `_meta.ui.resourceUri`, and declare the `io.modelcontextprotocol/ui` extension. Both helpers
 * work on any {@link McpServer}, in both eras and on every transport (they only register).
 */
import { APP_MIME_TYPE, UI_EXTENSION, type AppCsp, type AppPermissions, type AppResourceMeta, type ToolVisibility } from '../../lib/apps.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { ResourceContents } from '../../lib/schema/types.ts'
import type { McpServer, Registration, ResourceDefinition, ServerContext, ToolDefinition, ToolHandler, ToolInputSchema } from './api.ts'

/** How an app's view is described and where its HTML comes from. */
export interface AppResourceDefinition extends Omit<ResourceDefinition, 'mimeType'> {
  /** The view's HTML, or a function that gives it per read (read from a file, built per request). */
  html: string | ((uri: string, ctx: ServerContext) => string | Promise<string>)
  /** The origins the view may reach (omitted lists: none). */
  csp?: AppCsp
  /** The browser features the view asks for (camera, microphone, geolocation, clipboard write). */
  permissions?: AppPermissions
  /** A dedicated sandbox origin, in the format the host documents. */
  domain?: string
  /** Whether the view wants a border and background from the host. */
  prefersBorder?: boolean
}

/** A tool with a view: its definition plus the view's `ui://` URI and who may call it. */
export type AppToolDefinition<S extends ToolInputSchema = ToolInputSchema> = ToolDefinition<S> & {
  /** The `ui://` resource of the tool's view (registered with {@link appResource}). */
  resourceUri: string
  /** Who may call the tool: `['model', 'app']` (default), `['app']` for a tool only its view calls, `['model']`. */
  visibility?: ToolVisibility[]
}

/** The `_meta.ui` of a resource, from its definition (only the fields given). */
function uiMeta(definition: AppResourceDefinition): AppResourceMeta {
  const meta: AppResourceMeta = {}
  if (definition.csp !== undefined) meta.csp = definition.csp
  if (definition.permissions !== undefined) meta.permissions = definition.permissions
  if (definition.domain !== undefined) meta.domain = definition.domain
  if (definition.prefersBorder !== undefined) meta.prefersBorder = definition.prefersBorder
  return meta
}

/**
 * Registers an app's view: a `ui://` resource of mimeType `text/html;profile=mcp-app` whose
 * `resources/list` entry and `resources/read` contents both carry `_meta.ui` (CSP, permissions,
 * domain, border), and declares the `io.modelcontextprotocol/ui` extension in the server's
 * capabilities. `remove()` removes the resource (the extension stays declared).
 * @throws TypeError when `uri` is not a `ui://` URI, or is already registered.
 * @example
 * appResource(server, 'ui://clock/view.html', { name: 'Clock', html: readFileSync('view.html', 'utf8'),
 *   csp: { connectDomains: ['https://api.example.com'] } })
 */
export function appResource(server: McpServer, uri: string, definition: AppResourceDefinition): Registration<ResourceDefinition> {
  if (!uri.startsWith('ui://')) throw new TypeError(`An app's resource URI starts with ui://, not ${JSON.stringify(uri)}`)
  const { html, csp: _csp, permissions: _permissions, domain: _domain, prefersBorder: _border, ...described } = definition
  const ui = uiMeta(definition) as JsonObject
  server.extension(UI_EXTENSION, { mimeTypes: [APP_MIME_TYPE] })
  const meta: JsonObject = { ...described._meta, ui }
  return server.resource(uri, { ...described, mimeType: APP_MIME_TYPE, _meta: meta }, async (read, ctx): Promise<ResourceContents> => {
    const text = typeof html === 'string' ? html : await html(read, ctx)
    // MCP Apps: the host reads the CSP from the resources/read contents first, the list entry second.
    return { uri: read, mimeType: APP_MIME_TYPE, text, _meta: { ui } }
  })
}

/**
 * Registers a tool linked to its view: `_meta.ui.resourceUri` (and the flat `ui/resourceUri` key
 * older hosts read), with its `visibility`, and declares the extension. The handler is the
 * tool's as usual; a host calls it, then hands the result to the view.
 * @throws TypeError when `resourceUri` is not a `ui://` URI, or the tool is already registered.
 * @example
 * appTool(server, 'get-time', { description: 'The server time', resourceUri: 'ui://clock/view.html' },
 *   () => ({ content: [{ type: 'text', text: new Date().toISOString() }] }))
 */
export function appTool<A = Record<string, unknown>>(server: McpServer, name: string, definition: AppToolDefinition, handler: ToolHandler<A>): Registration<ToolDefinition> {
  const { resourceUri, visibility, ...tool } = definition
  if (!resourceUri.startsWith('ui://')) throw new TypeError(`An app's resource URI starts with ui://, not ${JSON.stringify(resourceUri)}`)
  server.extension(UI_EXTENSION, { mimeTypes: [APP_MIME_TYPE] })
  const ui: JsonObject = { resourceUri }
  if (visibility !== undefined) ui.visibility = visibility
  return server.tool(name, { ...tool, _meta: { ...tool._meta, ui, 'ui/resourceUri': resourceUri } } as ToolDefinition, handler as ToolHandler)
}
