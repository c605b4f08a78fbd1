/**
 * Issue 23: the web handler (`webHandler().fetch`, rxmcp/web) answers bad input exactly as the
 * node:http listener does: one table of hostile and malformed requests, run against both, each
 * row's answer asserted (status, JSON-RPC code) and the two answers compared; after every row the
 * session that was open still works. A body a framework already parsed (`fetch(request, { body })`)
 * gets the same answers as the raw body.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { webHandler, type WebHandler } from '../../transports/http-handler.ts'
import type { McpServer } from '../../actors/server.ts'
import type { Authenticator } from '../../lib/auth.ts'

const ACCEPT = 'application/json, text/event-stream'
const LEGACY = '2025-11-25'
const MODERN = '2026-07-28'
const MAX_BODY = 64 * 1024

/** One request of the table, built against a session id. */
interface Row {
  name: string
  method?: string
  /** Extra headers; `session: true` adds the open session's id and version. */
  headers?: Record<string, string>
  session?: boolean
  body?: string | Uint8Array
  /** The answer the spec requires. */
  status: number
  code?: number
  /** A tool result with isError instead of a JSON-RPC error. */
  isError?: boolean
}

const request = (id: number, method: string, params: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id, method, params })
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' } }
const modernHeaders = (method: string, name?: string) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) })

const TABLE: Row[] = [
  { name: 'malformed JSON', session: true, body: '{"jsonrpc":"2.0","id":1,', status: 400, code: -32700 },
  { name: 'invalid UTF-8', session: true, body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), status: 400, code: -32700 },
  { name: 'a JSON-RPC shape without method or result', session: true, body: '{"jsonrpc":"2.0","id":7}', status: 400, code: -32600 },
  { name: 'a JSON value that is no message', session: true, body: '42', status: 400, code: -32600 },
  { name: 'an unknown method', session: true, body: request(3, 'no/such/method'), status: 200, code: -32601 },
  { name: 'a bad cursor', session: true, body: request(4, 'tools/list', { cursor: '!!not-a-cursor' }), status: 200, code: -32602 },
  { name: 'arguments that break the tool schema', session: true, body: request(5, 'tools/call', { name: 'echo', arguments: { text: 1 } }), status: 200, isError: true },
  { name: 'an unknown tool', session: true, body: request(6, 'tools/call', { name: 'nope', arguments: {} }), status: 200, code: -32602 },
  { name: 'a request before initialize (no session)', body: request(8, 'tools/list'), status: 400, code: -32000 },
  { name: 'an unknown session', headers: { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': LEGACY }, body: request(9, 'tools/list'), status: 404, code: -32001 },
  { name: 'a body over maxBodyBytes', session: true, body: request(10, 'tools/call', { name: 'echo', arguments: { text: 'x'.repeat(MAX_BODY) } }), status: 413, code: -32000 },
  { name: 'a foreign Origin', session: true, headers: { origin: 'http://evil.example' }, body: request(11, 'ping'), status: 403, code: -32000 },
  { name: 'a foreign Host', session: true, headers: { host: 'evil.example' }, body: request(12, 'ping'), status: 403, code: -32000 },
  { name: 'Accept without text/event-stream', session: true, headers: { accept: 'application/json' }, body: request(13, 'ping'), status: 406 },
  { name: 'a Content-Type that is not JSON', session: true, headers: { 'content-type': 'text/plain' }, body: request(14, 'ping'), status: 415 },
  { name: 'PUT', method: 'PUT', session: true, body: request(15, 'ping'), status: 405 },
  { name: 'GET of an unknown session', method: 'GET', headers: { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': LEGACY, accept: 'text/event-stream' }, status: 404 },
  { name: 'DELETE without a session id', method: 'DELETE', status: 400 },
  { name: 'a modern request whose Mcp-Method header disagrees with the body', headers: modernHeaders('tools/list'), body: request(16, 'prompts/list', { _meta: modernMeta }), status: 400 },
  { name: 'a modern request of an unsupported revision', headers: { ...modernHeaders('tools/list'), 'mcp-protocol-version': '2099-01-01' }, body: request(17, 'tools/list', { _meta: { ...modernMeta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }), status: 400 },
  // 2026-07-28 Streamable HTTP: a modern request's JSON-RPC error sets the HTTP status (-32601: 404).
  { name: 'a modern call of an unknown method', headers: modernHeaders('no/such'), body: request(18, 'no/such', { _meta: modernMeta }), status: 404, code: -32601 },
]

/** What an answer says, read the same way whatever produced it: status, and the JSON-RPC outcome if any. */
interface Answer { status: number; code?: number; isError?: boolean }

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text()
  const type = response.headers.get('content-type') ?? ''
  let message: { error?: { code: number }; result?: { isError?: boolean } } | undefined
  if (type.startsWith('application/json')) message = JSON.parse(text)
  else if (type.startsWith('text/event-stream')) {
    // A priming event carries an empty data line (resumability); the messages are the rest.
    const data = text.split('\n').filter(line => line.startsWith('data:') && line.slice(5).trim() !== '').map(line => JSON.parse(line.slice(5)))
    message = data.find(entry => 'error' in entry || 'result' in entry)
  }
  if (Array.isArray(message)) message = message[0]
  return {
    status: response.status,
    ...(message?.error === undefined ? {} : { code: message.error.code }),
    ...(message?.result?.isError === true ? { isError: true } : {}),
  }
}

/** A server reached through `send`: the node:http listener over a socket, or the web handler in-process. */
interface Target { name: string; send(request: Request, parsed?: unknown): Promise<Response>; close(): Promise<void> }

async function nodeTarget(): Promise<Target> {
  const server: McpServer = createEverythingServer()
  const http: StreamableHttpServer = streamableHttp({ maxBodyBytes: MAX_BODY })
  await server.listen(http)
  const base = new URL(http.url!)
  return {
    name: 'node:http listener',
    // node:http's client sends the headers as given (fetch would set Host from the URL itself).
    send: async request => {
      const body = request.method === 'GET' || request.method === 'DELETE' ? undefined : new Uint8Array(await request.arrayBuffer())
      return new Promise<Response>((resolve, reject) => {
        const url = new URL(request.url)
        const outgoing = httpRequest({ host: base.hostname, port: base.port, method: request.method, path: url.pathname + url.search, headers: headersOf(request), timeout: 10_000 }, incoming => {
          const chunks: Buffer[] = []
          incoming.on('data', chunk => chunks.push(chunk))
          incoming.on('end', () => resolve(new Response(incoming.statusCode === 204 ? null : Buffer.concat(chunks), {
            status: incoming.statusCode!, headers: Object.entries(incoming.headers).map(([name, value]) => [name, String(value)] as [string, string]),
          })))
          incoming.on('error', reject)
        })
        outgoing.on('error', reject)
        outgoing.end(body)
      })
    },
    close: () => server.close(),
  }
}

async function webTarget(): Promise<Target> {
  const server: McpServer = createEverythingServer()
  const handler: WebHandler = webHandler({ maxBodyBytes: MAX_BODY })
  await server.listen(handler)
  return {
    name: 'web handler',
    send: (request, parsed) => handler.fetch(request, parsed === undefined ? undefined : { body: parsed }),
    close: () => server.close(),
  }
}

/** The body of a legacy initialize request. */
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'table', version: '1' } } })

