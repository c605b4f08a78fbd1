import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { VirtualTimeScheduler } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { websocket, WS_SUBPROTOCOL, WEBSOCKET_DEFAULTS, type WebSocketServerOptions } from '../../transports/websocket.ts'
import { connectRedis, redisRateLimiterStore, type RedisConnection } from '../../transports/redis.ts'
import type { Authenticator } from '../../lib/auth.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'

/**
 * The WebSocket listener applies the HTTP listener's per-client policy, over real sockets on
 * 127.0.0.1: each socket connects from a chosen loopback address (127.0.0.0/8), so one test has
 * several clients. A session cap per client, a failed-authentication budget on the upgrade, a
 * request budget per client (shared through a real redis-server), and `clientAddress`.
 */

/** Two clients: two loopback addresses. */
const A = '127.0.0.1'
const B = '127.0.0.2'

const servers: McpServer[] = []
const sockets: WebSocket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate()
  for (const server of servers.splice(0)) await server.close()
})

/** A virtual clock for the listener that does not move unless told: `advance` moves it and runs what fell due. */
function virtualClock() {
  const scheduler = new VirtualTimeScheduler(undefined, 0)
  return {
    scheduler,
    advance(ms: number) {
      scheduler.schedule(() => {}, ms)
      scheduler.maxFrames = scheduler.now() + ms
      scheduler.flush()
    },
  }
}

/** `ran` counts the calls of the `count` tool the server ran. */
const ran = { count: 0 }

/** A server with a `count` tool on a real WebSocket listener of `options`; resolves with its URL. */
async function start(options: WebSocketServerOptions = {}): Promise<string> {
  const server = createServer({ name: 'ws-policy', version: '1' })
  server.tool('count', {}, () => { ran.count++; return { content: [{ type: 'text', text: String(ran.count) }] } })
  const ws = websocket({ heartbeatMs: 0, ...options })
  await server.listen(ws)
  servers.push(server)
  return ws.url!
}

interface Refused { status: number; retryAfter: string | undefined; body: string }

/** Opens a socket from `from`: resolves with it once open, or with the HTTP answer that refused the upgrade. */
function open(url: string, from: string, headers: Record<string, string> = {}): Promise<WebSocket | Refused> {
  return new Promise(resolve => {
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { headers, localAddress: from })
    sockets.push(socket)
    socket.once('open', () => resolve(socket))
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', chunk => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined, body }))
    })
    socket.once('error', () => {})
  })
}

/** The HTTP status of an upgrade (101 when it opened). */
async function statusOf(url: string, from: string, headers: Record<string, string> = {}): Promise<number> {
  const got = await open(url, from, headers)
  return got instanceof WebSocket ? 101 : got.status
}

async function opened(url: string, from: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const got = await open(url, from, headers)
  if (!(got instanceof WebSocket)) throw new Error(`upgrade refused: ${got.status}`)
  return got
}

type Answer = { jsonrpc: '2.0'; id: number; result?: { content?: { text: string }[] }; error?: { code: number; message: string; data?: Record<string, unknown> } }

/** Sends a payload and resolves with the answers to `ids`, in the order they came. */
function exchange(socket: WebSocket, ids: number[], payload: unknown): Promise<Answer[]> {
  return new Promise(resolve => {
    const answers: Answer[] = []
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString())
      for (const answer of Array.isArray(message) ? message : [message]) if (ids.includes(answer.id)) answers.push(answer)
      if (answers.length === ids.length) { socket.off('message', onMessage); resolve(answers) }
    }
    socket.on('message', onMessage)
    socket.send(JSON.stringify(payload))
  })
}

const callCount = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'count', arguments: {} } })

async function call(socket: WebSocket, id: number): Promise<Answer> {
  return (await exchange(socket, [id], callCount(id)))[0]!
}

