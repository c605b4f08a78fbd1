import { afterEach, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { WebSocket } from 'ws'
import { VirtualTimeScheduler } from 'rxjs'
import { bridge, bridgeChild, shareUpstream, BRIDGE_DEFAULTS, type Bridge, type BridgeOptions, type SharedUpstreamOptions } from '../../transports/bridge.ts'
import type { StdioClientTransport } from '../../transports/stdio.ts'
import { websocket, websocketClient, WS_SUBPROTOCOL } from '../../transports/websocket.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { connect, type McpClient } from '../../actors/client.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixture = fileURLToPath(new URL('./fixtures/bridge-child.mjs', import.meta.url))

// Everything a test starts, stopped after it.
let running: Bridge | undefined
let upstreams: StdioClientTransport[] = []
const sockets: WebSocket[] = []
const clients: McpClient[] = []
const processes: ChildProcess[] = []
const pids: number[] = []
afterEach(async () => {
  // Processes a failed test left behind first, so that no close below waits on them.
  for (const pid of pids.splice(0)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
  for (const socket of sockets.splice(0)) socket.terminate()
  await Promise.allSettled(clients.splice(0).map(client => client.close()))
  await running?.close()
  running = undefined
  await Promise.allSettled(upstreams.map(upstream => upstream.close()))
  upstreams = []
  for (const child of processes.splice(0)) child.kill('SIGKILL')
})

/** A bridge in this process: a WebSocket and a Streamable HTTP listener, the fixture as child. */
async function startBridge(options: BridgeOptions = {}, childOptions: Partial<Parameters<typeof bridgeChild>[0]> = {}) {
  const ws = websocket({ heartbeatMs: 0 })
  const http = streamableHttp()
  await ws.start()
  await http.start()
  running = bridge([ws, http], () => {
    const child = bridgeChild({ command: process.execPath, args: [fixture], stderr: 'ignore', ...childOptions })
    upstreams.push(child)
    return child
  }, options)
  return { ws: ws.url!, http: http.url! }
}

/** A raw WebSocket JSON-RPC peer: every message it gets, in order. */
async function peer(url: string, localAddress?: string) {
  const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { localAddress, maxPayload: 64 * 1024 * 1024 })
  sockets.push(socket)
  const received: any[] = []
  let wake = () => {}
  socket.on('message', data => { received.push(JSON.parse(data.toString())); wake() })
  const closed = new Promise<number>(resolve => socket.once('close', code => { resolve(code); wake() }))
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) })
  const next = async (): Promise<any> => {
    while (received.length === 0) {
      if (socket.readyState === WebSocket.CLOSED) throw new Error('closed before an answer')
      await new Promise<void>(resolve => { wake = resolve })
    }
    return received.shift()
  }
  return {
    socket, closed, next,
    send: (message: unknown) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    initialize: async (protocolVersion = '2025-11-25') => {
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'peer', version: '1' } } }))
      return next()
    },
  }
}

/** POSTs an initialize from `localAddress`; resolves with the whole answer (an SSE stream) as text. */
function initializeOverHttp(url: string, localAddress: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', chunk => {
        text += chunk
        // The answer has come once the stream holds an event with the initialize id.
        if (/"id":0/.test(text)) { res.destroy(); resolve(text) }
      })
      res.on('end', () => resolve(text))
    })
    req.on('error', reject)
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'http', version: '1' } } }))
  })
}

