import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { CACHEABLE_METHODS } from '../../lib/schema/modern.ts'
import { ANONYMOUS_CONTEXT, type AuthorizationContext } from '../../lib/authorization-context.ts'
import type { Connection } from '../../lib/connection.ts'

/** DEFAULTS of {@link ResultCache}. */
export const CACHE_DEFAULTS = { maxEntries: 500 } as const

/** One stored result and when it stops being fresh. */
interface Entry {
  readonly method: string
  readonly uri: string | undefined
  readonly result: JsonObject
  /** Local time (the scheduler's `now()`) at which the result turns stale. */
  readonly staleAt: number
  /** The authorization context a `private` result came in (see lib/authorization-context.ts); undefined for a `public` one. */
  readonly context: string | undefined
}

/** Which cached methods a change notification makes stale (MCP 2026-07-28 caching: notifications invalidate). */
const INVALIDATED_BY: Readonly<Record<string, readonly string[]>> = {
  'notifications/tools/list_changed': ['tools/list'],
  'notifications/prompts/list_changed': ['prompts/list'],
  'notifications/resources/list_changed': ['resources/list', 'resources/templates/list'],
}

/**
 * The client's cache of cacheable results (MCP 2026-07-28 caching: server/discover, tools/list,
 * prompts/list, resources/list, resources/templates/list, resources/read), keyed by method and the
 * params that shape the result (`_meta` aside), one entry per page. A result is fresh while
 * `now < receivedAt + ttlMs`; `ttlMs` 0, absent or negative means stale at once, so it is not
 * stored. A `public` result serves any request; a `private` one only a request in the
 * authorization context it came in (MCP 2026-07-28: caches MUST NOT be shared across
 * authorization contexts; a different access token needs a different cache), and none when the
 * context is unknown (null). A result whose `cacheScope` is neither is not stored. Requests
 * that carry `inputResponses` or `requestState` are never cached. The oldest entry goes past
 * `maxEntries`.
 */
export class ResultCache {
  /** Entries by key, in insertion order (the oldest first, for eviction). */
  readonly #entries = new Map<string, Entry>()
  readonly #maxEntries: number
  readonly #now: () => number

  constructor(now: () => number, maxEntries: number = CACHE_DEFAULTS.maxEntries) {
    this.#now = now
    this.#maxEntries = Math.max(0, maxEntries)
  }

  /** How many entries are held, fresh or not. */
  get size(): number { return this.#entries.size }

  /**
   * The fresh result for this request in authorization `context` (default the anonymous one), or
   * undefined: a stale entry is dropped on the way, and a `private` entry of another context (or
   * any, in an unknown one: null) is not served.
   */
  get(method: string, params: JsonObject | undefined, context: AuthorizationContext = ANONYMOUS_CONTEXT): JsonObject | undefined {
    const key = cacheKey(method, params)
    if (key === undefined) return undefined
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (this.#now() >= entry.staleAt) { this.#entries.delete(key); return undefined }
    if (entry.context !== undefined && (context === null || entry.context !== context)) return undefined
    return entry.result
  }

  /**
   * Keeps a complete result when its `ttlMs` makes it fresh for a while (an input_required one
   * never); a `private` one for authorization `context` (default the anonymous one) alone, and not
   * at all when the context is unknown (null). It replaces the entry of the same request,
   * whatever its context.
   */
  set(method: string, params: JsonObject | undefined, result: JsonObject, context: AuthorizationContext = ANONYMOUS_CONTEXT): void {
    const key = cacheKey(method, params)
    if (key === undefined || (result.resultType !== undefined && result.resultType !== 'complete')) return
    const ttl = result.ttlMs
    const scope = result.cacheScope
    if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0 || (scope !== 'public' && scope !== 'private') || (scope === 'private' && context === null)) {
      this.#entries.delete(key)
      return
    }
    this.#entries.delete(key)
    this.#entries.set(key, { method, uri: typeof params?.uri === 'string' ? params.uri : undefined, result, staleAt: this.#now() + ttl, context: scope === 'private' ? context ?? undefined : undefined })
    while (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
  }

  /**
   * Drops what a change notification makes stale: list_changed drops that list (every page),
   * `notifications/resources/updated` drops the reads of its URI. Other methods do nothing.
   */
  invalidate(notification: string, params?: JsonObject): void {
    if (notification === 'notifications/resources/updated') {
      const uri = params?.uri
      for (const [key, entry] of this.#entries) if (entry.method === 'resources/read' && entry.uri === uri) this.#entries.delete(key)
      return
    }
    const methods = INVALIDATED_BY[notification]
    if (methods === undefined) return
    for (const [key, entry] of this.#entries) if (methods.includes(entry.method)) this.#entries.delete(key)
  }

  /** Drops every entry of one method (all when undefined). */
  clear(method?: string): void {
    if (method === undefined) return this.#entries.clear()
    for (const [key, entry] of this.#entries) if (entry.method === method) this.#entries.delete(key)
  }
}

/**
 * The authorization context the connection's next request goes out in: the transport's name for it,
 * the anonymous one for a transport without credentials, null (unknown) when naming it failed.
 */
export function authorizationContextOf(connection: Connection): AuthorizationContext | Promise<AuthorizationContext> {
  const transport = connection.transport
  if (transport.authorizationContext === undefined) return ANONYMOUS_CONTEXT
  try {
    const context = transport.authorizationContext()
    return context instanceof Promise ? context.catch(() => null) : context
  } catch {
    return null
  }
}

/** Notifications that make cached results stale. */
export const INVALIDATING_NOTIFICATIONS = [...Object.keys(INVALIDATED_BY), 'notifications/resources/updated'] as const

/**
 * The key of a cacheable request: its method and its params without `_meta`, with object keys
 * sorted so the same params always give the same key. Undefined for a method that is not
 * cacheable, and for a multi-round-trip retry (MCP caching: results of requests carrying
 * `inputResponses` or `requestState` MUST NOT be cached).
 */
export function cacheKey(method: string, params: JsonObject | undefined): string | undefined {
  if (!CACHEABLE_METHODS.has(method)) return undefined
  if (params !== undefined && ('inputResponses' in params || 'requestState' in params)) return undefined
  const { _meta: _ignored, ...rest } = params ?? {}
  return `${method} ${stableJson(rest)}`
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (isJsonObject(value)) return `{${Object.keys(value).sort().map(key => `${JSON.stringify(key)}:${stableJson(value[key])}`).join(',')}}`
  return JSON.stringify(value) ?? 'null'
}
