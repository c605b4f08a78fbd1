import { createServer as createHttpServer, type Server } from 'node:http'
import { exportJWK, generateKeyPair, decodeProtectedHeader, type JWK } from 'jose'
import Provider from 'oidc-provider'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth, BEARER_AUTH_DEFAULTS } from '../../auth/server.ts'
import { jwtVerifier, JWT_VERIFIER_DEFAULTS, type JwtVerifierOptions } from '../../auth/verifiers.ts'
import { freePort } from '../auth/fixtures.ts'
import { useScaleOut } from '../helpers/scale-instances.ts'

/**
 * Issue 27: a key rotation at the authorization server is picked up by every instance. Three
 * instances in Redis scale-out mode verify JWT access tokens against the key set of a real
 * authorization server (oidc-provider on loopback). The server rotates from key A to key B (A
 * withdrawn from its JWKS) by being configured anew on the same issuer, as a deploy does. Each
 * instance keeps its own key set (jose's remote set), so each is asked on its own.
 *
 * Time is virtual where it matters: `Date` is faked and stands still unless a test moves it (jose's
 * cooldown and cache age, bearerAuth's cache and the tokens' `iat`/`exp` all read it), so "within
 * the cooldown" holds however slow the machine; sockets and timers run for real.
 */
const RESOURCE = 'https://mcp.example.test/mcp'
const SECRET = 'machine-secret'
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

/** oidc-provider on one port whose configuration (its signing keys) can be replaced, as a redeploy does. */
interface RotatingAuthorizationServer {
  readonly issuer: string
  /** Configures the server anew with these keys (the first signs); the issuer and its clients stay. */
  useKeys(keys: JWK[]): void
  /** A client-credentials access token for RESOURCE, signed by the current first key. */
  token(): Promise<string>
  /** How many times the key set was fetched. */
  readonly jwksFetches: number
  close(): Promise<void>
}

async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  return { ...await exportJWK(privateKey), kid, alg: 'ES256', use: 'sig' }
}

async function startRotatingAuthorizationServer(keys: JWK[]): Promise<RotatingAuthorizationServer> {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const configure = (signing: JWK[]) => new Provider(issuer, {
    jwks: { keys: signing },
    clients: [{ client_id: 'machine', client_secret: SECRET, grant_types: ['client_credentials'], response_types: [], redirect_uris: [], id_token_signed_response_alg: 'ES256' }],
    ttl: { ClientCredentials: 3600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo: () => ({ scope: 'mcp', audience: RESOURCE, accessTokenTTL: 3600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
      },
    },
  })
  // The provider answering now; replaced whole by useKeys.
  let provider = configure(keys)
  // Fetches of the key set, to tell an instance's fetch from its cache.
  let jwksFetches = 0
  const server: Server = createHttpServer((request, response) => {
    if (request.url === '/jwks') jwksFetches++
    void provider.callback()(request, response)
  })
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  return {
    issuer,
    useKeys(signing) { provider = configure(signing) },
    async token() {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`machine:${SECRET}`)}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp', resource: RESOURCE }).toString(),
      })
      const body = await response.json() as { access_token?: string }
      if (body.access_token === undefined) throw new Error(`no token: ${JSON.stringify(body)}`)
      return body.access_token
    },
    get jwksFetches() { return jwksFetches },
    close: () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

let keyA: JWK
let keyB: JWK
let as: RotatingAuthorizationServer
beforeAll(async () => {
  keyA = await signingKey('key-a')
  keyB = await signingKey('key-b')
})
afterEach(async () => {
  vi.useRealTimers()
  await as?.close()
})
afterAll(() => vi.useRealTimers())

const scaleOut = useScaleOut()

/** Three instances sharing one Redis, each verifying tokens against the authorization server's JWKS itself. */
async function startInstances(prefix: string, verifier: Partial<JwtVerifierOptions> = {}): Promise<string[]> {
  const urls: string[] = []
  for (let i = 0; i < 3; i++) {
    const instance = await scaleOut.start(prefix, scale => ({
      server: createServer({ name: 'rotation', version: '1' }, { ...scale.server }),
      http: streamableHttp({
        ...scale.http,
        auth: bearerAuth({ resource: RESOURCE, authorizationServers: [as.issuer], verify: jwtVerifier({ issuer: as.issuer, jwksUrl: `${as.issuer}/jwks`, ...verifier }) }),
      }),
    }))
    urls.push(instance.http.url!)
  }
  return urls
}

