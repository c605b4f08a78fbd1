import * as oauth from 'oauth4webapi'
import { AuthorizationError, AuthorizationErrorCode, safeCause } from './errors.ts'
import type { AuthorizationServerMetadata } from './discovery.ts'
import type { HttpOptions } from './http-options.ts'
import { hostKind } from './address.ts'

/** How the client authenticates at the token endpoint. */
export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt'

/** A client as registered with one authorization server. */
export interface RegisteredClient {
  /** The client id (for a Client ID Metadata Document, its https URL). */
  clientId: string
  /** The client secret, for client_secret_basic and client_secret_post. */
  clientSecret?: string
  /** How the client authenticates at the token endpoint. */
  method: TokenEndpointAuthMethod
  /** How the client was registered. */
  source: 'pre-registered' | 'metadata-document' | 'dynamic'
}

/** What registration needs to know about the client (a subset of the oauthFetch options). */
export interface RegistrationInput {
  clientId?: string
  clientSecret?: string
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod
  hasPrivateKey: boolean
  clientMetadataUrl?: string
  clientMetadata?: Record<string, unknown>
  redirectUri?: string
  grantTypes: string[]
  scope?: string
}

/**
 * Gets a client id for an authorization server, in order of preference: pre-registered
 * credentials, a Client ID Metadata Document (when the server supports them and a
 * `clientMetadataUrl` is given), else Dynamic Client Registration (RFC 7591).
 *
 * Errors with AuthorizationError RegistrationUnavailable when none applies, RequestFailed when the
 * registration endpoint refuses.
 */
export async function registerClient(server: AuthorizationServerMetadata, input: RegistrationInput, options: HttpOptions): Promise<RegisteredClient> {
  if (input.clientId !== undefined) {
    return { clientId: input.clientId, clientSecret: input.clientSecret, method: chooseMethod(server, input), source: 'pre-registered' }
  }
  if (server.client_id_metadata_document_supported === true && input.clientMetadataUrl !== undefined) {
    return { clientId: input.clientMetadataUrl, method: input.hasPrivateKey ? 'private_key_jwt' : 'none', source: 'metadata-document' }
  }
  if (server.registration_endpoint === undefined) {
    throw new AuthorizationError(AuthorizationErrorCode.RegistrationUnavailable, `no client id for ${server.issuer}: not pre-registered, no client metadata document, no registration endpoint`)
  }
  const requested = chooseMethod(server, input)
  // The redirect URI the grant will use is registered whatever else clientMetadata lists (MCP:
  // redirect URIs MUST be registered with the authorization server).
  const redirectUris = [...new Set([...listed(input.clientMetadata?.redirect_uris), ...(input.redirectUri === undefined ? [] : [input.redirectUri])])]
  const metadata = {
    client_name: 'rxmcp',
    grant_types: input.grantTypes,
    response_types: input.grantTypes.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: requested,
    // MCP 2026-07-28 (OpenID DCR): an application_type always, since omitting it means "web" under
    // OIDC, which refuses loopback redirects: loopback and custom-scheme redirects are native
    // applications, any other (https on a remote host) a web one. clientMetadata may say otherwise.
    application_type: redirectUris.every(isNativeRedirect) ? 'native' : 'web',
    ...(input.scope === undefined ? {} : { scope: input.scope }),
    ...input.clientMetadata,
    redirect_uris: redirectUris,
  }
  let registered: oauth.OmitSymbolProperties<oauth.Client>
  try {
    const response = await oauth.dynamicClientRegistrationRequest(server as oauth.AuthorizationServer, metadata, options)
    registered = await processRegistration(response)
  } catch (cause) {
    if (cause instanceof AuthorizationError) throw cause
    // MCP 2026-07-28: registration may fail over redirect URI constraints (an OIDC server and the
    // application_type): the server's error code and description say so to the developer.
    const refused = cause instanceof RegistrationRefusal ? `: ${cause.error}${cause.description === undefined ? '' : ` (${cause.description})`}` : ''
    throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `dynamic client registration at ${server.issuer} failed${refused}`, { cause: safeCause(cause) })
  }
  const returned = typeof registered.token_endpoint_auth_method === 'string' ? registered.token_endpoint_auth_method as TokenEndpointAuthMethod : undefined
  const secret = typeof registered.client_secret === 'string' ? registered.client_secret : undefined
  // The server's answer wins; without one, a secret means client_secret_basic (RFC 7591 §2 default).
  const method = returned ?? (secret !== undefined ? (requested === 'none' ? 'client_secret_basic' : requested) : 'none')
  return { clientId: registered.client_id, clientSecret: secret, method, source: 'dynamic' }
}

