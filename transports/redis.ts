/**
 * The Redis client rxmcp's stores use, and how to get one. rxmcp speaks to Redis through this small
 * structural interface; `connectRedis(url)` makes one with node-redis (the `redis` package, an
 * optional peer), imported only when called, so nothing loads it unless the Redis mode is used.
 *
 * node-redis was chosen over ioredis: it is the client Redis maintains, promise-first with typed
 * commands, speaks RESP3, and has cluster and sentinel clients with the same command API.
 */

import type { RedisLike } from './redis-like.ts'
import { base64url } from '../lib/base64url.ts'
import { BehaviorSubject, distinctUntilChanged, type Observable } from '../lib/rx.ts'
import type { EventBus } from '../lib/events.ts'
import type { TaskStore } from '../lib/tasks/store.ts'
import type { EventStore } from './event-store.ts'
import type { RateLimiterStore } from '../lib/token-bucket.ts'
import { redisRateLimiterStore } from './redis-rate-limiter.ts'
import type { SessionCluster } from './http-cluster.ts'
import { redisSessionCluster, type RedisClusterLike } from './redis-cluster.ts'
import { redisEventBus } from './redis-event-bus.ts'
import { redisEventStore, type RedisEventStoreOptions } from './redis-event-store.ts'
import { redisTaskStore, type RedisTaskStoreOptions } from './redis-task-store.ts'
import { redisReplayCache } from './redis-replay-cache.ts'
import type { ReplayCache } from '../lib/replay-cache.ts'
import { redisRequestStateStore } from './redis-request-state-store.ts'
import type { RequestStateStore } from '../lib/request-state-store.ts'

export type { RedisLike } from './redis-like.ts'

/** Whether the connection to Redis is usable now: what an instance reports as its Redis health. */
export type RedisHealth = 'up' | 'down'

/** A connected client, with its health as an Observable (replays the current value) and `close`. */
export type RedisConnection = RedisLike & { readonly health: Observable<RedisHealth>; close(): Promise<unknown> }

/**
 * Connects to Redis at `url` with node-redis (`npm install redis`); errors of the connection are
 * handed to `onError` (default: ignored while node-redis reconnects on its own). While the
 * connection is down, commands fail at once instead of waiting in a queue: a server keeps answering
 * (an SSE event it cannot store goes out without an id, so it cannot be resumed; a task it cannot
 * create is refused) and is back to full service when the connection is. `health` says which:
 * `up` once connected (again), `down` while it is not; report it from your health endpoint.
 */
export async function connectRedis(url: string, onError: (error: unknown) => void = () => {}): Promise<RedisConnection> {
  const specifier = 'redis'
  let module: { createClient(options: { url: string; disableOfflineQueue: boolean }): unknown }
  try {
    module = await import(/* @vite-ignore */ specifier) as typeof module
  } catch (error) {
    throw new Error('The Redis mode needs the redis package: npm install redis', { cause: error })
  }
  const client = module.createClient({ url, disableOfflineQueue: true }) as unknown as RedisLike & { connect(): Promise<unknown>; on(event: string, listener: (error?: unknown) => void): void; close(): Promise<unknown> }
  const health = new BehaviorSubject<RedisHealth>('down')
  client.on('error', error => { if (health.value !== 'down') health.next('down'); onError(error) })
  // node-redis says `ready` when a (re)connection can take commands, `end` when closed for good.
  client.on('ready', () => health.next('up'))
  client.on('reconnecting', () => { if (health.value !== 'down') health.next('down') })
  client.on('end', () => { if (health.value !== 'down') health.next('down'); health.complete() })
  await client.connect()
  return Object.assign(client, { health: health.pipe(distinctUntilChanged()) })
}

export { redisEventStore, REDIS_EVENT_STORE_DEFAULTS } from './redis-event-store.ts'
export { redisSessionCluster } from './redis-cluster.ts'
export type { RedisSessionClusterOptions, RedisClusterLike } from './redis-cluster.ts'
export type { SessionCluster, SessionRecord } from './http-cluster.ts'
export type { RedisEventStoreOptions, RedisEventStore, RedisEventStoreStats } from './redis-event-store.ts'
export { redisTaskStore, REDIS_TASK_STORE_DEFAULTS } from './redis-task-store.ts'
export type { RedisTaskStoreOptions } from './redis-task-store.ts'
export { redisEventBus } from './redis-event-bus.ts'
export { redisRateLimiterStore } from './redis-rate-limiter.ts'
export type { RedisRateLimiterOptions, RedisEvalLike } from './redis-rate-limiter.ts'
export type { RateLimiter, RateLimiterStore, TokenBucketOptions } from '../lib/token-bucket.ts'
export type { RedisEventBusOptions, RedisPubSubLike } from './redis-event-bus.ts'
export { redisReplayCache, REDIS_REPLAY_CACHE_DEFAULTS } from './redis-replay-cache.ts'
export type { RedisReplayCacheOptions } from './redis-replay-cache.ts'
export type { ReplayCache, ReplayVerdict } from '../lib/replay-cache.ts'
export { redisRequestStateStore, REDIS_REQUEST_STATE_STORE_DEFAULTS } from './redis-request-state-store.ts'
export type { RedisRequestStateStoreOptions, RedisSetNxLike } from './redis-request-state-store.ts'
export type { RequestStateStore } from '../lib/request-state-store.ts'

