import { afterEach, describe, expect, it, vi } from 'vitest'
import { events, messages } from '../helpers/sse-events.ts'
import { createServer as createNodeServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { connect as netConnect } from 'node:net'
import { once } from 'node:events'
import { randomUUID } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ACCEPT, init, initialized, post, virtualClock } from '../helpers/hardening-http.ts'
import { sessionsEnded } from '../helpers/sessions-ended.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpOptions, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { createMemoryEventStore } from '../../transports/event-store.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'

const MiB = 1024 * 1024
const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: { progressToken: `p${id}` } } })

/** A promise and its resolve (Promise.withResolvers is Node 22). */
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>(done => { resolve = done })
  return { promise, resolve }
}

/** Gates the `wait` tool: `begun(key)` resolves once its handler runs, `release(key)` lets it answer. */
function gates() {
  const table = new Map<string, { begun: ReturnType<typeof deferred>; released: ReturnType<typeof deferred> }>()
  const get = (key: string) => {
    let entry = table.get(key)
    if (entry === undefined) { entry = { begun: deferred(), released: deferred() }; table.set(key, entry) }
    return entry
  }
  return {
    begun: (key: string) => get(key).begun.promise,
    release: (key: string) => get(key).released.resolve(),
    wait: (key: string) => { get(key).begun.resolve(); return get(key).released.promise },
    releaseAll: () => { for (const entry of table.values()) entry.released.resolve() },
  }
}

let mcp: McpServer | undefined
let http: StreamableHttpServer | undefined
let front: Server | undefined
let gate = gates()
afterEach(async () => {
  gate.releaseAll()
  await mcp?.close()
  if (front !== undefined) await closeServer(front)
  mcp = undefined; http = undefined; front = undefined
  gate = gates()
})

/**
 * An MCP server behind the listener's nodeHandler, mounted on a node:http server of the spec's own
 * so the spec sees each ServerResponse (its buffered bytes, whether it was destroyed).
 */
async function start(options: StreamableHttpOptions = {}) {
  mcp = createServer({ name: 'hardening', version: '1' })
  mcp.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
  mcp.tool('wait', { inputSchema: { type: 'object', properties: { key: { type: 'string' }, size: { type: 'integer' } } } }, async ({ key, size = 4 }, ctx) => {
    ctx.progress(1, 2)
    await gate.wait(String(key))
    return { content: [{ type: 'text', text: 'x'.repeat(Number(size)) }] }
  })
  const listener = streamableHttp(options)
  http = listener
  await mcp.listen(listener)
  const responses: ServerResponse[] = []
  front = createNodeServer((req, res) => { responses.push(res); listener.nodeHandler(req, res) })
  const port = await listenOn(front, 0, '127.0.0.1')
  return { url: `http://127.0.0.1:${port}/mcp`, port, responses }
}

function get(url: string, headers: Record<string, string>, signal: AbortSignal = AbortSignal.timeout(10_000)) {
  return fetch(url, { signal, headers: { accept: 'text/event-stream', ...headers } })
}


