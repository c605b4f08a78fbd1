/**
 * Who may reach a listening command (`rxmcp bridge`, `rxmcp gateway`): one rule for both.
 *
 *   bound to loopback                 serves; Host must be a loopback name (DNS rebinding)
 *   bound beyond loopback, with auth  serves; every request needs the bearer token; Host allow-list
 *   beyond loopback, no auth          refused at start, unless --allow-unauthenticated: then a
 *                                     warning, and the Host allow-list still applies
 *
 * The Host allow-list beyond loopback is the loopback names, the `--host` value and each
 * `--allowed-host`; it is never switched off. Authentication is a static bearer token read from a
 * file (`--auth-token-file`) or OAuth 2.1 JWT access tokens checked against an issuer's key set
 * (`--auth-issuer`, `--auth-jwks-url`, `--auth-resource`).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AuthAnswer, AuthOutcome, AuthRequest, Authenticator } from '../lib/auth.ts'
import { LOOPBACK_HOSTS, isCrossSiteWithoutOrigin, isLoopbackHost } from '../transports/origin.ts'

/** The flags of a listening command that decide who may reach it. */
export interface ExposureFlags {
  /** `--host`: the interface to bind (default 127.0.0.1). */
  host?: string
  /** `--allowed-host` (repeatable): Host header names accepted beside the loopback names and `--host`. */
  allowedHosts: string[]
  /** `--allowed-origin` (repeatable): browser origins accepted beside the loopback ones. */
  allowedOrigins: string[]
  /** `--allow-unauthenticated`: the operator accepts a listener beyond loopback that anyone may use. */
  isUnauthenticatedAllowed: boolean
  /** `--auth-token-file`: a file holding the bearer token every request must carry. */
  authTokenFile?: string
  /** `--auth-issuer`, `--auth-jwks-url`, `--auth-resource`: OAuth 2.1 JWT access tokens (all three needed). */
  authIssuer?: string
  authJwksUrl?: string
  authResource?: string
  /** `--auth-scope` (repeatable): scopes every request's token must grant. */
  authScopes: string[]
}

/** Empty {@link ExposureFlags}, to fill while parsing. */
export function exposureFlags(): ExposureFlags {
  return { allowedHosts: [], allowedOrigins: [], isUnauthenticatedAllowed: false, authScopes: [] }
}

/** The shortest bearer token `--auth-token-file` may hold (`openssl rand -hex 32` gives 64). */
export const MIN_TOKEN_LENGTH = 32

/** A listener setting that cannot be served: the command exits 2 with this message. */
export class ExposureError extends Error {
  override readonly name = 'ExposureError'
  readonly code = 'RXMCP_ERR_EXPOSURE'
}

/**
 * Reads one of the exposure flags at `rest[i]`; returns the index of its last word, or undefined
 * when `rest[i]` is not one. `fail` makes the command's usage error.
 */
export function parseExposureFlag(rest: readonly string[], i: number, flags: ExposureFlags, fail: (message: string) => Error): number | undefined {
  const arg = rest[i]!
  const value = () => {
    const next = rest[i + 1]
    if (next === undefined || next === '') throw fail(`${arg} needs a value`)
    return next
  }
  switch (arg) {
    case '--host': flags.host = value(); return i + 1
    case '--allowed-host': flags.allowedHosts.push(value()); return i + 1
    case '--allowed-origin': flags.allowedOrigins.push(value()); return i + 1
    case '--allow-unauthenticated': flags.isUnauthenticatedAllowed = true; return i
    case '--auth-token-file': flags.authTokenFile = value(); return i + 1
    case '--auth-issuer': flags.authIssuer = value(); return i + 1
    case '--auth-jwks-url': flags.authJwksUrl = value(); return i + 1
    case '--auth-resource': flags.authResource = value(); return i + 1
    case '--auth-scope': flags.authScopes.push(value()); return i + 1
    default: return undefined
  }
}

