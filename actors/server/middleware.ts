/**
 * Middleware that ships with rxmcp, each built on `server.use` alone: scopes per operation, a
 * permission policy by role (applied to listing too), a token-bucket rate limit per principal, and
 * an audit hook. They compose with each other and with your own, in the order given.
 */
import { Observable, map, throwError } from '../../lib/rx.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ForbiddenError, InvalidParamsError, McpError, RateLimitedError, ResourceNotFoundError } from '../../lib/jsonrpc/errors.ts'
import { missingScopes, operationScopes, principalKey, targetOf, type Principal, type ScopeHierarchy, type ScopeRules } from '../../lib/auth.ts'
import { TokenBuckets, type TokenBucketOptions } from '../../lib/token-bucket.ts'
import type { McpRequest, Middleware, ServerContext } from './api.ts'
import type { ListKind } from './registry.ts'
import type { ListVisibility } from './list-views.ts'

/**
 * Refuses a request whose principal lacks the scopes `rules` give its operation (keys as in
 * `bearerAuth`'s `scopes`: `'tools/call'`, `'tools/call:delete_file'`), with -31003 naming them in
 * `data.requiredScopes`. Over HTTP, `bearerAuth({ scopes })` checks the same rules before the
 * request is read and answers 403 for step-up; this middleware serves every other transport.
 * A scope counts as held when the principal has it or, with `hierarchy`, one implying it
 * (a principal from `bearerAuth({ scopeHierarchy })` carries the implied scopes already).
 */
export function requireScopes(rules: ScopeRules, hierarchy?: ScopeHierarchy): Middleware {
  return next => (request, ctx) => {
    const required = operationScopes(rules, request)
    const missing = missingScopes(ctx.principal, required, hierarchy)
    if (missing.length === 0) return next(request, ctx)
    return throwError(() => new ForbiddenError(`Forbidden: ${request.method} needs scope ${missing.join(' ')}`, { requiredScopes: [...required] }))
  }
}

/** A permission policy in the shape of the seeds: roles mapped to permission patterns. */
export interface PermissionPolicy {
  /**
   * What each role may do. A permission is the method with `:` for `/`, then the target:
   * `tools:call:delete_file`, `resources:read:file:///a.txt`, `prompts:get:review`, `tools:list`.
   * A pattern grants itself and everything under it (`tools:call` grants every tool), and `*`
   * at the end matches any rest (`tools:*`, `resources:read:file:///public/*`; `*` alone: all).
   * @example { admin: ['*'], user: ['tools:*', 'resources:read', 'resources:list'], viewer: ['resources:list'] }
   */
  roles: Readonly<Record<string, readonly string[]>>
  /** The roles of a request (default: the principal's `roles` claim, when it is a list of strings). */
  rolesOf?: (ctx: ServerContext) => readonly string[]
  /** Roles of a request that has none (no principal, or no roles claim) (default none: nothing allowed). */
  defaultRoles?: readonly string[]
  /** Methods every request may use whatever its roles (default {@link OPEN_METHODS}). */
  open?: readonly string[]
  /** Patterns taken away from a role even where it (or another role of the request) grants them. */
  deny?: Readonly<Record<string, readonly string[]>>
}

/** Methods the permission policy lets through by default: the handshake and the session's plumbing (tasks are bound to their owner already). */
export const OPEN_METHODS: readonly string[] = [
  'server/discover', 'logging/setLevel', 'subscriptions/listen', 'resources/unsubscribe',
  'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel', 'tasks/update',
]

/** The permission a request needs: `tools:call:echo` for a tools/call of echo, `tools:list` for a listing. */
export function permissionOf(method: string, target?: string): string {
  const name = method.replaceAll('/', ':')
  return target === undefined ? name : `${name}:${target}`
}

/** True when `pattern` grants `permission` (see PermissionPolicy.roles). */
export function grants(pattern: string, permission: string): boolean {
  if (pattern === '*' || pattern === permission) return true
  if (pattern.endsWith('*')) return permission.startsWith(pattern.slice(0, -1))
  return permission.startsWith(`${pattern}:`)
}

/**
 * What a listing's items are, and the permission that lets a caller see each one. A template is
 * seen by whoever may read its URI template as written (`resources:read:file:///docs/*` grants
 * `file:///docs/{name}`, not `file:///{path}`); a skill by whoever may read its resource.
 */
const LISTINGS: Readonly<Record<string, { key: string; permission: (item: JsonObject) => string }>> = {
  'tools/list': { key: 'tools', permission: item => permissionOf('tools/call', String(item.name)) },
  'prompts/list': { key: 'prompts', permission: item => permissionOf('prompts/get', String(item.name)) },
  'resources/list': { key: 'resources', permission: item => permissionOf('resources/read', String(item.uri)) },
  'resources/templates/list': { key: 'resourceTemplates', permission: item => permissionOf('resources/read', String(item.uriTemplate)) },
  'skills/list': { key: 'skills', permission: item => permissionOf('resources/read', String(item.uri)) },
}

