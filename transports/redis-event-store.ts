/**
 * An {@link EventStore} on Redis Streams: every SSE stream is a Redis stream, so `Last-Event-ID`
 * resumption works against any instance that shares the Redis, and events outlive the instance
 * that sent them. Bounded like the memory store, atomically across instances: every write is one
 * Lua script that keeps byte and stream counters per stream, per session and in total, and drops
 * what is over a bound before it returns.
 *
 * Keys (prefix `rxmcp:`), all of a shard under its hash tag (`{events}` when there is one shard,
 * so `rxmcp:{events}:events:<stream>`; `{events:<k>/<K>:<n>}` for shard k of K):
 *
 *   events:<stream>                    the stream's events (XADD), each { data }
 *   event-meta:<stream>                hash { s: session, p: pending request ids (JSON) }
 *   event-session:<session>            hash { bytes, b:<stream>: the stream's bytes }
 *   event-session-streams:<session>    zset stream -> last write (ms): recency, and expiry
 *   event-totals                       hash { bytes, streams }: the shard's
 *   event-sessions-by-bytes/-streams   zsets session -> its bytes / streams: who pays first
 *   event-sessions-by-time             zset session -> last write (ms): abandoned sessions
 *
 * On Redis Cluster a tag is one slot (so one primary): the bounds in all (streams, bytes, the
 * session holding the most paying first) are checked and enforced in the same script as the
 * write, which needs every counter they compare on the slot being written. So they hold per shard:
 * with one shard (the default on one server) the whole store is on one slot; with K shards (the
 * default on a cluster connection) each session lives in one shard, each shard holds 1/K of the
 * totals, and the shards' slots are spread evenly over the slot space, so over the primaries.
 *
 * Each key of a stream or session expires `ttlSeconds` after its last write, so abandoned streams
 * (a POST whose client went away, an instance that died) free themselves; the counters of what
 * expired are settled by the next write of any session in the shard (a bounded number each time).
 */
import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'
import { MEMORY_EVENT_STORE_DEFAULTS, type EventStore, type MemoryEventStoreOptions, type StoredEventContext } from './event-store.ts'
import type { RedisLike } from './redis-like.ts'
import { redisSlot, REDIS_CLUSTER_SLOTS } from './redis-slot.ts'

/** Options of {@link redisEventStore}; defaults in {@link REDIS_EVENT_STORE_DEFAULTS}. */
export interface RedisEventStoreOptions extends MemoryEventStoreOptions {
  /** Key prefix (default `rxmcp:`). */
  prefix?: string
  /** Seconds a stream (and a session's bookkeeping) is kept after its last event (default 3,600). */
  ttlSeconds?: number
  /** The clock in epoch ms, for settling what expired (default Date.now; instances' clocks should agree). */
  now?: () => number
  /**
   * How many shards (hash tags) the store spreads sessions over, each session's keys in one
   * (default 1; on a Redis Cluster connection, as many as fit a session's allowance each, at most
   * 16: 8 with the default bounds). The bounds in all are divided among them. Every instance
   * must use the same number: changing it starts an empty store beside the old one (what the old
   * one held is not resumable and expires with its ttl).
   */
  shards?: number
}

/**
 * Defaults of {@link redisEventStore}: the memory store's bounds (per stream 1,000 events and
 * 8 MiB; per session 100 streams and 16 MiB; in all 10,000 streams and 128 MiB), kept in a Redis
 * every instance shares, and streams kept an hour after their last event.
 */
export const REDIS_EVENT_STORE_DEFAULTS = { prefix: 'rxmcp:', ...MEMORY_EVENT_STORE_DEFAULTS, ttlSeconds: 3600 } as const

/** What a Redis event store holds now (from its counters), for monitoring and tests. */
export interface RedisEventStoreStats {
  streams: number
  /** JSON text kept, plus 64 bytes per event. */
  bytes: number
  sessions: number
}

