/**
 * Replay caches: the ids of one-time credentials (a DPoP proof's `jti`, RFC 9449 §11.1) seen so
 * far, each remembered for as long as the credential could still be accepted. The contract is
 * shared by the memory cache here (one process) and the Redis one (`redisReplayCache` in
 * `rxmcp/transports/redis`: every instance sharing a Redis), so a verifier takes either.
 *
 * The one rule both keep: an id is never forgotten before its time. A full cache refuses a new id
 * (`full`) instead of evicting one that could still be replayed, so the caller turns the request
 * away (503 with Retry-After) rather than let an old credential through. So that one client cannot
 * fill it for everyone, each id may name the key it counts against (a DPoP proof's key
 * thumbprint): a key holding its share of unexpired ids has its next id refused (`over-quota`,
 * 429 with Retry-After), while every other key is still served.
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
   * It was not remembered: its quota key holds its share of unexpired ids (`maxEntriesPerKey`).
   * The caller refuses this credential (its client sends more than its share); other keys pass.
   * `retryAfterMs` is when the key's oldest id expires.
   */
  | { readonly type: 'over-quota'; readonly retryAfterMs: number }

/**
 * Remembers one-time ids. `remember` records `id` until `untilMs` (ms since the epoch, the last
 * moment its credential could be accepted) and says whether it was fresh; with `quotaKey` (who
 * made the credential: a DPoP key's thumbprint) the id counts against that key's share of the
 * cache. It rejects when the cache cannot be asked (its Redis is down): the caller refuses the
 * credential then too (503).
 */
export interface ReplayCache {
  remember(id: string, untilMs: number, quotaKey?: string): Promise<ReplayVerdict>
}

/** Options of {@link memoryReplayCache}. */
export interface MemoryReplayCacheOptions {
  /** Most unexpired ids held at once; past it a new id is refused as `full` (default 100,000). */
  maxEntries?: number
  /**
   * Most unexpired ids of one quota key (one DPoP key) held at once; past it that key's new id is
   * refused as `over-quota` (default 1,000: 1% of the default `maxEntries`, so no hundred keys can fill it).
   */
  maxEntriesPerKey?: number
  /** The clock, in ms since the epoch (default Date.now). */
  now?: () => number
}

/** Defaults of {@link MemoryReplayCacheOptions}. */
export const MEMORY_REPLAY_CACHE_DEFAULTS = { maxEntries: 100_000, maxEntriesPerKey: 1_000 } as const

/**
 * A replay cache in this process's memory: bounded by `maxEntries`, each id dropped once expired,
 * none before. For several instances, use the Redis one, or a proof refused by one instance is
 * accepted by the next.
 */
export function memoryReplayCache(options: MemoryReplayCacheOptions = {}): ReplayCache {
  const maxEntries = options.maxEntries ?? MEMORY_REPLAY_CACHE_DEFAULTS.maxEntries
  if (!(maxEntries >= 1)) throw new RangeError(`memoryReplayCache: maxEntries must be at least 1, not ${maxEntries}`)
  const maxEntriesPerKey = options.maxEntriesPerKey ?? MEMORY_REPLAY_CACHE_DEFAULTS.maxEntriesPerKey
  if (!(maxEntriesPerKey >= 1)) throw new RangeError(`memoryReplayCache: maxEntriesPerKey must be at least 1, not ${maxEntriesPerKey}`)
  return new MemoryReplayCache(maxEntries, maxEntriesPerKey, options.now ?? Date.now)
}

const FRESH: ReplayVerdict = { type: 'fresh' }
const REPLAYED: ReplayVerdict = { type: 'replayed' }

/** How often, at most, a full cache is searched end to end for expired ids (ms). */
const FULL_SWEEP_INTERVAL_MS = 1000

/** One id: until when it is remembered, and the quota it counts against. */
interface Entry {
  readonly until: number
  readonly quota: Quota | undefined
}

/** The unexpired ids of one quota key. */
interface Quota {
  readonly key: string
  /** id -> until. */
  readonly ids: Map<string, number>
  /** When its ids were last searched end to end for expired ones (at most once per FULL_SWEEP_INTERVAL_MS). */
  lastSweep: number
  /** The soonest expiry among its ids, as of that search. */
  soonest: number
}