/** Runs `test` against the everything server behind a web handler made with `options`, then closes the server. */
async function withHandler(options: Parameters<typeof webHandler>[0], test: (handler: WebHandler) => Promise<void>): Promise<void> {
  const server = createEverythingServer()
  const handler = webHandler(options)
  await server.listen(handler)
  try {
    await test(handler)
  } finally {
    await server.close()
  }
}

/** Makes a session on `target` and gives the headers its requests carry. */
async function openSession(target: Target): Promise<Record<string, string>> {
  const init = await target.send(build({ body: INITIALIZE }, {}))
  expect(init.status).toBe(200)
  await init.text()
  const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': LEGACY }
  const initialized = await target.send(build({ headers, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' }, {}))
  expect(initialized.status).toBe(202)
  return headers
}

/** The web Request of a row (Host 127.0.0.1 unless the row forges it). */
function build(row: Pick<Row, 'method' | 'headers' | 'body' | 'session'>, session: Record<string, string>): Request {
  const headers = new Headers({ host: '127.0.0.1', 'content-type': 'application/json', accept: ACCEPT, ...(row.session === true ? session : {}), ...row.headers })
  const method = row.method ?? 'POST'
  return new Request('http://127.0.0.1/mcp', { method, headers, ...(method === 'GET' || method === 'DELETE' ? {} : { body: row.body as BodyInit }) })
}

describe('webHandler: bad input gets the answers the node:http listener gives', () => {
  const targets: Target[] = []
  const sessions = new Map<Target, Record<string, string>>()

  beforeAll(async () => {
    targets.push(await nodeTarget(), await webTarget())
    for (const target of targets) sessions.set(target, await openSession(target))
  }, 30_000)
  afterAll(async () => { await Promise.all(targets.map(target => target.close())) })

  it.each(TABLE)('$name: $status', async row => {
    const answers: Answer[] = []
    for (const target of targets) {
      const session = sessions.get(target)!
      answers.push(await answerOf(await target.send(build(row, session))))
      // The session lives on: a ping in it is answered.
      const ping = await answerOf(await target.send(build({ session: true, body: request(99, 'ping') }, session)))
      expect(ping, `${target.name}: the session after "${row.name}"`).toEqual({ status: 200 })
    }
    const expected: Answer = { status: row.status, ...(row.code === undefined ? {} : { code: row.code }), ...(row.isError === true ? { isError: true } : {}) }
    expect(answers[0], 'node:http listener').toMatchObject(expected)
    expect(answers[1], 'web handler').toEqual(answers[0])
  })

  it.each(TABLE.filter(row => typeof row.body === 'string' && row.status !== 413 && isJson(row.body)))('$name, its body parsed by a framework: the same answer', async row => {
    const web = targets[1]!
    const raw = await answerOf(await web.send(build(row, sessions.get(web)!)))
    const parsed = await answerOf(await web.send(build({ ...row, body: undefined, method: row.method }, sessions.get(web)!), JSON.parse(row.body as string)))
    expect(parsed).toEqual(raw)
  })

  it('answers 413 for a parsed body whose JSON is over maxBodyBytes', async () => {
    const web = targets[1]!
    const huge = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(MAX_BODY) } } }
    expect(await answerOf(await web.send(build({ session: true }, sessions.get(web)!), huge))).toMatchObject({ status: 413 })
  })

  it('streams a long answer as it is made, and carries notifications on a standalone GET stream', async () => {
    const web = targets[1]!
    const session = sessions.get(web)!
    const standalone = await web.send(build({ method: 'GET', session: true, headers: { accept: 'text/event-stream' } }, session))
    expect(standalone.status).toBe(200)
    const events = sseReader(standalone)
    await answerOf(await web.send(build({ session: true, body: request(40, 'resources/subscribe', { uri: 'everything://readme' }) }, session)))
    await answerOf(await web.send(build({ session: true, body: request(41, 'tools/call', { name: 'touch', arguments: { uri: 'everything://readme' } }) }, session)))
    expect(await events.next(message => message.method === 'notifications/resources/updated')).toMatchObject({ params: { uri: 'everything://readme' } })
    // A call that reports progress: the first report is read while the call is still running.
    const call = await web.send(build({ session: true, body: request(42, 'tools/call', { name: 'long_running', arguments: { steps: 50, ms: 20 }, _meta: { progressToken: 'p' } }) }, session))
    expect(call.headers.get('content-type')).toBe('text/event-stream')
    const progress = sseReader(call)
    expect(await progress.next(message => message.method === 'notifications/progress')).toMatchObject({ params: { progressToken: 'p', progress: 1 } })
    await web.send(build({ session: true, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 42 } }) }, session))
    await progress.cancel()
    await events.cancel()
  })

  it('answers 503 once closed, instead of serving a server that is gone', async () => {
    const target = await webTarget()
    await target.close()
    expect(await answerOf(await target.send(build({ body: request(1, 'ping') }, {})))).toEqual({ status: 503, code: -32000 })
  })
})

