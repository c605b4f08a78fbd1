import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect } from 'vitest'
import { connect } from '../../actors/client.ts'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { ConnectionClosedError, TransportError } from '../../lib/jsonrpc/errors.ts'
import { verifies } from '../helpers/verifies.ts'
import { writeFetchResponse } from '../helpers/pipe-response.ts'

/**
 * The session id in the client's hands (MCP 2025-11-25 Streamable HTTP: the client MUST handle it
 * securely): it goes in a header to the server that issued it and nowhere else, a redirect to
 * another origin included. Real servers on 127.0.0.1: an rxmcp server behind a front that proxies
 * or redirects, and another origin that records whatever reaches it.
 */

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

/** A node:http server on 127.0.0.1 with `handle` for every request (its body read first). */
async function listen(handle: (request: IncomingMessage, response: ServerResponse, body: string) => void | Promise<void>): Promise<string> {
  const server = createHttpServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', chunk => { body += chunk })
    request.on('end', () => void Promise.resolve(handle(request, response, body)).catch(() => { response.statusCode = 502; response.end() }))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  cleanup.push(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Sends the request on to `target`, streaming the answer back (SSE included). */
async function forward(request: IncomingMessage, response: ServerResponse, body: string, target: string): Promise<void> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers.set(name, value)
  const answer = await fetch(target, { method: request.method, headers, body: request.method === 'POST' ? body : undefined })
  await writeFetchResponse(answer, response)
}

describe('the client keeps the session id with the server that issued it', () => {
  verifies('http:client-session-id-secure', 'follows a redirect within the server\'s origin, and refuses one to another origin without sending it the session id, the headers or the body', async () => {
    const server = createServer({ name: 'behind', version: '1' })
    server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
    const http = streamableHttp()
    await server.listen(http)
    cleanup.push(() => server.close())
    // Another origin: it records what reaches it.
    const elsewhere: { method?: string; headers: IncomingMessage['headers']; body: string }[] = []
    const other = await listen((request, response, body) => {
      elsewhere.push({ method: request.method, headers: request.headers, body })
      response.writeHead(500).end()
    })
    /** Once true, the front sends every request to the other origin. */
    let isMovedAway = false
    const front = await listen((request, response, body) => {
      if (isMovedAway) return void response.writeHead(307, { location: `${other}/mcp` }).end()
      // /old moved to /mcp on the same origin; /mcp is the server behind.
      if (request.url === '/old') return void response.writeHead(308, { location: '/mcp' }).end()
      return forward(request, response, body, http.url!)
    })

    const client = await connect(streamableHttpClient(`${front}/old`, { headers: { 'x-api-key': 'app-secret' } }), { name: 'spec', version: '1' }, { era: 'legacy' })
    expect(await client.callTool('echo', { text: 'same origin' })).toEqual({ content: [{ type: 'text', text: 'same origin' }] })

    isMovedAway = true
    const failure = await client.callTool('echo', { text: 'moved' }).then(() => undefined, (error: unknown) => error)
    await client.close().catch(() => undefined)
    // Nothing of the session reached the other origin: no request at all.
    expect(elsewhere).toEqual([])
    expect(failure instanceof TransportError || failure instanceof ConnectionClosedError).toBe(true)
    expect(`${(failure as Error).message} ${((failure as Error).cause as Error | undefined)?.message}`).toMatch(/redirected to http:\/\/127\.0\.0\.1:\d+, another origin: not followed/)
  })
})
