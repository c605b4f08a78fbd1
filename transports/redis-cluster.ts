/**
 * The {@link SessionCluster} of the Redis scale-out: each session's record is a Redis hash
 * (`<prefix>session:<id>`: owner, principal, kind, protocol version, saved state) expiring when
 * the session would; each instance listens on its own pub/sub channel (`<prefix>instance:<id>`)
 * for the exchanges forwarded to it and the answers to the ones it forwarded, and says it runs
 * with a heartbeat key (`<prefix>alive:<id>`, refreshed every second, expiring after three). An
 * instance whose heartbeat expired is gone: its sessions are taken over and its tasks failed. A
 * PUBLISH no one received while the heartbeat holds is a subscriber reconnecting (Redis restarted):
 * the sender tries again instead. The instances that take sessions are listed in
 * `<prefix>instances` (a draining one takes itself out, to be handed no session), and one that
 * drained cleanly says so for a minute in `<prefix>left:<id>`.
 */
import { Observable, type SchedulerLike } from '../lib/rx.ts'
import { randomId } from '../lib/base64url.ts'
import type { SessionCluster, SessionRecord } from './http-cluster.ts'
import type { RedisLike } from './redis-like.ts'
import { channelMessages, publishOn, type RedisPubSubLike } from './redis-event-bus.ts'
import { every } from './timers.ts'

/** Options of {@link redisSessionCluster}. */
export interface RedisSessionClusterOptions {
  /** Key and channel prefix (default `rxmcp:`). */
  prefix?: string
  /** This instance's id (default: random per call). */
  instanceId?: string
  /** Told of a connection error of the subscriber (default: ignored; node-redis reconnects). */
  onError?: (error: unknown) => void
  /** The connection's health (`connectRedis(...).health`): each return to `up` after `down` is a recovery. */
  health?: Observable<'up' | 'down'>
  /**
   * Where the heartbeat is timed (default real time, on a timer that does not hold the process
   * open): a test passes a virtual one and moves time itself.
   */
  scheduler?: SchedulerLike
}

/** What the cluster needs of the Redis client: the stores' commands and pub/sub (sharded on a Redis Cluster). */
export type RedisClusterLike = RedisLike & RedisPubSubLike

/** How often an instance says it runs, and how long that holds (a SIGKILLed instance is gone after at most this). */
const HEARTBEAT_MS = 1_000
const HEARTBEAT_TTL_MS = 3_000
/** How long an instance that drained cleanly is remembered as such (fronts ask within seconds). */
const LEFT_TTL_MS = 60_000

/** Sets the owner of KEYS[1] to ARGV[2] if it is still ARGV[1]; answers the record (HGETALL). */
const TAKE_OVER = `
if redis.call('HGET', KEYS[1], 'o') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'o', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return redis.call('HGETALL', KEYS[1])`

/** Sets fields (ARGV[2..]) of KEYS[1] if its owner is ARGV[1]. */
const SAVE = `
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1`

/** Runs ARGV[2] (PEXPIRE with ARGV[3], or DEL) on KEYS[1] if its owner is ARGV[1]; -1 when there is no record, 0 when another owns it. */
const IF_OWNER = `
local owner = redis.call('HGET', KEYS[1], 'o')
if not owner then return -1 end
if owner ~= ARGV[1] then return 0 end
if ARGV[2] == 'del' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[3])`

/**
 * @example
 * const redis = await connectRedis(url)
 * streamableHttp({ eventStore: redisEventStore(redis), cluster: redisSessionCluster(redis) })
 */
