// MCP Apps, server side: the counter example (appResource, appTool) over Streamable HTTP, read by
// rxmcp's client in both eras, by the official SDK v2 client with ext-apps' own helpers, and used
// by ext-apps' host bridge (AppBridge on the official client) with ext-apps' App as the view.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { AppBridge, getToolUiResourceUri, isToolVisibilityAppOnly } from '@modelcontextprotocol/ext-apps/app-bridge'
import { App } from '@modelcontextprotocol/ext-apps'
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { APP_MIME_TYPE, UI_EXTENSION, appUriOf, isAppCallable, isModelVisible, uiCapability } from '../../lib/apps.ts'
import { COUNTER_VIEW, createCounterServer } from '../../examples/apps/counter.ts'

const server = createCounterServer()
const http = streamableHttp({ host: '127.0.0.1', port: 0 })
beforeAll(async () => { await server.listen(http) })
afterAll(async () => { await server.close() })

/** The count in a counter result. */
const countOf = (result: { structuredContent?: unknown }) => (result.structuredContent as { count: number }).count

describe.each(['legacy', 'modern'] as const)('appResource and appTool, to rxmcp\'s client (%s era)', era => {
  let client: McpClient
  beforeAll(async () => {
    client = await connect(streamableHttpClient(new URL(http.url!)), { name: 'rxmcp-apps', version: '1' }, { era, capabilities: uiCapability() })
  })
  afterAll(async () => { await client?.close() })

  it('declares the io.modelcontextprotocol/ui extension with the app mimeType', () => {
    expect(client.era).toBe(era)
    expect(client.serverCapabilities.extensions?.[UI_EXTENSION]).toEqual({ mimeTypes: [APP_MIME_TYPE] })
  })

  it('links the tools to the view, with the visibility given', async () => {
    const { tools } = await client.listTools()
    const show = tools.find(tool => tool.name === 'show-counter')!
    const add = tools.find(tool => tool.name === 'add')!
    expect(show._meta).toEqual({ ui: { resourceUri: COUNTER_VIEW }, 'ui/resourceUri': COUNTER_VIEW })
    expect([appUriOf(show), isModelVisible(show), isAppCallable(show)]).toEqual([COUNTER_VIEW, true, true])
    expect(add._meta?.ui).toEqual({ resourceUri: COUNTER_VIEW, visibility: ['app'] })
    expect([isModelVisible(add), isAppCallable(add)]).toEqual([false, true])
  })

  it('lists and reads the view as text/html;profile=mcp-app with its CSP and permissions in _meta.ui', async () => {
    const ui = { csp: { connectDomains: [], resourceDomains: [] }, permissions: { clipboardWrite: {} }, prefersBorder: true }
    const { resources } = await client.listResources()
    expect(resources.find(resource => resource.uri === COUNTER_VIEW)).toMatchObject({ name: 'Counter', mimeType: APP_MIME_TYPE, _meta: { ui } })
    const { contents } = await client.readResource(COUNTER_VIEW)
    expect(contents).toEqual([{ uri: COUNTER_VIEW, mimeType: APP_MIME_TYPE, text: expect.stringContaining('ui/initialize'), _meta: { ui } }])
  })
})

describe('appResource and appTool, to the official SDK v2 client and ext-apps', () => {
  let client: ClientV2
  beforeAll(async () => {
    client = new ClientV2({ name: 'sdk-v2', version: '2.4.0' }, { capabilities: { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } })
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url!)))
  })
  afterAll(async () => { await client?.close() })

  it('reads the tools, the view and the extension as ext-apps\' helpers expect them', async () => {
    expect(client.getServerCapabilities()?.extensions?.[EXTENSION_ID]).toBeDefined()
    const { tools } = await client.listTools()
    const show = tools.find(tool => tool.name === 'show-counter')!
    const add = tools.find(tool => tool.name === 'add')!
    expect(getToolUiResourceUri(show)).toBe(COUNTER_VIEW)
    expect([isToolVisibilityAppOnly(show), isToolVisibilityAppOnly(add)]).toEqual([false, true])
    const { contents } = await client.readResource({ uri: COUNTER_VIEW })
    expect(contents[0]).toMatchObject({ uri: COUNTER_VIEW, mimeType: RESOURCE_MIME_TYPE })
  })

  it('serves a view through ext-apps\' AppBridge on the official client: App\'s handshake, and its tool call reaching the server', async () => {
    const [hostSide, viewSide] = linkedTransports()
    const bridge = new AppBridge(client, { name: 'sdk-host', version: '1' }, { serverTools: {} })
    const initialized = new Promise<void>(resolve => { bridge.oninitialized = () => resolve() })
    await bridge.connect(hostSide)
    const app = new App({ name: 'view', version: '1' }, {}, { autoResize: false })
    await app.connect(viewSide)
    await initialized
    const before = countOf(await client.callTool({ name: 'show-counter', arguments: {} }))
    const result = await app.callServerTool({ name: 'add', arguments: { by: 2 } })
    expect(countOf(result)).toBe(before + 2)
    expect(countOf(await client.callTool({ name: 'show-counter', arguments: {} }))).toBe(before + 2)
    await app.close()
  })
})

/** Two official-SDK transports joined back to back (the view's postMessage channel, in memory). */
function linkedTransports(): [TransportLike, TransportLike] {
  const a = {} as TransportLike
  const b = {} as TransportLike
  for (const [self, other] of [[a, b], [b, a]] as const) {
    Object.assign(self, {
      start: async () => {},
      send: async (message: unknown) => { queueMicrotask(() => other.onmessage?.(message)) },
      close: async () => { self.onclose?.(); other.onclose?.() },
    })
  }
  return [a, b]
}
interface TransportLike {
  start(): Promise<void>
  send(message: unknown): Promise<void>
  close(): Promise<void>
  onmessage?: (message: unknown) => void
  onclose?: () => void
  onerror?: (error: Error) => void
}
