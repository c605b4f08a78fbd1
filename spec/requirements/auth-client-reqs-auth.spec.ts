import { randomUUID } from 'node:crypto'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect } from 'vitest'
import { AuthorizationError, AuthorizationErrorCode, headlessRedirect, memoryTokenStore, oauthFetch, oauthWebSocketHeaders, type OAuthFetchOptions } from '../../auth/client.ts'
import { bearerAuth } from '../../auth/server.ts'
import { connect } from '../../actors/client.ts'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { websocket } from '../../transports/websocket.ts'
import { websocketClient, type WebSocketConstructor } from '../../transports/websocket-client.ts'
import { TransportError } from '../../lib/jsonrpc/errors.ts'
import { startHarness, type Harness, type HarnessOptions } from '../auth/client-harness.ts'
import { freePort } from '../auth/fixtures.ts'
import { verifies } from '../helpers/verifies.ts'

/**
 * The OAuth client's MUSTs of the MCP authorization spec (2025-11-25 and 2026-07-28) that no other
 * spec asserted: PKCE support checked in the metadata before anything is sent, redirect URIs,
 * application_type and registration failures, credentials kept per authorization server, tokens
 * only for the server whose authorization server issued them, and never in a URL. Each runs
 * oauthFetch against real HTTP servers on 127.0.0.1 (the fake authorization server and endpoint of
 * client-harness.ts, or the two-authorization-server world below).
 */

const REDIRECT_URI = 'http://127.0.0.1:9/callback'
const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

async function harnessFor(options: HarnessOptions): Promise<Harness> {
  const harness = await startHarness(options)
  cleanup.push(() => harness.close())
  return harness
}

/** POSTs to the harness's endpoint through a fresh oauthFetch (auth code grant, redirects followed at once). */
function callThrough(harness: Harness, options: OAuthFetchOptions = {}) {
  const authorized = oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI, ...options })
  return authorized(harness.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' })
}

/** The AuthorizationError `promise` rejects with. */
async function refusal(promise: Promise<unknown>): Promise<AuthorizationError> {
  const error = await promise.then(() => undefined, (error: unknown) => error)
  expect(error).toBeInstanceOf(AuthorizationError)
  return error as AuthorizationError
}

describe('PKCE support is verified in the metadata before the client proceeds', () => {
  for (const id of ['auth:pkce-support', 'auth:pkce-support@2026-07-28'] as const) {
    verifies(id, 'refuses an authorization server whose metadata lacks code_challenge_methods_supported, or lists no S256, before registering or authorizing', async () => {
      for (const [metadataAt, methods] of [['oauth', undefined], ['oauth', ['plain']], ['oidc-inserted', undefined]] as const) {
        const harness = await harnessFor({ metadataAt, metadata: { code_challenge_methods_supported: methods } })
        const error = await refusal(callThrough(harness))
        expect(error.code, `${metadataAt} ${String(methods)}`).toBe(AuthorizationErrorCode.PkceUnsupported)
        // Refused at the metadata: the authorization server heard nothing from this client.
        expect(harness.requestsTo('/register')).toHaveLength(0)
        expect(harness.requestsTo('/authorize')).toHaveLength(0)
        expect(harness.requestsTo('/token')).toHaveLength(0)
      }
    })

    verifies(id, 'refuses an authorization server named by Protected Resource Metadata that publishes no metadata, instead of guessing its endpoints', async () => {
      const harness = await harnessFor({ metadataAt: 'none' })
      const error = await refusal(callThrough(harness))
      expect(error.code).toBe(AuthorizationErrorCode.RequestFailed)
      expect(error.message).toContain('publishes no metadata')
      expect(harness.paths().filter(path => ['/register', '/authorize', '/token'].includes(path))).toEqual([])
    })
  }
})

describe('redirect URIs are localhost or https, and registered', () => {
  for (const id of ['auth:redirect-uris', 'auth:redirect-uris@2026-07-28'] as const) {
    verifies(id, 'refuses at once a redirect URI that is neither https nor http to a loopback host, or has a fragment, in redirectUri or in the metadata it registers', () => {
      for (const redirectUri of ['http://app.example.com/callback', 'http://10.0.0.5/callback', 'com.example.app:/callback', 'https://app.example.com/callback#x', 'not a url']) {
        expect(() => oauthFetch({ redirect: headlessRedirect(), redirectUri }), redirectUri).toThrow(TypeError)
      }
      expect(() => oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI, clientMetadata: { redirect_uris: ['http://evil.example.com/cb'] } })).toThrow(/redirect URI http:\/\/evil\.example\.com\/cb/)
      for (const redirectUri of ['https://app.example.com/callback', 'http://localhost:8080/callback', 'http://127.0.0.1/callback', 'http://[::1]:9/callback']) {
        expect(() => oauthFetch({ redirect: headlessRedirect(), redirectUri }), redirectUri).not.toThrow()
      }
    })

    verifies(id, 'registers the redirect URI it authorizes with, even where clientMetadata lists others', async () => {
      const harness = await harnessFor({})
      const response = await callThrough(harness, { clientMetadata: { redirect_uris: ['https://app.example.com/other'] } })
      expect(response.status).toBe(200)
      const registration = JSON.parse(harness.requestsTo('/register')[0]!.body) as { redirect_uris: string[] }
      expect(registration.redirect_uris).toEqual(['https://app.example.com/other', REDIRECT_URI])
      expect(harness.requestsTo('/authorize')[0]!.query.get('redirect_uri')).toBe(REDIRECT_URI)
      expect(harness.requestsTo('/token')[0]!.form.get('redirect_uri')).toBe(REDIRECT_URI)
    })
  }
})

