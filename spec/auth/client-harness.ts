/**
 * An authorization server and a protected endpoint in one node:http server on 127.0.0.1, for the
 * oauthFetch specs. Every request is logged; the knobs bend it into the cases under test.
 */
import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose'
import { writeFetchResponse } from '../helpers/pipe-response.ts'

/** How the fake servers behave. */
export interface HarnessOptions {
  /** Where the Protected Resource Metadata is served (default 'path': /.well-known/oauth-protected-resource/mcp). */
  prm?: 'header' | 'path' | 'root' | 'none'
  /** A resource_metadata URL path for the challenge to name instead (one that may not exist). */
  headerPrmPath?: string
  /** An absolute resource_metadata URL for the challenge to name (on another host, say). */
  headerPrmUrl?: string
  /** Authorization servers the PRM lists before this one. */
  otherAuthorizationServers?: string[]
  /** The PRM `resource` (default the MCP endpoint URL). */
  prmResource?: (base: string) => string
  /** PRM scopes_supported. */
  prmScopes?: string[]
  /** The issuer's path ('' by default, '/tenant' for an issuer with a path). */
  issuerPath?: string
  /** Which well-known document serves the AS metadata (default 'oauth'). */
  metadataAt?: 'oauth' | 'oidc-inserted' | 'oidc-appended' | 'none'
  /** The `issuer` the metadata names (default the right one). */
  metadataIssuer?: (issuer: string) => string
  /** AS metadata fields to add or override. */
  metadata?: Record<string, unknown>
  /** Whether the AS has a registration endpoint (default true). */
  registration?: boolean
  /** What the registration endpoint answers besides client_id. */
  registrationAnswer?: Record<string, unknown>
  /** The registration endpoint refuses with 400 and this body (RFC 7591 §3.2.2), instead of registering. */
  registrationError?: Record<string, unknown>
  /** The scopes the endpoint needs; with fewer it answers 403 insufficient_scope naming them. */
  requiredScopes?: string[]
  /** Answer 403 insufficient_scope to every request, whatever the token. */
  isAlwaysForbidden?: boolean
  /** The scope the 401 challenge names. */
  challengeScope?: string
  /** The `iss` in the redirect (default 'correct'). */
  issInRedirect?: 'correct' | 'wrong' | 'omit'
  /** expires_in of the access tokens (default none). */
  expiresIn?: number
  /** Whether tokens come with a refresh token (default true). */
  hasRefreshToken?: boolean
  /** An MCP server to forward authorized /mcp requests to (its URL); else the endpoint echoes. */
  upstream?: string
  /** DPoP (RFC 9449): advertise ES256, bind tokens to the proof key; the nonces each server demands first. */
  dpop?: { asNonce?: string; rsNonce?: string }
}

/** One request the servers saw. */
export interface Seen {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingMessage['headers']
  body: string
  form: URLSearchParams
}

/** The running servers. */
export interface Harness {
  /** The MCP endpoint: `<origin>/mcp`. */
  mcpUrl: string
  origin: string
  issuer: string
  /** Everything requested, in order. */
  seen: Seen[]
  /** The paths requested, in order. */
  paths(): string[]
  /** The requests to one path. */
  requestsTo(path: string): Seen[]
  /** Makes every token issued so far invalid (the next use gets 401). */
  revokeAccessTokens(): void
  /** Makes every token issued by this grant type invalid, now and later. */
  refuseTokensOf(grantType: string): void
  close(): Promise<void>
}

const SECRET = new TextEncoder().encode('harness-signing-secret-0123456789abcdef')

