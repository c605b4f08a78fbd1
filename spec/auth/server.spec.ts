import { get as httpGet, type IncomingMessage } from 'node:http'
import { createHash, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { websocket } from '../../transports/websocket.ts'
import { websocketClient } from '../../transports/websocket-client.ts'
import { bearerAuth, type BearerAuthOptions } from '../../auth/server.ts'
import { introspectionVerifier, jwtVerifier } from '../../auth/verifiers.ts'
import { freePort, loopbackServer, testIssuer, unsignedToken, type TestIssuer } from './fixtures.ts'
import { events, messages } from '../helpers/sse-events.ts'
import { taskChanges } from '../helpers/task-changes.ts'

const ISSUER = 'https://issuer.test'
const ACCEPT = 'application/json, text/event-stream'
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

/** Our server behind bearerAuth on a known port: its tool `whoami` returns the principal it sees. */
async function protectedServer(options: Partial<BearerAuthOptions> = {}, issuerAudience?: string) {
  const port = await freePort()
  const resource = `http://127.0.0.1:${port}/mcp`
  const issuer = await testIssuer(ISSUER, issuerAudience ?? resource)
  const mcp = createServer({ name: 'protected', version: '1' })
  mcp.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: JSON.stringify({ subject: ctx.principal?.subject, scopes: ctx.principal?.scopes, clientId: ctx.principal?.clientId }) }] }))
  mcp.tool('admin', {}, () => ({ content: [{ type: 'text', text: 'done' }] }))
  const auth = bearerAuth({ resource, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks: issuer.jwks }), scopesSupported: ['mcp', 'admin'], ...options })
  const http = streamableHttp({ port, auth })
  await mcp.listen(http)
  cleanup.push(() => mcp.close())
  return { url: http.url!, resource, issuer, mcp, http, port }
}

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(body) })
}

async function client(url: string, token: string): Promise<McpClient> {
  const mcpClient = await connect(streamableHttpClient(url, { headers: { authorization: `Bearer ${token}` } }), { name: 'c', version: '1' })
  cleanup.push(() => mcpClient.close())
  return mcpClient
}

async function whoami(mcpClient: McpClient): Promise<{ subject?: string; scopes?: string[]; clientId?: string }> {
  const result = await mcpClient.callTool('whoami', {})
  return JSON.parse((result.content[0] as { text: string }).text)
}

