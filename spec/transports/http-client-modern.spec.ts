import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { lastValueFrom, map, toArray } from 'rxjs'
import { connect, type ListenEvent } from '../../actors/client.ts'
import { InvalidToolError } from '../../actors/client/errors.ts'
import { HeaderMismatchError, ResponseLostError, TransportError } from '../../lib/jsonrpc/errors.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { createConnection } from '../../lib/connection.ts'
import { bareRequestInfo, type SendOptions, type Transport } from '../../lib/transport.ts'

const INFO = { name: 'http-modern-test', version: '1.0.0' }
const DISCOVER = {
  resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {}, resources: {}, prompts: {} },
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'fake-http', version: '1' } }, ttlMs: 0, cacheScope: 'public',
}

/** One POST or GET the fake server received. */
interface Seen {
  method: string
  headers: IncomingMessage['headers']
  body: JsonObject | undefined
  closed: boolean
  /** Resolves when the response's connection closes (the client let go of it). */
  isClosed: Promise<void>
}

/** Answers one POST: return a JSON-RPC result object, or write the response yourself and return undefined. */
type Route = (body: JsonObject, res: ServerResponse, seen: Seen) => JsonObject | undefined

/**
 * A hand-made modern Streamable HTTP server on 127.0.0.1: each POST is answered by the route of
 * its method (JSON, with an Mcp-Session-Id header a modern client must ignore); GET is 405.
 */
async function fakeHttp(routes: Record<string, Route>) {
  const seen: Seen[] = []
  const server: Server = createServer((req, res) => {
    let text = ''
    req.on('data', chunk => { text += chunk })
    req.on('end', () => {
      let heardClose!: () => void
      const isClosed = new Promise<void>(resolve => { heardClose = resolve })
      const entry: Seen = { method: req.method!, headers: req.headers, body: text === '' ? undefined : JSON.parse(text), closed: false, isClosed }
      seen.push(entry)
      res.on('close', () => { entry.closed = true; heardClose() })
      if (req.method !== 'POST') { res.writeHead(405).end(); return }
      const body = entry.body!
      const route = routes[body.method as string] ?? (body.method === 'server/discover' ? () => DISCOVER : undefined)
      if (route === undefined) {
        if (body.id === undefined) { res.writeHead(202).end(); return }
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } }))
        return
      }
      const result = route(body, res, entry)
      if (result !== undefined) res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'not-for-modern' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
  const posts = (method: string) => seen.filter(entry => entry.body?.method === method)
  const close = () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  servers.push(close)
  return { url, seen, posts }
}

const servers: Array<() => Promise<void>> = []
afterEach(async () => { for (const close of servers.splice(0)) await close() })

