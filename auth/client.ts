/**
 * The OAuth 2.1 client for MCP (authorization spec 2025-11-25 and the 2026-07-28 draft), at the
 * fetch level: {@link oauthFetch} wraps a fetch so that requests to an MCP server carry its access
 * token, and a 401 or a 403 `insufficient_scope` runs discovery, registration and a grant.
 *
 * Protocol steps (PKCE, token requests, client authentication, DCR, DPoP proofs) come from
 * oauth4webapi; discovery follows the MCP order itself (see discover in auth/client/discovery.ts).
 */
import * as oauth from 'oauth4webapi'
import { importPKCS8 } from 'jose'
import { authChallenge } from '../lib/www-authenticate.ts'
import { credentialContext } from '../lib/authorization-context.ts'
import { canonicalResource, discover, type Discovery } from './client/discovery.ts'
import { hostKind } from './client/address.ts'
import { checkEndpoint, guardedFetch, systemLookup, type EndpointPolicy, type HostLookup } from './client/endpoint-guard.ts'
import { AuthorizationError, AuthorizationErrorCode } from './client/errors.ts'
import { authorizationCodeGrant, checkPkceSupport, clientCredentialsGrant, extensionGrant, refreshGrant, type GrantContext, type HttpOptions, type RedirectHook } from './client/grants.ts'
import { registerClient, type RegisteredClient, type TokenEndpointAuthMethod } from './client/registration.ts'
import { enterpriseGrant, JWT_BEARER_GRANT_TYPE, type EnterpriseGrantOptions, type ExtensionGrant } from './client/enterprise.ts'
import { fileTokenStore, memoryTokenStore, type TokenSet, type TokenStore } from './client/token-store.ts'
import { discardBody } from '../lib/http/discard-body.ts'

export { AuthorizationError, AuthorizationErrorCode, enterpriseGrant, fileTokenStore, JWT_BEARER_GRANT_TYPE, memoryTokenStore }
export { loopbackRedirect, LOOPBACK_REDIRECT_DEFAULTS } from './loopback.ts'
export type { LoopbackRedirect, LoopbackRedirectOptions } from './loopback.ts'
export type { Discovery, EnterpriseGrantOptions, ExtensionGrant, HostLookup, RedirectHook, RegisteredClient, TokenEndpointAuthMethod, TokenSet, TokenStore }
export type { AuthorizationServerMetadata, ProtectedResourceMetadata } from './client/discovery.ts'

