import { asyncScheduler, type SchedulerLike, type Subscription } from '../lib/rx.ts'
import { backoff, backoffDelay, type Backoff } from '../lib/operators/retry-policy.ts'
import { HTTP_CLIENT_DEFAULTS, type HttpClientOptions } from './http-client-options.ts'

/**
 * The reconnection policy of the HTTP client's SSE streams, shared by the resumption of a POST's
 * response stream and the standalone GET stream: how many attempts in a row, how long each waits
 * (the server's `retry`, else `lib/operators/retry-policy.ts`), and the wait itself, on the scheduler.
 */

/** The longest wait a timer holds (2^31 - 1 ms); Node fires a longer one at once. */
const MAX_WAIT_MS = 2 ** 31 - 1

/** The reconnection policy: `options.reconnect` over `HTTP_CLIENT_DEFAULTS.reconnect`, read when called. */
export function reconnectPolicy(options: HttpClientOptions): Backoff {
  return backoff(options.reconnect, HTTP_CLIENT_DEFAULTS.reconnect)
}

/** How many reconnection attempts in a row a dropped stream gets (`reconnect.retries`, default 5). */
export function maxReconnects(options: HttpClientOptions): number {
  return reconnectPolicy(options).retries
}

/**
 * The wait before reconnection `attempt` (0 for the first): the `retry` the server sent on the
 * stream, exactly, when it sent one; else the backoff of `reconnect` (defaults 1 s doubling up to
 * 30 s), read from `options` when called.
 */
export function reconnectDelay(options: HttpClientOptions, attempt: number, retry: number | undefined): number {
  // The server's retry is waited exactly, up to the longest wait a timer holds (about 24.8 days):
  // a larger one would fire at once and spin the reconnects.
  if (retry !== undefined) return Math.min(retry, MAX_WAIT_MS)
  return backoffDelay(reconnectPolicy(options), attempt)
}

/** Waits `ms` on the scheduler's clock (default `asyncScheduler`); aborting `signal` ends the wait at once. */
export function sleep(ms: number, scheduler: SchedulerLike | undefined, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    // The listener goes with the sleep: one left per sleep would pile up on the client's signal.
    // Unset while `schedule` runs: a scheduler may run the work at once.
    let timer: Subscription | undefined
    const wake = () => { timer?.unsubscribe(); signal.removeEventListener('abort', wake); resolve() }
    timer = (scheduler ?? asyncScheduler).schedule(wake, ms)
    signal.addEventListener('abort', wake, { once: true })
  })
}

/**
 * A signal aborted `ms` from now on the scheduler's clock (default `asyncScheduler`), and the way
 * to drop the timer when the work is over first: `AbortSignal.timeout`, with time from the scheduler.
 */
export function abortAfter(ms: number, scheduler: SchedulerLike | undefined): { signal: AbortSignal; release(): void } {
  const controller = new AbortController()
  const timer = (scheduler ?? asyncScheduler).schedule(() => controller.abort(new DOMException('The operation timed out', 'TimeoutError')), ms)
  return { signal: controller.signal, release: () => timer.unsubscribe() }
}
