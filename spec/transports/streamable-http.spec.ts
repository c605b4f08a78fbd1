import { afterEach, describe, expect, it } from 'vitest'
import { sessionsEnded } from '../helpers/sessions-ended.ts'
import { events, messages } from '../helpers/sse-events.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { createServer as createNodeServer } from 'node:http'
import { nodeHandler, streamableHttp, type StreamableHttpOptions, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { webHandler } from '../../transports/http-handler.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'
import { createMemoryEventStore } from '../../transports/event-store.ts'
import { createSseParser, type SseEvent } from '../../lib/codec/sse.ts'
import { interval, take, tap, last, map, VirtualTimeScheduler } from 'rxjs'

const ACCEPT = 'application/json, text/event-stream'
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

let mcp: McpServer | undefined
let http: StreamableHttpServer | undefined
afterEach(async () => { await mcp?.close(); mcp = undefined; http = undefined })

async function start(options: StreamableHttpOptions = {}) {
  mcp = createServer({ name: 'http-test', version: '1' })
  mcp.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
  mcp.tool('count', { inputSchema: { type: 'object', properties: { steps: { type: 'integer' }, ms: { type: 'integer' } } } }, ({ steps = 3, ms = 20 }, ctx) =>
    interval(Number(ms)).pipe(take(Number(steps)), tap(i => ctx.progress(i + 1, Number(steps))), last(), map(() => ({ content: [{ type: 'text' as const, text: 'counted' }] }))))
  http = streamableHttp(options)
  await mcp.listen(http)
  return http.url!
}

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
}


async function initialized(url: string): Promise<string> {
  const response = await post(url, INIT)
  const session = response.headers.get('mcp-session-id')!
  await events(response)
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session })
  return session
}

