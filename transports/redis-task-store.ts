/**
 * A {@link TaskStore} on Redis: tasks outlive the instance that created them, and any instance
 * sharing the Redis answers tasks/get, tasks/result and tasks/list for them. Each task is one key
 * (JSON, expiring with the task's ttl); each owner's tasks are a sorted set in creation order; a
 * status change is a compare-and-set on the stored status (a Lua script), so two instances cannot
 * both move a task out of the same state.
 *
 * Keys (prefix `rxmcp:`), ready for Redis Cluster: an owner's keys share the owner's hash tag, the
 * totals share `{tasks}`:
 *
 *   task:{<owner>}:<id>         the task's JSON
 *   owner-tasks:{<owner>}       zset id -> creation sequence (tasks/list's order and cursor)
 *   task-seq:{<owner>}          the owner's sequence
 *   {tasks}all                  zset {<owner>}<id> -> expiry: the store's bound
 *   {tasks}address:<address>    zset {<owner>}<id> -> expiry: the address's bound
 *
 * Creating a task takes its places in the totals first (one script on their slot), then stores it
 * under its owner (one script on the owner's slot), and gives the places back if the owner's part
 * refuses; a crash between the two leaves a place taken until the task's expiry, never a task
 * over a bound.
 */
import { InvalidParamsError } from '../lib/jsonrpc/errors.ts'
import { TASK_DEFAULTS, TaskTransitionError, canTransition, isTerminalStatus, type TaskState } from '../lib/tasks/state.ts'
import { TaskStoreFullError, randomTaskId, retentionFor, type TaskCreate, type TaskPage, type TaskStore, type TaskStoreLimits } from '../lib/tasks/store.ts'
import { hashTag, type RedisLike } from './redis-like.ts'

/** Options of {@link redisTaskStore}. */
export interface RedisTaskStoreOptions extends TaskStoreLimits {
  /** Key prefix (default `rxmcp:`). Defaults of the limits: REDIS_TASK_STORE_DEFAULTS. */
  prefix?: string
  /** The clock, in ms (default Date.now). */
  now?: () => number
  /**
   * Instances sharing the store (the Redis scale-out): each task records the instance running it,
   * and a task still running on an instance that is gone is failed by whichever reads it next
   * (tasks/get, tasks/result, tasks/list), so no client waits for it forever.
   */
  instance?: { id: string; isAlive(id: string): Promise<boolean> }
}

/** Defaults of {@link redisTaskStore}: the memory store's, with more tasks in all (a shared store serves every instance). */
export const REDIS_TASK_STORE_DEFAULTS = {
  prefix: 'rxmcp:', maxTasks: 100_000, maxTasksPerOwner: 1_000, maxTasksPerAddress: 1_000, defaultTtlMs: TASK_DEFAULTS.ttlMs, maxTtlMs: 3_600_000,
  pollIntervalMs: TASK_DEFAULTS.pollIntervalMs, pageSize: 50,
} as const

/** A task as stored: with the instance running it, in the scale-out (see `instance`), and the address it counts against. */
type StoredTask<R> = TaskState<R> & { instance?: string; address?: string }

/** Sets KEYS[1]'s expiry to at least ARGV px ms ('' for none); a zset holding a never-expiring task keeps none. */
const EXTEND = `
local function extend(key, px)
  if px == '' then redis.call('PERSIST', key) return end
  local pttl = redis.call('PTTL', key)
  -- No expiry on a key holding more than the new task: it holds a task that never expires.
  if pttl == -1 and redis.call('ZCARD', key) > 1 then return end
  if pttl < tonumber(px) then redis.call('PEXPIRE', key, px) end
end`

/**
 * Takes a place among all tasks and the address's, atomically (on the slot of the store's
 * totals), so instances racing for the last places cannot pass a bound together. KEYS: all tasks
 * (by expiry), and the address's (by expiry) when there is one. ARGV: now, maxTasks,
 * maxTasksPerAddress, the task's expiry score, its ttl in ms ('' for none), its member (owner tag
 * and id). Answers 1, or -1/-3 for the store/address bound.
 */
const RESERVE = `${EXTEND}
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
if KEYS[2] then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -3 end
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[6])
if KEYS[2] then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[6])
  extend(KEYS[2], ARGV[5])
end
return 1`

/**
 * Stores a task under its owner's keys (one slot: the owner's hash tag), atomically. KEYS: the
 * owner's tasks (by creation order), the owner's sequence, the task. ARGV: maxTasksPerOwner, the
 * task's JSON, its ttl in ms ('' for none), its id, the owner's task key prefix. Answers the
 * creation sequence number, 0 for an id in use, -2 for the owner's bound. The owner's index and
 * sequence expire with the last task they hold, so an owner that never comes back leaves nothing.
 */
