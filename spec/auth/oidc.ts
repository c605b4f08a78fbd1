import { createServer as createHttpServer, type Server } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, { type Client } from 'oidc-provider'
import { freePort } from './fixtures.ts'

/** A real authorization server for tests: oidc-provider on loopback, with DCR, resource indicators and JWT access tokens. */
export interface TestAuthorizationServer {
  readonly issuer: string
  readonly jwksUri: string
  readonly provider: Provider
  close(): Promise<void>
}

/**
 * Starts oidc-provider on a free loopback port. Access tokens for any resource are JWTs (ES256; or
 * opaque, for introspection, with `accessTokenFormat: 'opaque'`)
 * with that resource as audience and `scopes` as the scopes a client may ask for; the login and
 * consent pages are the provider's development forms (any login and password sign in).
 */
export async function startAuthorizationServer(options: { scopes: string; accessTokenTtlSec?: number; accessTokenFormat?: 'jwt' | 'opaque' }): Promise<TestAuthorizationServer> {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const signingKey = { ...await exportJWK(privateKey), kid: 'as-1', alg: 'ES256', use: 'sig' }
  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    cookies: { keys: ['rxmcp-test-cookie-key'] },
    // The one signing key is ES256, so ID tokens are too.
    clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code'], response_types: ['code'] },
    scopes: ['openid', 'offline_access', ...options.scopes.split(' ')],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({
          scope: options.scopes,
          audience: resourceIndicator,
          accessTokenTTL: options.accessTokenTtlSec ?? 3600,
          accessTokenFormat: options.accessTokenFormat ?? 'jwt',
          ...(options.accessTokenFormat === 'opaque' ? {} : { jwt: { sign: { alg: 'ES256' } } }),
        }),
      },
    },
    // Like many deployed servers, a client's registered `scope` does not cap what it may ask for
    // later (step-up); oidc-provider would cap it, so the scope is dropped from registrations.
    extraClientMetadata: { properties: ['rxmcp_test'], validator: (_ctx: unknown, _key: string, _value: unknown, metadata: Record<string, unknown>) => { delete metadata.scope } },
    // Refresh tokens for the MCP clients that ask for the grant, public ones included.
    issueRefreshToken: async (_ctx: unknown, client: Client) => client.grantTypeAllowed('refresh_token'),
    pkce: { required: () => true },
  })
  // oidc-provider logs its development-only warnings once per process; tests need none of them.
  provider.on('server_error', () => {})
  const server: Server = createHttpServer(provider.callback())
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    provider,
    close: () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/**
 * A user at a browser: follows the authorization URL's redirects with a cookie jar, fills in and
 * submits each form the authorization server shows (login with any name, then consent), and
 * stops at the redirect back to `redirectUri`, which it returns (code, state, iss).
 */
export async function actAsUser(authorizationUrl: URL, redirectUri: string, login = 'alice'): Promise<URL> {
  const cookies = new Map<string, string>()
  const remember = (response: Response) => {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';')
      const [name, ...value] = pair!.split('=')
      cookies.set(name!.trim(), value.join('='))
    }
  }
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  let url = authorizationUrl.href
  let init: RequestInit = {}
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(redirectUri)) return new URL(url)
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers as Record<string, string>, cookie: cookieHeader() } })
    remember(response)
    const location = response.headers.get('location')
    if (location !== null) {
      url = new URL(location, url).href
      init = {}
      continue
    }
    const page = await response.text()
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page)
    if (form === null) throw new Error(`The authorization server showed no form at ${url} (${response.status}): ${page.slice(0, 300)}`)
    const fields = new URLSearchParams()
    for (const input of form[2]!.matchAll(/<input[^>]*name="([^"]+)"[^>]*>/gi)) {
      const name = input[1]!
      const value = /value="([^"]*)"/.exec(input[0])?.[1]
      fields.set(name, value ?? (name === 'login' ? login : name === 'password' ? 'correct horse' : ''))
    }
    url = new URL(form[1]!.replaceAll('&amp;', '&'), url).href
    init = { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }
  }
  throw new Error('The authorization flow did not come back to the client in 20 steps')
}
