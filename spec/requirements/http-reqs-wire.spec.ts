import { afterEach, describe, expect, it } from 'vitest'
import { createServer as createNodeServer, request as nodeRequest, type IncomingMessage, type Server as NodeServer, type ServerResponse } from 'node:http'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import type { InspectionEvent } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { NodeExchange } from '../../transports/node-exchange.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'
import { events, messages } from '../helpers/sse-events.ts'
import { verifies } from '../helpers/verifies.ts'
import { TestClock } from '../helpers/test-clock.ts'

const ACCEPT = 'application/json, text/event-stream'
const LEGACY = '2025-11-25'
const MODERN = '2026-07-28'
const INFO = { name: 'reqs-wire', version: '1' }

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A node:http server of the test's own on 127.0.0.1, closed after the test. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ node: NodeServer; url: string }> {
  const node = createNodeServer(handler)
  const port = await listenOn(node, 0, '127.0.0.1')
  cleanups.push(() => closeServer(node))
  return { node, url: `http://127.0.0.1:${port}/mcp` }
}

/** The JSON body of a request. */
function bodyOf(req: IncomingMessage): Promise<JsonObject> {
  return new Promise(resolve => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', chunk => { text += chunk })
    req.on('end', () => resolve(JSON.parse(text) as JsonObject))
  })
}

/** An rxmcp server on a node:http server of the test's own, which sees each request first (`front`). */
async function mount(mcp: McpServer, options: Parameters<typeof streamableHttp>[0] = {}, front?: (req: IncomingMessage, res: ServerResponse) => void) {
  const listener = streamableHttp(options)
  await mcp.listen(listener)
  cleanups.push(() => mcp.close())
  return serve((req, res) => { front?.(req, res); listener.nodeHandler(req, res) })
}

function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(url, { method: 'POST', signal, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(body) })
}

/** A legacy session, initialized; resolves with the headers every later request carries. */
async function session(url: string): Promise<Record<string, string>> {
  const response = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: INFO } })
  expect(response.status).toBe(200)
  await response.text()
  const headers = { 'mcp-session-id': response.headers.get('mcp-session-id')!, 'mcp-protocol-version': LEGACY }
  expect((await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202)
  return headers
}

/** A standalone GET stream of the session. */
async function getStream(url: string, headers: Record<string, string>): Promise<Response> {
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } })
  expect(response.status).toBe(200)
  return response
}

const isResponse = (message: JsonObject) => !('method' in message)

