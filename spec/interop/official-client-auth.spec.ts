import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { freePort } from '../auth/fixtures.ts'
import { actAsUser, startAuthorizationServer, type TestAuthorizationServer } from '../auth/oidc.ts'

/**
 * The official SDK's client (v1.32) with its own OAuth provider against our protected server,
 * oidc-provider as the authorization server: PRM discovery from our 401, DCR, PKCE, the resource
 * indicator, then step-up when a tool needs a scope the token lacks (our 403 insufficient_scope).
 */
const REDIRECT = 'http://127.0.0.1:9/sdk-callback'

/** An OAuthClientProvider as an application writes one, with a user who signs in at once. */
class SignedInUser implements OAuthClientProvider {
  readonly authorizations: URL[] = []
  callback: URL | undefined
  #client: OAuthClientInformationMixed | undefined
  #tokens: OAuthTokens | undefined
  #verifier = ''
  get redirectUrl(): string { return REDIRECT }
  get clientMetadata(): OAuthClientMetadata {
    // No refresh_token grant: SDK 1.32 answers a 403 insufficient_scope by refreshing when it holds a
    // refresh token, which cannot widen the scope, and then gives up; without one it asks the user.
    return { client_name: 'official sdk', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'mcp admin' }
  }
  clientInformation() { return this.#client }
  saveClientInformation(client: OAuthClientInformationMixed) { this.#client = client }
  tokens() { return this.#tokens }
  saveTokens(tokens: OAuthTokens) { this.#tokens = tokens }
  async redirectToAuthorization(url: URL) {
    this.authorizations.push(url)
    this.callback = await actAsUser(url, REDIRECT, 'sdk-user')
  }
  saveCodeVerifier(verifier: string) { this.#verifier = verifier }
  codeVerifier() { return this.#verifier }
  /** The code the user brought back, for transport.finishAuth. */
  code(): string {
    const code = this.callback!.searchParams.get('code')
    if (code === null) throw new Error(`the authorization server answered ${this.callback!.search}`)
    return code
  }
}

let as: TestAuthorizationServer
let server: McpServer
let url: string
let resource: string

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: 'mcp admin' })
  const port = await freePort()
  resource = `http://127.0.0.1:${port}/mcp`
  server = createServer({ name: 'protected', version: '1' })
  server.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: `${ctx.principal?.subject} ${ctx.principal?.scopes.join(',')}` }] }))
  server.tool('admin', {}, () => ({ content: [{ type: 'text', text: 'done' }] }))
  const http = streamableHttp({
    port,
    auth: bearerAuth({
      resource, authorizationServers: [as.issuer], scopesSupported: ['mcp', 'admin'], requiredScopes: ['mcp'],
      scopes: { 'tools/call:admin': ['admin'] },
      verify: jwtVerifier({ issuer: as.issuer, jwksUrl: as.jwksUri }),
    }),
  })
  await server.listen(http)
  url = http.url!
})
afterAll(async () => {
  await server?.close()
  await as?.close()
})

describe('the official SDK client with its auth provider, against our protected server', () => {
  it('discovers from our 401, registers, authorizes with PKCE and the resource, calls, then steps up on our 403', async () => {
    const user = new SignedInUser()
    const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: user })
    const client = new Client({ name: 'official', version: '1' })
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
    expect(user.authorizations).toHaveLength(1)
    const authorization = user.authorizations[0]!
    expect(authorization.origin).toBe(as.issuer)
    expect(authorization.searchParams.get('resource')).toBe(resource)
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorization.searchParams.get('scope')).toBe('mcp')
    await first.finishAuth(user.code())

    const connected = new Client({ name: 'official', version: '1' })
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: user })
    await connected.connect(transport)
    try {
      const whoami = await connected.callTool({ name: 'whoami', arguments: {} })
      expect(whoami.content).toEqual([{ type: 'text', text: 'sdk-user mcp' }])
      // The admin tool needs a scope the token lacks: our 403 names it, the SDK asks the user again.
      await expect(connected.callTool({ name: 'admin', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError)
      expect(user.authorizations).toHaveLength(2)
      expect(user.authorizations[1]!.searchParams.get('scope')).toBe('mcp admin')
      await transport.finishAuth(user.code())
      // Same session, new token of the same user with the wider scope.
      expect((await connected.callTool({ name: 'admin', arguments: {} })).content).toEqual([{ type: 'text', text: 'done' }])
      expect((await connected.callTool({ name: 'whoami', arguments: {} })).content).toEqual([{ type: 'text', text: 'sdk-user mcp,admin' }])
    } finally {
      await connected.close()
    }
  })
})
