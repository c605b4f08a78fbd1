import { retry, throwError, timer, type MonoTypeOperatorFunction, type Observable, type SchedulerLike } from '../rx.ts'

/**
 * The one retry policy of rxmcp: every reconnect (client, HTTP streams, WebSocket) and every
 * restart (a supervised child, a host's server) waits by it. Wait number `attempt` (0 for the
 * first) is `initial x factor^attempt`, capped at `max`, then spread by `jitter`; after `retries`
 * attempts in a row the retrying stops.
 */
export interface Backoff {
  /** The first wait, in milliseconds. */
  readonly initial: number
  /** The longest wait, in milliseconds. */
  readonly max: number
  /** What each wait is multiplied by (2: doubling). */
  readonly factor: number
  /**
   * The spread, from 0 (every wait exact) to 1: a wait `w` becomes a value in `[w x (1 - jitter), w]`,
   * so many clients dropped at once do not come back at once.
   */
  readonly jitter: number
  /** How many attempts in a row before giving up (`Infinity`: never). */
  readonly retries: number
}

/** What a user or a default sets of a {@link Backoff}; the rest comes from the defaults. */
export type BackoffOptions = Partial<Backoff>

/** DEFAULTS of {@link backoff}: 500 ms doubling to 30 s, no jitter, 10 attempts. */
export const BACKOFF_DEFAULTS: Backoff = Object.freeze({ initial: 500, max: 30_000, factor: 2, jitter: 0, retries: 10 })

/**
 * A retry policy: `options` over `defaults` (a transport's or the host's own), each field checked:
 * a negative, NaN or infinite wait, a factor below 1 or a jitter outside [0, 1] is a RangeError
 * here rather than a spinning loop later.
 *
 * @example
 * const policy = backoff({ initial: 1_000, retries: 5 })
 * backoffDelay(policy, 0) // 1000
 * backoffDelay(policy, 3) // 8000
 */
export function backoff(options: BackoffOptions = {}, defaults: Backoff = BACKOFF_DEFAULTS): Backoff {
  const policy: Backoff = {
    initial: options.initial ?? defaults.initial,
    max: options.max ?? defaults.max,
    factor: options.factor ?? defaults.factor,
    jitter: options.jitter ?? defaults.jitter,
    retries: options.retries ?? defaults.retries,
  }
  if (!(policy.initial >= 0 && Number.isFinite(policy.initial))) throw new RangeError(`backoff: initial must be a finite number >= 0, not ${policy.initial}`)
  if (!(policy.max >= policy.initial && Number.isFinite(policy.max))) throw new RangeError(`backoff: max must be finite and >= initial, not ${policy.max}`)
  if (!(policy.factor >= 1 && Number.isFinite(policy.factor))) throw new RangeError(`backoff: factor must be a finite number >= 1, not ${policy.factor}`)
  if (!(policy.jitter >= 0 && policy.jitter <= 1)) throw new RangeError(`backoff: jitter must be within [0, 1], not ${policy.jitter}`)
  if (!(policy.retries >= 0) || (Number.isFinite(policy.retries) && !Number.isInteger(policy.retries))) throw new RangeError(`backoff: retries must be an integer >= 0 or Infinity, not ${policy.retries}`)
  return Object.freeze(policy)
}

/**
 * The wait before attempt `attempt` (0 for the first): `initial x factor^attempt` capped at `max`,
 * less a random share of up to `jitter` of it. `random` (default `Math.random`) is injectable so a
 * test can pin it.
 */
export function backoffDelay(policy: Backoff, attempt: number, random: () => number = Math.random): number {
  const exact = Math.min(policy.max, policy.initial * policy.factor ** Math.max(0, attempt))
  return policy.jitter === 0 ? exact : Math.round(exact * (1 - policy.jitter * random()))
}

/** Whether attempt `attempt` (0 for the first) is still within the policy's retries. */
export function canRetry(policy: Backoff, attempt: number): boolean {
  return attempt < policy.retries
}

/**
 * Waits the backoff of attempt `attempt` on `scheduler` (default async), then emits 0 and completes;
 * unsubscribing cancels the wait. Time comes only from the scheduler.
 */
export function backoffTimer(policy: Backoff, attempt: number, scheduler?: SchedulerLike): Observable<0> {
  return timer(backoffDelay(policy, attempt), scheduler)
}

/**
 * Resubscribes to the source when it errors, waiting by `policy` on `scheduler`, up to
 * `policy.retries` times in a row (the count starts over after a value, when `resetOnSuccess`);
 * `shouldRetry` may refuse an error, which then goes through at once.
 *
 * @example
 * connect$.pipe(retryWithBackoff(backoff({ initial: 1_000, retries: 5 })))
 */
export function retryWithBackoff<T>(
  policy: Backoff,
  options: { scheduler?: SchedulerLike; resetOnSuccess?: boolean; shouldRetry?: (error: unknown, attempt: number) => boolean } = {},
): MonoTypeOperatorFunction<T> {
  return retry<T>({
    count: policy.retries,
    resetOnSuccess: options.resetOnSuccess ?? false,
    delay: (error: unknown, count: number) => options.shouldRetry !== undefined && !options.shouldRetry(error, count - 1)
      ? throwError(() => error)
      : backoffTimer(policy, count - 1, options.scheduler),
  })
}
