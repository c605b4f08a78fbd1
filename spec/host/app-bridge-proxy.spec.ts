// The bridge with a sandbox proxy served on another origin (`proxyUrl`: the page on 127.0.0.1,
// the proxy on localhost, the way the web inspector can serve it), rendering the counter
// example's hand-written view (examples/apps), whose button calls the app-only `add` tool.
import { createServer as createNodeServer, type Server } from 'node:http'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, type McpClient } from '../../actors/client.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'
import { appUriOf, uiCapability } from '../../lib/apps.ts'
import { sandboxProxyHtml } from '../../host/app-bridge.ts'
import type { CallToolResult } from '../../lib/schema/types.ts'
import { createCounterServer } from '../../examples/apps/counter.ts'
import { openPage, type HeadlessPage } from '../browser/chromium.ts'

const WAIT_MS = 90_000
const server = createCounterServer()
let client: McpClient
let http: Server
let page: HeadlessPage | undefined
/** Told of each call the page made for the app. */
let onAppCall: ((call: { name: string; arguments: unknown; result: CallToolResult }) => void) | undefined
/** Requests for the proxy page, with their Origin-relevant facts. */
const proxyRequests: string[] = []

beforeAll(async () => {
  const [near, far] = createMemoryPair()
  await server.listen(far)
  client = await connect(near, { name: 'rxmcp-apps-test', version: '1' }, { capabilities: uiCapability() })
  const tool = (await client.listTools()).tools.find(candidate => candidate.name === 'show-counter')!
  const content = (await client.readResource(appUriOf(tool)!)).contents[0]! as { text: string; _meta?: { ui?: unknown } }
  const script = (await build({
    entryPoints: [fileURLToPath(new URL('apps/bridge-page.ts', import.meta.url))],
    bundle: true, platform: 'browser', format: 'esm', target: 'es2022', write: false, logLevel: 'silent',
  })).outputFiles[0]!.text
  let port = 0
  http = createNodeServer((req, res) => {
    const send = (type: string, body: string, headers: Record<string, string> = {}) => { res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store', ...headers }); res.end(body) }
    if (req.url === '/') return send('text/html; charset=utf-8', '<!doctype html><html><head><meta charset="utf-8"></head><body><div id="app"></div><script type="module" src="/page.js"></script></body></html>',
      // The host page forbids inline scripts: the proxy cannot be a srcdoc frame of it, it is a page of its own.
      { 'content-security-policy': `script-src 'self'; frame-src http://localhost:${port}` })
    if (req.url === '/page.js') return send('text/javascript; charset=utf-8', script)
    if (req.url === '/app') return send('application/json', JSON.stringify({ html: content.text, meta: content._meta?.ui, tool, proxyUrl: `http://localhost:${port}/sandbox` }))
    if (req.url === '/sandbox') {
      proxyRequests.push(`${req.headers.host}`)
      return send('text/html; charset=utf-8', sandboxProxyHtml(), { 'content-security-policy': `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src 'none'` })
    }
    if (req.url === '/call' && req.method === 'POST') {
      let body = ''
      req.on('data', chunk => { body += chunk })
      req.on('end', () => {
        const { name, arguments: args, by } = JSON.parse(body) as { name: string; arguments: Record<string, unknown>; by: string }
        void client.callTool(name, args).then(result => {
          if (by === 'app') onAppCall?.({ name, arguments: args, result })
          send('application/json', JSON.stringify(result))
        })
      })
      return
    }
    res.writeHead(404).end()
  })
  port = await listenOn(http, 0, '127.0.0.1')
  page = await openPage(`http://127.0.0.1:${port}/`, { startTimeoutMs: WAIT_MS })
}, 3 * WAIT_MS)

afterAll(async () => {
  await page?.close()
  if (http !== undefined) await closeServer(http)
  await client?.close()
  await server.close()
}, 60_000)

const VIEW = `!!document.getElementById('add')`
/** Resolves in the view once #count shows `count` (on DOM changes). */
const countShown = (count: number) => `new Promise(resolve => {
  const element = document.getElementById('count')
  const check = () => { if (element.textContent === ${JSON.stringify(String(count))}) resolve(element.textContent) }
  new MutationObserver(check).observe(element, { childList: true, characterData: true, subtree: true })
  check()
})`

describe('createAppBridge with proxyUrl', () => {
  it('loads the proxy from its own origin, completes the handshake of the counter view and shows the tool result', async () => {
    const app = await page!.waitFor<{ appInfo: { name: string } }>('window.record && (window.record.error ? Promise.reject(new Error(window.record.error)) : window.record.app)', WAIT_MS)
      .catch(error => { throw new Error(`${error}\npage log:\n${page!.log.join('\n')}`) })
    expect(app.appInfo).toEqual({ name: 'rxmcp-counter-view', version: '1.0.0' })
    expect(proxyRequests[0]).toMatch(/^localhost:\d+$/)
    const outer = await page!.evaluate<{ src: string; sandbox: string | null; allow: string | null }>(`(f => ({ src: f.src, sandbox: f.getAttribute('sandbox'), allow: f.getAttribute('allow') }))(document.querySelector('#app iframe'))`)
    expect(outer).toEqual({ src: expect.stringMatching(/^http:\/\/localhost:\d+\/sandbox$/), sandbox: 'allow-scripts allow-forms allow-same-origin', allow: 'clipboard-write' })
    const initial = await page!.evaluate<CallToolResult>('window.record.initialResult')
    const count = (initial.structuredContent as { count: number }).count
    expect(await page!.evaluateInFrame<string>(VIEW, countShown(count))).toBe(String(count))
    // The view frame's allow attribute carries the granted permission too.
    expect(await page!.evaluateInFrame<string | null>(`!!document.querySelector('iframe')`, `document.querySelector('iframe').getAttribute('allow')`)).toBe('clipboard-write')
  }, 3 * WAIT_MS)

  it('runs the view\'s add button through consent to the app-only tool and shows the new count', async () => {
    const before = (await page!.evaluate<CallToolResult>('window.record.initialResult').then(result => result.structuredContent as { count: number })).count
    const call = new Promise<{ name: string; arguments: unknown; result: CallToolResult }>(resolve => { onAppCall = resolve })
    await page!.evaluateInFrame(VIEW, `document.getElementById('add').click()`)
    const made = await call
    expect([made.name, made.arguments]).toEqual(['add', { by: 1 }])
    expect(await page!.evaluate('window.record.consents')).toEqual([{ kind: 'tools/call', name: 'add', arguments: { by: 1 } }])
    expect(await page!.evaluateInFrame<string>(VIEW, countShown(before + 1))).toBe(String(before + 1))
  }, 3 * WAIT_MS)

  it('sizes the frame to the view', async () => {
    const events = await page!.evaluate<{ type: string; height?: number }[]>('window.record.events.filter(e => e.type === "size")')
    expect(events.length).toBeGreaterThan(0)
    const height = await page!.evaluate<string>(`document.querySelector('#app iframe').style.height`)
    expect(height).toBe(`${Math.ceil(events.at(-1)!.height!)}px`)
  }, 3 * WAIT_MS)
})

