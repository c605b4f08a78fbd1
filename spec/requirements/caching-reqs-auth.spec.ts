import { afterEach, describe, expect } from 'vitest'
import { headlessRedirect, memoryTokenStore, oauthFetch, type TokenSet } from '../../auth/client.ts'
import { bearerAuth, InvalidTokenError } from '../../auth/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { createServer } from '../../actors/server.ts'
import { credentialContext } from '../../lib/authorization-context.ts'
import type { Principal } from '../../lib/auth.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { websocket } from '../../transports/websocket.ts'
import { websocketClient } from '../../transports/websocket-client.ts'
import { freePort } from '../auth/fixtures.ts'
import { verifies } from '../helpers/verifies.ts'

/**
 * MCP 2026-07-28 caching: a `private` result MAY be reused in the authorization context it came in,
 * and caches MUST NOT be shared across authorization contexts (a different access token needs a
 * different cache). The rxmcp client with its cache on, against a real server behind bearerAuth
 * on 127.0.0.1 whose tools/list is private and prompts/list public; the server records who asked.
 */

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

const SUBJECTS: Readonly<Record<string, string>> = { 'alice-token': 'alice', 'bob-token': 'bob' }
const verify = async (token: string): Promise<Principal> => {
  if (!Object.hasOwn(SUBJECTS, token)) throw new InvalidTokenError('unknown token')
  return { subject: SUBJECTS[token]!, kind: 'user', scopes: [] }
}
const tokens = (accessToken: string): TokenSet => ({ accessToken, tokenType: 'bearer', issuer: 'https://as.example', clientId: 'c' })

/** The server, on HTTP and WebSocket at one port; `asked` lists `<method> <subject>` of every list request it served. */
async function privateListsServer() {
  const port = await freePort()
  const resource = `http://127.0.0.1:${port}/mcp`
  const asked: string[] = []
  const server = createServer({ name: 'lists', version: '1' }, {
    cacheHints: { 'tools/list': { ttlMs: 60_000, cacheScope: 'private' }, 'prompts/list': { ttlMs: 60_000, cacheScope: 'public' } },
  })
  server.use(next => (request, ctx) => {
    if (request.method.endsWith('/list')) asked.push(`${request.method} ${ctx.principal?.subject}`)
    return next(request, ctx)
  })
  server.tool('mine', {}, () => ({ content: [] }))
  server.prompt('hello', {}, () => ({ messages: [] }))
  const auth = bearerAuth({ resource, authorizationServers: ['https://as.example'], verify })
  const http = streamableHttp({ port, auth })
  await server.listen(http)
  const wsPort = await freePort()
  await server.listen(websocket({ port: wsPort, auth: bearerAuth({ resource: `http://127.0.0.1:${wsPort}/mcp`, authorizationServers: ['https://as.example'], verify }) }))
  cleanup.push(() => server.close())
  return { url: http.url!, resource, wsUrl: `ws://127.0.0.1:${wsPort}/mcp`, asked }
}

async function modernClient(transport: Parameters<typeof connect>[0]): Promise<McpClient> {
  const client = await connect(transport, { name: 'spec', version: '1' }, { era: 'modern', cache: true })
  cleanup.push(() => client.close())
  return client
}

describe('the client cache is per authorization context', () => {
  verifies('caching:per-authorization@2026-07-28', 'serves a private result only to requests sent with the access token it came with, and a public one to any', async () => {
    const { url, resource, asked } = await privateListsServer()
    const tokenStore = memoryTokenStore()
    await tokenStore.set(resource, tokens('alice-token'))
    const client = await modernClient(streamableHttpClient(url, { fetch: oauthFetch({ tokenStore, redirect: headlessRedirect(), redirectUri: 'http://127.0.0.1:9/cb' }) }))
    await client.listTools()
    await client.listTools()
    await client.listPrompts()
    await client.listPrompts()
    expect(asked).toEqual(['tools/list alice', 'prompts/list alice'])

    // Another access token (a new authorization, another user): alice's private listing is not bob's.
    await tokenStore.set(resource, tokens('bob-token'))
    await client.listTools()
    await client.listTools()
    await client.listPrompts()
    expect(asked).toEqual(['tools/list alice', 'prompts/list alice', 'tools/list bob'])

    // Back with alice's token: the entry is bob's now, so hers is asked for again.
    await tokenStore.set(resource, tokens('alice-token'))
    await client.listTools()
    expect(asked.at(-1)).toBe('tools/list alice')
  })

  verifies('caching:per-authorization@2026-07-28', 'keeps nothing private when the transport cannot name the context (a fetch of the application\'s that adds its own credential), unless the fetch names it', async () => {
    const { url, asked } = await privateListsServer()
    let token = 'alice-token'
    const addsToken: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set('authorization', `Bearer ${token}`)
      return fetch(input, { ...init, headers })
    }
    const unnamed = await modernClient(streamableHttpClient(url, { fetch: addsToken }))
    await unnamed.listTools()
    token = 'bob-token'
    await unnamed.listTools()
    await unnamed.listPrompts()
    await unnamed.listPrompts()
    expect(asked).toEqual(['tools/list alice', 'tools/list bob', 'prompts/list bob'])

    asked.length = 0
    token = 'alice-token'
    const named = Object.assign(addsToken, { authorizationContext: () => credentialContext(token) })
    const client = await modernClient(streamableHttpClient(url, { fetch: named }))
    await client.listTools()
    await client.listTools()
    token = 'bob-token'
    await client.listTools()
    expect(asked).toEqual(['tools/list alice', 'tools/list bob'])
  })

  verifies('caching:per-authorization@2026-07-28', 'does not serve a private result across a reconnection made with another token (WebSocket headers per connection)', async () => {
    const { wsUrl, asked } = await privateListsServer()
    let token = 'alice-token'
    /** The transports made, so the test can drop the first as a network failure would. */
    const made: ReturnType<typeof websocketClient>[] = []
    const client = await connect(() => {
      const transport = websocketClient(wsUrl, { headers: () => ({ authorization: `Bearer ${token}` }) })
      made.push(transport)
      return transport
    }, { name: 'spec', version: '1' }, { era: 'modern', cache: true, reconnect: { initial: 1 } })
    cleanup.push(() => client.close())
    await client.listTools()
    await client.listTools()
    expect(asked).toEqual(['tools/list alice'])
    token = 'bob-token'
    // The connection drops; the client reconnects with bob's token, its cache kept.
    await made[0]!.close()
    await client.listTools()
    expect(made).toHaveLength(2)
    expect(asked).toEqual(['tools/list alice', 'tools/list bob'])
  })
})