describe('issue 20 requirements: Streamable HTTP on the wire (reqs-wire)', () => {
  /**
   * A legacy server whose first GET stream sends one event with `retry` and drops, and a client
   * of it on a virtual clock, its GET stream read and dropped: it waits on the clock now.
   */
  async function droppedStream(retry: number) {
    const gets: Array<string | undefined> = []
    // Resolves when the client comes back for its second GET.
    let heardSecond!: () => void
    const secondGet = new Promise<void>(resolve => { heardSecond = resolve })
    const log = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'before the drop' } }
    const { url } = await serve(async (req, res) => {
      if (req.method === 'GET') {
        gets.push(req.headers['last-event-id'] as string | undefined)
        if (gets.length === 2) heardSecond()
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        // The first stream tells the client how long to wait, then drops; the second stays open.
        if (gets.length === 1) res.end(`id: e1\nretry: ${retry}\nevent: message\ndata: ${JSON.stringify(log)}\n\n`)
        else res.flushHeaders()
        return
      }
      if (req.method === 'DELETE') { res.writeHead(200); res.end(); return }
      const message = await bodyOf(req)
      if (message.method !== 'initialize') { res.writeHead(202); res.end(); return }
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' })
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: LEGACY, capabilities: {}, serverInfo: INFO } }))
    })
    const clock = new TestClock()
    // A backoff of its own that differs from the server's retry: the server's must win.
    const transport = streamableHttpClient(url, { scheduler: clock, reconnect: { initial: 100 } })
    cleanups.push(() => transport.close())
    const received: unknown[] = []
    transport.inbound.subscribe(item => { if (item.type === 'message') received.push(item.message) })
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: INFO } })
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    // The stream was read and dropped: the client now waits on its clock, nowhere else.
    await clock.nextWait()
    expect(received).toContainEqual(log)
    expect(gets).toEqual([undefined])
    return { clock, gets, secondGet }
  }

  verifies('http:client-retry-field', 'waits exactly the retry the server sent before it reconnects a dropped GET stream, from its last event id', async () => {
    const { clock, gets, secondGet } = await droppedStream(2500)
    expect(clock.actions.map(action => action.delay)).toEqual([2500])
    clock.advance(2499)
    expect(clock.actions).toHaveLength(1)
    expect(gets).toHaveLength(1)
    clock.advance(1)
    expect(clock.actions).toHaveLength(0)
    await secondGet
    expect(gets[1]).toBe('e1')
  })

  it('waits at most 2^31 - 1 ms for a retry longer than a timer holds, instead of reconnecting at once', async () => {
    const { clock } = await droppedStream(10_000_000_000)
    expect(clock.actions.map(action => action.delay)).toEqual([2 ** 31 - 1])
  })

  verifies('http:get-no-responses', 'never sends a response on the GET stream: an answer whose POST stream is gone is dropped, not moved there', async () => {
    let release!: () => void
    const released = new Promise<void>(resolve => { release = resolve })
    let started!: () => void
    const isStarted = new Promise<void>(resolve => { started = resolve })
    let postClosed!: () => void
    const isPostClosed = new Promise<void>(resolve => { postClosed = resolve })
    const sent: JsonObject[] = []
    // Resolves when the server has sent its answer to slow-1 (to nowhere, the test expects).
    let heardAnswer!: () => void
    const answered = new Promise<void>(resolve => { heardAnswer = resolve })
    const mcp = createServer({ name: 'wire', version: '1' }, {
      inspect: (event: InspectionEvent) => {
        if (event.type !== 'rxmcp.frame.out') return
        sent.push(event.message as unknown as JsonObject)
        if ((event.message as { id?: unknown }).id === 'slow-1') heardAnswer()
      },
    })
    mcp.tool('slow', {}, async () => { started(); await released; return { content: [{ type: 'text', text: 'late' }] } })
    // No event store: a POST stream the client leaves cannot be resumed, so its answer has nowhere to go.
    const { url } = await mount(mcp, { eventStore: false, keepAliveMs: 0 }, (req, res) => {
      if (req.headers['x-test'] === 'slow') res.on('close', () => postClosed())
    })
    const headers = await session(url)
    const get = await getStream(url, headers)
    const onGet = events(get, event => event.data.includes('end of test'))
    const abort = new AbortController()
    const call = post(url, { jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'slow', arguments: {} } }, { ...headers, 'x-test': 'slow' }, abort.signal)
    await isStarted
    abort.abort()
    await call.catch(() => {})
    // Every 'close' listener of the POST has run (the listener's among them) once this resolves.
    await isPostClosed
    release()
    await answered
    // The marker goes after the answer: the GET stream has everything sent before it when it arrives.
    mcp.log('info', 'end of test')
    const got = messages(await onGet) as JsonObject[]
    expect(got.at(-1)).toMatchObject({ method: 'notifications/message', params: { data: 'end of test' } })
    expect(got.filter(isResponse)).toEqual([])
  })

  verifies('http:no-broadcast', 'sends each message on one stream only, with two GET streams and a POST stream open', async () => {
    const mcp = createServer({ name: 'wire', version: '1' })
    mcp.tool('steps', {}, (_args, ctx) => {
      for (let step = 1; step <= 3; step++) ctx.progress(step, 3)
      // Unrelated to the request: for the GET streams, not this POST's.
      mcp.log('info', 'during the call')
      return { content: [{ type: 'text', text: 'stepped' }] }
    })
    const { url } = await mount(mcp, { keepAliveMs: 0 })
    const headers = await session(url)
    const first = events(await getStream(url, headers))
    const second = events(await getStream(url, headers))
    const count = 10
    for (let n = 0; n < count; n++) mcp.log('info', `message ${n}`)
    const answer = await post(url, { jsonrpc: '2.0', id: 'steps-1', method: 'tools/call', params: { name: 'steps', arguments: {}, _meta: { progressToken: 'p' } } }, headers)
    const onPost = messages(await events(answer)) as JsonObject[]
    for (let n = count; n < 2 * count; n++) mcp.log('info', `message ${n}`)
    // Ending the session ends both GET streams: each is then read to its end, nothing is left in flight.
    expect((await fetch(url, { method: 'DELETE', headers })).status).toBe(200)
    const onGets = [messages(await first) as JsonObject[], messages(await second) as JsonObject[]]
    const logged = (list: JsonObject[]) => list.filter(message => message.method === 'notifications/message').map(message => (message.params as JsonObject).data)
    for (const data of [...Array.from({ length: 2 * count }, (_, n) => `message ${n}`), 'during the call']) {
      expect(onGets.flatMap(logged).filter(each => each === data), data).toHaveLength(1)
      expect(logged(onPost)).not.toContain(data)
    }
    // The call's progress and answer went on its own POST stream only.
    expect(onPost.filter(message => message.method === 'notifications/progress').map(message => (message.params as JsonObject).progress)).toEqual([1, 2, 3])
    expect(onPost.filter(isResponse)).toEqual([expect.objectContaining({ id: 'steps-1' })])
    for (const list of onGets) expect(list.filter(message => message.method === 'notifications/progress' || isResponse(message))).toEqual([])
  })

  verifies('http:post-single-message@2026-07-28', 'POSTs only single requests and notifications in the modern era, answering nothing a server sends it', async () => {
    const posted: unknown[] = []
    const unanswered: unknown[] = []
    const { url } = await serve(async (req, res) => {
      const message = await bodyOf(req)
      if (!('id' in message) || !('method' in message)) { res.writeHead(202); res.end(); return }
      if (message.method === 'server/discover') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { resultType: 'complete', supportedVersions: [MODERN], capabilities: { tools: {} }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'fake', version: '1' } } } }))
        return
      }
      // A server breaking the rules: requests to the client and an unreadable event on a response stream.
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 'srv-1', method: 'roots/list' })}\n\n`)
      res.write('event: message\ndata: {not json\n\n')
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })}\n\n`)
      res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { resultType: 'complete', content: [{ type: 'text', text: 'done' }] } })}\n\n`)
    })
    // Each POST body as the client hands it to fetch (synchronously, as it sends).
    const recording: typeof fetch = (input, init) => {
      if (init?.method === 'POST') posted.push(JSON.parse(String(init.body)))
      return fetch(input, init)
    }
    const client = await connect(streamableHttpClient(url, { fetch: recording }), INFO, {
      era: 'modern',
      inspect: event => { if (event.type === 'rxmcp.request.unanswered') unanswered.push(event.id) },
    })
    cleanups.push(() => client.close())
    expect(await client.callTool('anything', {})).toEqual({ content: [{ type: 'text', text: 'done' }] })
    // Everything the server sent came before the result: anything answered would have been POSTed by now.
    expect(posted.length).toBeGreaterThanOrEqual(2)
    for (const body of posted) {
      expect(Array.isArray(body)).toBe(false)
      expect(body).toMatchObject({ jsonrpc: '2.0', method: expect.any(String) })
    }
    expect(unanswered).toEqual(['srv-1', null, 7])
  })

  verifies('http:header-case@2026-07-28', 'compares header names without case: a modern request with upper- and mixed-case header names is served, and the client reads upper-case ones', async () => {
    const mcp = createServer({ name: 'wire', version: '1' })
    mcp.tool('route', { inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] } },
      ({ region }) => ({ content: [{ type: 'text', text: `routed to ${String(region)}` }] }))
    // Every header name the server answers with goes out upper-cased.
    const { url } = await mount(mcp, {}, (_req, res) => {
      const writeHead = res.writeHead.bind(res) as (status: number, headers?: Record<string, string>) => ServerResponse
      res.writeHead = ((status: number, headers?: Record<string, string>) => writeHead(status, headers === undefined ? undefined
        : Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value])))) as typeof res.writeHead
    })
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {
      name: 'route', arguments: { region: 'eu-west' },
      _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} },
    } })
    // node:http sends header names as written (fetch would lower-case them).
    const answer = await new Promise<{ status: number; text: string; rawNames: string[] }>((resolve, reject) => {
      const req = nodeRequest(url, { method: 'POST' }, res => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', chunk => { text += chunk })
        res.on('end', () => resolve({ status: res.statusCode!, text, rawNames: res.rawHeaders.filter((_, i) => i % 2 === 0) }))
      })
      req.on('error', reject)
      req.setHeader('CONTENT-TYPE', 'application/json')
      req.setHeader('Accept', ACCEPT)
      req.setHeader('MCP-PROTOCOL-VERSION', MODERN)
      req.setHeader('mCp-MeThOd', 'tools/call')
      req.setHeader('MCP-NAME', 'route')
      req.setHeader('MCP-PARAM-REGION', 'eu-west')
      req.end(body)
    })
    expect(answer.status).toBe(200)
    expect(answer.rawNames).toContain('CONTENT-TYPE')
    expect(JSON.parse(answer.text)).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: 'routed to eu-west' }] } })
    // The rxmcp client, through the same upper-casing server: it reads CONTENT-TYPE as content-type.
    const client = await connect(streamableHttpClient(url), INFO, { era: 'modern' })
    cleanups.push(() => client.close())
    await client.tools()
    expect(await client.callTool('route', { region: 'eu-north' })).toMatchObject({ content: [{ type: 'text', text: 'routed to eu-north' }] })
  })

  it('reads a request header by any spelling of its name (Exchange.header)', async () => {
    const seen: Array<string | null> = []
    const { url } = await serve((req, res) => {
      const exchange = new NodeExchange(req, res, {})
      seen.push(exchange.header('Mcp-Session-Id'), exchange.header('MCP-SESSION-ID'), exchange.header('mcp-session-id'))
      res.end()
    })
    await fetch(url, { headers: { 'mcp-session-id': 'abc' } })
    expect(seen).toEqual(['abc', 'abc', 'abc'])
  })
})
