import * as oauth from 'oauth4webapi'
import { AuthorizationError, AuthorizationErrorCode, safeCause } from './errors.ts'
import type { AuthorizationServerMetadata } from './discovery.ts'
import type { RegisteredClient } from './registration.ts'
import type { TokenSet } from './token-store.ts'
import type { HttpOptions } from './http-options.ts'
export type { HttpOptions } from './http-options.ts'

/** Everything a grant needs: the server, the client, how to authenticate, where the tokens are for. */
export interface GrantContext {
  server: AuthorizationServerMetadata
  /** False for the 2025-03-26 default endpoints (no metadata: PKCE support cannot be checked). */
  hasMetadata: boolean
  client: RegisteredClient
  /** The private key for private_key_jwt. */
  privateKey?: CryptoKey
  /** The DPoP key handle, when tokens are DPoP-bound. */
  dpop?: oauth.DPoPHandle
  /** The `resource` parameter (RFC 8707), when known. */
  resource?: string
  /** customFetch and allowInsecureRequests for oauth4webapi. */
  http: HttpOptions
  /** Refuses a URL the client must not send the user to (the endpoint guard's rules): the authorization endpoint. */
  checkEndpoint: (url: URL) => Promise<void>
  now: () => number
}

/** The redirect step: opens the authorization URL and resolves with the callback URL the browser came back to. */
export type RedirectHook = (authorizationUrl: URL) => Promise<URL>

/**
 * The authorization code grant with PKCE S256 (OAuth 2.1), `state`, RFC 9207 `iss` checks and the
 * RFC 8707 `resource` parameter in both the authorization and the token request.
 *
 *   client                       redirect hook / AS                  token endpoint
 *     | verifier, S256 challenge, state                                   |
 *     |-- authorization URL ------>|                                      |
 *     |<-- callback ?code&state&iss|                                      |
 *     | check state, iss                                                  |
 *     |-- code, verifier, resource, client auth (DPoP proof) ------------>|
 *     |<-- tokens ------------------------------------------------------- |
 */
export async function authorizationCodeGrant(context: GrantContext, scope: string | undefined, redirect: RedirectHook, redirectUri: string): Promise<TokenSet> {
  const { server } = context
  checkPkceSupport(server, context.hasMetadata)
  if (server.authorization_endpoint === undefined) throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `${server.issuer} has no authorization_endpoint`)
  // The browser goes where the metadata says: the same rules as for the client's own requests.
  await context.checkEndpoint(new URL(server.authorization_endpoint))
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(server.authorization_endpoint)
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('client_id', context.client.clientId)
  url.searchParams.set('redirect_uri', redirectUri)
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier))
  url.searchParams.set('code_challenge_method', 'S256')
  url.searchParams.set('state', state)
  if (scope !== undefined) url.searchParams.set('scope', scope)
  if (context.resource !== undefined) url.searchParams.set('resource', context.resource)
  if (context.dpop !== undefined) url.searchParams.set('dpop_jkt', await context.dpop.calculateThumbprint())

  const callback = (await redirect(url)).searchParams
  // State first: an answer to another request says nothing about this one.
  if (callback.get('state') !== state) throw new AuthorizationError(AuthorizationErrorCode.StateMismatch, 'the authorization response state does not match the request')
  // RFC 9207 §2.4: a present iss must equal the issuer; a promised one must be present. Plain string comparison.
  const iss = callback.get('iss')
  if (iss !== null && iss !== server.issuer) throw new AuthorizationError(AuthorizationErrorCode.IssMismatch, `the authorization response iss ${iss} is not the issuer ${server.issuer}`)
  if (iss === null && server.authorization_response_iss_parameter_supported === true) throw new AuthorizationError(AuthorizationErrorCode.IssMismatch, `the authorization response has no iss, though ${server.issuer} advertises it`)
  const error = callback.get('error')
  if (error !== null) throw new AuthorizationError(AuthorizationErrorCode.Denied, `authorization refused: ${error}`)
  if (callback.get('code') === null) throw new AuthorizationError(AuthorizationErrorCode.Denied, 'the authorization response has no code')

  const as = server as oauth.AuthorizationServer
  const client = clientOf(context)
  const parameters = oauth.validateAuthResponse(as, client, callback, state)
  return tokenRequest(context, scope, async () => {
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth(context), parameters, redirectUri, verifier, requestOptions(context))
    return oauth.processAuthorizationCodeResponse(as, client, response)
  })
}

/**
 * Throws AuthorizationError PkceUnsupported unless the authorization server's metadata lists S256
 * in `code_challenge_methods_supported`. MCP 2025-11-25 and 2026-07-28: the client MUST verify PKCE
 * support in the metadata (RFC 8414 or OpenID Discovery alike) before it proceeds, and an absent
 * list means no PKCE. `hasMetadata` false is the MCP 2025-03-26 server without any metadata
 * (default endpoints), which has nothing to check: that revision made PKCE mandatory for all.
 */
export function checkPkceSupport(server: AuthorizationServerMetadata, hasMetadata: boolean): void {
  const methods = server.code_challenge_methods_supported
  if (hasMetadata && !(Array.isArray(methods) && methods.includes('S256'))) {
    throw new AuthorizationError(AuthorizationErrorCode.PkceUnsupported, `${server.issuer} does not advertise PKCE S256 (code_challenge_methods_supported: ${methods === undefined ? 'absent' : JSON.stringify(methods)})`)
  }
}