/** Options of {@link oauthFetch}. */
export interface OAuthFetchOptions {
  /** The fetch to wrap, also used for discovery, registration and token requests (default the global one). */
  fetch?: typeof fetch
  /**
   * The fetch that sends the authorized requests themselves (default: `fetch`); discovery,
   * registration and token requests keep `fetch`, whose responses oauth4webapi reads as real
   * `Response`s. Give the HTTP client transports' own exchange here (`nodeFetch` from
   * `rxmcp/transports/http-client`, on Node: about a quarter of the global fetch's CPU per request)
   * when the wrapped fetch serves an MCP client transport, which reads no more of a response than
   * nodeFetch's light one has.
   */
  requestFetch?: typeof fetch
  /** `authorization_code` (default, needs `redirect` and `redirectUri`), `client_credentials`, or an {@link ExtensionGrant}. */
  grant?: 'authorization_code' | 'client_credentials' | ExtensionGrant
  /** The redirect step of the authorization code grant: show the URL to the user, resolve with the callback URL (code, state, iss). */
  redirect?: RedirectHook
  /**
   * The redirect URI registered for the client (authorization code grant): https, or http to a
   * loopback host (`localhost`, 127.0.0.0/8, `[::1]`), without a fragment (MCP: redirect URIs
   * MUST be localhost or https); anything else throws a TypeError at once. Dynamic registration
   * always registers it.
   */
  redirectUri?: string
  /**
   * A pre-registered client id (used as is, before metadata documents and DCR), at the authorization
   * server `issuer`. Without `issuer` it is bound to the first authorization server it is used with
   * (or the one that issued the stored tokens of this client id): another one fails with
   * AuthorizationError UntrustedIssuer before the id is sent to it.
   */
  clientId?: string
  /** The pre-registered client's secret: needs `issuer`, and is sent to that authorization server only. */
  clientSecret?: string
  /**
   * The issuer identifier of the one authorization server this client trusts (the one that issued
   * `clientId`, `clientSecret` or the key for `privateKey`): required with a `clientSecret` or with
   * `clientId` and `privateKey`. With it the client authorizes only there: it picks that server from
   * the Protected Resource Metadata's list (or, without PRM, the MCP server's origin must be it), its
   * metadata must name exactly this issuer, and any other server fails with AuthorizationError
   * UntrustedIssuer before a request reaches it.
   */
  issuer?: string
  /** The token endpoint auth method; default: from registration, else what the server supports (basic before post). */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod
  /** A private key for private_key_jwt: a CryptoKey, or PKCS#8 PEM imported with `signingAlgorithm`. */
  privateKey?: CryptoKey | string
  /** The JWS algorithm of a PEM `privateKey` (default ES256). */
  signingAlgorithm?: string
  /** An https URL used as client_id where the server supports Client ID Metadata Documents. */
  clientMetadataUrl?: string
  /** Extra client metadata for Dynamic Client Registration (`client_name`, say). */
  clientMetadata?: Record<string, unknown>
  /** The scope to ask for, instead of the challenge's or the resource metadata's. */
  scope?: string
  /** DPoP-bound tokens (RFC 9449): true for a fresh ES256 key, or a key pair; default when the server advertises DPoP. */
  dpop?: boolean | CryptoKeyPair
  /** Where tokens are kept, keyed by the MCP server's canonical URL (default in memory). */
  tokenStore?: TokenStore
  /** The clock, in ms since the epoch (default Date.now). */
  now?: () => number
  /** Refresh this long before the access token expires (default 60 s). */
  refreshSkewMs?: number
  /** Authorizations allowed for one request, step-ups included (default 3). */
  maxAuthorizationAttempts?: number
  /** Allow http:// to metadata, registration, token and authorization endpoints on any host (default false: https, or http to a loopback host). */
  allowInsecureRequests?: boolean
  /**
   * Addresses the OAuth client may reach beyond public ones: `true` for any, or a list of hosts
   * (names or IP literals, as in the URL) allowed whatever they resolve to. By default the client
   * refuses (AuthorizationError EndpointRefused) metadata, registration, token and authorization
   * URLs on private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local (169.254/16,
   * fe80::/10, cloud metadata services) and other special addresses (0.0.0.0, multicast, …), and
   * loopback ones unless the MCP server is itself on loopback.
   */
  allowPrivateNetwork?: boolean | readonly string[]
  /**
   * Resolves host names so that their addresses are checked too (default: the system resolver in
   * Node, none in browsers; false: check the URL's literal only). A name is checked when the request
   * starts, and the connection resolves it again: a server that changes its DNS answer in between
   * is only stopped by a `fetch` that checks the address it connects to.
   */
  lookup?: HostLookup | false
  /** Bytes read at most from one metadata, registration, token or IdP answer (default 1 MiB). */
  maxResponseBytes?: number
  /** Ms for one such request, its whole answer and redirects included (default 10 s). */
  requestTimeoutMs?: number
}

/** DEFAULTS of {@link OAuthFetchOptions}. */
export const OAUTH_FETCH_DEFAULTS = {
  refreshSkewMs: 60_000, maxAuthorizationAttempts: 3, signingAlgorithm: 'ES256', dpopAlgorithm: 'ES256',
  maxResponseBytes: 1_048_576, requestTimeoutMs: 10_000,
  /** Redirects followed for one metadata GET (each hop checked like the first URL); POSTs follow none. */
  maxRedirects: 5,
} as const

/** What one MCP server (one canonical URL) needs between requests. */
interface ServerAuthorization {
  /** The canonical server URL: the token store key. */
  key: string
  url: URL
  /** The guarded fetch for this server's OAuth requests (see auth/client/endpoint-guard.ts). */
  fetch: typeof fetch
  /** The last discovery, reused for refreshes. */
  discovery: Discovery | undefined
  /** The scope last asked for, the base of a step-up. */
  scope: string | undefined
  /** Authorization and refresh run one at a time per server: this is the tail of that queue. */
  lock: Promise<unknown>
}