const CREATE = `${EXTEND}
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  -- The owner's index keeps creation order, not expiry: drop the tasks that are gone.
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if redis.call('EXISTS', ARGV[5] .. id) == 0 then redis.call('ZREM', KEYS[1], id) end
  end
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return -2 end
end
local stored
if ARGV[3] == '' then stored = redis.call('SET', KEYS[3], ARGV[2], 'NX') else stored = redis.call('SET', KEYS[3], ARGV[2], 'NX', 'PX', ARGV[3]) end
if not stored then return 0 end
local seq = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[1], seq, ARGV[4])
extend(KEYS[1], ARGV[3])
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -1 then redis.call('PERSIST', KEYS[2]) else redis.call('PEXPIRE', KEYS[2], pttl) end
return seq`

/** Sets the task's JSON if its stored status is still ARGV[2]; keeps the key's expiry. */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if cjson.decode(current).status ~= ARGV[2] then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return 1`

/**
 * @example
 * const redis = await connectRedis(process.env.REDIS_URL!)
 * createServer(info, { tasks: { store: redisTaskStore(redis) } })
 */
export function redisTaskStore(redis: RedisLike, options: RedisTaskStoreOptions = {}): TaskStore {
  const defaults = REDIS_TASK_STORE_DEFAULTS
  const prefix = options.prefix ?? defaults.prefix
  const now = options.now ?? Date.now
  const pageSize = options.pageSize ?? defaults.pageSize
  // Redis Cluster: an owner's keys share the owner's hash tag (one slot), so creating a task and
  // listing the owner's tasks (MGET) touch one slot; the store's totals (all tasks, the addresses')
  // share the tag {tasks}, apart, reserved first and given back when the owner's part refuses.
  const taskKey = (taskId: string, owner: string) => `${prefix}task:${hashTag(owner)}:${taskId}`
  const ownerKey = (owner: string) => `${prefix}owner-tasks:${hashTag(owner)}`
  const seqKey = (owner: string) => `${prefix}task-seq:${hashTag(owner)}`
  const addressKey = (address: string) => `${prefix}{tasks}address:${address}`
  const allKey = `${prefix}{tasks}all`
  /** A task's member in the totals: its id alone may be another owner's too. */
  const member = (taskId: string, owner: string) => `${hashTag(owner)}${taskId}`
  const ttlFor = (requested: number | null | undefined): number | null => retentionFor(requested,
    options.defaultTtlMs === undefined ? defaults.defaultTtlMs : options.defaultTtlMs, options.maxTtlMs === undefined ? defaults.maxTtlMs : options.maxTtlMs)
  const read = async <R>(taskId: string, owner: string): Promise<StoredTask<R> | undefined> => {
    const text = await redis.get(taskKey(taskId, owner))
    return text === null ? undefined : JSON.parse(text) as StoredTask<R>
  }
  const isPast = (state: TaskState<unknown>) => state.ttlMs !== null && now() >= state.createdAt + state.ttlMs

  return {
    async create<R>(init: TaskCreate): Promise<TaskState<R>> {
      const at = now()
      const state: TaskState<unknown> = {
        taskId: init.taskId ?? randomTaskId(), owner: init.owner, status: 'working', createdAt: at, lastUpdatedAt: at,
        ttlMs: ttlFor(init.ttlMs), pollIntervalMs: init.pollIntervalMs ?? options.pollIntervalMs ?? defaults.pollIntervalMs,
      }
      if (init.statusMessage !== undefined) state.statusMessage = init.statusMessage
      const record: StoredTask<unknown> = { ...state }
      if (options.instance !== undefined) record.instance = options.instance.id
      if (init.address !== undefined) record.address = init.address
      const maxTasks = options.maxTasks ?? defaults.maxTasks
      const maxPerOwner = options.maxTasksPerOwner ?? defaults.maxTasksPerOwner
      const maxPerAddress = options.maxTasksPerAddress ?? defaults.maxTasksPerAddress
      const expiry = String(state.ttlMs === null ? Number.MAX_SAFE_INTEGER : at + state.ttlMs)
      const px = state.ttlMs === null ? '' : String(Math.max(1, state.ttlMs))
      const place = member(state.taskId, init.owner)
      const totals = init.address === undefined ? [allKey] : [allKey, addressKey(init.address)]
      const reserved = Number(await redis.eval(RESERVE, { keys: totals, arguments: [String(at), String(maxTasks), String(maxPerAddress), expiry, px, place] }))
      if (reserved === -1) throw new TaskStoreFullError(maxTasks, 'store')
      if (reserved === -3) throw new TaskStoreFullError(maxPerAddress, 'address')
      const outcome = Number(await redis.eval(CREATE, {
        keys: [ownerKey(init.owner), seqKey(init.owner), taskKey(state.taskId, init.owner)],
        arguments: [String(maxPerOwner), JSON.stringify(record), px, state.taskId, taskKey('', init.owner)],
      }).catch(async (error: unknown) => { await giveBack(totals, place); throw error }))
      // Refused by the owner's part: the places taken in the totals go back.
      if (outcome <= 0) await giveBack(totals, place)
      if (outcome === -2) throw new TaskStoreFullError(maxPerOwner, 'owner')
      if (outcome === 0) throw new Error(`Task id already in use: ${state.taskId}`)
      return state as TaskState<R>
    },

    async get<R>(taskId: string, owner: string): Promise<TaskState<R> | undefined> {
      const state = await read<R>(taskId, owner)
      if (state === undefined || state.owner !== owner || isPast(state)) return undefined
      return orphaned(state)
    },

    async update<R>(next: TaskState<R>): Promise<TaskState<R>> {
      // Compare-and-set on the status: another instance may have moved the task meanwhile.
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await read<R>(next.taskId, next.owner)
        if (current === undefined || current.owner !== next.owner || isPast(current)) throw new InvalidParamsError(`Invalid params: unknown task ${JSON.stringify(next.taskId)}`)
        if (!canTransition(current.status, next.status)) throw new TaskTransitionError(next.taskId, current.status, next.status)
        const stored: TaskState<R> = { ...next, taskId: current.taskId, owner: current.owner, createdAt: current.createdAt, ttlMs: current.ttlMs }
        if (!isTerminalStatus(stored.status)) { delete stored.result; delete stored.error }
        if (current.instance !== undefined) (stored as StoredTask<R>).instance = current.instance
        // The address it counts against stays, so deleting it frees the address's place.
        if (current.address !== undefined) (stored as StoredTask<R>).address = current.address
        const outcome = await redis.eval(COMPARE_AND_SET, { keys: [taskKey(next.taskId, next.owner)], arguments: [JSON.stringify(stored), current.status] })
        if (outcome === 1) return stored
        if (outcome === 0) throw new InvalidParamsError(`Invalid params: unknown task ${JSON.stringify(next.taskId)}`)
      }
      throw new Error(`Task ${next.taskId} kept changing while it was updated`)
    },

    async list(owner: string, cursor?: string): Promise<TaskPage> {
      let after = 0
      if (cursor !== undefined) {
        after = Number(cursor)
        if (!/^\d+$/.test(cursor) || !Number.isSafeInteger(after)) throw new InvalidParamsError('Invalid params: unknown cursor')
      }
      const tasks: TaskState<unknown>[] = []
      let last = after
      // Expired tasks still in the index are skipped (and dropped from it); a page is filled from later ones.
      while (tasks.length < pageSize) {
        const entries = await redis.zRangeByScoreWithScores(ownerKey(owner), `(${last}`, '+inf', { LIMIT: { offset: 0, count: pageSize } })
        if (entries.length === 0) break
        // One round trip for the page's tasks, not one per task.
        const texts = await redis.mGet(entries.map(entry => taskKey(entry.value, owner)))
        for (const [index, { value: taskId, score }] of entries.entries()) {
          last = score
          const text = texts[index]
          const state = text === null || text === undefined ? undefined : JSON.parse(text) as StoredTask<unknown>
          if (state === undefined || isPast(state) || state.owner !== owner) { await redis.zRem(ownerKey(owner), taskId); continue }
          tasks.push(await orphaned(state))
          if (tasks.length === pageSize) break
        }
      }
      const hasMore = tasks.length === pageSize && (await redis.zRangeByScore(ownerKey(owner), `(${last}`, '+inf', { LIMIT: { offset: 0, count: 1 } })).length > 0
      return hasMore ? { tasks, nextCursor: String(last) } : { tasks }
    },

    async delete(taskId: string, owner: string): Promise<boolean> {
      const state = await read(taskId, owner)
      if (state === undefined || state.owner !== owner) return false
      // One key per command: on a cluster they are on two slots.
      await Promise.all([
        redis.del(taskKey(taskId, owner)), redis.zRem(ownerKey(owner), taskId), redis.zRem(allKey, member(taskId, owner)),
        ...(state.address === undefined ? [] : [redis.zRem(addressKey(state.address), member(taskId, owner))]),
      ])
      return true
    },

    /** The store keeps nothing in this process; closing the Redis connection is its owner's business. */
    async close(): Promise<void> {},
  }

  /** Gives back the places a task took in the totals (`RESERVE`) when it was not stored after all. */
  async function giveBack(totals: string[], place: string): Promise<void> {
    await Promise.all(totals.map(key => redis.zRem(key, place))).catch(() => {})
  }

  /** The task, failed first if the instance running it is gone (see `instance`). */
  async function orphaned<R>(state: StoredTask<R>): Promise<TaskState<R>> {
    const instance = state.instance
    const self = options.instance
    if (self === undefined || instance === undefined || instance === self.id || isTerminalStatus(state.status)) return state
    if (await self.isAlive(instance).catch(() => true)) return state
    const at = now()
    const failed: TaskState<R> = {
      ...state, status: 'failed', lastUpdatedAt: at, statusMessage: 'The server instance running this task stopped',
      error: { code: -32603, message: 'Internal error: the server instance running this task stopped before it finished' },
    }
    delete failed.inputRequests
    const outcome = await redis.eval(COMPARE_AND_SET, { keys: [taskKey(state.taskId, state.owner)], arguments: [JSON.stringify(failed), state.status] })
    // Another instance moved it meanwhile: what it stored is the truth.
    return outcome === 1 ? failed : (await read<R>(state.taskId, state.owner)) ?? failed
  }
}
