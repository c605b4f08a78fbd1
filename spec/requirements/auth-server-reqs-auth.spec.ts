import { afterEach, describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { bearerAuth, InvalidTokenError } from '../../auth/server.ts'
import { connect } from '../../actors/client.ts'
import { createServer } from '../../actors/server.ts'
import { requireScopes } from '../../actors/server/middleware.ts'
import { createHost } from '../../host/host.ts'
import { hostServer } from '../../host/gateway.ts'
import { parseHostConfig } from '../../lib/host-config.ts'
import { missingScopes, type Authenticator, type Principal } from '../../lib/auth.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { freePort } from '../auth/fixtures.ts'
import { events, messages } from '../helpers/sse-events.ts'
import { verifies } from '../helpers/verifies.ts'

/**
 * The resource server's MUSTs no other spec asserted: scope hierarchies when deciding whether a
 * token suffices (2026-07-28), no token passed through to the servers behind the gateway, and
 * elicitation requests bound to the client and user who caused them (legacy era; the modern one's
 * requestState binding is asserted in spec/auth/server.spec.ts). Each over a real Streamable HTTP
 * listener on 127.0.0.1.
 */

const ACCEPT = 'application/json, text/event-stream'
const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

/** The tokens the tests' verifier knows: each one's subject and scopes. */
const TOKENS: Readonly<Record<string, { subject: string; scopes: string[] }>> = {
  'alice': { subject: 'alice', scopes: [] },
  'bob': { subject: 'bob', scopes: [] },
  'alice-read': { subject: 'alice', scopes: ['files:read'] },
  'alice-write': { subject: 'alice', scopes: ['files:write'] },
  'alice-admin': { subject: 'alice', scopes: ['admin'] },
  'alice-other': { subject: 'alice', scopes: ['other'] },
  'alice-tools': { subject: 'alice', scopes: ['tools'] },
  'caller-secret-token': { subject: 'caller', scopes: [] },
}

/** A verifier for tests: a token of {@link TOKENS} stands for its subject with its scopes; any other is invalid. */
const verify = async (token: string): Promise<Principal> => {
  const known = TOKENS[token]
  if (known === undefined || !Object.hasOwn(TOKENS, token)) throw new InvalidTokenError('unknown token')
  return { ...known, kind: 'user', issuer: 'https://as.example' }
}

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(body) })
}