describe('streamableHttp', () => {
  it('mints an unguessable session id at initialize and answers on an SSE stream with a priming event', async () => {
    const url = await start()
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const response = await post(url, INIT)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const session = response.headers.get('mcp-session-id')!
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const list = await events(response)
    expect(list[0]).toMatchObject({ data: '', retry: 1000, id: expect.any(String) })
    expect(messages(list)).toMatchObject([{ id: 0, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'http-test' } } }])
  })

  it('answers notifications with 202, and requests with progress then the result', async () => {
    const url = await start()
    const session = await initialized(url)
    const response = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'count', arguments: { steps: 2, ms: 5 }, _meta: { progressToken: 'p' } } }, { 'mcp-session-id': session })
    const list = messages(await events(response))
    expect(list.map(message => message.method ?? 'result')).toEqual(['notifications/progress', 'notifications/progress', 'result'])
    expect(list[2]).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'counted' }] } })
  })

  it('answers with one JSON body in jsonResponse mode', async () => {
    const url = await start({ jsonResponse: true })
    const session = await (async () => {
      const response = await post(url, INIT)
      expect(response.headers.get('content-type')).toBe('application/json')
      expect(await response.json()).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25' } })
      return response.headers.get('mcp-session-id')!
    })()
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session })
    const response = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'json' } } }, { 'mcp-session-id': session })
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'json' }] } })
  })

  it.each([
    // The id of the refused request where its body was read; the Origin check comes before that.
    ['a missing session id', {}, 400, 1],
    ['an unknown session id', { 'mcp-session-id': 'forged-session-id' }, 404, 1],
    ['an unsupported MCP-Protocol-Version', { 'mcp-protocol-version': '1999-01-01' }, 400, 1],
    ['a foreign Origin', { origin: 'https://evil.example.com' }, 403, null],
  ])('refuses %s', async (_name, headers, status, id) => {
    const url = await start()
    const response = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers)
    expect(response.status).toBe(status)
    const body = await response.json()
    expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code: expect.any(Number) } })
    expect(JSON.stringify(body)).not.toContain('forged')
  })

  it('checks Accept, Content-Type, body size and JSON', async () => {
    const url = await start({ maxBodyBytes: 1000 })
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(INIT) })).status).toBe(406)
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain', accept: ACCEPT }, body: JSON.stringify(INIT) })).status).toBe(415)
    expect((await post(url, { ...INIT, padding: 'x'.repeat(2000) })).status).toBe(413)
    const invalid = await post(url, '{"jsonrpc": oops')
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toMatchObject({ error: { code: -32700 } })
    expect((await fetch(url, { method: 'PUT' })).status).toBe(405)
    expect((await fetch(url.replace('/mcp', '/elsewhere'))).status).toBe(404)
  })

  it('ends a session on DELETE', async () => {
    const url = await start()
    const session = await initialized(url)
    expect(http!.sessionCount).toBe(1)
    expect((await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } })).status).toBe(200)
    expect(http!.sessionCount).toBe(0)
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': session })).status).toBe(404)
  })

  it('replays exactly the missed events of a stream after Last-Event-ID, then goes on live', async () => {
    const store = createMemoryEventStore()
    // Heard once the server has stored progress 3: the events it stores with nobody reading them.
    let heardThird!: () => void
    const thirdStored = new Promise<void>(resolve => { heardThird = resolve })
    const storeEvent = store.storeEvent.bind(store)
    store.storeEvent = (...args: Parameters<typeof storeEvent>) => {
      const stored = storeEvent(...args)
      if (JSON.stringify(args[1]).includes('"progress":3')) void Promise.resolve(stored).then(heardThird)
      return stored
    }
    const url = await start({ eventStore: store })
    const session = await initialized(url)
    const response = await post(url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'count', arguments: { steps: 6, ms: 40 }, _meta: { progressToken: 5 } } }, { 'mcp-session-id': session })
    // Read the priming event and the first progress, then drop the connection mid-request.
    const seen = await events(response, event => event.data.includes('"progress":1'))
    const lastId = seen.at(-1)!.id!
    // Missed: the server stores progress 2 and 3 with nobody reading them, whatever the machine's pace.
    await thirdStored
    const resumed = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'last-event-id': lastId } })
    expect(resumed.status).toBe(200)
    const rest = messages(await events(resumed))
    const progress = rest.filter(message => message.method === 'notifications/progress').map(message => message.params.progress)
    expect(progress).toEqual([2, 3, 4, 5, 6])
    expect(rest.at(-1)).toEqual({ jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'counted' }] } })
  })

  it('refuses an unknown Last-Event-ID', async () => {
    const url = await start()
    const session = await initialized(url)
    const response = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'last-event-id': 'nope_3' } })
    expect(response.status).toBe(404)
  })

  it('sends server-initiated messages on the standalone GET stream, several of which may be open', async () => {
    const url = await start()
    const session = await initialized(url)
    const first = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session } })
    const second = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session } })
    expect([first.status, second.status]).toEqual([200, 200])
    // No wait needed: the listener opens a GET stream in the same turn that it sends its headers.
    mcp!.log('warning', 'to everyone')
    const got = messages(await events(second, event => event.data.includes('to everyone')))
    expect(got).toContainEqual({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', data: 'to everyone' } })
    await first.body!.cancel()
  })

  it('sends keep-alive comments on idle streams', async () => {
    const clock = new VirtualTimeScheduler(undefined, 0)
    const url = await start({ keepAliveMs: 60, scheduler: clock })
    const session = await initialized(url)
    const response = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session } })
    // One sweep's worth of virtual time: the idle stream gets its comment.
    clock.maxFrames = clock.now() + 60
    clock.flush()
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    while (!text.includes(': keep-alive')) text += decoder.decode((await reader.read()).value, { stream: true })
    expect(text).toContain(': keep-alive\n\n')
    await reader.cancel()
  })

  it('frees abandoned sessions after the idle timeout', async () => {
    const clock = new VirtualTimeScheduler(undefined, 0)
    const url = await start({ sessionIdleTimeout: 1500, scheduler: clock })
    await Promise.all(Array.from({ length: 50 }, () => initialized(url)))
    expect(http!.sessionCount).toBe(50)
    expect(mcp!.sessions.size).toBe(50)
    clock.maxFrames = clock.now() + 2000
    clock.flush()
    expect(http!.sessionCount).toBe(0)
    // The server lets go of each session once its connection has closed.
    await sessionsEnded(mcp!)
    expect(mcp!.sessions.size).toBe(0)
  })

  it('answers 503 past maxSessions', async () => {
    const url = await start({ maxSessions: 2 })
    await initialized(url)
    await initialized(url)
    expect((await post(url, INIT)).status).toBe(503)
  })

  it('serves each POST on its own in stateless mode, for the official client too', async () => {
    const url = await start({ stateless: true })
    const direct = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'no session' } } })
    expect(direct.headers.get('mcp-session-id')).toBeNull()
    expect(await direct.json()).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'no session' }] } })
    expect((await fetch(url, { headers: { accept: 'text/event-stream' } })).status).toBe(405)
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const client = new Client({ name: 'official', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    expect(await client.callTool({ name: 'echo', arguments: { text: 'stateless' } })).toEqual({ content: [{ type: 'text', text: 'stateless' }] })
    await client.close()
    // Each POST's one-request session ends with its response.
    await sessionsEnded(mcp!)
    expect(mcp!.sessions.size).toBe(0)
  })

  it('serves the legacy HTTP+SSE transport beside it', async () => {
    const url = await start()
    const sse = await fetch(url.replace('/mcp', '/sse'), { headers: { accept: 'text/event-stream' } })
    const reader = sse.body!.getReader()
    const decoder = new TextDecoder()
    const got: SseEvent[] = []
    const parser = createSseParser(event => got.push(event))
    const next = async (predicate: (event: SseEvent) => boolean) => {
      while (!got.some(predicate)) parser.write(decoder.decode((await reader.read()).value, { stream: true }))
      return got.find(predicate)!
    }
    const endpoint = await next(event => event.event === 'endpoint')
    expect(endpoint.data).toMatch(/^\/messages\?sessionId=/)
    const target = new URL(endpoint.data, url).toString()
    expect((await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...INIT, params: { ...INIT.params, protocolVersion: '2024-11-05' } }) })).status).toBe(202)
    const answer = await next(event => event.event === 'message')
    expect(JSON.parse(answer.data)).toMatchObject({ id: 0, result: { protocolVersion: '2024-11-05' } })
    expect((await fetch(url.replace('/mcp', '/messages?sessionId=forged'), { method: 'POST', body: '{}' })).status).toBe(404)
    await reader.cancel()
  })
})

describe('nodeHandler', () => {
  it('reads req.body a body parser left, not the `next` function a route handler is called with third', async () => {
    mcp = createServer({ name: 'node-handler-test', version: '1' })
    const handler = webHandler()
    await mcp.listen(handler)
    const serve = nodeHandler(handler)
    // What Express does with express.json() mounted and `app.all('/mcp', serve)`: the body is read
    // to its end and parsed onto req.body, and the route is called with (req, res, next).
    const node = createNodeServer(async (req, res) => {
      let text = ''
      for await (const chunk of req) text += chunk
      Object.assign(req, { body: JSON.parse(text) })
      serve(req, res, () => { res.statusCode = 599; res.end() })
    })
    const port = await listenOn(node, 0, '127.0.0.1')
    try {
      const response = await post(`http://127.0.0.1:${port}/mcp`, INIT)
      expect(response.status).toBe(200)
      expect(messages(await events(response))[0]).toMatchObject({ id: 0, result: { serverInfo: { name: 'node-handler-test' } } })
    } finally {
      await closeServer(node)
    }
  })
})
