/**
 * Token buckets by key, for rate limits: each key holds up to `capacity` tokens, refilled
 * continuously at `refillPerSecond`; a request takes one. Pure state and arithmetic on a clock the
 * caller gives, so it runs the same in the server's middleware, the HTTP listener and tests.
 *
 * The contract a listener spends its budgets through is {@link RateLimiter}, made by a
 * {@link RateLimiterStore}: in this process ({@link createMemoryRateLimiterStore}, one per listener
 * by default, which every listener it is given shares), or shared by every instance of a scale-out
 * (`redisRateLimiterStore` of `rxmcp/transports/redis`).
 */

/** Options of {@link TokenBuckets}. */
export interface TokenBucketOptions {
  /** Most requests at once (the bucket's size). */
  capacity: number
  /** Tokens added per second. */
  refillPerSecond: number
  /** Keys tracked at most; past it the least recently used is forgotten (default 10,000). */
  maxKeys?: number
  /** The clock, in ms (default Date.now). */
  now?: () => number
}

/**
 * One budget: a token bucket per key. `take` answers 0 when `cost` tokens were taken, else the ms
 * until they would be there (nothing is taken then). A limiter kept in this process answers
 * synchronously, so the caller awaits nothing on its hot path; a shared one (Redis) answers with a
 * Promise. A shared limiter that cannot reach its backend answers from a local bucket instead of
 * failing the request.
 */
export interface RateLimiter {
  take(key: string, cost?: number): number | Promise<number>
}

/**
 * Where a listener's budgets live: `limiter(name, options)` makes the budget `name` (the listener
 * uses `requests` for `rateLimit` and `auth-failures` for failed authentication), whose keys are
 * apart from every other name's. Every listener given the same shared store spends the same
 * buckets, so a budget is one budget across instances, not one per process.
 */
export interface RateLimiterStore {
  limiter(name: string, options: TokenBucketOptions): RateLimiter
}

/** One key's bucket: the tokens left and when they were counted (ms, on the limiter's clock). */
export interface TokenBucketState { tokens: number; at: number }

/** A {@link RateLimiter} kept in this process's memory (the default of every listener). */
export class TokenBuckets implements RateLimiter {
  readonly #capacity: number
  readonly #perMs: number
  readonly #maxKeys: number
  readonly #now: () => number
  /** Tokens left and when they were counted, least recently used first. */
  readonly #buckets: Map<string, TokenBucketState>

  /**
   * @param buckets where the buckets are kept (default: a map of this limiter's own). Limiters
   *   given one map spend the same buckets, each by its own capacity and refill, as limiters of
   *   one budget in Redis do ({@link createMemoryRateLimiterStore}).
   */
  constructor(options: TokenBucketOptions, buckets: Map<string, TokenBucketState> = new Map()) {
    assertTokenBucketOptions(options)
    this.#buckets = buckets
    this.#capacity = options.capacity
    this.#perMs = options.refillPerSecond / 1000
    this.#maxKeys = options.maxKeys ?? 10_000
    this.#now = options.now ?? Date.now
  }

  /** Takes `cost` tokens of `key`'s bucket: 0 when taken, else the ms until they would be there (nothing is taken). */
  take(key: string, cost = 1): number {
    const now = this.#now()
    let bucket = this.#buckets.get(key)
    if (bucket === undefined) {
      if (this.#buckets.size >= this.#maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!)
      bucket = { tokens: this.#capacity, at: now }
    } else {
      this.#buckets.delete(key)
      // A limiter whose clock is behind the bucket's last count (another listener's) refills nothing.
      bucket.tokens = Math.min(this.#capacity, bucket.tokens + Math.max(0, now - bucket.at) * this.#perMs)
      bucket.at = Math.max(bucket.at, now)
    }
    this.#buckets.set(key, bucket)
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost
      return 0
    }
    return Math.max(1, (cost - bucket.tokens) / this.#perMs)
  }

  /** Keys tracked now. */
  get size(): number { return this.#buckets.size }
}

/**
 * A {@link RateLimiterStore} in this process's memory in which every limiter is a budget of its
 * own, even of one name: listeners given it share nothing. Kept for code that names it; a
 * listener's default is {@link createMemoryRateLimiterStore}.
 */
export const memoryRateLimiterStore: RateLimiterStore = {
  limiter: (_name, options) => new TokenBuckets(options),
}

/**
 * A {@link RateLimiterStore} in this process's memory whose budgets are shared by every listener
 * given it: the limiters of one name spend the same buckets (each by its own capacity and refill,
 * as with `redisRateLimiterStore`). Each listener makes one of its own when not given a store, and
 * exposes it as `rateLimiterStore`, so a WebSocket listener attached to the HTTP one's port shares
 * its budgets with `websocket({ rateLimiterStore: http.rateLimiterStore })`.
 * @example
 * const store = createMemoryRateLimiterStore()
 * streamableHttp({ rateLimit, rateLimiterStore: store }); websocket({ rateLimit, rateLimiterStore: store })
 */
export function createMemoryRateLimiterStore(): RateLimiterStore {
  /** Each budget's buckets, by the budget's name. */
  const budgets = new Map<string, Map<string, TokenBucketState>>()
  return {
    limiter(name, options) {
      let buckets = budgets.get(name)
      if (buckets === undefined) budgets.set(name, buckets = new Map())
      return new TokenBuckets(options, buckets)
    },
  }
}

/** Throws a RangeError for a bucket that could never admit anything (bad arguments are thrown synchronously). */
export function assertTokenBucketOptions(options: TokenBucketOptions): void {
  if (!(options.capacity >= 1) || !(options.refillPerSecond > 0)) throw new RangeError('A rate limit needs capacity >= 1 and refillPerSecond > 0')
}
