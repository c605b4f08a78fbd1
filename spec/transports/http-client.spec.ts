import { describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { connect } from '../../actors/client.ts'
import { ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'

describe('streamableHttpClient', () => {
  it('starts a new session transparently when the server forgets the old one', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      const transport = streamableHttpClient(http.url!)
      const client = await connect(transport, { name: 'rx', version: '1' })
      const first = transport.sessionId
      // The server loses every session, as after a restart.
      for (const session of [...server.sessions]) await session.close()
      expect(await client.callTool('echo', { text: 'again' })).toEqual({ content: [{ type: 'text', text: 'again' }] })
      expect(transport.sessionId).not.toBe(first)
      expect(transport.sessionId).toBeDefined()
      await client.close()
    } finally {
      await server.close()
    }
  })

  it('closes with ConnectionClosedError on 404 when told not to reinitialize', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      const client = await connect(streamableHttpClient(http.url!, { reinitializeOnExpiry: false }), { name: 'rx', version: '1' })
      for (const session of [...server.sessions]) await session.close()
      await expect(client.callTool('echo', { text: 'x' })).rejects.toBeInstanceOf(ConnectionClosedError)
    } finally {
      await server.close()
    }
  })

  it('sends MCP-Protocol-Version and the session id, and DELETEs the session on close', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    const seen: { method: string; version: string | null; session: string | null }[] = []
    const spy: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers)
      seen.push({ method: init?.method ?? 'GET', version: headers.get('mcp-protocol-version'), session: headers.get('mcp-session-id') })
      return fetch(input, init)
    }
    try {
      const client = await connect(streamableHttpClient(http.url!, { fetch: spy }), { name: 'rx', version: '1' })
      await client.callTool('echo', { text: 'x' })
      await client.close()
      expect(seen[0]).toEqual({ method: 'POST', version: null, session: null })
      expect(seen.at(-2)).toMatchObject({ method: 'POST', version: '2025-11-25', session: expect.any(String) })
      expect(seen.at(-1)).toMatchObject({ method: 'DELETE', session: expect.any(String) })
      expect(seen.some(request => request.method === 'GET')).toBe(true)
      await new Promise(resolve => setTimeout(resolve, 20))
      expect(http.sessionCount).toBe(0)
    } finally {
      await server.close()
    }
  })
})
