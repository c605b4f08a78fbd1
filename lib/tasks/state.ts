import type { TaskStatus } from '../schema/types.ts'

/** The identifier of the MCP 2026-07-28 tasks extension. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/*
 * A task's data and the rules of its status (MCP 2025-11-25 basic/utilities/tasks): what the task
 * actor (actors/tasks/task.ts) steps and every task store (memory, Redis) keeps. Pure and a leaf,
 * so stores in transports/ and the actors share it without importing each other.
 */

/** A task's state: the wire fields (times in epoch ms), its owner, and its outcome once terminal. */
export interface TaskState<R = unknown> {
  taskId: string
  /** Who may see the task: the principal when authenticated, else the session. Never on the wire. */
  owner: string
  status: TaskStatus
  statusMessage?: string
  /** Epoch milliseconds, from the scheduler's clock. */
  createdAt: number
  /** Epoch milliseconds of the last change of status or status message. */
  lastUpdatedAt: number
  /** Retention from creation in milliseconds; `null` is unlimited (MCP 2025-11-25 Task.ttl). */
  ttlMs: number | null
  /** Suggested time between polls in milliseconds. */
  pollIntervalMs: number
  /** The underlying request's result: set on completed, and on failed when the result itself failed (a tool result with `isError`). */
  result?: R
  /** The underlying request's error: set on failed when it errored (a JSON-RPC error object, to be storable). */
  error?: unknown
  /**
   * The input requests outstanding while `input_required` (MCP 2026-07-28 tasks extension), by
   * key, each `{ method, params }`; cleared when the task leaves input_required.
   */
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>
}

/** The statuses a task never leaves. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled']

/** Whether a status is terminal (completed, failed or cancelled). */
export function isTerminalStatus(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled'
}

/**
 * Whether a task may go from one status to another. The same non-terminal status is allowed (a
 * status-message update); every other path follows MCP 2025-11-25 "Task Status Lifecycle".
 */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  if (isTerminalStatus(from)) return false
  if (from === to) return true
  if (to === 'working') return from === 'input_required'
  if (to === 'input_required') return from === 'working'
  return true
}

/** String code of {@link TaskTransitionError}. */
export const TASK_TRANSITION_ERROR_CODE = 'RXMCP_ERR_TASK_TRANSITION'

/** A message asked a task for a transition its state machine forbids; the state was left as it was. */
export class TaskTransitionError extends Error {
  override name = 'TaskTransitionError'
  readonly code = TASK_TRANSITION_ERROR_CODE
  constructor(readonly taskId: string, readonly from: TaskStatus, readonly messageType: string, options?: { cause?: unknown }) {
    super(`Task ${taskId}: '${messageType}' is not allowed in status '${from}'`, options)
  }
}

/** Defaults of a task: its retention and poll interval (`createTask`, the task stores). */
export const TASK_DEFAULTS = {
  /**
   * Retention from creation: 15 minutes. It counts from creation, running time included: enough
   * for a long tool call and a client that polls, reconnects or comes back, and short enough that
   * tasks nobody asks about again do not hold the store for long.
   */
  ttlMs: 15 * 60_000,
  /** Suggested poll interval: one second. */
  pollIntervalMs: 1_000,
} as const