describe('Dynamic Client Registration gives an application_type and reports refusals', () => {
  verifies('auth:dcr-application-type@2026-07-28', 'registers a loopback redirect as a native application and an https one as a web application', async () => {
    // Every loopback form a redirect URI may take is a native application's (127.0.0.0/8 included).
    for (const [redirectUri, type] of [[REDIRECT_URI, 'native'], ['http://127.0.0.2:8765/callback', 'native'], ['http://[::1]:8765/callback', 'native'], ['https://app.example.com/callback', 'web']] as const) {
      const harness = await harnessFor({})
      expect((await callThrough(harness, { redirectUri })).status).toBe(200)
      expect(JSON.parse(harness.requestsTo('/register')[0]!.body)).toMatchObject({ application_type: type, redirect_uris: [redirectUri] })
    }
  })

  verifies('auth:dcr-application-type@2026-07-28', 'fails with the registration endpoint\'s error code and description when it refuses the redirect URI, and goes no further', async () => {
    const harness = await harnessFor({ registrationError: { error: 'invalid_redirect_uri', error_description: 'web clients\nneed https redirect URIs' } })
    const error = await refusal(callThrough(harness))
    expect(error.code).toBe(AuthorizationErrorCode.RequestFailed)
    expect(error.message).toBe(`dynamic client registration at ${harness.issuer} failed: invalid_redirect_uri (web clients need https redirect URIs)`)
    expect(harness.requestsTo('/authorize')).toHaveLength(0)
    // A refused registration is not remembered: the next authorization registers again.
    await refusal(callThrough(harness))
    expect(harness.requestsTo('/register')).toHaveLength(2)
  })
})

/** What the two-authorization-server world saw of one request. */
interface WorldSeen {
  path: string
  /** The client id presented (query, form or Basic credentials). */
  clientId: string | undefined
  grant: string | undefined
  /** The Authorization header, for requests to /mcp. */
  authorization: string | undefined
  url: string
}

/**
 * An MCP endpoint (`/mcp`) and two authorization servers (`/as1`, `/as2`, issuers with a path) in
 * one node:http server on 127.0.0.1. The Protected Resource Metadata names the current one
 * (`moveTo` changes it, as SEP-2352's migration does); the endpoint accepts only tokens the
 * current one issued, and each authorization server refreshes only its own refresh tokens.
 * Registrations get ids naming their server (`as1-client-1`).
 */