describe('streamableHttp under a hostile or slow peer', () => {
  it('keeps answers to abandoned POSTs within the session budget, and frees them on DELETE', async () => {
    const inner = createMemoryEventStore({ maxBytesPerSession: 4 * MiB })
    // Counts the answers stored, to know when each abandoned request has been answered.
    let answers = 0
    // Who waits for the answer count to reach a number (see `answered`).
    const waiting = new Map<number, () => void>()
    const answered = (count: number) => answers >= count ? Promise.resolve() : new Promise<void>(resolve => waiting.set(count, resolve))
    const store: typeof inner = {
      ...inner,
      storeEvent: (streamId, message, context) => {
        const stored = inner.storeEvent(streamId, message, context)
        if (!Array.isArray(message) && 'result' in message) waiting.get(++answers)?.()
        return stored
      },
    }
    const { url, responses } = await start({ eventStore: store })
    const session = await initialized(url)
    for (let i = 0; i < 12; i++) {
      const abandon = new AbortController()
      const response = await post(url, call(100 + i, 'wait', { key: `k${i}`, size: MiB }), { 'mcp-session-id': session }, abandon.signal)
      expect(response.status).toBe(200)
      await gate.begun(`k${i}`)
      const serverSide = responses.at(-1)!
      abandon.abort()
      if (!serverSide.closed) await once(serverSide, 'close')
      gate.release(`k${i}`)
      await answered(i + 1)
    }
    // Every answer went to a stream nobody reads: kept for a resume, within the budget.
    const held = store.sessionBytes(session)
    console.log(`12 abandoned 1 MiB answers: ${(held / MiB).toFixed(2)} MiB kept for the session (budget 4 MiB), ${store.stats().streams} streams`)
    expect(held).toBeGreaterThan(MiB)
    expect(held).toBeLessThanOrEqual(4 * MiB)
    expect((await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } })).status).toBe(200)
    expect(store.stats()).toEqual({ streams: 0, events: 0, bytes: 0, sessions: 0 })
  }, 20_000)

  it('cuts a GET stream whose client does not read once past the high-water mark, and the client resumes', async () => {
    const { url, port, responses } = await start({ streamHighWaterMark: 256 * 1024 })
    const session = await initialized(url)
    const request = httpRequest({ host: '127.0.0.1', port, path: '/mcp', headers: { accept: 'text/event-stream', 'mcp-session-id': session } })
    request.end()
    const [response] = await once(request, 'response') as [IncomingMessage]
    // Read the priming event, then stop reading for good.
    const [first] = await once(response, 'data') as [Buffer]
    response.pause()
    const primingId = /id: (\S+)/.exec(first.toString())![1]!
    const serverSide = responses.at(-1)!
    const chunk = 'x'.repeat(MiB)
    let sent = 0
    let maxBuffered = 0
    for (; sent < 64 && !serverSide.destroyed; sent++) {
      mcp!.log('warning', chunk)
      maxBuffered = Math.max(maxBuffered, serverSide.writableLength)
      await new Promise(resolve => setImmediate(resolve))
    }
    console.log(`unread GET stream: cut after ${sent} x 1 MiB notifications, at most ${(maxBuffered / MiB).toFixed(2)} MiB buffered (mark 0.25 MiB)`)
    expect(serverSide.destroyed).toBe(true)
    expect(maxBuffered).toBeLessThanOrEqual(256 * 1024 + MiB + 4096)
    response.destroy()
    // The stream is kept: a resume from the priming event replays what the store holds.
    const resumed = await get(url, { 'mcp-session-id': session, 'last-event-id': primingId })
    expect(resumed.status).toBe(200)
    await resumed.body!.cancel()
  })

  it('ends a legacy SSE session whose client does not read once past the high-water mark', async () => {
    const { port, responses } = await start({ streamHighWaterMark: 256 * 1024 })
    const request = httpRequest({ host: '127.0.0.1', port, path: '/sse', headers: { accept: 'text/event-stream' } })
    request.end()
    const [response] = await once(request, 'response') as [IncomingMessage]
    const [first] = await once(response, 'data') as [Buffer]
    response.pause()
    const endpoint = /data: (\S+)/.exec(first.toString())![1]!
    const serverSide = responses.at(-1)!
    const target = `http://127.0.0.1:${port}${endpoint}`
    const legacyPost = (body: unknown) => fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect((await legacyPost(init('2024-11-05'))).status).toBe(202)
    expect((await legacyPost({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202)
    expect(http!.sessionCount).toBe(1)
    const chunk = 'x'.repeat(MiB)
    let maxBuffered = 0
    for (let sent = 0; sent < 64 && !serverSide.destroyed; sent++) {
      mcp!.log('warning', chunk)
      maxBuffered = Math.max(maxBuffered, serverSide.writableLength)
      await new Promise(resolve => setImmediate(resolve))
    }
    expect(serverSide.destroyed).toBe(true)
    expect(maxBuffered).toBeLessThanOrEqual(256 * 1024 + MiB + 4096)
    await sessionsEnded(mcp!)
    expect(http!.sessionCount).toBe(0)
    response.destroy()
  })

  it('closes an idle session past its idle timeout even while it holds a GET stream', async () => {
    const { clock, advance } = virtualClock()
    const { url } = await start({ scheduler: clock, sessionIdleTimeout: 60_000, keepAliveMs: 0 })
    const session = await initialized(url)
    const stream = await get(url, { 'mcp-session-id': session })
    expect(stream.status).toBe(200)
    const ended = events(stream)
    advance(59_000)
    expect(http!.sessionCount).toBe(1)
    advance(30_000)
    expect(http!.sessionCount).toBe(0)
    await ended
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': session })).status).toBe(404)
  })

  it('keeps an idle session past its idle timeout while a request of it is in flight', async () => {
    const { clock, advance } = virtualClock()
    const { url } = await start({ scheduler: clock, sessionIdleTimeout: 60_000, keepAliveMs: 0 })
    const session = await initialized(url)
    const working = await post(url, call(1, 'wait', { key: 'long' }), { 'mcp-session-id': session })
    await gate.begun('long')
    advance(5 * 60_000)
    expect(http!.sessionCount).toBe(1)
    gate.release('long')
    expect(messages(await events(working)).at(-1)).toMatchObject({ id: 1, result: {} })
    advance(2 * 60_000)
    expect(http!.sessionCount).toBe(0)
  })

  it('at maxSessions evicts the least recently active idle session with no request in flight, else answers 503 with Retry-After', async () => {
    const { clock, advance } = virtualClock()
    const { url } = await start({ scheduler: clock, maxSessions: 2, sessionEvictionMinIdle: 60_000, sessionIdleTimeout: 3_600_000, keepAliveMs: 0 })
    const busy = await initialized(url)
    const working = post(url, call(1, 'wait', { key: 'busy' }), { 'mcp-session-id': busy })
    await gate.begun('busy')
    const idle = await initialized(url)
    const refused = await post(url, init())
    expect(refused.status).toBe(503)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    advance(61_000)
    // `busy` is the least recently active, but its request is in flight: `idle` goes instead.
    const admitted = await post(url, init())
    expect(admitted.status).toBe(200)
    await admitted.text()
    expect((await post(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': idle })).status).toBe(404)
    gate.release('busy')
    expect(messages(await events(await working)).at(-1)).toMatchObject({ id: 1, result: {} })
  })

  it('counts legacy SSE and Streamable HTTP sessions against one maxSessions', async () => {
    const { url } = await start({ maxSessions: 1 })
    const sse = await fetch(url.replace('/mcp', '/sse'), { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(10_000) })
    expect(sse.status).toBe(200)
    const refused = await post(url, init())
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).not.toBeNull()
    await sse.body!.cancel()
  })

  it('answers 408 and closes the connection when a body trickles past bodyTimeoutMs', async () => {
    const { clock, advance } = virtualClock()
    const { port } = await start({ scheduler: clock, bodyTimeoutMs: 5_000, keepAliveMs: 0 })
    const socket = netConnect(port, '127.0.0.1')
    await once(socket, 'connect')
    let received = ''
    socket.on('data', chunk => { received += chunk })
    const closed = once(socket, 'close')
    socket.write(`POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\ncontent-length: 1000\r\n\r\n{"jsonrpc":`)
    // The listener starts its body clock once it reads the request: then 5 s pass.
    await clock.nextWait(5_000)
    const answered = once(socket, 'data')
    advance(5_000)
    await answered
    expect(received).toMatch(/^HTTP\/1\.1 408/)
    await closed
  })

  it('answers 413 as soon as a chunked body passes maxBodyBytes, without reading the rest', async () => {
    const { port } = await start({ maxBodyBytes: 64 * 1024 })
    const request = httpRequest({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, 'transfer-encoding': 'chunked' } })
    let status: number | undefined
    let isDone = false
    request.on('response', response => { status = response.statusCode; response.resume() })
    request.on('error', () => { isDone = true })
    request.on('close', () => { isDone = true })
    const chunk = Buffer.alloc(MiB, 0x20)
    let written = 0
    const total = 128 * MiB
    while (written < total && !isDone && status === undefined) {
      const isFlowing = request.write(chunk)
      written += chunk.length
      if (!isFlowing) await Promise.race([once(request, 'drain'), once(request, 'close'), new Promise(resolve => request.once('response', resolve))])
    }
    request.destroy()
    console.log(`chunked body to a 64 KiB limit: the client wrote ${(written / MiB).toFixed(0)} MiB of ${total / MiB} before the server answered ${status ?? 'by closing'}`)
    expect(written).toBeLessThan(32 * MiB)
    if (status !== undefined) expect(status).toBe(413)
  })

  it('binds event ids to their session: another session cannot replay them, whatever the session ids share', async () => {
    let count = 0
    const { url, responses } = await start({ sessionIdGenerator: () => `session-${++count}-${randomUUID()}` })
    const victim = await initialized(url)
    const thief = await initialized(url)
    expect(victim.slice(0, 8)).toBe(thief.slice(0, 8))
    const response = await post(url, call(1, 'wait', { key: 'secret' }), { 'mcp-session-id': victim })
    const serverSide = responses.at(-1)!
    const seen = await events(response, event => event.data.includes('notifications/progress'))
    const lastId = seen.at(-1)!.id!
    // The answer comes once the server knows the client left, so it is kept for a resume.
    if (!serverSide.closed) await once(serverSide, 'close')
    gate.release('secret')
    const stolen = await get(url, { 'mcp-session-id': thief, 'last-event-id': lastId })
    expect(stolen.status).toBe(404)
    expect(await stolen.text()).not.toContain('xxxx')
    const own = await get(url, { 'mcp-session-id': victim, 'last-event-id': lastId })
    expect(own.status).toBe(200)
    expect(messages(await events(own)).at(-1)).toMatchObject({ id: 1, result: { content: [{ text: 'xxxx' }] } })
  })

  it('lets no session evict another session\'s stored stream by opening many streams', async () => {
    const { url, responses } = await start({ eventStore: createMemoryEventStore({ maxStreams: 50 }) })
    const victim = await initialized(url)
    const attacker = await initialized(url)
    const response = await post(url, call(1, 'wait', { key: 'victim' }), { 'mcp-session-id': victim })
    const serverSide = responses.at(-1)!
    const lastId = (await events(response, event => event.data.includes('notifications/progress'))).at(-1)!.id!
    if (!serverSide.closed) await once(serverSide, 'close')
    for (let i = 0; i < 120; i++) {
      const stream = await get(url, { 'mcp-session-id': attacker })
      if (stream.status === 200) await events(stream, event => event.data === '')
      else await stream.text()
    }
    gate.release('victim')
    const resumed = await get(url, { 'mcp-session-id': victim, 'last-event-id': lastId })
    expect(resumed.status).toBe(200)
    expect(messages(await events(resumed)).at(-1)).toMatchObject({ id: 1, result: {} })
  })
})

describe('streamableHttp: memory of an idle session', () => {
  it('keeps none of the HTTP objects of the requests that made it', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { url, responses } = await start()
    for (let i = 0; i < 10; i++) await initialized(url)
    expect(http!.sessionCount).toBe(10)
    const alive = responses.map(response => new WeakRef(response))
    responses.length = 0
    // Keep-alive sockets may hold their last exchange a moment (until the loop has run their
    // callbacks); a session must hold none. So collect until they are let go, not after a fixed time.
    let kept = alive.length
    await vi.waitFor(() => {
      gc(); gc()
      kept = alive.filter(ref => ref.deref() !== undefined).length
      expect(kept).toBeLessThan(5)
    }, { timeout: 10_000, interval: 20 })
    console.log(`ServerResponses still reachable after 10 sessions (20 requests): ${kept}`)
  })
})

describe('streamableHttp: every POST that carries requests ends', () => {
  it('answers a batch in a 2025-06-18 session on that POST with 400 and -32600, and the session lives on', async () => {
    const { url } = await start()
    const session = await initialized(url, '2025-06-18')
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }
    const batch = await post(url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], headers)
    expect(batch.status).toBe(400)
    expect(await batch.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
    const notifications = await post(url, [{ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }], headers)
    expect(notifications.status).toBe(400)
    expect(await notifications.json()).toMatchObject({ id: null, error: { code: -32600 } })
    const ping = await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers)
    expect(messages(await events(ping))).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }])
  })

  it('answers a batch in a 2025-11-25 session with jsonResponse on that POST', async () => {
    const { url } = await start({ jsonResponse: true })
    const first = await post(url, init())
    const session = first.headers.get('mcp-session-id')!
    await first.text()
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session })
    const batch = await post(url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], { 'mcp-session-id': session })
    expect(batch.status).toBe(400)
    expect(await batch.json()).toMatchObject({ id: null, error: { code: -32600 } })
  })

  it.each([['1e400'], ['-1e400']])('refuses the id %s (not a finite number) with -32600 and id null', async id => {
    const { url } = await start()
    const session = await initialized(url)
    const response = await post(url, `{"jsonrpc":"2.0","id":${id},"method":"ping"}`, { 'mcp-session-id': session })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
  })

  it('refuses a request id already in flight on the new POST without disturbing the first', async () => {
    const { url } = await start()
    const session = await initialized(url)
    const first = await post(url, call(7, 'wait', { key: 'first' }), { 'mcp-session-id': session })
    await gate.begun('first')
    const reused = await post(url, { jsonrpc: '2.0', id: 7, method: 'ping' }, { 'mcp-session-id': session })
    expect(reused.status).toBe(400)
    expect(await reused.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } })
    gate.release('first')
    const got = messages(await events(first))
    expect(got.map(message => message.method ?? 'result')).toEqual(['notifications/progress', 'result'])
    expect(got.at(-1)).toMatchObject({ id: 7, result: { content: [{ text: 'xxxx' }] } })
  })

  it('ends the JSON-response POST of a request the client cancelled', async () => {
    const { url } = await start({ jsonResponse: true })
    const first = await post(url, init())
    const session = first.headers.get('mcp-session-id')!
    await first.text()
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session })
    const waiting = post(url, call(9, 'wait', { key: 'cancelled' }), { 'mcp-session-id': session })
    await gate.begun('cancelled')
    const cancel = await post(url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 'no longer needed' } }, { 'mcp-session-id': session })
    expect(cancel.status).toBe(202)
    const answer = await waiting
    expect(answer.status).toBe(202)
    expect(await answer.text()).toBe('')
  })

  it('ends the SSE stream of a request the client cancelled', async () => {
    const { url } = await start()
    const session = await initialized(url)
    const response = await post(url, call(10, 'wait', { key: 'cancelled' }), { 'mcp-session-id': session })
    await gate.begun('cancelled')
    const all = events(response)
    await post(url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 10 } }, { 'mcp-session-id': session })
    const got = messages(await all)
    expect(got.map(message => message.method ?? 'result')).toEqual(['notifications/progress'])
  })
})

