import { createServer as createNodeServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { sseClient, streamableHttpClient } from '../../transports/http-client.ts'
import { connect } from '../../actors/client.ts'
import { bearerAuth } from '../../auth/server.ts'
import { LocalErrorCode, TransportError } from '../../lib/jsonrpc/errors.ts'
import { UnauthorizedError } from '../../index.ts'
import type { McpServer } from '../../actors/server.ts'
import { freePort } from '../auth/fixtures.ts'

/** Servers started by a test, closed after it. */
const closers: Array<() => Promise<void>> = []
afterEach(async () => { for (const close of closers.splice(0)) await close() })

/** The everything server behind bearerAuth: no token gets 401; the token 'reader' may not call tools (403 insufficient_scope). */
async function protectedServer(): Promise<{ url: string }> {
  const server: McpServer = createEverythingServer()
  const port = await freePort()
  const http = streamableHttp({
    port,
    auth: bearerAuth({
      resource: `http://127.0.0.1:${port}/mcp`,
      authorizationServers: ['https://as.example'],
      requiredScopes: ['mcp:read'],
      scopes: { 'tools/call': ['mcp:write'] },
      verify: async token => {
        if (token !== 'reader') throw new Error('unknown token')
        return { subject: 'reader', kind: 'user', scopes: ['mcp:read'] }
      },
    }),
  })
  await server.listen(http)
  closers.push(() => server.close())
  return { url: http.url! }
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => { throw new Error('expected a failure') }, (error: unknown) => error)
}

describe('issue 20: a 401 from a server without an auth provider is a bare TransportError', () => {
  it.each(['legacy' as const, 'modern' as const, 'auto' as const])('fails connect with UnauthorizedError carrying the status, the challenge and the resource metadata URL (%s era)', async era => {
    const { url } = await protectedServer()
    const error = await failure(connect(streamableHttpClient(url), { name: 'rx', version: '1' }, { era }))
    expect(error).toBeInstanceOf(UnauthorizedError)
    // Still a TransportError for code that handles those.
    expect(error).toBeInstanceOf(TransportError)
    const unauthorized = error as UnauthorizedError
    expect(unauthorized.name).toBe('UnauthorizedError')
    expect(unauthorized.code).toBe(LocalErrorCode.Unauthorized)
    expect(unauthorized.code).toBe('RXMCP_ERR_UNAUTHORIZED')
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.message).toBe(`POST ${url} answered 401: authorization required`)
    expect(unauthorized.challenge).toEqual({ scheme: 'bearer', params: { resource_metadata: `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`, scope: 'mcp:read' } })
    expect(unauthorized.resourceMetadataUrl?.href).toBe(`${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`)
  })

  it('fails a call with UnauthorizedError 403 when the token lacks the scope (insufficient_scope)', async () => {
    const { url } = await protectedServer()
    const client = await connect(streamableHttpClient(url, { headers: { authorization: 'Bearer reader' } }), { name: 'rx', version: '1' }, { era: 'legacy' })
    closers.push(() => client.close())
    const error = await failure(client.callTool('echo', { text: 'x' }))
    expect(error).toBeInstanceOf(UnauthorizedError)
    const unauthorized = error as UnauthorizedError
    expect(unauthorized.status).toBe(403)
    expect(unauthorized.challenge?.params).toMatchObject({ error: 'insufficient_scope', scope: 'mcp:read mcp:write' })
    expect(unauthorized.message).toBe(`POST ${url} answered 403 (insufficient_scope): authorization required`)
  })

  it('resolves a relative resource_metadata against the endpoint, and fails a legacy SSE GET with it too', async () => {
    const server = createNodeServer((request, response) => {
      response.writeHead(401, { 'www-authenticate': 'Bearer realm="mcp", error="invalid_token", resource_metadata="/.well-known/oauth-protected-resource/sse"', 'content-type': 'text/plain' })
      response.end('no')
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    closers.push(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`
    const error = await failure(connect(sseClient(url), { name: 'rx', version: '1' }, { era: 'legacy' }))
    expect(error).toBeInstanceOf(UnauthorizedError)
    const unauthorized = error as UnauthorizedError
    expect(unauthorized.message).toBe(`GET ${url} answered 401 (invalid_token): authorization required`)
    expect(unauthorized.challenge).toEqual({ scheme: 'bearer', params: { realm: 'mcp', error: 'invalid_token', resource_metadata: '/.well-known/oauth-protected-resource/sse' } })
    expect(unauthorized.resourceMetadataUrl?.href).toBe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/oauth-protected-resource/sse`)
  })

  it('keeps other refusals plain TransportErrors (a 403 without insufficient_scope)', async () => {
    const server = createNodeServer((request, response) => { response.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden') })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    closers.push(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
    const error = await failure(connect(streamableHttpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), { name: 'rx', version: '1' }, { era: 'legacy' }))
    expect(error).toBeInstanceOf(TransportError)
    expect(error).not.toBeInstanceOf(UnauthorizedError)
  })
})
