import type { EventBus } from '../../lib/events.ts'
import type { TelemetryOptions } from '../../lib/request-observer.ts'
import type { SchedulerLike } from '../../lib/rx.ts'
import type { InspectionEvent } from '../../lib/connection.ts'
import type { LoggingLevel, ServerCapabilities } from '../../lib/schema/types.ts'
import type { TaskStore } from '../tasks/store.ts'
import type { RequestStateStore } from './request-state.ts'
import type { CacheHint, ServerContext } from './api.ts'
import type { JsonSchemaValidatorOption } from '../../lib/validator.ts'
import type { ListVisibility } from './list-views.ts'

/*
 * The options of a server (createServer) and their defaults: a leaf beside api.ts, which holds the
 * types a handler and a server's user meet.
 */

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** Shown to the client in the initialize result. */
  instructions?: string
  /** Capabilities to declare beyond those derived from what is registered. */
  capabilities?: ServerCapabilities
  /** Items per page of every list (default 100). */
  pageSize?: number
  /** Protocol versions this server speaks, newest first (default: every supported revision). */
  protocolVersions?: readonly string[]
  /** Log level of a session before the client sets one (default 'debug': everything is sent). */
  defaultLogLevel?: LoggingLevel
  /**
   * Where the server's time runs (default RxJS's async scheduler): its actor system's timers
   * (request timeouts, task TTLs, restarts), and the tasks' clock unless `tasks.scheduler` says
   * otherwise. A `TestScheduler` or `VirtualTimeScheduler` makes all of it virtual in tests.
   */
  scheduler?: SchedulerLike
  /** Default timeout of requests the server sends to clients (60 s). */
  timeout?: number
  /** Keep call-site stacks of requests for their timeout errors (see ConnectionOptions.captureStack). */
  captureStack?: boolean
  /** Inspection of every session's connection. */
  inspect?: (event: InspectionEvent) => void
  /**
   * OpenTelemetry traces and metrics by the MCP semantic conventions (README, Telemetry): `true`
   * uses the globally registered providers, or name a `tracerProvider` and `meterProvider`. Needs
   * the optional peer `@opentelemetry/api`, loaded (with rxmcp's telemetry module) only when set;
   * `listen` waits for it and fails when it is missing. Default off: nothing is loaded or made.
   */
  telemetry?: boolean | TelemetryOptions
  /**
   * Where errors nobody observes go (default: stderr via console.error), and warnings (a
   * `ToolNameWarning` when a tool is registered with a name outside the MCP rules, a
   * `ProgressWarning` when a handler reports progress that does not increase; default: its
   * message via console.warn).
   */
  reportUnhandledError?: (error: unknown) => void
  /**
   * list_changed per principal: what each principal may see of each list. Given, a session (or a
   * modern listen stream) hears `notifications/<kind>/list_changed` only when the items visible to
   * its principal changed. Pair it with the middleware that filters the listings
   * (`permissionVisibility(policy)` for `permissions(policy)`). Default: every change to everyone.
   */
  listVisibility?: ListVisibility
  /** Most resource subscriptions one session may hold (default 1000); past it, resources/subscribe is -32600. */
  maxSubscriptions?: number
  /** Most entries of a JSON-RPC batch (2025-03-26 sessions; default 1000, see ConnectionOptions.maxBatchSize). */
  maxBatchSize?: number
  /**
   * The HMAC-SHA256 key that seals MRTR `requestState` (modern era), at least 16 bytes (a string
   * is UTF-8). Default: 32 random bytes made per server, so a round only continues on the process
   * that began it; give every instance behind a load balancer the same key.
   */
  requestStateKey?: string | Uint8Array
  /** Ms a `requestState` stays valid (default 10 minutes); past it the retry is refused with -32602. */
  requestStateTtlMs?: number
  /**
   * Where the `requestState`s already used are remembered, so that each continues its request at
   * most once: a second retry with the same state is refused with -32602 (`data.reason: 'used'`).
   * Default: this process's memory (`memoryRequestStateStore`, 100,000 states at most; when full,
   * retries with a state are refused with -31029 until the oldest expire). Instances that share a
   * `requestStateKey` should share a store (`redisRequestStateStore` of `rxmcp/transports/redis`,
   * which `redisScaleOut(url).server` gives; see {@link RequestStateStore}), or a state can be used
   * once on each of them.
   */
  requestStateStore?: RequestStateStore
  /**
   * Cache hints (modern era) of the cacheable results by method: `server/discover`, `tools/list`,
   * `prompts/list`, `resources/list`, `resources/templates/list`, `resources/read` (a resource's or
   * template's own `cache` wins for reads). Default: `{ ttlMs: 0, cacheScope: 'private' }`.
   */
  cacheHints?: Partial<Record<'server/discover' | 'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list' | 'resources/read', CacheHint>>
  /** Tasks (both eras): where they are kept, how long, who owns them. See {@link ServerTaskOptions}. */
  tasks?: ServerTaskOptions
  /**
   * Shares the event bus with other instances (scale-out): every event this server raises is
   * published, and every event another instance published comes into this server's bus as if raised
   * here (its sessions and listen streams hear it). `redisEventBus` from `rxmcp/transports/redis`
   * makes one on Redis pub/sub.
   */
  eventBus?: EventBus
  /**
   * The JSON Schema validator of tool `inputSchema`/`outputSchema` and elicitation
   * `requestedSchema` (default `'auto'`: compiled (ajv) where the runtime allows code generation,
   * interpreted (`@cfworker/json-schema`) where it refuses it, as Cloudflare Workers do; see
   * {@link JsonSchemaValidatorOption}). Chosen when the server is made; its module loads when a
   * tool with a schema is first called (or registered after that).
   * @example
   * createServer(info, { jsonSchemaValidator: 'interpreted' })
   */
  jsonSchemaValidator?: JsonSchemaValidatorOption
}

