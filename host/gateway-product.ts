/**
 * The gateway as a product: what the `gateway` section of a config file (lib/gateway-config.ts)
 * puts around the host's gateway server, each piece built from rxmcp's own parts and applied
 * from outside the gateway (server options, middleware, listener options, a start function for
 * the host), so the gateway's internals stay one mechanism:
 *
 *   caller ──> listener: auth (bearerAuth: 401 / 403 insufficient_scope), rateLimit (429 per principal)
 *          ──> server middleware: audit (JSON lines) ─> [rateLimit on stdio] ─> permissions (policy)
 *          ──> the gateway's view ──> each server's client, with ITS credentials (headers, OAuth)
 *   GET /healthz ──> the servers' states (Host and Origin checked like /mcp)
 *
 * The caller's token stops at the gateway: the servers behind are reached with the host's own
 * clients, whose headers and OAuth tokens come from the config (a token's audience is the gateway).
 */
import { createWriteStream, type WriteStream } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Authenticator, Principal } from '../lib/auth.ts'
import type { GatewayAuditConfig, GatewayAuthConfig, GatewayConfig, GatewayPolicyRule, GatewayPrincipalMatch } from '../lib/gateway-config.ts'
import { redactExpansions, type HostConfig, type HostServerConfig } from '../lib/host-config.ts'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import type { TokenBucketOptions } from '../lib/token-bucket.ts'
import { audit, OPEN_METHODS, permissions, permissionVisibility, rateLimit, type AuditEntry, type PermissionPolicy } from '../actors/server/middleware.ts'
import type { McpRequest, Middleware } from '../actors/server/api.ts'
import type { ServerOptions } from '../actors/server/options.ts'
import { connect, type ClientOptions } from '../actors/client.ts'
import { httpClient, sseClient } from '../transports/http-client.ts'
import { defaultFetch } from '../transports/node-fetch.ts'
import { websocketClient } from '../transports/websocket-client.ts'
import { isAllowedHost, isAllowedOrigin } from '../transports/origin.ts'
import { startServerClient } from './host.ts'
import type { ServerState, StartedClient } from './supervisor.ts'

/** The listings a policy filters instead of refusing: every caller may list, and sees what it may use. */
const FILTERED_LISTINGS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'skills/list']

/** What {@link gatewayProduct} makes of a `gateway` section. */
export interface GatewayProduct {
  /** The gateway server's options (list_changed per principal, with a policy). */
  readonly serverOptions: ServerOptions
  /** The gateway server's middleware, outermost first: audit, the rate limit (stdio only), the policy. */
  readonly middleware: readonly Middleware[]
  /** The HTTP and WebSocket listeners' `auth` (undefined without `gateway.auth`). */
  readonly auth: Authenticator | undefined
  /** The listeners' `rateLimit` (429 with Retry-After over HTTP). */
  readonly rateLimit: TokenBucketOptions | undefined
  /** The host's `start`: servers with `oauth` get a client whose fetch authorizes with the host's own credentials. */
  start(config: HostServerConfig, options: ClientOptions, stderr: (chunk: string) => void): Promise<StartedClient>
  /** Flushes and closes the audit log. */
  close(): Promise<void>
}

/** Options of {@link gatewayProduct}. */
export interface GatewayProductOptions {
  /** The transport the gateway speaks: on stdio the rate limit is middleware (JSON-RPC -31029), else the listener's (429). */
  readonly isStdio: boolean
  /** Values of `${VAR}` to keep out of the audit log (the config's secrets), now and after reloads. */
  readonly secrets?: () => HostConfig
  /** Where audit lines go when `audit.file` is `-` (default process.stderr). */
  readonly stderr?: { write(line: string): unknown }
  /** The clock of the audit log and the rate limit (default Date.now). */
  readonly now?: () => number
}

/**
 * Builds the pieces the `gateway` section asks for. Loads rxmcp/auth (and `jose`) only when
 * `auth` is configured, and rxmcp/auth/client only when a server has `oauth`.
 */
export async function gatewayProduct(config: GatewayConfig, options: GatewayProductOptions): Promise<GatewayProduct> {
  const auth = config.auth === undefined ? undefined : await gatewayAuthenticator(config.auth)
  const middleware: Middleware[] = []
  let log: AuditLog | undefined
  if (config.audit !== undefined) {
    log = auditLog(config.audit, options)
    middleware.push(log.middleware)
  }
  if (config.rateLimit !== undefined && options.isStdio) middleware.push(rateLimit({ ...config.rateLimit, now: options.now }))
  const serverOptions: ServerOptions = {}
  if (config.policy !== undefined) {
    const policy = gatewayPolicy(config.policy)
    middleware.push(permissions(policy))
    serverOptions.listVisibility = permissionVisibility(policy)
  }
  return {
    serverOptions, middleware, auth,
    rateLimit: config.rateLimit === undefined || options.isStdio ? undefined : { ...config.rateLimit, ...(options.now === undefined ? {} : { now: options.now }) },
    start: (server, clientOptions, stderr) => server.oauth === undefined || server.type === 'stdio'
      ? startServerClient(server, clientOptions, stderr)
      : startWithOAuth(server, clientOptions),
    close: async () => { await log?.close() },
  }
}

