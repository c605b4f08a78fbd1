/**
 * The gateway's own section of an `mcpServers` config file: the top-level `"gateway"` object beside
 * `"mcpServers"`, checked and normalized. Pure, like host-config.ts: `${VAR}` values come from the
 * `env` argument, so the CLI, a test and an application read it the same way.
 *
 * ```json
 * { "mcpServers": { ... },
 *   "gateway": {
 *     "auth": { "issuer": "https://login.example.com", "resource": "https://mcp.example.com/mcp",
 *               "jwksUrl": "https://login.example.com/jwks", "requiredScopes": ["mcp"],
 *               "scopes": { "tools/call:files__delete": ["files:admin"] } },
 *     "policy": [
 *       { "when": { "scopes": ["files:admin"] }, "allow": ["*"] },
 *       { "when": { "roles": ["reader"] }, "servers": ["files"], "deny": ["tools:call:files__delete"] },
 *       { "allow": ["tools:call:search__*"] } ],
 *     "rateLimit": { "capacity": 60, "refillPerSecond": 1 },
 *     "audit": { "file": "/var/log/rxmcp-audit.jsonl", "arguments": true, "redact": { "keys": ["password"], "patterns": ["sk-[A-Za-z0-9]+"] } },
 *     "health": { "path": "/healthz" } } }
 * ```
 */
import { expandVariables } from './host-config.ts'

/** How the gateway checks its callers' access tokens (the OAuth resource server of rxmcp/auth). */
export interface GatewayAuthConfig {
  /** The authorization server's issuer: tokens must name it (`iss`), and the metadata lists it. */
  readonly issuer: string
  /** The gateway's canonical MCP URL (RFC 8707 resource): the audience tokens must be issued for. */
  readonly resource: string
  /** Audiences accepted instead of `resource` (default: `resource` alone). */
  readonly audience?: readonly string[]
  /** JWT access tokens checked against this key set... */
  readonly jwksUrl?: string
  /** ...or opaque tokens asked about at this RFC 7662 endpoint with the gateway's own credentials. */
  readonly introspection?: { readonly endpoint: string; readonly clientId: string; readonly clientSecret: string }
  /** Scopes every request needs (401 without them, named in the challenge). */
  readonly requiredScopes: readonly string[]
  /** Scopes listed in the Protected Resource Metadata. */
  readonly scopesSupported?: readonly string[]
  /** Scopes per operation (`'tools/call:files__delete'`): a token without them gets 403 `insufficient_scope` (step-up). */
  readonly scopes?: Readonly<Record<string, readonly string[]>>
}

/**
 * Who a policy rule applies to: every condition given must hold (an empty `when` holds for every
 * caller, anonymous ones included).
 */
export interface GatewayPrincipalMatch {
  /** The token grants every one of these scopes. */
  readonly scopes?: readonly string[]
  /** The token's `roles` claim holds at least one of these. */
  readonly roles?: readonly string[]
  /** Each claim equals the value (or, for a list claim, contains it). */
  readonly claims?: Readonly<Record<string, string | number | boolean>>
  /** The principal's subject is one of these (a user's `sub`, a client's id). */
  readonly subjects?: readonly string[]
}

/** One rule of the gateway's policy: to whom it applies, what it allows, what it takes away. */
export interface GatewayPolicyRule {
  readonly when: GatewayPrincipalMatch
  /**
   * Permission patterns (see `PermissionPolicy.roles` of the permissions middleware):
   * `tools:call:files__read`, `prompts:get:search__*`, `resources:read:file:///docs/*`, `*`.
   */
  readonly allow: readonly string[]
  /** Whole servers: their tools and prompts (`<server>__*`). */
  readonly servers: readonly string[]
  /** Patterns refused even when another rule allows them. */
  readonly deny: readonly string[]
}

