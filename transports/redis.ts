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
import { BehaviorSubject, distinctUntilChanged, type Observable, type Subscription } from '../lib/rx.ts'
import { every } from './timers.ts'
import type { EventBus } from '../lib/events.ts'
import type { TaskStore } from '../lib/tasks/store.ts'
import type { EventStore } from './event-store.ts'
import type { RateLimiterStore } from '../lib/token-bucket.ts'
import { redisRateLimiterStore } from './redis-rate-limiter.ts'
import type { SessionCluster } from './http-cluster.ts'
import { redisSessionCluster, type RedisClusterLike } from './redis-cluster.ts'
import { redisEventBus, type RedisPubSubLike } from './redis-event-bus.ts'
import { redisEventStore, type RedisEventStoreOptions } from './redis-event-store.ts'
import { redisTaskStore, type RedisTaskStoreOptions } from './redis-task-store.ts'
import { redisReplayCache } from './redis-replay-cache.ts'
import type { ReplayCache } from '../lib/replay-cache.ts'
import { redisRequestStateStore } from './redis-request-state-store.ts'
import type { RequestStateStore } from '../lib/request-state-store.ts'

export type { RedisLike } from './redis-like.ts'

/** Whether the connection to Redis is usable now: what an instance reports as its Redis health. */
export type RedisHealth = 'up' | 'down'

/**
 * Where Redis is, for {@link connectRedis}: one server's URL; a Redis Cluster's nodes (URLs of
 * some of its primaries or replicas: the client learns the rest, and the slots, from them); or the
 * Sentinels watching a primary, with the name they know it by (`sentinel monitor <name> ...`).
 */
export type RedisTarget = string | { cluster: readonly string[] } | { sentinel: readonly string[]; name: string }

/**
 * A connected client, with its health as an Observable (replays the current value), `close`, and
 * what it is connected to (`topology`). On a cluster, `pubsub` is `'sharded'`: the event bus and
 * the instances' channels use SPUBLISH / SSUBSCRIBE.
 */
export type RedisConnection = RedisLike & RedisPubSubLike & {
  readonly health: Observable<RedisHealth>
  readonly topology: 'single' | 'cluster' | 'sentinel'
  readonly pubsub: 'sharded' | 'classic'
  close(): Promise<unknown>
}

/** What connectRedis uses of node-redis's clients: the commands (RedisLike), events, connect, close. */
type NodeRedisClient = RedisLike & RedisPubSubLike & { connect(): Promise<unknown>; on(event: string, listener: (value?: unknown) => void): void; close(): Promise<unknown> }

/** What connectRedis uses of the redis package. */
interface NodeRedisModule {
  createClient(options: { url: string; disableOfflineQueue: boolean }): unknown
  createCluster(options: { rootNodes: { url: string }[]; defaults: { disableOfflineQueue: boolean } }): unknown
  createSentinel(options: { name: string; sentinelRootNodes: { host: string; port: number }[]; nodeClientOptions: { disableOfflineQueue: boolean } }): unknown
}

/**
 * Connects to Redis with node-redis (`npm install redis`): one server (`redis://...`), a Redis
 * Cluster (`{ cluster: [url, ...] }`) or a Sentinel-managed primary (`{ sentinel: [url, ...],
 * name }`). Errors of the connection are handed to `onError` (default: ignored while node-redis
 * reconnects on its own). While the connection is down, commands fail at once instead of waiting
 * in a queue: a server keeps answering (an SSE event it cannot store goes out without an id, so it
 * cannot be resumed; a task it cannot create is refused) and is back to full service when the
 * connection is. `health` says which: `up` once connected (again), `down` while it is not; report
 * it from your health endpoint. On a cluster it is `down` while a node it uses reconnects; through
 * Sentinel, from an error of the primary's connection until the Sentinels name a primary again.
 * @example
 * await connectRedis('redis://127.0.0.1:6379')
 * await connectRedis({ cluster: ['redis://10.0.0.1:6379', 'redis://10.0.0.2:6379'] })
 * await connectRedis({ sentinel: ['redis://10.0.0.1:26379'], name: 'mymaster' })
 */