/**
 * Wraps a fetch so that every request carries the MCP server's access token
 * (`Authorization: Bearer …`, or `DPoP …` with a proof), and authorizes when the server asks:
 *
 *   request ──> 2xx ..................................................... returned
 *           ──> 401 ──> discovery ─┬─ same issuer, refresh token ─> refresh ─> retry
 *                                  └─ else register (per issuer) ─> grant ──> retry
 *           ──> 403 insufficient_scope ─> grant with the union of scopes ──> retry
 *
 * A token that expires within `refreshSkewMs` is refreshed before the request. A 401 authorizes
 * once per request; step-ups go on up to `maxAuthorizationAttempts` authorizations in all, then
 * the request fails with AuthorizationError TooManyAttempts. Refusals (issuer, resource, state,
 * iss) fail the request with AuthorizationError; other answers are returned as they are.
 *
 * The client's own requests (discovery, registration, token, an extension grant's) go through a
 * guard (auth/client/endpoint-guard.ts): each URL must be https (or http to a loopback host) and
 * not on a private, link-local or special address (`allowPrivateNetwork`), and each answer is read
 * up to `maxResponseBytes` within `requestTimeoutMs`. Pre-registered credentials go only to
 * `issuer`'s authorization server (AuthorizationError UntrustedIssuer for any other).
 * Requests are sent again after authorizing: a stream body is read whole first (the Streamable
 * HTTP client sends strings). A request whose signal aborted while it waited for an
 * authorization fails with the signal's reason instead of being sent again.
 * @example
 * const client = await connect(streamableHttpClient(url, {
 *   fetch: oauthFetch({ redirectUri: 'http://127.0.0.1:8765/callback', redirect: openBrowserAndWait }),
 * }), { name: 'me', version: '1' })
 * @see headlessRedirect for servers that redirect at once, fileTokenStore, enterpriseGrant
 */
