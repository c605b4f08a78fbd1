import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { audit, type AuditEntry } from '../../actors/server/middleware.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier, principalFromClaims } from '../../auth/verifiers.ts'
import { principalKey, type Principal } from '../../lib/auth.ts'
import { freePort } from './fixtures.ts'
import { events, messages } from '../helpers/sse-events.ts'

const ISSUER = 'https://issuer.test'
const ACCEPT = 'application/json, text/event-stream'
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const LIST = { jsonrpc: '2.0', id: 5, method: 'tools/list' }

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

/** An issuer whose tokens carry exactly the claims given: `sub` only when asked (a client-credentials token has none). */
async function issuer(audience: string) {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
  const jwks = { keys: [{ ...await exportJWK(publicKey), kid: 'k1', alg: 'ES256', use: 'sig' }] }
  const token = (claims: JWTPayload) => new SignJWT({ scope: 'mcp', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(ISSUER).setAudience(audience).setIssuedAt().setExpirationTime('1h')
    .sign(privateKey)
  return { jwks, token }
}

async function protectedServer() {
  const port = await freePort()
  const resource = `http://127.0.0.1:${port}/mcp`
  const { jwks, token } = await issuer(resource)
  const mcp = createServer({ name: 'kinds', version: '1' })
  const audited: AuditEntry[] = []
  mcp.use(audit(entry => audited.push(entry)))
  mcp.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: JSON.stringify({ subject: ctx.principal?.subject, kind: ctx.principal?.kind }) }] }))
  const http = streamableHttp({ port, auth: bearerAuth({ resource, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks }) }) })
  await mcp.listen(http)
  cleanup.push(() => mcp.close())
  return { url: http.url!, token, audited }
}

function post(url: string, body: unknown, token: string, sessionId?: string) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${token}`, ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }) },
    body: JSON.stringify(body),
  })
}

async function openSession(url: string, token: string): Promise<string> {
  const response = await post(url, INIT, token)
  expect(response.status).toBe(200)
  await response.body?.cancel()
  return response.headers.get('mcp-session-id')!
}

describe('issue 20: Principal confusion', () => {
  it('refuses on user alice\'s session a client-credentials token whose client_id is alice, and the reverse', async () => {
    const { url, token, audited } = await protectedServer()
    const user = await token({ sub: 'alice', client_id: 'web-app' })
    const client = await token({ client_id: 'alice' })

    const usersSession = await openSession(url, user)
    const asClient = await post(url, LIST, client, usersSession)
    expect(asClient.status).toBe(404)
    expect(await asClient.json()).toMatchObject({ id: 5, error: { code: -32001 } })
    const asUser = await post(url, LIST, user, usersSession)
    expect(asUser.status).toBe(200)
    expect(messages(await events(asUser))).toMatchObject([{ id: 5, result: { tools: expect.any(Array) } }])

    const clientsSession = await openSession(url, client)
    const asUserOnClients = await post(url, LIST, user, clientsSession)
    expect(asUserOnClients.status).toBe(404)
    expect(await asUserOnClients.json()).toMatchObject({ id: 5, error: { code: -32001 } })
    const asClientOnClients = await post(url, { ...LIST, id: 6, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, client, clientsSession)
    expect(asClientOnClients.status).toBe(200)
    const [answer] = messages(await events(asClientOnClients)) as { result: { content: { text: string }[] } }[]
    expect(JSON.parse(answer!.result.content[0]!.text)).toEqual({ subject: 'alice', kind: 'client' })
    // The audit trail tells them apart too.
    expect(audited.filter(entry => entry.method !== 'initialize').map(entry => entry.principal)).toEqual([
      { subject: 'alice', kind: 'user', clientId: 'web-app' },
      { subject: 'alice', kind: 'client', clientId: 'alice' },
    ])
  })

  it('makes a user principal of a token with sub and a client principal of one without', () => {
    expect(principalFromClaims({ iss: ISSUER, sub: 'alice', client_id: 'app' })).toMatchObject({ subject: 'alice', kind: 'user', clientId: 'app' })
    expect(principalFromClaims({ iss: ISSUER, client_id: 'alice' })).toMatchObject({ subject: 'alice', kind: 'client', clientId: 'alice' })
    expect(principalFromClaims({ iss: ISSUER, sub: '', azp: 'alice' })).toMatchObject({ subject: 'alice', kind: 'client' })
    expect(() => principalFromClaims({ iss: ISSUER })).toThrow('no subject')
  })

  it('keys principals by issuer, kind and subject, with no separator a subject or issuer can forge', () => {
    const of = (issuer: string | undefined, kind: Principal['kind'], subject: string): Principal => ({ subject, scopes: [], ...(issuer === undefined ? {} : { issuer }), ...(kind === undefined ? {} : { kind }) })
    const keys = [
      of(ISSUER, 'user', 'alice'), of(ISSUER, 'client', 'alice'), of(ISSUER, undefined, 'alice'), of(undefined, 'user', 'alice'), of('', 'user', 'alice'),
      of('a\u0000b', 'user', 'c'), of('a', 'user', 'b\u0000c'), of('a","user', 'user', 'c'), of('a', 'user', '","user","c'),
    ].map(principalKey)
    expect(new Set(keys).size).toBe(keys.length)
    expect(principalKey(undefined)).toBe('')
    // A refreshed token of the same subject keeps the key.
    expect(principalKey({ ...of(ISSUER, 'user', 'alice'), scopes: ['more'] })).toBe(keys[0])
  })
})
