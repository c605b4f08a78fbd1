import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { sseClient, streamableHttpClient } from '../../transports/http-client.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { memoryTokenStore, oauthFetch, oauthWebSocketHeaders } from '../../auth/client.ts'
import { websocket } from '../../transports/websocket.ts'
import { websocketClient } from '../../transports/websocket-client.ts'
import { createServer as createHttpServer } from 'node:http'
import { freePort } from './fixtures.ts'
import { actAsUser, startAuthorizationServer, type TestAuthorizationServer } from './oidc.ts'

/**
 * The whole of MCP authorization against a real, certified authorization server (oidc-provider):
 * our client discovers it from our protected server, registers (DCR), sends the user through the
 * login and consent forms, calls a tool with the JWT it gets, refreshes it, and is refused by a
 * server that is not the token's audience.
 */
let as: TestAuthorizationServer
const servers: McpServer[] = []

async function protectedServer(issuer: string, jwksUri: string) {
  const port = await freePort()
  const resource = `http://127.0.0.1:${port}/mcp`
  const server = createServer({ name: 'protected', version: '1' })
  server.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: `${ctx.principal?.subject} ${ctx.principal?.scopes.join(',')}` }] }))
  const http = streamableHttp({
    port,
    auth: bearerAuth({ resource, authorizationServers: [issuer], scopesSupported: ['mcp'], requiredScopes: ['mcp'], verify: jwtVerifier({ issuer, jwksUrl: jwksUri }) }),
  })
  await server.listen(http)
  servers.push(server)
  return { url: http.url!, resource }
}

beforeAll(async () => { as = await startAuthorizationServer({ scopes: 'mcp' }) })
afterAll(async () => {
  for (const server of servers) await server.close()
  await as?.close()
})

