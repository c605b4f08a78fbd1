import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { filter, firstValueFrom } from 'rxjs'
import { createHost, type ConsentAnswer, type ConsentRequest, type Host } from '../../host/host.ts'
import { hostApps, type HostApps } from '../../host/apps.ts'
import { parseHostConfig } from '../../lib/host-config.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { COUNTER_VIEW } from '../../examples/apps/counter.ts'

/**
 * hostApps on a host of two real MCP App servers as child processes: the counter example and the
 * official basic example (@modelcontextprotocol/server-basic-vanillajs).
 */
const BASIC = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js')

let host: Host
let apps: HostApps
/** What the consent hook was asked, and what it answers next. */
const asked: ConsentRequest[] = []
let answer: ConsentAnswer = 'allow-once'

beforeAll(async () => {
  host = createHost(parseHostConfig({
    mcpServers: {
      counter: { command: process.execPath, args: ['--import', 'tsx', 'examples/apps/server.ts'] },
      basic: { command: process.execPath, args: [BASIC, '--stdio'] },
    },
  }), { apps: true, consent: request => { asked.push(request); return answer } })
  apps = hostApps(host)
  await firstValueFrom(apps.list.pipe(filter(list => list.some(app => app.tool.server === 'counter') && list.some(app => app.tool.server === 'basic'))))
}, 60_000)
afterAll(async () => { await host?.close() })

const countOf = (result: { structuredContent?: unknown }) => (result.structuredContent as { count: number }).count

describe('hostApps', () => {
  it('lists the tools that have a view, with its ui:// URI', () => {
    expect(apps.current().map(app => [app.tool.name, app.uri]).sort()).toEqual([
      ['basic__get-time', 'ui://get-time/mcp-app.html'],
      ['counter__add', COUNTER_VIEW],
      ['counter__reset', COUNTER_VIEW],
      ['counter__show-counter', COUNTER_VIEW],
    ])
    expect(apps.appOf('counter__show-counter')?.tool.server).toBe('counter')
  })

  it('reads a view through the server that owns it, with its rendering metadata', async () => {
    const counter = await apps.read('counter__show-counter')
    expect(counter).toEqual({ uri: COUNTER_VIEW, html: expect.stringContaining('ui/initialize'), meta: { csp: { connectDomains: [], resourceDomains: [] }, permissions: { clipboardWrite: {} }, prefersBorder: true } })
    const basic = await apps.read('basic__get-time')
    expect(basic.html).toMatch(/^<!DOCTYPE html>/i)
    expect(basic.uri).toBe('ui://get-time/mcp-app.html')
  })

  it('runs a view\'s tool call at its own server under the host\'s consent, telling the hook which view asks', async () => {
    asked.length = 0
    answer = 'allow-once'
    const before = countOf(await host.callTool('counter__show-counter'))
    asked.length = 0
    const result = await apps.callTool('counter__show-counter', 'add', { by: 3 })
    expect(countOf(result)).toBe(before + 3)
    expect(asked).toEqual([{ kind: 'tool', server: 'counter', tool: 'add', arguments: { by: 3 }, app: COUNTER_VIEW }])
  })

  it('refuses a view\'s call the consent hook denies, and nothing runs', async () => {
    const before = countOf(await host.callTool('counter__show-counter'))
    answer = 'deny'
    await expect(apps.callTool('counter__show-counter', 'add', { by: 5 })).rejects.toThrow(/denied by the user/)
    answer = 'allow-once'
    expect(countOf(await host.callTool('counter__show-counter'))).toBe(before)
  })

  it('refuses, without asking, a call of a tool not visible to apps or of another server', async () => {
    asked.length = 0
    await expect(apps.callTool('counter__show-counter', 'reset')).rejects.toThrow(InvalidParamsError)
    await expect(apps.callTool('counter__show-counter', 'get-time')).rejects.toThrow(/counter has no tool "get-time"/)
    await expect(apps.read('counter__nothing')).rejects.toThrow(InvalidParamsError)
    expect(asked).toEqual([])
  })

  it('hands a bridge functions bound to one view', async () => {
    const { bridgeFunctions } = apps
    const { callTool } = bridgeFunctions('basic__get-time')
    const result = await callTool('get-time', {})
    expect((result.structuredContent as { time: string }).time).toMatch(/^\d{4}-\d\d-\d\dT/)
  })
})