/** The Redis {@link EventStore}, with its counters. */
export interface RedisEventStore extends EventStore {
  /** How many shards the sessions are spread over (the option, or the default it got). */
  readonly shards: number
  stats(): Promise<RedisEventStoreStats>
  /** The bytes one session's streams hold now. */
  sessionBytes(sessionId: string): Promise<number>
}

/** The helpers every script shares. ARGV[1] is the prefix, ARGV[2] the clock (ms), ARGV[3] the ttl (s). */
const COMMON = `
local P = ARGV[1]
local NOW = tonumber(ARGV[2])
local TTL = tonumber(ARGV[3])
local OVERHEAD = 64
local T, B, N, X = P .. 'event-totals', P .. 'event-sessions-by-bytes', P .. 'event-sessions-by-streams', P .. 'event-sessions-by-time'
local function skey(x) return P .. 'event-session:' .. x end
local function zkey(x) return P .. 'event-session-streams:' .. x end
local function ekey(s) return P .. 'events:' .. s end
local function mkey(s) return P .. 'event-meta:' .. s end
local function count(key, field) return tonumber(redis.call('HGET', key, field) or '0') end
local function spend(x, s, size)
  redis.call('HINCRBY', skey(x), 'b:' .. s, size)
  redis.call('HINCRBY', skey(x), 'bytes', size)
  redis.call('HINCRBY', T, 'bytes', size)
  redis.call('ZINCRBY', B, size, x)
end
-- Forgets a stream: its events, its meta, and what the counters held for it.
local function dropStream(x, s)
  local bytes = count(skey(x), 'b:' .. s)
  redis.call('HDEL', skey(x), 'b:' .. s)
  if redis.call('ZREM', zkey(x), s) == 1 then
    redis.call('HINCRBY', T, 'streams', -1)
    redis.call('ZINCRBY', N, -1, x)
  end
  if bytes ~= 0 then
    redis.call('HINCRBY', skey(x), 'bytes', -bytes)
    redis.call('HINCRBY', T, 'bytes', -bytes)
    redis.call('ZINCRBY', B, -bytes, x)
  end
  redis.call('DEL', ekey(s), mkey(s))
end
-- Forgets a session: its streams, then whatever the totals still hold for it (keys that expired).
local function dropSession(x)
  for _, s in ipairs(redis.call('ZRANGE', zkey(x), 0, -1)) do dropStream(x, s) end
  local bytes = tonumber(redis.call('ZSCORE', B, x) or '0')
  local streams = tonumber(redis.call('ZSCORE', N, x) or '0')
  if bytes ~= 0 then redis.call('HINCRBY', T, 'bytes', -bytes) end
  if streams ~= 0 then redis.call('HINCRBY', T, 'streams', -streams) end
  redis.call('ZREM', B, x)
  redis.call('ZREM', N, x)
  redis.call('ZREM', X, x)
  redis.call('DEL', skey(x), zkey(x))
  -- Nothing held any more: no key stays behind (an idle Redis holds nothing of this store).
  if redis.call('ZCARD', X) == 0 and redis.call('ZCARD', N) == 0 and redis.call('ZCARD', B) == 0 then redis.call('DEL', T) end
end
-- Drops the oldest event of a stream (a replay from before it is refused: its anchor is gone).
local function dropOldest(x, s)
  local first = redis.call('XRANGE', ekey(s), '-', '+', 'COUNT', 1)[1]
  if not first then return false end
  local size = OVERHEAD
  local fields = first[2]
  for i = 2, #fields, 2 do size = size + #fields[i] end
  redis.call('XDEL', ekey(s), first[1])
  spend(x, s, -size)
  return true
end
-- Frees room in session x: its least recently written stream other than keep, else keep's oldest event.
local function shrink(x, keep)
  for _, s in ipairs(redis.call('ZRANGE', zkey(x), 0, 1)) do
    if s ~= keep then dropStream(x, s) return true end
  end
  if keep then return dropOldest(x, keep) end
  -- Nothing left of it but counters (its keys expired): settle them.
  if redis.call('ZSCORE', B, x) or redis.call('ZSCORE', N, x) then dropSession(x) return true end
  return false
end
`