describe('streamableHttp: odd bodies', () => {
  it('answers a 2025-03-26 batch of requests as one array on its stream', async () => {
    const { url } = await start()
    const session = await initialized(url, '2025-03-26')
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' }
    const response = await post(url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 'two', method: 'nope' }, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }], headers)
    expect(response.status).toBe(200)
    const [answer] = messages(await events(response))
    expect(answer).toEqual(expect.arrayContaining([{ jsonrpc: '2.0', id: 1, result: {} }, expect.objectContaining({ id: 'two', error: expect.objectContaining({ code: -32601 }) })]))
  })

  it.each([
    ['null', 'null'],
    ['a number', '42'],
    ['an empty batch', '[]'],
    ['an object id', '{"jsonrpc":"2.0","id":{},"method":"ping"}'],
    ['a null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}'],
    ['no jsonrpc', '{"id":3,"method":"ping"}'],
    ['a response to nothing', '{"jsonrpc":"2.0","id":99,"result":{}}'],
    ['a cancel of nothing', '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}'],
  ])('ends a POST of %s with an answer and keeps the session', async (_name, body) => {
    const { url } = await start()
    const session = await initialized(url)
    const response = await post(url, body, { 'mcp-session-id': session })
    expect([200, 202, 400]).toContain(response.status)
    await response.text()
    const ping = await post(url, { jsonrpc: '2.0', id: 1000, method: 'ping' }, { 'mcp-session-id': session })
    expect(messages(await events(ping))).toEqual([{ jsonrpc: '2.0', id: 1000, result: {} }])
  })

  it('answers a garbage Last-Event-ID with 404', async () => {
    const { url } = await start()
    const session = await initialized(url)
    for (const lastEventId of ['', '_', '__proto___1', 'x'.repeat(4000), 'abc_-1', 'abc_1e400']) {
      const response = await get(url, { 'mcp-session-id': session, 'last-event-id': lastEventId })
      expect(response.status).toBe(404)
      await response.text()
    }
  })
})
