import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { connect } from '../../actors/client.ts'
import { websocketClient } from '../../transports/websocket.ts'
import { sseClient } from '../../transports/http-client.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const everything = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js')

/**
 * The base URL a bridge names in its "served at" line on stderr, read as each chunk arrives (`log`
 * gives what came so far); rejects if the bridge exits first.
 */
function servedAt(bridge: ChildProcess, log: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const look = () => {
      const match = /served at (http:\/\/\S+)\/mcp/.exec(log())
      if (match === null) return
      bridge.stderr!.off('data', look)
      resolve(match[1]!)
    }
    // Added after the test's own listener: `log` has the chunk when this runs.
    bridge.stderr!.on('data', look)
    bridge.once('exit', code => reject(new Error(`bridge exited ${code}: ${log()}`)))
    look()
  })
}

describe('rxmcp bridge in front of @modelcontextprotocol/server-everything', () => {
  let bridgeProcess: ChildProcess
  let base: string
  let log = ''
  const pids = () => [...log.matchAll(/child pid (\d+)/g)].map(match => Number(match[1]))

  beforeAll(async () => {
    // Port 0: the bridge takes a free port and names it in its "served at" line.
    bridgeProcess = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'bridge', '--port', '0', '--', process.execPath, everything, 'stdio'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    bridgeProcess.stderr!.on('data', chunk => { log += chunk })
    base = await servedAt(bridgeProcess, () => log)
  }, 30_000)

  afterAll(() => { bridgeProcess?.kill('SIGKILL') })

  it('serves the official SDK HTTP client, with progress routed to its request stream', async () => {
    const client = new Client({ name: 'official', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))
    expect(await client.callTool({ name: 'echo', arguments: { message: 'bridged' } })).toEqual({ content: [{ type: 'text', text: 'Echo: bridged' }] })
    const progress: number[] = []
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, undefined, { onprogress: p => { progress.push(p.progress) } })
    expect(progress).toEqual([1, 2])
    await client.close()
  }, 20_000)

  it('serves the rxmcp WebSocket client and the legacy SSE client', async () => {
    const viaWs = await connect(websocketClient(`${base.replace(/^http/, 'ws')}/mcp`), { name: 'ws', version: '1' })
    expect(await viaWs.callTool('echo', { message: 'ws' })).toEqual({ content: [{ type: 'text', text: 'Echo: ws' }] })
    await viaWs.close()
    const viaSse = await connect(sseClient(`${base}/sse`), { name: 'sse', version: '1' })
    expect(await viaSse.callTool('echo', { message: 'sse' })).toEqual({ content: [{ type: 'text', text: 'Echo: sse' }] })
    await viaSse.close()
  }, 20_000)

  it('reaps every child when it is told to stop', async () => {
    const viaWs = await connect(websocketClient(`${base.replace(/^http/, 'ws')}/mcp`), { name: 'left-open', version: '1' })
    expect(pids().length).toBeGreaterThanOrEqual(3)
    const exited = new Promise(resolve => bridgeProcess.once('exit', resolve))
    bridgeProcess.kill('SIGTERM')
    await exited
    await viaWs.closed
    for (const pid of pids()) expect(() => process.kill(pid, 0)).toThrow()
  }, 20_000)
})

describe('rxmcp bridge --shared', () => {
  it('serves several sessions from one child, each seeing only its own answers and progress', async () => {
    const bridgeProcess = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'bridge', '--shared', '--port', '0', '--', process.execPath, everything, 'stdio'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    let log = ''
    bridgeProcess.stderr!.on('data', chunk => { log += chunk })
    try {
      // Started with tsx, the bridge may take seconds on a loaded machine: its line is awaited as it comes.
      const url = `${(await servedAt(bridgeProcess, () => log)).replace(/^http/, 'ws')}/mcp`
      const [a, b] = await Promise.all([connect(websocketClient(url), { name: 'a', version: '1' }), connect(websocketClient(url), { name: 'b', version: '1' })])
      const progress = { a: [] as number[], b: [] as number[] }
      const [ra, rb] = await Promise.all([
        a.callTool('trigger-long-running-operation', { duration: 0.2, steps: 2 }, { onProgress: p => progress.a.push(p.progress) }),
        b.callTool('trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: p => progress.b.push(p.progress) }),
      ])
      expect(JSON.stringify(ra.content)).toContain('Steps: 2')
      expect(JSON.stringify(rb.content)).toContain('Steps: 3')
      expect(progress).toEqual({ a: [1, 2], b: [1, 2, 3] })
      expect(await a.callTool('echo', { message: 'one' })).toEqual({ content: [{ type: 'text', text: 'Echo: one' }] })
      expect(b.serverInfo).toEqual(a.serverInfo)
      // One child for everyone: the bridge logs no child pid per session.
      expect(log).not.toMatch(/child pid \d+/)
      expect(log.match(/Starting default \(STDIO\) server/g)).toHaveLength(1)
      await a.close()
      await b.close()
    } finally {
      const exited = new Promise(resolve => bridgeProcess.once('exit', resolve))
      bridgeProcess.kill('SIGTERM')
      await exited
    }
  }, 60_000)
})