describe('bearerAuth on the Streamable HTTP listener', () => {
  it('serves the Protected Resource Metadata at the path-based and root well-known URLs', async () => {
    const { resource, port } = await protectedServer()
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/json')
      expect(await response.json()).toEqual({
        resource, authorization_servers: [ISSUER], bearer_methods_supported: ['header'], scopes_supported: ['mcp', 'admin'],
        dpop_signing_alg_values_supported: ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'],
      })
    }
    expect((await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/other`)).status).toBe(404)
  })

  it('answers a request without a token 401 with a challenge naming the metadata and the required scopes', async () => {
    const { url, port } = await protectedServer({ requiredScopes: ['mcp'] })
    const response = await post(url, INIT)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp", scope="mcp"`)
    // GET and DELETE on the endpoint are guarded too, before the session is even looked at.
    expect((await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'x' } })).status).toBe(401)
    expect((await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': 'x' } })).status).toBe(401)
  })

  it('refuses expired, wrong-audience, wrong-issuer, unsigned, alg-none, tampered and malformed tokens with 401 invalid_token, echoing none of them', async () => {
    const { url, issuer, resource } = await protectedServer()
    const other = await testIssuer(ISSUER, resource)
    const good = await issuer.token()
    const [header, payload] = good.split('.')
    const bad: Record<string, string> = {
      expired: await issuer.token({}, { expiresInSec: -120 }),
      audience: await issuer.token({ aud: 'http://127.0.0.1:1/other' }),
      issuer: await issuer.token({ iss: 'https://evil.test' }),
      unsigned: `${header}.${payload}.`,
      none: unsignedToken({ iss: ISSUER, sub: 'alice', aud: resource, exp: Math.floor(Date.now() / 1000) + 600 }),
      otherKey: await other.token(),
      tampered: `${header}.${Buffer.from(JSON.stringify({ iss: ISSUER, sub: 'root', aud: resource, exp: 9e9, scope: 'admin' })).toString('base64url')}.${good.split('.')[2]}`,
      garbage: 'not-a-jwt',
    }
    for (const [kind, token] of Object.entries(bad)) {
      const response = await post(url, INIT, { authorization: `Bearer ${token}` })
      expect(response.status, kind).toBe(401)
      const challenge = response.headers.get('www-authenticate')!
      expect(challenge, kind).toMatch(/^Bearer error="invalid_token", resource_metadata="[^"]+", error_description="The access token (is invalid|expired)"$/)
      const body = await response.text()
      expect(body, kind).not.toContain(token)
      expect(body, kind).not.toMatch(/at .*\.ts|stack/i)
    }
    expect((await post(url, INIT, { authorization: `Bearer ${bad.expired}` })).headers.get('www-authenticate')).toContain('The access token expired')
    // A header that is not a bearer token at all is a bad request.
    expect((await post(url, INIT, { authorization: 'Bearer a b c' })).status).toBe(400)
  })

  it('puts the principal in the request context, and binds the session to it', async () => {
    const { url, issuer } = await protectedServer()
    const alice = await client(url, await issuer.token({ scope: 'mcp read' }))
    expect(await whoami(alice)).toEqual({ subject: 'alice', scopes: ['mcp', 'read'], clientId: 'test-client' })
    // Another principal naming alice's session: the session does not exist for them.
    const sessionId = await (async () => {
      const response = await post(url, INIT, { authorization: `Bearer ${await issuer.token()}` })
      await response.body?.cancel()
      return response.headers.get('mcp-session-id')!
    })()
    const call = { jsonrpc: '2.0', id: 5, method: 'tools/list' }
    const asBob = await post(url, call, { authorization: `Bearer ${await issuer.token({ sub: 'bob' })}`, 'mcp-session-id': sessionId })
    expect(asBob.status).toBe(404)
    expect(await asBob.json()).toMatchObject({ id: 5, error: { code: -32001 } })
    // Alice with a fresh token of her own (a refresh) keeps her session.
    const asAlice = await post(url, call, { authorization: `Bearer ${await issuer.token({ scope: 'mcp admin' })}`, 'mcp-session-id': sessionId })
    expect(asAlice.status).toBe(200)
    expect(messages(await events(asAlice))).toMatchObject([{ id: 5, result: { tools: expect.any(Array) } }])
  })

  it('answers 403 insufficient_scope naming the scopes an operation needs, and serves it once the token has them (step-up)', async () => {
    const { url, issuer } = await protectedServer({ requiredScopes: ['mcp'], scopes: { 'tools/call:admin': ['admin'] } })
    const token = await issuer.token({ scope: 'mcp' })
    const response = await post(url, INIT, { authorization: `Bearer ${token}` })
    const sessionId = response.headers.get('mcp-session-id')!
    await response.body?.cancel()
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'admin', arguments: {} } }
    const refused = await post(url, call, { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId })
    expect(refused.status).toBe(403)
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", resource_metadata="[^"]+", scope="mcp admin"/)
    // Other tools need no more than the base scope.
    const other = await post(url, { ...call, params: { name: 'whoami', arguments: {} } }, { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId })
    expect(other.status).toBe(200)
    await other.body?.cancel()
    const stepped = await post(url, { ...call, id: 2 }, { authorization: `Bearer ${await issuer.token({ scope: 'mcp admin' })}`, 'mcp-session-id': sessionId })
    expect(messages(await events(stepped))).toMatchObject([{ id: 2, result: { content: [{ text: 'done' }] } }])
    // A token without the base scope is refused at once, whatever it asks.
    expect((await post(url, INIT, { authorization: `Bearer ${await issuer.token({ scope: 'read' })}` })).status).toBe(403)
  })

  it('guards the legacy HTTP+SSE endpoints the same way, and binds their session', async () => {
    const { port, issuer } = await protectedServer()
    const base = `http://127.0.0.1:${port}`
    expect((await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream' } })).status).toBe(401)
    const controller = new AbortController()
    cleanup.push(async () => controller.abort())
    const stream = await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${await issuer.token()}` }, signal: controller.signal })
    expect(stream.status).toBe(200)
    const reader = stream.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    const endpoint = /data: (\S+)/.exec(first)![1]!
    const asBob = await fetch(`${base}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${await issuer.token({ sub: 'bob' })}` }, body: JSON.stringify(INIT) })
    expect(asBob.status).toBe(404)
    const asAnon = await fetch(`${base}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(INIT) })
    expect(asAnon.status).toBe(401)
    const asAlice = await fetch(`${base}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${await issuer.token()}` }, body: JSON.stringify(INIT) })
    expect(asAlice.status).toBe(202)
  })

  it('gives modern-era requests the principal, and refuses a requestState sealed for another principal', async () => {
    const { url, issuer, mcp } = await protectedServer()
    mcp.tool('ask', {}, async (_args, ctx) => {
      const answer = await ctx.elicit({ message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
      return { content: [{ type: 'text', text: `${ctx.principal?.subject}:${JSON.stringify(answer.content)}` }] }
    })
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } }
    const modern = (id: number, params: Record<string, unknown>, token: string) => post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask', arguments: {}, ...params, _meta: meta } },
      { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'ask' })
    const alice = await issuer.token()
    const first = await (await modern(1, {}, alice)).json() as { result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> } }
    expect(first.result.resultType).toBe('input_required')
    const [key] = Object.keys(first.result.inputRequests)
    const retry = { requestState: first.result.requestState, inputResponses: { [key!]: { action: 'accept', content: { name: 'A' } } } }
    const asBob = await (await modern(2, retry, await issuer.token({ sub: 'bob' }))).json() as { error: { code: number } }
    expect(asBob.error.code).toBe(-32602)
    const asAlice = await (await modern(3, retry, alice)).json() as { result: { content: { text: string }[] } }
    expect(asAlice.result.content[0]!.text).toBe('alice:{"name":"A"}')
  })
})