/** Where the audit log goes and what it shows of arguments. */
export interface GatewayAuditConfig {
  /** A file to append JSON lines to, or `-` for stderr. */
  readonly file: string
  /** Include tool and prompt arguments (redacted by the rules below); default false. */
  readonly isArgumentsIncluded: boolean
  /** Object keys whose values are replaced by `[redacted]` wherever they occur (compared without case). */
  readonly redactKeys: readonly string[]
  /** Regular expressions: every match inside a string value is replaced by `[redacted]`. */
  readonly redactPatterns: readonly RegExp[]
}

/** The checked `gateway` section. */
export interface GatewayConfig {
  readonly auth?: GatewayAuthConfig
  /** Without a policy every caller that passes authentication sees and calls everything. */
  readonly policy?: readonly GatewayPolicyRule[]
  /** A token bucket per principal (else per client address). */
  readonly rateLimit?: { readonly capacity: number; readonly refillPerSecond: number }
  readonly audit?: GatewayAuditConfig
  /** The health endpoint's path on the HTTP listener; undefined when switched off (`"health": false`). */
  readonly healthPath?: string
  /**
   * `"shared"` (default): one client per server for every caller. `"session"`: one client per server
   * for each gateway session, so a server sees that caller's roots and holds its subscriptions
   * (`GatewayOptions.mode`; the `--per-session` flag says the same).
   */
  readonly mode?: 'shared' | 'session'
}

/** Keys always redacted in audit arguments, besides the configured ones. */
export const DEFAULT_REDACTED_KEYS: readonly string[] = ['password', 'secret', 'token', 'authorization', 'api_key', 'apiKey']

/** The health endpoint's default path. */
export const DEFAULT_HEALTH_PATH = '/healthz'

/**
 * Checks the `gateway` section of a parsed config document (absent: `{ healthPath: '/healthz' }`).
 * Returns the problems found (each naming its field) instead of throwing, so the caller reports
 * them with those of `mcpServers`.
 */
