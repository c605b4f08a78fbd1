import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { VirtualTimeScheduler } from 'rxjs'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { websocket, WS_SUBPROTOCOL, WEBSOCKET_DEFAULTS, type WebSocketServerOptions } from '../../transports/websocket.ts'
import type { McpServer } from '../../actors/server.ts'

let server: McpServer | undefined
const sockets: WebSocket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate()
  await server?.close()
  server = undefined
})

/** A virtual clock for the listener: `advance` moves it and runs what fell due. */
function virtualClock() {
  const scheduler = new VirtualTimeScheduler()
  return {
    scheduler,
    advance(ms: number) {
      scheduler.schedule(() => {}, ms)
      scheduler.maxFrames = scheduler.now() + ms
      scheduler.flush()
    },
  }
}

async function start(options: WebSocketServerOptions): Promise<string> {
  server = createEverythingServer()
  const ws = websocket({ heartbeatMs: 0, ...options })
  await server.listen(ws)
  return ws.url!
}

/** The Retry-After of the last refused upgrade. */
let retryAfter: string | undefined

/** Opens a socket: resolves with it once open, or with the HTTP status that refused the upgrade. */
function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket | number> {
  return new Promise(resolve => {
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { headers })
    sockets.push(socket)
    socket.once('open', () => resolve(socket))
    socket.once('unexpected-response', (_request, response) => { retryAfter = response.headers['retry-after']; resolve(response.statusCode ?? 0) })
    socket.once('error', () => {})
  })
}

async function opened(url: string): Promise<WebSocket> {
  const socket = await open(url)
  if (typeof socket === 'number') throw new Error(`upgrade refused: ${socket}`)
  return socket
}

/** Sends a request and resolves with its answer. */
function call(socket: WebSocket, id: number, method: string, params: object = {}): Promise<{ id: number; result?: unknown; error?: unknown }> {
  return new Promise(resolve => {
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString())
      if (message.id === id) { socket.off('message', onMessage); resolve(message) }
    }
    socket.on('message', onMessage)
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
  })
}

async function initialize(socket: WebSocket): Promise<void> {
  await call(socket, 0, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'limits', version: '1' } })
  socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
  // Answered only after the notification arrived: the server has seen everything sent so far.
  await call(socket, 99, 'ping')
}

const closeCode = (socket: WebSocket) => new Promise<number>(resolve => socket.once('close', code => resolve(code)))

describe('websocket', { timeout: 20_000 }, () => {
  it('has a session cap, an idle timeout and an eviction minimum by default', () => {
    expect(WEBSOCKET_DEFAULTS).toMatchObject({ maxSessions: 10_000, sessionIdleTimeout: 30 * 60_000, sessionEvictionMinIdle: 60_000 })
  })

  it('answers an upgrade past maxSessions with 503 while every socket is recently active', async () => {
    const clock = virtualClock()
    const url = await start({ maxSessions: 2, scheduler: clock.scheduler })
    await opened(url)
    await opened(url)
    clock.advance(59_000)
    expect(await open(url)).toBe(503)
    expect(retryAfter).toBe('1')
  })

  it('evicts the least recently active idle socket with 1001 to make room', async () => {
    const clock = virtualClock()
    const url = await start({ maxSessions: 2, scheduler: clock.scheduler })
    const first = await opened(url)
    const second = await opened(url)
    await initialize(first)
    clock.advance(30_000)
    await initialize(second)
    clock.advance(35_000)
    // first has been idle 65 s, second 35 s: first goes.
    const firstClosed = closeCode(first)
    const third = await open(url)
    expect(third).toBeInstanceOf(WebSocket)
    expect(await firstClosed).toBe(1001)
    expect(second.readyState).toBe(WebSocket.OPEN)
  })

  it('never evicts a socket whose request is still in flight', async () => {
    const clock = virtualClock()
    const url = await start({ maxSessions: 1, scheduler: clock.scheduler })
    const busy = await opened(url)
    await initialize(busy)
    busy.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'long_running', arguments: { steps: 1000, ms: 20 } } }))
    // The request reaches the server before the clock moves: a ping sent after it is answered after it arrived.
    await call(busy, 2, 'ping')
    clock.advance(10 * 60_000)
    expect(await open(url)).toBe(503)
    expect(busy.readyState).toBe(WebSocket.OPEN)
  })

  it('closes a socket idle past sessionIdleTimeout with 1001, but not one with a request in flight', async () => {
    const clock = virtualClock()
    const url = await start({ sessionIdleTimeout: 1_000, scheduler: clock.scheduler })
    const idle = await opened(url)
    const busy = await opened(url)
    await initialize(idle)
    await initialize(busy)
    busy.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'long_running', arguments: { steps: 1000, ms: 20 } } }))
    await call(busy, 2, 'ping')
    const idleClosed = closeCode(idle)
    clock.advance(1_250)
    expect(await idleClosed).toBe(1001)
    expect(busy.readyState).toBe(WebSocket.OPEN)
  })

  it('tells the session its remote address', async () => {
    const url = await start({})
    await initialize(await opened(url))
    const [session] = [...server!.sessions]
    expect((session!.connection.transport as { remoteAddress?: string }).remoteAddress).toBe('127.0.0.1')
  })

  it('refuses an upgrade marked cross-site by the browser that carries no Origin', async () => {
    const url = await start({})
    expect(await open(url, { 'sec-fetch-site': 'cross-site' })).toBe(403)
    expect(await open(url, { 'sec-fetch-site': 'cross-site', origin: 'http://localhost:5173' })).toBeInstanceOf(WebSocket)
  })

  it('refuses a Host that is not a loopback name while bound to loopback (DNS rebinding)', async () => {
    const url = await start({})
    expect(await open(url, { host: 'evil.example.com' })).toBe(403)
    expect(await open(url, { host: `localhost:${new URL(url).port}` })).toBeInstanceOf(WebSocket)
  })

  it('compares Host without case, as the HTTP listener does', async () => {
    const url = await start({})
    expect(await open(url, { host: `LOCALHOST:${new URL(url).port}` })).toBeInstanceOf(WebSocket)
  })
})