describe('tasks belong to the principal', () => {
  it('a task made by alice is hers in any exchange or session, and unknown to bob', async () => {
    const { url, issuer, mcp } = await protectedServer()
    mcp.tool('job', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'job done' }] }))
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    }
    let id = 0
    const modern = async (token: string, method: string, params: Record<string, unknown>, name: string) => {
      const response = await post(url, { jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: meta } },
        { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name })
      const text = await response.text()
      // One JSON body, or an SSE stream whose last message is the answer.
      const json = text.startsWith('{') ? text : text.split('\n').filter(line => line.startsWith('data: {')).at(-1)!.slice(6)
      return JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number } }
    }
    const alice = await issuer.token()
    const changes = taskChanges(mcp)
    const created = await modern(alice, 'tools/call', { name: 'job', arguments: {} }, 'job')
    const taskId = created.result?.taskId as string
    expect(created.result?.resultType).toBe('task')
    // The task's change to completed is published on the server's bus: then tasks/get says so.
    await changes.reached(taskId, 'completed')
    changes.stop()
    expect((await modern(alice, 'tasks/get', { taskId }, taskId)).result?.status).toBe('completed')
    // Alice with a refreshed token still owns it; bob does not see it.
    expect((await modern(await issuer.token({ scope: 'mcp more' }), 'tasks/get', { taskId }, taskId)).result?.status).toBe('completed')
    expect((await modern(await issuer.token({ sub: 'bob' }), 'tasks/get', { taskId }, taskId)).error?.code).toBe(-32602)
  })
})

describe('DPoP-bound tokens (RFC 9449)', () => {
  it('accepts a bound token with a fresh proof of its key for this request, and refuses replays, other requests, other keys and no proof', async () => {
    const { url, issuer } = await protectedServer()
    const key = await generateKeyPair('ES256', { extractable: true })
    const jwk = await exportJWK(key.publicKey)
    const token = await issuer.token({ cnf: { jkt: await calculateJwkThumbprint(jwk, 'sha256') } })
    const ath = createHash('sha256').update(token).digest('base64url')
    const proof = (claims: Record<string, unknown> = {}, signer = key.privateKey, publicJwk = jwk) =>
      new SignJWT({ htm: 'POST', htu: url, ath, jti: randomUUID(), ...claims }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: publicJwk }).setIssuedAt(typeof claims.iat === 'number' ? claims.iat : undefined).sign(signer)
    const send = (headers: Record<string, string>) => post(url, INIT, headers)
    const fresh = await proof()
    const accepted = await send({ authorization: `DPoP ${token}`, dpop: fresh })
    expect(accepted.status).toBe(200)
    await accepted.body?.cancel()
    const other = await generateKeyPair('ES256', { extractable: true })
    const refusals: Record<string, Record<string, string>> = {
      replayed: { authorization: `DPoP ${token}`, dpop: fresh },
      'as bearer': { authorization: `Bearer ${token}` },
      'no proof': { authorization: `DPoP ${token}` },
      'other method': { authorization: `DPoP ${token}`, dpop: await proof({ htm: 'GET' }) },
      'other url': { authorization: `DPoP ${token}`, dpop: await proof({ htu: 'http://127.0.0.1:1/mcp' }) },
      'other token': { authorization: `DPoP ${token}`, dpop: await proof({ ath: 'x' }) },
      'old proof': { authorization: `DPoP ${token}`, dpop: await proof({ iat: Math.floor(Date.now() / 1000) - 3600 }) },
      'other key': { authorization: `DPoP ${token}`, dpop: await proof({}, other.privateKey, await exportJWK(other.publicKey)) },
    }
    for (const [kind, headers] of Object.entries(refusals)) {
      const response = await send(headers)
      expect(response.status, kind).toBe(401)
      await response.body?.cancel()
    }
  })
})

