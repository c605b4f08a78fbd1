/**
 * One configured server under the host's supervision, as actor logic: the supervisor parents the
 * server's run (start the client, list its offer, watch it; see host/server-run.ts) as a child
 * with `restart` supervision, so the kernel restarts it by the host's backoff policy on the host's
 * scheduler, and the supervisor turns what it hears into the server's state for its parent, the
 * host actor. The transition is pure: tested by a table, nothing run.
 *
 * ```
 *   run --> starting(1) --ready--> ready --crash--> restarting(2, reason, delay) --wait--> starting(2) ...
 *              '--crash (could not start, start timeout)--'                                    |
 *   retries + 1 crashes in a row (a run that lasted stableMs starts the count over) --> failed(reason, stderr)
 *   stopped by the host (its children first: the run, which closes its client) --> stopped
 * ```
 */
import { NONE, effect, type ActorLogic, type AnyActorLogic, type ChildMessage, type Step } from '../actors/actor.ts'
import { backoff, type Backoff, type BackoffOptions } from '../lib/operators/retry-policy.ts'
import type { Implementation } from '../lib/schema/types.ts'
import type { McpClient } from '../actors/client.ts'

/** A supervised server's state. */
export type ServerState =
  | { readonly status: 'starting'; readonly attempt: number }
  | { readonly status: 'ready'; readonly serverInfo: Implementation }
  | { readonly status: 'restarting'; readonly attempt: number; readonly reason: string; readonly delayMs: number }
  | { readonly status: 'failed'; readonly reason: string; readonly stderr: readonly string[] }
  | { readonly status: 'stopped' }

/** A started client. */
export interface StartedClient {
  readonly client: McpClient
  /** The child's process id (stdio servers). */
  readonly pid?: number
}

/**
 * How restarts go (see HostOptions.restart): the one retry policy (`initial` ms before the first
 * restart, multiplied by `factor` each time up to `max`, spread by `jitter`; `retries` restarts in
 * a row, and the crash after them marks the server failed), and two limits of a run.
 */
export type RestartPolicy = BackoffOptions & {
  /** Ms a run must last for its crash count to start again from zero (default 60 s). */
  stableMs?: number
  /** Ms a start (spawn or connect, then the handshake) may take before it counts as a crash (default 30 s). */
  startTimeoutMs?: number
}

/** A restart policy with every field set. */
export type FullRestartPolicy = Backoff & { readonly stableMs: number; readonly startTimeoutMs: number }

/** DEFAULTS of the restart policy: 500 ms doubling to 30 s, no jitter, 5 restarts in a row, stable after 60 s, 30 s to start. */
export const RESTART_DEFAULTS: FullRestartPolicy = Object.freeze({ initial: 500, max: 30_000, factor: 2, jitter: 0, retries: 5, stableMs: 60_000, startTimeoutMs: 30_000 })

/** `policy` over {@link RESTART_DEFAULTS}, checked (see `backoff`). */
export function restartPolicy(policy: RestartPolicy = {}): FullRestartPolicy {
  const stableMs = policy.stableMs ?? RESTART_DEFAULTS.stableMs
  const startTimeoutMs = policy.startTimeoutMs ?? RESTART_DEFAULTS.startTimeoutMs
  if (!(stableMs >= 0)) throw new RangeError(`restart: stableMs must be a number >= 0, not ${stableMs}`)
  if (!(startTimeoutMs > 0)) throw new RangeError(`restart: startTimeoutMs must be a number > 0, not ${startTimeoutMs}`)
  return Object.freeze({ ...backoff(policy, RESTART_DEFAULTS), stableMs, startTimeoutMs })
}

/** What a server's run tells its supervisor, as it happens. */
export type RunEvent =
  /** A run began (the first, or a restart after its wait). */
  | { readonly type: 'starting' }
  /** A piece of the child's stderr (stdio servers), from the spawn on, across restarts. */
  | { readonly type: 'stderr'; readonly chunk: string }
  /** The client is connected (its handshake done); its offer is being listed. */
  | { readonly type: 'connected'; readonly client: McpClient; readonly pid?: number }
  /** One kind of the offer, as listed now (the newest listing; see host/server-run.ts). */
  | { readonly type: 'offer'; readonly kind: 'tools' | 'resources' | 'prompts'; readonly items: readonly unknown[] }
  /** Every kind is listed once: the server is ready. */
  | { readonly type: 'ready'; readonly serverInfo: Implementation }

