import { afterEach, describe, expect, it } from 'vitest'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { VirtualTimeScheduler } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { testIssuer, type TestIssuer } from '../auth/fixtures.ts'

/**
 * Every HTTP response stream ends when the token that opened it expires, on the listener's clock
 * (virtual here, started at the wall clock's now, on which the tokens' `exp` is), as a WebSocket
 * closes with 1008: a Streamable HTTP GET stream, a POST's SSE answer, a legacy `/sse` stream and
 * a modern-era `subscriptions/listen` stream. The client comes back with a fresh token.
 */

const ISSUER = 'https://issuer.test'
const RESOURCE = 'http://127.0.0.1/mcp'
const ACCEPT = 'application/json, text/event-stream'
const MODERN = '2026-07-28'

const cleanup: (() => Promise<void> | void)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

interface Stream {
  status: number
  headers: IncomingMessage['headers']
  /** Everything received so far. */
  text(): string
  /** Resolves when what was received passes `check` (at once if it does); rejects if the stream ends first. */
  until(check: (text: string) => boolean, what: string): Promise<void>
  /** Resolves when the server ends the response. */
  ended: Promise<void>
  isEnded(): boolean
}

/** One request on a connection of its own; resolves once the status is in, then collects the body. */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Stream> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: target.hostname, port: target.port, path: target.pathname + target.search, method, headers, agent: false }, response => {
      let all = ''
      let isEnded = false
      // What the test waits for: each is looked at again when data arrives, failed when the stream ends.
      const waiters = new Set<{ check: (text: string) => boolean; done: () => void; fail: () => void }>()
      response.setEncoding('utf8')
      response.on('data', chunk => {
        all += chunk
        for (const waiter of waiters) if (waiter.check(all)) { waiters.delete(waiter); waiter.done() }
      })
      const ended = new Promise<void>(done => response.once('end', () => {
        isEnded = true
        for (const waiter of waiters) waiter.fail()
        waiters.clear()
        done()
      }))
      const until = (check: (text: string) => boolean, what: string) => new Promise<void>((done, fail) => {
        if (check(all)) return done()
        if (isEnded) return fail(new Error(`the stream ended before ${what}`))
        waiters.add({ check, done, fail: () => fail(new Error(`the stream ended before ${what}`)) })
      })
      cleanup.push(() => { response.destroy() })
      resolve({ status: response.statusCode ?? 0, headers: response.headers, text: () => all, until, ended, isEnded: () => isEnded })
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** Resolves when `stream` ends, or rejects after a bounded (generous) real-time wait. */
function endOf(stream: Stream, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((_, reject) => { timer = setTimeout(() => reject(new Error(`the stream did not end: ${what}`)), 10_000) })
  return Promise.race([stream.ended, late]).finally(() => clearTimeout(timer))
}

/** The JSON-RPC messages of an SSE text. */
const messages = (text: string): unknown[] => [...text.matchAll(/^data: (.+)$/gm)].map(match => match[1]!.trim()).filter(data => data !== '').map(data => JSON.parse(data))

/** The `exp` of a token, in ms. */
const expiryOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp * 1000

interface Setup {
  url: string
  mcp: McpServer
  issuer: TestIssuer
  clock: VirtualTimeScheduler
  /** Runs the clock to `at` (ms since the epoch), with whatever is due by then. */
  flush(at: number): void
  /** Releases the held tool calls. */
  release(): void
}

/** A server behind bearerAuth on a real HTTP listener whose clock is virtual; its `hold` tool answers when released. */
async function start(): Promise<Setup> {
  const clock = new VirtualTimeScheduler()
  clock.frame = Date.now()
  const flush = (target: number) => { clock.schedule(() => {}, target - clock.now()); clock.maxFrames = target; clock.flush() }
  const issuer = await testIssuer(ISSUER, RESOURCE)
  let release!: () => void
  const released = new Promise<void>(resolve => { release = resolve })
  const mcp = createServer({ name: 'expiry', version: '1' })
  mcp.tool('hold', {}, async () => { await released; return { content: [{ type: 'text', text: 'released' }] } })
  const auth = bearerAuth({ resource: RESOURCE, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks: issuer.jwks }) })
  const http = streamableHttp({ port: 0, auth, scheduler: clock, keepAliveMs: 0 })
  await mcp.listen(http)
  cleanup.push(() => mcp.close())
  return { url: http.url!, mcp, issuer, clock, flush, release }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** A legacy (2025-11-25) Streamable HTTP session opened with `token`; resolves with its id. */
