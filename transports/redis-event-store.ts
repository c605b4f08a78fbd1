/**
 * An {@link EventStore} on Redis Streams: every SSE stream is a Redis stream (`XADD`, trimmed to
 * `maxEventsPerStream`, expiring `ttlSeconds` after its last event), so `Last-Event-ID` resumption
 * works against any instance that shares the Redis, and events outlive the instance that sent them.
 */
import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import type { EventStore, StoredEventContext } from './event-store.ts'
import type { RedisLike } from './redis.ts'

/** Options of {@link redisEventStore}. */
export interface RedisEventStoreOptions {
  /** Key prefix (default `rxmcp:`). */
  prefix?: string
  /** Events kept per stream, trimmed approximately (default 1,000). */
  maxEventsPerStream?: number
  /** Seconds a stream is kept after its last event (default 3,600). */
  ttlSeconds?: number
}

export const REDIS_EVENT_STORE_DEFAULTS = { prefix: 'rxmcp:', maxEventsPerStream: 1000, ttlSeconds: 3600 } as const

/**
 * Event ids are `<streamId>_<Redis entry id>`; a replay after an id reads the entries after it,
 * and is refused (undefined) when that entry is gone: trimmed or expired, a replay would have a gap.
 * @example
 * const redis = await connectRedis('redis://127.0.0.1:6379')
 * streamableHttp({ eventStore: redisEventStore(redis) })
 */
export function redisEventStore(redis: RedisLike, options: RedisEventStoreOptions = {}): EventStore {
  const prefix = options.prefix ?? REDIS_EVENT_STORE_DEFAULTS.prefix
  const maxEvents = options.maxEventsPerStream ?? REDIS_EVENT_STORE_DEFAULTS.maxEventsPerStream
  const ttl = options.ttlSeconds ?? REDIS_EVENT_STORE_DEFAULTS.ttlSeconds
  const streamKey = (streamId: string) => `${prefix}events:${streamId}`
  const sessionKey = (sessionId: string) => `${prefix}session-streams:${sessionId}`

  return {
    async storeEvent(streamId: string, message: JsonRpcPayload, context?: StoredEventContext): Promise<string> {
      const key = streamKey(streamId)
      const fields: Record<string, string> = { data: context?.data ?? JSON.stringify(message) }
      if (context?.pending !== undefined) fields.pending = JSON.stringify(context.pending)
      const id = await redis.xAdd(key, '*', fields, { TRIM: { strategy: 'MAXLEN', strategyModifier: '~', threshold: maxEvents } })
      const writes: Promise<unknown>[] = [redis.expire(key, ttl)]
      if (context?.sessionId) writes.push(redis.sAdd(sessionKey(context.sessionId), streamId), redis.expire(sessionKey(context.sessionId), ttl))
      await Promise.all(writes)
      return `${streamId}_${id}`
    },

    async replayEventsAfter(lastEventId: string, send: (eventId: string, message: JsonRpcPayload) => void | Promise<void>): Promise<string | undefined> {
      const underscore = lastEventId.lastIndexOf('_')
      if (underscore <= 0) return undefined
      const streamId = lastEventId.slice(0, underscore)
      const after = lastEventId.slice(underscore + 1)
      if (!/^\d+-\d+$/.test(after)) return undefined
      const key = streamKey(streamId)
      // The event itself must still be there: otherwise some after it may be gone too.
      const [anchor] = await redis.xRange(key, after, after)
      if (anchor === undefined) return undefined
      for (const entry of await redis.xRange(key, `(${after}`, '+')) {
        let message: JsonRpcPayload
        try { message = JSON.parse(entry.message.data ?? '') as JsonRpcPayload } catch { continue }
        await send(`${streamId}_${entry.id}`, message)
      }
      return streamId
    },

    async hasStream(sessionId: string, streamId: string): Promise<boolean> {
      return Boolean(await redis.sIsMember(sessionKey(sessionId), streamId))
    },

    async pendingOf(streamId: string): Promise<RequestId[] | undefined> {
      const [first] = await redis.xRange(streamKey(streamId), '-', '+', { COUNT: 1 })
      const text = first?.message.pending
      if (text === undefined) return undefined
      try {
        const ids = JSON.parse(text) as unknown
        return Array.isArray(ids) ? ids.filter((id): id is RequestId => typeof id === 'string' || typeof id === 'number') : undefined
      } catch { return undefined }
    },

    async deleteStream(streamId: string): Promise<void> {
      await redis.del(streamKey(streamId))
    },

    async deleteSession(sessionId: string): Promise<void> {
      const streams = await redis.sMembers(sessionKey(sessionId))
      await redis.del([...streams.map(streamKey), sessionKey(sessionId)])
    },
  }
}
