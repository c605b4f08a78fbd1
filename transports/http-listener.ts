import { Subject, asyncScheduler, type SchedulerLike } from '../lib/rx.ts'
import { clockOf } from './timers.ts'
import type { ReplyEnvelope, Transport } from '../lib/transport.ts'
import { createMemoryRateLimiterStore, type RateLimiterStore } from '../lib/token-bucket.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../lib/schema/types.ts'
import { MODERN_PROTOCOL_VERSIONS, isModernVersion } from '../lib/schema/modern.ts'
import { checkSession, type HttpRules } from '../lib/http/rules.ts'
import { BODY_TIMEOUT, BODY_TOO_LARGE, type RefusedIds } from '../lib/http/refusal.ts'
import { HttpGuard } from './http-guard.ts'
import { createMemoryEventStore } from './event-store.ts'
import { answerRefusal, type BodyLimits, type Exchange } from './http-exchange.ts'
import { randomId } from './http-ids.ts'
import { HttpSession, type SessionConfig } from './http-session.ts'
import { SharedSessions } from './http-shared.ts'
import type { ModernReply } from './http-modern.ts'
import { SessionTable } from './http-sessions.ts'
import { STREAMABLE_HTTP_DEFAULTS, type StreamableHttpOptions } from './streamable-http-options.ts'

/** Every revision the listener accepts by default, modern first. */
const ALL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS]

/**
 * What the Streamable HTTP listener's request handlers share (one object per listener, made once):
 * its options and the rules resolved from them, the session table, the sessionless exchanges, the
 * guard (auth and budgets), the cluster's shared sessions, and where new transports go. Each
 * handler (http-session-routes.ts, http-modern-post.ts, http-stateless.ts, legacy-sse-routes.ts)
 * is a function of it and one exchange; streamable-http.ts routes to them.
 */
export class HttpListenerCore {
  readonly options: StreamableHttpOptions
  /** The options the pure rules read (lib/http/rules.ts). */
  readonly rules: HttpRules
  /** Each new session, for the server to serve. */
  readonly connections = new Subject<Transport>()
  /** Each modern-era request, with its reply, for the server to serve without a session. */
  readonly requests = new Subject<ReplyEnvelope>()
  readonly sessions: SessionTable
  /** Modern-era requests being answered (for keep-alives on their streams and for close). */
  readonly exchanges = new Set<ModernReply>()
  readonly config: SessionConfig
  /** Authentication, scopes and request budgets (the `auth` and `rateLimit` options). */
  readonly guard: HttpGuard
  /** Where the guard's budgets live (the option, else a memory store of this listener's own). */
  readonly rateLimiterStore: RateLimiterStore
  readonly now: () => number
  /** Where token expiries are timed (the `scheduler` option, else the real clock). */
  readonly scheduler: SchedulerLike
  /** Set in cluster mode: the sessions' records, and the routing of requests between instances. */
  readonly shared: SharedSessions | undefined
  isClosed = false
  /** Set by a drain: the health endpoint answers 503. */
  isUnhealthy = false
  /** Set by a drain once the balancer had its grace: no new session is taken (initialize and legacy SSE GETs answered 503). */
  isDraining = false
  /**
   * Requests on their way into a session, by session id (counted from their arrival until they
   * reached it, or were answered): a drain hands no session over while one is, so none reaches a
   * session that has gone.
   */
  readonly arriving = new Map<string, number>()

