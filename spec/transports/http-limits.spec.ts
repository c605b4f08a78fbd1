import { afterEach, describe, expect, it } from 'vitest'
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import { VirtualTimeScheduler } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpOptions, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import type { Authenticator } from '../../lib/auth.ts'
import { MetaKey } from '../../lib/schema/modern.ts'

/**
 * The HTTP listener's budgets over real HTTP on 127.0.0.1: each request is sent from a chosen
 * loopback address (127.0.0.0/8), so one test has several clients.
 */

const MODERN = '2026-07-28'
const ACCEPT = 'application/json, text/event-stream'
/** Two clients of the listener: two loopback addresses. */
const A = '127.0.0.1'
const B = '127.0.0.2'

let mcp: McpServer | undefined
let http: StreamableHttpServer | undefined
/** Responses left open by a test (listen streams, legacy SSE streams), destroyed after it. */
let open: IncomingMessage[] = []
afterEach(async () => {
  for (const response of open) response.destroy()
  open = []
  await mcp?.close()
  await http?.close()
  mcp = undefined
  http = undefined
})

/** A server with a tool, on a listener of `options` bound to 127.0.0.1, port 0. */
async function start(options: StreamableHttpOptions = {}): Promise<string> {
  mcp = createServer({ name: 'limits', version: '1' })
  mcp.tool('echo', {}, () => ({ content: [{ type: 'text', text: 'ok' }] }))
  http = streamableHttp({ port: 0, ...options })
  await mcp.listen(http)
  return http.url!
}

interface Answer { status: number; headers: IncomingMessage['headers']; response: IncomingMessage }

/**
 * One HTTP request from `from` (a loopback address), on a connection of its own; resolves once the
 * status and headers are in (an SSE answer stays open: read it or destroy it).
 */
function send(url: string, method: string, from: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: target.hostname, port: target.port, path: target.pathname + target.search, method, headers, agent: false, localAddress: from }, response => {
      resolve({ status: response.statusCode ?? 0, headers: response.headers, response })
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** The whole body of an answer. */
function text(answer: Answer): Promise<string> {
  return new Promise((resolve, reject) => {
    let all = ''
    answer.response.setEncoding('utf8')
    answer.response.on('data', chunk => { all += chunk })
    answer.response.on('end', () => resolve(all))
    answer.response.on('error', reject)
  })
}

let nextId = 1

/** A modern-era (2026-07-28) POST from `from`, with the headers that era asks for. */
function modern(url: string, from: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const id = nextId++
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: { name: 'limits', version: '1' } } } }
  const name: Record<string, string> = method === 'tools/call' ? { 'mcp-name': String(params.name) } : {}
  return { id, answer: send(url, 'POST', from, { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': method, ...name, ...headers }, JSON.stringify(body)) }
}

/** Opens a modern-era `subscriptions/listen` stream from `from` and keeps it open (destroyed after the test). */
async function listen(url: string, from: string, headers: Record<string, string> = {}): Promise<{ id: number } & Answer> {
  const { id, answer } = modern(url, from, 'subscriptions/listen', { notifications: { toolsListChanged: true } }, headers)
  const got = await answer
  open.push(got.response)
  return { id, ...got }
}

/** A legacy-era initialize POST from `from`. */
function initialize(url: string, from: string, headers: Record<string, string> = {}): Promise<Answer> {
  const body = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'limits', version: '1' } } }
  return send(url, 'POST', from, { 'content-type': 'application/json', accept: ACCEPT, ...headers }, JSON.stringify(body))
}

/** Opens a legacy HTTP+SSE session (GET /sse) from `from` and keeps its stream open. */
async function openSse(url: string, from: string): Promise<Answer> {
  const got = await send(url.replace('/mcp', '/sse'), 'GET', from, { accept: 'text/event-stream' })
  open.push(got.response)
  return got
}

