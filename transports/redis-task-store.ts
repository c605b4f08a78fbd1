/**
 * A {@link TaskStore} on Redis: tasks outlive the instance that created them, and any instance
 * sharing the Redis answers tasks/get, tasks/result and tasks/list for them. Each task is one key
 * (JSON, expiring with the task's ttl); each owner's tasks are a sorted set in creation order; a
 * status change is a compare-and-set on the stored status (a Lua script), so two instances cannot
 * both move a task out of the same state.
 */
import { InvalidParamsError } from '../lib/jsonrpc/errors.ts'
import { TASK_DEFAULTS, TaskTransitionError, canTransition, isTerminalStatus, type TaskState } from '../actors/tasks/task.ts'
import { TaskStoreFullError, randomTaskId, retentionFor, type TaskCreate, type TaskPage, type TaskStore, type TaskStoreLimits } from '../actors/tasks/store.ts'
import type { RedisLike } from './redis.ts'

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

export const REDIS_TASK_STORE_DEFAULTS = {
  prefix: 'rxmcp:', maxTasks: 100_000, maxTasksPerOwner: 1_000, defaultTtlMs: TASK_DEFAULTS.ttlMs, maxTtlMs: 24 * 3_600_000,
  pollIntervalMs: TASK_DEFAULTS.pollIntervalMs, pageSize: 50,
} as const

/** A task as stored: with the instance running it, in the scale-out (see `instance`). */
type StoredTask<R> = TaskState<R> & { instance?: string }

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
  const taskKey = (taskId: string) => `${prefix}task:${taskId}`
  const ownerKey = (owner: string) => `${prefix}owner-tasks:${owner}`
  const allKey = `${prefix}tasks`
  const seqKey = `${prefix}task-seq`
  const ttlFor = (requested: number | null | undefined): number | null => retentionFor(requested,
    options.defaultTtlMs === undefined ? defaults.defaultTtlMs : options.defaultTtlMs, options.maxTtlMs === undefined ? defaults.maxTtlMs : options.maxTtlMs)
  const read = async <R>(taskId: string): Promise<StoredTask<R> | undefined> => {
    const text = await redis.get(taskKey(taskId))
    return text === null ? undefined : JSON.parse(text) as StoredTask<R>
  }
  const isPast = (state: TaskState<unknown>) => state.ttlMs !== null && now() >= state.createdAt + state.ttlMs

  return {
    async create<R>(init: TaskCreate): Promise<TaskState<R>> {
      const at = now()
      // Forget what expired (the keys went by themselves; the indexes are swept here).
      await redis.zRemRangeByScore(allKey, '-inf', at)
      const maxTasks = options.maxTasks ?? defaults.maxTasks
      if (await redis.zCard(allKey) >= maxTasks) throw new TaskStoreFullError(maxTasks, 'store')
      const maxPerOwner = options.maxTasksPerOwner ?? defaults.maxTasksPerOwner
      if (await redis.zCard(ownerKey(init.owner)) >= maxPerOwner) {
        await sweepOwner(init.owner)
        if (await redis.zCard(ownerKey(init.owner)) >= maxPerOwner) throw new TaskStoreFullError(maxPerOwner, 'owner')
      }
      const state: TaskState<unknown> = {
        taskId: randomTaskId(), owner: init.owner, status: 'working', createdAt: at, lastUpdatedAt: at,
        ttlMs: ttlFor(init.ttlMs), pollIntervalMs: init.pollIntervalMs ?? options.pollIntervalMs ?? defaults.pollIntervalMs,
      }
      if (init.statusMessage !== undefined) state.statusMessage = init.statusMessage
      const seq = await redis.incr(seqKey)
      const record: StoredTask<unknown> = options.instance === undefined ? state : { ...state, instance: options.instance.id }
      const stored = await redis.set(taskKey(state.taskId), JSON.stringify(record), { NX: true, ...(state.ttlMs === null ? {} : { PX: Math.max(1, state.ttlMs) }) })
      if (stored === null) throw new Error(`Task id generator returned an id in use: ${state.taskId}`)
      await Promise.all([
        redis.zAdd(ownerKey(init.owner), { score: seq, value: state.taskId }),
        redis.zAdd(allKey, { score: state.ttlMs === null ? Number.MAX_SAFE_INTEGER : at + state.ttlMs, value: state.taskId }),
      ])
      return state as TaskState<R>
    },

    async get<R>(taskId: string, owner: string): Promise<TaskState<R> | undefined> {
      const state = await read<R>(taskId)
      if (state === undefined || state.owner !== owner || isPast(state)) return undefined
      return orphaned(state)
    },

    async update<R>(next: TaskState<R>): Promise<TaskState<R>> {
      // Compare-and-set on the status: another instance may have moved the task meanwhile.
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await read<R>(next.taskId)
        if (current === undefined || current.owner !== next.owner || isPast(current)) throw new InvalidParamsError(`Invalid params: unknown task ${JSON.stringify(next.taskId)}`)
        if (!canTransition(current.status, next.status)) throw new TaskTransitionError(next.taskId, current.status, next.status)
        const stored: TaskState<R> = { ...next, taskId: current.taskId, owner: current.owner, createdAt: current.createdAt, ttlMs: current.ttlMs }
        if (!isTerminalStatus(stored.status)) { delete stored.result; delete stored.error }
        if (current.instance !== undefined) (stored as StoredTask<R>).instance = current.instance
        const outcome = await redis.eval(COMPARE_AND_SET, { keys: [taskKey(next.taskId)], arguments: [JSON.stringify(stored), current.status] })
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
        const texts = await redis.mGet(entries.map(entry => taskKey(entry.value)))
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
      const state = await read(taskId)
      if (state === undefined || state.owner !== owner) return false
      await Promise.all([redis.del(taskKey(taskId)), redis.zRem(ownerKey(owner), taskId), redis.zRem(allKey, taskId)])
      return true
    },

    /** The store keeps nothing in this process; closing the Redis connection is its owner's business. */
    async close(): Promise<void> {},
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
    const outcome = await redis.eval(COMPARE_AND_SET, { keys: [taskKey(state.taskId)], arguments: [JSON.stringify(failed), state.status] })
    // Another instance moved it meanwhile: what it stored is the truth.
    return outcome === 1 ? failed : (await read<R>(state.taskId)) ?? failed
  }

  async function sweepOwner(owner: string): Promise<void> {
    for (const taskId of await redis.zRangeByScore(ownerKey(owner), '-inf', '+inf')) {
      if (await redis.get(taskKey(taskId)) === null) await redis.zRem(ownerKey(owner), taskId)
    }
  }
}
