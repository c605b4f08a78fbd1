import { afterEach, describe, expect, it } from 'vitest'
import { PassThrough, Writable } from 'node:stream'
import { connect, type McpClient as Client } from '../../actors/client.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpOptions } from '../../transports/streamable-http.ts'
import { httpClient, sseClient } from '../../transports/http-client.ts'
import { websocket, websocketClient, type WebSocketServerOptions } from '../../transports/websocket.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { stdio } from '../../transports/stdio.ts'
import { requestInfo } from '../../transports/request-info.ts'
import { collected } from '../helpers/collected.ts'

const CLIENT_INFO = { name: 'request-info', version: '1' }

/** What the `whoami` tool saw of `ctx.requestInfo`. */
interface Seen {
  requestId: string | number
  transport: string | null
  hasHeaders: boolean
  /** `X-Tag`, a custom header the client sends. */
  tag: string | null
  /** `X-Body-Id`, the JSON-RPC id of the body the POST carried (set by `tagging`). */
  bodyId: string | null
  remoteAddress: string | null
}

let server: McpServer | undefined
const clients: Client[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {})
  await server?.close()
  server = undefined
})

/** A server whose `whoami` tool answers with what `ctx.requestInfo` holds. */
function whoamiServer(): McpServer {
  server = createServer({ name: 'whoami', version: '1' })
  server.tool('whoami', {}, (_args, ctx) => {
    const info = ctx.requestInfo
    const seen: Seen = {
      requestId: ctx.requestId,
      transport: info.transport ?? null,
      hasHeaders: info.headers !== undefined,
      tag: info.headers?.get('x-tag') ?? null,
      bodyId: info.headers?.get('x-body-id') ?? null,
      remoteAddress: info.remoteAddress ?? null,
    }
    return { content: [{ type: 'text', text: JSON.stringify(seen) }] }
  })
  return server
}

async function whoami(client: Client): Promise<Seen> {
  const result = await client.callTool('whoami', {})
  return JSON.parse((result.content[0] as { text: string }).text) as Seen
}

/**
 * A fetch that marks each POST with `X-Body-Id` (the id of the request its body carries), a fixed
 * `X-Tag`, and `extra`: a handler that reads back its own request's id proves it got the headers
 * of the POST that carried it, not those of another.
 */
function tagging(extra: Record<string, string> = {}): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers)
    if (typeof init?.body === 'string') {
      const body = JSON.parse(init.body) as { id?: unknown }
      if (!Array.isArray(body) && body.id !== undefined) headers.set('x-body-id', String(body.id))
    }
    headers.set('x-tag', 'from-client')
    for (const [name, value] of Object.entries(extra)) headers.set(name, value)
    return fetch(input, { ...init, headers })
  }
}

async function listenHttp(options: StreamableHttpOptions = {}): Promise<string> {
  const http = streamableHttp({ port: 0, ...options })
  await whoamiServer().listen(http)
  return http.url!
}

async function listenWs(options: WebSocketServerOptions = {}): Promise<string> {
  const ws = websocket({ port: 0, ...options })
  await whoamiServer().listen(ws)
  return ws.url!
}

async function connected(client: Promise<Client>): Promise<Client> {
  const ready = await client
  clients.push(ready)
  return ready
}

/** Two calls, each must see its own POST: the ids differ, and each header names its own. */
async function expectOwnPosts(client: Client, expected: Partial<Seen>): Promise<void> {
  const first = await whoami(client)
  const second = await whoami(client)
  for (const seen of [first, second]) {
    expect(seen).toMatchObject({ hasHeaders: true, tag: 'from-client', ...expected })
    expect(seen.bodyId).toBe(String(seen.requestId))
  }
  expect(first.bodyId).not.toBe(second.bodyId)
}

