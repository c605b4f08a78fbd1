import { afterEach, describe, expect, it } from 'vitest'
import { once } from 'node:events'
import { WebSocket } from 'ws'
import { VirtualTimeScheduler } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { websocket, WS_SUBPROTOCOL } from '../../transports/websocket.ts'
import { ErrorCode } from '../../lib/jsonrpc/errors.ts'
import { createMemoryRateLimiterStore, memoryRateLimiterStore, TokenBuckets } from '../../lib/token-bucket.ts'

/**
 * One server on one port: a Streamable HTTP listener and a WebSocket listener attached to its
 * node:http server (README, "Over WebSocket"), both with `rateLimit`. With the default in-memory
 * store each listener kept a budget of its own, so a client got the budget once per listener.
 */

const RATE = { capacity: 3, refillPerSecond: 1 }

const servers: McpServer[] = []
const sockets: WebSocket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate()
  for (const server of servers.splice(0)) await server.close()
})

/** A clock that stands still: no token comes back during a test. */
const still = () => new VirtualTimeScheduler(undefined, 0)

const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'count', arguments: {} } })

describe('issue 20: an HTTP listener and a WebSocket listener attached to it keep separate budgets', () => {
  it('spends one rateLimit budget per client on both when the WebSocket listener takes http.rateLimiterStore', async () => {
    const scheduler = still()
    const server = createServer({ name: 'one-port', version: '1' })
    servers.push(server)
    let ran = 0
    server.tool('count', {}, () => { ran++; return { content: [{ type: 'text', text: String(ran) }] } })
    const http = streamableHttp({ port: 0, rateLimit: RATE, scheduler })
    await server.listen(http)
    const ws = websocket({ heartbeatMs: 0, rateLimit: RATE, rateLimiterStore: http.rateLimiterStore, scheduler })
    ws.attach(http.httpServer!)
    await server.listen(ws)

    // Two of the client's three tokens over HTTP: initialize (a request) and one ping of the session.
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const init = await fetch(http.url!, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }) })
    expect(init.status).toBe(200)
    await init.body?.cancel()
    const session = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
    await (await fetch(http.url!, { method: 'POST', headers: session, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).body?.cancel()
    const second = await fetch(http.url!, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) })
    expect(second.status).toBe(200)
    await second.body?.cancel()

    // The same client over WebSocket on the same port: one token left, for initialize; then -32029.
    const socket = new WebSocket(http.url!.replace('http:', 'ws:'), [WS_SUBPROTOCOL.json])
    sockets.push(socket)
    await once(socket, 'open')
    const answers: { id: number; result?: unknown; error?: { code: number } }[] = []
    const two = new Promise<void>(resolve => socket.on('message', (data: Buffer) => { answers.push(JSON.parse(data.toString())); if (answers.length === 2) resolve() }))
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }))
    socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    socket.send(ping(11))
    await two
    expect(answers[0]).toMatchObject({ id: 10, result: { protocolVersion: '2025-11-25' } })
    expect(answers[1]).toMatchObject({ id: 11, error: { code: ErrorCode.RateLimited } })
    expect(ran).toBe(0)
    // And back on HTTP the budget is spent too.
    const third = await fetch(http.url!, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) })
    expect(third.status).toBe(429)
    await third.body?.cancel()
  })

  it('keeps each listener\'s buckets apart when it is given no store (each makes its own)', () => {
    const http = streamableHttp({ rateLimit: RATE })
    const ws = websocket({ rateLimit: RATE })
    expect(http.rateLimiterStore).not.toBe(ws.rateLimiterStore)
    expect(streamableHttp().rateLimiterStore).not.toBe(http.rateLimiterStore)
    void http.close()
    void ws.close()
  })
})

describe('createMemoryRateLimiterStore', () => {
  it('gives limiters of one name the same buckets, each by its own size; other names and other stores stay apart', () => {
    let now = 0
    const store = createMemoryRateLimiterStore()
    const a = store.limiter('requests', { capacity: 3, refillPerSecond: 1, now: () => now })
    const b = store.limiter('requests', { capacity: 3, refillPerSecond: 1, now: () => now })
    expect([a.take('client'), b.take('client'), a.take('client'), b.take('client')]).toEqual([0, 0, 0, 1000])
    expect(store.limiter('auth-failures', { capacity: 1, refillPerSecond: 1, now: () => now }).take('client')).toBe(0)
    expect(createMemoryRateLimiterStore().limiter('requests', { capacity: 3, refillPerSecond: 1, now: () => now }).take('client')).toBe(0)
    now = 1000
    expect([b.take('client'), a.take('client')]).toEqual([0, 1000])
    // A limiter whose clock is behind the bucket's last count refills nothing, and takes nothing
    // back either: the bucket is empty, one token away (1 s), as for the others.
    const behind = store.limiter('requests', { capacity: 3, refillPerSecond: 1, now: () => now - 5000 })
    expect([behind.take('client'), a.take('client')]).toEqual([1000, 1000])
  })

  it('is not memoryRateLimiterStore, whose limiters share nothing', () => {
    const one = memoryRateLimiterStore.limiter('requests', { capacity: 1, refillPerSecond: 1 })
    const two = memoryRateLimiterStore.limiter('requests', { capacity: 1, refillPerSecond: 1 })
    expect([one.take('k'), two.take('k')]).toEqual([0, 0])
    expect(new TokenBuckets({ capacity: 1, refillPerSecond: 1 }).take('k')).toBe(0)
  })
})