/**
 * Stores one event. ARGV: prefix, now, ttl, stream, session, data, pending ('' for none),
 * maxEventsPerStream, maxBytesPerStream, maxStreamsPerSession, maxBytesPerSession, maxStreams,
 * maxBytes. Answers the entry id.
 */
const STORE = `${COMMON}
local s, x, data, pending = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local maxEvents, maxStreamBytes = tonumber(ARGV[8]), tonumber(ARGV[9])
local maxSessionStreams, maxSessionBytes = tonumber(ARGV[10]), tonumber(ARGV[11])
local maxStreams, maxBytes = tonumber(ARGV[12]), tonumber(ARGV[13])
local horizon = NOW - TTL * 1000
-- Settle what expired since (bounded per write): abandoned sessions, then this session's old streams.
for _, old in ipairs(redis.call('ZRANGEBYSCORE', X, '-inf', '(' .. horizon, 'LIMIT', 0, 100)) do dropSession(old) end
for _, old in ipairs(redis.call('ZRANGEBYSCORE', zkey(x), '-inf', '(' .. horizon, 'LIMIT', 0, 100)) do dropStream(x, old) end
local owner = redis.call('HGET', mkey(s), 's')
if owner and owner ~= x then return redis.error_reply('ERR stream ' .. s .. ' belongs to another session') end
if not redis.call('ZSCORE', zkey(x), s) then
  redis.call('HINCRBY', T, 'streams', 1)
  redis.call('ZINCRBY', N, 1, x)
  redis.call('HSET', mkey(s), 's', x)
  if pending ~= '' then redis.call('HSET', mkey(s), 'p', pending) end
end
redis.call('ZADD', zkey(x), NOW, s)
redis.call('ZADD', X, NOW, x)
local id = redis.call('XADD', ekey(s), '*', 'data', data)
spend(x, s, #data + OVERHEAD)
-- Per stream: its own oldest events go first (an event larger than the budget is not kept).
while redis.call('XLEN', ekey(s)) > 0 and (redis.call('XLEN', ekey(s)) > maxEvents or count(skey(x), 'b:' .. s) > maxStreamBytes) do dropOldest(x, s) end
-- Per session: only the session's own streams pay.
while redis.call('ZCARD', zkey(x)) > maxSessionStreams or count(skey(x), 'bytes') > maxSessionBytes do
  if not shrink(x, s) then break end
end
-- In all: the session holding the most pays first.
while count(T, 'streams') > maxStreams do
  local payer = redis.call('ZREVRANGE', N, 0, 0)[1]
  if not payer then break end
  local other
  for _, o in ipairs(redis.call('ZRANGE', zkey(payer), 0, 1)) do if o ~= s then other = o break end end
  if other then dropStream(payer, other)
  elseif payer ~= x then dropSession(payer)
  else break end
end
while count(T, 'bytes') > maxBytes do
  local payer = redis.call('ZREVRANGE', B, 0, 0)[1]
  if not payer then break end
  local keep
  if payer == x then keep = s end
  if not shrink(payer, keep) then break end
end
for _, key in ipairs({ ekey(s), mkey(s), skey(x), zkey(x) }) do redis.call('EXPIRE', key, TTL) end
return id`

/** Forgets a stream (ARGV[4]); its session too once it has none left. */
const DELETE_STREAM = `${COMMON}
local s = ARGV[4]
local x = redis.call('HGET', mkey(s), 's')
if not x then redis.call('DEL', ekey(s), mkey(s)) return 0 end
dropStream(x, s)
if redis.call('ZCARD', zkey(x)) == 0 then dropSession(x) end
return 1`

/** Forgets a session (ARGV[4]) and every stream of it. */
const DELETE_SESSION = `${COMMON}
dropSession(ARGV[4])
return 1`

