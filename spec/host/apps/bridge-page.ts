// The test page of spec/host/app-bridge.spec.ts, bundled for the browser with esbuild: it renders
// the tool's view with createAppBridge and reaches MCP through the test's HTTP server (POST /call),
// recording what the bridge saw on `window.record` for the test to read.
import { createAppBridge, type AppBridgeEvent, type AppRequest } from '../../../host/app-bridge.ts'
import type { AppResourceMeta } from '../../../lib/apps.ts'
import type { CallToolResult, Tool } from '../../../lib/schema/types.ts'

interface PageRecord {
  consents: AppRequest[]
  events: AppBridgeEvent[]
  links: string[]
  messages: unknown[]
  app?: unknown
  initialResult?: CallToolResult
  error?: string
}
const record: PageRecord = { consents: [], events: [], links: [], messages: [] }
const page = window as unknown as { record: PageRecord; allowAppCalls: boolean; closeApp(): Promise<void> }
page.record = record
/** What the consent callback answers; the test flips it. */
page.allowAppCalls = true

async function call(name: string, args: Record<string, unknown>, by: 'host' | 'app'): Promise<CallToolResult> {
  const response = await fetch('/call', { method: 'POST', body: JSON.stringify({ name, arguments: args, by }) })
  if (!response.ok) throw new Error(await response.text())
  return await response.json() as CallToolResult
}

try {
  const { html, meta, tool, proxyUrl } = await fetch('/app').then(response => response.json()) as { html: string; meta?: AppResourceMeta; tool: Tool; proxyUrl?: string }
  const bridge = createAppBridge({
    container: document.getElementById('app')!,
    html, meta, tool,
    ...(proxyUrl === undefined ? {} : { proxyUrl }),
    hostInfo: { name: 'rxmcp-test-host', version: '1.0.0' },
    hostContext: { theme: 'light', locale: 'en-US' },
    callTool: (name, args) => call(name, args, 'app'),
    consent: request => { record.consents.push(request); return page.allowAppCalls },
    openLink: url => { record.links.push(url) },
    message: params => { record.messages.push(params) },
  })
  bridge.events.subscribe(event => record.events.push(event))
  page.closeApp = () => bridge.close()
  // As a host runs a tool with a view: the input to the view, the call, the result to the view.
  bridge.sendToolInput({})
  const result = await call(tool.name, {}, 'host')
  record.initialResult = result
  bridge.sendToolResult(result)
  record.app = await bridge.ready
} catch (error) {
  record.error = String(error)
}