/** Moves a virtual clock `ms` on, running what it has due by then. */
function advance(clock: VirtualTimeScheduler, ms: number): void {
  // An action at the target time, so the clock reaches it even when nothing else is due.
  clock.schedule(() => {}, ms)
  clock.maxFrames = clock.now() + ms
  clock.flush()
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

describe('issue 20: unbounded per-client resources and per-process limits', () => {
  it('refuses a client\'s 101st concurrent listen stream with 429, Retry-After and its request id, while another client address is still served', async () => {
    const url = await start()
    // The listener's side of each request, in order: the first is the stream A gives back below.
    const served: ServerResponse[] = []
    http!.httpServer!.on('request', (_request, response: ServerResponse) => served.push(response))
    // The default budget: 100 sessionless requests held open per client.
    for (let i = 0; i < 100; i++) expect((await listen(url, A)).status).toBe(200)
    const refused = await listen(url, A)
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(JSON.parse(await text(refused))).toMatchObject({ jsonrpc: '2.0', id: refused.id, error: { code: -31029 } })
    // Another client is served: the budget is A's, not the listener's.
    expect((await listen(url, B)).status).toBe(200)
    const call = modern(url, B, 'tools/call', { name: 'echo' })
    expect((await call.answer).status).toBe(200)
    // A's other requests held open count too: a tool call of A is refused while A holds 100 streams.
    const blocked = modern(url, A, 'tools/call', { name: 'echo' })
    expect((await blocked.answer).status).toBe(429)
    // A stream A closes gives its place back.
    // Every 'close' listener of its response has run (the listener's, which frees the place) once this resolves.
    const given = once(served[0]!, 'close')
    open[0]!.destroy()
    await given
    expect((await listen(url, A)).status).toBe(200)
  }, 30_000)

  it('counts the listener\'s sessionless requests against maxExchanges over every client: 503 past it', async () => {
    const url = await start({ maxExchanges: 3, maxExchangesPerClient: 2 })
    expect((await listen(url, A)).status).toBe(200)
    expect((await listen(url, A)).status).toBe(200)
    expect((await listen(url, A)).status).toBe(429)
    expect((await listen(url, B)).status).toBe(200)
    const full = await listen(url, B)
    expect(full.status).toBe(503)
    expect(full.headers['retry-after']).toBe('1')
    expect(JSON.parse(await text(full))).toMatchObject({ id: full.id, error: { code: -32000 } })
  })

  it('budgets an authenticated client by its principal: another principal on the same address is still served', async () => {
    const { auth } = testAuth()
    const url = await start({ auth, maxExchangesPerClient: 2 })
    const alice = { authorization: 'Bearer user-alice' }
    expect((await listen(url, A, alice)).status).toBe(200)
    expect((await listen(url, A, alice)).status).toBe(200)
    expect((await listen(url, A, alice)).status).toBe(429)
    // Alice from another address is still Alice.
    expect((await listen(url, B, alice)).status).toBe(429)
    expect((await listen(url, A, { authorization: 'Bearer user-bob' })).status).toBe(200)
  })

  it('budgets stateless POSTs the same way', async () => {
    const url = await start({ stateless: true, maxExchangesPerClient: 1 })
    // A tool that answers when released: its POST stays open meanwhile.
    let begin!: () => void
    const begun = new Promise<void>(resolve => { begin = resolve })
    let release!: () => void
    const released = new Promise<void>(resolve => { release = resolve })
    mcp!.tool('hold', {}, async () => { begin(); await released; return { content: [{ type: 'text', text: 'done' }] } })
    const call = (from: string, id: number) => send(url, 'POST', from, { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-11-25' },
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hold', arguments: {} } }))
    const first = call(A, 7)
    await begun
    const second = await call(A, 8)
    expect(second.status).toBe(429)
    expect(JSON.parse(await text(second))).toMatchObject({ id: 8, error: { code: -31029 } })
    release()
    expect((await first).status).toBe(200)
    // The answered POST gave its place back.
    expect((await call(A, 9)).status).toBe(200)
  })

  it('answers a flood of invalid tokens 429 once the address spent its failed-authentication budget, without verifying them', async () => {
    // A clock that does not move: no token comes back during the flood.
    const clock = new VirtualTimeScheduler(undefined, 0)
    const { auth, counter } = testAuth()
    const url = await start({ auth, scheduler: clock })
    const bad = { authorization: 'Bearer forged' }
    // The default budget: 60 failures per address at once.
    for (let i = 0; i < 60; i++) expect((await modern(url, A, 'tools/list', {}, bad).answer).status).toBe(401)
    const limited = await modern(url, A, 'tools/list', {}, bad).answer
    expect(limited.status).toBe(429)
    expect(limited.headers['retry-after']).toBe('1')
    expect(JSON.parse(await text(limited))).toMatchObject({ id: null, error: { code: -31029 } })
    const verified = counter.calls
    // While the address is over budget nothing of it is verified, valid credentials included.
    expect((await modern(url, A, 'tools/list', {}, bad).answer).status).toBe(429)
    expect((await modern(url, A, 'tools/list', {}, { authorization: 'Bearer user-alice' }).answer).status).toBe(429)
    expect(counter.calls).toBe(verified)
    // Another address is verified and served as ever.
    expect((await modern(url, B, 'tools/list', {}, bad).answer).status).toBe(401)
    expect((await modern(url, B, 'tools/list', {}, { authorization: 'Bearer user-alice' }).answer).status).toBe(200)
    // A second later one token is back: one more verification, then 429 again.
    advance(clock, 1000)
    expect((await modern(url, A, 'tools/list', {}, bad).answer).status).toBe(401)
    expect((await modern(url, A, 'tools/list', {}, bad).answer).status).toBe(429)
  })

  it('does not charge a refusal that is the verifier\'s (5xx), only the client\'s (4xx)', async () => {
    const auth: Authenticator = { authenticate: async () => ({ type: 'refuse', answer: { status: 503, headers: { 'retry-after': '1' }, body: '' } }) }
    const url = await start({ auth, failedAuthLimit: { capacity: 1, refillPerSecond: 0.001 } })
    for (let i = 0; i < 5; i++) expect((await modern(url, A, 'tools/list').answer).status).toBe(503)
  })

  it('charges failed authentications of the legacy SSE paths too, and never with failedAuthLimit: false', async () => {
    const { auth } = testAuth()
    const url = await start({ auth, failedAuthLimit: { capacity: 2, refillPerSecond: 0.001 } })
    const sse = url.replace('/mcp', '/sse')
    expect((await send(sse, 'GET', A, { accept: 'text/event-stream' })).status).toBe(401)
    expect((await send(sse, 'GET', A, { accept: 'text/event-stream' })).status).toBe(401)
    expect((await send(sse, 'GET', A, { accept: 'text/event-stream' })).status).toBe(429)
    await mcp!.close()
    await http!.close()
    const unlimited = await start({ auth, failedAuthLimit: false })
    for (let i = 0; i < 70; i++) expect((await modern(unlimited, A, 'tools/list').answer).status).toBe(401)
  })

  it('answers a POST over its rateLimit with 429, Retry-After and an error per request id, per client', async () => {
    const clock = new VirtualTimeScheduler(undefined, 0)
    const url = await start({ rateLimit: { capacity: 2, refillPerSecond: 1 }, scheduler: clock })
    expect((await modern(url, A, 'tools/list').answer).status).toBe(200)
    expect((await modern(url, A, 'tools/list').answer).status).toBe(200)
    const limited = modern(url, A, 'tools/list')
    const answer = await limited.answer
    expect(answer.status).toBe(429)
    expect(answer.headers['retry-after']).toBe('1')
    expect(JSON.parse(await text(answer))).toMatchObject({ id: limited.id, error: { code: -31029 } })
    expect((await modern(url, B, 'tools/list').answer).status).toBe(200)
  })
})

describe('issue 20: legacy /sse connections use up the shared session cap', () => {
  it('stops one client at maxSessionsPerClient legacy SSE sessions, so another client still gets a Streamable HTTP session', async () => {
    const url = await start({ maxSessions: 150 })
    // The default: 100 sessions per client, legacy SSE and Streamable HTTP together.
    for (let i = 0; i < 100; i++) expect((await openSse(url, A)).status).toBe(200)
    const refused = await openSse(url, A)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    for (let i = 0; i < 49; i++) expect((await openSse(url, A)).status).toBe(429)
    // The same client cannot take a Streamable HTTP session either: one budget for both kinds.
    expect((await initialize(url, A)).status).toBe(429)
    const other = await initialize(url, B)
    expect(other.status).toBe(200)
    expect(other.headers['mcp-session-id']).toBeDefined()
    expect(http!.sessionCount).toBe(101)
  }, 30_000)

  it('lets a client at its own cap replace its own least recently active idle session, never another client\'s', async () => {
    const clock = new VirtualTimeScheduler(undefined, 0)
    const url = await start({ maxSessionsPerClient: 2, sessionEvictionMinIdle: 60_000, sessionIdleTimeout: 3_600_000, keepAliveMs: 0, scheduler: clock })
    const first = await initialize(url, A)
    await text(first)
    await text(await initialize(url, A))
    await text(await initialize(url, B))
    expect((await initialize(url, A)).status).toBe(429)
    advance(clock, 60_000)
    const replacing = await initialize(url, A)
    expect(replacing.status).toBe(200)
    await text(replacing)
    expect(http!.sessionCount).toBe(3)
    // A's oldest session is the one that gave way.
    const old = await send(url, 'POST', A, { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': String(first.headers['mcp-session-id']) }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))
    expect(old.status).toBe(404)
  })
})

describe('issue 20: a text/plain POST is accepted (202)', () => {
  it('refuses a legacy /messages POST that is not application/json with 415, and the server never sees it', async () => {
    const url = await start()
    const stream = await openSse(url, A)
    let seen = ''
    // Who waits for what the stream has carried to pass a check (see `seenWhen`).
    const waiting = new Set<{ check: () => boolean; done: () => void }>()
    const seenWhen = (check: () => boolean) => check() ? Promise.resolve() : new Promise<void>(done => waiting.add({ check, done }))
    stream.response.setEncoding('utf8')
    stream.response.on('data', chunk => {
      seen += chunk
      for (const waiter of waiting) if (waiter.check()) { waiting.delete(waiter); waiter.done() }
    })
    await seenWhen(() => /event: endpoint\ndata: .+\n/.test(seen))
    const target = new URL(/event: endpoint\ndata: (.+)\n/.exec(seen)![1]!, url).toString()
    const init = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'page', version: '1' } } })
    // What a page on any origin can send without a CORS preflight, and a body with no type at all.
    const types = ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain; x=application/json', undefined]
    for (const [i, type] of types.entries()) {
      const refused = await send(target, 'POST', A, type === undefined ? {} : { 'content-type': type }, init(100 + i))
      expect(refused.status, type).toBe(415)
      expect(JSON.parse(await text(refused))).toMatchObject({ error: { code: -32000 } })
    }
    // JSON is served (parameters allowed, case ignored); its answer is the first the stream carries.
    expect((await send(target, 'POST', A, { 'content-type': 'Application/JSON; charset=utf-8' }, init(0))).status).toBe(202)
    await seenWhen(() => seen.includes('event: message'))
    const first = /event: message\ndata: (.+)\n/.exec(seen)![1]!
    expect(JSON.parse(first)).toMatchObject({ id: 0, result: { protocolVersion: '2024-11-05' } })
  })

  it('refuses a Streamable HTTP POST whose media type only mentions application/json in a parameter', async () => {
    const url = await start()
    const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } } })
    const refused = await send(url, 'POST', A, { 'content-type': 'text/plain; x=application/json', accept: ACCEPT }, init)
    expect(refused.status).toBe(415)
    expect(http!.sessionCount).toBe(0)
  })
})