/** Whether stream ARGV[5] is one of session ARGV[4]'s. */
const HAS_STREAM = `${COMMON}
if redis.call('ZSCORE', zkey(ARGV[4]), ARGV[5]) then return 1 end
return 0`

/** The counters: { bytes, streams, sessions, the session ARGV[4]'s bytes }. */
const STATS = `${COMMON}
return { count(T, 'bytes'), count(T, 'streams'), redis.call('ZCARD', X), count(skey(ARGV[4]), 'bytes') }`

/** The SHA-1 of each script (hex), once computed: EVALSHA sends 40 bytes instead of the script. */
const digests = new Map<string, Promise<string>>()

/**
 * Runs a script by its digest when the client can (node-redis's `evalSha`), loading it with EVAL
 * when Redis does not have it yet (NOSCRIPT: first use, or after a restart or SCRIPT FLUSH).
 */
async function evaluate(redis: RedisLike, script: string, keys: string[], args: string[]): Promise<unknown> {
  const evalSha = (redis as RedisLike & { evalSha?: (sha: string, options: { keys: string[]; arguments: string[] }) => Promise<unknown> }).evalSha
  if (typeof evalSha !== 'function') return redis.eval(script, { keys, arguments: args })
  let digest = digests.get(script)
  if (digest === undefined) {
    digest = crypto.subtle.digest('SHA-1', new TextEncoder().encode(script)).then(hash => [...new Uint8Array(hash)].map(byte => byte.toString(16).padStart(2, '0')).join(''))
    digests.set(script, digest)
  }
  try {
    return await evalSha.call(redis, await digest, { keys, arguments: args })
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
    return redis.eval(script, { keys, arguments: args })
  }
}

/**
 * Event ids are `<streamId>_<Redis entry id>` (with shards, `<streamId>_<shard>.<entry id>`); a
 * replay after an id reads the entries after it, and is refused (undefined) when that entry is
 * gone: dropped for room or expired, a replay would have a gap. Each session spends only its own
 * quota; past the totals, the session holding the most pays first, so one client cannot evict
 * another's streams by opening many of its own.
 *
 * With `shards` K > 1, each session's keys are in shard crc16(session id) mod K, a hash tag of its
 * own, and the bounds in all (`maxStreams`, `maxBytes`) are divided among the shards: each shard
 * holds at most 1/K of them, the session holding the most *in that shard* paying first, so the
 * store as a whole still holds no more than the totals configured. A shard must fit one session's
 * allowance (`maxBytes / K >= maxBytesPerSession`, `maxStreams / K >= maxStreamsPerSession`),
 * else this throws a RangeError. `deleteStream` and `pendingOf` find the shard from their session
 * argument (the server always passes it); without it they look in every shard.
 * @throws RangeError when `shards` is not an integer from 1 to 1,024, or a shard cannot hold one
 * session's allowance.
 * @example
 * const redis = await connectRedis('redis://127.0.0.1:6379')
 * streamableHttp({ eventStore: redisEventStore(redis, { maxBytesPerSession: 4 * 1024 * 1024 }) })
 * // On a cluster: 8 shards by default; 16 need the totals doubled (each shard fits a session's 16 MiB).
 * const cluster = await connectRedis({ cluster: ['redis://10.0.0.1:6379'] })
 * redisEventStore(cluster, { shards: 16, maxBytes: 256 * 1024 * 1024 })
 */