/** How a command listens, once {@link exposure} has decided it may. */
export interface Exposure {
  readonly host: string
  /** The Host allow-list (undefined on loopback without `--allowed-host`: the listeners then accept loopback names only). */
  readonly allowedHosts: readonly string[] | undefined
  readonly allowedOrigins: readonly string[] | undefined
  /** The listeners' `auth`, when authentication is configured. */
  readonly auth: Authenticator | undefined
  /** What authentication asks of clients, for the warning and the log (undefined without). */
  readonly authDescription: string | undefined
}

/**
 * Decides how `command` may listen, by the one rule above: throws {@link ExposureError} for a
 * listener beyond loopback with neither authentication nor `--allow-unauthenticated`, and for
 * authentication flags that cannot work; writes the warning to `warn` when bound beyond loopback.
 * `fromConfig` is authentication configured elsewhere (the gateway's config file): it counts as
 * the flags' would, and both at once are refused.
 * `risk` says what an unauthenticated stranger could do (one sentence, no full stop).
 */
export async function exposure(command: string, flags: ExposureFlags, risk: string, warn: (line: string) => void, fromConfig?: { auth: Authenticator; description: string }): Promise<Exposure> {
  const host = flags.host ?? '127.0.0.1'
  const isLoopback = isLoopbackHost(host)
  const fromFlags = await authenticator(command, flags)
  if (fromConfig !== undefined && fromFlags !== undefined) throw new ExposureError(`${command}: authentication is configured in the config file (gateway.auth) and by flags; give one`)
  const configured = fromConfig ?? fromFlags
  if (!isLoopback && configured === undefined && !flags.isUnauthenticatedAllowed) {
    throw new ExposureError(`${command} refuses to listen on ${host} (not loopback) without authentication: ${risk}. `
      + 'Give --auth-token-file FILE (a bearer token) or --auth-issuer, --auth-jwks-url and --auth-resource (OAuth JWT access tokens), '
      + 'or --allow-unauthenticated to accept that anyone who can reach it may use it.')
  }
  // Off loopback the listeners would drop their Host checks; keep them, naming what may be asked for.
  const allowedHosts = isLoopback && flags.allowedHosts.length === 0 ? undefined : [...new Set([...LOOPBACK_HOSTS, host, ...flags.allowedHosts])]
  const allowedOrigins = flags.allowedOrigins.length === 0 ? undefined : [...flags.allowedOrigins]
  if (!isLoopback) warn(exposureWarning(command, host, risk, configured?.description, allowedHosts!))
  return { host, allowedHosts, allowedOrigins, auth: configured?.auth, authDescription: configured?.description }
}

/** The warning a command bound beyond loopback prints at start. */
export function exposureWarning(command: string, host: string, risk: string, auth: string | undefined, allowedHosts: readonly string[]): string {
  const who = auth === undefined
    ? `there is no authentication (--allow-unauthenticated): ${risk}`
    : `every request needs ${auth}; whoever holds it ${risk.replace(/^anyone who can reach it /, '')}`
  return `rxmcp ${command}: WARNING: listening on ${host}, not loopback; ${who}. `
    + `Host headers other than ${allowedHosts.join(', ')} are refused (add names with --allowed-host).`
}

/**
 * A node:http handler that refuses a page on another site that hides its origin (`<img src=".../sse">`):
 * the listeners' Origin checks only see requests that carry one.
 */
export function refuseCrossSite(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (isCrossSiteWithoutOrigin(req.headers)) { res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden: cross-site request without Origin'); return }
    handler(req, res)
  }
}

