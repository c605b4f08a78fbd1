// MCP Apps in the web inspector: `rxmcp inspect --ui` (the command, from sources with tsx) against
// the official example @modelcontextprotocol/server-basic-vanillajs over stdio, in headless
// Chromium. After a call of get-time, its view renders in the sandboxed frames (the proxy served on
// http://localhost:PORT/sandbox-proxy, another origin than the page's 127.0.0.1); the view's own
// get-time button asks the person in the page, and an allowed call reaches the server (the view
// shows the new time, the timeline shows the tools/call paired), a denied one does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { keepPicture } from './pictures.ts'
import { openPage, type HeadlessPage } from './chromium.ts'
import { showInspector, startInspector, type InspectorCommand } from './inspector-command.ts'

const WAIT_MS = 60_000
const root = fileURLToPath(new URL('../..', import.meta.url))
// Its bin (dist/index.js, beside the package's main): what `npx @modelcontextprotocol/server-basic-vanillajs --stdio` runs.
const vanillaBin = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js')

let page: HeadlessPage | undefined
let inspector: InspectorCommand | undefined
let url = ''

/** The view's frame (the official app's own button is in it). */
const VIEW = `!!document.getElementById('get-time-btn')`

/** Resolves once the view's #server-time shows something other than `previous` (on DOM changes, no polling). */
const timeChangedFrom = (previous: string) => `new Promise(resolve => {
  const element = document.getElementById('server-time')
  const check = () => { const text = element.textContent ?? ''; if (text !== ${JSON.stringify(previous)} && /\\d{4}-\\d\\d-\\d\\dT/.test(text)) resolve(text) }
  new MutationObserver(check).observe(element, { childList: true, characterData: true, subtree: true })
  check()
})`

/** `expression` in the first frame where `match` holds, once such a frame exists (the frames come after the call). */
async function inFrame<T>(match: string, expression: string): Promise<T> {
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    try {
      return await page!.evaluateInFrame<T>(match, expression)
    } catch (error) {
      if (!/No frame where/.test(String(error)) || Date.now() > deadline) throw new Error(`${error}\npage log:\n${page!.log.join('\n')}`)
      await new Promise(resolve => setTimeout(resolve, 200))
    }
  }
}

const until = <T = unknown>(expression: string) => page!.waitFor<T>(expression, WAIT_MS)
const run = <T = unknown>(expression: string) => page!.evaluate<T>(expression)

/** A GET on the inspector's port with the Host given: its status. */
function statusOf(path: string, host: string): Promise<number> {
  const port = new URL(url).port
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, headers: { host } }, response => { response.resume(); resolve(response.statusCode ?? 0) })
    outgoing.on('error', reject)
    outgoing.end()
  })
}

beforeAll(async () => {
  inspector = await startInspector(['--', process.execPath, vanillaBin, '--stdio'])
  url = inspector.url
  page = await openPage('about:blank', { startTimeoutMs: WAIT_MS, viewport: { width: 1200, height: 900 } })
  await showInspector(page, url, WAIT_MS)
}, 3 * WAIT_MS)

afterAll(async () => {
  await page?.close()
  await inspector?.close()
}, 60_000)