async function startWorld() {
  const seen: WorldSeen[] = []
  /** Access and refresh tokens, each with the issuer that issued it. */
  const issuedBy = new Map<string, string>()
  const codes = new Map<string, string>()
  let count = 0
  let current = 'as1'
  const server = createHttpServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', chunk => { body += chunk })
    request.on('end', () => handle(request, response, body))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const mcpUrl = `${origin}/mcp`
  const prmUrl = `${origin}/.well-known/oauth-protected-resource/mcp`
  const issuerOf = (name: string) => `${origin}/${name}`
  const json = (response: ServerResponse, status: number, value: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' })
    response.end(JSON.stringify(value))
  }

  function handle(request: IncomingMessage, response: ServerResponse, body: string): void {
    const url = new URL(request.url ?? '/', origin)
    const form = new URLSearchParams(body)
    const basic = request.headers.authorization?.startsWith('Basic ') === true ? Buffer.from(request.headers.authorization.slice(6), 'base64').toString().split(':')[0] : undefined
    seen.push({ path: url.pathname, clientId: url.searchParams.get('client_id') ?? form.get('client_id') ?? basic, grant: form.get('grant_type') ?? undefined, authorization: request.headers.authorization, url: url.href })
    if (url.pathname === '/mcp') {
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
      if (token === undefined || issuedBy.get(token) !== issuerOf(current)) {
        response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${prmUrl}"` })
        return void response.end()
      }
      return json(response, 200, { ok: true })
    }
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp') return json(response, 200, { resource: mcpUrl, authorization_servers: [issuerOf(current)] })
    const metadata = /^\/\.well-known\/oauth-authorization-server\/(as[12])$/.exec(url.pathname)
    if (metadata !== null) {
      const issuer = issuerOf(metadata[1]!)
      return json(response, 200, {
        issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, registration_endpoint: `${issuer}/register`,
        response_types_supported: ['code'], code_challenge_methods_supported: ['S256'], token_endpoint_auth_methods_supported: ['none'],
      })
    }
    const endpoint = /^\/(as[12])\/(register|authorize|token)$/.exec(url.pathname)
    if (endpoint === null) return json(response, 404, { error: 'not_found' })
    const [, name, step] = endpoint as unknown as [string, string, string]
    const issuer = issuerOf(name)
    if (step === 'register') return json(response, 201, { client_id: `${name}-client-${++count}` })
    if (step === 'authorize') {
      const code = randomUUID()
      codes.set(code, issuer)
      const callback = new URL(url.searchParams.get('redirect_uri')!)
      callback.searchParams.set('code', code)
      callback.searchParams.set('state', url.searchParams.get('state') ?? '')
      response.writeHead(302, { location: callback.href })
      return void response.end()
    }
    const grant = form.get('grant_type')
    const presented = grant === 'refresh_token' ? form.get('refresh_token') : form.get('code')
    // A code or refresh token of another authorization server is worth nothing here.
    if (presented === null || (grant === 'refresh_token' ? issuedBy.get(presented) : codes.get(presented)) !== issuer) return json(response, 400, { error: 'invalid_grant' })
    const accessToken = `${name}-token-${++count}`
    const refreshToken = `${name}-refresh-${count}`
    issuedBy.set(accessToken, issuer)
    issuedBy.set(refreshToken, issuer)
    return json(response, 200, { access_token: accessToken, token_type: 'Bearer', refresh_token: refreshToken })
  }

  const world = {
    origin, mcpUrl, seen, issuerOf,
    /** The issuer that issued a token, for the tokens the endpoint was sent. */
    issuerOfToken: (token: string) => issuedBy.get(token),
    /** The authorization server the Protected Resource Metadata names from now on. */
    moveTo(name: 'as1' | 'as2') { current = name },
    close: () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
  cleanup.push(world.close)
  return world
}

/** A POST to the world's endpoint through `authorized`. */
const post = (authorized: typeof fetch, url: string) => authorized(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })

describe('credentials are kept per authorization server', () => {
  verifies('auth:client-separate-as@2026-07-28', 'registers again with the new authorization server when the resource moves, and never presents the old client id or refresh token there', async () => {
    const world = await startWorld()
    const tokenStore = memoryTokenStore()
    const authorized = oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI, tokenStore })
    expect((await post(authorized, world.mcpUrl)).status).toBe(200)
    const first = (await tokenStore.get(world.mcpUrl))!
    expect(first).toMatchObject({ issuer: world.issuerOf('as1'), clientId: 'as1-client-1' })

    world.moveTo('as2')
    expect((await post(authorized, world.mcpUrl)).status).toBe(200)
    const atAs2 = world.seen.filter(entry => entry.path.startsWith('/as2/'))
    expect(atAs2.map(entry => entry.path)).toEqual(['/as2/register', '/as2/authorize', '/as2/token'])
    expect(atAs2.every(entry => entry.clientId === undefined || entry.clientId.startsWith('as2-'))).toBe(true)
    // The refresh token of the first server was not tried at the second.
    expect(atAs2.some(entry => entry.grant === 'refresh_token')).toBe(false)
    expect(await tokenStore.get(world.mcpUrl)).toMatchObject({ issuer: world.issuerOf('as2'), clientId: expect.stringMatching(/^as2-client-/) })

    // Back to the first: its own registration is used again, not the second's.
    world.moveTo('as1')
    expect((await post(authorized, world.mcpUrl)).status).toBe(200)
    const backAtAs1 = world.seen.filter(entry => entry.path.startsWith('/as1/')).slice(3)
    expect(backAtAs1.map(entry => entry.path)).toEqual(['/as1/authorize', '/as1/token'])
    expect(backAtAs1.every(entry => entry.clientId === 'as1-client-1')).toBe(true)
  })

  verifies('auth:client-separate-as@2026-07-28', 'binds a pre-registered client id given without an issuer to the authorization server it was first used with, and refuses to present it to another', async () => {
    const world = await startWorld()
    const tokenStore = memoryTokenStore()
    const options = { redirect: headlessRedirect(), redirectUri: REDIRECT_URI, clientId: 'pre-registered-at-as1', tokenStore }
    const authorized = oauthFetch(options)
    expect((await post(authorized, world.mcpUrl)).status).toBe(200)
    world.moveTo('as2')
    const error = await refusal(post(authorized, world.mcpUrl))
    expect(error.code).toBe(AuthorizationErrorCode.UntrustedIssuer)
    // A later process with the same store knows where the id belongs from the tokens it holds.
    const error2 = await refusal(post(oauthFetch(options), world.mcpUrl))
    expect(error2.code).toBe(AuthorizationErrorCode.UntrustedIssuer)
    expect(world.seen.filter(entry => entry.path.startsWith('/as2/'))).toEqual([])
  })
})

