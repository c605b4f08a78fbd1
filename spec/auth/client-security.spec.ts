/**
 * Issue 20, the OAuth client's findings: where it sends pre-registered credentials, which
 * addresses it reaches, and how much and how long it reads. Real HTTP servers on 127.0.0.1 play
 * the MCP server, the authorization servers and the attacker's hosts; other host names are routed
 * to them by the fetch the client is given (so no request leaves the machine), and names resolve
 * through a `lookup` stub.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { AuthorizationError, AuthorizationErrorCode, enterpriseGrant, headlessRedirect, oauthFetch, OAUTH_FETCH_DEFAULTS, type OAuthFetchOptions } from '../../auth/client.ts'
import { startHarness, type Harness, type HarnessOptions } from './client-harness.ts'

const REDIRECT_URI = 'http://127.0.0.1:9/callback'
const SECRET = 'pre-registered-secret-value'
/** What a public host name resolves to in these tests. */
const PUBLIC_ADDRESS = '93.184.216.34'

/** Servers started by a test, closed after it. */
const running: Array<{ close(): Promise<void> }> = []

afterEach(async () => {
  vi.useRealTimers()
  for (const server of running.splice(0)) await server.close()
})

async function harnessFor(options: HarnessOptions = {}): Promise<Harness> {
  const harness = await startHarness(options)
  running.push(harness)
  return harness
}

/** One request a test server saw. */
interface Seen { method: string; path: string; headers: IncomingMessage['headers']; body: string }

/** A node:http server on 127.0.0.1 answering with `handle`, logging every request. */
async function testServer(handle: (request: Seen, response: ServerResponse) => void): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', chunk => { body += chunk })
    request.on('end', () => {
      const entry = { method: request.method ?? 'GET', path: new URL(request.url ?? '/', 'http://x').pathname, headers: request.headers, body }
      seen.push(entry)
      handle(entry, response)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  running.push({ close: () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }) })
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

/**
 * A fetch that logs every URL it is asked for and sends requests for the hosts in `routes` to a
 * loopback server instead (path and query kept); other hosts than 127.0.0.1 fail, as if unreachable.
 */
function routedFetch(routes: Record<string, string>, log: string[]): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input)
    log.push(url.href)
    const route = routes[url.host]
    if (route !== undefined) return fetch(new URL(`${url.pathname}${url.search}`, route), init)
    if (url.hostname !== '127.0.0.1') return Promise.reject(new TypeError(`fetch failed: ${url.host} is not reachable from a test`))
    return fetch(input, init)
  }
}

/** Whether a request carried the client secret (client_secret_basic or client_secret_post). */
function carriesSecret(request: { headers: IncomingMessage['headers']; body: string }): boolean {
  const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '')?.[1]
  return (basic !== undefined && Buffer.from(basic, 'base64').toString('utf8').includes(SECRET)) || request.body.includes(SECRET)
}

/** A promise and its resolve (Promise.withResolvers is Node 22). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>(done => { resolve = done })
  return { promise, resolve }
}

/** The rejection of `promise`, which must be an AuthorizationError. */
async function refusal(promise: Promise<unknown>): Promise<AuthorizationError> {
  const error = await promise.then(() => undefined, (error: unknown) => error)
  expect(error).toBeInstanceOf(AuthorizationError)
  return error as AuthorizationError
}