/**
 * Reads a registration answer: 200 or 201 with a client_id. Leaner than oauth4webapi's check,
 * which also requires `client_secret_expires_at` with a secret (RFC 7591 §3.2.1), a field
 * deployed servers often leave out.
 */
async function processRegistration(response: Response): Promise<oauth.OmitSymbolProperties<oauth.Client>> {
  if (response.status !== 200 && response.status !== 201) {
    // RFC 7591 §3.2.2: a refusal is 400 with `error` (invalid_redirect_uri, invalid_client_metadata…).
    const body = await response.json().catch(() => undefined) as { error?: unknown; error_description?: unknown } | undefined
    if (typeof body?.error === 'string') throw new RegistrationRefusal(response.status, body.error, typeof body.error_description === 'string' ? body.error_description : undefined)
    throw new Error(`the registration endpoint answered ${response.status}`)
  }
  const body = await response.json() as Record<string, unknown>
  if (typeof body.client_id !== 'string') throw new Error('the registration answer has no client_id')
  return body as oauth.OmitSymbolProperties<oauth.Client>
}

/**
 * The token endpoint auth method: the one asked for, else private_key_jwt with a key, else (with
 * a secret) client_secret_basic or client_secret_post as the server supports them, else none.
 */
function chooseMethod(server: AuthorizationServerMetadata, input: RegistrationInput): TokenEndpointAuthMethod {
  if (input.tokenEndpointAuthMethod !== undefined) return input.tokenEndpointAuthMethod
  const supported = server.token_endpoint_auth_methods_supported
  if (input.hasPrivateKey) return 'private_key_jwt'
  if (input.clientId !== undefined) {
    if (input.clientSecret === undefined) return 'none'
    // RFC 8414: absent means client_secret_basic.
    if (supported === undefined || supported.includes('client_secret_basic')) return 'client_secret_basic'
    return supported.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic'
  }
  // Dynamic registration: a public client when allowed, else what the server takes.
  if (supported === undefined || supported.includes('none')) return 'none'
  for (const method of ['client_secret_basic', 'client_secret_post'] as const) if (supported.includes(method)) return method
  return 'none'
}

/** A registration endpoint's refusal (RFC 7591 §3.2.2): its error code and description, each cut to a short line. */
class RegistrationRefusal extends Error {
  override readonly name = 'RegistrationRefusal'
  readonly error: string
  readonly description: string | undefined
  constructor(readonly status: number, error: string, description: string | undefined) {
    super(`the registration endpoint answered ${status} ${printable(error, 64)}`)
    this.error = printable(error, 64)
    this.description = description === undefined ? undefined : printable(description, 200)
  }
}

/** `text` with control characters made spaces, cut to `max` characters: a remote server's words fit for a message. */
function printable(text: string, max: number): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ')
  return clean.length > max ? `${clean.slice(0, max)}…` : clean
}

/** The strings of a client metadata list (`redirect_uris`), none when it is not one. */
function listed(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : []
}

function isNativeRedirect(uri: string): boolean {
  try {
    const url = new URL(uri)
    // The same loopback rule the redirect URI itself was accepted by (localhost, 127.0.0.0/8, [::1]).
    return (url.protocol !== 'http:' && url.protocol !== 'https:') || hostKind(url.hostname) === 'loopback'
  } catch {
    return false
  }
}