/** Reads JSON-RPC messages (with their SSE event ids) off an SSE response as they arrive. */
function sseReader(response: Response) {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  /** Complete events not yet looked at, and the text of the one being read. */
  const queue: { id?: string; message: Record<string, any> }[] = []
  let partial = ''
  const nextEvent = async (matches: (message: Record<string, any>) => boolean): Promise<{ id?: string; message: Record<string, any> }> => {
    for (;;) {
      while (queue.length > 0) {
        const event = queue.shift()!
        if (matches(event.message)) return event
      }
      const { done, value } = await reader.read()
      if (done) throw new Error('the stream ended first')
      const events = (partial + decoder.decode(value, { stream: true })).split('\n\n')
      partial = events.pop()!
      for (const event of events) {
        const lines = event.split('\n')
        const data = lines.filter(line => line.startsWith('data:')).map(line => line.slice(5)).join('\n').trim()
        const id = lines.find(line => line.startsWith('id:'))?.slice(3).trim()
        if (data !== '') queue.push({ ...(id === undefined ? {} : { id }), message: JSON.parse(data) })
      }
    }
  }
  return {
    nextEvent,
    /** The next message that `matches`, reading as far as needed. */
    next: async (matches: (message: Record<string, any>) => boolean) => (await nextEvent(matches)).message,
    cancel: () => reader.cancel(),
  }
}

/** A Request's headers as node:http's client takes them. */
function headersOf(request: Request): Record<string, string> {
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => { headers[name] = value })
  return headers
}

function isJson(text: string): boolean {
  try { JSON.parse(text); return true } catch { return false }
}