export function redisEventStore(redis: RedisLike, options: RedisEventStoreOptions = {}): RedisEventStore {
  const limits = { ...REDIS_EVENT_STORE_DEFAULTS, ...options }
  const now = options.now ?? Date.now
  const count = options.shards ?? defaultShards(redis, limits)
  if (!Number.isInteger(count) || count < 1 || count > 1024) throw new RangeError(`redisEventStore: shards must be an integer from 1 to 1024, not ${count}`)
  const maxStreams = Math.floor(limits.maxStreams / count)
  const maxBytes = Math.floor(limits.maxBytes / count)
  if (count > 1 && (maxStreams < limits.maxStreamsPerSession || maxBytes < limits.maxBytesPerSession)) {
    throw new RangeError(`redisEventStore: ${count} shards leave each ${maxStreams} streams and ${maxBytes} bytes, less than one session's allowance (${limits.maxStreamsPerSession} streams, ${limits.maxBytesPerSession} bytes)`)
  }
  // Each shard's keys under one hash tag: one slot on Redis Cluster (see the keys above). One
  // shard keeps today's `{events}`, so a store without shards reads what it always wrote.
  const shards = Array.from({ length: count }, (_, index) => shard(redis, `${limits.prefix}${count === 1 ? '{events}' : `{${shardTag(index, count)}}`}:`, now, limits.ttlSeconds))
  const shardIndex = (sessionId: string) => count === 1 ? 0 : redisSlot(sessionId) % count
  const shardOf = (sessionId: string) => shards[shardIndex(sessionId)]!
  /** The shard an event id names, and the stream and entry ids in it; undefined when it names none. */
  const parse = (eventId: string) => {
    const underscore = eventId.lastIndexOf('_')
    if (underscore <= 0) return undefined
    const match = /^(?:(\d+)\.)?(\d+-\d+)$/.exec(eventId.slice(underscore + 1))
    // A shard number exactly when there are shards: an id of another layout names nothing here.
    if (match === null || (match[1] === undefined) !== (count === 1)) return undefined
    const index = match[1] === undefined ? 0 : Number(match[1])
    if (index >= count || String(index) !== (match[1] ?? '0')) return undefined
    return { at: shards[index]!, streamId: eventId.slice(0, underscore), entry: match[2]!, name: count === 1 ? '' : `${index}.` }
  }

  return {
    shards: count,

    async storeEvent(streamId: string, message: JsonRpcPayload, context?: StoredEventContext): Promise<string> {
      const data = context?.data ?? JSON.stringify(message)
      const index = shardIndex(context?.sessionId ?? '')
      const id = await shards[index]!.run(STORE, streamId, context?.sessionId ?? '', data, context?.pending === undefined ? '' : JSON.stringify(context.pending),
        String(limits.maxEventsPerStream), String(limits.maxBytesPerStream), String(limits.maxStreamsPerSession), String(limits.maxBytesPerSession),
        String(maxStreams), String(maxBytes))
      return `${streamId}_${count === 1 ? '' : `${index}.`}${String(id)}`
    },

    async replayEventsAfter(lastEventId: string, send: (eventId: string, message: JsonRpcPayload) => void | Promise<void>): Promise<string | undefined> {
      const named = parse(lastEventId)
      if (named === undefined) return undefined
      const { at, streamId, entry, name } = named
      const key = at.streamKey(streamId)
      // The event itself must still be there: events are dropped oldest first, so while it is,
      // every one after it is too; once it is gone, some after it may be gone as well.
      const [anchor] = await redis.xRange(key, entry, entry)
      if (anchor === undefined) return undefined
      for (const item of await redis.xRange(key, `(${entry}`, '+')) {
        let message: JsonRpcPayload
        try { message = JSON.parse(item.message.data ?? '') as JsonRpcPayload } catch { continue }
        await send(`${streamId}_${name}${item.id}`, message)
      }
      return streamId
    },

    async hasStream(sessionId: string, streamId: string): Promise<boolean> {
      return Number(await shardOf(sessionId).run(HAS_STREAM, sessionId, streamId)) === 1
    },

    async pendingOf(streamId: string, sessionId?: string): Promise<RequestId[] | undefined> {
      // Without the session, each shard in turn: a stream's meta is in its session's shard only.
      for (const at of sessionId === undefined ? shards : [shardOf(sessionId)]) {
        const [text] = await redis.eval('return { redis.call("HGET", KEYS[1], "p") }', { keys: [at.metaKey(streamId)], arguments: [] }) as [string | false | null]
        if (typeof text !== 'string') continue
        try {
          const ids = JSON.parse(text) as unknown
          return Array.isArray(ids) ? ids.filter((id): id is RequestId => typeof id === 'string' || typeof id === 'number') : undefined
        } catch { return undefined }
      }
      return undefined
    },

    async deleteStream(streamId: string, sessionId?: string): Promise<void> {
      await Promise.all((sessionId === undefined ? shards : [shardOf(sessionId)]).map(at => at.run(DELETE_STREAM, streamId)))
    },

    async deleteSession(sessionId: string): Promise<void> {
      await shardOf(sessionId).run(DELETE_SESSION, sessionId)
    },

    async stats(): Promise<RedisEventStoreStats> {
      const each = await Promise.all(shards.map(at => at.run(STATS, '') as Promise<number[]>))
      const sum = (index: number) => each.reduce((total, values) => total + Number(values[index]), 0)
      return { bytes: sum(0), streams: sum(1), sessions: sum(2) }
    },

    async sessionBytes(sessionId: string): Promise<number> {
      const values = await shardOf(sessionId).run(STATS, sessionId) as number[]
      return Number(values[3])
    },
  }
}