  /** `serveForwarded` serves an exchange another instance forwarded (see streamable-http.ts). */
  constructor(options: StreamableHttpOptions, serveForwarded: (exchange: Exchange) => Promise<void>) {
    this.options = options
    this.scheduler = options.scheduler ?? asyncScheduler
    this.now = clockOf(options.scheduler)
    this.rateLimiterStore = options.rateLimiterStore ?? createMemoryRateLimiterStore()
    this.guard = new HttpGuard({
      auth: options.auth, rateLimit: options.rateLimit, failedAuthLimit: options.failedAuthLimit,
      rateLimiterStore: this.rateLimiterStore, clientAddress: options.clientAddress, now: this.now,
    })
    const idleTimeout = options.sessionIdleTimeout ?? options.sessionTtlMs ?? STREAMABLE_HTTP_DEFAULTS.sessionIdleTimeout
    this.sessions = new SessionTable({
      perClient: options.maxSessionsPerClient ?? STREAMABLE_HTTP_DEFAULTS.maxSessionsPerClient,
      total: options.maxSessions ?? STREAMABLE_HTTP_DEFAULTS.maxSessions,
      minIdle: options.sessionEvictionMinIdle ?? STREAMABLE_HTTP_DEFAULTS.sessionEvictionMinIdle,
      exchangesPerClient: options.maxExchangesPerClient ?? STREAMABLE_HTTP_DEFAULTS.maxExchangesPerClient,
      exchanges: options.maxExchanges ?? STREAMABLE_HTTP_DEFAULTS.maxExchanges,
      idleTimeout,
      newId: options.sessionIdGenerator,
    }, this.now)
    const eventStore = options.eventStore === false ? undefined : options.eventStore ?? createMemoryEventStore()
    // Stream ids: a random prefix per listener and a counter, so no id says which session it is of.
    const streamPrefix = randomId(6)
    let streamCount = 0
    this.config = {
      eventStore,
      retryMs: options.retryMs ?? STREAMABLE_HTTP_DEFAULTS.retryMs,
      highWaterMark: options.streamHighWaterMark ?? STREAMABLE_HTTP_DEFAULTS.streamHighWaterMark,
      maxStreams: options.maxStreamsPerSession ?? STREAMABLE_HTTP_DEFAULTS.maxStreamsPerSession,
      nextStreamId: () => `${streamPrefix}${(++streamCount).toString(36)}`,
      ...(options.cluster === undefined ? {} : { cluster: options.cluster }),
    }
    const versions = options.protocolVersions ?? ALL_VERSIONS
    const modern = versions.filter(isModernVersion)
    this.rules = {
      path: options.path ?? STREAMABLE_HTTP_DEFAULTS.path,
      legacySsePath: options.legacySsePath === false ? undefined : options.legacySsePath ?? STREAMABLE_HTTP_DEFAULTS.legacySsePath,
      legacyMessagesPath: options.legacyMessagesPath ?? STREAMABLE_HTTP_DEFAULTS.legacyMessagesPath,
      allowedOrigins: options.allowedOrigins,
      allowedHosts: options.allowedHosts,
      boundHost: options.host ?? STREAMABLE_HTTP_DEFAULTS.host,
      isStateless: options.stateless === true,
      versions,
      modernVersions: modern.length > 0 ? modern : MODERN_PROTOCOL_VERSIONS,
      isStrictVersion: options.strictProtocolVersion ?? STREAMABLE_HTTP_DEFAULTS.strictProtocolVersion,
    }
    const table = this.sessions
    this.shared = options.cluster === undefined ? undefined : new SharedSessions(options.cluster, {
      sessions: table.sessions,
      config: this.config,
      now: this.now,
      isClosed: () => this.isClosed,
      isDraining: () => this.isDraining,
      open: session => { table.register(session); this.connections.next(session) },
      serve: serveForwarded,
      body: exchange => this.body(exchange),
      clientAddress: exchange => this.guard.clientAddress(exchange),
      onEnd: table.onEnd,
    }, idleTimeout, options.scheduler)
    table.shared = this.shared
  }

  /** The limits every request body is read under (one object for all of them). */
  #bodyLimits: BodyLimits | undefined

  /** The body under the listener's limits, or undefined once refused (413 past the size, 408 past the time). */
  async body(exchange: Exchange): Promise<Uint8Array | undefined> {
    const result = await exchange.body(this.#bodyLimits ??= {
      maxBytes: this.options.maxBodyBytes ?? STREAMABLE_HTTP_DEFAULTS.maxBodyBytes,
      timeoutMs: this.options.bodyTimeoutMs ?? STREAMABLE_HTTP_DEFAULTS.bodyTimeoutMs,
      scheduler: this.options.scheduler,
    })
    if (result.type === 'body') return result.body
    if (result.type !== 'gone') answerRefusal(exchange, result.type === 'too-large' ? BODY_TOO_LARGE : BODY_TIMEOUT)
    return undefined
  }

  /**
   * The Streamable HTTP session a request names, touched, or undefined once refused (see
   * checkSession). `answers` names the requests a POST carried, so that the refusal answers them
   * (null for a GET or DELETE).
   */
  session(exchange: Exchange, answers: RefusedIds = null): HttpSession | undefined {
    const id = exchange.header('mcp-session-id')
    const session = id === null ? undefined : this.sessions.sessions.get(id)
    // A session belongs to the principal that made it; to anyone else it does not exist.
    const found = session instanceof HttpSession && this.guard.owns(session.principalKey, exchange) ? session : undefined
    const refusal = checkSession(this.rules, id, found, exchange.header('mcp-protocol-version'), answers)
    if (refusal !== undefined) { answerRefusal(exchange, refusal); return undefined }
    this.sessions.touch(found!)
    return found
  }
}