export function parseGatewayConfig(document: unknown, env: Readonly<Record<string, string | undefined>> = {}, found?: (variable: string, value: string) => void): { config: GatewayConfig; problems: string[] } {
  const problems: string[] = []
  const raw = isObject(document) ? document.gateway : undefined
  if (raw === undefined) return { config: { healthPath: DEFAULT_HEALTH_PATH }, problems }
  if (!isObject(raw)) return { config: {}, problems: ['gateway: must be an object'] }
  known(raw, 'gateway', ['auth', 'policy', 'rateLimit', 'audit', 'health', 'mode'], problems)
  const expand = (value: unknown, at: string): string | undefined => {
    if (typeof value !== 'string') { problems.push(`${at}: must be a string`); return undefined }
    return expandVariables(value, env, variable => problems.push(`${at}: \${${variable}} is not set`), found)
  }
  const strings = (value: unknown, at: string): string[] | undefined => {
    if (value === undefined) return undefined
    if (!Array.isArray(value)) { problems.push(`${at}: must be an array of strings`); return undefined }
    return value.map((item, index) => expand(item, `${at}[${index}]`) ?? '')
  }
  const url = (value: unknown, at: string): string | undefined => {
    const text = expand(value, at)
    if (text !== undefined && !(/^https?:\/\//.test(text) && URL.canParse(text))) problems.push(`${at}: must be an http(s) URL`)
    return text
  }
  const config: { -readonly [K in keyof GatewayConfig]: GatewayConfig[K] } = {}
  if (raw.mode !== undefined) {
    if (raw.mode === 'shared' || raw.mode === 'session') config.mode = raw.mode
    else problems.push('gateway.mode: must be "shared" or "session"')
  }

  if (raw.auth !== undefined) {
    const auth = raw.auth
    if (!isObject(auth)) problems.push('gateway.auth: must be an object')
    else {
      known(auth, 'gateway.auth', ['issuer', 'resource', 'audience', 'jwksUrl', 'introspection', 'requiredScopes', 'scopesSupported', 'scopes'], problems)
      const issuer = auth.issuer === undefined ? (problems.push('gateway.auth.issuer: required'), '') : url(auth.issuer, 'gateway.auth.issuer') ?? ''
      const resource = auth.resource === undefined ? (problems.push('gateway.auth.resource: required (the gateway\'s canonical URL, the audience of its tokens)'), '') : url(auth.resource, 'gateway.auth.resource') ?? ''
      const audience = typeof auth.audience === 'string' ? [expand(auth.audience, 'gateway.auth.audience') ?? ''] : strings(auth.audience, 'gateway.auth.audience')
      const jwksUrl = auth.jwksUrl === undefined ? undefined : url(auth.jwksUrl, 'gateway.auth.jwksUrl')
      let introspection: GatewayAuthConfig['introspection']
      if (auth.introspection !== undefined) {
        const at = 'gateway.auth.introspection'
        if (!isObject(auth.introspection)) problems.push(`${at}: must be an object with endpoint, clientId and clientSecret`)
        else {
          known(auth.introspection, at, ['endpoint', 'clientId', 'clientSecret'], problems)
          introspection = {
            endpoint: url(auth.introspection.endpoint, `${at}.endpoint`) ?? '',
            clientId: expand(auth.introspection.clientId, `${at}.clientId`) ?? '',
            clientSecret: expand(auth.introspection.clientSecret, `${at}.clientSecret`) ?? '',
          }
        }
      }
      if ((jwksUrl === undefined) === (introspection === undefined)) problems.push('gateway.auth: give one of jwksUrl (JWT access tokens) or introspection (opaque tokens)')
      let scopes: Record<string, string[]> | undefined
      if (auth.scopes !== undefined) {
        if (!isObject(auth.scopes)) problems.push('gateway.auth.scopes: must map operations to lists of scopes')
        else scopes = Object.fromEntries(Object.entries(auth.scopes).map(([operation, list]) => [operation, strings(list, `gateway.auth.scopes.${operation}`) ?? []]))
      }
      config.auth = {
        issuer, resource, jwksUrl, introspection, scopes,
        requiredScopes: strings(auth.requiredScopes, 'gateway.auth.requiredScopes') ?? [],
        ...(audience === undefined ? {} : { audience }),
        ...(auth.scopesSupported === undefined ? {} : { scopesSupported: strings(auth.scopesSupported, 'gateway.auth.scopesSupported') ?? [] }),
      }
    }
  }

  if (raw.policy !== undefined) {
    if (!Array.isArray(raw.policy)) problems.push('gateway.policy: must be a list of rules')
    else config.policy = raw.policy.map((rule, index) => parseRule(rule, `gateway.policy[${index}]`, problems, strings))
  }

  if (raw.rateLimit !== undefined) {
    const limit = raw.rateLimit
    const isPositive = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0
    if (!isObject(limit) || !isPositive(limit.capacity) || !isPositive(limit.refillPerSecond)) problems.push('gateway.rateLimit: must be { "capacity": N, "refillPerSecond": N } with positive numbers')
    else {
      known(limit, 'gateway.rateLimit', ['capacity', 'refillPerSecond'], problems)
      config.rateLimit = { capacity: limit.capacity, refillPerSecond: limit.refillPerSecond }
    }
  }

  if (raw.audit !== undefined) {
    const audit = raw.audit
    if (!isObject(audit)) problems.push('gateway.audit: must be an object')
    else {
      known(audit, 'gateway.audit', ['file', 'arguments', 'redact'], problems)
      const file = audit.file === undefined ? '-' : expand(audit.file, 'gateway.audit.file') ?? '-'
      if (audit.arguments !== undefined && typeof audit.arguments !== 'boolean') problems.push('gateway.audit.arguments: must be true or false')
      let redactKeys: string[] = []
      const redactPatterns: RegExp[] = []
      if (audit.redact !== undefined) {
        if (!isObject(audit.redact)) problems.push('gateway.audit.redact: must be { "keys": [...], "patterns": [...] }')
        else {
          known(audit.redact, 'gateway.audit.redact', ['keys', 'patterns'], problems)
          redactKeys = strings(audit.redact.keys, 'gateway.audit.redact.keys') ?? []
          for (const [index, source] of (strings(audit.redact.patterns, 'gateway.audit.redact.patterns') ?? []).entries()) {
            try { redactPatterns.push(new RegExp(source, 'g')) } catch (error) { problems.push(`gateway.audit.redact.patterns[${index}]: ${(error as Error).message}`) }
          }
        }
      }
      config.audit = { file, isArgumentsIncluded: audit.arguments === true, redactKeys: [...DEFAULT_REDACTED_KEYS, ...redactKeys], redactPatterns }
    }
  }

  if (raw.health === undefined || raw.health === true) config.healthPath = DEFAULT_HEALTH_PATH
  else if (raw.health === false) config.healthPath = undefined
  else if (isObject(raw.health)) {
    known(raw.health, 'gateway.health', ['path'], problems)
    const path = raw.health.path === undefined ? DEFAULT_HEALTH_PATH : raw.health.path
    if (typeof path !== 'string' || !/^\/[A-Za-z0-9._~/-]*$/.test(path) || path === '/mcp' || path === '/sse' || path.startsWith('/.well-known/')) {
      problems.push('gateway.health.path: must be a path such as /healthz (not /mcp, /sse or /.well-known/...)')
    } else config.healthPath = path
  } else problems.push('gateway.health: must be false, true or { "path": "/healthz" }')

  return { config, problems }
}

function parseRule(raw: unknown, at: string, problems: string[], strings: (value: unknown, at: string) => string[] | undefined): GatewayPolicyRule {
  const empty: GatewayPolicyRule = { when: {}, allow: [], servers: [], deny: [] }
  if (!isObject(raw)) { problems.push(`${at}: must be an object`); return empty }
  known(raw, at, ['when', 'allow', 'servers', 'deny'], problems)
  let when: GatewayPrincipalMatch = {}
  if (raw.when !== undefined) {
    if (!isObject(raw.when)) problems.push(`${at}.when: must be an object`)
    else {
      known(raw.when, `${at}.when`, ['scopes', 'roles', 'claims', 'subjects'], problems)
      let claims: Record<string, string | number | boolean> | undefined
      if (raw.when.claims !== undefined) {
        if (!isObject(raw.when.claims) || !Object.values(raw.when.claims).every(value => ['string', 'number', 'boolean'].includes(typeof value))) {
          problems.push(`${at}.when.claims: must map claim names to strings, numbers or booleans`)
        } else claims = raw.when.claims as Record<string, string | number | boolean>
      }
      when = {
        ...(raw.when.scopes === undefined ? {} : { scopes: strings(raw.when.scopes, `${at}.when.scopes`) }),
        ...(raw.when.roles === undefined ? {} : { roles: strings(raw.when.roles, `${at}.when.roles`) }),
        ...(raw.when.subjects === undefined ? {} : { subjects: strings(raw.when.subjects, `${at}.when.subjects`) }),
        ...(claims === undefined ? {} : { claims }),
      }
    }
  }
  const rule = { when, allow: strings(raw.allow, `${at}.allow`) ?? [], servers: strings(raw.servers, `${at}.servers`) ?? [], deny: strings(raw.deny, `${at}.deny`) ?? [] }
  if (rule.allow.length === 0 && rule.servers.length === 0 && rule.deny.length === 0) problems.push(`${at}: allows and denies nothing (give allow, servers or deny)`)
  return rule
}

function known(object: Record<string, unknown>, at: string, fields: readonly string[], problems: string[]): void {
  for (const key of Object.keys(object)) if (!fields.includes(key)) problems.push(`${at}.${key}: unknown field (${fields.join(', ')})`)
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