describe('token verifiers', () => {
  it('jwtVerifier fetches the key set from jwksUrl once and caches each verified token until it expires', async () => {
    const port = await freePort()
    const resource = `http://127.0.0.1:${port}/mcp`
    const issuer = await testIssuer(ISSUER, resource)
    let keyFetches = 0
    const jwks = await loopbackServer((_req, res) => { keyFetches++; res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(issuer.jwks)) })
    cleanup.push(jwks.close)
    let verifications = 0
    const verify = jwtVerifier({ issuer: ISSUER, jwksUrl: `${jwks.url}/jwks` })
    const mcp = createServer({ name: 'p', version: '1' })
    const http = streamableHttp({ port, auth: bearerAuth({ resource, authorizationServers: [ISSUER], verify: (token, ctx) => { verifications++; return verify(token, ctx) } }) })
    await mcp.listen(http)
    cleanup.push(() => mcp.close())
    const token = await issuer.token()
    const mcpClient = await client(http.url!, token)
    await mcpClient.ping()
    await mcpClient.ping()
    expect(keyFetches).toBe(1)
    expect(verifications).toBe(1)
    await (await post(http.url!, INIT, { authorization: `Bearer ${await issuer.token({ sub: 'carol' })}` })).body?.cancel()
    expect(verifications).toBe(2)
    expect(keyFetches).toBe(1)
  })

  it('introspectionVerifier asks the endpoint with its credentials, refuses inactive and foreign-audience tokens, and answers 503 when the endpoint fails', async () => {
    const port = await freePort()
    const resource = `http://127.0.0.1:${port}/mcp`
    const asked: string[] = []
    const introspection = await loopbackServer((req, res, body) => {
      const token = new URLSearchParams(body).get('token')!
      asked.push(token)
      if (req.headers.authorization !== `Basic ${btoa('rs:secret')}`) return res.writeHead(401).end()
      if (token === 'broken') return res.writeHead(500).end()
      const answers: Record<string, object> = {
        good: { active: true, sub: 'dave', scope: 'mcp files', client_id: 'app', aud: resource, exp: Math.floor(Date.now() / 1000) + 60 },
        foreign: { active: true, sub: 'dave', aud: 'https://elsewhere.test/mcp' },
        revoked: { active: false },
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers[token] ?? { active: false }))
    })
    cleanup.push(introspection.close)
    const mcp = createServer({ name: 'p', version: '1' })
    mcp.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: JSON.stringify({ subject: ctx.principal?.subject, scopes: ctx.principal?.scopes, clientId: ctx.principal?.clientId }) }] }))
    const verify = introspectionVerifier({ endpoint: `${introspection.url}/introspect`, clientId: 'rs', clientSecret: 'secret' })
    const http = streamableHttp({ port, auth: bearerAuth({ resource, authorizationServers: [ISSUER], verify }) })
    await mcp.listen(http)
    cleanup.push(() => mcp.close())
    const dave = await client(http.url!, 'good')
    expect(await whoami(dave)).toEqual({ subject: 'dave', scopes: ['mcp', 'files'], clientId: 'app' })
    expect(asked.filter(token => token === 'good')).toHaveLength(1)
    for (const token of ['foreign', 'revoked']) expect((await post(http.url!, INIT, { authorization: `Bearer ${token}` })).status, token).toBe(401)
    const broken = await post(http.url!, INIT, { authorization: 'Bearer broken' })
    expect(broken.status).toBe(503)
    expect(broken.headers.get('retry-after')).toBe('5')
  })
})

describe('bearerAuth on the WebSocket listener', () => {
  it('refuses an upgrade without a valid token with the challenge, and gives the socket\'s requests the principal', async () => {
    const port = await freePort()
    // The WebSocket endpoint shares the resource URL of the HTTP endpoint on the same port.
    const resource = `http://127.0.0.1:${port}/mcp`
    const issuer: TestIssuer = await testIssuer(ISSUER, resource)
    const mcp = createServer({ name: 'ws', version: '1' })
    mcp.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: JSON.stringify({ subject: ctx.principal?.subject, scopes: ctx.principal?.scopes, clientId: ctx.principal?.clientId }) }] }))
    const ws = websocket({ port, auth: bearerAuth({ resource, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks: issuer.jwks }) }) })
    await mcp.listen(ws)
    cleanup.push(() => mcp.close())
    const refused = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = httpGet(`http://127.0.0.1:${port}/mcp`, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } }, resolve)
      request.on('error', reject)
    })
    refused.resume()
    expect(refused.statusCode).toBe(401)
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/)
    await expect(connect(websocketClient(`ws://127.0.0.1:${port}/mcp`), { name: 'c', version: '1' })).rejects.toThrow()
    const mcpClient = await connect(websocketClient(`ws://127.0.0.1:${port}/mcp`, { headers: { authorization: `Bearer ${await issuer.token({ sub: 'erin' })}` } }), { name: 'c', version: '1' })
    cleanup.push(() => mcpClient.close())
    expect(await whoami(mcpClient)).toMatchObject({ subject: 'erin', scopes: ['mcp'] })
  })
})

export type { StreamableHttpServer }