function post(authorized: typeof fetch, url: string): Promise<Response> {
  return authorized(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' })
}

describe('issue 20: the OAuth client sends the pre-registered client secret wherever the MCP server points it', () => {
  it('refuses a resource_metadata URL on a link-local host: nothing is requested there and the secret goes nowhere', async () => {
    // The attacker's host at 169.254.169.254: a complete authorization server that records what it gets.
    let victimResource = ''
    const evil = await testServer((request, response) => {
      const json = (value: unknown) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value))
      if (request.path === '/prm') return json({ resource: victimResource, authorization_servers: ['http://169.254.169.254'] })
      if (request.path === '/.well-known/oauth-authorization-server') {
        return json({ issuer: 'http://169.254.169.254', token_endpoint: 'http://169.254.169.254/token', authorization_endpoint: 'http://169.254.169.254/authorize', token_endpoint_auth_methods_supported: ['client_secret_basic'], code_challenge_methods_supported: ['S256'] })
      }
      if (request.path === '/token') return json({ access_token: 'stolen', token_type: 'Bearer' })
      response.writeHead(404).end()
    })
    const harness = await harnessFor({ headerPrmUrl: 'http://169.254.169.254/prm', registration: false })
    victimResource = harness.mcpUrl
    const log: string[] = []
    const authorized = oauthFetch({
      grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: harness.issuer,
      fetch: routedFetch({ '169.254.169.254': evil.origin }, log),
    })
    const error = await refusal(post(authorized, harness.mcpUrl))
    expect(error.code).toBe(AuthorizationErrorCode.EndpointRefused)
    expect(error.message).toContain('http://169.254.169.254/prm')
    expect(error.message).toContain('link-local')
    expect(evil.seen).toEqual([])
    expect(log.filter(url => url.includes('169.254'))).toEqual([])
    expect([...evil.seen, ...harness.seen].some(carriesSecret)).toBe(false)
  })

  it('sends pre-registered credentials only to the issuer they were issued by: another authorization server is refused before any request to it', async () => {
    const trusted = await harnessFor({ registration: false })
    const other = await harnessFor({ registration: false })
    const authorized = oauthFetch({ grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: trusted.issuer })
    const error = await refusal(post(authorized, other.mcpUrl))
    expect(error.code).toBe(AuthorizationErrorCode.UntrustedIssuer)
    expect(error.message).toContain(`not the trusted issuer ${trusted.issuer}`)
    // The other server's PRM was read (it names its authorization server); its metadata and token endpoint never were.
    expect(other.paths().filter(path => path !== '/mcp')).toEqual(['/.well-known/oauth-protected-resource/mcp'])
    expect([...trusted.seen, ...other.seen].some(carriesSecret)).toBe(false)
  })

  it('refuses a server without PRM whose own metadata claims the trusted issuer (its token endpoint is not the issuer\'s)', async () => {
    const trusted = await harnessFor({ registration: false })
    // MCP 2025-03-26 style: no PRM, metadata at the server's origin, naming the trusted issuer.
    const impostor = await harnessFor({ prm: 'none', registration: false, metadataIssuer: () => trusted.issuer })
    const authorized = oauthFetch({ grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: trusted.issuer })
    const error = await refusal(post(authorized, impostor.mcpUrl))
    expect(error.code).toBe(AuthorizationErrorCode.UntrustedIssuer)
    expect(impostor.requestsTo('/token')).toEqual([])
    expect(impostor.paths().some(path => path.includes('authorization-server'))).toBe(false)
    expect([...trusted.seen, ...impostor.seen].some(carriesSecret)).toBe(false)
  })

  it('picks the trusted issuer among the authorization servers the PRM lists', async () => {
    const harness = await harnessFor({ registration: false, otherAuthorizationServers: ['https://first.example'] })
    const log: string[] = []
    const authorized = oauthFetch({ grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: harness.issuer, fetch: routedFetch({}, log) })
    expect((await post(authorized, harness.mcpUrl)).status).toBe(200)
    expect(log.some(url => url.includes('first.example'))).toBe(false)
    expect(harness.requestsTo('/token').every(carriesSecret)).toBe(true)
  })

  it('needs the issuer with a client secret, or with a client id and a private key, at once', () => {
    expect(() => oauthFetch({ clientId: 'c', clientSecret: SECRET })).toThrow(new TypeError('a clientSecret, or a clientId with a privateKey, needs the issuer option: the authorization server they are for'))
    expect(() => oauthFetch({ clientId: 'c', privateKey: 'PEM' })).toThrow(TypeError)
    expect(() => oauthFetch({ clientId: 'c', clientSecret: SECRET, issuer: 'not a url' })).toThrow(new TypeError('issuer must be a URL'))
    // A public client id alone sends nothing secret.
    expect(() => oauthFetch({ clientId: 'c' })).not.toThrow()
  })

  it('refuses http:// to a host that is not loopback: the secret never travels in clear', async () => {
    const harness = await harnessFor({ registration: false, metadata: { token_endpoint: 'http://as.example.test/token' } })
    const log: string[] = []
    const authorized = oauthFetch({
      grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: harness.issuer,
      fetch: routedFetch({ 'as.example.test': harness.origin }, log), lookup: async () => [PUBLIC_ADDRESS],
    })
    const error = await refusal(post(authorized, harness.mcpUrl))
    expect(error.code).toBe(AuthorizationErrorCode.EndpointRefused)
    expect(error.message).toBe('refused to request http://as.example.test/token: http:// is allowed for loopback hosts only (allowInsecureRequests allows it)')
    expect(harness.requestsTo('/token')).toEqual([])
    expect(log.some(url => url.includes('as.example.test'))).toBe(false)
  })

  it('refuses a host name that resolves to a private address, unless allowPrivateNetwork names it', async () => {
    const harness = await harnessFor({ registration: false, metadata: { token_endpoint: 'https://as.internal.test/token' } })
    const lookups: string[] = []
    const options = (): OAuthFetchOptions => ({
      grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: harness.issuer,
      fetch: routedFetch({ 'as.internal.test': harness.origin }, []),
      lookup: async host => { lookups.push(host); return host === 'as.internal.test' ? ['10.0.0.7'] : [PUBLIC_ADDRESS] },
    })
    const error = await refusal(post(oauthFetch(options()), harness.mcpUrl))
    expect(error.code).toBe(AuthorizationErrorCode.EndpointRefused)
    expect(error.message).toBe('refused to request https://as.internal.test/token: as.internal.test resolves to the private address 10.0.0.7 (allowPrivateNetwork allows it)')
    expect(harness.requestsTo('/token')).toEqual([])
    // IP literals are judged as they are: only the name was resolved.
    expect(lookups).toEqual(['as.internal.test'])
    // The application allows that host: the same flow completes.
    expect((await post(oauthFetch({ ...options(), allowPrivateNetwork: ['as.internal.test'] }), harness.mcpUrl)).status).toBe(200)
    expect(harness.requestsTo('/token')).toHaveLength(1)
  })

  it('refuses loopback endpoints named by an MCP server that is not on loopback', async () => {
    const harness = await harnessFor({ prmResource: () => 'https://mcp.example.test/mcp' })
    const authorized = oauthFetch({
      redirect: headlessRedirect(), redirectUri: REDIRECT_URI,
      fetch: routedFetch({ 'mcp.example.test': harness.origin }, []), lookup: async () => [PUBLIC_ADDRESS],
    })
    const error = await refusal(post(authorized, 'https://mcp.example.test/mcp'))
    expect(error.code).toBe(AuthorizationErrorCode.EndpointRefused)
    expect(error.message).toContain('the loopback address 127.0.0.1, while the MCP server is not on loopback')
    expect(harness.paths()).toEqual(['/mcp', '/.well-known/oauth-protected-resource/mcp'])
  })
})

