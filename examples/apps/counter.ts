// An MCP App server (SEP-1865): a counter whose view, an HTML page the host renders in a sandboxed
// iframe, shows the count the tool returned and can add to it by calling a tool only apps may call.
//   createCounterServer() is the server; server.ts runs it over stdio or Streamable HTTP.
import { readFileSync } from 'node:fs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { appResource, appTool } from '../../actors/server/apps.ts'

/** The view's `ui://` URI. */
export const COUNTER_VIEW = 'ui://counter/view.html'

/** The counter server: `show-counter` (with its view), `add` (for the view only), `reset` (for the model only), the view itself. */
export function createCounterServer(): McpServer {
  const server = createServer({ name: 'rxmcp-counter', version: '1.0.0' })
  /** The count, shared by every session of this server. */
  let count = 0
  const counted = () => ({ content: [{ type: 'text' as const, text: `The count is ${count}` }], structuredContent: { count } })

  // The view: one self-contained HTML file (inline script and style), no network (no CSP lists),
  // asking for clipboard writes (a host may grant them) and a border.
  appResource(server, COUNTER_VIEW, {
    name: 'Counter', description: 'Shows the count and adds to it',
    html: readFileSync(new URL('view.html', import.meta.url), 'utf8'),
    csp: { connectDomains: [], resourceDomains: [] },
    permissions: { clipboardWrite: {} },
    prefersBorder: true,
  })

  // The tool the model calls; the host renders its view and hands it the result.
  appTool(server, 'show-counter', {
    title: 'Show the counter',
    description: 'Shows the counter in an interactive view',
    resourceUri: COUNTER_VIEW,
    outputSchema: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] },
  }, () => counted())

  // Called from inside the view only (visibility ['app']): the model does not see it.
  appTool(server, 'add', {
    description: 'Adds to the counter',
    resourceUri: COUNTER_VIEW,
    visibility: ['app'],
    inputSchema: { type: 'object', properties: { by: { type: 'number', default: 1 } } },
    outputSchema: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] },
  }, ({ by }: { by?: number }) => {
    count += by ?? 1
    return counted()
  })

  // The model's only (visibility ['model']): a view may not call it.
  appTool(server, 'reset', { description: 'Sets the counter to zero', resourceUri: COUNTER_VIEW, visibility: ['model'] }, () => {
    count = 0
    return counted()
  })
  return server
}