describe('scope hierarchies decide whether a token suffices', () => {
  const hierarchy = { admin: ['files:write'], 'files:write': ['files:read'] }

  async function filesServer(withHierarchy: boolean) {
    const port = await freePort()
    const resource = `http://127.0.0.1:${port}/mcp`
    const server = createServer({ name: 'files', version: '1' })
    const scopesOf = (ctx: { principal?: Principal }) => ({ content: [{ type: 'text' as const, text: [...ctx.principal?.scopes ?? []].sort().join(' ') }] })
    server.tool('read_file', {}, (_args, ctx) => scopesOf(ctx))
    server.tool('write_file', {}, (_args, ctx) => scopesOf(ctx))
    const auth = bearerAuth({
      resource, authorizationServers: ['https://as.example'], verify,
      scopes: { 'tools/call:read_file': ['files:read'], 'tools/call:write_file': ['files:write'] },
      ...(withHierarchy ? { scopeHierarchy: hierarchy } : {}),
    })
    const http = streamableHttp({ port, auth })
    await server.listen(http)
    cleanup.push(() => server.close())
    const call = async (token: string, tool: string) => {
      const client = await connect(streamableHttpClient(http.url!, { headers: { authorization: `Bearer ${token}` } }), { name: 'spec', version: '1' })
      try {
        const result = await client.callTool(tool, {})
        return (result.content[0] as { text: string }).text
      } finally {
        await client.close()
      }
    }
    return { url: http.url!, call }
  }

  verifies('auth:scope-hierarchy@2026-07-28', 'lets a broader scope through where a narrower one it implies is needed, transitively, and hands the handler the implied scopes', async () => {
    const { call } = await filesServer(true)
    expect(await call('alice-write', 'read_file')).toBe('files:read files:write')
    expect(await call('alice-admin', 'read_file')).toBe('admin files:read files:write')
    expect(await call('alice-admin', 'write_file')).toBe('admin files:read files:write')
    // Implication goes one way: the narrower scope does not grant the broader one.
    await expect(call('alice-read', 'write_file')).rejects.toThrow(/403/)
    // The same rule for other transports, through the middleware and missingScopes.
    expect(missingScopes({ subject: 'a', scopes: ['admin'] }, ['files:read', 'files:write'], hierarchy)).toEqual([])
    expect(missingScopes({ subject: 'a', scopes: ['files:read'] }, ['files:write'], hierarchy)).toEqual(['files:write'])
    expect(requireScopes({ 'tools/call': ['files:read'] }, hierarchy)).toBeTypeOf('function')
  })

  verifies('auth:scope-hierarchy@2026-07-28', 'names the needed scope in the 403 challenge when the token holds neither it nor one implying it', async () => {
    const { url } = await filesServer(true)
    const initialize = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, { authorization: 'Bearer alice-other' })
    const sessionId = initialize.headers.get('mcp-session-id')!
    await initialize.body?.cancel()
    const refused = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: {} } }, { authorization: 'Bearer alice-other', 'mcp-session-id': sessionId })
    expect(refused.status).toBe(403)
    expect(refused.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="files:read"/)
  })

  it('refuses a broader scope where no hierarchy is declared (a scope grants only itself by default)', async () => {
    const { call } = await filesServer(false)
    await expect(call('alice-admin', 'read_file')).rejects.toThrow(/403/)
    expect(await call('alice-read', 'read_file')).toBe('files:read')
  })
})

describe('reqs-auth: scope rules read Object.prototype for a method named like one of its members', () => {
  it('answers a request for `constructor`, `toString` or `__proto__` as any unknown method, not with 500', async () => {
    const port = await freePort()
    const server = createServer({ name: 'rules', version: '1' })
    const http = streamableHttp({ port, auth: bearerAuth({ resource: `http://127.0.0.1:${port}/mcp`, authorizationServers: ['https://as.example'], verify, scopes: { 'tools/call': ['tools'] } }) })
    await server.listen(http)
    cleanup.push(() => server.close())
    const initialize = await post(http.url!, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, { authorization: 'Bearer alice-tools' })
    const sessionId = initialize.headers.get('mcp-session-id')!
    await initialize.body?.cancel()
    await (await post(http.url!, { jsonrpc: '2.0', method: 'notifications/initialized' }, { authorization: 'Bearer alice-tools', 'mcp-session-id': sessionId })).body?.cancel()
    for (const [id, method] of [[1, 'constructor'], [2, 'toString'], [3, '__proto__']] as const) {
      const response = await post(http.url!, { jsonrpc: '2.0', id, method }, { authorization: 'Bearer alice-tools', 'mcp-session-id': sessionId })
      expect(response.status, method).toBe(200)
      expect(messages(await events(response))).toMatchObject([{ id, error: { code: -32601 } }])
    }
  })
})

