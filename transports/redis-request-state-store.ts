/**
 * A {@link RequestStateStore} on Redis: every instance sharing the Redis sees every used MRTR
 * `requestState`, so a state used on one instance is refused on all the others (MCP 2026-07-28
 * MRTR: a state that must be consumed at most once is enforced server-side). Each used state is
 * one key, written with `SET <prefix>request-state:<id> 1 NX PXAT <expiry>`: the first writer wins
 * (the retry goes on), any later one finds it (the retry is refused as used), and Redis drops it
 * once its state could no longer be accepted anyway.
 *
 * It never lets a retry through when it cannot tell: a Redis at its `maxmemory` (policy
 * `noeviction`) refuses the write, and the retry is refused with -31029 and `retryAfterMs`; a Redis
 * that cannot be reached (down, or a client without an offline queue while it reconnects) makes
 * `claim` reject, and the retry is refused with -32603. Redis must not evict these keys early: run
 * it with `maxmemory-policy noeviction` (Redis's default), since a `volatile-*` or `allkeys-*`
 * policy would drop used ids under memory pressure and let their states be used again.
 */
import type { RequestStateStore } from '../lib/request-state-store.ts'
import { ErrorCode, McpError, RateLimitedError } from '../lib/jsonrpc/errors.ts'

/**
 * The command the store sends (node-redis v5's `set`, a subset): declared here rather than taken
 * from redis.ts, which imports this file (no import cycle). Every `connectRedis` client has it.
 */
export interface RedisSetNxLike {
  set(key: string, value: string, options: { NX: true; PXAT: number }): Promise<string | null>
}

/** Options of {@link redisRequestStateStore}. */
export interface RedisRequestStateStoreOptions {
  /** Key prefix (default `rxmcp:`); used states live under `<prefix>request-state:`. */
  prefix?: string
  /**
   * How far an instance's clock may run behind Redis's, in ms (default 60,000). A state's expiry
   * is written by the clock of the instance that sealed it and checked by the clock of the one
   * that opens it, while Redis drops the key by its own: each record is kept this much past its
   * state's expiry, so an instance whose clock is behind cannot accept a state whose record Redis
   * already dropped.
   */
  clockSkewMs?: number
}

/** DEFAULTS of {@link RedisRequestStateStoreOptions}, and the `retryAfterMs` of a retry refused while Redis is full. */
export const REDIS_REQUEST_STATE_STORE_DEFAULTS = { prefix: 'rxmcp:', clockSkewMs: 60_000, fullRetryAfterMs: 5_000 } as const

/**
 * Makes the Redis {@link RequestStateStore}. `redisScaleOut(url).server` gives one as
 * `requestStateStore`; wire it yourself when you build the server's options by hand.
 * @example
 * const redis = await connectRedis(process.env.REDIS_URL!)
 * createServer(info, { requestStateKey: await sharedRequestStateKey(redis), requestStateStore: redisRequestStateStore(redis) })
 */
export function redisRequestStateStore(redis: RedisSetNxLike, options: RedisRequestStateStoreOptions = {}): RequestStateStore {
  const prefix = options.prefix ?? REDIS_REQUEST_STATE_STORE_DEFAULTS.prefix
  const skew = options.clockSkewMs ?? REDIS_REQUEST_STATE_STORE_DEFAULTS.clockSkewMs
  if (!(skew >= 0)) throw new RangeError(`redisRequestStateStore: clockSkewMs must be 0 or more, not ${skew}`)
  return {
    async claim(id: string, expiresAt: number): Promise<boolean> {
      let answer: string | null
      try {
        answer = await redis.set(`${prefix}request-state:${id}`, '1', { NX: true, PXAT: Math.ceil(expiresAt + skew) })
      } catch (error) {
        // A Redis at its maxmemory under noeviction refuses writes: the store is full, as the
        // memory store is at maxEntries. Anything else: it cannot tell, so the retry is refused.
        if (/\bOOM\b/.test(error instanceof Error ? error.message : String(error))) {
          throw new RateLimitedError('Too many requests: the server cannot remember more used requestStates now; retry later', { retryAfterMs: REDIS_REQUEST_STATE_STORE_DEFAULTS.fullRetryAfterMs })
        }
        throw new McpError(ErrorCode.InternalError, 'Internal error: the record of used requestStates cannot be reached; retry later', undefined, { cause: error })
      }
      return answer !== null
    },
  }
}
