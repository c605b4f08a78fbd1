import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { nodeFetch, streamableHttpClient } from '../../transports/http-client.ts'
import { AuthorizationError, AuthorizationErrorCode, fileTokenStore, headlessRedirect, memoryTokenStore, oauthFetch, type OAuthFetchOptions, type TokenSet } from '../../auth/client.ts'
import { parseChallenges } from '../../lib/www-authenticate.ts'
import { s256, startHarness, type Harness, type HarnessOptions } from './client-harness.ts'

const REDIRECT_URI = 'http://127.0.0.1:9/callback'
let harness: Harness | undefined

afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/**
 * Starts the fake servers and an oauthFetch for them (the auth code grant, redirects followed at
 * once); client options may depend on the servers (pre-registered credentials name their issuer).
 */
async function setup(serverOptions: HarnessOptions = {}, clientOptions: OAuthFetchOptions | ((harness: Harness) => OAuthFetchOptions) = {}) {
  harness = await startHarness(serverOptions)
  const authorized = oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI, ...(typeof clientOptions === 'function' ? clientOptions(harness) : clientOptions) })
  const call = (body = '{"n":1}') => authorized(harness!.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  return { harness, authorized, call }
}

/** The rejection of `promise`, which must be an AuthorizationError. */
async function refusal(promise: Promise<unknown>): Promise<AuthorizationError> {
  const error = await promise.then(() => undefined, (error: unknown) => error)
  expect(error).toBeInstanceOf(AuthorizationError)
  return error as AuthorizationError
}

