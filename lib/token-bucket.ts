/**
 * Token buckets by key, for rate limits: each key holds up to `capacity` tokens, refilled
 * continuously at `refillPerSecond`; a request takes one. Pure state and arithmetic on a clock the
 * caller gives, so it runs the same in the server's middleware, the HTTP listener and tests.
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

export class TokenBuckets {
  readonly #capacity: number
  readonly #perMs: number
  readonly #maxKeys: number
  readonly #now: () => number
  /** Tokens left and when they were counted, least recently used first. */
  readonly #buckets = new Map<string, { tokens: number; at: number }>()

  constructor(options: TokenBucketOptions) {
    if (!(options.capacity >= 1) || !(options.refillPerSecond > 0)) throw new RangeError('A rate limit needs capacity >= 1 and refillPerSecond > 0')
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
