// The host-side bridge in headless Chromium, against an official MCP App: the view of
// @modelcontextprotocol/server-basic-vanillajs (ext-apps' own `App` inside), read through rxmcp's
// client from that server running as a child process, rendered by createAppBridge in its sandbox
// frames in a test page. The page reaches the server through this file's HTTP server.
import { createServer as createNodeServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, type McpClient } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'
import { APP_MIME_TYPE, appUriOf, uiCapability } from '../../lib/apps.ts'
import type { CallToolResult, Tool } from '../../lib/schema/types.ts'
import { openPage, type HeadlessPage } from '../browser/chromium.ts'

// Generous: two shared cores may be busy with other suites while Chromium starts.
const WAIT_MS = 90_000
// Its bin (dist/index.js, beside the package's main) is what `npx @modelcontextprotocol/server-basic-vanillajs --stdio` runs.
const exampleServer = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js')

/** Every tools/call the page made through the test server, and what the server answered. */
const calls: { name: string; by: string; result: CallToolResult }[] = []
/** Told of each call the page made for the app (after its consent). */
let onAppCall: ((call: { name: string; result: CallToolResult }) => void) | undefined
/** The next call the page makes for the app. */
const nextAppCall = () => new Promise<{ name: string; result: CallToolResult }>(resolve => { onAppCall = resolve })
let client: McpClient
let http: Server
let url: string
let page: HeadlessPage | undefined

beforeAll(async () => {
  client = await connect(stdioClient({ command: process.execPath, args: [exampleServer, '--stdio'] }), { name: 'rxmcp-apps-test', version: '1.0.0' }, { capabilities: uiCapability() })
  const tools: Tool[] = (await client.listTools()).tools
  const tool = tools.find(candidate => appUriOf(candidate) !== undefined)!
  const read = await client.readResource(appUriOf(tool)!)
  const content = read.contents[0]! as { text: string; mimeType?: string; _meta?: { ui?: unknown } }
  expect(content.mimeType).toBe(APP_MIME_TYPE)
  const app = JSON.stringify({ html: content.text, meta: content._meta?.ui, tool })
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('apps/bridge-page.ts', import.meta.url))],
    bundle: true, platform: 'browser', format: 'esm', target: 'es2022', write: false, logLevel: 'silent',
  })
  const script = bundle.outputFiles[0]!.text
  http = createNodeServer((req, res) => {
    const send = (type: string, body: string, status = 200) => { res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }); res.end(body) }
    if (req.url === '/') return send('text/html; charset=utf-8', '<!doctype html><html><head><meta charset="utf-8"><title>apps</title></head><body><div id="app"></div><script type="module" src="/page.js"></script></body></html>')
    if (req.url === '/page.js') return send('text/javascript; charset=utf-8', script)
    if (req.url === '/app') return send('application/json', app)
    // The page's side door to MCP: the host's tools/call, and the app's once the page's consent allowed it.
    if (req.url === '/call' && req.method === 'POST') {
      let body = ''
      req.on('data', chunk => { body += chunk })
      req.on('end', () => {
        const { name, arguments: args, by } = JSON.parse(body) as { name: string; arguments: Record<string, unknown>; by: string }
        client.callTool(name, args).then(
          result => {
            calls.push({ name, by, result })
            if (by === 'app') onAppCall?.({ name, result })
            send('application/json', JSON.stringify(result))
          },
          (error: unknown) => send('text/plain', String(error), 500),
        )
      })
      return
    }
    // What the view tries to fetch (the test's /leak): its CSP must stop it before it gets here.
    if (req.url === '/leak') calls.push({ name: `fetch ${req.url}`, by: 'network', result: { content: [] } })
    send('text/plain', 'no', 404)
  })
  url = `http://127.0.0.1:${await listenOn(http, 0, '127.0.0.1')}/`
  page = await openPage(url, { startTimeoutMs: WAIT_MS })
}, 3 * WAIT_MS)

afterAll(async () => {
  await page?.close()
  if (http !== undefined) await closeServer(http)
  await client?.close()
}, 60_000)

/** An expression for the view's frame that resolves once its #server-time shows `time` (on DOM changes, no polling). */
const timeShown = (time: string) => `new Promise(resolve => {
  const element = document.getElementById('server-time')
  const check = () => { if (element.textContent === ${JSON.stringify(time)}) resolve(element.textContent) }
  new MutationObserver(check).observe(element, { childList: true, characterData: true, subtree: true })
  check()
})`

/** The view's frame (the official app's own button is in it). */
const VIEW = `!!document.getElementById('get-time-btn')`
/** The sandbox proxy's frame: the one holding the view's iframe. */
const PROXY = `!!document.querySelector('iframe') && !document.getElementById('get-time-btn')`

