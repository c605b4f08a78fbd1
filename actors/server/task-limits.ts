/** The bounds on tasks running at once in one server process (see ServerTaskOptions). */

/** Defaults of the running-task bounds of {@link ServerTaskOptions}. */
export const SERVER_TASKS_DEFAULTS = {
  /**
   * Tasks running at once in this process, all callers together: each is a handler at work, so
   * this bounds the CPU and memory tasks can take whatever the store holds.
   */
  maxRunningTasks: 1_000,
  /** Tasks running at once for one owner (a principal, a session). */
  maxRunningTasksPerOwner: 100,
  /** Tasks running at once for one client address (anonymous callers; see `clientAddressKey`). */
  maxRunningTasksPerAddress: 100,
} as const

/** String code of {@link TooManyRunningTasksError}. */
export const TOO_MANY_RUNNING_TASKS_ERROR_CODE = 'RXMCP_ERR_TOO_MANY_RUNNING_TASKS'

/** As many tasks run in this process as may (in all, for this owner, or for this client address); no task was created. */
export class TooManyRunningTasksError extends Error {
  override name = 'TooManyRunningTasksError'
  readonly code = TOO_MANY_RUNNING_TASKS_ERROR_CODE
  constructor(readonly limit: number, readonly scope: 'process' | 'owner' | 'address', options?: { cause?: unknown }) {
    super(`Too many running tasks ${scope === 'process' ? 'on this server' : `for this ${scope === 'owner' ? 'requestor' : 'client address'}`} (${limit})`, options)
  }
}

/** Adds `delta` to `key`'s count, dropping keys that reach 0 (the maps hold only keys with some). */
export function count(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta
  if (next <= 0) counts.delete(key)
  else counts.set(key, next)
}