/** What a supervisor takes: `run` from its owner, what its run tells it, and what the runtime says of the run. */
export type SupervisorMessage = { readonly type: 'run' } | RunEvent | ChildMessage

/** What a supervisor tells its parent (the host actor). */
export type SupervisorReport =
  | { readonly type: 'server'; readonly name: string; readonly state: ServerState; readonly client?: McpClient; readonly pid?: number }
  | { readonly type: 'offer'; readonly name: string; readonly kind: 'tools' | 'resources' | 'prompts'; readonly items: readonly unknown[] }

/** A supervisor's state. */
export interface SupervisorState {
  readonly server: ServerState
  /** The start attempt under way or next (1 for the first; the count starts over after a stable run). */
  readonly attempt: number
  /** The connected client and its process id, while a run has one. */
  readonly client?: McpClient
  readonly pid?: number
  /** The child's last {@link STDERR_LINES} stderr lines, kept across restarts; and the line still being written. */
  readonly stderr: readonly string[]
  readonly partial: string
}

/** stderr lines kept per server for a failed state. */
export const STDERR_LINES = 20

/** The id of the run among the supervisor's children. */
export const RUN_ID = 'client'

/**
 * The supervisor of server `name`: spawns `run` (the logic of one run of the server's client) on
 * `{ type: 'run' }` with `restart` supervision by `policy`, and tells its parent the server's state
 * at each change (`{ type: 'server' }`) and each listing of its offer (`{ type: 'offer' }`).
 */
export function supervisorLogic(name: string, run: AnyActorLogic, policy: FullRestartPolicy): ActorLogic<SupervisorState, SupervisorMessage> {
  const report = (state: SupervisorState): Step<SupervisorState> => [state, [effect.sendParent({
    type: 'server', name, state: state.server, ...(state.client === undefined ? {} : { client: state.client, pid: state.pid }),
  } satisfies SupervisorReport)]]
  return {
    name: 'supervisor',
    initial: () => ({ server: { status: 'starting', attempt: 1 }, attempt: 1, stderr: [], partial: '' }),
    transition: (state, message): Step<SupervisorState> => {
      switch (message.type) {
        case 'run': return [state, [effect.spawn(RUN_ID, run, { supervision: { strategy: 'restart', backoff: policy, stableMs: policy.stableMs } })]]
        case 'starting': return report({ ...state, server: { status: 'starting', attempt: state.attempt } })
        case 'stderr': return [{ ...state, ...collectLines(state.stderr, state.partial, message.chunk) }, NONE]
        case 'connected': return report({ ...state, client: message.client, pid: message.pid })
        case 'offer': return [state, [effect.sendParent({ type: 'offer', name, kind: message.kind, items: message.items } satisfies SupervisorReport)]]
        case 'ready': return report({ ...state, server: { status: 'ready', serverInfo: message.serverInfo } })
        case 'rxmcp.child.restarting': {
          // The kernel counts restarts in a row (from 1, again after a stable run); attempt 1 is the first start.
          const attempt = message.attempt + 1
          return report({ ...state, attempt, client: undefined, pid: undefined, server: { status: 'restarting', attempt, reason: reasonOf(message.error), delayMs: message.delay } })
        }
        case 'rxmcp.child.error': {
          // The kernel gives up on the crash after `retries` restarts in a row (after a stable run, on the first when retries is 0).
          const reason = `${reasonOf(message.error)} (${policy.retries + 1} times in a row)`
          return report({ ...state, client: undefined, pid: undefined, server: { status: 'failed', reason, stderr: state.stderr } })
        }
        // A run never ends by itself (its client closing is a crash).
        case 'rxmcp.child.done': return [state, NONE]
      }
    },
  }
}

/** `lines` with the complete lines of `partial + chunk` added (blank ones left out), the last {@link STDERR_LINES} kept. */
export function collectLines(lines: readonly string[], partial: string, chunk: string): { stderr: readonly string[]; partial: string } {
  const split = (partial + chunk).split('\n')
  const rest = split.pop() ?? ''
  const added = split.filter(line => line.trim() !== '')
  if (added.length === 0) return { stderr: lines, partial: rest }
  return { stderr: [...lines, ...added].slice(-STDERR_LINES), partial: rest }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