describe('oauthFetch', () => {
  describe('discovery', () => {
    it('reads the Protected Resource Metadata named by the WWW-Authenticate header, before any well-known URL', async () => {
      const { harness, call } = await setup({ prm: 'header' })
      const response = await call()
      expect(response.status).toBe(200)
      expect(harness.paths().slice(0, 3)).toEqual(['/mcp', '/custom/prm.json', '/.well-known/oauth-authorization-server'])
      expect(harness.paths().some(path => path.startsWith('/.well-known/oauth-protected-resource'))).toBe(false)
    })

    it('falls back to the well-known PRM URLs when the one in the header fails', async () => {
      const { harness, call } = await setup({ headerPrmPath: '/missing/prm.json' })
      expect((await call()).status).toBe(200)
      expect(harness.paths().slice(0, 3)).toEqual(['/mcp', '/missing/prm.json', '/.well-known/oauth-protected-resource/mcp'])
    })

    it('tries the path-based PRM URL, then the root one', async () => {
      const { harness, call } = await setup({ prm: 'root' })
      expect((await call()).status).toBe(200)
      expect(harness.paths().slice(0, 4)).toEqual(['/mcp', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server'])
    })

    it.each([
      ['oauth' as const, ['/.well-known/oauth-authorization-server/tenant']],
      ['oidc-inserted' as const, ['/.well-known/oauth-authorization-server/tenant', '/.well-known/openid-configuration/tenant']],
      ['oidc-appended' as const, ['/.well-known/oauth-authorization-server/tenant', '/.well-known/openid-configuration/tenant', '/tenant/.well-known/openid-configuration']],
    ])('finds metadata for an issuer with a path in the MCP order (%s)', async (metadataAt, expected) => {
      const { harness, call } = await setup({ issuerPath: '/tenant', metadataAt })
      expect((await call()).status).toBe(200)
      const metadataRequests = harness.paths().filter(path => path.includes('oauth-authorization-server') || path.includes('openid-configuration'))
      expect(metadataRequests).toEqual(expected)
    })

    it('tries oauth-authorization-server, then openid-configuration, for an issuer without a path', async () => {
      const { harness, call } = await setup({ metadataAt: 'oidc-inserted' })
      expect((await call()).status).toBe(200)
      expect(harness.paths().filter(path => path.startsWith('/.well-known/o') && !path.includes('protected'))).toEqual(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])
    })

    it('refuses metadata naming another issuer, before any registration or authorization', async () => {
      const { harness, call } = await setup({ metadataIssuer: issuer => `${issuer}/evil` })
      const error = await refusal(call())
      expect(error.code).toBe(AuthorizationErrorCode.IssuerMismatch)
      expect(error.message).toMatch(/names issuer .*\/evil, expected/)
      expect(harness.requestsTo('/register')).toHaveLength(0)
      expect(harness.requestsTo('/authorize')).toHaveLength(0)
    })

    it('refuses a PRM whose resource is another server', async () => {
      const { harness, call } = await setup({ prmResource: () => 'https://evil.example.com/mcp' })
      const error = await refusal(call())
      expect(error.code).toBe(AuthorizationErrorCode.ResourceMismatch)
      expect(error.message).toContain('https://evil.example.com/mcp')
      expect(harness.requestsTo('/.well-known/oauth-authorization-server')).toHaveLength(0)
    })

    it('falls back to the 2025-03-26 default endpoints without PRM and metadata', async () => {
      const { harness, call } = await setup({ prm: 'none', metadataAt: 'none' })
      expect((await call()).status).toBe(200)
      expect(harness.paths()).toEqual(expect.arrayContaining(['/register', '/authorize', '/token']))
      // Without PRM there is no resource to name.
      expect(harness.requestsTo('/authorize')[0]!.query.has('resource')).toBe(false)
    })
  })

  describe('registration and the authorization code grant', () => {
    it('registers dynamically, then sends PKCE S256 and the resource in both the authorization and the token request', async () => {
      const { harness, call } = await setup({}, { clientMetadata: { client_name: 'spec' } })
      const response = await call('{"hello":"world"}')
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ ok: true, echo: '{"hello":"world"}' })

      const registration = JSON.parse(harness.requestsTo('/register')[0]!.body) as Record<string, unknown>
      expect(registration).toMatchObject({ client_name: 'spec', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', application_type: 'native' })
      const authorize = harness.requestsTo('/authorize')[0]!.query
      const token = harness.requestsTo('/token')[0]!.form
      expect(authorize.get('code_challenge_method')).toBe('S256')
      expect(s256(token.get('code_verifier')!)).toBe(authorize.get('code_challenge'))
      expect(authorize.get('resource')).toBe(harness.mcpUrl)
      expect(token.get('resource')).toBe(harness.mcpUrl)
      expect(token.get('redirect_uri')).toBe(REDIRECT_URI)
      expect(authorize.get('client_id')).toMatch(/^dcr-/)
    })

    it.each([
      ['client_secret_basic' as const, true],
      ['client_secret_post' as const, false],
    ])('authenticates a pre-registered client with %s', async (method, isBasic) => {
      const { harness, call } = await setup({ registration: false }, ({ issuer }) => ({ clientId: 'pre-registered-client', clientSecret: 's3cret', issuer, tokenEndpointAuthMethod: method }))
      expect((await call()).status).toBe(200)
      const token = harness.requestsTo('/token')[0]!
      expect(harness.requestsTo('/register')).toHaveLength(0)
      if (isBasic) {
        expect(token.headers.authorization).toBe(`Basic ${btoa('pre-registered-client:s3cret')}`)
        expect(token.form.has('client_secret')).toBe(false)
      } else {
        expect(token.headers.authorization).toBeUndefined()
        expect(token.form.get('client_id')).toBe('pre-registered-client')
        expect(token.form.get('client_secret')).toBe('s3cret')
      }
    })

    it('picks client_secret_post for a secret when the server does not take basic', async () => {
      const { harness, call } = await setup({ registration: false, metadata: { token_endpoint_auth_methods_supported: ['client_secret_post'] } }, ({ issuer }) => ({ clientId: 'c', clientSecret: 's', issuer }))
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/token')[0]!.form.get('client_secret')).toBe('s')
    })

    it('uses a client ID metadata document URL as client_id where the server supports them', async () => {
      const clientMetadataUrl = 'https://client.example.com/metadata.json'
      const { harness, call } = await setup({ metadata: { client_id_metadata_document_supported: true } }, { clientMetadataUrl })
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/register')).toHaveLength(0)
      expect(harness.requestsTo('/authorize')[0]!.query.get('client_id')).toBe(clientMetadataUrl)
    })

    it('refuses a client metadata URL that is not https at once', () => {
      expect(() => oauthFetch({ clientMetadataUrl: 'http://client.example.com/metadata.json' })).toThrow(TypeError)
    })

    it.each([
      ['the challenge scope', { challengeScope: 'mcp:read', prmScopes: ['mcp:all'] }, 'mcp:read'],
      ['the PRM scopes_supported', { prmScopes: ['mcp:a', 'mcp:b'] }, 'mcp:a mcp:b'],
      ['no scope at all', {}, null],
      ['offline_access added where offered', { challengeScope: 'mcp:read', metadata: { scopes_supported: ['mcp:read', 'offline_access'] } }, 'mcp:read offline_access'],
    ])('asks for %s', async (_name, serverOptions: HarnessOptions, expected) => {
      const { harness, call } = await setup(serverOptions)
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/authorize')[0]!.query.get('scope')).toBe(expected)
    })

    it('refuses an authorization response with another state', async () => {
      const redirect = headlessRedirect()
      const { harness, call } = await setup({}, {
        redirect: async url => { const callback = await redirect(url); callback.searchParams.set('state', 'forged'); return callback },
      })
      const error = await refusal(call())
      expect(error.code).toBe(AuthorizationErrorCode.StateMismatch)
      expect(harness.requestsTo('/token')).toHaveLength(0)
    })

    it.each([
      ['a wrong iss', { issInRedirect: 'wrong' as const }, /is not the issuer/],
      ['no iss where the server advertises it', { issInRedirect: 'omit' as const }, /has no iss/],
      ['a wrong iss the server never advertised', { issInRedirect: 'wrong' as const, metadata: { authorization_response_iss_parameter_supported: false } }, /is not the issuer/],
    ])('refuses %s (RFC 9207)', async (_name, serverOptions: HarnessOptions, message) => {
      const { harness, call } = await setup(serverOptions)
      const error = await refusal(call())
      expect(error.code).toBe(AuthorizationErrorCode.IssMismatch)
      expect(error.message).toMatch(message)
      expect(harness.requestsTo('/token')).toHaveLength(0)
    })

    it('accepts a missing iss from a server that does not advertise it', async () => {
      const { call } = await setup({ issInRedirect: 'omit', metadata: { authorization_response_iss_parameter_supported: false } })
      expect((await call()).status).toBe(200)
    })

    it('fails with InteractionRequired when the code grant has no redirect hook', async () => {
      const { call } = await setup({}, { redirect: undefined })
      expect((await refusal(call())).code).toBe(AuthorizationErrorCode.InteractionRequired)
    })

    it('sends a Request object and a stream body again after authorizing', async () => {
      const { harness, authorized } = await setup()
      const request = new Request(harness.mcpUrl, { method: 'POST', body: 'as a Request' })
      expect(await (await authorized(request)).json()).toMatchObject({ echo: 'as a Request' })
      const stream = new Blob(['as a stream']).stream()
      expect(await (await authorized(harness.mcpUrl, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)).json()).toMatchObject({ echo: 'as a stream' })
    })

    it('does not send again a request whose signal aborted during authorization', async () => {
      const controller = new AbortController()
      const redirect = headlessRedirect()
      const { harness, authorized } = await setup({}, { redirect: async url => { controller.abort(new Error('user went away')); return redirect(url) } })
      await expect(authorized(harness.mcpUrl, { method: 'POST', body: '{}', signal: controller.signal })).rejects.toThrow('user went away')
      expect(harness.requestsTo('/mcp')).toHaveLength(1)
    })

    it('authorizes once for concurrent requests', async () => {
      const { harness, call } = await setup()
      const responses = await Promise.all([call('1'), call('2'), call('3')])
      expect(responses.map(response => response.status)).toEqual([200, 200, 200])
      expect(harness.requestsTo('/authorize')).toHaveLength(1)
      expect(harness.requestsTo('/register')).toHaveLength(1)
    })
  })

  describe('client credentials', () => {
    it('gets a token with the client credentials grant and the resource', async () => {
      const { harness, call } = await setup({ registration: false, challengeScope: 'mcp:machine' }, ({ issuer }) => ({ grant: 'client_credentials', clientId: 'machine', clientSecret: 'pw', issuer }))
      expect((await call()).status).toBe(200)
      const token = harness.requestsTo('/token')[0]!
      expect(token.form.get('grant_type')).toBe('client_credentials')
      expect(token.form.get('resource')).toBe(harness.mcpUrl)
      expect(token.form.get('scope')).toBe('mcp:machine')
      expect(harness.requestsTo('/authorize')).toHaveLength(0)
    })
  })

  describe('refresh', () => {
    it('refreshes a token about to expire before sending the request', async () => {
      let clock = 1_000_000
      const { harness, call } = await setup({ expiresIn: 3600 }, { now: () => clock })
      expect((await call()).status).toBe(200)
      clock += 3600_000 - 30_000
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/token').map(request => request.form.get('grant_type'))).toEqual(['authorization_code', 'refresh_token'])
      expect(harness.requestsTo('/token')[1]!.form.get('resource')).toBe(harness.mcpUrl)
      // The second request went out once, with the refreshed token: no 401 in between.
      expect(harness.requestsTo('/mcp')).toHaveLength(3)
      expect(harness.requestsTo('/authorize')).toHaveLength(1)
    })

    it('keeps a token far from expiry', async () => {
      let clock = 0
      const { harness, call } = await setup({ expiresIn: 3600 }, { now: () => clock })
      await call()
      clock += 3000_000
      await call()
      expect(harness.requestsTo('/token')).toHaveLength(1)
    })

    it('tries the refresh token first on a 401', async () => {
      const { harness, call } = await setup()
      expect((await call()).status).toBe(200)
      harness.revokeAccessTokens()
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/token').map(request => request.form.get('grant_type'))).toEqual(['authorization_code', 'refresh_token'])
      expect(harness.requestsTo('/authorize')).toHaveLength(1)
    })

    it('runs the grant when the refreshed token is refused too', async () => {
      const { harness, call } = await setup()
      await call()
      harness.revokeAccessTokens()
      harness.refuseTokensOf('refresh_token')
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/token').map(request => request.form.get('grant_type'))).toEqual(['authorization_code', 'refresh_token', 'authorization_code'])
      expect(harness.requestsTo('/authorize')).toHaveLength(2)
    })

    it('authorizes again when there is no refresh token', async () => {
      const { harness, call } = await setup({ hasRefreshToken: false })
      await call()
      harness.revokeAccessTokens()
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/authorize')).toHaveLength(2)
    })
  })

  describe('step-up', () => {
    it('authorizes again with the union of scopes on 403 insufficient_scope and retries', async () => {
      const { harness, call } = await setup({ challengeScope: 'mcp:read', requiredScopes: ['mcp:read', 'mcp:write'] })
      const response = await call('{"step":"up"}')
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ echo: '{"step":"up"}' })
      expect(harness.requestsTo('/authorize').map(request => request.query.get('scope'))).toEqual(['mcp:read', 'mcp:read mcp:write'])
    })

    it('stops after 3 authorizations for one request', async () => {
      const { harness, call } = await setup({ challengeScope: 'mcp:read', isAlwaysForbidden: true })
      const error = await refusal(call())
      expect(error.code).toBe(AuthorizationErrorCode.TooManyAttempts)
      expect(error.message).toContain('after 3 authorizations')
      expect(harness.requestsTo('/authorize')).toHaveLength(3)
    })

    it('takes maxAuthorizationAttempts', async () => {
      const { harness, call } = await setup({ isAlwaysForbidden: true }, { maxAuthorizationAttempts: 1 })
      expect((await refusal(call())).code).toBe(AuthorizationErrorCode.TooManyAttempts)
      expect(harness.requestsTo('/authorize')).toHaveLength(1)
    })
  })

  describe('DPoP', () => {
    it('binds tokens to a DPoP key where the server advertises it, with a proof on every request', async () => {
      const { harness, call } = await setup({ dpop: {} })
      expect((await call()).status).toBe(200)
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/token')[0]!.headers.dpop).toBeDefined()
      const calls = harness.requestsTo('/mcp').slice(1)
      expect(calls.map(request => request.headers.authorization?.split(' ')[0])).toEqual(['DPoP', 'DPoP'])
      // A fresh proof per request.
      expect(calls[0]!.headers.dpop).not.toBe(calls[1]!.headers.dpop)
      expect(harness.requestsTo('/authorize')[0]!.query.get('dpop_jkt')).toMatch(/^[\w-]{43}$/)
    })

    it('answers use_dpop_nonce once, at the token endpoint and at the resource', async () => {
      const { harness, call } = await setup({ dpop: { asNonce: 'as-nonce', rsNonce: 'rs-nonce' } })
      expect((await call()).status).toBe(200)
      expect(harness.requestsTo('/token')).toHaveLength(2)
      // 401 without a token, then 401 use_dpop_nonce, then accepted.
      expect(harness.requestsTo('/mcp')).toHaveLength(3)
    })

    it('sends no proof when told not to use DPoP, even where the server advertises it', async () => {
      const { harness, call } = await setup({ dpop: {} }, { dpop: false })
      // This server insists on DPoP at its token endpoint.
      const error = await refusal(call())
      expect(error.code).toBe(AuthorizationErrorCode.RequestFailed)
      expect(error.message).toContain('invalid_dpop_proof')
      expect(harness.requestsTo('/token')[0]!.headers.dpop).toBeUndefined()
      expect(harness.requestsTo('/authorize')[0]!.query.has('dpop_jkt')).toBe(false)
    })
  })

  describe('errors', () => {
    it('never puts tokens or secrets in messages', async () => {
      const { harness, call } = await setup({ isAlwaysForbidden: true, registration: false }, ({ issuer }) => ({ clientId: 'c', clientSecret: 'very-secret-value', issuer }))
      const error = await refusal(call())
      const token = /^Bearer (.+)$/.exec(harness.requestsTo('/mcp').at(-1)!.headers.authorization!)![1]!
      expect(error.message).not.toContain(token)
      expect(error.message).not.toContain('very-secret-value')
      expect(error.name).toBe('AuthorizationError')
    })
  })
})

