/**
 * A {@link RateLimiterStore} on Redis: every instance of a scale-out spends the same token buckets,
 * so a budget (`rateLimit`, `failedAuthLimit`) is one budget across instances, not one per process.
 * Each bucket is one hash (tokens, when counted) updated by one Lua script, atomically, and expiring
 * once it would be full again (a full bucket and no bucket are the same), so Redis keeps only the
 * buckets of clients seen lately.
 */
import { TokenBuckets, assertTokenBucketOptions, type RateLimiter, type RateLimiterStore, type TokenBucketOptions } from '../lib/token-bucket.ts'

/**
 * The one command the limiter sends (RedisLike's `eval`, node-redis v5), declared here so that this
 * file does not import redis.ts, which imports it.
 */
export interface RedisEvalLike {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
}

/** Options of {@link redisRateLimiterStore}. */
export interface RedisRateLimiterOptions {
  /** Key prefix (default `rxmcp:`); a bucket is `<prefix>rate:<budget name>:<client key>`. */
  prefix?: string
  /**
   * Told of a Redis error (default: ignored). While Redis cannot be reached, each instance answers
   * from a bucket of its own memory of the same size, so budgets still hold, per instance.
   */
  onError?: (error: unknown) => void
}

/**
 * Takes ARGV[4] tokens of the bucket KEYS[1] (capacity ARGV[1], ARGV[2] tokens per ms), at time
 * ARGV[3] (ms): returns 0 when taken, else the ms until they would be there (nothing is taken).
 * Time comes from the caller, so the listener's clock rules (a scheduler in tests); a clock behind
 * the bucket's last count refills nothing rather than going back, so instances with skewed clocks
 * cannot mint tokens. The key expires once the bucket would be full again (ARGV[5] ms).
 */
const TAKE = `
local capacity = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 't', 'a')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = capacity
  at = now
elseif now > at then
  tokens = math.min(capacity, tokens + (now - at) * per_ms)
  at = now
end
local wait = 0
if tokens >= cost then
  tokens = tokens - cost
else
  wait = math.max(1, math.ceil((cost - tokens) / per_ms))
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'a', tostring(at))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return wait`

/**
 * Token buckets kept in Redis, shared by every listener given the same store (and prefix).
 * `redisScaleOut(url).http` includes one as `rateLimiterStore`. Each `take` is one round trip
 * (EVAL of a short script); without this store a listener's budgets cost no I/O at all.
 * @example
 * const redis = await connectRedis(process.env.REDIS_URL!)
 * streamableHttp({ rateLimit: { capacity: 100, refillPerSecond: 10 }, rateLimiterStore: redisRateLimiterStore(redis) })
 */
export function redisRateLimiterStore(redis: RedisEvalLike, options: RedisRateLimiterOptions = {}): RateLimiterStore {
  const prefix = options.prefix ?? 'rxmcp:'
  const onError = options.onError ?? (() => {})
  return { limiter: (name, bucket) => new RedisRateLimiter(redis, `${prefix}rate:${name}:`, bucket, onError) }
}

/** One budget in Redis, with a bucket of this process's memory to fall back on while Redis is down. */
class RedisRateLimiter implements RateLimiter {
  readonly #redis: RedisEvalLike
  readonly #keyPrefix: string
  readonly #now: () => number
  readonly #onError: (error: unknown) => void
  /** The script's fixed arguments: capacity, tokens per ms; and the key's lifetime in ms. */
  readonly #capacity: string
  readonly #perMs: string
  readonly #ttlMs: string
  /** Answers while Redis cannot: the same budget, per instance. */
  readonly #fallback: TokenBuckets

  constructor(redis: RedisEvalLike, keyPrefix: string, bucket: TokenBucketOptions, onError: (error: unknown) => void) {
    assertTokenBucketOptions(bucket)
    this.#redis = redis
    this.#keyPrefix = keyPrefix
    this.#now = bucket.now ?? Date.now
    this.#onError = onError
    const perMs = bucket.refillPerSecond / 1000
    this.#capacity = String(bucket.capacity)
    this.#perMs = String(perMs)
    // An empty bucket is full again after capacity / perMs; a second more covers clock skew.
    this.#ttlMs = String(Math.ceil(bucket.capacity / perMs) + 1000)
    this.#fallback = new TokenBuckets(bucket)
  }

  async take(key: string, cost = 1): Promise<number> {
    try {
      const wait = await this.#redis.eval(TAKE, {
        keys: [this.#keyPrefix + key],
        arguments: [this.#capacity, this.#perMs, String(this.#now()), String(cost), this.#ttlMs],
      })
      const ms = Number(wait)
      if (Number.isFinite(ms) && ms >= 0) return ms
      throw new TypeError(`The rate limit script answered ${String(wait)}`)
    } catch (error) {
      this.#onError(error)
      return this.#fallback.take(key, cost)
    }
  }
}