describe('our client and server with oidc-provider', () => {
  it('discovers, registers, authorizes through the login and consent forms, calls, refreshes, and is refused on the wrong audience', async () => {
    const { url, resource } = await protectedServer(as.issuer, as.jwksUri)
    const redirectUri = 'http://127.0.0.1:9/callback'
    const seen: URL[] = []
    let now = Date.now()
    const tokenStore = memoryTokenStore()
    const authorized = oauthFetch({
      redirectUri,
      redirect: async authorizationUrl => { seen.push(authorizationUrl); return actAsUser(authorizationUrl, redirectUri) },
      clientMetadata: { client_name: 'rxmcp test' },
      // Bearer tokens here (oidc-provider also offers DPoP, tested below), so that the audience check stands alone.
      dpop: false,
      tokenStore,
      now: () => now,
    })
    const client = await connect(streamableHttpClient(url, { fetch: authorized }), { name: 'c', version: '1' })
    try {
      const result = await client.callTool('whoami', {})
      expect((result.content[0] as { text: string }).text).toBe('alice mcp')
      // One authorization, with PKCE S256 and the resource indicator, asking for the challenge's scope.
      expect(seen).toHaveLength(1)
      expect(seen[0]!.searchParams.get('code_challenge_method')).toBe('S256')
      expect(seen[0]!.searchParams.get('resource')).toBe(resource)
      expect(seen[0]!.searchParams.get('scope')).toContain('mcp')
      const first = await tokenStore.get(resource)
      expect(first?.refreshToken).toEqual(expect.any(String))
      expect(first?.tokenType).toBe('bearer')
      // An hour later the access token is about to expire: the client refreshes without the user.
      now += 3600_000
      expect(((await client.callTool('whoami', {})).content[0] as { text: string }).text).toBe('alice mcp')
      expect(seen).toHaveLength(1)
      const second = await tokenStore.get(resource)
      expect(second?.accessToken).not.toBe(first?.accessToken)
      // The token names this server as its audience: another protected server refuses it.
      const other = await protectedServer(as.issuer, as.jwksUri)
      const refused = await fetch(other.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${second!.accessToken}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      })
      expect(refused.status).toBe(401)
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
    } finally {
      await client.close()
    }
  })

  it('gets a DPoP-bound token where the authorization server offers DPoP, presents it with a proof, and the same token without its key is refused', async () => {
    const { url, resource } = await protectedServer(as.issuer, as.jwksUri)
    const redirectUri = 'http://127.0.0.1:9/callback'
    const tokenStore = memoryTokenStore()
    const authorized = oauthFetch({ redirectUri, redirect: authorizationUrl => actAsUser(authorizationUrl, redirectUri, 'bob'), tokenStore })
    const client = await connect(streamableHttpClient(url, { fetch: authorized }), { name: 'c', version: '1' })
    try {
      expect(((await client.callTool('whoami', {})).content[0] as { text: string }).text).toBe('bob mcp')
      const tokens = await tokenStore.get(resource)
      expect(tokens?.tokenType).toBe('dpop')
      // A stolen DPoP-bound token, sent as a bearer token or with no proof: refused.
      for (const authorization of [`Bearer ${tokens!.accessToken}`, `DPoP ${tokens!.accessToken}`]) {
        const stolen = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
        })
        expect(stolen.status, authorization.split(' ')[0]).toBe(401)
      }
    } finally {
      await client.close()
    }
  })

  it('authorizes a WebSocket client with the same provider (oauthWebSocketHeaders), discovering from the HTTP endpoint on the same port', async () => {
    const port = await freePort()
    const resource = `http://127.0.0.1:${port}/mcp`
    const server = createServer({ name: 'protected-ws', version: '1' })
    server.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: `${ctx.principal?.subject} ${ctx.principal?.scopes.join(',')}` }] }))
    const auth = bearerAuth({ resource, authorizationServers: [as.issuer], scopesSupported: ['mcp'], requiredScopes: ['mcp'], verify: jwtVerifier({ issuer: as.issuer, jwksUrl: as.jwksUri }) })
    const http = streamableHttp({ auth })
    const ws = websocket({ auth })
    const node = createHttpServer(http.nodeHandler)
    ws.attach(node)
    await new Promise<void>(resolve => node.listen(port, '127.0.0.1', resolve))
    await server.listen(http)
    await server.listen(ws)
    servers.push(server)
    try {
      const redirectUri = 'http://127.0.0.1:9/callback'
      const authorized = oauthFetch({ redirectUri, redirect: authorizationUrl => actAsUser(authorizationUrl, redirectUri, 'carol') })
      const wsUrl = `ws://127.0.0.1:${port}/mcp`
      await expect(connect(websocketClient(wsUrl), { name: 'c', version: '1' })).rejects.toThrow(/401/)
      const client = await connect(websocketClient(wsUrl, { headers: oauthWebSocketHeaders(authorized, wsUrl) }), { name: 'c', version: '1' })
      expect(((await client.callTool('whoami', {})).content[0] as { text: string }).text).toBe('carol mcp')
      await client.close()
    } finally {
      await server.close()
      node.closeAllConnections()
      await new Promise<void>(resolve => node.close(() => resolve()))
    }
  })

  it('authorizes a legacy HTTP+SSE client when the resource is the server\'s origin (both /mcp and /sse under it)', async () => {
    const port = await freePort()
    const resource = `http://127.0.0.1:${port}/`
    const server = createServer({ name: 'protected-sse', version: '1' })
    server.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: `${ctx.principal?.subject}` }] }))
    const http = streamableHttp({ port, auth: bearerAuth({ resource, authorizationServers: [as.issuer], scopesSupported: ['mcp'], verify: jwtVerifier({ issuer: as.issuer, jwksUrl: as.jwksUri }) }) })
    await server.listen(http)
    servers.push(server)
    const redirectUri = 'http://127.0.0.1:9/callback'
    const authorized = oauthFetch({ redirectUri, redirect: authorizationUrl => actAsUser(authorizationUrl, redirectUri, 'dana') })
    const client = await connect(sseClient(`http://127.0.0.1:${port}/sse`, { fetch: authorized }), { name: 'c', version: '1' })
    try {
      expect(((await client.callTool('whoami', {})).content[0] as { text: string }).text).toBe('dana')
    } finally {
      await client.close()
    }
  })
})
