import { createServer as createNodeServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { connect } from '../../actors/client.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { bearerAuth } from '../../auth/server.ts'
import { HttpStatusError, RateLimitedError, TransportError } from '../../lib/jsonrpc/errors.ts'
import { UnauthorizedError } from '../../lib/unauthorized-error.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { freePort } from '../auth/fixtures.ts'

const closers: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of closers.splice(0).reverse()) await close() })

/** What the server saw of each request: its HTTP method and its `Mcp-Method` header (a modern request names its method). */
type Seen = { method: string | undefined; mcpMethod: string | undefined }

function record(seen: Seen[]) {
  return (request: IncomingMessage) => { seen.push({ method: request.method, mcpMethod: request.headers['mcp-method'] as string | undefined }) }
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => { throw new Error('expected a failure') }, (error: unknown) => error)
}

/** An rxmcp server behind bearerAuth on a real HTTP listener; `seen` lists every request it received. */
async function protectedServer(options: Parameters<typeof streamableHttp>[0] = {}): Promise<{ url: string; seen: Seen[] }> {
  const server: McpServer = createServer({ name: 'guarded', version: '1' })
  server.tool('echo', {}, () => ({ content: [] }))
  const port = await freePort()
  const http = streamableHttp({
    port,
    auth: bearerAuth({
      resource: `http://127.0.0.1:${port}/mcp`,
      authorizationServers: ['https://as.example'],
      requiredScopes: ['mcp:read'],
      verify: async token => {
        if (token !== 'reader') throw new Error('unknown token')
        return { subject: 'reader', kind: 'user', scopes: ['mcp:read'] }
      },
    }),
    ...options,
  })
  await server.listen(http)
  closers.push(() => server.close())
  const seen: Seen[] = []
  http.httpServer!.on('request', record(seen))
  return { url: http.url!, seen }
}

/** A plain node:http server answering every request with `status` (and `body`, text/plain). */
async function answering(status: number, body = ''): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createNodeServer((request, response) => {
    record(seen)(request)
    request.resume()
    response.writeHead(status, { 'content-type': 'text/plain' }).end(body)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen }
}

describe('issue 20: a 401 on server/discover falls back to initialize', () => {
  it('rejects connect (era auto) with the UnauthorizedError of the probe, carrying the challenge; the server saw one request and no initialize', async () => {
    const { url, seen } = await protectedServer()
    const error = await failure(connect(streamableHttpClient(url), { name: 'rx', version: '1' }, { era: 'auto' }))
    expect(seen).toEqual([{ method: 'POST', mcpMethod: 'server/discover' }])
    expect(error).toBeInstanceOf(UnauthorizedError)
    const unauthorized = error as UnauthorizedError
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.challenge).toEqual({ scheme: 'bearer', params: { resource_metadata: `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`, scope: 'mcp:read' } })
    expect(unauthorized.resourceMetadataUrl?.href).toBe(`${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`)
  })

  it('still connects with a token, in the modern era, through the same probe', async () => {
    const { url, seen } = await protectedServer()
    const client = await connect(streamableHttpClient(url, { headers: { authorization: 'Bearer reader' } }), { name: 'rx', version: '1' }, { era: 'auto' })
    closers.push(() => client.close())
    expect(client.era).toBe('modern')
    expect(seen[0]).toEqual({ method: 'POST', mcpMethod: 'server/discover' })
  })

  it('fails the handshake on a probe refused for its rate (429 and -31029), without trying initialize', async () => {
    const { url, seen } = await protectedServer({ rateLimit: { capacity: 1, refillPerSecond: 0.001 } })
    const first = await connect(streamableHttpClient(url, { headers: { authorization: 'Bearer reader' } }), { name: 'rx', version: '1' }, { era: 'auto' })
    closers.push(() => first.close())
    seen.length = 0
    const error = await failure(connect(streamableHttpClient(url, { headers: { authorization: 'Bearer reader' } }), { name: 'rx', version: '1' }, { era: 'auto' }))
    expect(error).toBeInstanceOf(RateLimitedError)
    expect(seen).toEqual([{ method: 'POST', mcpMethod: 'server/discover' }])
  })

  it.each([500, 503, 403])('fails the handshake on a probe answered %i without a JSON-RPC body, without trying initialize', async status => {
    const { url, seen } = await answering(status, 'no')
    const error = await failure(connect(streamableHttpClient(url), { name: 'rx', version: '1' }, { era: 'auto' }))
    expect(error).toBeInstanceOf(HttpStatusError)
    expect(error).toBeInstanceOf(TransportError)
    expect(error).not.toBeInstanceOf(UnauthorizedError)
    expect((error as HttpStatusError).status).toBe(status)
    expect(seen).toEqual([{ method: 'POST', mcpMethod: 'server/discover' }])
  })

  it.each([400, 404, 405])('still takes a probe answered %i without a JSON-RPC body for a legacy server, and tries initialize', async status => {
    const { url, seen } = await answering(status, 'not here')
    await failure(connect(streamableHttpClient(url), { name: 'rx', version: '1' }, { era: 'auto' }))
    expect(seen[0]).toEqual({ method: 'POST', mcpMethod: 'server/discover' })
    // The initialize POST (no Mcp-Method) follows the probe; a 404 or 405 to it then tries HTTP+SSE (a GET).
    expect(seen[1]).toEqual({ method: 'POST', mcpMethod: undefined })
  })
})
