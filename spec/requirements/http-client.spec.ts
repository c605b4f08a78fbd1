import { afterEach, describe, expect, it } from 'vitest'
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'

/** What the fake server saw of each HTTP request: method, Accept, and the parsed body of a POST. */
interface Seen { method: string; accept: string | undefined; body: unknown }

let listener: Server | undefined
afterEach(async () => { await new Promise(resolve => listener?.close(resolve) ?? resolve(undefined)); listener = undefined })

const read = async (request: IncomingMessage) => {
  let text = ''
  for await (const chunk of request) text += chunk
  return text === '' ? undefined : JSON.parse(text) as unknown
}

/**
 * A 2025-11-25 Streamable HTTP server on 127.0.0.1 that answers in JSON, gives a session id, and
 * answers the standalone GET with 405 once it has recorded it; `seen` is every request.
 */
async function fakeServer() {
  const seen: Seen[] = []
  let sawGet!: () => void
  const get = new Promise<void>(resolve => { sawGet = resolve })
  listener = createHttpServer(async (request, response) => {
    const body = request.method === 'POST' ? await read(request) : undefined
    seen.push({ method: request.method!, accept: request.headers.accept, body })
    if (request.method === 'GET') { response.writeHead(405).end(); sawGet(); return }
    if (request.method !== 'POST') { response.writeHead(200).end(); return }
    const message = body as { id?: number | string; method: string }
    if (message.id === undefined) { response.writeHead(202).end(); return }
    const result = message.method === 'initialize'
      ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } }
      : message.method === 'tools/call' ? { content: [{ type: 'text', text: 'ok' }] } : {}
    response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }))
  })
  await new Promise<void>(resolve => listener!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`, seen, get }
}

describe('MCP 2025-11-25 Streamable HTTP (client)', () => {
  it('accepts JSON and SSE on every POST, each carrying one message, and only SSE on its GET', async () => {
    const server = await fakeServer()
    const client = await connect(streamableHttpClient(server.url), { name: 'spec', version: '1' }, { era: 'legacy' })
    try {
      expect(await client.callTool('echo', { text: 'x' })).toEqual({ content: [{ type: 'text', text: 'ok' }] })
      await server.get
    } finally {
      await client.close()
    }
    const posts = server.seen.filter(entry => entry.method === 'POST')
    expect(posts.map(post => (post.body as { method: string }).method)).toEqual(['initialize', 'notifications/initialized', 'tools/call'])
    for (const post of posts) {
      expect(post.accept).toBe('application/json, text/event-stream')
      expect(Array.isArray(post.body)).toBe(false)
    }
    expect(server.seen.filter(entry => entry.method === 'GET').map(entry => entry.accept)).toEqual(['text/event-stream'])
  })
})