/**
 * Requests that act on what another method names, and the permission they need: watching,
 * completing or fetching a skill of a resource takes the right to read it; completing a prompt's
 * argument, the right to get it.
 */
function targetPermission(method: string, params: JsonObject | undefined): string | undefined {
  if (method === 'completion/complete') {
    const ref = params?.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') return permissionOf('prompts/get', ref.name)
    if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') return permissionOf('resources/read', ref.uri)
    return undefined
  }
  const target = targetOf(params)
  if (target === undefined) return undefined
  if (method === 'resources/subscribe' || method === 'skills/get' || method === 'resources/directory/read') return permissionOf('resources/read', target)
  return permissionOf(method, target)
}

/** A listing's items (`tools`, `prompts`, `resources` with their templates), as {@link ListVisibility} names them. */
const LIST_KIND_PERMISSION: Readonly<Record<ListKind, (item: JsonObject) => string>> = {
  tools: LISTINGS['tools/list']!.permission,
  prompts: LISTINGS['prompts/list']!.permission,
  resources: item => typeof item.uriTemplate === 'string' ? LISTINGS['resources/templates/list']!.permission(item) : LISTINGS['resources/list']!.permission(item),
}

/**
 * Enforces a role-based permission policy on every request, and on listings: a caller sees only
 * the tools it may call, the prompts it may get and the resources it may read. A target it may not
 * use is answered as the protocol answers a missing one (unknown tool or prompt: -32602; resource:
 * -32002 in the legacy era, -32602 in the modern one), so the policy does not reveal what exists;
 * a method it may not use at all gets -31003.
 */
export function permissions(policy: PermissionPolicy): Middleware {
  const open = new Set(policy.open ?? OPEN_METHODS)
  const allowed = (ctx: ServerContext) => mayOf(policy, ctx)
  return next => (request, ctx) => {
    const listing = LISTINGS[request.method]
    // An open listing is open to every caller, and still shows each only what it may use.
    const isOpen = open.has(request.method)
    if (isOpen && listing === undefined) return next(request, ctx)
    const may = allowed(ctx)
    const permission = listing === undefined ? targetPermission(request.method, request.params) : undefined
    if (permission !== undefined) return may(permission) ? next(request, ctx) : throwError(() => hidden(request, ctx))
    if (!isOpen && !may(permissionOf(request.method))) return throwError(() => new ForbiddenError(`Forbidden: ${request.method}`))
    if (listing === undefined) return next(request, ctx)
    return next(request, ctx).pipe(map(result => {
      const items = result[listing.key]
      if (!Array.isArray(items)) return result
      return { ...result, [listing.key]: (items as JsonObject[]).filter(item => may(listing.permission(item))) }
    }))
  }
}

/**
 * What `policy` lets a principal see of each list, for `ServerOptions.listVisibility`: the same
 * filter `permissions(policy)` applies to listings, so a session hears list_changed only when its
 * own listing would change. `rolesOf` is given a context holding the principal alone.
 * @example createServer(info, { listVisibility: permissionVisibility(policy) }).use(permissions(policy))
 */
export function permissionVisibility(policy: PermissionPolicy): ListVisibility {
  return principal => {
    const may = mayOf(policy, { principal } as ServerContext)
    return (kind, item) => may(LIST_KIND_PERMISSION[kind](item))
  }
}

/** What the policy lets the request's roles do. */
function mayOf(policy: PermissionPolicy, ctx: ServerContext): (permission: string) => boolean {
  const roles = (policy.rolesOf ?? rolesClaim)(ctx)
  const patterns = (roles.length > 0 ? roles : policy.defaultRoles ?? []).flatMap(role => policy.roles[role] ?? [])
  const denied = (roles.length > 0 ? roles : policy.defaultRoles ?? []).flatMap(role => policy.deny?.[role] ?? [])
  return permission => patterns.some(pattern => grants(pattern, permission)) && !denied.some(pattern => grants(pattern, permission))
}

/** The error a missing target gets in the request's era, so a refused one looks the same. */
function hidden(request: McpRequest, ctx: ServerContext): McpError {
  if (request.method === 'completion/complete') {
    const ref = request.params?.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined
    return ref?.type === 'ref/prompt'
      ? new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(ref.name)}`)
      : new InvalidParamsError(`Invalid params: unknown resource template ${JSON.stringify(ref?.uri)}`)
  }
  if (request.method === 'skills/get' || request.method === 'resources/directory/read') {
    return new InvalidParamsError(`Invalid params: no such resource ${JSON.stringify(targetOf(request.params))}`)
  }
  const target = targetOf(request.params)
  if (request.method === 'resources/read') {
    // MCP 2026-07-28 resources: an unknown resource is -32602 (the router answers a missing one so too).
    return ctx.era === 'modern' ? new InvalidParamsError(`Resource not found: ${target}`, { uri: target }) : new ResourceNotFoundError(`Resource not found: ${target}`, { uri: target })
  }
  if (request.method === 'tools/call') return new InvalidParamsError(`Invalid params: unknown tool ${JSON.stringify(target)}`)
  if (request.method === 'prompts/get') return new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(target)}`)
  return new ForbiddenError(`Forbidden: ${request.method}`)
}

