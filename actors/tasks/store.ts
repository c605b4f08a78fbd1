import { asyncScheduler, type SchedulerLike, type Subscription } from '../../lib/rx.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { TASK_DEFAULTS, TaskTransitionError, canTransition, isTerminalStatus, type TaskState } from '../../lib/tasks/state.ts'
import { TaskStoreFullError, randomTaskId, retentionFor, type TaskCreate, type TaskPage, type TaskStore, type TaskStoreLimits } from '../../lib/tasks/store.ts'
export { TASK_STORE_FULL_ERROR_CODE, TaskStoreFullError, randomTaskId, retentionFor, type TaskCreate, type TaskPage, type TaskStore, type TaskStoreLimits } from '../../lib/tasks/store.ts'

/** Defaults of {@link createMemoryTaskStore}. */
export const MEMORY_TASK_STORE_DEFAULTS = {
  /** The most tasks held at once, all owners together. */
  maxTasks: 10_000,
  /** The most tasks held at once per owner (MCP 2025-11-25: receivers SHOULD limit tasks per requestor). */
  maxTasksPerOwner: 1_000,
  /** The most tasks held at once per client address (tasks created with an `address`: anonymous callers). */
  maxTasksPerAddress: 1_000,
  /** The retention when none is asked for: 15 minutes (from creation, running time included). */
  defaultTtlMs: TASK_DEFAULTS.ttlMs,
  /**
   * The longest retention granted: one hour (MCP 2025-11-25: receivers MAY override the requested
   * ttl). A task's work is stopped when its ttl ends, so this also bounds how long a handler runs.
   */
  maxTtlMs: 3_600_000,
  pollIntervalMs: TASK_DEFAULTS.pollIntervalMs,
  /** Tasks per page of `list`. */
  pageSize: 50,
} as const

/** Options of {@link createMemoryTaskStore}; see {@link MEMORY_TASK_STORE_DEFAULTS}. */
export interface MemoryTaskStoreOptions extends TaskStoreLimits {
  /** The clock and the expiry timers; default `asyncScheduler`. */
  scheduler?: SchedulerLike
  /** Makes task ids; default 16 random bytes from Web Crypto as base64url. */
  idGenerator?: () => string
}

/**
 * An in-memory {@link TaskStore}: bounded in size, each task deleted `ttl` after its creation by a
 * timer on the scheduler (and never returned once past it, even if the timer is late).
 * @example
 * const store = createMemoryTaskStore({ maxTasks: 1000 })
 * const task = await store.create({ owner: session.id, ttlMs: params.task.ttl })
 */
export function createMemoryTaskStore(options: MemoryTaskStoreOptions = {}): TaskStore {
  return new MemoryTaskStore(options)
}

interface Entry {
  state: TaskState<unknown>
  /** The address key it counts against, if any. */
  address?: string
  /** Creation order, for pagination cursors that survive deletions. */
  seq: number
  expiry?: Subscription
}

class MemoryTaskStore implements TaskStore {
  readonly #options: Required<Omit<MemoryTaskStoreOptions, 'defaultTtlMs' | 'maxTtlMs'>> & { defaultTtlMs: number | null; maxTtlMs: number | null }
  /** Every task by id. */
  readonly #byId = new Map<string, Entry>()
  /** Each owner's tasks by id, in creation order. */
  readonly #byOwner = new Map<string, Map<string, Entry>>()
  /** How many tasks each client address holds (only addresses holding some). */
  readonly #byAddress = new Map<string, number>()
  /** The sequence number of the next task created. */
  #nextSeq = 1

