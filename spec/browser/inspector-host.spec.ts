// `rxmcp inspect --ui --config FILE` (the command, from sources with tsx) in headless Chromium: the
// host starts both servers of the file (the official basic-vanillajs App example and
// server-everything, over stdio); each server's client, the host's own, gets a page; the page's
// server picker lists both and opens the other's page, connected to the other server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { openPage, type HeadlessPage } from './chromium.ts'
import { startInspector, type InspectorCommand } from './inspector-command.ts'

const WAIT_MS = 60_000
const require = createRequire(import.meta.url)
const vanillaBin = join(dirname(require.resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js')
const everythingBin = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

let page: HeadlessPage | undefined
let inspector: InspectorCommand | undefined
let url = ''
const dir = mkdtempSync(join(tmpdir(), 'rxmcp-inspect-ui-host-'))

const until = <T = unknown>(expression: string) => page!.waitFor<T>(expression, WAIT_MS)
const run = <T = unknown>(expression: string) => page!.evaluate<T>(expression)

beforeAll(async () => {
  const file = join(dir, 'mcp.json')
  writeFileSync(file, JSON.stringify({ mcpServers: {
    apps: { command: process.execPath, args: [vanillaBin, '--stdio'] },
    everything: { command: process.execPath, args: [everythingBin, 'stdio'] },
  } }))
  inspector = await startInspector(['--config', file])
  url = inspector.url
  page = await openPage('about:blank', { startTimeoutMs: WAIT_MS })
}, 3 * WAIT_MS)

afterAll(async () => {
  await page?.close()
  await inspector?.close()
  rmSync(dir, { recursive: true, force: true })
}, 60_000)

describe('rxmcp inspect --ui --config', () => {
  it('shows the first server, and its picker opens the other server\'s page', async () => {
    await run(`location.assign(${JSON.stringify(url)}); true`)
    await until(`document.getElementById('server-picker')?.options.length === 2 && document.getElementById('era')`)
    const picker = await run<{ value: string; names: string[]; server: string }>(`({ value: document.getElementById('server-picker').value, names: [...document.getElementById('server-picker').options].map(option => option.value), server: document.getElementById('server-name').textContent })`)
    expect(picker.names).toEqual(['apps', 'everything'])
    expect(picker.value).toBe('apps')
    expect(picker.server).toMatch(/basic|vanilla|app/i)
    // Choose the other server: its own page (another port and token), its own server.
    await run(`const picker = document.getElementById('server-picker'); picker.value = 'everything'; picker.dispatchEvent(new Event('change', { bubbles: true })); true`)
    await until(`location.href !== ${JSON.stringify(url)} && document.getElementById('server-picker')?.value === 'everything' && document.getElementById('era')`)
    expect(await run<string>(`document.getElementById('server-name').textContent`)).toMatch(/everything/i)
    await run(`document.querySelector('[data-tab="Tools"]').click(); true`)
    await until(`!!document.querySelector('[data-tool="echo"]')`)
  }, 3 * WAIT_MS)
})