export function oauthFetch(options: OAuthFetchOptions = {}): OAuthFetch {
  // Client ID Metadata Documents: the client_id is an https URL with a path (bad arguments throw at once).
  if (options.clientMetadataUrl !== undefined && !/^https:\/\/[^/]+\/./.test(options.clientMetadataUrl)) {
    throw new TypeError('clientMetadataUrl must be an https URL with a path')
  }
  // Credentials go to the server that issued them, never to one an MCP server names.
  if (options.issuer === undefined && (options.clientSecret !== undefined || (options.clientId !== undefined && options.privateKey !== undefined))) {
    throw new TypeError('a clientSecret, or a clientId with a privateKey, needs the issuer option: the authorization server they are for')
  }
  if (options.issuer !== undefined && !URL.canParse(options.issuer)) throw new TypeError('issuer must be a URL')
  // MCP communication security: every redirect URI the client uses or registers is localhost or https.
  const registered = options.clientMetadata?.redirect_uris
  for (const uri of [options.redirectUri, ...(Array.isArray(registered) ? registered : [])]) {
    const problem = uri === undefined ? undefined : redirectUriProblem(uri)
    if (problem !== undefined) throw new TypeError(`redirect URI ${String(uri)} ${problem}`)
  }
  // Called as a plain function: a browser's fetch throws "Illegal invocation" as a method of another object.
  const baseFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const requestFetch = options.requestFetch ?? baseFetch
  const store = options.tokenStore ?? memoryTokenStore()
  const now = options.now ?? Date.now
  const refreshSkewMs = options.refreshSkewMs ?? OAUTH_FETCH_DEFAULTS.refreshSkewMs
  const maxAttempts = options.maxAuthorizationAttempts ?? OAUTH_FETCH_DEFAULTS.maxAuthorizationAttempts
  const grant = options.grant ?? 'authorization_code'
  const policy: EndpointPolicy = {
    allowInsecureRequests: options.allowInsecureRequests ?? false,
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    lookup: options.lookup === false ? undefined : options.lookup ?? systemLookup(),
    maxResponseBytes: options.maxResponseBytes ?? OAUTH_FETCH_DEFAULTS.maxResponseBytes,
    timeoutMs: options.requestTimeoutMs ?? OAUTH_FETCH_DEFAULTS.requestTimeoutMs,
    maxRedirects: OAUTH_FETCH_DEFAULTS.maxRedirects,
  }
  /** What each server needs between requests, by canonical server URL. */
  const authorizations = new Map<string, ServerAuthorization>()
  /** Registered clients by issuer: a new authorization server gets a registration of its own. */
  const clients = new Map<string, Promise<RegisteredClient>>()
  /**
   * The authorization server a pre-registered `clientId` belongs to: the `issuer` option, else the
   * first one it was used with (or the issuer of stored tokens issued to it). MCP 2026-07-28:
   * credentials are bound to the server that issued them and never presented to another.
   */
  let clientIdIssuer = options.clientId === undefined ? undefined : options.issuer
  /** The DPoP key handle, made on first use. */
  let dpop: Promise<oauth.DPoPHandle> | undefined
  /** The private_key_jwt key, imported on first use. */
  let privateKey: Promise<CryptoKey> | undefined

  const authorizationFor = (url: URL): ServerAuthorization => {
    const key = canonicalResource(new URL(url.origin + url.pathname))
    let server = authorizations.get(key)
    if (server === undefined) {
      const serverUrl = new URL(key)
      authorizations.set(key, server = { key, url: serverUrl, fetch: guardedFetch(baseFetch, serverUrl, policy), discovery: undefined, scope: undefined, lock: Promise.resolve() })
    }
    return server
  }
  const locked = <T>(server: ServerAuthorization, work: () => Promise<T>): Promise<T> => {
    const run = server.lock.then(work, work)
    server.lock = run.catch(() => undefined)
    return run
  }
  const http = (server: ServerAuthorization): HttpOptions => ({
    // Every token and registration request goes through the guard: checked, bounded, timed.
    [oauth.customFetch]: (url, init) => server.fetch(url, init as RequestInit),
    // The guard's rule (https, or http to loopback) stands in for oauth4webapi's https-only one.
    [oauth.allowInsecureRequests]: true,
  })
  const dpopFor = (discovery: Discovery): Promise<oauth.DPoPHandle> | undefined => {
    const advertised = discovery.server.dpop_signing_alg_values_supported
    if (options.dpop === false || (options.dpop === undefined && (advertised === undefined || advertised.length === 0))) return undefined
    dpop ??= (async () => {
      if (typeof options.dpop === 'object') return oauth.DPoP({}, options.dpop)
      const algorithm = advertised === undefined || advertised.includes(OAUTH_FETCH_DEFAULTS.dpopAlgorithm) ? OAUTH_FETCH_DEFAULTS.dpopAlgorithm : advertised.find(alg => alg !== 'none') ?? OAUTH_FETCH_DEFAULTS.dpopAlgorithm
      return oauth.DPoP({}, await oauth.generateKeyPair(algorithm, { extractable: false }))
    })()
    return dpop
  }
  const keyFor = (): Promise<CryptoKey> | undefined => {
    const key = options.privateKey
    if (key === undefined) return undefined
    privateKey ??= typeof key === 'string' ? importPKCS8(key, options.signingAlgorithm ?? OAUTH_FETCH_DEFAULTS.signingAlgorithm) : Promise.resolve(key)
    return privateKey
  }
  const contextFor = async (server: ServerAuthorization, discovery: Discovery, scope: string | undefined): Promise<GrantContext> => {
    const issuer = discovery.server.issuer
    let client = clients.get(issuer)
    const stored = client === undefined || (options.clientId !== undefined && clientIdIssuer === undefined) ? await store.get(server.key) : undefined
    if (options.clientId !== undefined) {
      clientIdIssuer ??= stored?.clientId === options.clientId ? stored.issuer : issuer
      if (clientIdIssuer !== issuer) {
        throw new AuthorizationError(AuthorizationErrorCode.UntrustedIssuer, `the pre-registered client id is for the authorization server ${clientIdIssuer}, not ${issuer}: give the issuer option for the server it is registered with`)
      }
    }
    if (client === undefined && options.clientId === undefined && stored?.registration !== undefined && stored.issuer === issuer) {
      // A registration from an earlier run with this store (see TokenSet.registration).
      client = Promise.resolve({ clientId: stored.clientId, clientSecret: stored.registration.clientSecret, method: stored.registration.method, source: 'dynamic' })
      clients.set(issuer, client)
    }
    if (client === undefined) {
      client = registerClient(discovery.server, {
        clientId: options.clientId, clientSecret: options.clientSecret, tokenEndpointAuthMethod: options.tokenEndpointAuthMethod,
        hasPrivateKey: options.privateKey !== undefined, clientMetadataUrl: options.clientMetadataUrl, clientMetadata: options.clientMetadata,
        redirectUri: options.redirectUri, scope,
        grantTypes: grant === 'authorization_code' ? ['authorization_code', 'refresh_token'] : [typeof grant === 'string' ? grant : grant.type],
      }, http(server))
      clients.set(issuer, client)
      // A failed registration is tried again next time.
      client.catch(() => { if (clients.get(issuer) === client) clients.delete(issuer) })
    }
    return {
      server: discovery.server, hasMetadata: discovery.hasMetadata, client: await client, privateKey: await keyFor(),
      dpop: await dpopFor(discovery), resource: discovery.resource, http: http(server), now,
      checkEndpoint: url => checkEndpoint(url, server.url, policy, AbortSignal.timeout(policy.timeoutMs)),
    }
  }

  /** The scope to ask for on a 401: the option, the challenge's, else the PRM's; plus offline_access where offered. */
  const initialScope = (discovery: Discovery, challenged: string | undefined): string | undefined => {
    const scopes = (options.scope ?? challenged ?? discovery.resourceMetadata?.scopes_supported?.join(' ') ?? '').split(' ').filter(Boolean)
    // MCP 2026-07-28 (SEP-2207): ask for a refresh token where the server offers offline_access.
    if (grant === 'authorization_code' && discovery.server.scopes_supported?.includes('offline_access') && !scopes.includes('offline_access')) scopes.push('offline_access')
    return scopes.length === 0 ? undefined : scopes.join(' ')
  }

  /** Gets new tokens: refresh when allowed and the issuer is unchanged, else register and run the grant. */
  const authorize = async (server: ServerAuthorization, failed: TokenSet | undefined, resourceMetadataUrl: string | undefined, scope: (discovery: Discovery) => string | undefined, canRefresh: boolean): Promise<'refreshed' | 'authorized'> => {
    // Always discover again: the resource may have moved to another authorization server (SEP-2352).
    const discovery = server.discovery = await discover(server.url, resourceMetadataUrl, server.fetch, options.issuer)
    if (canRefresh && failed?.refreshToken !== undefined && failed.issuer === discovery.server.issuer) {
      const context = await contextFor(server, discovery, failed.scope)
      const refreshed = await refreshGrant(context, failed).catch(() => undefined)
      if (refreshed !== undefined) { await store.set(server.key, refreshed); return 'refreshed' }
    }
    // The authorization code grant needs PKCE S256: checked before registering anywhere (MCP: refuse to proceed).
    if (grant === 'authorization_code') checkPkceSupport(discovery.server, discovery.hasMetadata)
    const wanted = scope(discovery)
    const context = await contextFor(server, discovery, wanted)
    server.scope = wanted
    let tokens: TokenSet
    if (grant === 'client_credentials') tokens = await clientCredentialsGrant(context, wanted)
    else if (typeof grant === 'object') tokens = await extensionGrant(context, grant.type, await grant.parameters(discovery, server.fetch), wanted)
    else {
      if (options.redirect === undefined || options.redirectUri === undefined) throw new AuthorizationError(AuthorizationErrorCode.InteractionRequired, 'authorization needs the redirect and redirectUri options')
      tokens = await authorizationCodeGrant(context, wanted, options.redirect, options.redirectUri)
    }
    await store.set(server.key, tokens)
    return 'authorized'
  }

  /** The stored tokens, refreshed first when they expire within refreshSkewMs. */
  const currentTokens = async (server: ServerAuthorization): Promise<TokenSet | undefined> => {
    const tokens = await store.get(server.key)
    if (tokens?.expiresAt === undefined || tokens.refreshToken === undefined || tokens.expiresAt - now() > refreshSkewMs) return tokens
    return locked(server, async () => {
      const latest = await store.get(server.key)
      // Another request refreshed while this one waited.
      if (latest !== undefined && latest.accessToken !== tokens.accessToken) return latest
      try {
        const discovery = server.discovery ??= await discover(server.url, undefined, server.fetch, options.issuer)
        if (discovery.server.issuer !== tokens.issuer) return tokens
        const refreshed = await refreshGrant(await contextFor(server, discovery, tokens.scope), tokens)
        await store.set(server.key, refreshed)
        return refreshed
      } catch {
        // A failed refresh leaves the old token: the server's 401 starts a full authorization.
        return tokens
      }
    })
  }

  /** Sends the request once with `tokens`. */
  const send = async (input: RequestInfo | URL, init: RequestInit | undefined, url: URL, tokens: TokenSet | undefined): Promise<Response> => {
    const headers = new Headers(input instanceof Request ? input.headers : undefined)
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value))
    const handle = tokens?.tokenType === 'dpop' ? await dpop : undefined
    if (tokens !== undefined) {
      if (handle !== undefined) await (handle as unknown as ProofMaker).addProof(url, headers, (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(), tokens.accessToken)
      headers.set('authorization', `${handle === undefined ? 'Bearer' : 'DPoP'} ${tokens.accessToken}`)
    }
    const response = await requestFetch(input instanceof Request ? input.clone() : input, { ...init, headers })
    if (handle !== undefined) (handle as unknown as ProofMaker).cacheNonce(response, url)
    return response
  }

  /** The headers that authorize a request to `target` without sending one: for WebSocket upgrades. */
  const headersFor = async (target: string | URL, method = 'GET'): Promise<Record<string, string>> => {
    const url = new URL(target)
    const server = authorizationFor(url)
    let tokens = await currentTokens(server)
    if (tokens === undefined) {
      // No request was refused yet: discovery starts from the well-known metadata of the URL.
      await locked(server, async () => {
        if (await store.get(server.key) === undefined) await authorize(server, undefined, undefined, discovery => initialScope(discovery, undefined), false)
      })
      tokens = await currentTokens(server)
    }
    if (tokens === undefined) return {}
    const headers = new Headers()
    const handle = tokens.tokenType === 'dpop' ? await dpop : undefined
    if (handle !== undefined) await (handle as unknown as ProofMaker).addProof(url, headers, method, tokens.accessToken)
    headers.set('authorization', `${handle === undefined ? 'Bearer' : 'DPoP'} ${tokens.accessToken}`)
    const result: Record<string, string> = {}
    headers.forEach((value, name) => { result[name] = value })
    return result
  }

  const authorizedFetch: typeof fetch = async (input, requestInit) => {
    const url = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input)
    const server = authorizationFor(url)
    // A stream body can be sent once: read it whole, so that the request can be sent again.
    const init = requestInit?.body instanceof ReadableStream ? { ...requestInit, body: await new Response(requestInit.body).arrayBuffer(), duplex: undefined } : requestInit
    /** Grants run for this request (step-ups included); refreshes do not count. */
    let authorizations = 0
    let hasRefreshed = false
    let hasRetriedNonce = false
    // Rounds in all, a backstop against servers that keep refusing fresh tokens in new ways.
    for (let round = 0; ; round++) {
      // The caller gave up while this request waited for an authorization.
      init?.signal?.throwIfAborted()
      const tokens = await currentTokens(server)
      const response = await send(input, init, url, tokens)
      if (response.status !== 401 && response.status !== 403) return response
      const challenge = authChallenge(response.headers.get('www-authenticate'))
      const isStepUp = response.status === 403 && challenge?.params.error === 'insufficient_scope'
      if (response.status === 403 && !isStepUp) return response
      if (round > 2 * maxAttempts + 2) return response
      // RFC 9449 §9: the resource server wants a nonce in the proof; it came with this answer.
      if (response.status === 401 && challenge?.params.error === 'use_dpop_nonce' && tokens?.tokenType === 'dpop' && !hasRetriedNonce) {
        hasRetriedNonce = true
        discardBody(response)
        continue
      }
      // One grant answers a 401; a 401 to its token is the server's last word.
      if (!isStepUp && authorizations > 0) return response
      discardBody(response)
      if (authorizations >= maxAttempts) {
        throw new AuthorizationError(AuthorizationErrorCode.TooManyAttempts, `${server.key} still asks for more scope after ${authorizations} authorizations`)
      }
      const outcome = await locked(server, async () => {
        const latest = await store.get(server.key)
        // Another request already replaced the token that failed: retry with it.
        if (latest !== undefined && latest.accessToken !== tokens?.accessToken) return 'reused'
        const challenged = challenge?.params.scope
        return authorize(server, tokens, challenge?.params.resource_metadata, discovery => isStepUp
          // Step-up: what was asked for before plus what the challenge names.
          ? union(server.scope ?? tokens?.scope ?? initialScope(discovery, undefined), challenged)
          : initialScope(discovery, challenged), !isStepUp && !hasRefreshed)
      })
      if (outcome === 'refreshed') hasRefreshed = true
      if (outcome === 'authorized') authorizations++
    }
  }
  /** The authorization context of the next request to `target`: the one of the access token held for its server. */
  const authorizationContext = async (target: string | URL): Promise<string> => credentialContext((await store.get(authorizationFor(new URL(target)).key))?.accessToken)

  return Object.assign(authorizedFetch, { headersFor, authorizationContext })
}