  constructor(options: MemoryTaskStoreOptions) {
    const defaults = MEMORY_TASK_STORE_DEFAULTS
    this.#options = {
      maxTasks: options.maxTasks ?? defaults.maxTasks,
      maxTasksPerOwner: options.maxTasksPerOwner ?? defaults.maxTasksPerOwner,
      maxTasksPerAddress: options.maxTasksPerAddress ?? defaults.maxTasksPerAddress,
      defaultTtlMs: options.defaultTtlMs === undefined ? defaults.defaultTtlMs : options.defaultTtlMs,
      maxTtlMs: options.maxTtlMs === undefined ? defaults.maxTtlMs : options.maxTtlMs,
      pollIntervalMs: options.pollIntervalMs ?? defaults.pollIntervalMs,
      pageSize: options.pageSize ?? defaults.pageSize,
      scheduler: options.scheduler ?? asyncScheduler,
      idGenerator: options.idGenerator ?? randomTaskId,
    }
  }

  #ttlFor(requested: number | null | undefined): number | null {
    return retentionFor(requested, this.#options.defaultTtlMs, this.#options.maxTtlMs)
  }

  async create<R>(init: TaskCreate): Promise<TaskState<R>> {
    const { maxTasks, maxTasksPerOwner, maxTasksPerAddress, scheduler } = this.#options
    if (this.#byId.size >= maxTasks) throw new TaskStoreFullError(maxTasks, 'store')
    const owned = this.#byOwner.get(init.owner)
    if (owned !== undefined && owned.size >= maxTasksPerOwner) throw new TaskStoreFullError(maxTasksPerOwner, 'owner')
    const address = init.address
    if (address !== undefined && (this.#byAddress.get(address) ?? 0) >= maxTasksPerAddress) throw new TaskStoreFullError(maxTasksPerAddress, 'address')
    const taskId = init.taskId ?? this.#options.idGenerator()
    // Ids MUST be unique among the receiver's tasks; with 128 random bits a clash means a bad generator.
    if (this.#byId.has(taskId)) throw new Error(`Task id already in use: ${taskId}`)
    const now = scheduler.now()
    const state: TaskState<unknown> = {
      taskId,
      owner: init.owner,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: this.#ttlFor(init.ttlMs),
      pollIntervalMs: init.pollIntervalMs ?? this.#options.pollIntervalMs,
    }
    if (init.statusMessage !== undefined) state.statusMessage = init.statusMessage
    const entry: Entry = { state, seq: this.#nextSeq++ }
    if (address !== undefined) {
      entry.address = address
      this.#byAddress.set(address, (this.#byAddress.get(address) ?? 0) + 1)
    }
    if (state.ttlMs !== null) entry.expiry = scheduler.schedule(() => this.#remove(taskId), state.ttlMs)
    this.#byId.set(taskId, entry)
    if (owned === undefined) this.#byOwner.set(init.owner, new Map([[taskId, entry]]))
    else owned.set(taskId, entry)
    return { ...state } as TaskState<R>
  }

  /** The live entry of an owner's task, dropping it if its ttl has passed. */
  #find(taskId: string, owner: string): Entry | undefined {
    const entry = this.#byId.get(taskId)
    if (entry === undefined || entry.state.owner !== owner) return undefined
    if (this.#isPast(entry)) {
      this.#remove(taskId)
      return undefined
    }
    return entry
  }

  #isPast(entry: Entry): boolean {
    const { ttlMs, createdAt } = entry.state
    return ttlMs !== null && this.#options.scheduler.now() >= createdAt + ttlMs
  }

  #remove(taskId: string): boolean {
    const entry = this.#byId.get(taskId)
    if (entry === undefined) return false
    entry.expiry?.unsubscribe()
    this.#byId.delete(taskId)
    const owned = this.#byOwner.get(entry.state.owner)
    owned?.delete(taskId)
    if (owned?.size === 0) this.#byOwner.delete(entry.state.owner)
    if (entry.address !== undefined) {
      const held = (this.#byAddress.get(entry.address) ?? 1) - 1
      if (held === 0) this.#byAddress.delete(entry.address)
      else this.#byAddress.set(entry.address, held)
    }
    return true
  }

  async get<R>(taskId: string, owner: string): Promise<TaskState<R> | undefined> {
    const entry = this.#find(taskId, owner)
    return entry === undefined ? undefined : { ...entry.state } as TaskState<R>
  }

  async update<R>(state: TaskState<R>): Promise<TaskState<R>> {
    const entry = this.#find(state.taskId, state.owner)
    if (entry === undefined) throw new InvalidParamsError('Task not found')
    const stored = entry.state
    if (!canTransition(stored.status, state.status)) throw new TaskTransitionError(stored.taskId, stored.status, state.status)
    const next: TaskState<unknown> = { ...state, taskId: stored.taskId, owner: stored.owner, createdAt: stored.createdAt, ttlMs: stored.ttlMs }
    if (!isTerminalStatus(next.status)) {
      delete next.result
      delete next.error
    }
    entry.state = next
    return { ...next } as TaskState<R>
  }

  async list(owner: string, cursor?: string): Promise<TaskPage> {
    const after = cursor === undefined ? 0 : decodeCursor(cursor)
    if (after === undefined) throw new InvalidParamsError('Invalid cursor')
    const tasks: TaskState[] = []
    const owned = this.#byOwner.get(owner)
    let hasMore = false
    let lastSeq = after
    for (const entry of owned?.values() ?? []) {
      if (entry.seq <= after || this.#isPast(entry)) continue
      if (tasks.length === this.#options.pageSize) { hasMore = true; break }
      tasks.push({ ...entry.state })
      lastSeq = entry.seq
    }
    return hasMore ? { tasks, nextCursor: encodeCursor(lastSeq) } : { tasks }
  }

  async delete(taskId: string, owner: string): Promise<boolean> {
    return this.#find(taskId, owner) !== undefined && this.#remove(taskId)
  }

  async close(): Promise<void> {
    for (const entry of this.#byId.values()) entry.expiry?.unsubscribe()
    this.#byId.clear()
    this.#byOwner.clear()
    this.#byAddress.clear()
  }
}

// A cursor is the creation sequence number of the last task of the page, as base64url text.
function encodeCursor(seq: number): string {
  return btoa(`t${seq}`).replace(/=+$/, '')
}

function decodeCursor(cursor: string): number | undefined {
  let text: string
  try { text = atob(cursor) } catch { return undefined }
  const match = /^t(\d{1,15})$/.exec(text)
  return match === null ? undefined : Number(match[1])
}