describe('tokens go only to the server their authorization server issued them for', () => {
  for (const id of ['auth:client-own-as-tokens', 'auth:client-own-as-tokens@2026-07-28'] as const) {
    verifies(id, 'sends each of two MCP servers only tokens its own authorization server issued, with one oauthFetch for both', async () => {
      const [one, two] = [await startWorld(), await startWorld()]
      two.moveTo('as2')
      const authorized = oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI })
      for (let round = 0; round < 2; round++) {
        expect((await post(authorized, one.mcpUrl)).status).toBe(200)
        expect((await post(authorized, two.mcpUrl)).status).toBe(200)
      }
      for (const [world, issuer] of [[one, one.issuerOf('as1')], [two, two.issuerOf('as2')]] as const) {
        const sent = world.seen.filter(entry => entry.path === '/mcp' && entry.authorization !== undefined).map(entry => entry.authorization!.slice('Bearer '.length))
        expect(sent.length).toBeGreaterThanOrEqual(2)
        expect(sent.map(token => world.issuerOfToken(token))).toEqual(sent.map(() => issuer))
      }
    })
  }
})

describe('access tokens never go in a URL', () => {
  for (const id of ['auth:no-token-in-query', 'auth:no-token-in-query@2026-07-28'] as const) {
    verifies(id, 'puts the token in the Authorization header of every Streamable HTTP request and in no URL the client requests', async () => {
      const server = createServer({ name: 'behind', version: '1' })
      server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
      const http = streamableHttp()
      await server.listen(http)
      cleanup.push(() => server.close())
      const harness = await harnessFor({ upstream: http.url! })
      const client = await connect(streamableHttpClient(harness.mcpUrl, { fetch: oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI }) }), { name: 'spec', version: '1' })
      expect(await client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] })
      await client.close()
      const bearer = harness.requestsTo('/mcp').map(entry => entry.headers.authorization).filter(value => value !== undefined)
      expect(bearer.length).toBeGreaterThan(1)
      const accessTokens = new Set(bearer.map(value => value!.replace(/^Bearer /, '')))
      for (const entry of harness.seen) {
        for (const [name, value] of entry.query) {
          expect(name).not.toBe('access_token')
          expect(accessTokens.has(value)).toBe(false)
        }
      }
    })

    verifies(id, 'sends a WebSocket upgrade its token as a header, and never suggests a URL for it where headers cannot be sent', async () => {
      const port = await freePort()
      const resource = `http://127.0.0.1:${port}/mcp`
      const tokens: string[] = []
      const auth = bearerAuth({ resource, authorizationServers: ['https://as.example'], verify: async token => { tokens.push(token); return { subject: 'u', scopes: [] } } })
      const server = createServer({ name: 'ws', version: '1' })
      const ws = websocket({ port, auth })
      await server.listen(ws)
      cleanup.push(() => server.close())
      // A token held already: oauthWebSocketHeaders hands it over without authorizing.
      const tokenStore = memoryTokenStore()
      await tokenStore.set(resource, { accessToken: 'held-token', tokenType: 'bearer', issuer: 'https://as.example', clientId: 'c' })
      const authorized = oauthFetch({ tokenStore, redirect: headlessRedirect(), redirectUri: REDIRECT_URI })
      const url = `ws://127.0.0.1:${port}/mcp`
      const client = await connect(websocketClient(url, { headers: oauthWebSocketHeaders(authorized, url) }), { name: 'spec', version: '1' })
      await client.close()
      expect(tokens).toEqual(['held-token'])
      // The same token in the query is not a credential: the upgrade is refused.
      await expect(connect(websocketClient(`${url}?access_token=held-token`), { name: 'spec', version: '1' })).rejects.toThrow()
      expect(tokens).toEqual(['held-token'])
      // A WebSocket that cannot send headers (a browser's) is refused, pointing away from the URL.
      const NoHeaders = class {} as unknown as WebSocketConstructor
      const refused = await connect(websocketClient(url, { WebSocket: NoHeaders, headers: { authorization: 'Bearer held-token' } }), { name: 'spec', version: '1' }).then(() => undefined, (error: unknown) => error)
      const cause = (refused as Error).cause
      expect(cause).toBeInstanceOf(TransportError)
      expect((cause as Error).message).toContain('use the Streamable HTTP transport (an access token never goes in a URL)')
    })
  }
})
