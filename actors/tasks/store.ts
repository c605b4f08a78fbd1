import { asyncScheduler, type SchedulerLike, type Subscription } from '../../lib/rx.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { TASK_DEFAULTS, TaskTransitionError, canTransition, isTerminalStatus, type TaskState } from './task.ts'
import { randomId } from '../../lib/base64url.ts'

/** What a task is created with; the store sets its status (`working`) and times, and its id unless given. */
export interface TaskCreate {
  /** Who may read, wait for and cancel the task: every read and write names it, and another owner finds nothing. */
  owner: string
  /**
   * The id the task is to have, made by the caller (unguessable: {@link randomTaskId}) when the
   * owner is derived from it (an anonymous caller without a session owns `anonymous:<taskId>`:
   * holding the id is its only proof). A store MUST use it when given; one already in use rejects.
   */
  taskId?: string
  /**
   * The client's address key ({@link clientAddressKey}), when the task is to count against its
   * address's quota too (anonymous callers: they have no identity a quota could hold on to).
   */
  address?: string
  /** The requested retention from creation (MCP 2025-11-25 `params.task.ttl`); the store may lower it. */
  ttlMs?: number | null
  pollIntervalMs?: number
  statusMessage?: string
}

/** One page of {@link TaskStore.list}. */
export interface TaskPage<R = unknown> {
  tasks: TaskState<R>[]
  /** Present when more tasks follow; opaque. */
  nextCursor?: string
}

/**
 * Where tasks live, apart from any connection: a client may drop, reconnect and poll. Promise-based,
 * so a store on Redis fits the same interface. Every read takes the owner, and a task of another
 * owner is not found (MCP 2025-11-25 "Task Isolation and Access Control").
 * @see createMemoryTaskStore
 */
export interface TaskStore {
  /**
   * Creates a task in `working` with an unguessable id. Resolves once the task is stored (so the
   * caller may answer with CreateTaskResult); rejects with {@link TaskStoreFullError} past a bound.
   */
  create<R = unknown>(init: TaskCreate): Promise<TaskState<R>>
  /** The task with this id if `owner` owns it and it has not expired; else undefined. */
  get<R = unknown>(taskId: string, owner: string): Promise<TaskState<R> | undefined>
  /**
   * Stores a newer state of a task (status, status message, times, result or error; its id, owner,
   * creation time and ttl stay). Rejects with InvalidParamsError when the task is not found for
   * that owner, and with {@link TaskTransitionError} when the stored status may not go to the new one
   * (a terminal task is final).
   */
  update<R = unknown>(state: TaskState<R>): Promise<TaskState<R>>
  /** The owner's tasks, oldest first, a page at a time; an unknown cursor rejects with InvalidParamsError. */
  list(owner: string, cursor?: string): Promise<TaskPage>
  /** Deletes a task; resolves whether there was one for that owner. */
  delete(taskId: string, owner: string): Promise<boolean>
  /** Drops every task and cancels the expiry timers. */
  close(): Promise<void>
}

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

/** The bounds every task store keeps (memory, Redis). */
export interface TaskStoreLimits {
  maxTasks?: number
  maxTasksPerOwner?: number
  /** The most tasks held at once per client address (counted for tasks created with `address`). */
  maxTasksPerAddress?: number
  /** `null` grants unlimited retention when none is asked for (only if `maxTtlMs` is null too). */
  defaultTtlMs?: number | null
  /** `null` allows unlimited retention. */
  maxTtlMs?: number | null
  pollIntervalMs?: number
  pageSize?: number
}

/** The retention a task gets: the one asked for (else the default), at most the maximum. */
export function retentionFor(requested: number | null | undefined, defaultTtlMs: number | null, maxTtlMs: number | null): number | null {
  const ttl = requested === undefined || requested === null ? defaultTtlMs : Math.max(0, requested)
  if (maxTtlMs === null) return ttl
  return ttl === null ? maxTtlMs : Math.min(ttl, maxTtlMs)
}

/** Options of {@link createMemoryTaskStore}; see {@link MEMORY_TASK_STORE_DEFAULTS}. */
export interface MemoryTaskStoreOptions extends TaskStoreLimits {
  /** The clock and the expiry timers; default `asyncScheduler`. */
  scheduler?: SchedulerLike
  /** Makes task ids; default 16 random bytes from Web Crypto as base64url. */
  idGenerator?: () => string
}

/** String code of {@link TaskStoreFullError}. */
export const TASK_STORE_FULL_ERROR_CODE = 'RXMCP_ERR_TASK_STORE_FULL'

/** The store holds as many tasks as it may (in all, for this owner, or for this client address); no task was created. */
export class TaskStoreFullError extends Error {
  override name = 'TaskStoreFullError'
  readonly code = TASK_STORE_FULL_ERROR_CODE
  constructor(readonly limit: number, readonly scope: 'store' | 'owner' | 'address', options?: { cause?: unknown }) {
    super(scope === 'store' ? `Task store is full (${limit} tasks)` : scope === 'owner' ? `Too many tasks for this requestor (${limit})` : `Too many tasks for this client address (${limit})`, options)
  }
}

/**
 * 16 random bytes from the platform's CSPRNG as base64url: 128 bits, so a task id cannot be guessed
 * (MCP 2025-11-25: receivers MUST generate cryptographically secure task ids).
 */
export function randomTaskId(): string {
  return randomId(16)
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
