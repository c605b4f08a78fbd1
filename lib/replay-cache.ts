/**
 * Replay caches: the ids of one-time credentials (a DPoP proof's `jti`, RFC 9449 §11.1) seen so
 * far, each remembered for as long as the credential could still be accepted. The contract is
 * shared by the memory cache here (one process) and the Redis one (`redisReplayCache` in
 * `rxmcp/transports/redis`: every instance sharing a Redis), so a verifier takes either.
 *
 * The one rule both keep: an id is never forgotten before its time. A full cache refuses a new id
 * (`full`) instead of evicting one that could still be replayed, so the caller turns the request
 * away (503 with Retry-After) rather than let an old credential through.
 */

/** What a replay cache says of an id. */
export type ReplayVerdict =
  /** Not seen before (or only expired): it is now remembered until its time. */
  | { readonly type: 'fresh' }
  /** Seen before and not yet expired: the credential is being replayed. */
  | { readonly type: 'replayed' }
  /**
   * It could not be remembered: the cache holds its maximum of unexpired ids. The caller must
   * refuse the credential (it cannot prove it was never seen); `retryAfterMs` is when room is expected.
   */
  | { readonly type: 'full'; readonly retryAfterMs: number }

/**
 * Remembers one-time ids. `remember` records `id` until `untilMs` (ms since the epoch, the last
 * moment its credential could be accepted) and says whether it was fresh. It rejects when the cache
 * cannot be asked (its Redis is down): the caller refuses the credential then too (503).
 */
export interface ReplayCache {
  remember(id: string, untilMs: number): Promise<ReplayVerdict>
}

/** Options of {@link memoryReplayCache}. */
export interface MemoryReplayCacheOptions {
  /** Most unexpired ids held at once; past it a new id is refused as `full` (default 100,000). */
  maxEntries?: number
  /** The clock, in ms since the epoch (default Date.now). */
  now?: () => number
}

/** Defaults of {@link MemoryReplayCacheOptions}. */
export const MEMORY_REPLAY_CACHE_DEFAULTS = { maxEntries: 100_000 } as const

/**
 * A replay cache in this process's memory: bounded by `maxEntries`, each id dropped once expired,
 * none before. For several instances, use the Redis one, or a proof refused by one instance is
 * accepted by the next.
 */
export function memoryReplayCache(options: MemoryReplayCacheOptions = {}): ReplayCache {
  const maxEntries = options.maxEntries ?? MEMORY_REPLAY_CACHE_DEFAULTS.maxEntries
  if (!(maxEntries >= 1)) throw new RangeError(`memoryReplayCache: maxEntries must be at least 1, not ${maxEntries}`)
  return new MemoryReplayCache(maxEntries, options.now ?? Date.now)
}

const FRESH: ReplayVerdict = { type: 'fresh' }
const REPLAYED: ReplayVerdict = { type: 'replayed' }

/** How often, at most, a full cache is searched end to end for expired ids (ms). */
const FULL_SWEEP_INTERVAL_MS = 1000

class MemoryReplayCache implements ReplayCache {
  /** id -> until (ms), in the order remembered; untils are near that order but not in it (each comes with its credential). */
  readonly #entries = new Map<string, number>()
  /** No entry expires before this (a lower bound): a full search before it would find nothing. */
  #soonest = Infinity
  /** When the last full search ran: at most one per FULL_SWEEP_INTERVAL_MS, so a full cache costs no O(n) per request. */
  #lastSweep = -Infinity

  constructor(readonly maxEntries: number, readonly now: () => number) {}

  remember(id: string, untilMs: number): Promise<ReplayVerdict> {
    return Promise.resolve(this.#remember(id, untilMs))
  }

  #remember(id: string, untilMs: number): ReplayVerdict {
    const now = this.now()
    const known = this.#entries.get(id)
    if (known !== undefined) {
      if (known > now) return REPLAYED
      this.#entries.delete(id)
    }
    // Past its time the credential is refused anyway: nothing to remember.
    if (untilMs <= now) return FRESH
    // The oldest entries usually expire first: dropping them as they do is cheap.
    for (const [key, until] of this.#entries) {
      if (until > now) break
      this.#entries.delete(key)
    }
    if (this.#entries.size >= this.maxEntries && now >= this.#soonest && now - this.#lastSweep >= FULL_SWEEP_INTERVAL_MS) this.#sweep(now)
    if (this.#entries.size >= this.maxEntries) return { type: 'full', retryAfterMs: Math.max(FULL_SWEEP_INTERVAL_MS, this.#soonest - now) }
    this.#entries.set(id, untilMs)
    if (untilMs < this.#soonest) this.#soonest = untilMs
    return FRESH
  }

  /** Drops every expired entry, wherever it is, and learns the soonest expiry of the rest. */
  #sweep(now: number): void {
    this.#lastSweep = now
    let soonest = Infinity
    for (const [key, until] of this.#entries) {
      if (until <= now) this.#entries.delete(key)
      else if (until < soonest) soonest = until
    }
    this.#soonest = soonest
  }
}