/**
 * The HMAC key of MRTR `requestState` (ServerOptions.requestStateKey) shared by every instance
 * through Redis: the first instance to ask creates 32 random bytes (`SET NX`), the others read the
 * same, so an input round started on one instance completes on another. Whoever can read Redis can
 * read the key: keep Redis as private as the servers.
 * @example
 * createServer(info, { requestStateKey: await sharedRequestStateKey(redis) })
 */
export async function sharedRequestStateKey(redis: Pick<RedisLike, 'get' | 'set'>, key = 'rxmcp:request-state-key'): Promise<string> {
  const existing = await redis.get(key)
  if (existing !== null) return existing
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  await redis.set(key, base64url(bytes), { NX: true })
  const chosen = await redis.get(key)
  if (chosen === null) throw new Error(`Redis lost ${key} as soon as it was set`)
  return chosen
}

/** Options of {@link redisScaleOut}. */
export interface RedisScaleOutOptions {
  /** Prefix of every key and channel (default `rxmcp:`): one per server sharing a Redis. */
  prefix?: string | undefined
  /** Bounds of the event store (events per stream, ttl). */
  events?: Omit<RedisEventStoreOptions, 'prefix'>
  /** Bounds of the task store. */
  tasks?: Omit<RedisTaskStoreOptions, 'prefix' | 'instance'>
  /** Told of Redis errors (default: ignored; the connection reconnects by itself). */
  onError?: (error: unknown) => void
}

/** Everything an instance needs to share its server with the others: spread `server` and `http`. */
export interface RedisScaleOut {
  readonly redis: RedisConnection
  /** This instance's id in the cluster. */
  readonly instanceId: string
  /**
   * For createServer: the task store, the event bus, the shared requestState key, and the store of
   * used requestStates (`redisRequestStateStore`), so a state used on one instance is refused on
   * every other.
   */
  readonly server: { tasks: { store: TaskStore }; eventBus: EventBus; requestStateKey: string; requestStateStore: RequestStateStore }
  /**
   * For streamableHttp: the event store, the session cluster, and the store of the rate limits
   * (`rateLimit`, `failedAuthLimit`), so every instance spends the same budgets.
   */
  readonly http: { eventStore: EventStore; cluster: SessionCluster; rateLimiterStore: RateLimiterStore }
  /**
   * For bearerAuth's `dpop: { replayCache }` (the authenticator is yours, so it is not wired for
   * you): DPoP proof ids shared by every instance, so a proof used on one is refused on all.
   */
  readonly dpopReplayCache: ReplayCache
  /** The Redis connection's health (`up` / `down`), to report. */
  readonly health: Observable<RedisHealth>
  /** Closes the Redis connection (after the listener and the server). */
  close(): Promise<void>
}

/**
 * The Redis scale-out in one call: connects to Redis (node-redis, loaded here) and makes the
 * stores an instance shares with the others (sessions, SSE events, tasks, server events, the
 * requestState key and the used requestStates, the rate limits' buckets). Any instance then serves
 * any request, behind a balancer without stickiness.
 * @example
 * const scale = await redisScaleOut(process.env.REDIS_URL!)
 * const server = createServer(info, { ...scale.server })
 * await server.listen(streamableHttp({ port: 3000, ...scale.http }))
 */
export async function redisScaleOut(url: string | RedisConnection, options: RedisScaleOutOptions = {}): Promise<RedisScaleOut> {
  const redis = typeof url === 'string' ? await connectRedis(url, options.onError) : url
  const prefix = options.prefix ?? 'rxmcp:'
  const onError = options.onError ?? (() => {})
  const clusterRedis = redis as unknown as RedisClusterLike
  const cluster = redisSessionCluster(clusterRedis, { prefix, onError, health: redis.health })
  const requestStateKey = await sharedRequestStateKey(redis, `${prefix}request-state-key`)
  return {
    redis,
    instanceId: cluster.instanceId,
    server: {
      // A task whose instance is gone is failed by whichever instance reads it next.
      tasks: { store: redisTaskStore(redis, { ...options.tasks, prefix, instance: { id: cluster.instanceId, isAlive: id => cluster.isAlive(id) } }) },
      eventBus: redisEventBus(clusterRedis, { channel: `${prefix}events`, onError }),
      requestStateKey,
      // A requestState continues its request once across all instances, not once on each.
      requestStateStore: redisRequestStateStore(redis, { prefix }),
    },
    http: { eventStore: redisEventStore(redis, { ...options.events, prefix }), cluster, rateLimiterStore: redisRateLimiterStore(redis, { prefix, onError }) },
    dpopReplayCache: redisReplayCache(redis, { prefix }),
    health: redis.health,
    close: async () => { if (typeof url === 'string') await redis.close().catch(() => {}) },
  }
}