/** One shard's keys and how to run a script on its slot. */
interface Shard {
  run(script: string, ...args: string[]): Promise<unknown>
  streamKey(streamId: string): string
  metaKey(streamId: string): string
}

function shard(redis: RedisLike, prefix: string, now: () => number, ttlSeconds: number): Shard {
  // The scripts name their keys from the prefix (ARGV), as every key of a session and its streams
  // is only known inside the script (the payer is chosen there). The totals' key is declared, so a
  // cluster client sends the script to the node of the shard's slot (Redis lets a script use the
  // undeclared keys of that slot).
  const slotKey = [`${prefix}event-totals`]
  return {
    run: (script, ...args) => evaluate(redis, script, slotKey, [prefix, String(now()), String(ttlSeconds), ...args]),
    streamKey: streamId => `${prefix}events:${streamId}`,
    metaKey: streamId => `${prefix}event-meta:${streamId}`,
  }
}

/**
 * The hash tag of shard `index` of `count`: `events:<index>/<count>:<n>`, the first n whose slot
 * is in the middle half of the index-th of `count` equal parts of the slot space. A cluster's
 * primaries hold ranges of slots (`redis-cli --cluster create` gives each an equal run), so shards
 * spread over the slot space spread over the primaries, where K tags hashed at random could pile
 * up on one. It depends on nothing but (index, count): every instance finds the same tags.
 */
function shardTag(index: number, count: number): string {
  const part = REDIS_CLUSTER_SLOTS / count
  const low = (index + 0.25) * part
  const high = (index + 0.75) * part
  for (let n = 0; ; n++) {
    const tag = `events:${index}/${count}:${n}`
    const slot = redisSlot(tag)
    if (slot >= low && slot < high) return tag
  }
}

/**
 * Shards when none were asked for: one on a single Redis or through Sentinel (all on one server
 * anyway, and the bounds in all stay exact); on a Redis Cluster connection (`connectRedis({ cluster
 * })`), as many as fit a session's allowance in each (8 with the default bounds), at most 16. It
 * is read from the configuration only, never from the cluster's size, so instances started at
 * different times (or while a primary fails over) agree on it.
 */
function defaultShards(redis: RedisLike, limits: { maxBytes: number; maxBytesPerSession: number; maxStreams: number; maxStreamsPerSession: number }): number {
  if ((redis as { topology?: string }).topology !== 'cluster') return 1
  const fit = Math.min(Math.floor(limits.maxBytes / limits.maxBytesPerSession), Math.floor(limits.maxStreams / limits.maxStreamsPerSession))
  return Math.max(1, Math.min(MAX_DEFAULT_SHARDS, fit))
}

/** The most shards {@link redisEventStore} picks by itself on a cluster (more may be asked for). */
const MAX_DEFAULT_SHARDS = 16