/**
 * What {@link oauthFetch} returns: a fetch, and `headersFor(url)`, the headers that authorize a
 * request to that MCP server (authorizing first when no token is held), for transports that do
 * not go through fetch; and `authorizationContext(url)`, an opaque name of the access token held
 * for that server (`''` for none), which the Streamable HTTP client transport hands to the
 * client's cache so that a `private` result serves only requests sent with the same token (MCP
 * 2026-07-28 caching).
 */
export type OAuthFetch = typeof fetch & {
  headersFor(url: string | URL, method?: string): Promise<Record<string, string>>
  authorizationContext(url: string | URL): Promise<string>
}

/**
 * Upgrade headers for `websocketClient`, from an {@link oauthFetch}: a fresh (refreshed when due)
 * token on each connection. `url` is the server's WebSocket URL; the token is the one for its
 * http(s) form, the resource a Streamable HTTP endpoint on the same path would be.
 * @example
 * const authorized = oauthFetch({ redirect, redirectUri })
 * const transport = websocketClient('wss://mcp.example.com/mcp', { headers: oauthWebSocketHeaders(authorized, 'wss://mcp.example.com/mcp') })
 */
export function oauthWebSocketHeaders(authorized: OAuthFetch, url: string | URL): () => Promise<Record<string, string>> {
  const target = new URL(url)
  if (target.protocol === 'ws:' || target.protocol === 'wss:') target.protocol = target.protocol === 'ws:' ? 'http:' : 'https:'
  return () => authorized.headersFor(target, 'GET')
}