export function redisSessionCluster(redis: RedisClusterLike, options: RedisSessionClusterOptions = {}): SessionCluster {
  const prefix = options.prefix ?? 'rxmcp:'
  const instanceId = options.instanceId ?? randomId(9)
  const onError = options.onError ?? (() => {})
  const channel = (id: string) => `${prefix}instance:${id}`
  const key = (sessionId: string) => `${prefix}session:${sessionId}`

  const alive = (id: string) => `${prefix}alive:${id}`
  // The instances that take sessions (a sorted set, scores unused): listed by `peers`, each
  // checked against its heartbeat there, since a crashed one is not taken out by itself.
  const members = `${prefix}instances`
  // Set by `leave` (a drain): the heartbeat goes on, the listing stops.
  let isLeaving = false
  const beat = () => {
    redis.set(alive(instanceId), '1', { PX: HEARTBEAT_TTL_MS }).catch(onError)
    // Again on every beat: a Redis that restarted empty has it back within a second.
    if (!isLeaving) redis.zAdd(members, { score: 0, value: instanceId }).catch(onError)
  }
  const messages = new Observable<string>(subscriber => {
    const listening = channelMessages(redis, channel(instanceId), onError).subscribe(subscriber)
    // The heartbeat says this instance runs while it listens; it stops (and goes) with the listening.
    beat()
    const heartbeat = every(HEARTBEAT_MS, options.scheduler, beat)
    // Back after an outage: at once, not a second later.
    const backUp = options.health?.subscribe(state => { if (state === 'up') beat() })
    return () => {
      heartbeat.unsubscribe()
      backUp?.unsubscribe()
      listening.unsubscribe()
      redis.del(alive(instanceId)).catch(() => {})
      redis.zRem(members, instanceId).catch(() => {})
    }
  })

  const health = options.health
  const recovered = health === undefined ? undefined : new Observable<void>(subscriber => {
    let wasDown = false
    return health.subscribe(state => {
      if (state === 'down') wasDown = true
      else if (wasDown) { wasDown = false; subscriber.next() }
    })
  })
  return {
    instanceId,
    messages,
    ...(recovered === undefined ? {} : { recovered }),
    async send(to, message) {
      return (await publishOn(redis, channel(to), message)) > 0
    },
    async isAlive(id) {
      return (await redis.get(alive(id))) !== null
    },
    async claim(sessionId, record, ttlMs) {
      await redis.eval(`redis.call('HSET', KEYS[1], unpack(ARGV, 2)) return redis.call('PEXPIRE', KEYS[1], ARGV[1])`,
        { keys: [key(sessionId)], arguments: [String(ttlMs), ...fields(record)] })
    },
    async lookup(sessionId) {
      return recordOf(await redis.eval(`return redis.call('HGETALL', KEYS[1])`, { keys: [key(sessionId)], arguments: [] }))
    },
    async takeOver(sessionId, from, ttlMs) {
      return recordOf(await redis.eval(TAKE_OVER, { keys: [key(sessionId)], arguments: [from, instanceId, String(ttlMs)] }))
    },
    async save(sessionId, patch) {
      const values: string[] = []
      if (patch.protocolVersion !== undefined) values.push('v', patch.protocolVersion)
      if (patch.state !== undefined) values.push('s', patch.state)
      if (patch.standalone !== undefined) values.push('g', patch.standalone)
      if (values.length > 0) await redis.eval(SAVE, { keys: [key(sessionId)], arguments: [instanceId, ...values] })
    },
    async touch(sessionId, ttlMs) {
      const outcome = await redis.eval(IF_OWNER, { keys: [key(sessionId)], arguments: [instanceId, 'expire', String(ttlMs)] })
      return outcome === -1 ? 'missing' : outcome === 0 ? 'lost' : 'held'
    },
    async release(sessionId) {
      await redis.eval(IF_OWNER, { keys: [key(sessionId)], arguments: [instanceId, 'del', ''] })
    },
    async peers() {
      const listed = (await redis.zRangeByScore(members, '-inf', '+inf')).filter(id => id !== instanceId)
      const beats = await Promise.all(listed.map(id => redis.get(alive(id))))
      const gone = listed.filter((_, i) => beats[i] === null)
      // Crashed (no heartbeat): taken out for everyone.
      if (gone.length > 0) redis.zRem(members, gone).catch(onError)
      return listed.filter((_, i) => beats[i] !== null)
    },
    async leave() {
      isLeaving = true
      await redis.zRem(members, instanceId)
    },
    async markLeft() {
      await redis.set(`${prefix}left:${instanceId}`, '1', { PX: LEFT_TTL_MS })
    },
    async hasLeft(id) {
      return (await redis.get(`${prefix}left:${id}`)) !== null
    },
  }
}

function fields(record: SessionRecord): string[] {
  const values = ['o', record.owner, 'p', record.principalKey, 'k', record.kind]
  if (record.protocolVersion !== undefined) values.push('v', record.protocolVersion)
  if (record.state !== undefined) values.push('s', record.state)
  return values
}

/** An HGETALL answer (a flat list of names and values) as a record; undefined when there is none. */
function recordOf(reply: unknown): SessionRecord | undefined {
  if (!Array.isArray(reply) || reply.length === 0) return undefined
  const map = new Map<string, string>()
  for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]))
  const owner = map.get('o')
  const kind = map.get('k')
  if (owner === undefined || (kind !== 'streamable-http' && kind !== 'sse')) return undefined
  const record: SessionRecord = { owner, principalKey: map.get('p') ?? '', kind }
  const version = map.get('v')
  if (version !== undefined) record.protocolVersion = version
  const state = map.get('s')
  if (state !== undefined) record.state = state
  const standalone = map.get('g')
  if (standalone !== undefined) record.standalone = standalone
  return record
}