/** Resolves with `promise`, or rejects after `ms` (a bound on waits for what a fix makes happen). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms).unref())])
}

const isAlive = (pid: number) => { try { process.kill(pid, 0); return true } catch { return false } }

// Real child processes: room for a loaded machine.
describe('bridge', { timeout: 30_000 }, () => {
  it('answers a modern-era POST whose child exits before answering, instead of leaving it open', async () => {
    const { http } = await startBridge()
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } }
    const response = await within(fetch(http, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'crash' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'crash', arguments: {}, _meta: meta } }),
    }).then(async answer => ({ status: answer.status, body: await answer.text() })), 10_000, 'an answer after the child exited')
    expect(response.status).toBeGreaterThanOrEqual(200)
    expect(response.body).toMatch(/"error"/)
  })

  it('has small defaults for children and 16 MiB messages', () => {
    expect(BRIDGE_DEFAULTS).toMatchObject({ maxChildren: 8, maxChildrenPerClient: 4, childIdleTimeout: 5 * 60_000, maxMessageSize: 16 * 1024 * 1024 })
  })

  it('starts no child for a session that sends nothing (a WebSocket upgrade, a GET /sse)', async () => {
    const urls = await startBridge()
    const quiet = await peer(urls.ws)
    const sse = await fetch(urls.http.replace(/\/mcp$/, '/sse'), { headers: { accept: 'text/event-stream' } })
    const reader = sse.body!.getReader()
    const { value } = await reader.read()
    expect(new TextDecoder().decode(value)).toContain('event: endpoint')
    expect(running!.sessionCount).toBe(2)
    expect(upstreams).toHaveLength(0)
    expect((await quiet.initialize()).result.serverInfo.name).toBe('bridge-child')
    expect(upstreams).toHaveLength(1)
    await reader.cancel()
  })

  it('keeps at most maxChildren children: a session past the cap gets an error answer and is closed', async () => {
    const urls = await startBridge({ maxChildren: 2, maxChildrenPerClient: 10 })
    const peers = [await peer(urls.ws), await peer(urls.ws), await peer(urls.ws)]
    expect((await peers[0]!.initialize()).result).toBeDefined()
    expect((await peers[1]!.initialize()).result).toBeDefined()
    const refused = await peers[2]!.initialize()
    expect(refused).toMatchObject({ id: 0, error: { code: -32000, message: expect.stringMatching(/busy/) } })
    await within(peers[2]!.closed, 5_000, 'the refused socket closes')
    expect(upstreams).toHaveLength(2)
    expect(running!.childCount).toBe(2)
    // A session that ends frees its place.
    peers[0]!.socket.close()
    await within(upstreams[0]!.exited, 10_000, 'the first child exits')
    const later = await peer(urls.ws)
    expect((await later.initialize()).result).toBeDefined()
  })

  it('keeps at most maxChildrenPerClient children for one remote address', async () => {
    const urls = await startBridge({ maxChildren: 10, maxChildrenPerClient: 1 })
    expect((await (await peer(urls.ws, '127.0.0.1')).initialize()).result).toBeDefined()
    expect((await (await peer(urls.ws, '127.0.0.1')).initialize()).error).toMatchObject({ message: expect.stringContaining('127.0.0.1') })
    expect((await (await peer(urls.ws, '127.0.0.2')).initialize()).result).toBeDefined()
    expect(upstreams).toHaveLength(2)
    // Streamable HTTP sessions count against the same address.
    expect(await initializeOverHttp(urls.http, '127.0.0.2')).toContain('127.0.0.2')
    expect(await initializeOverHttp(urls.http, '127.0.0.3')).toContain('bridge-child')
    expect(upstreams).toHaveLength(3)
  })

  it('stops the child of a session idle past childIdleTimeout, not one with a request in flight', async () => {
    const scheduler = new VirtualTimeScheduler()
    const urls = await startBridge({ childIdleTimeout: 1_000, scheduler })
    const idle = await peer(urls.ws)
    await idle.initialize()
    const busy = await peer(urls.ws)
    await busy.initialize()
    busy.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 60_000 } } })
    // Answered after the call above reached the child, so the bridge has seen it.
    busy.send({ jsonrpc: '2.0', id: 2, method: 'ping' })
    expect(await busy.next()).toMatchObject({ id: 2 })
    // Moves the virtual clock 1.25 s on, running the idle checks that fall due.
    scheduler.schedule(() => {}, 1_250)
    scheduler.maxFrames = scheduler.now() + 1_250
    scheduler.flush()
    await within(upstreams[0]!.exited, 10_000, 'the idle child exits')
    await within(idle.closed, 5_000, 'the idle socket closes')
    expect(upstreams[1]!.pid).toBeDefined()
    expect(isAlive(upstreams[1]!.pid!)).toBe(true)
    expect(busy.socket.readyState).toBe(WebSocket.OPEN)
  })

  it('answers invalid JSON on a WebSocket with -32700 and id null, and the session goes on', async () => {
    const urls = await startBridge()
    const client = await peer(urls.ws)
    client.send('{"jsonrpc": "2.0", "id": 1, "method": ')
    expect(await client.next()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } })
    expect((await client.initialize()).result).toBeDefined()
  })

  it('passes on a 12 MiB answer from the child', async () => {
    const urls = await startBridge()
    const client = await peer(urls.ws)
    await client.initialize()
    client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'big', arguments: { bytes: 12 * 1024 * 1024 } } })
    const answer = await client.next()
    expect(answer.id).toBe(1)
    expect(answer.result.content[0].text).toHaveLength(12 * 1024 * 1024)
  }, 30_000)

  it('answers the waiting request with an error when the child answers beyond the limit', async () => {
    const urls = await startBridge({}, { maxMessageSize: 1024 * 1024 })
    const client = await peer(urls.ws)
    await client.initialize()
    client.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'big', arguments: { bytes: 2 * 1024 * 1024 } } })
    expect(await within(client.next(), 10_000, 'an answer')).toMatchObject({ id: 7, error: { code: -32603, message: expect.stringContaining('limit') } })
    // The child and the session live on.
    client.send({ jsonrpc: '2.0', id: 8, method: 'ping' })
    expect(await client.next()).toMatchObject({ id: 8, result: {} })
  })

  it('answers the child -32600 when a request of its own is beyond the limit', async () => {
    const urls = await startBridge({}, { maxMessageSize: 1024 * 1024 })
    const client = await peer(urls.ws)
    await client.initialize()
    client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask-big', arguments: { bytes: 2 * 1024 * 1024 } } })
    const answer = await within(client.next(), 10_000, 'an answer')
    expect(answer).toMatchObject({ id: 1 })
    expect(JSON.parse(answer.result.content[0].text)).toMatchObject({ error: { code: -32600, message: expect.stringContaining('limit') } })
  })
})

// Real child processes: room for a loaded machine.
describe('shareUpstream', { timeout: 30_000 }, () => {
  async function startShared(options: SharedUpstreamOptions = {}) {
    const ws = websocket({ heartbeatMs: 0 })
    await ws.start()
    const shared = shareUpstream(() => {
      const child = bridgeChild({ command: process.execPath, args: [fixture], stderr: 'ignore' })
      upstreams.push(child)
      return child
    }, options)
    running = bridge([ws], () => shared.open(), { maxChildren: Infinity, maxChildrenPerClient: Infinity })
    return ws.url!
  }

  /** An rxmcp client that answers elicitations with its name, and records them. */
  async function user(url: string, name: string, asked: string[]) {
    const client = await connect(websocketClient(url), { name, version: '1' }, {
      elicitation: { form: () => { asked.push(name); return { action: 'accept' as const, content: { name } } } },
    })
    clients.push(client)
    return client
  }

  /** Resolves once the child said a request arrived (its first progress). */
  function arrival() {
    let arrived!: () => void
    const promise = new Promise<void>(resolve => { arrived = resolve })
    return { promise, arrived: () => arrived() }
  }

  it('sends a server request to the session whose progress token it carries', async () => {
    const url = await startShared()
    const asked: string[] = []
    const alice = await user(url, 'alice', asked)
    const bob = await user(url, 'bob', asked)
    const bobBusy = arrival()
    void bob.callTool('slow', { ms: 60_000 }, { onProgress: bobBusy.arrived }).catch(() => undefined)
    await bobBusy.promise
    const aliceAsks = arrival()
    const aliceCall = alice.callTool('elicit', { withToken: true, onNextPing: true }, { onProgress: aliceAsks.arrived })
    await aliceAsks.promise
    // The child asks once a ping to it is answered.
    await alice.ping()
    const result = await within(aliceCall, 10_000, 'alice answered')
    expect(asked).toEqual(['alice'])
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ action: 'accept', content: { name: 'alice' } })
    // bob's request holds one child; alice's went to another.
    expect(upstreams).toHaveLength(2)
  })

  it('answers the child with an error instead of guessing when sessions that cannot be asked share it and two have requests in flight', async () => {
    const url = await startShared()
    const alice = await peer(url)
    await alice.initialize()
    const bob = await peer(url)
    await bob.initialize()
    bob.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 60_000 }, _meta: { progressToken: 'b' } } })
    expect(await bob.next()).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'b' } })
    alice.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit', arguments: {} } })
    const answer = await within(alice.next(), 10_000, 'alice answered')
    expect(answer).toMatchObject({ id: 1 })
    expect(answer.result.content[0].text).toContain('cannot tell which session')
    // One child for sessions that cannot be asked: they run at once.
    expect(upstreams).toHaveLength(1)
  })

  it('issue 20: bridge --shared: 25 of 41 concurrent elicitations failed with "cannot tell which session"', async () => {
    const url = await startShared()
    const asked: string[] = []
    const names = ['alice', 'bob', 'carol', 'dave', 'erin']
    const users = await Promise.all(names.map(name => user(url, name, asked)))
    // 41 calls at once across five sessions; the child's questions carry no progress token.
    const calls = Array.from({ length: 41 }, (_, index) => {
      const caller = names[index % names.length]!
      return users[index % names.length]!.callTool('elicit', {}).then(result => ({ caller, answer: JSON.parse((result.content[0] as { text: string }).text) }))
    })
    const results = await within(Promise.all(calls), 25_000, 'every call answered')
    for (const { caller, answer } of results) expect(answer).toEqual({ action: 'accept', content: { name: caller } })
    // Each session was asked once per call of its own, and by no one else's.
    for (const name of names) expect(asked.filter(who => who === name)).toHaveLength(results.filter(result => result.caller === name).length)
    expect(upstreams.length).toBeLessThanOrEqual(4)
  })

  it('queues a session\'s requests while every child serves another session, and serves them in order when one is free', async () => {
    const url = await startShared({ maxUpstreams: 1 })
    const asked: string[] = []
    const alice = await user(url, 'alice', asked)
    const bob = await user(url, 'bob', asked)
    const order: string[] = []
    const aliceBusy = arrival()
    const aliceCall = alice.callTool('slow', { ms: 300 }, { onProgress: aliceBusy.arrived }).then(() => order.push('alice'))
    await aliceBusy.promise
    const bobCalls = [bob.callTool('elicit', {}), bob.callTool('elicit', {})].map(call => call.then(result => { order.push('bob'); return JSON.parse((result.content[0] as { text: string }).text) }))
    await within(Promise.all([aliceCall, ...bobCalls]), 10_000, 'all answered')
    expect(await Promise.all(bobCalls)).toEqual([{ action: 'accept', content: { name: 'bob' } }, { action: 'accept', content: { name: 'bob' } }])
    expect(order).toEqual(['alice', 'bob', 'bob'])
    expect(upstreams).toHaveLength(1)
  })

  it('stops a child whose session cancelled a request it may still be working on, and serves others with a new one', async () => {
    const url = await startShared({ maxUpstreams: 1 })
    const asked: string[] = []
    const alice = await user(url, 'alice', asked)
    const bob = await user(url, 'bob', asked)
    const aliceBusy = arrival()
    const abort = new AbortController()
    const cancelled = alice.callTool('slow', { ms: 60_000 }, { onProgress: aliceBusy.arrived, signal: abort.signal }).catch(error => error)
    await aliceBusy.promise
    abort.abort()
    await cancelled
    // The child that worked for alice goes; bob's question comes from a fresh one, and reaches bob.
    await within(upstreams[0]!.exited, 10_000, 'the first child exits')
    const result = await within(bob.callTool('elicit', {}), 10_000, 'bob answered')
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({ action: 'accept', content: { name: 'bob' } })
    expect(asked).toEqual(['bob'])
    expect(upstreams).toHaveLength(2)
  })

  it('answers a session that names another session\'s task -32602, and lists only a session\'s own tasks', async () => {
    const url = await startShared()
    const alice = await peer(url)
    await alice.initialize()
    const bob = await peer(url)
    await bob.initialize()
    alice.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'task', arguments: { taskId: 'task-1' } } })
    expect(await alice.next()).toMatchObject({ id: 1, result: { task: { taskId: 'task-1' } } })
    bob.send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: 'task-1' } })
    expect(await bob.next()).toMatchObject({ id: 2, error: { code: -32602 } })
    // alice's own reaches the child (which knows no tasks/get).
    alice.send({ jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: 'task-1' } })
    expect(await alice.next()).toMatchObject({ id: 3, error: { code: -32601 } })
  })

  it('passes on only the answer of the session the child asked', async () => {
    const url = await startShared()
    const alice = await peer(url)
    await alice.initialize()
    const mallory = await peer(url)
    await mallory.initialize()
    alice.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit', arguments: { withToken: true }, _meta: { progressToken: 'a' } } })
    expect(await alice.next()).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'a' } })
    const asked = await alice.next()
    expect(asked).toMatchObject({ method: 'elicitation/create' })
    // Another session answers first, with the id it could guess; the ping after it shows the child had it.
    mallory.send({ jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { name: 'mallory' } } })
    mallory.send({ jsonrpc: '2.0', id: 2, method: 'ping' })
    expect(await mallory.next()).toMatchObject({ id: 2, result: {} })
    alice.send({ jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { name: 'alice' } } })
    const answer = await alice.next()
    expect(answer).toMatchObject({ id: 1 })
    expect(JSON.parse(answer.result.content[0].text)).toEqual({ action: 'accept', content: { name: 'alice' } })
    // The request came with alice's own progress token, not the one the bridge gave the child.
    expect(asked.params._meta).toEqual({ progressToken: 'a' })
  })

  it('sends a server request that names a task to the session that made the task', async () => {
    const url = await startShared()
    const alice = await peer(url)
    await alice.initialize()
    const bob = await peer(url)
    await bob.initialize()
    alice.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'task', arguments: { taskId: 'task-1' } } })
    expect(await alice.next()).toMatchObject({ id: 1, result: { task: { taskId: 'task-1' } } })
    // bob's request is the only one in flight, yet the child's question is about alice's task.
    bob.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit', arguments: { relatedTask: 'task-1' } } })
    const asked = await within(alice.next(), 10_000, 'alice is asked')
    expect(asked).toMatchObject({ method: 'elicitation/create', params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'task-1' } } } })
    alice.send({ jsonrpc: '2.0', id: asked.id, result: { action: 'decline' } })
    const answer = await bob.next()
    expect(answer).toMatchObject({ id: 1 })
    expect(JSON.parse(answer.result.content[0].text)).toEqual({ action: 'decline' })
  })

  it('hands each session the initialize answer of the protocol version it asked for', async () => {
    const url = await startShared()
    const modern = await peer(url)
    expect((await modern.initialize('2025-11-25')).result.protocolVersion).toBe('2025-11-25')
    const legacy = await peer(url)
    expect((await legacy.initialize('2024-11-05')).result.protocolVersion).toBe('2024-11-05')
    const another = await peer(url)
    expect((await another.initialize('2025-11-25')).result.protocolVersion).toBe('2025-11-25')
    // One child per version asked for, shared by the sessions that asked for it; a made-up one starts none.
    const odd = await peer(url)
    expect((await odd.initialize('1999-01-01')).result).toBeDefined()
    expect(upstreams).toHaveLength(2)
  })
})