describe('rxmcp inspect --ui with an MCP App (server-basic-vanillajs)', () => {
  it('serves the sandbox proxy only on the other loopback name, without a token', async () => {
    const port = new URL(url).port
    expect(await statusOf('/sandbox-proxy', `localhost:${port}`)).toBe(200)
    // The page's own origin does not serve it (it would share the page's origin), nor a rebinding name.
    expect(await statusOf('/sandbox-proxy', `127.0.0.1:${port}`)).toBe(403)
    expect(await statusOf('/sandbox-proxy', `evil.example:${port}`)).toBe(403)
    // And the proxy's name gets nothing else without the token.
    expect(await statusOf('/', `localhost:${port}`)).toBe(403)
  })

  it('renders the view of get-time in the sandboxed frames after a call', async () => {
    await run(`document.querySelector('[data-tab="Tools"]').click(); true`)
    await until(`!!document.querySelector('[data-tool="get-time"]')`)
    await run(`document.querySelector('[data-tool="get-time"]').click(); true`)
    await until(`!!document.getElementById('call')`)
    await run(`document.getElementById('call').click(); true`)
    await until(`!!document.querySelector('#app-view iframe')`)
    const outer = await run<{ src: string; sandbox: string | null }>(`({ src: document.querySelector('#app-view iframe').src, sandbox: document.querySelector('#app-view iframe').getAttribute('sandbox') })`)
    expect(outer.src).toBe(`http://localhost:${new URL(url).port}/sandbox-proxy`)
    expect(outer.sandbox).toContain('allow-scripts')
    // The view (the official app) runs, opaque-origin, under its own CSP, and shows the call's result.
    const inView = await inFrame<{ origin: string; csp: string | undefined; time: string }>(VIEW,
      `new Promise(resolve => { const element = document.getElementById('server-time'); const done = () => /\\d{4}-/.test(element.textContent ?? '') && resolve({ origin: origin === 'null' ? 'opaque' : origin, csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content, time: element.textContent }); new MutationObserver(done).observe(element, { childList: true, characterData: true, subtree: true }); done() })`)
    expect(inView.origin).toBe('opaque')
    expect(inView.csp).toContain(`default-src 'none'`)
    const shown = await run<string>(`document.getElementById('tool').textContent`)
    expect(shown).toContain(inView.time)
  }, 3 * WAIT_MS)

  it('asks the person before the app calls a tool: denied, nothing reaches the server; allowed, the server answers into the view', async () => {
    // (The timeline is another tab: looked at only at the end, since leaving the Tools tab closes the view.)
    const callRows = `document.querySelectorAll('#timeline tr[data-method="tools/call"]').length`
    const before = await inFrame<string>(VIEW, `document.getElementById('server-time').textContent`)

    // Denied: the prompt goes, no call leaves.
    await inFrame(VIEW, `document.getElementById('get-time-btn').click(); true`)
    const asked = await until<string>(`document.getElementById('app-consent')?.textContent`)
    expect(asked).toContain('get-time')
    await run(`document.getElementById('app-deny').click(); true`)
    await until(`document.getElementById('app-consent') === null`)

    // Allowed: the call reaches the server and its time comes back into the view.
    await inFrame(VIEW, `document.getElementById('get-time-btn').click(); true`)
    await until(`!!document.getElementById('app-consent')`)
    await run(`document.getElementById('app-allow').click(); true`)
    const after = await inFrame<string>(VIEW, timeChangedFrom(before))
    expect(after).not.toBe(before)
    // A message the app sends for the conversation (ui/message): asked, then shown in the page.
    await inFrame(VIEW, `(() => { const input = document.getElementById('message-text'); input.value = 'hello from the app'; input.dispatchEvent(new Event('input')); document.getElementById('send-message-btn').click(); return true })()`)
    expect(await until<string>(`document.getElementById('app-consent')?.dataset.kind`)).toBe('message')
    await run(`document.getElementById('app-allow').click(); true`)
    expect(await until<string>(`document.getElementById('app-messages')?.textContent`)).toContain('hello from the app')
    // The picture for the README (docs/images/inspector-app.png), made here so it stays true.
    await run(`document.getElementById('app-view').scrollIntoView(); new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))))`)
    keepPicture(join(root, 'docs', 'images', 'inspector-app.png'), await page!.screenshot())

    // The timeline: the first call and the allowed one, each paired with its response; the denied one never went out.
    await run(`document.querySelector('[data-tab="Timeline"]').click(); true`)
    await until(`${callRows} === 2 && [...document.querySelectorAll('#timeline tr[data-method="tools/call"]')].every(row => row.dataset.paired === 'true')`)
    expect(await run<number>(callRows)).toBe(2)
    // The app's call opened: its response carries the time the view shows.
    await run(`[...document.querySelectorAll('#timeline tr[data-method="tools/call"]')].at(-1).click(); true`)
    expect(await until<string>(`document.querySelector('#timeline tr.detail')?.textContent`)).toContain(after)
  }, 3 * WAIT_MS)
})