/** The resource server of rxmcp/auth for `gateway.auth`: JWTs by the issuer's key set, or introspection. */
export async function gatewayAuthenticator(auth: GatewayAuthConfig): Promise<Authenticator> {
  // Loaded only here: jose is an optional peer, and a gateway without OAuth never pays for it.
  const { bearerAuth, jwtVerifier, introspectionVerifier } = await import('../auth/index.ts')
  const audience = auth.audience === undefined ? {} : { audience: auth.audience }
  const verify = auth.introspection !== undefined
    ? introspectionVerifier({ ...auth.introspection, issuer: auth.issuer, ...audience })
    : jwtVerifier({ issuer: auth.issuer, jwksUrl: auth.jwksUrl!, ...audience })
  return bearerAuth({
    resource: auth.resource,
    authorizationServers: [auth.issuer],
    verify,
    requiredScopes: auth.requiredScopes,
    ...(auth.scopesSupported === undefined ? {} : { scopesSupported: auth.scopesSupported }),
    ...(auth.scopes === undefined ? {} : { scopes: auth.scopes }),
  })
}

/**
 * The `permissions` policy of `gateway.policy`: each rule is a role (`rule:<index>`) that a
 * principal holds when it matches the rule's `when`; its patterns are the rule's `allow` plus
 * `<server>__*` tools and prompts for each of its `servers`, minus its `deny` (a deny of any
 * matching rule wins). Listings are open and filtered; everything else needs a grant.
 */
export function gatewayPolicy(rules: readonly GatewayPolicyRule[]): PermissionPolicy {
  const roles = Object.fromEntries(rules.map((rule, index) => [`rule:${index}`, [...rule.allow, ...rule.servers.flatMap(server => [`tools:call:${server}__*`, `prompts:get:${server}__*`])]]))
  return {
    roles,
    rolesOf: ctx => rules.flatMap((rule, index) => matches(rule.when, ctx.principal) ? [`rule:${index}`] : []),
    // A matched rule's deny holds against every other matched rule's allow.
    deny: Object.fromEntries(rules.map((rule, index) => [`rule:${index}`, rule.deny])),
    open: [...OPEN_METHODS, ...FILTERED_LISTINGS],
  }
}

/** True when `principal` meets every condition of `when` (an empty one: everyone). */
export function matches(when: GatewayPrincipalMatch, principal: Principal | undefined): boolean {
  if (when.scopes !== undefined && !when.scopes.every(scope => principal?.scopes.includes(scope) === true)) return false
  if (when.roles !== undefined) {
    const held = principal?.claims?.roles
    if (!Array.isArray(held) || !when.roles.some(role => held.includes(role))) return false
  }
  if (when.subjects !== undefined && (principal === undefined || !when.subjects.includes(principal.subject))) return false
  for (const [claim, value] of Object.entries(when.claims ?? {})) {
    const held = principal?.claims?.[claim]
    if (!(held === value || (Array.isArray(held) && held.includes(value)))) return false
  }
  return true
}

/** The audit log: its middleware, and closing its file. */
interface AuditLog { readonly middleware: Middleware; close(): Promise<void> }

/** One JSON line per request: when, who, what, how it ended, how long, and (if asked) arguments, redacted. */
function auditLog(config: GatewayAuditConfig, options: GatewayProductOptions): AuditLog {
  // Appended to, created readable by its owner only: arguments may hold what redaction did not foresee.
  const file: WriteStream | undefined = config.file === '-' ? undefined : createWriteStream(config.file, { flags: 'a', mode: 0o600 })
  file?.on('error', error => process.stderr.write(`rxmcp gateway: audit log ${config.file}: ${error.message}\n`))
  const out = file ?? options.stderr ?? process.stderr
  const redactText = (text: string) => {
    let redacted = options.secrets === undefined ? text : redactExpansions(text, options.secrets())
    for (const pattern of config.redactPatterns) redacted = redacted.replace(pattern, '[redacted]')
    return redacted
  }
  const keys = new Set(config.redactKeys.map(key => key.toLowerCase()))
  const argumentsOf = (request: McpRequest): unknown => {
    if (!config.isArgumentsIncluded) return undefined
    if (request.method !== 'tools/call' && request.method !== 'prompts/get') return undefined
    const args = request.params?.arguments
    return args === undefined ? undefined : redactValue(args, keys, redactText)
  }
  const sink = (entry: AuditEntry) => {
    const { at, ...rest } = entry
    // Targets are names and URIs a caller chose: a URI may carry a secret as well.
    const line = { time: new Date(at).toISOString(), ...rest, ...(rest.target === undefined ? {} : { target: redactText(rest.target) }) }
    out.write(JSON.stringify(line) + '\n')
  }
  return {
    middleware: audit(sink, { ...(options.now === undefined ? {} : { now: options.now }), arguments: argumentsOf }),
    close: () => new Promise<void>(resolve => { if (file === undefined) resolve(); else file.end(() => resolve()) }),
  }
}

