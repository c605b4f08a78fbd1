/**
 * Token buckets by key, for rate limits: each key holds up to `capacity` tokens, refilled
 * continuously at `refillPerSecond`; a request takes one. Pure state and arithmetic on a clock the
 * caller gives, so it runs the same in the server's middleware, the HTTP listener and tests.
 *
 * The contract a listener spends its budgets through is {@link RateLimiter}, made by a
 * {@link RateLimiterStore}: in this process ({@link memoryRateLimiterStore}, the default), or shared
 * by every instance of a scale-out (`redisRateLimiterStore` of `rxmcp/transports/redis`).
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

/** A {@link RateLimiter} kept in this process's memory (the default of every listener). */
export class TokenBuckets implements RateLimiter {
  readonly #capacity: number
  readonly #perMs: number
  readonly #maxKeys: number
  readonly #now: () => number
  /** Tokens left and when they were counted, least recently used first. */
  readonly #buckets = new Map<string, { tokens: number; at: number }>()

  constructor(options: TokenBucketOptions) {
    assertTokenBucketOptions(options)
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
      bucket.tokens = Math.min(this.#capacity, bucket.tokens + (now - bucket.at) * this.#perMs)
      bucket.at = now
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

/** The default {@link RateLimiterStore}: each budget is a {@link TokenBuckets} of this process. */
export const memoryRateLimiterStore: RateLimiterStore = {
  limiter: (_name, options) => new TokenBuckets(options),
}

/** Throws a RangeError for a bucket that could never admit anything (bad arguments are thrown synchronously). */
export function assertTokenBucketOptions(options: TokenBucketOptions): void {
  if (!(options.capacity >= 1) || !(options.refillPerSecond > 0)) throw new RangeError('A rate limit needs capacity >= 1 and refillPerSecond > 0')
}