/** The principal's `roles` claim, when it is a list of strings. */
function rolesClaim(ctx: ServerContext): readonly string[] {
  const roles = ctx.principal?.claims?.roles
  return Array.isArray(roles) ? roles.filter((role): role is string => typeof role === 'string') : []
}

/** Options of {@link rateLimit}. */
export interface RateLimitOptions extends TokenBucketOptions {
  /**
   * Whose budget a request spends (default: the principal, else the legacy session, else the
   * client's address, else one budget for every anonymous caller the transport cannot tell apart).
   */
  key?: (ctx: ServerContext) => string
  /** Methods that spend nothing (default none; ping never reaches middleware). */
  free?: readonly string[]
}

/**
 * A token bucket per principal: `capacity` requests at once, refilled at `refillPerSecond`. A
 * request over budget gets -31029 with `data.retryAfterMs`. For a 429 with Retry-After over HTTP,
 * give the same options to the listener's `rateLimit` instead.
 */
export function rateLimit(options: RateLimitOptions): Middleware {
  const buckets = new TokenBuckets(options)
  const keyOf = options.key ?? defaultKey
  const free = new Set(options.free ?? [])
  return next => (request, ctx) => {
    if (free.has(request.method)) return next(request, ctx)
    const waitMs = buckets.take(keyOf(ctx))
    if (waitMs === 0) return next(request, ctx)
    return throwError(() => new RateLimitedError(`Too many requests: try again in ${Math.ceil(waitMs / 1000)} s`, { retryAfterMs: Math.ceil(waitMs) }))
  }
}

function defaultKey(ctx: ServerContext): string {
  const key = principalKey(ctx.principal)
  if (key !== '') return key
  if (ctx.session !== undefined) return `session:${ctx.session.id}`
  const address = ctx.requestInfo.remoteAddress
  return address !== undefined ? `address:${address}` : 'anonymous'
}

/** One line of the audit trail: who called what, how it ended, how long it took. */
export interface AuditEntry {
  /** When the request started (ms since the epoch, or the `now` clock's). */
  readonly at: number
  readonly method: string
  /** The tool or prompt name, or resource URI, the request acted on. */
  readonly target?: string
  readonly era: 'legacy' | 'modern'
  readonly requestId: string | number
  /** The caller, when authenticated (`kind` tells user alice from a client named alice). */
  readonly principal?: Pick<Principal, 'subject' | 'kind' | 'clientId'>
  /** `result` (a tool result with isError counts as `tool-error`), `error` (a JSON-RPC error), `cancelled`. */
  readonly outcome: 'result' | 'tool-error' | 'error' | 'cancelled'
  /** The JSON-RPC error code, for `error`. */
  readonly errorCode?: number
  readonly durationMs: number
  /** What the `arguments` option made of the request's arguments (redacted), when it gave anything. */
  readonly arguments?: unknown
}

/** Options of {@link audit}. */
export interface AuditOptions {
  /** The clock, in ms (default Date.now). */
  now?: () => number
  /** Where a sink's failure goes (default console.error). */
  onError?: (error: unknown) => void
  /**
   * What to record of a request's arguments (tool arguments, prompt arguments), redacted as the
   * application needs; undefined records nothing (the default: arguments often hold secrets).
   */
  arguments?: (request: McpRequest) => unknown
}

/**
 * Calls `sink` once per request as it ends, with an {@link AuditEntry}. Put it first in `use` to
 * see every refusal of the middleware after it. A sink that throws is reported, never the request's
 * problem.
 */
export function audit(sink: (entry: AuditEntry) => void, options: AuditOptions = {}): Middleware {
  const now = options.now ?? Date.now
  return next => (request, ctx) => new Observable<JsonObject>(subscriber => {
    const at = now()
    let isEnded = false
    const write = (outcome: AuditEntry['outcome'], errorCode?: number) => {
      if (isEnded) return
      isEnded = true
      const target = targetOf(request.params)
      const principal = ctx.principal
      const recorded = options.arguments?.(request)
      const entry: AuditEntry = {
        at, method: request.method, era: ctx.era, requestId: ctx.requestId, outcome, durationMs: now() - at,
        ...(target === undefined ? {} : { target }),
        ...(principal === undefined ? {} : { principal: { subject: principal.subject, ...(principal.kind === undefined ? {} : { kind: principal.kind }), ...(principal.clientId === undefined ? {} : { clientId: principal.clientId }) } }),
        ...(errorCode === undefined ? {} : { errorCode }),
        ...(recorded === undefined ? {} : { arguments: recorded }),
      }
      try { sink(entry) } catch (error) { (options.onError ?? console.error)(error) }
    }
    let last: JsonObject | undefined
    const subscription = next(request, ctx).subscribe({
      next: value => { last = value; subscriber.next(value) },
      error: error => { write('error', error instanceof McpError ? error.code : -32603); subscriber.error(error) },
      complete: () => { write(last?.isError === true ? 'tool-error' : 'result'); subscriber.complete() },
    })
    return () => { subscription.unsubscribe(); write('cancelled') }
  })
}