async function initialize(socket: WebSocket): Promise<void> {
  await exchange(socket, [0], { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws-policy', version: '1' } } })
  socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
}

/**
 * An authenticator for the tests: `Bearer user-<name>` is principal <name>, anything else (no
 * token included) is refused 401; `calls` counts verifications.
 */
function testAuth() {
  const counter = { calls: 0 }
  const auth: Authenticator = {
    async authenticate(request) {
      counter.calls++
      const token = /^Bearer user-(.+)$/.exec(request.header('authorization') ?? '')
      if (token !== null) return { type: 'allow', principal: { subject: token[1]!, scopes: [] } }
      return { type: 'refuse', answer: { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' }, body: '' } }
    },
  }
  return { auth, counter }
}

const closeOf = (socket: WebSocket) => new Promise<{ code: number; reason: string }>(resolve => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))

let redisServer: TestRedis
let redis: RedisConnection
beforeAll(async () => {
  redisServer = await startRedis()
  redis = await connectRedis(redisServer.url)
}, 30_000)
afterAll(async () => {
  await redis?.close()
  await redisServer?.stop()
})

describe('issue 20: unbounded per-client resources and per-process limits (WebSocket)', { timeout: 30_000 }, () => {
  it('refuses a client\'s 101st socket with 429, Retry-After and -31029, while another client address still connects', async () => {
    expect(WEBSOCKET_DEFAULTS).toMatchObject({ maxSessionsPerClient: 100, failedAuthLimit: { capacity: 60, refillPerSecond: 1 } })
    const url = await start()
    for (let i = 0; i < 100; i++) await opened(url, A)
    const refused = await open(url, A)
    expect(refused).toMatchObject({ status: 429 })
    const { retryAfter, body } = refused as Refused
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    expect(JSON.parse(body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -31029 } })
    // The share is A's, not the listener's.
    const other = await opened(url, B)
    await initialize(other)
    expect(await call(other, 1)).toMatchObject({ id: 1, result: {} })
  })

  it('lets a client at its cap replace its own least recently active idle socket (1001), never another client\'s, and never one with a request in flight', async () => {
    const clock = virtualClock()
    const url = await start({ maxSessionsPerClient: 2, sessionEvictionMinIdle: 60_000, sessionIdleTimeout: 0, scheduler: clock.scheduler })
    const first = await opened(url, A)
    const second = await opened(url, A)
    const others = await opened(url, B)
    expect(await statusOf(url, A)).toBe(429)
    clock.advance(30_000)
    // The newer of A's sockets is now the more recently active one.
    await initialize(second)
    expect(await call(second, 1)).toMatchObject({ result: {} })
    clock.advance(30_000)
    const firstClosed = closeOf(first)
    const replacing = await opened(url, A)
    expect(await firstClosed).toEqual({ code: 1001, reason: 'evicted: too many sockets of this client' })
    expect(others.readyState).toBe(WebSocket.OPEN)
    expect(second.readyState).toBe(WebSocket.OPEN)
    // Neither of A's sockets is idle long enough now: refused, with the wait.
    const refused = await open(url, A) as Refused
    expect(refused.status).toBe(429)
    expect(Number(refused.retryAfter)).toBe(30)
    expect(replacing.readyState).toBe(WebSocket.OPEN)
  })

  it('counts an authenticated client by its principal, whatever its address', async () => {
    const { auth } = testAuth()
    const url = await start({ auth, maxSessionsPerClient: 1 })
    const alice = { authorization: 'Bearer user-alice' }
    await opened(url, A, alice)
    expect(await statusOf(url, B, alice)).toBe(429)
    expect(await statusOf(url, A, { authorization: 'Bearer user-bob' })).toBe(101)
  })

  it('answers a flood of invalid upgrades 429 once the address spent its failed-authentication budget, without verifying them', async () => {
    const clock = virtualClock()
    const { auth, counter } = testAuth()
    const url = await start({ auth, scheduler: clock.scheduler })
    const bad = { authorization: 'Bearer forged' }
    for (let i = 0; i < 60; i++) expect(await statusOf(url, A, bad)).toBe(401)
    const limited = await open(url, A, bad) as Refused
    expect(limited.status).toBe(429)
    expect(limited.retryAfter).toBe('1')
    expect(JSON.parse(limited.body)).toMatchObject({ id: null, error: { code: -31029 } })
    const verified = counter.calls
    // Nothing of the address is verified meanwhile, valid credentials included.
    expect(await statusOf(url, A, bad)).toBe(429)
    expect(await statusOf(url, A, { authorization: 'Bearer user-alice' })).toBe(429)
    expect(counter.calls).toBe(verified)
    // Another address is verified and served as ever.
    expect(await statusOf(url, B, bad)).toBe(401)
    expect(await statusOf(url, B, { authorization: 'Bearer user-alice' })).toBe(101)
    // A second later one token is back: one more verification, then 429 again.
    clock.advance(1000)
    expect(await statusOf(url, A, bad)).toBe(401)
    expect(await statusOf(url, A, bad)).toBe(429)
  })

  it('charges the authenticate hook\'s refusals the same way, and never with failedAuthLimit: false', async () => {
    const url = await start({ authenticate: request => request.headers.authorization === 'Bearer good', failedAuthLimit: { capacity: 2, refillPerSecond: 0.001 } })
    expect(await statusOf(url, A)).toBe(401)
    expect(await statusOf(url, A)).toBe(401)
    expect(await statusOf(url, A)).toBe(429)
    expect(await statusOf(url, A, { authorization: 'Bearer good' })).toBe(429)
    expect(await statusOf(url, B, { authorization: 'Bearer good' })).toBe(101)
    const open = await start({ authenticate: () => false, failedAuthLimit: false })
    for (let i = 0; i < 70; i++) expect(await statusOf(open, A)).toBe(401)
  })

  it('answers requests over the client\'s rateLimit with -31029 and their ids, runs none of them, and the socket lives on', async () => {
    const clock = virtualClock()
    const url = await start({ rateLimit: { capacity: 3, refillPerSecond: 1 }, scheduler: clock.scheduler })
    const socket = await opened(url, A)
    // initialize is a request too: one token.
    await initialize(socket)
    const before = ran.count
    expect(await call(socket, 1)).toMatchObject({ id: 1, result: {} })
    expect(await call(socket, 2)).toMatchObject({ id: 2, result: {} })
    expect(await call(socket, 3)).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -31029, message: expect.stringContaining('1 s'), data: { retryAfterMs: 1000 } } })
    // A batch is refused request by request, each with its id; notifications in it are dropped.
    const batch = await exchange(socket, [4, 5], [callCount(4), { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }, callCount(5)])
    expect(batch).toMatchObject([{ id: 4, error: { code: -31029 } }, { id: 5, error: { code: -31029 } }])
    expect(ran.count - before).toBe(2)
    // Another client has its own bucket; a second later A has one token back.
    const other = await opened(url, B)
    await initialize(other)
    expect(await call(other, 1)).toMatchObject({ result: {} })
    clock.advance(1000)
    expect(await call(socket, 6)).toMatchObject({ id: 6, result: {} })
    expect(socket.readyState).toBe(WebSocket.OPEN)
  })

  it('spends one budget across listeners that share a Redis rateLimiterStore, taking tokens in the order requests came', async () => {
    const clock = virtualClock()
    const store = redisRateLimiterStore(redis, { prefix: `ws-${Date.now()}:` })
    const options = { rateLimit: { capacity: 4, refillPerSecond: 0.001 }, rateLimiterStore: store, scheduler: clock.scheduler }
    const one = await opened(await start(options), A)
    const two = await opened(await start(options), A)
    await initialize(one)
    await initialize(two)
    expect(await call(one, 1)).toMatchObject({ id: 1, result: {} })
    // One token left for A, on either instance: of three requests sent at once the first is served.
    const burst = new Promise<Answer[]>(resolve => {
      const got: Answer[] = []
      two.on('message', (data: Buffer) => { got.push(JSON.parse(data.toString())); if (got.length === 3) resolve(got) })
    })
    for (const id of [7, 8, 9]) two.send(JSON.stringify(callCount(id)))
    // A refusal is written at once, a result once the tool ran: sorted by id to compare.
    expect((await burst).sort((x, y) => x.id - y.id)).toMatchObject([{ id: 7, result: {} }, { id: 8, error: { code: -31029 } }, { id: 9, error: { code: -31029 } }])
  })

  it('counts clients behind a proxy by the address clientAddress returns, which each socket reports as its remoteAddress', async () => {
    const url = await start({ maxSessionsPerClient: 1, clientAddress: request => request.header('x-real-ip') ?? undefined })
    await opened(url, A, { 'x-real-ip': '203.0.113.1' })
    expect(await statusOf(url, A, { 'x-real-ip': '203.0.113.1' })).toBe(429)
    expect(await statusOf(url, A, { 'x-real-ip': '203.0.113.2' })).toBe(101)
    // IPv6 by its /64.
    expect(await statusOf(url, A, { 'x-real-ip': '2001:db8:1:2::1' })).toBe(101)
    expect(await statusOf(url, A, { 'x-real-ip': '2001:db8:1:2::ffff' })).toBe(429)
    const remote: (string | undefined)[] = []
    servers[0]!.sessions.forEach(session => remote.push((session.connection.transport as { remoteAddress?: string }).remoteAddress))
    expect(remote.sort()).toEqual(['2001:db8:1:2::1', '203.0.113.1', '203.0.113.2'])
    // Without the option the header means nothing.
    const direct = await start({ maxSessionsPerClient: 1 })
    await opened(direct, A, { 'x-real-ip': '203.0.113.1' })
    expect(await statusOf(direct, A, { 'x-real-ip': '203.0.113.2' })).toBe(429)
  })
})