/**
 * A redirect hook for authorization servers that answer the authorization URL with a redirect at
 * once (tests, conformance, pre-approved clients): GETs it with `redirect: 'manual'` and resolves
 * with its Location. Errors when the answer is not a redirect.
 */
export function headlessRedirect(fetchFn: typeof fetch = (input, init) => globalThis.fetch(input, init)): RedirectHook {
  return async authorizationUrl => {
    const response = await fetchFn(authorizationUrl, { redirect: 'manual' })
    discardBody(response)
    const location = response.headers.get('location')
    if (location === null) throw new AuthorizationError(AuthorizationErrorCode.Denied, `the authorization endpoint answered ${response.status} without a redirect`)
    return new URL(location, authorizationUrl)
  }
}

/** The DPoP handle's methods oauth4webapi uses for its own resource requests (not in its types). */
interface ProofMaker {
  addProof(url: URL, headers: Headers, method: string, accessToken?: string): Promise<void>
  cacheNonce(response: Response, url: URL): void
}

/**
 * Why a redirect URI may not be used, or undefined when it may: it must be an absolute https URL,
 * or http to a loopback host (RFC 8252 §7.3), with no fragment (OAuth 2.1 §2.3.1).
 */
function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return 'is not a URL'
  const url = new URL(uri)
  if (url.hash !== '' || uri.includes('#')) return 'has a fragment'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:' && hostKind(url.hostname) === 'loopback') return undefined
  return 'is neither https nor http to a loopback host (localhost, 127.0.0.1, [::1])'
}

function union(base: string | undefined, added: string | undefined): string | undefined {
  const scopes = new Set([...(base ?? '').split(' '), ...(added ?? '').split(' ')].filter(Boolean))
  return scopes.size === 0 ? undefined : [...scopes].join(' ')
}