describe('issue 21: ctx.request', () => {
  it('gives a legacy Streamable HTTP request the headers of its own POST and the socket address', async () => {
    const url = await listenHttp()
    const client = await connected(connect(httpClient(url, { fetch: tagging() }), CLIENT_INFO, { era: 'legacy' }))
    await expectOwnPosts(client, { transport: 'streamable-http', remoteAddress: '127.0.0.1' })
  })

  it('gives a legacy Streamable HTTP request the address the listener resolved with clientAddress', async () => {
    const url = await listenHttp({ clientAddress: request => request.header('x-real-ip') ?? undefined })
    const client = await connected(connect(httpClient(url, { fetch: tagging({ 'x-real-ip': '203.0.113.7' }) }), CLIENT_INFO, { era: 'legacy' }))
    await expectOwnPosts(client, { transport: 'streamable-http', remoteAddress: '203.0.113.7' })
  })

  it('gives a stateless Streamable HTTP request the headers of its POST', async () => {
    const url = await listenHttp({ stateless: true })
    const client = await connected(connect(httpClient(url, { fetch: tagging() }), CLIENT_INFO, { era: 'legacy' }))
    await expectOwnPosts(client, { transport: 'streamable-http', remoteAddress: '127.0.0.1' })
  })

  it('gives a modern-era (2026-07-28) request the headers of its POST and the client address', async () => {
    const url = await listenHttp({ clientAddress: request => request.header('x-real-ip') ?? undefined })
    const client = await connected(connect(httpClient(url, { fetch: tagging({ 'x-real-ip': '198.51.100.23' }) }), CLIENT_INFO, { era: 'modern' }))
    expect(client.era).toBe('modern')
    await expectOwnPosts(client, { transport: 'streamable-http', remoteAddress: '198.51.100.23' })
  })

  it('gives a modern-era request sent by raw fetch its POST headers and the socket address', async () => {
    const url = await listenHttp()
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-tag': 'raw',
        'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'whoami',
      },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 7, method: 'tools/call',
        params: { name: 'whoami', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
      }),
    })
    expect(response.status).toBe(200)
    const body = await response.json() as { result: { content: { text: string }[] } }
    expect(JSON.parse(body.result.content[0]!.text)).toEqual({ requestId: 7, transport: 'streamable-http', hasHeaders: true, tag: 'raw', bodyId: null, remoteAddress: '127.0.0.1' })
  })

  it('gives a legacy HTTP+SSE request the headers of its own POST to /messages', async () => {
    const url = await listenHttp()
    const client = await connected(connect(sseClient(url.replace(/\/mcp$/, '/sse'), { fetch: tagging() }), CLIENT_INFO, { era: 'legacy' }))
    await expectOwnPosts(client, { transport: 'sse', remoteAddress: '127.0.0.1' })
  })

  it('gives a WebSocket request the headers of the upgrade and the socket address', async () => {
    const url = await listenWs()
    const client = await connected(connect(websocketClient(url, { headers: { 'x-tag': 'upgrade' } }), CLIENT_INFO, { era: 'legacy' }))
    for (const seen of [await whoami(client), await whoami(client)]) {
      expect(seen).toMatchObject({ transport: 'websocket', hasHeaders: true, tag: 'upgrade', bodyId: null, remoteAddress: '127.0.0.1' })
    }
  })

  it('gives a WebSocket request the address the listener resolved with clientAddress', async () => {
    const url = await listenWs({ clientAddress: request => request.header('x-real-ip') ?? undefined })
    const client = await connected(connect(websocketClient(url, { headers: { 'x-tag': 'upgrade', 'x-real-ip': '192.0.2.44' } }), CLIENT_INFO, { era: 'legacy' }))
    expect(await whoami(client)).toMatchObject({ transport: 'websocket', tag: 'upgrade', remoteAddress: '192.0.2.44' })
  })

  it('gives a memory request a request info without headers or address', async () => {
    const [near, far] = createMemoryPair()
    await whoamiServer().listen(far)
    const client = await connected(connect(near, CLIENT_INFO, { era: 'legacy' }))
    expect(await whoami(client)).toMatchObject({ transport: 'memory', hasHeaders: false, tag: null, remoteAddress: null })
  })

  it('gives a stdio request a request info without headers or address', async () => {
    const input = new PassThrough()
    const lines = collected<string>()
    let pending = ''
    const output = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        pending += chunk.toString('utf8')
        const parts = pending.split('\n')
        pending = parts.pop()!
        for (const part of parts) lines.push(part)
        callback()
      },
    })
    await whoamiServer().listen(stdio({ input, output }))
    input.write('{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')
    input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    input.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}\n')
    await lines.when(items => items.length === 2)
    const answer = JSON.parse(lines.items[1]!) as { id: number; result: { content: { text: string }[] } }
    expect(answer.id).toBe(1)
    expect(JSON.parse(answer.result.content[0]!.text)).toEqual({ requestId: 1, transport: 'stdio', hasHeaders: false, tag: null, bodyId: null, remoteAddress: null })
  })
})

describe('requestInfo', () => {
  it('reads its header list only when headers are first read, and keeps the Headers it made', () => {
    let reads = 0
    const raw = ['X-Tag', 'a', 'x-tag', 'b', 'Authorization', 'Bearer t']
    const counted = new Proxy(raw, { get: (target, key, receiver) => { reads++; return Reflect.get(target, key, receiver) } })
    const info = requestInfo('streamable-http', counted, '10.0.0.1')
    expect(reads).toBe(0)
    const headers = info.headers!
    expect(reads).toBeGreaterThan(0)
    // As received: duplicates joined, names without case, credentials kept (the principal is the verified identity).
    expect(headers.get('x-tag')).toBe('a, b')
    expect(headers.get('authorization')).toBe('Bearer t')
    expect(info.headers).toBe(headers)
    expect(info).toMatchObject({ transport: 'streamable-http', remoteAddress: '10.0.0.1' })
  })

  it('leaves out a header the Fetch standard cannot hold instead of throwing', () => {
    const info = requestInfo('streamable-http', { 'x-good': 'yes', 'bad name': 'no' }, undefined)
    expect(info.headers!.get('x-good')).toBe('yes')
    expect(info.remoteAddress).toBeUndefined()
  })
})