describe('oauthFetch with streamableHttpClient', () => {
  it.each(['legacy' as const, 'modern' as const])('connects and calls a tool through an authorizing front (%s era)', async era => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      harness = await startHarness({ upstream: http.url!, challengeScope: 'mcp:tools', requiredScopes: ['mcp:tools'] })
      const transport = streamableHttpClient(harness.mcpUrl, { fetch: oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI }) })
      const client = await connect(transport, { name: 'spec', version: '1' }, { era })
      expect(await client.callTool('echo', { text: 'authorized' })).toEqual({ content: [{ type: 'text', text: 'authorized' }] })
      await client.close()
      expect(harness.requestsTo('/authorize')).toHaveLength(1)
      expect(harness.requestsTo('/token')).toHaveLength(1)
      // Every MCP request after the first carried the token.
      expect(harness.requestsTo('/mcp').slice(1).every(request => request.headers.authorization?.startsWith('Bearer ') === true)).toBe(true)
    } finally {
      await server.close()
    }
  })
})

describe('oauthFetch with requestFetch', () => {
  it.each(['legacy' as const, 'modern' as const])('sends the MCP requests with requestFetch (nodeFetch) and discovery and tokens with fetch (%s era)', async era => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      harness = await startHarness({ upstream: http.url!, challengeScope: 'mcp:tools', requiredScopes: ['mcp:tools'] })
      const through = { fetch: [] as string[], requestFetch: [] as string[] }
      const pathOf = (input: RequestInfo | URL) => new URL(input instanceof Request ? input.url : input).pathname
      const responses: Response[] = []
      const authorized = oauthFetch({
        redirect: headlessRedirect(), redirectUri: REDIRECT_URI,
        fetch: (input, init) => { through.fetch.push(pathOf(input)); return globalThis.fetch(input, init) },
        requestFetch: async (input, init) => {
          through.requestFetch.push(pathOf(input))
          const response = await nodeFetch(input, init)
          responses.push(response)
          return response
        },
      })
      const client = await connect(streamableHttpClient(harness.mcpUrl, { fetch: authorized }), { name: 'spec', version: '1' }, { era })
      expect(await client.callTool('echo', { text: 'authorized' })).toEqual({ content: [{ type: 'text', text: 'authorized' }] })
      await client.close()
      // The first MCP request was refused (401) and sent again with the token the grant got.
      expect(harness.requestsTo('/token')).toHaveLength(1)
      expect(through.requestFetch.length).toBeGreaterThanOrEqual(3)
      expect(new Set(through.requestFetch)).toEqual(new Set(['/mcp']))
      expect(through.fetch).not.toContain('/mcp')
      expect(through.fetch).toContain('/token')
      // nodeFetch's light responses, not the global Response, were what the transport read.
      expect(responses.some(response => response instanceof Response)).toBe(false)
      expect(responses[0]!.status).toBe(401)
    } finally {
      await server.close()
    }
  })
})

