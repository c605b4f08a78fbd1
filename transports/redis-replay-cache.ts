/**
 * A {@link ReplayCache} on Redis: every instance sharing the Redis sees every id, so a DPoP proof
 * used on one instance is refused on all the others. Each id is one key, written with
 * `SET key 1 NX PX <ms>`: the first writer wins (`fresh`), any later one finds it (`replayed`),
 * and Redis drops it when its credential could no longer be accepted anyway.
 *
 * Redis must not evict these keys early: run it with `maxmemory-policy noeviction` (Redis's
 * default). A `volatile-*` or `allkeys-*` policy would drop unexpired ids under memory pressure
 * and let their proofs replay; with `noeviction` a full Redis answers OOM, and the proof is refused
 * (`full`, 503) instead.
 */
import type { ReplayCache, ReplayVerdict } from '../lib/replay-cache.ts'
import type { RedisLike } from './redis.ts'

/** Options of {@link redisReplayCache}. */
export interface RedisReplayCacheOptions {
  /** Key prefix (default `rxmcp:`); the ids live under `<prefix>replay:`. */
  prefix?: string
  /** The clock, in ms since the epoch (default Date.now): an id's `untilMs` less this is its key's PX. */
  now?: () => number
}

/** Defaults of {@link RedisReplayCacheOptions}. */
export const REDIS_REPLAY_CACHE_DEFAULTS = { prefix: 'rxmcp:', fullRetryAfterMs: 5_000 } as const

const FRESH: ReplayVerdict = { type: 'fresh' }
const REPLAYED: ReplayVerdict = { type: 'replayed' }

/**
 * @example
 * const redis = await connectRedis(process.env.REDIS_URL!)
 * bearerAuth({ ..., dpop: { replayCache: redisReplayCache(redis) } })
 */
export function redisReplayCache(redis: Pick<RedisLike, 'set'>, options: RedisReplayCacheOptions = {}): ReplayCache {
  const prefix = `${options.prefix ?? REDIS_REPLAY_CACHE_DEFAULTS.prefix}replay:`
  const now = options.now ?? Date.now
  return {
    async remember(id: string, untilMs: number): Promise<ReplayVerdict> {
      const ttlMs = Math.ceil(untilMs - now())
      // Past its time the credential is refused anyway: nothing to remember.
      if (ttlMs <= 0) return FRESH
      try {
        return await redis.set(`${prefix}${id}`, '1', { NX: true, PX: ttlMs }) === null ? REPLAYED : FRESH
      } catch (error) {
        // A Redis at its maxmemory under noeviction refuses writes: the cache is full.
        if (/^OOM\b/.test(error instanceof Error ? error.message : String(error))) return { type: 'full', retryAfterMs: REDIS_REPLAY_CACHE_DEFAULTS.fullRetryAfterMs }
        throw error
      }
    },
  }
}
