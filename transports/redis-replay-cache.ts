/**
 * A {@link ReplayCache} on Redis: every instance sharing the Redis sees every id, so a DPoP proof
 * used on one instance is refused on all the others. Each id is one key, written with
 * `SET key 1 NX PX <ms>`: the first writer wins (`fresh`), any later one finds it (`replayed`),
 * and Redis drops it when its credential could no longer be accepted anyway.
 *
 * An id that names its quota key (a DPoP key's thumbprint) is also counted in that key's sorted set
 * (`<prefix>replay-quota:{<key>}`, members the ids, scores their expiry), all in one Lua script, so
 * the check and the write are atomic across instances: a key holding `maxEntriesPerKey` unexpired
 * ids has its next one refused (`over-quota`), and no client can fill Redis for the others. Such an
 * id is `<prefix>replay:{<key>}:<id>`: on Redis Cluster both keys share the quota key's slot.
 *
 * Redis must not evict these keys early: run it with `maxmemory-policy noeviction` (Redis's
 * default). A `volatile-*` or `allkeys-*` policy would drop unexpired ids under memory pressure
 * and let their proofs replay; with `noeviction` a full Redis answers OOM, and the proof is refused
 * (`full`, 503) instead.
 */
import type { ReplayCache, ReplayVerdict } from '../lib/replay-cache.ts'
import { hashTag, type RedisLike } from './redis-like.ts'

/** Options of {@link redisReplayCache}. */
export interface RedisReplayCacheOptions {
  /** Key prefix (default `rxmcp:`); the ids live under `<prefix>replay:`, the quotas under `<prefix>replay-quota:`. */
  prefix?: string
  /**
   * Most unexpired ids of one quota key (one DPoP key), over every instance; past it that key's
   * new id is refused as `over-quota` (default 1,000).
   */
  maxEntriesPerKey?: number
  /** The clock, in ms since the epoch (default Date.now): an id's `untilMs` less this is its key's PX. */
  now?: () => number
}

/** Defaults of {@link RedisReplayCacheOptions}. */
export const REDIS_REPLAY_CACHE_DEFAULTS = { prefix: 'rxmcp:', maxEntriesPerKey: 1_000, fullRetryAfterMs: 5_000 } as const

const FRESH: ReplayVerdict = { type: 'fresh' }
const REPLAYED: ReplayVerdict = { type: 'replayed' }

/**
 * Remembers the id KEYS[1] for ARGV[1] ms unless it is known (-1: replayed) or its quota's sorted
 * set KEYS[2] holds ARGV[4] unexpired ids (the ms until its soonest expires: over quota); 0 when
 * remembered. Scores are expiry times on the caller's clock (ARGV[2] now, ARGV[3] this id's);
 * expired members are dropped, and the set expires with its longest-lived id. The SET is the
 * script's first write: Redis refuses a script's first write that needs memory under `noeviction`
 * at maxmemory (OOM), so a full Redis refuses the id instead of growing past its limit.
 */
const REMEMBER = `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local now = tonumber(ARGV[2])
local live = '(' .. ARGV[2]
if redis.call('ZCOUNT', KEYS[2], live, '+inf') >= tonumber(ARGV[4]) then
  local soonest = redis.call('ZRANGEBYSCORE', KEYS[2], live, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return math.max(1, math.ceil(tonumber(soonest[2]) - now))
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[5])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
return 0`

/**
 * @example
 * const redis = await connectRedis(process.env.REDIS_URL!)
 * bearerAuth({ ..., dpop: { replayCache: redisReplayCache(redis) } })
 */
export function redisReplayCache(redis: Pick<RedisLike, 'set' | 'eval'>, options: RedisReplayCacheOptions = {}): ReplayCache {
  const prefix = options.prefix ?? REDIS_REPLAY_CACHE_DEFAULTS.prefix
  const now = options.now ?? Date.now
  const maxEntriesPerKey = options.maxEntriesPerKey ?? REDIS_REPLAY_CACHE_DEFAULTS.maxEntriesPerKey
  if (!(maxEntriesPerKey >= 1)) throw new RangeError(`redisReplayCache: maxEntriesPerKey must be at least 1, not ${maxEntriesPerKey}`)
  return {
    async remember(id: string, untilMs: number, quotaKey?: string): Promise<ReplayVerdict> {
      const at = now()
      const ttlMs = Math.ceil(untilMs - at)
      // Past its time the credential is refused anyway: nothing to remember.
      if (ttlMs <= 0) return FRESH
      try {
        if (quotaKey === undefined) return await redis.set(`${prefix}replay:${id}`, '1', { NX: true, PX: ttlMs }) === null ? REPLAYED : FRESH
        const answer = Number(await redis.eval(REMEMBER, {
          // Redis Cluster: both keys on the quota key's slot (its hash tag). An id is then one per
          // quota key, as DPoP's are (the id hashes the key's thumbprint with the jti).
          keys: [`${prefix}replay:${hashTag(quotaKey)}:${id}`, `${prefix}replay-quota:${hashTag(quotaKey)}`],
          arguments: [String(ttlMs), String(at), String(Math.ceil(untilMs)), String(maxEntriesPerKey), id],
        }))
        if (answer === 0) return FRESH
        if (answer === -1) return REPLAYED
        if (answer > 0) return { type: 'over-quota', retryAfterMs: answer }
        throw new TypeError(`The replay cache script answered ${String(answer)}`)
      } catch (error) {
        // A Redis at its maxmemory under noeviction refuses writes: the cache is full.
        if (/\bOOM\b/.test(error instanceof Error ? error.message : String(error))) return { type: 'full', retryAfterMs: REDIS_REPLAY_CACHE_DEFAULTS.fullRetryAfterMs }
        throw error
      }
    },
  }
}