describe('streamableHttp clientAddress', () => {
  it('holds clients it cannot tell apart (a web Request, no clientAddress) to the totals only, and budgets them once told', async () => {
    const { auth } = testAuth()
    const webInit = (listener: StreamableHttpServer, headers: Record<string, string> = {}) => listener.handle(new Request('http://127.0.0.1/mcp', {
      method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'web', version: '1' } } }),
    }))
    const unknown = streamableHttp({ maxSessionsPerClient: 1, auth, failedAuthLimit: { capacity: 1, refillPerSecond: 0.001 } })
    try {
      // One bucket for every unknown client would let one of them lock all the others out.
      for (let i = 0; i < 3; i++) expect((await webInit(unknown)).status).toBe(401)
      expect((await webInit(unknown, { authorization: 'Bearer user-a' })).status).toBe(200)
      expect((await webInit(unknown, { authorization: 'Bearer user-a' })).status).toBe(429)
    } finally {
      await unknown.close()
    }
    const told = streamableHttp({ maxSessionsPerClient: 1, clientAddress: request => request.header('x-client') ?? undefined })
    try {
      expect((await webInit(told, { 'x-client': '198.51.100.7' })).status).toBe(200)
      expect((await webInit(told, { 'x-client': '198.51.100.7' })).status).toBe(429)
      expect((await webInit(told)).status).toBe(200)
      expect((await webInit(told)).status).toBe(200)
    } finally {
      await told.close()
    }
  })

  it('counts clients behind a proxy by the address the proxy wrote, and ignores the header without the option', async () => {
    const behindProxy = await start({ maxExchangesPerClient: 1, clientAddress: request => request.header('x-real-ip') ?? undefined })
    expect((await listen(behindProxy, A, { 'x-real-ip': '203.0.113.1' })).status).toBe(200)
    expect((await listen(behindProxy, A, { 'x-real-ip': '203.0.113.1' })).status).toBe(429)
    expect((await listen(behindProxy, A, { 'x-real-ip': '203.0.113.2' })).status).toBe(200)
    // An IPv6 client is counted by its /64: another address of the same host is the same client.
    expect((await listen(behindProxy, A, { 'x-real-ip': '2001:db8:1:2::1' })).status).toBe(200)
    expect((await listen(behindProxy, A, { 'x-real-ip': '2001:db8:1:2::ffff' })).status).toBe(429)
    expect((await listen(behindProxy, A, { 'x-real-ip': '2001:db8:1:3::1' })).status).toBe(200)
    for (const response of open) response.destroy()
    await mcp!.close()
    await http!.close()
    const direct = await start({ maxExchangesPerClient: 1 })
    expect((await listen(direct, A, { 'x-real-ip': '203.0.113.1' })).status).toBe(200)
    expect((await listen(direct, A, { 'x-real-ip': '203.0.113.2' })).status).toBe(429)
  })
})