describe('webHandler: auth, budgets and resumption, as the node:http listener has them', () => {
  /** A bearer check of one fixed token: what `bearerAuth` does, without an authorization server. */
  /** A bearer check of fixed tokens, one per user: what `bearerAuth` does, without an authorization server. */
  const USERS: Record<string, string> = { 'Bearer good-token': 'ann', 'Bearer other-token': 'bob' }
  const auth: Authenticator = {
    authenticate: async request => {
      const subject = USERS[request.header('authorization') ?? '']
      return subject !== undefined
        ? { type: 'allow', principal: { subject, kind: 'user', scopes: [] } }
        : { type: 'refuse', answer: { status: 401, headers: { 'www-authenticate': 'Bearer realm="mcp"' }, body: '' } }
    },
  }

  it('keeps a session its principal\'s own: another user naming its id finds no such session, and cannot end it', async () => {
    await withHandler({ auth }, async handler => {
      const body = INITIALIZE
      const opened = await handler.fetch(build({ body, headers: { authorization: 'Bearer good-token' } }, {}))
      const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': LEGACY }
      const asBob = { authorization: 'Bearer other-token' }
      expect((await handler.fetch(build({ session: true, headers: asBob, body: request(1, 'tools/list') }, session))).status).toBe(404)
      expect((await handler.fetch(build({ method: 'GET', session: true, headers: { ...asBob, accept: 'text/event-stream' } }, session))).status).toBe(404)
      expect((await handler.fetch(build({ method: 'DELETE', session: true, headers: asBob }, session))).status).toBe(404)
      // Its owner still has it.
      const asAnn = { authorization: 'Bearer good-token' }
      expect(await answerOf(await handler.fetch(build({ session: true, headers: asAnn, body: request(2, 'ping') }, session)))).toEqual({ status: 200 })
      expect(handler.sessionCount).toBe(1)
    })
  })

  it('refuses a request without credentials 401 with the challenge, and serves one with them', async () => {
    await withHandler({ auth }, async handler => {
      const body = INITIALIZE
      const refused = await handler.fetch(build({ body }, {}))
      expect(refused.status).toBe(401)
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="mcp"')
      const admitted = await handler.fetch(build({ body, headers: { authorization: 'Bearer good-token' } }, {}))
      expect(admitted.status).toBe(200)
      // The session belongs to its principal: without the token it does not exist.
      const session = { 'mcp-session-id': admitted.headers.get('mcp-session-id')!, 'mcp-protocol-version': LEGACY }
      expect((await handler.fetch(build({ session: true, body: request(1, 'ping') }, session))).status).toBe(401)
    })
  })

  it('spends the request budget per client address given in init, and answers 429 past it', async () => {
    await withHandler({ rateLimit: { capacity: 2, refillPerSecond: 0.001 } }, async handler => {
      const list = (id: number) => build({ headers: modernHeaders('tools/list'), body: request(id, 'tools/list', { _meta: modernMeta }) }, {})
      const ping = (address: string) => handler.fetch(list(1), { remoteAddress: address })
      expect((await ping('10.0.0.1')).status).toBe(200)
      expect((await ping('10.0.0.1')).status).toBe(200)
      const refused = await ping('10.0.0.1')
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      // Another address (Deno's remoteAddr form) has a budget of its own.
      expect((await handler.fetch(list(2), { remoteAddr: { hostname: '10.0.0.2' } })).status).toBe(200)
    })
  })

  it('resumes a stream with Last-Event-ID after the client went away', async () => {
    await withHandler(undefined, async handler => {
      const target: Target = { name: 'web', send: request => handler.fetch(request), close: async () => {} }
      const session = await openSession(target)
      const standalone = await handler.fetch(build({ method: 'GET', session: true, headers: { accept: 'text/event-stream' } }, session))
      const events = sseReader(standalone)
      await handler.fetch(build({ session: true, body: request(1, 'resources/subscribe', { uri: 'everything://readme' }) }, session))
      await handler.fetch(build({ session: true, body: request(2, 'tools/call', { name: 'touch', arguments: { uri: 'everything://readme' } }) }, session))
      const first = await events.nextEvent(message => message.method === 'notifications/resources/updated')
      // The client goes away; an update arrives meanwhile; it comes back with the last id it read.
      await events.cancel()
      await handler.fetch(build({ session: true, body: request(3, 'tools/call', { name: 'touch', arguments: { uri: 'everything://readme' } }) }, session))
      const resumed = await handler.fetch(build({ method: 'GET', session: true, headers: { accept: 'text/event-stream', 'last-event-id': first.id! } }, session))
      expect(resumed.status).toBe(200)
      const replay = sseReader(resumed)
      const missed = await replay.nextEvent(message => message.method === 'notifications/resources/updated')
      expect(missed.id).not.toBe(first.id)
      expect(missed.message).toMatchObject({ params: { uri: 'everything://readme' } })
      await replay.cancel()
    })
  })
})
