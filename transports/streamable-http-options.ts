import type { SchedulerLike } from '../lib/rx.ts'
import type { Transport, TransportServer } from '../lib/transport.ts'
import type { Authenticator } from '../lib/auth.ts'
import type { RateLimiterStore, TokenBucketOptions } from '../lib/token-bucket.ts'
import { DEFAULT_MAX_MESSAGE_SIZE } from '../lib/codec/codec.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'
import { DEFAULT_FAILED_AUTH_LIMIT, type ClientRequest } from './client-policy.ts'
import type { EventStore } from './event-store.ts'
import type { SessionCluster } from './http-cluster.ts'

/** Options of {@link streamableHttp}; defaults in {@link STREAMABLE_HTTP_DEFAULTS}. */
export interface StreamableHttpOptions {
  /** Port for `start()` (default 0: any free port; read `url` after start). */
  port?: number
  /** Interface for `start()` (default 127.0.0.1: loopback only). */
  host?: string
  /** The MCP endpoint path (default `/mcp`). */
  path?: string
  /** Also serve the 2024-11-05 HTTP+SSE transport: GET on this path opens the stream (default `/sse`; `false` to turn off). */
  legacySsePath?: string | false
  /** Where legacy clients POST (default `/messages`). */
  legacyMessagesPath?: string
  /**
   * Answer requests with one JSON body instead of an SSE stream (default false). A modern-era
   * request (2026-07-28) is then answered in JSON too, and its notifications (progress, log
   * messages, a listen stream) are not sent.
   */
  jsonResponse?: boolean
  /** Where SSE events are kept for resumption (default: a bounded in-memory store; `false` for none). */
  eventStore?: EventStore | false
  /**
   * No sessions: every POST is served by a fresh server session that ends with its answer; no
   * Mcp-Session-Id, no GET stream, no DELETE (default false).
   */
  stateless?: boolean
  /** Makes session ids; the default gives 256 random bits, base64url. */
  sessionIdGenerator?: () => string
  /**
   * Ms since the client last sent anything (a POST, a GET, a resume) after which its session is
   * closed, streams included: an open GET stream does not keep a session alive, a request in flight
   * does (default 30 minutes).
   */
  sessionIdleTimeout?: number
  /** @deprecated The former name of `sessionIdleTimeout`. */
  sessionTtlMs?: number
  /**
   * Most sessions at once, Streamable HTTP and legacy SSE together. At the cap, the least recently
   * active session with no request in flight is evicted if it has been idle `sessionEvictionMinIdle`,
   * otherwise the new session is refused with 503 and Retry-After (default 10,000).
   */
  maxSessions?: number
  /**
   * Most sessions one client holds at once, Streamable HTTP and legacy SSE together; a client is its
   * principal when authenticated, else its address (see `clientAddress`). At it, the client's own
   * least recently active session with no request in flight is evicted if it has been idle
   * `sessionEvictionMinIdle`, otherwise its new session is refused with 429 and Retry-After, while
   * other clients are still served (default 100).
   */
  maxSessionsPerClient?: number
  /**
   * Most sessionless requests held open at once, over every client: modern-era (2026-07-28)
   * requests and their streams, `subscriptions/listen` included, and `stateless` POSTs. Past it a
   * new one is refused with 503 and Retry-After (default 10,000).
   */
  maxExchanges?: number
  /**
   * Most sessionless requests one client holds open at once (the same ones as `maxExchanges`).
   * Past it the client's new one is refused with 429, Retry-After and a -31029 error carrying the
   * request's id, while other clients are still served (default 100).
   */
  maxExchangesPerClient?: number
  /** Ms a session must have been idle before a new one may evict it at `maxSessions` (default 60 s). */
  sessionEvictionMinIdle?: number
  /** Largest request body in bytes; reading stops as soon as it is passed and 413 answers (default 4 MiB). */
  maxBodyBytes?: number
  /**
   * Bounds on each request body's nesting and members (default `STRUCTURE_DEFAULTS`: 128 levels,
   * 100,000 members), checked before it is parsed: a body past them is refused unparsed with
   * -32700 and the request's id when it could be read (on `/mcp` as a 400 answer, on the legacy
   * `/messages` on the session's stream), and nothing of it is served.
   */
  structureLimits?: StructureLimits
  /** Ms allowed for a whole request body; a slower body gets 408 and its connection closes (default 30 s). */
  bodyTimeoutMs?: number
  /**
   * Bytes an SSE stream may buffer for a client that does not read; past it the stream is closed
   * (a Streamable HTTP client resumes with Last-Event-ID; a legacy SSE session ends) (default 1 MiB).
   */
  streamHighWaterMark?: number
  /** SSE streams a session keeps (open, or kept for resumption); past it the oldest detached one is forgotten (default 100). */
  maxStreamsPerSession?: number
  /** Origins allowed to call (default: http(s)://localhost, 127.0.0.1 and [::1] on any port). Requests without Origin pass. */
  allowedOrigins?: readonly string[]
  /** Host header values allowed, compared without case (default: the loopback names on any port when bound to loopback; no check otherwise). */
  allowedHosts?: readonly string[]
  /** CORS: origins that get Access-Control-Allow-Origin (default none; `['*']` for any). */
  corsOrigins?: readonly string[]
  /** The SSE `retry` field sent with the priming event, in ms (default 1,000). */
  retryMs?: number
  /** Keep-alive comment interval on open SSE streams, in ms (default 15,000; 0 turns it off). */
  keepAliveMs?: number
  /** Protocol versions accepted in MCP-Protocol-Version, both eras (default: every supported revision, 2026-07-28 first). */
  protocolVersions?: readonly string[]
  /**
   * Refuse (400) a request whose MCP-Protocol-Version is supported but not the one its session
   * negotiated (default false). The spec requires 400 only for invalid or unsupported versions, and
   * the official conformance suite sends another supported version on a session and expects it
   * served, so the strict check is opt-in.
   */
  strictProtocolVersion?: boolean
  /**
   * Where the listener takes its time (default RxJS's `asyncScheduler`, real time): the idle clock,
   * the idle-session sweeps and keep-alives, the body timeout, token expiry, request budgets, and in
   * cluster mode the forwarding retries and the peers' check. Without it the sweeps and the peers'
   * check run on timers that do not hold the process open. A test passes a virtual one
   * (`TestScheduler`, `VirtualTimeScheduler`) and moves time itself.
   */
  scheduler?: SchedulerLike
  /**
   * Authorization (default none): every request to the MCP endpoint and the legacy SSE paths must
   * pass `auth.authenticate` (else 401 with its challenge), and each POST `auth.authorize` (else
   * 403, insufficient scope); `auth.serve` answers its metadata documents. A session belongs to the
   * principal that created it: another principal's request naming it gets 404. A response stream
   * (a GET stream, a resumed one, a POST's SSE answer, a legacy `/sse` stream, a modern-era
   * `subscriptions/listen` stream) ends when the token of the request that opened it expires
   * (`principal.expiresAt`, on the `scheduler`'s clock): the client reconnects or resumes with a
   * fresh token; a legacy `/sse` session ends with its stream. `bearerAuth` from `rxmcp/auth` makes
   * one (OAuth 2.1 bearer tokens, RFC 9728 Protected Resource Metadata).
   */
  auth?: Authenticator
  /**
   * A request budget per caller (default none): a token bucket per principal (else per client
   * address); each request of a POST spends one, and a POST over budget is answered 429 with
   * Retry-After and a -31029 error per request; callers with neither principal nor known address
   * share one bucket. The buckets live in `rateLimiterStore`. For other transports use the
   * `rateLimit` middleware.
   */
  rateLimit?: TokenBucketOptions
  /**
   * The budget of failed authentications per client address, when `auth` is set (default 60 at
   * once, refilled at 1 a second; `false` turns it off): every request `auth` refuses with a 4xx
   * (401: a missing, invalid or expired credential) spends a token; past the budget the address is
   * answered 429 with Retry-After and -31029, and its requests are not verified at all until a token
   * is back, valid credentials included (they come from the same address as the flood). A 5xx
   * refusal (the verifier cannot decide) and a 429 (a valid credential over a quota of its own,
   * such as its DPoP key's share of the replay cache) cost nothing, and a request of unknown
   * address (a web Request without `clientAddress`) is not budgeted.
   */
  failedAuthLimit?: TokenBucketOptions | false
  /**
   * Where the `rateLimit` and `failedAuthLimit` buckets live (default: a store of this listener's
   * own in this process's memory, read back as `rateLimiterStore`; each instance has its own).
   * `redisScaleOut(url).http` from `rxmcp/transports/redis` gives one in Redis, so every instance
   * spends the same budget.
   */
  rateLimiterStore?: RateLimiterStore
  /**
   * The client address of a request, for the budgets kept per address (default: the socket's
   * remote address). Behind a reverse proxy every socket is the proxy's: return the address the
   * proxy wrote (`request => request.header('x-real-ip') ?? undefined`), and only for a header
   * that proxy always sets, since a client can send any header. Undefined falls back to the socket's.
   */
  clientAddress?: (request: ClientRequest) => string | undefined
  /**
   * Sessions shared between instances of this listener (default none): every session is recorded
   * in the cluster, a request for a session another instance holds is forwarded to it, and the
   * session of an instance that is gone is taken over (with its saved state; its streams resume
   * from the shared `eventStore`). `redisScaleOut(url).http` from `rxmcp/transports/redis` gives
   * this and the Redis event store together.
   */
  cluster?: SessionCluster
  /**
   * The health endpoint for a load balancer's check (default `/health`; false: none): a GET
   * answers 200 `{"status":"serving","sessions":N}` while the listener serves, 503
   * `{"status":"draining"}` from the moment a drain starts (`McpServer.drain`), so the balancer
   * sends new clients elsewhere before the listener stops taking sessions, and 503
   * `{"status":"closed"}` once closed. No credentials, Host or Origin are asked of it; it tells
   * nothing but that.
   */
  healthPath?: string | false
}

/** DEFAULTS of {@link StreamableHttpOptions}: every limit of the HTTP listener (README, "Limits"). */
export const STREAMABLE_HTTP_DEFAULTS = {
  host: '127.0.0.1', path: '/mcp', legacySsePath: '/sse', legacyMessagesPath: '/messages', healthPath: '/health',
  sessionIdleTimeout: 30 * 60_000,
  /** @deprecated The former name of `sessionIdleTimeout`. */
  sessionTtlMs: 30 * 60_000,
  maxSessions: 10_000, maxSessionsPerClient: 100, sessionEvictionMinIdle: 60_000,
  maxExchanges: 10_000, maxExchangesPerClient: 100,
  /** When `auth` is set: failed authentications per client address. */
  failedAuthLimit: DEFAULT_FAILED_AUTH_LIMIT,
  maxBodyBytes: DEFAULT_MAX_MESSAGE_SIZE, bodyTimeoutMs: 30_000,
  streamHighWaterMark: 1024 * 1024, maxStreamsPerSession: 100,
  retryMs: 1000, keepAliveMs: 15_000, strictProtocolVersion: false,
} as const