class MemoryReplayCache implements ReplayCache {
  /** id -> its entry, in the order remembered; untils are near that order but not in it (each comes with its credential). */
  readonly #entries = new Map<string, Entry>()
  /** The quota keys holding ids now (a key is forgotten with its last id). */
  readonly #quotas = new Map<string, Quota>()
  /** No entry expires before this (a lower bound): a full search before it would find nothing. */
  #soonest = Infinity
  /** When the last full search ran: at most one per FULL_SWEEP_INTERVAL_MS, so a full cache costs no O(n) per request. */
  #lastSweep = -Infinity

  constructor(readonly maxEntries: number, readonly maxEntriesPerKey: number, readonly now: () => number) {}

  remember(id: string, untilMs: number, quotaKey?: string): Promise<ReplayVerdict> {
    return Promise.resolve(this.#remember(id, untilMs, quotaKey))
  }

  #remember(id: string, untilMs: number, quotaKey: string | undefined): ReplayVerdict {
    const now = this.now()
    const known = this.#entries.get(id)
    if (known !== undefined) {
      if (known.until > now) return REPLAYED
      this.#forget(id, known)
    }
    // Past its time the credential is refused anyway: nothing to remember.
    if (untilMs <= now) return FRESH
    // The oldest entries usually expire first: dropping them as they do is cheap.
    for (const [key, entry] of this.#entries) {
      if (entry.until > now) break
      this.#forget(key, entry)
    }
    // The key's own share first: a client past it is refused, and only that client.
    let quota = quotaKey === undefined ? undefined : this.#quotas.get(quotaKey)
    if (quota !== undefined && quota.ids.size >= this.maxEntriesPerKey) {
      if (now - quota.lastSweep >= FULL_SWEEP_INTERVAL_MS) this.#sweepQuota(quota, now)
      // Room comes when its soonest id expires, and is seen by the next search of its ids.
      if (quota.ids.size >= this.maxEntriesPerKey) return { type: 'over-quota', retryAfterMs: Math.max(1, quota.soonest - now, quota.lastSweep + FULL_SWEEP_INTERVAL_MS - now) }
    }
    if (this.#entries.size >= this.maxEntries && now >= this.#soonest && now - this.#lastSweep >= FULL_SWEEP_INTERVAL_MS) this.#sweep(now)
    if (this.#entries.size >= this.maxEntries) return { type: 'full', retryAfterMs: Math.max(FULL_SWEEP_INTERVAL_MS, this.#soonest - now) }
    if (quotaKey !== undefined) {
      // The sweeps may have dropped the key's last id, and the key with it.
      quota = this.#quotas.get(quotaKey)
      if (quota === undefined) {
        quota = { key: quotaKey, ids: new Map(), lastSweep: -Infinity, soonest: Infinity }
        this.#quotas.set(quotaKey, quota)
      }
      quota.ids.set(id, untilMs)
      if (untilMs < quota.soonest) quota.soonest = untilMs
    }
    this.#entries.set(id, { until: untilMs, quota })
    if (untilMs < this.#soonest) this.#soonest = untilMs
    return FRESH
  }

  /** Drops one id, from its quota too (a quota key is forgotten with its last id). */
  #forget(id: string, entry: Entry): void {
    this.#entries.delete(id)
    const quota = entry.quota
    if (quota === undefined) return
    quota.ids.delete(id)
    if (quota.ids.size === 0 && this.#quotas.get(quota.key) === quota) this.#quotas.delete(quota.key)
  }

  /** Drops every expired entry, wherever it is, and learns the soonest expiry of the rest. */
  #sweep(now: number): void {
    this.#lastSweep = now
    let soonest = Infinity
    for (const [key, entry] of this.#entries) {
      if (entry.until <= now) this.#forget(key, entry)
      else if (entry.until < soonest) soonest = entry.until
    }
    this.#soonest = soonest
  }

  /** Drops a key's expired ids (a few behind unexpired ones of other keys), and learns its soonest expiry. */
  #sweepQuota(quota: Quota, now: number): void {
    quota.lastSweep = now
    let soonest = Infinity
    for (const [id, until] of quota.ids) {
      if (until <= now) this.#forget(id, this.#entries.get(id) ?? { until, quota })
      else if (until < soonest) soonest = until
    }
    quota.soonest = soonest
  }
}