describe('the gateway does not pass the caller\'s token through', () => {
  for (const id of ['auth:no-passthrough', 'auth:no-passthrough@2026-07-28'] as const) {
    verifies(id, 'calls the server behind with the credentials of its own configuration, never with the token its caller sent', async () => {
      // The server behind records the Authorization header of every request it gets.
      const seen: (string | null)[] = []
      const recording: Authenticator = {
        authenticate: async request => {
          seen.push(request.header('authorization'))
          return { type: 'allow', principal: { subject: 'gateway', scopes: [] } }
        },
      }
      const behind = createServer({ name: 'behind', version: '1' })
      behind.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
      const behindHttp = streamableHttp({ auth: recording })
      await behind.listen(behindHttp)
      cleanup.push(() => behind.close())

      const host = createHost(parseHostConfig({ mcpServers: { down: { type: 'http', url: behindHttp.url!, headers: { Authorization: 'Bearer gateway-own-credential' } } } }))
      cleanup.push(() => host.close())
      await firstValueFrom(host.tools.pipe(filter(tools => tools.some(tool => tool.name === 'down__echo'))))
      const port = await freePort()
      const gateway = hostServer(host)
      const gatewayHttp = streamableHttp({ port, auth: bearerAuth({ resource: `http://127.0.0.1:${port}/mcp`, authorizationServers: ['https://as.example'], verify }) })
      await gateway.server.listen(gatewayHttp)
      cleanup.push(() => gateway.close())

      for (const era of ['legacy', 'modern'] as const) {
        const client = await connect(streamableHttpClient(gatewayHttp.url!, { headers: { authorization: 'Bearer caller-secret-token' } }), { name: 'spec', version: '1' }, { era })
        expect(await client.callTool('down__echo', { text: `through the gateway (${era})` })).toEqual({ content: [{ type: 'text', text: `through the gateway (${era})` }] })
        await client.close()
      }
      expect(seen.length).toBeGreaterThan(2)
      expect(new Set(seen)).toEqual(new Set(['Bearer gateway-own-credential']))
    })
  }
})

describe('elicitation requests are bound to the client and user who caused them (legacy era)', () => {
  verifies('elicitation:bind-identity', 'sends the elicitation on the session of the user whose call asked, and takes its answer from that user on that session only', async () => {
    const port = await freePort()
    const server = createServer({ name: 'asker', version: '1' })
    server.tool('ask', {}, async (_args, ctx) => {
      const answer = await ctx.elicit({ message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
      return { content: [{ type: 'text', text: `${ctx.principal?.subject}:${JSON.stringify(answer.content)}` }] }
    })
    const http = streamableHttp({ port, auth: bearerAuth({ resource: `http://127.0.0.1:${port}/mcp`, authorizationServers: ['https://as.example'], verify }) })
    await server.listen(http)
    cleanup.push(() => server.close())
    const url = http.url!
    /** A session of `token`'s user that declared form elicitation: its id. */
    const session = async (token: string) => {
      const response = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'raw', version: '1' } } }, { authorization: `Bearer ${token}` })
      const id = response.headers.get('mcp-session-id')!
      await response.body?.cancel()
      await (await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { authorization: `Bearer ${token}`, 'mcp-session-id': id })).body?.cancel()
      return id
    }
    const alice = await session('alice')
    const bob = await session('bob')
    const call = await post(url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ask', arguments: {} } }, { authorization: 'Bearer alice', 'mcp-session-id': alice })
    const reader = call.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    // The elicitation comes on the stream of alice's own call.
    while (!text.includes('elicitation/create')) text += decoder.decode((await reader.read()).value, { stream: true })
    const request = JSON.parse(/data: (\{.*"elicitation\/create".*\})/.exec(text)![1]!) as { id: number | string }
    const answer = (name: string) => ({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { name } } })

    // Bob with alice's session: the session does not exist for him.
    const onAlicesSession = await post(url, answer('mallory'), { authorization: 'Bearer bob', 'mcp-session-id': alice })
    expect(onAlicesSession.status).toBe(404)
    await onAlicesSession.body?.cancel()
    // Bob on his own session: no request of his session has that id, so nothing is answered.
    await (await post(url, answer('mallory'), { authorization: 'Bearer bob', 'mcp-session-id': bob })).body?.cancel()
    // Alice answers on her session: her call completes with her answer, and only hers.
    const accepted = await post(url, answer('Alice'), { authorization: 'Bearer alice', 'mcp-session-id': alice })
    expect(accepted.status).toBe(202)
    while (!text.includes('"id":7')) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    await reader.cancel()
    expect(text).toContain('alice:{\\"name\\":\\"Alice\\"}')
    expect(text).not.toContain('mallory')
  })
})