describe('memoryTokenStore', () => {
  it('stores, reads and deletes', async () => {
    const store = memoryTokenStore()
    const tokens: TokenSet = { accessToken: 'a', tokenType: 'bearer', issuer: 'https://as', clientId: 'c' }
    await store.set('k', tokens)
    expect(await store.get('k')).toEqual(tokens)
    await store.delete('k')
    expect(await store.get('k')).toBeUndefined()
  })
})

describe('fileTokenStore', () => {
  const tokens: TokenSet = { accessToken: 'a', tokenType: 'bearer', refreshToken: 'r', expiresAt: 5, issuer: 'https://as', clientId: 'c' }
  let dir: string | undefined
  afterEach(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

  it('creates the file with mode 0600 and reads back what it wrote', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxmcp-tokens-'))
    const path = join(dir, 'nested', 'tokens.json')
    const store = fileTokenStore(path)
    expect(await store.get('k')).toBeUndefined()
    await store.set('k', tokens)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(await fileTokenStore(path).get('k')).toEqual(tokens)
    await store.delete('k')
    expect(await store.get('k')).toBeUndefined()
  })

  it('narrows an existing file to 0600 on write', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxmcp-tokens-'))
    const path = join(dir, 'tokens.json')
    writeFileSync(path, '{}', { mode: 0o644 })
    await fileTokenStore(path).set('k', tokens)
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  it('serializes concurrent writes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxmcp-tokens-'))
    const store = fileTokenStore(join(dir, 'tokens.json'))
    await Promise.all(['a', 'b', 'c', 'd'].map(key => store.set(key, { ...tokens, accessToken: key })))
    expect(await Promise.all(['a', 'b', 'c', 'd'].map(async key => (await store.get(key))?.accessToken))).toEqual(['a', 'b', 'c', 'd'])
  })

  it('refreshes as the same dynamically registered client after a restart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxmcp-tokens-'))
    const tokenStore = fileTokenStore(join(dir, 'tokens.json'))
    const { harness, call } = await setup({ registrationAnswer: { client_secret: 'dcr-secret', token_endpoint_auth_method: 'client_secret_post' } }, { tokenStore })
    await call()
    harness.revokeAccessTokens()
    const restarted = oauthFetch({ tokenStore, redirect: headlessRedirect(), redirectUri: REDIRECT_URI })
    expect((await restarted(harness.mcpUrl, { method: 'POST', body: '{}' })).status).toBe(200)
    expect(harness.requestsTo('/register')).toHaveLength(1)
    const [first, refresh] = harness.requestsTo('/token')
    expect(refresh!.form.get('grant_type')).toBe('refresh_token')
    expect(refresh!.form.get('client_id')).toBe(first!.form.get('client_id'))
    expect(refresh!.form.get('client_secret')).toBe('dcr-secret')
  })

  it('keeps tokens between oauthFetch instances', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxmcp-tokens-'))
    const tokenStore = fileTokenStore(join(dir, 'tokens.json'))
    const { harness, call } = await setup({}, { tokenStore })
    await call()
    const again = oauthFetch({ tokenStore, redirect: headlessRedirect(), redirectUri: REDIRECT_URI })
    expect((await again(harness.mcpUrl, { method: 'POST', body: '{}' })).status).toBe(200)
    expect(harness.requestsTo('/authorize')).toHaveLength(1)
  })
})

describe('parseChallenges', () => {
  it.each([
    ['Bearer', [{ scheme: 'bearer', params: {} }]],
    ['Bearer realm="mcp", error="insufficient_scope", scope="a b"', [{ scheme: 'bearer', params: { realm: 'mcp', error: 'insufficient_scope', scope: 'a b' } }]],
    ['Bearer resource_metadata="https://x/.well-known/oauth-protected-resource/mcp"', [{ scheme: 'bearer', params: { resource_metadata: 'https://x/.well-known/oauth-protected-resource/mcp' } }]],
    ['DPoP error="use_dpop_nonce", algs="ES256 PS256", Bearer scope=read', [{ scheme: 'dpop', params: { error: 'use_dpop_nonce', algs: 'ES256 PS256' } }, { scheme: 'bearer', params: { scope: 'read' } }]],
    ['Bearer error_description="say \\"hi\\", then go"', [{ scheme: 'bearer', params: { error_description: 'say "hi", then go' } }]],
  ])('parses %s', (header, expected) => {
    expect(parseChallenges(header)).toEqual(expected)
  })

  it('gives nothing for no header', () => {
    expect(parseChallenges(null)).toEqual([])
  })
})