describe('bridgeChild', { timeout: 30_000 }, () => {
  it('closes a child that ignores SIGTERM and EOF, and its grandchild with it (one process group)', async () => {
    const child = bridgeChild({ command: process.execPath, args: [fixture, '--trap', '--grandchild'], stderr: 'ignore', shutdownGraceMs: 200 })
    upstreams.push(child)
    const answer = new Promise<any>(resolve => child.inbound.subscribe({ next: item => { if (item.type === 'message') resolve(item.message) }, error: () => {} }))
    child.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
    const { pid, grandchildPid } = (await answer).result.serverInfo
    pids.push(pid, grandchildPid)
    await within(child.close(), 10_000, 'close() resolves')
    for (let wait = 0; wait < 100 && isAlive(grandchildPid); wait++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(isAlive(pid)).toBe(false)
    expect(isAlive(grandchildPid)).toBe(false)
  })
})

describe('rxmcp bridge', () => {
  /** Starts the command; resolves with its base URL once it serves, and its stderr so far. */
  async function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'bridge', '--port', '0', ...args], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] })
    processes.push(child)
    let log = ''
    child.stderr!.on('data', chunk => { log += chunk })
    const base = await within(new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', () => {
        const match = /served at (http:\/\/\S+)\/mcp/.exec(log)
        if (match) resolve(match[1]!)
      })
      child.once('exit', code => reject(new Error(`bridge exited ${code}: ${log}`)))
    }), 30_000, 'the bridge serves')
    return { child, base, log: () => log }
  }

  it('exits on SIGTERM although its child ignores SIGTERM and EOF, and no child or grandchild is left', async () => {
    const { child, base } = await cli(['--', process.execPath, fixture, '--trap', '--grandchild'])
    const client = await peer(`${base.replace(/^http/, 'ws')}/mcp`)
    const { serverInfo } = (await client.initialize()).result
    pids.push(serverInfo.pid, serverInfo.grandchildPid)
    expect(isAlive(serverInfo.pid)).toBe(true)
    expect(isAlive(serverInfo.grandchildPid)).toBe(true)
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.kill('SIGTERM')
    await within(exited, 20_000, 'the bridge exits')
    for (let wait = 0; wait < 100 && (isAlive(serverInfo.pid) || isAlive(serverInfo.grandchildPid)); wait++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(isAlive(serverInfo.pid)).toBe(false)
    expect(isAlive(serverInfo.grandchildPid)).toBe(false)
  }, 60_000)

  it('gives children a minimal environment unless told otherwise', async () => {
    const env = { ...process.env, RXMCP_TEST_SECRET: 'hunter2', RXMCP_TEST_PASSED: 'yes' }
    const names = async (args: string[]) => {
      const { base } = await cli([...args, '--', process.execPath, fixture], env)
      const client = await peer(`${base.replace(/^http/, 'ws')}/mcp`)
      await client.initialize()
      client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'env' } })
      return JSON.parse((await client.next()).result.content[0].text) as string[]
    }
    const minimal = await names(['--env', 'RXMCP_TEST_PASSED', '--env', 'EXTRA=1'])
    expect(minimal).not.toContain('RXMCP_TEST_SECRET')
    expect(minimal).toEqual(expect.arrayContaining(['PATH', 'RXMCP_TEST_PASSED', 'EXTRA']))
    expect(await names(['--inherit-env'])).toContain('RXMCP_TEST_SECRET')
  }, 60_000)

  it('refuses a cross-site request that carries no Origin (an <img src=/sse> on another site) and starts nothing', async () => {
    const { base, log } = await cli(['--', process.execPath, fixture])
    const get = (headers: Record<string, string>) => new Promise<number>((resolve, reject) => {
      const req = request(`${base}/sse`, { headers: { accept: 'text/event-stream', ...headers } }, res => { resolve(res.statusCode!); res.destroy() })
      req.on('error', reject)
      req.end()
    })
    expect(await get({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' })).toBe(403)
    // Clients that are not browsers send neither header, and a page of this origin sends its Origin.
    expect(await get({})).toBe(200)
    expect(await get({ origin: 'http://localhost:8080', 'sec-fetch-site': 'cross-site' })).toBe(200)
    expect(log()).not.toMatch(/child pid \d+/)
  }, 60_000)

  it('warns when bound beyond the loopback address and keeps refusing foreign Host headers', async () => {
    const { base, log } = await cli(['--host', '127.0.0.2', '--allow-unauthenticated', '--', process.execPath, fixture])
    expect(log()).toMatch(/WARNING: listening on 127\.0\.0\.2/)
    const status = (host: string) => new Promise<number>((resolve, reject) => {
      const req = request(`${base}/mcp`, { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, res => { res.resume(); resolve(res.statusCode!) })
      req.on('error', reject)
      req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    })
    expect(await status('evil.example.com')).toBe(403)
    expect(await status(new URL(base).host)).not.toBe(403)
  }, 60_000)
})