/** The client credentials grant (OAuth 2.1 §4.2), with `scope` and `resource` when known. */
export async function clientCredentialsGrant(context: GrantContext, scope: string | undefined): Promise<TokenSet> {
  const as = context.server as oauth.AuthorizationServer
  const client = clientOf(context)
  const parameters = new URLSearchParams()
  if (scope !== undefined) parameters.set('scope', scope)
  if (context.resource !== undefined) parameters.set('resource', context.resource)
  return tokenRequest(context, scope, async () => {
    const response = await oauth.clientCredentialsGrantRequest(as, client, clientAuth(context), parameters, { ...context.http, DPoP: context.dpop })
    return oauth.processClientCredentialsResponse(as, client, response)
  })
}

/**
 * A grant of a type the client does not know itself (an assertion grant such as
 * `urn:ietf:params:oauth:grant-type:jwt-bearer`): `parameters` go to the token endpoint as given,
 * with `resource` added when known.
 */
export async function extensionGrant(context: GrantContext, grantType: string, parameters: Record<string, string>, scope: string | undefined): Promise<TokenSet> {
  const as = context.server as oauth.AuthorizationServer
  const client = clientOf(context)
  const body = new URLSearchParams(parameters)
  if (scope !== undefined && !body.has('scope')) body.set('scope', scope)
  if (context.resource !== undefined && !body.has('resource')) body.set('resource', context.resource)
  return tokenRequest(context, scope, async () => {
    const response = await oauth.genericTokenEndpointRequest(as, client, clientAuth(context), grantType, body, { ...context.http, DPoP: context.dpop })
    return oauth.processGenericTokenEndpointResponse(as, client, response)
  })
}

/** The refresh token grant, with `resource`; a response without a new refresh token keeps the old one. */
export async function refreshGrant(context: GrantContext, tokens: TokenSet): Promise<TokenSet> {
  const as = context.server as oauth.AuthorizationServer
  const client = clientOf(context)
  const refreshed = await tokenRequest(context, tokens.scope, async () => {
    const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth(context), tokens.refreshToken!, requestOptions(context))
    return oauth.processRefreshTokenResponse(as, client, response)
  })
  return { ...refreshed, refreshToken: refreshed.refreshToken ?? tokens.refreshToken }
}

/**
 * Runs a token request and turns its answer into a TokenSet. RFC 9449 §8: a `use_dpop_nonce`
 * error is answered once more with the nonce the server sent (oauth4webapi caches it).
 */
async function tokenRequest(context: GrantContext, scope: string | undefined, request: () => Promise<oauth.TokenEndpointResponse>): Promise<TokenSet> {
  let response: oauth.TokenEndpointResponse
  try {
    try {
      response = await request()
    } catch (error) {
      if (context.dpop === undefined || !oauth.isDPoPNonceError(error)) throw error
      response = await request()
    }
  } catch (cause) {
    if (cause instanceof AuthorizationError) throw cause
    const code = cause instanceof oauth.ResponseBodyError ? `: ${cause.error}` : ''
    throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `the token request to ${context.server.issuer} failed${code}`, { cause: safeCause(cause) })
  }
  return {
    accessToken: response.access_token,
    tokenType: response.token_type === 'dpop' ? 'dpop' : 'bearer',
    ...(response.refresh_token === undefined ? {} : { refreshToken: response.refresh_token }),
    ...(response.expires_in === undefined ? {} : { expiresAt: context.now() + response.expires_in * 1000 }),
    // The scope granted, else (RFC 6749 §5.1: omitted means as requested) the scope asked for.
    ...((response.scope ?? scope) === undefined ? {} : { scope: response.scope ?? scope }),
    issuer: context.server.issuer,
    clientId: context.client.clientId,
    // A dynamic registration is kept with the tokens, so a restarted client refreshes as the same client.
    ...(context.client.source === 'dynamic' ? { registration: { method: context.client.method, ...(context.client.clientSecret === undefined ? {} : { clientSecret: context.client.clientSecret }) } } : {}),
  }
}

function requestOptions(context: GrantContext): oauth.TokenEndpointRequestOptions {
  return {
    ...context.http,
    DPoP: context.dpop,
    ...(context.resource === undefined ? {} : { additionalParameters: { resource: context.resource } }),
  }
}

function clientOf(context: GrantContext): oauth.Client {
  return { client_id: context.client.clientId, token_endpoint_auth_method: context.client.method }
}

/** The oauth4webapi client authentication for the registered method. */
function clientAuth(context: GrantContext): oauth.ClientAuth {
  const { client } = context
  switch (client.method) {
    case 'client_secret_basic': return secretBasic(client.clientId, client.clientSecret ?? '')
    case 'client_secret_post': return oauth.ClientSecretPost(client.clientSecret ?? '')
    case 'private_key_jwt':
      if (context.privateKey === undefined) throw new AuthorizationError(AuthorizationErrorCode.RegistrationUnavailable, 'private_key_jwt needs a privateKey option')
      return oauth.PrivateKeyJwt(context.privateKey)
    default: return oauth.None()
  }
}

/**
 * client_secret_basic with the id and secret percent-encoded as URI components. oauth4webapi
 * form-encodes every character but letters and digits (RFC 6749 §2.3.1 to the letter), which
 * servers that do not decode the pair (most) read as a different client id.
 */
function secretBasic(clientId: string, clientSecret: string): oauth.ClientAuth {
  return (_as, _client, _body, headers) => {
    headers.set('authorization', `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`)
  }
}