/** The authenticator the flags configure, or undefined without any authentication flag. */
async function authenticator(command: string, flags: ExposureFlags): Promise<{ auth: Authenticator; description: string } | undefined> {
  const jwt = [flags.authIssuer, flags.authJwksUrl, flags.authResource]
  const hasJwt = jwt.some(value => value !== undefined)
  if (flags.authTokenFile !== undefined && hasJwt) throw new ExposureError(`${command}: give --auth-token-file or the --auth-issuer flags, not both`)
  if (flags.authTokenFile !== undefined) {
    if (flags.authScopes.length > 0) throw new ExposureError(`${command}: --auth-scope goes with --auth-issuer (a static token has no scopes)`)
    return { auth: staticTokenAuth(readTokenFile(flags.authTokenFile)), description: `the bearer token of ${flags.authTokenFile}` }
  }
  if (!hasJwt) {
    if (flags.authScopes.length > 0) throw new ExposureError(`${command}: --auth-scope goes with --auth-issuer`)
    return undefined
  }
  if (jwt.some(value => value === undefined)) throw new ExposureError(`${command}: OAuth needs all of --auth-issuer, --auth-jwks-url and --auth-resource`)
  for (const [name, value] of [['--auth-jwks-url', flags.authJwksUrl], ['--auth-resource', flags.authResource]] as const) {
    if (!/^https?:\/\//.test(value!) || !URL.canParse(value!)) throw new ExposureError(`${command}: ${name} needs an http(s) URL`)
  }
  // Loaded only here: jose is an optional peer, and a command without OAuth never pays for it.
  const { bearerAuth, jwtVerifier } = await import('../auth/index.ts')
  const auth = bearerAuth({
    resource: flags.authResource!,
    authorizationServers: [flags.authIssuer!],
    verify: jwtVerifier({ issuer: flags.authIssuer!, jwksUrl: flags.authJwksUrl! }),
    requiredScopes: flags.authScopes,
  })
  return { auth, description: `an OAuth access token from ${flags.authIssuer} for ${flags.authResource}` }
}

/**
 * The token of `--auth-token-file`: the file's text without surrounding whitespace. Refused when
 * others may read the file (like ssh's keys), when shorter than {@link MIN_TOKEN_LENGTH}, or when it
 * is not an RFC 6750 token (it could not be sent in an Authorization header).
 */
function readTokenFile(path: string): string {
  let text: string
  try {
    const mode = statSync(path).mode
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) throw new ExposureError(`--auth-token-file ${path} may be read by others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`)
    text = readFileSync(path, 'utf8').trim()
  } catch (error) {
    if (error instanceof ExposureError) throw error
    throw new ExposureError(`--auth-token-file: cannot read ${path}: ${(error as Error).message}`)
  }
  if (text.length < MIN_TOKEN_LENGTH) throw new ExposureError(`--auth-token-file ${path}: the token needs at least ${MIN_TOKEN_LENGTH} characters (openssl rand -hex 32 makes one)`)
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(text)) throw new ExposureError(`--auth-token-file ${path}: the token may hold only letters, digits and -._~+/ (RFC 6750)`)
  return text
}

/**
 * An {@link Authenticator} for one static bearer token: a request without it gets 401 with a
 * `Bearer` challenge (no OAuth metadata: there is no authorization server to point at). Tokens are
 * compared as SHA-256 digests in constant time, so neither length nor content leaks by timing.
 */
export function staticTokenAuth(token: string): Authenticator {
  const expected = createHash('sha256').update(token).digest()
  const refuse = (error?: string): AuthOutcome => {
    const challenge = error === undefined ? 'Bearer realm="rxmcp"' : `Bearer realm="rxmcp", error="${error}"`
    const body = JSON.stringify(error === undefined ? { error: 'unauthorized', error_description: 'A bearer token is required' } : { error, error_description: 'The bearer token is not valid' })
    const answer: AuthAnswer = { status: error === 'invalid_request' ? 400 : 401, headers: { 'content-type': 'application/json', 'www-authenticate': challenge }, body }
    return { type: 'refuse', answer }
  }
  return {
    async authenticate(request: AuthRequest): Promise<AuthOutcome> {
      const header = request.header('authorization')
      if (header === null) return refuse()
      const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header)
      if (match === null) return refuse(/^Bearer\b/i.test(header) ? 'invalid_request' : undefined)
      const given = createHash('sha256').update(match[1]!).digest()
      if (!timingSafeEqual(given, expected)) return refuse('invalid_token')
      return { type: 'allow', principal: { subject: 'rxmcp-token', scopes: [] } }
    },
  }
}