export async function connectRedis(target: RedisTarget, onError: (error: unknown) => void = () => {}): Promise<RedisConnection> {
  const specifier = 'redis'
  let module: NodeRedisModule
  try {
    module = await import(/* @vite-ignore */ specifier) as NodeRedisModule
  } catch (error) {
    throw new Error('The Redis mode needs the redis package: npm install redis', { cause: error })
  }
  const topology: RedisConnection['topology'] = typeof target === 'string' ? 'single' : 'cluster' in target ? 'cluster' : 'sentinel'
  const client = (typeof target === 'string'
    ? module.createClient({ url: target, disableOfflineQueue: true })
    : 'cluster' in target
      ? module.createCluster({ rootNodes: target.cluster.map(url => ({ url })), defaults: { disableOfflineQueue: true } })
      : module.createSentinel({ name: target.name, sentinelRootNodes: target.sentinel.map(hostAndPort), nodeClientOptions: { disableOfflineQueue: true } })) as NodeRedisClient
  const health = new BehaviorSubject<RedisHealth>('down')
  const down = () => { if (health.value !== 'down') health.next('down') }
  const up = () => { if (!health.closed) health.next('up') }
  client.on('error', error => { down(); onError(error) })
  if (topology === 'single') {
    // node-redis says `ready` when a (re)connection can take commands, `end` when closed for good.
    client.on('ready', up)
    client.on('reconnecting', down)
    client.on('end', () => { down(); health.complete() })
  } else if (topology === 'cluster') {
    // Per node: one in error or reconnecting is a part of the slots out of reach. node-redis says
    // a node is ready only the first time, so while down the primaries' connections are looked at
    // (every 250 ms) until each is ready again: reconnected, or replaced by its promoted replica.
    // node-redis (5.x) asks the cluster for its slots again only when a node answers MOVED or
    // ASK, which a dead primary never does: its slots would stay on the dead node for good. So
    // while a primary is out of reach, the slots are asked for (CLUSTER SLOTS through a node that
    // answers, else the nodes given) on each look, until the cluster names a promoted replica.
    type Node = { client?: { isReady?: boolean } }
    const cluster = client as NodeRedisClient & { masters?: Node[]; _slots?: { rediscover(startWith: unknown): Promise<void> } }
    const isReady = (node: Node) => node.client === undefined || node.client.isReady === true
    let probing: Subscription | undefined
    const watch = () => {
      down()
      probing ??= every(250, undefined, () => {
        const primaries = cluster.masters ?? []
        if (!primaries.every(isReady)) {
          const startWith = (primaries.find(node => node.client?.isReady === true) ?? primaries[0])?.client
          if (startWith !== undefined) cluster._slots?.rediscover(startWith).catch(() => {})
          return
        }
        probing?.unsubscribe()
        probing = undefined
        resubscribe()
        up()
      })
    }
    // node-redis (5.x) drops the sharded subscriptions of a primary its new slots no longer name
    // (it closes that node's pub/sub connection and subscribes again only the classic channels):
    // each is kept here and sent again once the slots are whole. SSUBSCRIBE is idempotent, and a
    // listener is kept once per channel, so the channels still served are not doubled.
    type Listener = (message: string) => void
    const subscribed = new Map<string, Set<Listener>>()
    const sSubscribe = cluster.sSubscribe!.bind(cluster)
    const sUnsubscribe = cluster.sUnsubscribe!.bind(cluster)
    const resubscribe = () => {
      for (const [channel, listeners] of subscribed) for (const listener of listeners) sSubscribe(channel, listener).catch(onError)
    }
    Object.assign(cluster, {
      sSubscribe: (channel: string, listener: Listener) => {
        let listeners = subscribed.get(channel)
        if (listeners === undefined) subscribed.set(channel, listeners = new Set())
        listeners.add(listener)
        return sSubscribe(channel, listener)
      },
      sUnsubscribe: (channel: string, listener?: Listener) => {
        if (listener === undefined) subscribed.delete(channel)
        else subscribed.get(channel)?.delete(listener)
        if (subscribed.get(channel)?.size === 0) subscribed.delete(channel)
        return sUnsubscribe(channel, listener)
      },
    })
    client.on('error', watch)
    client.on('node-error', error => { watch(); onError(error) })
    client.on('node-reconnecting', watch)
    client.on('disconnect', () => { probing?.unsubscribe(); down(); health.complete() })
  } else {
    // Sentinel: its `error`s are the primary's connection failing; a new primary named is service again.
    client.on('topology-change', event => { if ((event as { type?: string } | undefined)?.type === 'MASTER_CHANGE') up() })
  }
  await client.connect()
  if (topology !== 'single') up()
  const close = client.close.bind(client)
  return Object.assign(client, {
    health: health.pipe(distinctUntilChanged()),
    topology,
    pubsub: topology === 'cluster' ? 'sharded' as const : 'classic' as const,
    // The cluster and Sentinel clients say nothing when closed by us: the health ends here.
    close: async () => { try { return await close() } finally { if (!health.closed) { down(); health.complete() } } },
  })
}

/** `redis://host:port` (or `host:port`) as node-redis's Sentinel node. */
function hostAndPort(url: string): { host: string; port: number } {
  const parsed = new URL(url.includes('://') ? url : `redis://${url}`)
  return { host: parsed.hostname, port: parsed.port === '' ? 26379 : Number(parsed.port) }
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
  /** Bounds of the event store (events per stream, ttl) and its `shards` (default: 1, on a cluster 8 with the default bounds). */
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
 * const scale = await redisScaleOut(process.env.REDIS_URL!)   // or { cluster: [...] }, { sentinel: [...], name }
 * const server = createServer(info, { ...scale.server })
 * await server.listen(streamableHttp({ port: 3000, ...scale.http }))
 */
export async function redisScaleOut(url: RedisTarget | RedisConnection, options: RedisScaleOutOptions = {}): Promise<RedisScaleOut> {
  const isOurs = typeof url !== 'string' && 'health' in url
  const redis = isOurs ? url : await connectRedis(url, options.onError)
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
    close: async () => { if (!isOurs) await redis.close().catch(() => {}) },
  }
}
