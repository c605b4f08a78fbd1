import { afterEach, describe, expect, it, vi } from 'vitest'
import { WebSocket } from 'ws'
import { filter, firstValueFrom, lastValueFrom, take, toArray, VirtualTimeScheduler } from 'rxjs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { websocket, websocketClient, WS_SUBPROTOCOL, type McpWebSocketServer } from '../../transports/websocket.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { connect } from '../../actors/client.ts'
import type { McpServer } from '../../actors/server.ts'
import { CancelledError, ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'
import { progressOfLastAnswer, recordWire } from '../helpers/sdk-wire.ts'
import { sessionsEnded } from '../helpers/sessions-ended.ts'
import { TestClock } from '../helpers/test-clock.ts'

let server: McpServer | undefined
let ws: McpWebSocketServer | undefined
afterEach(async () => { await server?.close(); server = undefined; ws = undefined })

async function start(options: Parameters<typeof websocket>[0] = {}): Promise<string> {
  server = createEverythingServer()
  ws = websocket(options)
  await server.listen(ws)
  return ws.url!
}

/** Moves a virtual clock `ms` on, running what it has due by then. */
function advance(clock: VirtualTimeScheduler, ms: number): void {
  // An action at the target time, so the clock reaches it even when nothing else is due.
  clock.schedule(() => {}, ms)
  clock.maxFrames = clock.now() + ms
  clock.flush()
}

const handlers = {
  sampling: () => ({ role: 'assistant' as const, model: 'ws-model', content: { type: 'text' as const, text: 'over a socket' } }),
  elicitation: { form: () => ({ action: 'accept' as const, content: { name: 'Socket' } }) },
  roots: [{ uri: 'file:///ws', name: 'ws' }],
}

describe('websocket', () => {
  it('serves the official SDK WebSocketClientTransport unchanged (subprotocol mcp)', async () => {
    const url = await start()
    const globals = globalThis as { WebSocket?: unknown }
    const previous = globals.WebSocket
    globals.WebSocket = WebSocket
    try {
      const client = new Client({ name: 'official-ws', version: '1' })
      const transport = new WebSocketClientTransport(new URL(url))
      await client.connect(transport)
      const wire = recordWire(transport)
      expect((await client.listTools()).tools).toHaveLength(5)
      expect(await client.callTool({ name: 'echo', arguments: { text: 'ws' } })).toEqual({ content: [{ type: 'text', text: 'ws' }] })
      const progress: number[] = []
      await client.callTool({ name: 'long_running', arguments: { steps: 3, ms: 5 } }, undefined, { onprogress: p => { progress.push(p.progress) } })
      // What rxmcp guarantees: every progress is written before the result. ws hands the SDK a
      // chunk's frames at once, and the SDK may then drop the last progress: it reports a prefix.
      expect(progressOfLastAnswer(wire)).toEqual({ before: [1, 2, 3], after: 0 })
      expect(progress).toEqual([1, 2, 3].slice(0, progress.length))
      const controller = new AbortController()
      // Aborted at its first progress: the call is surely in flight on the server then.
      const call = client.callTool({ name: 'long_running', arguments: { steps: 500, ms: 10 } }, undefined, { signal: controller.signal, onprogress: () => controller.abort() })
      await expect(call).rejects.toThrow()
      // The server forgets the request once it has read the cancellation: a ping sent after it on
      // the same socket is answered after it was read.
      await client.ping()
      for (const session of server!.sessions) expect(session.connection.incoming.size).toBe(0)
      await client.close()
    } finally {
      globals.WebSocket = previous
    }
  })

  it.each(['json', 'msgpack'] as const)('runs the feature matrix with the rxmcp client over %s', async encoding => {
    const url = await start()
    const client = await connect(websocketClient(url, { encoding }), { name: 'rx-ws', version: '1' }, handlers)
    expect(await lastValueFrom(client.tools().pipe(toArray()))).toHaveLength(10)
    expect(await lastValueFrom(client.resources().pipe(toArray()))).toHaveLength(8)
    expect(await client.callTool('echo', { text: encoding })).toEqual({ content: [{ type: 'text', text: encoding }] })
    expect((await client.callTool('add', { a: 2, b: 3 })).structuredContent).toEqual({ sum: 5 })
    const progress: number[] = []
    await client.callTool('long_running', { steps: 3, ms: 5 }, { onProgress: p => progress.push(p.progress) })
    expect(progress).toEqual([1, 2, 3])
    expect((await client.callTool('sample', { prompt: 'x' })).content).toEqual([{ type: 'text', text: 'ws-model: over a socket' }])
    expect((await client.callTool('elicit')).structuredContent).toMatchObject({ action: 'accept', content: { name: 'Socket', age: 30 } })
    expect((await client.callTool('roots')).content).toEqual([{ type: 'text', text: '[{"uri":"file:///ws","name":"ws"}]' }])
    expect((await client.readResource('everything://logo')).contents[0]).toMatchObject({ blob: expect.any(String) })
    const controller = new AbortController()
    // Aborted at its first progress: the call is surely in flight on the server then.
    const call = client.callTool('long_running', { steps: 500, ms: 10 }, { signal: controller.signal, onProgress: () => controller.abort() })
    await expect(call).rejects.toBeInstanceOf(CancelledError)
    await client.close()
  })

  it('picks msgpack only when the client offers it', async () => {
    const url = await start()
    const both = new WebSocket(url, [WS_SUBPROTOCOL.json, WS_SUBPROTOCOL.msgpack])
    await new Promise(resolve => both.once('open', resolve))
    expect(both.protocol).toBe(WS_SUBPROTOCOL.msgpack)
    both.close()
    const json = new WebSocket(url, [WS_SUBPROTOCOL.json])
    await new Promise(resolve => json.once('open', resolve))
    expect(json.protocol).toBe(WS_SUBPROTOCOL.json)
    json.close()
  })

  it('refuses a foreign Origin and a failed authentication', async () => {
    const url = await start({ authenticate: request => request.headers.authorization === 'Bearer good' })
    const status = (headers: Record<string, string>) => new Promise<number>(resolve => {
      const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { headers })
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
      socket.once('open', () => { socket.close(); resolve(101) })
      socket.once('error', () => {})
    })
    expect(await status({ origin: 'https://evil.example.com', authorization: 'Bearer good' })).toBe(403)
    expect(await status({ authorization: 'Bearer bad' })).toBe(401)
    expect(await status({ authorization: 'Bearer good' })).toBe(101)
  })

  it('closes a socket that sends a frame over the limit with 1009, and the session ends', async () => {
    const url = await start({ maxFrameBytes: 1024 })
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json])
    await new Promise(resolve => socket.once('open', resolve))
    const closed = new Promise<number>(resolve => socket.once('close', code => resolve(code)))
    socket.send('x'.repeat(4096))
    expect(await closed).toBe(1009)
    // The server ends the session once it has seen its side of the socket close.
    await sessionsEnded(server!)
    expect(server!.sessions.size).toBe(0)
  })

  it('closes a peer that stops answering pings within the heartbeat interval', async () => {
    // Heartbeats on a virtual clock: an interval passes when the test says, whatever the machine's pace.
    const clock = new VirtualTimeScheduler()
    const url = await start({ heartbeatMs: 100, scheduler: clock })
    // Both sockets' sessions: the server opens each as the listener hands it over, before this hears it.
    const bothOpen = firstValueFrom(ws!.connections.pipe(take(2), toArray()))
    // One peer that never answers a ping, and one that does (ws answers for it).
    const silent = new WebSocket(url, [WS_SUBPROTOCOL.json], { autoPong: false })
    const answering = new WebSocket(url, [WS_SUBPROTOCOL.json])
    await Promise.all([silent, answering].map(socket => new Promise(resolve => socket.once('open', resolve))))
    await bothOpen
    expect(server!.sessions.size).toBe(2)
    // The server's side of each socket; its pong listener runs before the one added here.
    const ponged = new Promise(resolve => { for (const session of server!.sessions) (session.connection.transport as unknown as { ws: WebSocket }).ws.once('pong', resolve) })
    let isClosed = false
    const closed = new Promise<number>(resolve => silent.once('close', code => { isClosed = true; resolve(code) }))
    const pinged = new Promise(resolve => silent.once('ping', resolve))
    // The first heartbeat pings both; only one answers.
    advance(clock, 100)
    await Promise.all([pinged, ponged])
    expect(isClosed).toBe(false)
    // The next one finds no pong from the silent peer since: it is cut.
    advance(clock, 100)
    expect(await closed).toBe(1006)
    // The answering peer is still served after that heartbeat: a request gets its answer.
    const answer = new Promise<string>(resolve => answering.once('message', data => resolve(String(data))))
    answering.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))
    expect(JSON.parse(await answer)).toMatchObject({ jsonrpc: '2.0', id: 1 })
    answering.close()
  })

  it('stops reading from a peer that does not read its answers, so memory stays bounded', async () => {
    const url = await start({ highWaterMark: 64 * 1024 })
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { perMessageDeflate: false })
    await new Promise(resolve => socket.once('open', resolve))
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow', version: '1' } } }))
    await new Promise(resolve => socket.once('message', resolve))
    socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    // This reader stops reading; it goes on writing requests whose answers are 20 KiB each.
    ;(socket as unknown as { _socket: { pause(): void } })._socket.pause()
    const text = 'x'.repeat(20 * 1024)
    for (let id = 1; id <= 2000; id++) socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } }))
    let peak = 0
    const sample = () => {
      for (const session of server!.sessions) peak = Math.max(peak, (session.connection.transport as unknown as { bufferedAmount: number }).bufferedAmount)
      return peak
    }
    // The server's queue to this peer reaches the high-water mark: from there it stops reading it.
    await vi.waitFor(() => expect(sample()).toBeGreaterThanOrEqual(64 * 1024), { timeout: 20_000, interval: 10 })
    // Then watched a while longer, as the requests it had read are answered. Sampling can only miss
    // a peak, never make one: this wait cannot fail the test, only let more of it be seen.
    for (let i = 0; i < 40; i++) {
      await new Promise(resolve => setTimeout(resolve, 25))
      sample()
    }
    // 2000 answers would be 40 MiB; the server holds back at the high-water mark plus what was in flight.
    expect(peak).toBeLessThan(8 * 1024 * 1024)
    socket.terminate()
  })

  it('fails requests in flight at once when the server goes away', async () => {
    const url = await start()
    const client = await connect(websocketClient(url), { name: 'rx-ws', version: '1' })
    // In flight on the server once its first progress comes.
    let heardProgress!: () => void
    const inFlight = new Promise<void>(resolve => { heardProgress = resolve })
    const call = client.callTool('long_running', { steps: 100, ms: 50 }, { onProgress: () => heardProgress() }).catch(error => error)
    await inFlight
    for (const session of server!.sessions) (session.connection.transport as unknown as { ws: WebSocket }).ws.terminate()
    expect(await call).toBeInstanceOf(ConnectionClosedError)
  })

  it('reconnects with a fresh session after the server drops the socket', async () => {
    const url = await start()
    // The client's backoff waits on a virtual clock: the test moves it.
    const clock = new TestClock()
    const client = await connect(() => websocketClient(url), { name: 'resilient', version: '1' }, { reconnect: { initial: 20, retries: 5 }, scheduler: clock })
    // Subscribed before the reconnect: heard after it.
    const heard = firstValueFrom(client.notifications('notifications/message').pipe(filter(params => params.data === 'after reconnect')))
    let heardProgress!: () => void
    const inFlight = new Promise<void>(resolve => { heardProgress = resolve })
    const pending = client.callTool('long_running', { steps: 100, ms: 50 }, { onProgress: () => heardProgress() }).catch(error => error)
    await inFlight
    for (const session of server!.sessions) (session.connection.transport as unknown as { ws: WebSocket }).ws.terminate()
    expect(await pending).toBeInstanceOf(ConnectionClosedError)
    // The first reconnection waits the backoff's first step on the client's clock, then reconnects.
    expect(await clock.nextWait(20)).toBe(20)
    const operating = firstValueFrom(client.states.pipe(filter(state => state.status === 'operating')))
    clock.advance(20)
    await operating
    expect(await client.callTool('echo', { text: 'again' })).toEqual({ content: [{ type: 'text', text: 'again' }] })
    // The notification bus survives the reconnect.
    await client.setLoggingLevel('debug')
    await client.callTool('log', { level: 'info', message: 'after reconnect' })
    // Heard by the subscription made before the reconnect.
    expect(await heard).toEqual({ level: 'info', logger: 'everything', data: 'after reconnect' })
    await client.close()
    expect(client.state.status).toBe('closed')
  })

  it('shares the port of the Streamable HTTP server', async () => {
    server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    // A listener given without start() is served without binding a port of its own; attach() hands it the upgrades.
    const shared = websocket()
    await server.listen({ connections: shared.connections, close: () => shared.close() })
    const { createServer: createNodeServer } = await import('node:http')
    const node = createNodeServer(http.nodeHandler)
    shared.attach(node)
    await new Promise<void>(resolve => node.listen(0, '127.0.0.1', resolve))
    const port = (node.address() as { port: number }).port
    const viaWs = await connect(websocketClient(`ws://127.0.0.1:${port}/mcp`), { name: 'a', version: '1' })
    const { streamableHttpClient } = await import('../../transports/http-client.ts')
    const viaHttp = await connect(streamableHttpClient(`http://127.0.0.1:${port}/mcp`), { name: 'b', version: '1' })
    expect(await viaWs.callTool('echo', { text: 'ws' })).toEqual({ content: [{ type: 'text', text: 'ws' }] })
    expect(await viaHttp.callTool('echo', { text: 'http' })).toEqual({ content: [{ type: 'text', text: 'http' }] })
    await viaWs.close()
    await viaHttp.close()
    node.closeAllConnections()
    await new Promise(resolve => node.close(resolve))
  })
})