describe('createAppBridge', () => {
  it('renders the official example app in its sandbox frames, completes its ui/initialize handshake and hands it the tool result', async () => {
    const app = await page!.waitFor<{ appInfo: { name: string } }>('window.record && (window.record.error ? Promise.reject(new Error(window.record.error)) : window.record.app)', WAIT_MS)
      .catch(error => { throw new Error(`${error}\npage log:\n${page!.log.join('\n')}`) })
    expect(app.appInfo.name).toEqual(expect.any(String))
    const record = await page!.evaluate<{ events: { type: string; message?: { method?: string } }[]; initialResult: CallToolResult }>('window.record')
    const methods = record.events.filter(event => event.type === 'message').map(event => event.message!.method)
    // The handshake in the spec's order: proxy ready, resource to the proxy, initialize, initialized, then input and result.
    expect(methods.filter(method => method !== undefined && method !== 'ui/notifications/size-changed' && method !== 'notifications/message')).toEqual([
      'ui/notifications/sandbox-proxy-ready', 'ui/notifications/sandbox-resource-ready', 'ui/initialize', 'ui/notifications/initialized',
      'ui/notifications/tool-input', 'ui/notifications/tool-result',
    ])
    // The view shows the result the host handed it.
    const time = (record.initialResult.structuredContent as { time: string }).time
    expect(await page!.evaluateInFrame<string>(VIEW, timeShown(time))).toBe(time)
    // Sandboxed: both frames have opaque origins, the view cannot reach the page, and runs under its CSP.
    const frames = await page!.evaluate<{ outer: string | null }>(`({ outer: document.querySelector('#app iframe').getAttribute('sandbox') })`)
    expect(frames.outer).toBe('allow-scripts allow-forms')
    const view = await page!.evaluateInFrame<{ sandbox: string | null; csp: string | undefined }>(PROXY, `({ sandbox: document.querySelector('iframe').getAttribute('sandbox'), csp: document.querySelector('meta[http-equiv]')?.content })`)
    expect(view.sandbox).toBe('allow-scripts allow-forms')
    expect(view.csp).toContain(`connect-src 'none'`)
    const inView = await page!.evaluateInFrame<{ origin: string; csp: string | undefined }>(VIEW, `({ origin: location.origin === 'null' || origin === 'null' ? 'opaque' : origin, csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content })`)
    expect(inView).toEqual({ origin: 'opaque', csp: expect.stringContaining(`default-src 'none'`) })
  }, 3 * WAIT_MS)

  it('routes a tool call made from inside the app through the consent callback to the server, and back into the app', async () => {
    const before = calls.length
    const appCall = nextAppCall()
    await page!.evaluateInFrame(VIEW, `document.getElementById('get-time-btn').click()`)
    const call = await appCall
    expect(call.name).toBe('get-time')
    expect(calls.slice(before).filter(entry => entry.by === 'app')).toHaveLength(1)
    const consents = await page!.evaluate<unknown[]>('window.record.consents')
    expect(consents).toEqual([{ kind: 'tools/call', name: 'get-time', arguments: {} }])
    const time = (call.result.structuredContent as { time: string }).time
    expect(await page!.evaluateInFrame<string>(VIEW, timeShown(time))).toBe(time)
  }, 3 * WAIT_MS)

  it('refuses the app a tool call the consent callback denies: nothing reaches the server', async () => {
    await page!.evaluate('window.allowAppCalls = false')
    const before = calls.length
    const consentsBefore = await page!.evaluate<number>('window.record.consents.length')
    await page!.evaluateInFrame(VIEW, `document.getElementById('get-time-btn').click()`)
    await page!.waitFor(`window.record.consents.length > ${consentsBefore}`, WAIT_MS)
    // The refusal went back to the view as a JSON-RPC error.
    await page!.waitFor(`window.record.events.some(event => event.type === 'message' && event.direction === 'out' && event.message.error !== undefined)`, WAIT_MS)
    expect(calls.slice(before).filter(call => call.by === 'app')).toEqual([])
    await page!.evaluate('window.allowAppCalls = true')
  }, 3 * WAIT_MS)

  it("carries the app's open-link and message requests to the host's handlers after consent", async () => {
    await page!.evaluateInFrame(VIEW, `document.getElementById('link-url').value = 'https://example.com/docs'; document.getElementById('open-link-btn').click()`)
    await page!.waitFor(`window.record.links.length === 1`, WAIT_MS)
    await page!.evaluateInFrame(VIEW, `document.getElementById('message-text').value = 'hello host'; document.getElementById('send-message-btn').click()`)
    await page!.waitFor(`window.record.messages.length === 1`, WAIT_MS)
    const record = await page!.evaluate<{ links: string[]; messages: unknown[]; consents: { kind: string }[] }>('window.record')
    expect(record.links).toEqual(['https://example.com/docs'])
    expect(JSON.stringify(record.messages[0])).toContain('hello host')
    expect(record.consents.map(consent => consent.kind)).toEqual(expect.arrayContaining(['open-link', 'message']))
  }, 3 * WAIT_MS)

  it('keeps the view off the network its CSP does not list', async () => {
    const outcome = await page!.evaluateInFrame<string>(VIEW, `fetch(${JSON.stringify(url)} + 'leak').then(() => 'fetched', () => 'blocked')`)
    expect(outcome).toBe('blocked')
    expect(calls.filter(call => call.by === 'network')).toEqual([])
  }, 3 * WAIT_MS)

  it('tears the view down on close: frames removed, events completed', async () => {
    await page!.evaluate('window.closeApp()')
    expect(await page!.evaluate<number>(`document.querySelectorAll('#app iframe').length`)).toBe(0)
    const methods = await page!.evaluate<string[]>(`window.record.events.filter(e => e.type === 'message').map(e => e.message.method ?? 'response')`)
    expect(methods).toContain('ui/resource-teardown')
  }, 3 * WAIT_MS)
})
