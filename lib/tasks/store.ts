import { randomId } from '../base64url.ts'
import type { TaskState } from './state.ts'

/*
 * The contract of a task store (memory in actors/tasks/store.ts, Redis in transports/), and what
 * every store shares: retention, the full-store error, task ids. A leaf: stores and the actors
 * that use them import it, never each other.
 */

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