async function session(url: string, token: string): Promise<string> {
  const init = await send(url, 'POST', { 'content-type': 'application/json', accept: ACCEPT, ...bearer(token) },
    JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'expiry', version: '1' } } }))
  await init.ended
  const id = String(init.headers['mcp-session-id'])
  await send(url, 'POST', { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': id, ...bearer(token) }, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
  return id
}

describe('issue 20: streams end when the token expires', { timeout: 20_000 }, () => {
  it('ends a session\'s GET stream at the token\'s expiry, not before; a fresh token opens it again', async () => {
    const { url, mcp, issuer, flush } = await start()
    const token = await issuer.token({}, { expiresInSec: 600 })
    const expiresAt = expiryOf(token)
    const id = await session(url, token)
    const headers = { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }
    const stream = await send(url, 'GET', { ...headers, ...bearer(token) })
    expect(stream.status).toBe(200)
    // A millisecond before the expiry the stream still delivers what the server sends.
    flush(expiresAt - 1)
    mcp.tool('added', {}, () => ({ content: [] }))
    await stream.until(text => text.includes('notifications/tools/list_changed'), 'the list_changed notification')
    expect(stream.isEnded()).toBe(false)
    flush(expiresAt)
    await endOf(stream, 'GET stream at expiry')
    // The client comes back with a fresh token: its GET is authenticated again, and served.
    const fresh = await send(url, 'GET', { ...headers, ...bearer(await issuer.token({}, { expiresInSec: 3_600 })) })
    expect(fresh.status).toBe(200)
    mcp.tool('added-again', {}, () => ({ content: [] }))
    await fresh.until(text => text.includes('notifications/tools/list_changed'), 'list_changed on the new stream')
  })

  it('ends a POST\'s SSE answer at the expiry; the client resumes it with a fresh token and gets the answer', async () => {
    const { url, issuer, flush, release } = await start()
    const token = await issuer.token({}, { expiresInSec: 600 })
    const id = await session(url, token)
    const call = await send(url, 'POST', { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25', ...bearer(token) },
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hold', arguments: {} } }))
    expect(call.headers['content-type']).toBe('text/event-stream')
    await call.until(text => /id: (\S+)/.test(text), 'the priming event')
    const lastEventId = /id: (\S+)/.exec(call.text())![1]!
    flush(expiryOf(token))
    await endOf(call, 'POST stream at expiry')
    expect(call.text()).not.toContain('released')
    const resumed = await send(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25', 'last-event-id': lastEventId, ...bearer(await issuer.token({}, { expiresInSec: 3_600 })) })
    expect(resumed.status).toBe(200)
    release()
    await resumed.until(text => text.includes('released'), 'the answer on the resumed stream')
    expect(messages(resumed.text())).toContainEqual(expect.objectContaining({ id: 1, result: expect.objectContaining({ content: [{ type: 'text', text: 'released' }] }) }))
  })

  it('ends a legacy /sse stream at the expiry', async () => {
    const { url, issuer, flush } = await start()
    const token = await issuer.token({}, { expiresInSec: 600 })
    const stream = await send(url.replace('/mcp', '/sse'), 'GET', { accept: 'text/event-stream', ...bearer(token) })
    expect(stream.status).toBe(200)
    await stream.until(text => text.includes('event: endpoint'), 'the endpoint event')
    flush(expiryOf(token) - 1)
    expect(stream.isEnded()).toBe(false)
    flush(expiryOf(token))
    await endOf(stream, 'legacy stream at expiry')
  })

  it('ends a modern-era subscriptions/listen stream at the expiry', async () => {
    const { url, mcp, issuer, flush } = await start()
    const token = await issuer.token({}, { expiresInSec: 600 })
    const body = { jsonrpc: '2.0', id: 5, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: { name: 'expiry', version: '1' } } } }
    const listen = await send(url, 'POST', { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen', ...bearer(token) }, JSON.stringify(body))
    expect(listen.status).toBe(200)
    flush(expiryOf(token) - 1)
    mcp.tool('added', {}, () => ({ content: [] }))
    await listen.until(text => text.includes('notifications/tools/list_changed'), 'list_changed on the listen stream')
    expect(listen.isEnded()).toBe(false)
    flush(expiryOf(token))
    await endOf(listen, 'listen stream at expiry')
  })
})
