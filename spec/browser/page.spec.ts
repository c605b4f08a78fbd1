import { afterEach, describe, expect, it } from 'vitest'
import { startBrowserExample, type BrowserExample } from '../../examples/browser/server.ts'
import { openPage, type HeadlessPage } from './chromium.ts'

// Generous: two shared cores may be busy with other suites while Chromium starts.
const WAIT_MS = 90_000

let example: BrowserExample | undefined
let page: HeadlessPage | undefined
afterEach(async () => {
  await page?.close()
  await example?.close()
  page = undefined
  example = undefined
}, 60_000)

describe('startBrowserExample', () => {
  it('serves a page whose bundled client lists tools, calls one with progress and renders the result in headless Chromium, also over WebSocket and to a server in the page', async () => {
    example = await startBrowserExample()
    page = await openPage(example.url, { startTimeoutMs: WAIT_MS })
    const state = await page.waitFor<string>(`(s => s && s.dataset.state !== 'running' && s.dataset.state)(document.getElementById('status'))`, WAIT_MS)
    const rendered = await page.evaluate<Record<string, unknown>>(`({
      status: document.getElementById('status').textContent,
      server: document.getElementById('server').textContent,
      tools: [...document.querySelectorAll('#tools li')].map(li => li.textContent),
      progress: [...document.querySelectorAll('#progress li')].map(li => li.textContent),
      result: document.getElementById('result').textContent,
      ws: document.getElementById('ws-result').textContent,
      inPage: document.getElementById('in-page-result').textContent,
    })`)
    expect(state, `page log:\n${page.log.join('\n')}\nrendered: ${JSON.stringify(rendered)}`).toBe('done')
    expect(rendered).toEqual({
      status: 'done',
      server: 'rxmcp-everything 0.1.0 (2026-07-28)',
      tools: expect.arrayContaining(['echo', 'add', 'long_running']),
      progress: ['1/3: step 1 of 3', '2/3: step 2 of 3', '3/3: step 3 of 3'],
      result: 'Finished 3 steps',
      ws: 'hello over a WebSocket',
      // The in-page server checked the arguments with its JSON Schema validator, in the browser.
      inPage: expect.stringMatching(/^HELLO FROM THE PAGE\nrefused: .*required property 'text'/),
    })
    expect(page.log.filter(line => line.startsWith('exception'))).toEqual([])
  }, 4 * WAIT_MS)
})