/** Starts the fake authorization server and protected endpoint. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const seen: Seen[] = []
  /** Codes issued, with what the token request must match. */
  const codes = new Map<string, { challenge: string; scope: string | undefined; clientId: string }>()
  /** Refresh tokens issued, with their scope. */
  const refreshTokens = new Map<string, string | undefined>()
  /** Access tokens no longer accepted. */
  const revoked = new Set<string>()
  /** Grant types whose tokens are not accepted. */
  const refusedGrants = new Set<string>()
  let issuedCount = 0
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', chunk => { body += chunk })
    request.on('end', () => {
      const url = new URL(request.url ?? '/', origin)
      const entry: Seen = { method: request.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: request.headers, body, form: new URLSearchParams(body) }
      seen.push(entry)
      void handle(entry, response).catch(error => { response.statusCode = 500; response.end(String(error)) })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const issuerPath = options.issuerPath ?? ''
  const issuer = `${origin}${issuerPath}`
  const mcpUrl = `${origin}/mcp`
  const prmUrl = options.prm === 'root' ? `${origin}/.well-known/oauth-protected-resource` : options.prm === 'header' ? `${origin}/custom/prm.json` : `${origin}/.well-known/oauth-protected-resource/mcp`
  const metadataPath = {
    oauth: `/.well-known/oauth-authorization-server${issuerPath}`,
    'oidc-inserted': `/.well-known/openid-configuration${issuerPath}`,
    'oidc-appended': `${issuerPath}/.well-known/openid-configuration`,
    none: undefined,
  }[options.metadataAt ?? 'oauth']

  const json = (response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers })
    response.end(JSON.stringify(value))
  }
  const issueTokens = async (grant: string, scope: string | undefined, clientId: string, jkt?: string) => {
    const accessToken = await new SignJWT({ grant, scope: scope ?? '', client_id: clientId, n: issuedCount++, ...(jkt === undefined ? {} : { cnf: { jkt } }) }).setProtectedHeader({ alg: 'HS256' }).setIssuer(issuer).setAudience(mcpUrl).sign(SECRET)
    const refreshToken = options.hasRefreshToken === false ? undefined : randomUUID()
    if (refreshToken !== undefined) refreshTokens.set(refreshToken, scope)
    return {
      access_token: accessToken, token_type: jkt === undefined ? 'Bearer' : 'DPoP',
      ...(options.expiresIn === undefined ? {} : { expires_in: options.expiresIn }),
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
      ...(scope === undefined ? {} : { scope }),
    }
  }

  async function handle(entry: Seen, response: ServerResponse): Promise<void> {
    const { path } = entry
    if (path === '/mcp') return protectedEndpoint(entry, response)
    if (options.prm !== 'none' && `${origin}${path}` === prmUrl) {
      return json(response, 200, {
        resource: options.prmResource?.(mcpUrl) ?? mcpUrl,
        authorization_servers: [...(options.otherAuthorizationServers ?? []), issuer],
        ...(options.prmScopes === undefined ? {} : { scopes_supported: options.prmScopes }),
      })
    }
    if (path === metadataPath) {
      return json(response, 200, {
        issuer: options.metadataIssuer?.(issuer) ?? issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        ...(options.registration === false ? {} : { registration_endpoint: `${issuer}/register` }),
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        authorization_response_iss_parameter_supported: true,
        ...(options.dpop === undefined ? {} : { dpop_signing_alg_values_supported: ['ES256'] }),
        ...options.metadata,
      })
    }
    const base = metadataPath === undefined ? origin : issuer
    if (path === `${new URL(base).pathname.replace(/\/$/, '')}/register` && options.registration !== false) {
      if (options.registrationError !== undefined) return json(response, 400, options.registrationError)
      return json(response, 201, { client_id: `dcr-${randomUUID()}`, ...options.registrationAnswer })
    }
    if (path === `${new URL(base).pathname.replace(/\/$/, '')}/authorize`) {
      const query = entry.query
      const code = randomUUID()
      codes.set(code, { challenge: query.get('code_challenge') ?? '', scope: query.get('scope') ?? undefined, clientId: query.get('client_id') ?? '' })
      const callback = new URL(query.get('redirect_uri') ?? 'http://invalid/')
      callback.searchParams.set('code', code)
      if (query.has('state')) callback.searchParams.set('state', query.get('state')!)
      const iss = options.issInRedirect ?? 'correct'
      if (iss !== 'omit') callback.searchParams.set('iss', iss === 'correct' ? issuer : `${origin}/somebody-else`)
      response.writeHead(302, { location: callback.href })
      return void response.end()
    }
    if (path === `${new URL(base).pathname.replace(/\/$/, '')}/token`) {
      const form = entry.form
      let jkt: string | undefined
      if (options.dpop !== undefined) {
        const proof = await verifyProof(entry.headers.dpop, 'POST', `${issuer}/token`)
        if (proof === undefined) return json(response, 400, { error: 'invalid_dpop_proof' })
        if (options.dpop.asNonce !== undefined && proof.nonce !== options.dpop.asNonce) return json(response, 400, { error: 'use_dpop_nonce' }, { 'dpop-nonce': options.dpop.asNonce })
        jkt = proof.jkt
      }
      const grant = form.get('grant_type')
      const clientId = form.get('client_id') ?? basicClientId(entry.headers.authorization) ?? ''
      if (grant === 'authorization_code') {
        const issued = codes.get(form.get('code') ?? '')
        if (issued === undefined || s256(form.get('code_verifier') ?? '') !== issued.challenge) return json(response, 400, { error: 'invalid_grant' })
        codes.delete(form.get('code')!)
        return json(response, 200, await issueTokens('authorization_code', issued.scope, clientId, jkt))
      }
      if (grant === 'refresh_token') {
        const token = form.get('refresh_token') ?? ''
        if (!refreshTokens.has(token)) return json(response, 400, { error: 'invalid_grant' })
        const scope = refreshTokens.get(token)
        refreshTokens.delete(token)
        return json(response, 200, await issueTokens('refresh_token', scope, clientId, jkt))
      }
      if (grant === 'client_credentials') return json(response, 200, await issueTokens('client_credentials', form.get('scope') ?? undefined, clientId, jkt))
      return json(response, 400, { error: 'unsupported_grant_type' })
    }
    json(response, 404, { error: 'not_found' })
  }

  async function protectedEndpoint(entry: Seen, response: ServerResponse): Promise<void> {
    const challenge = (extra: string) => `Bearer ${[
      ...(options.headerPrmUrl !== undefined ? [`resource_metadata="${options.headerPrmUrl}"`] : options.headerPrmPath !== undefined ? [`resource_metadata="${origin}${options.headerPrmPath}"`] : options.prm === 'header' ? [`resource_metadata="${prmUrl}"`] : []),
      ...(extra === '' ? [] : [extra]),
    ].join(', ')}`
    const [, scheme, token] = /^(Bearer|DPoP) (.+)$/.exec(entry.headers.authorization ?? '') ?? []
    let scopes: string[] | undefined
    if (token !== undefined && !revoked.has(token)) {
      try {
        const { payload } = await jwtVerify(token, SECRET, { issuer, audience: mcpUrl })
        if (refusedGrants.has(String(payload.grant))) throw new Error('refused grant')
        const bound = (payload.cnf as { jkt?: string } | undefined)?.jkt
        if (bound !== undefined) {
          // A DPoP-bound token: the DPoP scheme, and a proof by the bound key over this request and token.
          const proof = await verifyProof(entry.headers.dpop, entry.method, mcpUrl)
          if (scheme !== 'DPoP' || proof === undefined || proof.jkt !== bound || proof.ath !== createHash('sha256').update(token).digest('base64url')) throw new Error('bad proof')
          if (options.dpop?.rsNonce !== undefined && proof.nonce !== options.dpop.rsNonce) {
            response.writeHead(401, { 'www-authenticate': 'DPoP error="use_dpop_nonce"', 'dpop-nonce': options.dpop.rsNonce })
            return void response.end()
          }
        } else if (scheme !== 'Bearer') throw new Error('unbound token under DPoP')
        scopes = String(payload.scope).split(' ').filter(Boolean)
      } catch {
        scopes = undefined
      }
    }
    if (scopes === undefined) {
      response.writeHead(401, { 'www-authenticate': challenge(options.challengeScope === undefined ? '' : `scope="${options.challengeScope}"`) })
      return void response.end()
    }
    const required = options.requiredScopes ?? []
    if (options.isAlwaysForbidden === true || !required.every(scope => scopes.includes(scope))) {
      response.writeHead(403, { 'www-authenticate': challenge(`error="insufficient_scope", scope="${required.join(' ')}"`) })
      return void response.end()
    }
    if (options.upstream !== undefined) return forward(entry, response, options.upstream)
    json(response, 200, { ok: true, scopes, echo: entry.body })
  }

  return {
    mcpUrl, origin, issuer, seen,
    paths: () => seen.map(entry => entry.path),
    requestsTo: path => seen.filter(entry => entry.path === path),
    revokeAccessTokens: () => {
      for (const entry of seen) {
        const token = /^Bearer (.+)$/.exec(entry.headers.authorization ?? '')?.[1]
        if (token !== undefined) revoked.add(token)
      }
    },
    refuseTokensOf: grantType => { refusedGrants.add(grantType) },
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/** Forwards an authorized request to the MCP server behind, streaming its answer back (SSE included). */
async function forward(entry: Seen, response: ServerResponse, upstream: string): Promise<void> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(entry.headers)) {
    if (typeof value === 'string' && !['authorization', 'dpop', 'host', 'connection', 'content-length'].includes(name)) headers.set(name, value)
  }
  const answer = await fetch(upstream, { method: entry.method, headers, body: entry.method === 'GET' || entry.method === 'DELETE' ? undefined : entry.body })
  await writeFetchResponse(answer, response)
}

/** A DPoP proof's key thumbprint and claims, when it is a valid proof for `method` at `url`. */
async function verifyProof(header: string | string[] | undefined, method: string, url: string): Promise<{ jkt: string; nonce?: unknown; ath?: unknown } | undefined> {
  if (typeof header !== 'string') return undefined
  try {
    const { jwk, typ, alg } = decodeProtectedHeader(header) as { jwk?: JWK; typ?: string; alg?: string }
    if (typ !== 'dpop+jwt' || jwk === undefined || alg === undefined) return undefined
    const { payload } = await jwtVerify(header, await importJWK(jwk, alg))
    if (payload.htm !== method || payload.htu !== url || typeof payload.jti !== 'string') return undefined
    return { jkt: await calculateJwkThumbprint(jwk), nonce: payload.nonce, ath: payload.ath }
  } catch {
    return undefined
  }
}

/** BASE64URL(SHA256(verifier)), the PKCE S256 challenge. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

function basicClientId(header: string | undefined): string | undefined {
  if (header?.startsWith('Basic ') !== true) return undefined
  return decodeURIComponent(Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0]!)
}