/** Options of a server's tasks. */
export interface ServerTaskOptions {
  /** Where tasks live (default: a memory store with the limits below). */
  store?: TaskStore
  /** Retention of a task from its creation when the client asks for none (default 15 minutes). */
  defaultTtlMs?: number
  /** The longest retention a client may ask for (default 1 hour); a task's work stops when it ends. */
  maxTtlMs?: number
  /** The poll interval tasks suggest (default 1 s). */
  pollIntervalMs?: number
  /** Tasks the default memory store holds at once, in all (default 10,000). */
  maxTasks?: number
  /** Tasks the default memory store holds at once per owner (default 1,000). */
  maxTasksPerOwner?: number
  /** Tasks the default memory store holds at once per client address, for anonymous callers (default 1,000). */
  maxTasksPerAddress?: number
  /** Tasks running at once in this process (default 1,000): each is a handler at work. */
  maxRunningTasks?: number
  /** Tasks running at once in this process for one owner (default 100). */
  maxRunningTasksPerOwner?: number
  /** Tasks running at once in this process for one client address, for anonymous callers (default 100). */
  maxRunningTasksPerAddress?: number
  /**
   * Who owns a task the request creates: only that owner may read, wait for or cancel it, and
   * `tasks/list` shows the owner's tasks. Return undefined to fall back to the default: an
   * authenticated caller's principal (from any connection); else the legacy session (its tasks
   * end with it); else, for an anonymous caller without a session (stateless HTTP, the modern
   * era), the task itself: its id, 128 random bits, is the capability, and nothing is listed.
   * Give your own (an API key's id) to let one user reach a task from any connection.
   */
  owner?: (ctx: ServerContext) => string | undefined
  /** Declare tasks even when no tool supports them (`tasks/list` then answers an empty list). */
  enabled?: boolean
  /**
   * The clock and timers of tasks (TTL, the `tasks/result` poll) and of the default store; default
   * the server's `scheduler`. When it is not the server's scheduler, the task actors run in an actor
   * system of their own on it, so `server.system.inspect` does not show them.
   */
  scheduler?: SchedulerLike
}

/** DEFAULTS of {@link ServerOptions}. */
export const SERVER_DEFAULTS = { pageSize: 100, defaultLogLevel: 'debug' as LoggingLevel, timeout: 60_000, maxSubscriptions: 1000, maxBatchSize: 1000, requestStateTtlMs: 10 * 60_000, jsonSchemaValidator: 'auto' } as const