/** Writes an SSE response head and the given JSON-RPC messages as events; the stream stays open. */
function sse(res: ServerResponse, ...messages: JsonObject[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  for (const message of messages) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`)
}

const TOOLS = [
  {
    name: 'query', inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        priority: { type: 'integer', 'x-mcp-header': 'Priority' },
        verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
        where: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
        sql: { type: 'string' },
      },
    },
  },
  { name: 'bad-number', inputSchema: { type: 'object', properties: { score: { type: 'number', 'x-mcp-header': 'Score' } } } },
  { name: 'bad-duplicate', inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'Same' }, b: { type: 'string', 'x-mcp-header': 'same' } } } },
  { name: 'plain', inputSchema: { type: 'object' } },
]

/** A modern server over a memory pair (server/discover, tools/list of TOOLS, tools/call); returns the client's end. */
function memoryServer() {
  const [near, far] = createMemoryPair()
  const server = createConnection(far)
  server.setRequestHandler('server/discover', () => DISCOVER)
  server.setRequestHandler('tools/list', () => ({ tools: TOOLS }))
  server.setRequestHandler('tools/call', () => ({ content: [] }))
  server.start()
  return near
}

describe('streamableHttpClient in the modern era', () => {
  it('sends MCP-Protocol-Version, Mcp-Method and Mcp-Name (encoded) on every POST, and no session id, GET or DELETE', async () => {
    const { url, seen, posts } = await fakeHttp({
      'tools/call': () => ({ content: [] }),
      'resources/read': () => ({ contents: [] }),
      'prompts/get': () => ({ messages: [] }),
    })
    const client = await connect(streamableHttpClient(url), INFO)
    expect(client.era).toBe('modern')
    await client.callTool('weather-now')
    await client.callTool('météo')
    await client.readResource('file:///a%20b.txt')
    await client.getPrompt('=?base64?looks-encoded?=')
    await client.close()
    expect(seen.every(entry => entry.method === 'POST')).toBe(true)
    for (const entry of seen) {
      expect(entry.headers['mcp-protocol-version']).toBe('2026-07-28')
      expect(entry.headers['mcp-method']).toBe(entry.body!.method)
      expect(entry.headers['mcp-session-id']).toBeUndefined()
    }
    expect(posts('server/discover')[0]!.headers['mcp-name']).toBeUndefined()
    expect(posts('tools/call').map(entry => entry.headers['mcp-name'])).toEqual(['weather-now', `=?base64?${Buffer.from('météo').toString('base64')}?=`])
    expect(posts('resources/read')[0]!.headers['mcp-name']).toBe('file:///a%20b.txt')
    expect(posts('prompts/get')[0]!.headers['mcp-name']).toBe(`=?base64?${Buffer.from('=?base64?looks-encoded?=').toString('base64')}?=`)
  })

  it('mirrors x-mcp-header arguments into Mcp-Param-* headers, encoded, omitting absent and null ones', async () => {
    const { url, posts } = await fakeHttp({ 'tools/list': () => ({ tools: TOOLS }), 'tools/call': () => ({ content: [] }) })
    await using client = await connect(streamableHttpClient(url), INFO)
    await client.listTools()
    await client.callTool('query', { region: 'us-west1', priority: 42, verbose: false, where: { zone: ' b ' }, sql: 'SELECT 1' })
    await client.callTool('query', { region: 'Zürich', priority: null, sql: 'x' })
    const [first, second] = posts('tools/call')
    const params = (entry: Seen) => Object.fromEntries(Object.entries(entry.headers).filter(([name]) => name.startsWith('mcp-param-')))
    expect(params(first!)).toEqual({ 'mcp-param-region': 'us-west1', 'mcp-param-priority': '42', 'mcp-param-verbose': 'false', 'mcp-param-zone': `=?base64?${Buffer.from(' b ').toString('base64')}?=` })
    expect(params(second!)).toEqual({ 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` })
  })

  it('leaves tools with invalid x-mcp-header annotations out of listTools() and tools(), reporting each', async () => {
    const { url } = await fakeHttp({ 'tools/list': () => ({ tools: TOOLS }) })
    const reported: unknown[] = []
    await using client = await connect(streamableHttpClient(url), INFO, { reportUnhandledError: error => reported.push(error) })
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(['query', 'plain'])
    expect((await lastValueFrom(client.tools().pipe(toArray()))).map(tool => tool.name)).toEqual(['query', 'plain'])
    expect(reported).toHaveLength(4)
    expect(reported[0]).toBeInstanceOf(InvalidToolError)
    expect((reported[0] as InvalidToolError).message).toBe('Tool "bad-number" is excluded from the tool list: x-mcp-header "Score" is on a property of type "number"; only string, integer and boolean may be mirrored')
    expect((reported[1] as InvalidToolError).tool).toBe('bad-duplicate')
  })

  it('leaves them out on any transport whose frames name Streamable HTTP (requestInfo.transport), whatever the transport object is', async () => {
    const near = memoryServer()
    const requestInfo = bareRequestInfo('streamable-http')
    const transport: Transport = {
      inbound: near.inbound.pipe(map(item => item.type === 'message' ? { ...item, requestInfo } : item)),
      send: (payload, options) => near.send(payload, options),
      close: () => near.close(),
    }
    await using client = await connect(transport, INFO, { reportUnhandledError: () => {} })
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(['query', 'plain'])
  })

  it('keeps every tool on a transport without headers (stdio, memory), where x-mcp-header means nothing', async () => {
    const near = memoryServer()
    await using client = await connect(near, INFO)
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(['query', 'bad-number', 'bad-duplicate', 'plain'])
  })

  it('adds the Mcp-Param-* headers to the caller\'s own headers of a call (RequestOptions.headers), the mirrored ones winning', async () => {
    const { url, posts } = await fakeHttp({ 'tools/list': () => ({ tools: TOOLS }), 'tools/call': () => ({ content: [] }) })
    await using client = await connect(streamableHttpClient(url), INFO)
    await client.listTools()
    await client.callTool('query', { region: 'eu' }, { headers: { 'x-trace': 't1', 'Mcp-Param-Region': 'forged' } })
    await client.callTool('plain', {}, { headers: { 'x-trace': 't2' } })
    expect(posts('tools/call').map(entry => [entry.headers['x-trace'], entry.headers['mcp-param-region']])).toEqual([['t1', 'eu'], ['t2', undefined]])
  })

  it('hands a modern tools/call its Mcp-Param-* headers with the message (SendOptions.headers), and other requests none', async () => {
    const near = memoryServer()
    const sent: { method: unknown; options: SendOptions | undefined }[] = []
    const transport: Transport = {
      inbound: near.inbound,
      send: (payload, options) => { sent.push({ method: (payload as { method?: unknown }).method, options }); return near.send(payload, options) },
      close: () => near.close(),
    }
    await using client = await connect(transport, INFO)
    await client.listTools()
    await client.callTool('query', { region: 'eu', priority: 7 })
    expect(sent).toEqual([
      { method: 'server/discover', options: undefined },
      { method: 'tools/list', options: undefined },
      { method: 'tools/call', options: { headers: { 'Mcp-Param-Region': 'eu', 'Mcp-Param-Priority': '7' } } },
    ])
  })

  it('lists tools again and retries once on -32020, with the headers of the new definition', async () => {
    let listed = 0
    const { url, posts } = await fakeHttp({
      // The first list has no annotation; the server's current definition mirrors region.
      'tools/list': () => ({ tools: listed++ === 0 ? [{ name: 'query', inputSchema: { type: 'object' } }] : TOOLS }),
      'tools/call': (body, res, entry) => {
        if (entry.headers['mcp-param-region'] === undefined) {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32020, message: 'Header mismatch: Mcp-Param-Region is missing' } }))
          return undefined
        }
        return { content: [{ type: 'text', text: 'ran' }] }
      },
    })
    await using client = await connect(streamableHttpClient(url), INFO)
    await client.listTools()
    expect(await client.callTool('query', { region: 'eu' })).toEqual({ content: [{ type: 'text', text: 'ran' }] })
    expect(posts('tools/list')).toHaveLength(2)
    expect(posts('tools/call').map(entry => entry.headers['mcp-param-region'])).toEqual([undefined, 'eu'])
  })

  it('gives up after one retry when -32020 persists, with HeaderMismatchError', async () => {
    const { url, posts } = await fakeHttp({
      'tools/list': () => ({ tools: [] }),
      'tools/call': (body, res) => {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32020, message: 'Header mismatch' } }))
        return undefined
      },
    })
    await using client = await connect(streamableHttpClient(url), INFO)
    const error = await client.callTool('x').catch(caught => caught)
    expect(error).toBeInstanceOf(HeaderMismatchError)
    expect(error.code).toBe(-32020)
    expect(posts('tools/call')).toHaveLength(2)
    expect(posts('tools/list')).toHaveLength(1)
  })

  it('reads an SSE answer with progress, and cancels by closing the response stream (no notifications/cancelled POST)', async () => {
    const { url, posts } = await fakeHttp({
      'tools/call': (body, res) => {
        const token = (body.params as JsonObject & { _meta: JsonObject })._meta.progressToken
        sse(res, { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1 } })
        if ((body.params as JsonObject).name === 'quick') res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { content: [] } })}\n\n`)
        return undefined
      },
    })
    await using client = await connect(streamableHttpClient(url), INFO)
    const progress: number[] = []
    expect(await client.callTool('quick', {}, { onProgress: event => progress.push(event.progress) })).toEqual({ content: [] })
    expect(progress).toEqual([1])
    const events: unknown[] = []
    let heardFirst!: () => void
    const first = new Promise<void>(resolve => { heardFirst = resolve })
    const subscription = client.callTool$('slow').subscribe(event => { events.push(event); heardFirst() })
    await first
    expect(events).toHaveLength(1)
    const slow = posts('tools/call')[1]!
    expect(slow.closed).toBe(false)
    subscription.unsubscribe()
    await slow.isClosed
    expect(posts('notifications/cancelled')).toEqual([])
  })

  it('re-issues once, under a new id, a request whose response stream ends before its response, then fails with ResponseLostError (no resumption)', async () => {
    const { url, seen, posts } = await fakeHttp({
      'tools/call': (_body, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end('id: 1\nretry: 10\ndata: \n\n')
        return undefined
      },
    })
    await using client = await connect(streamableHttpClient(url), INFO)
    const error = await client.callTool('cut').catch(caught => caught)
    expect(error).toBeInstanceOf(ResponseLostError)
    expect(error).toBeInstanceOf(TransportError)
    expect(error.message).toBe('The response stream of tools/call ended before its response')
    const calls = posts('tools/call')
    expect(calls).toHaveLength(2)
    expect(calls[0]!.body!.id).not.toEqual(calls[1]!.body!.id)
    expect(seen.some(entry => entry.method === 'GET' || entry.headers['last-event-id'] !== undefined)).toBe(false)
  })

  it('gets the answer of a re-issued request when only the first response stream was lost', async () => {
    let calls = 0
    const { url, posts } = await fakeHttp({
      'tools/call': (body, res) => {
        if (++calls === 1) {
          res.writeHead(200, { 'content-type': 'text/event-stream' })
          res.end('data: \n\n')
          return undefined
        }
        return { resultType: 'complete', content: [{ type: 'text', text: `second ${String(body.id)}` }] }
      },
    })
    await using client = await connect(streamableHttpClient(url), INFO)
    const result = await client.callTool('flaky')
    const [first, second] = posts('tools/call')
    expect(second!.body!.id).not.toEqual(first!.body!.id)
    expect(result.content).toEqual([{ type: 'text', text: `second ${String(second!.body!.id)}` }])
  })

  it('listens on one long-lived POST whose stream carries the acknowledgement and notifications; unsubscribing closes it', async () => {
    const { url, posts } = await fakeHttp({
      'subscriptions/listen': (body, res) => {
        const meta = { 'io.modelcontextprotocol/subscriptionId': body.id }
        sse(res,
          { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: meta, notifications: { toolsListChanged: true } } },
          { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: meta } })
        return undefined
      },
    })
    await using client = await connect(streamableHttpClient(url), INFO)
    const events: ListenEvent[] = []
    let heardBoth!: () => void
    const both = new Promise<void>(resolve => { heardBoth = resolve })
    const subscription = client.listen({ toolsListChanged: true }).subscribe(event => { if (events.push(event) === 2) heardBoth() })
    await both
    expect(events.map(event => event.type)).toEqual(['acknowledged', 'notification'])
    subscription.unsubscribe()
    await posts('subscriptions/listen')[0]!.isClosed
    expect(posts('notifications/cancelled')).toEqual([])
  })
})

describe('streamableHttpClient: era detection over HTTP', () => {
  /** A legacy server's routes: initialize (with a session), and tools/list. */
  const legacy = (refuseProbe: Route): Record<string, Route> => ({
    'server/discover': refuseProbe,
    initialize: (body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'legacy-session' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'old', version: '1' } } }))
      return undefined
    },
    'tools/list': () => ({ tools: [] }),
  })

  it.each([
    ['400 with a text body', (_body: JsonObject, res: ServerResponse) => { res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad Request: not initialized') }],
    ['404 without a body', (_body: JsonObject, res: ServerResponse) => { res.writeHead(404).end() }],
    ['400 with a JSON-RPC error that is not a modern one', (body: JsonObject, res: ServerResponse) => {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32000, message: 'Bad Request: Server not initialized' } }))
    }],
  ])('falls back to initialize when the probe gets %s, then uses the session', async (_name, refuse) => {
    const { url, posts } = await fakeHttp(legacy((body, res) => { refuse(body, res); return undefined }))
    await using client = await connect(streamableHttpClient(url, { openStandaloneStream: false }), INFO)
    expect(client.era).toBe('legacy')
    await client.listTools()
    expect(posts('initialize')).toHaveLength(1)
    expect(posts('tools/list')[0]!.headers['mcp-session-id']).toBe('legacy-session')
    expect(posts('tools/list')[0]!.headers['mcp-protocol-version']).toBe('2025-11-25')
  })

  it('stays modern on 400 with -32022, retrying with a supported version', async () => {
    const { url, posts } = await fakeHttp({
      'server/discover': (body, res, entry) => {
        if (entry.headers['mcp-protocol-version'] === '2026-07-28') return DISCOVER
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'], requested: entry.headers['mcp-protocol-version'] } } }))
        return undefined
      },
    })
    await using client = await connect(streamableHttpClient(url), INFO, { modernVersions: ['2099-01-01', '2026-07-28'] })
    expect(client.era).toBe('modern')
    expect(posts('server/discover').map(entry => entry.headers['mcp-protocol-version'])).toEqual(['2099-01-01', '2026-07-28'])
    expect(posts('initialize')).toEqual([])
  })
})