/** `value` with the values of redacted keys replaced, and every string passed through `text`. */
export function redactValue(value: unknown, keys: ReadonlySet<string>, text: (value: string) => string): unknown {
  if (typeof value === 'string') return text(value)
  if (Array.isArray(value)) return value.map(item => redactValue(item, keys, text))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value as JsonObject).map(([key, item]) => [key, keys.has(key.toLowerCase()) ? '[redacted]' : redactValue(item, keys, text)]))
  }
  return value
}

/** A server reached at a URL, its client's fetch authorizing with the server's `oauth` credentials. */
async function startWithOAuth(server: HostServerConfig, clientOptions: ClientOptions): Promise<StartedClient> {
  const oauth = server.oauth!
  const { oauthFetch, fileTokenStore, memoryTokenStore, oauthWebSocketHeaders } = await import('../auth/client.ts')
  // Stored tokens are used and refreshed; when they are gone there is no browser to log in with.
  const grant = oauth.grant === 'client_credentials' ? { grant: 'client_credentials' as const } : {
    grant: 'authorization_code' as const,
    redirectUri: 'http://127.0.0.1/rxmcp-gateway-cannot-log-in',
    redirect: async (): Promise<URL> => {
      throw new Error(`the tokens stored in ${oauth.tokenStore} for ${server.url} are missing or expired beyond refresh, and the gateway cannot log in in a browser: log in again (rxmcp call ${server.url} ...), or give the server client credentials`)
    },
  }
  const authorized = oauthFetch({
    ...grant,
    ...(oauth.clientId === undefined ? {} : { clientId: oauth.clientId }),
    ...(oauth.clientSecret === undefined ? {} : { clientSecret: oauth.clientSecret }),
    ...(oauth.issuer === undefined ? {} : { issuer: oauth.issuer }),
    ...(oauth.scope === undefined ? {} : { scope: oauth.scope }),
    tokenStore: oauth.tokenStore === undefined ? memoryTokenStore() : fileTokenStore(oauth.tokenStore),
    // A gateway keeps no DPoP key between runs; bearer tokens, bound to the server by their audience.
    dpop: false,
    // The forwarded requests on the transports' own exchange (nodeFetch on Node); token requests on the global fetch.
    requestFetch: defaultFetch(),
  })
  const headers = { ...server.headers }
  const transport = server.type === 'ws'
    ? websocketClient(server.url!, { headers: async () => ({ ...headers, ...await oauthWebSocketHeaders(authorized, server.url!)() }) })
    : server.type === 'sse' ? sseClient(server.url!, { headers, fetch: authorized }) : httpClient(server.url!, { headers, fetch: authorized })
  return { client: await connect(transport, { name: 'rxmcp-host', version: '0.1.0' }, clientOptions) }
}

/** The gateway's health, as `GET /healthz` answers it. */
export interface GatewayHealth {
  /** `ok`: every server ready; `degraded`: some; `unavailable`: none (while starting, too). */
  readonly status: 'ok' | 'degraded' | 'unavailable'
  /** Each enabled server's state, without reasons (a reason may quote a URL, a command line, a child's stderr). */
  readonly servers: Readonly<Record<string, { readonly status: ServerState['status'] }>>
}

/** The health of servers in `states` (no server at all counts as ok). */
export function gatewayHealth(states: ReadonlyMap<string, ServerState>): GatewayHealth {
  const servers = Object.fromEntries([...states].map(([name, state]) => [name, { status: state.status }]))
  const ready = [...states.values()].filter(state => state.status === 'ready').length
  const status = ready === states.size ? 'ok' : ready > 0 ? 'degraded' : 'unavailable'
  return { status, servers }
}

/** Options of {@link healthEndpoint}: the listener's path and its Host and Origin rules. */
export interface HealthEndpointOptions {
  readonly path: string
  readonly boundHost: string
  readonly allowedHosts: readonly string[] | undefined
  readonly allowedOrigins: readonly string[] | undefined
  readonly states: () => ReadonlyMap<string, ServerState>
}

/**
 * A node:http handler in front of `next` that answers `GET` (and `HEAD`) of the health path:
 * 200 with {@link GatewayHealth} when ok or degraded, 503 when unavailable. It needs no token (a
 * load balancer asks it) and tells only server names and states; the Host and Origin rules of the
 * MCP endpoint apply to it all the same (403), so a page under DNS rebinding cannot read it.
 */
export function healthEndpoint(options: HealthEndpointOptions, next: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0]
    if (pathname !== options.path) { next(req, res); return }
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405, { allow: 'GET, HEAD' }).end(); return }
    const origin = req.headers.origin
    if (!isAllowedHost(req.headers.host, options.allowedHosts, options.boundHost) || (origin !== undefined && !isAllowedOrigin(origin, options.allowedOrigins))) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden')
      return
    }
    const health = gatewayHealth(options.states())
    const body = JSON.stringify(health)
    res.writeHead(health.status === 'unavailable' ? 503 : 200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(req.method === 'HEAD' ? undefined : body)
  }
}