/** A server whose every answer is `size` bytes of JSON-looking text, written as the socket drains; `sent` counts what it wrote. */
async function hugeAnswers(size: number, body: (filler: string) => string = filler => `{"resource":"${filler}`) {
  const stats = { sent: 0, closed: signal() }
  const chunk = 'a'.repeat(64 * 1024)
  const server = await testServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.on('close', () => stats.closed.resolve())
    const head = body('')
    response.write(head)
    stats.sent += head.length
    const more = () => {
      while (stats.sent < size && !response.destroyed) {
        stats.sent += chunk.length
        if (!response.write(chunk)) return void response.once('drain', more)
      }
      if (!response.destroyed) response.end('"}')
    }
    more()
  })
  return { ...server, stats }
}

/** The FrameTooLargeError (or its safe copy) behind an AuthorizationError RequestFailed. */
function expectTooLarge(error: AuthorizationError): void {
  expect(error.code).toBe(AuthorizationErrorCode.RequestFailed)
  expect(error.cause).toMatchObject({ name: 'FrameTooLargeError', code: 'RXMCP_ERR_FRAME_TOO_LARGE' })
  expect((error.cause as Error).message).toMatch(/exceeds 1048576 bytes \(maxResponseBytes\)$/)
}

describe('issue 20: the OAuth client reads metadata and token responses with no size bound or timeout', () => {
  it('stops reading a metadata document at maxResponseBytes (1 MiB) and closes the stream', async () => {
    const huge = await hugeAnswers(64 * 1024 * 1024)
    const harness = await harnessFor({ headerPrmUrl: `${huge.origin}/prm` })
    const authorized = oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI })
    expectTooLarge(await refusal(post(authorized, harness.mcpUrl)))
    await huge.stats.closed.promise
    // What the server managed to write: the cap and the socket buffers, not the 64 MiB.
    expect(huge.stats.sent).toBeLessThan(16 * 1024 * 1024)
  })

  it('caps a token response read through oauth4webapi', async () => {
    const huge = await hugeAnswers(2 * 1024 * 1024, () => '{"token_type":"Bearer","access_token":"')
    const harness = await harnessFor({ registration: false, metadata: { token_endpoint: `${huge.origin}/token` } })
    const authorized = oauthFetch({ grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: harness.issuer })
    expectTooLarge(await refusal(post(authorized, harness.mcpUrl)))
  })

  it('caps a dynamic client registration response', async () => {
    const huge = await hugeAnswers(2 * 1024 * 1024, () => '{"client_id":"x","padding":"')
    const harness = await harnessFor({ metadata: { registration_endpoint: `${huge.origin}/register` } })
    const authorized = oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI })
    expectTooLarge(await refusal(post(authorized, harness.mcpUrl)))
    expect(harness.requestsTo('/authorize')).toEqual([])
  })

  it('caps an enterprise identity provider\'s answer', async () => {
    const huge = await hugeAnswers(2 * 1024 * 1024, () => '{"issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","access_token":"')
    const harness = await harnessFor({ registration: false })
    const authorized = oauthFetch({ grant: enterpriseGrant({ idpTokenEndpoint: `${huge.origin}/idp`, idpClientId: 'idp-client', idToken: () => 'id-token' }), clientId: 'c' })
    expectTooLarge(await refusal(post(authorized, harness.mcpUrl)))
    expect(harness.requestsTo('/token')).toEqual([])
  })

  it('gives up on a metadata answer that never completes after requestTimeoutMs (10 s)', async () => {
    const arrived = signal()
    const stalled = await testServer((_request, response) => {
      // Headers and the start of a body, then nothing, for ever.
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"resource":')
      arrived.resolve()
    })
    const harness = await harnessFor({ headerPrmUrl: `${stalled.origin}/prm` })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const authorized = oauthFetch({ redirect: headlessRedirect(), redirectUri: REDIRECT_URI })
    let outcome: unknown
    const settled = post(authorized, harness.mcpUrl).then(value => { outcome = value }, (error: unknown) => { outcome = error })
    await arrived.promise
    await vi.advanceTimersByTimeAsync(OAUTH_FETCH_DEFAULTS.requestTimeoutMs - 1)
    await new Promise(resolve => setImmediate(resolve))
    expect(outcome).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await settled
    expect(outcome).toBeInstanceOf(AuthorizationError)
    const error = outcome as AuthorizationError
    expect(error.code).toBe(AuthorizationErrorCode.RequestFailed)
    expect(error.cause).toMatchObject({ name: 'TimeoutError', code: 'RXMCP_ERR_TIMEOUT', timeout: 10_000 })
  })

  it('gives up on a token endpoint that never answers after requestTimeoutMs', async () => {
    const arrived = signal()
    const silent = await testServer(() => { arrived.resolve() })
    const harness = await harnessFor({ registration: false, metadata: { token_endpoint: `${silent.origin}/token` } })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const authorized = oauthFetch({ grant: 'client_credentials', clientId: 'machine', clientSecret: SECRET, issuer: harness.issuer, requestTimeoutMs: 2_000 })
    const pending = refusal(post(authorized, harness.mcpUrl))
    await arrived.promise
    await vi.advanceTimersByTimeAsync(2_000)
    const error = await pending
    expect(error.code).toBe(AuthorizationErrorCode.RequestFailed)
    expect(error.cause).toMatchObject({ name: 'TimeoutError', code: 'RXMCP_ERR_TIMEOUT' })
  })
})