/** The status each instance answers an initialize carrying `token` with. */
async function statuses(urls: readonly string[], token: string): Promise<number[]> {
  return Promise.all(urls.map(async url => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify(INIT),
    })
    await response.body?.cancel()
    return response.status
  }))
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid

describe('jwtVerifier({ jwksUrl }) on every instance through a key rotation', { timeout: 60_000 }, () => {
  it('accepts a new key\'s tokens on every instance once its cooldown since its last fetch has passed, and refuses a withdrawn key\'s', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    as = await startRotatingAuthorizationServer([keyA])
    const urls = await startInstances('rotation-default:')
    const beforeA = await as.token()
    const heldA = await as.token()
    expect(kidOf(beforeA)).toBe('key-a')
    expect(await statuses(urls, beforeA)).toEqual([200, 200, 200])
    // Every instance fetched the set once, on its first token.
    expect(as.jwksFetches).toBe(3)

    as.useKeys([keyB])
    const tokenB = await as.token()
    expect(kidOf(tokenB)).toBe('key-b')
    // Within the cooldown an unknown key is not fetched for: refused everywhere, nothing fetched.
    expect(await statuses(urls, tokenB)).toEqual([401, 401, 401])
    expect(as.jwksFetches).toBe(3)

    // Past the cooldown, the first token naming key B makes each instance fetch the set again.
    vi.setSystemTime(Date.now() + JWT_VERIFIER_DEFAULTS.jwksCooldownMs + 1000)
    expect(await statuses(urls, tokenB)).toEqual([200, 200, 200])
    expect(as.jwksFetches).toBe(6)
    // A token signed with A before the rotation, shown for the first time now: A is gone from every set.
    expect(await statuses(urls, heldA)).toEqual([401, 401, 401])
    // One A token already verified stays accepted from bearerAuth's cache, until cacheTtlMs (or its exp).
    expect(await statuses(urls, beforeA)).toEqual([200, 200, 200])
    vi.setSystemTime(Date.now() + BEARER_AUTH_DEFAULTS.cacheTtlMs)
    expect(await statuses(urls, beforeA)).toEqual([401, 401, 401])
    expect(await statuses(urls, tokenB)).toEqual([200, 200, 200])
  })

  it('with jwksCooldownMs 0, picks up the rotation on every instance with the first token of the new key', async () => {
    as = await startRotatingAuthorizationServer([keyA])
    const urls = await startInstances('rotation-no-cooldown:', { jwksCooldownMs: 0 })
    const heldA = await as.token()
    expect(await statuses(urls, await as.token())).toEqual([200, 200, 200])

    as.useKeys([keyB])
    const tokenB = await as.token()
    expect(await statuses(urls, tokenB)).toEqual([200, 200, 200])
    expect(as.jwksFetches).toBe(6)
    expect(await statuses(urls, heldA)).toEqual([401, 401, 401])
  })

  it('keeps verifying a withdrawn key published in an overlap until the set is older than jwksMaxAgeMs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    as = await startRotatingAuthorizationServer([keyA])
    const urls = await startInstances('rotation-overlap:')
    const held = [await as.token(), await as.token(), await as.token()]
    expect(await statuses(urls, held[0]!)).toEqual([200, 200, 200])

    // The overlap: B signs, A is still published. Past the cooldown B is fetched for, and A stays.
    as.useKeys([keyB, keyA])
    vi.setSystemTime(Date.now() + JWT_VERIFIER_DEFAULTS.jwksCooldownMs + 1000)
    expect(await statuses(urls, await as.token())).toEqual([200, 200, 200])
    expect(await statuses(urls, held[1]!)).toEqual([200, 200, 200])

    // A withdrawn: every instance's set still has it (B is known, nothing makes them fetch) ...
    as.useKeys([keyB])
    expect(await statuses(urls, held[2]!)).toEqual([200, 200, 200])
    // ... until the set is older than jwksMaxAgeMs: fetched again before the next check, without A.
    vi.setSystemTime(Date.now() + JWT_VERIFIER_DEFAULTS.jwksMaxAgeMs)
    const fetched = as.jwksFetches
    expect(await statuses(urls, held[1]!)).toEqual([401, 401, 401])
    expect(as.jwksFetches).toBe(fetched + 3)
    expect(await statuses(urls, await as.token())).toEqual([200, 200, 200])
  })
})
