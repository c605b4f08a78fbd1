import { Observable, asyncScheduler, timeoutProvider, type MonoTypeOperatorFunction, type SchedulerLike, type Subscriber, type Subscription } from '../rx.ts'
import { TimeoutError } from '../jsonrpc/errors.ts'

/** Configuration of {@link withTimeout}. */
export interface WithTimeoutConfig<T> {
  /** Milliseconds the source may stay silent; restarted by every value that `resetOn` accepts. */
  each: number
  /** Hard maximum in milliseconds from subscription, whatever the source emits. */
  max?: number
  /** Which values restart the `each` timer (default: every value). */
  resetOn?: (value: T) => boolean
  /** Where time comes from (default `asyncScheduler`); marble tests pass a TestScheduler. */
  scheduler?: SchedulerLike
  /** Builds the error to fail with; receives which limit ran out. */
  error?: (limit: 'each' | 'max', ms: number) => Error
}

/**
 * Fails with a {@link TimeoutError} when the source is silent for `each` ms (values accepted by
 * `resetOn` restart the clock, as MCP progress notifications do) or runs past `max` ms in all.
 *
 * Emits what the source emits and completes when it completes. On expiry it unsubscribes from the
 * source first (so a request source sends its cancellation) and then errors. Unsubscribing stops
 * both timers. `each <= 0` or non-finite disables that timer.
 *
 * @example
 * client.request('tools/call', params).pipe(withTimeout({ each: 5_000, max: 60_000, resetOn: e => e.type === 'progress' }))
 * @see cancelOnUnsubscribe
 */
export function withTimeout<T>(config: WithTimeoutConfig<T>): MonoTypeOperatorFunction<T> {
  const settings: TimeoutSettings<T> = {
    each: Number.isFinite(config.each) && config.each > 0 ? config.each : 0,
    max: config.max !== undefined && Number.isFinite(config.max) && config.max > 0 ? config.max : 0,
    resetOn: config.resetOn,
    scheduler: config.scheduler ?? asyncScheduler,
    fail: config.error ?? defaultError,
  }
  return source => new Observable<T>(subscriber => new TimeoutWatch(source, subscriber, settings).teardown)
}

interface TimeoutSettings<T> {
  each: number
  max: number
  resetOn: ((value: T) => boolean) | undefined
  scheduler: SchedulerLike
  fail: (limit: 'each' | 'max', ms: number) => Error
}

/**
 * One subscription of {@link withTimeout}. A class with its deadlines in shared queues rather than
 * closures and timers of its own: this runs once per request, and a timer per request (armed and
 * cleared at every answer) cost more than the rest of the operator.
 */
class TimeoutWatch<T> {
  /** The running `each` deadline; replaced when a value restarts the clock. */
  eachDeadline: Deadline | undefined = undefined
  /** The `max` deadline, set once. */
  maxDeadline: Deadline | undefined = undefined
  readonly inner: Subscription
  readonly teardown: () => void

  constructor(source: Observable<T>, readonly subscriber: Subscriber<T>, readonly settings: TimeoutSettings<T>) {
    if (settings.each > 0) this.eachDeadline = queueOf(settings.scheduler, settings.each).add(this, 'each')
    if (settings.max > 0) this.maxDeadline = queueOf(settings.scheduler, settings.max).add(this, 'max')
    this.inner = source.subscribe(this)
    this.teardown = this.unsubscribe.bind(this)
  }

  next(value: T): void {
    const { each, resetOn, scheduler } = this.settings
    if (each > 0 && (resetOn === undefined || resetOn(value))) {
      this.eachDeadline?.cancel()
      this.eachDeadline = queueOf(scheduler, each).add(this, 'each')
    }
    this.subscriber.next(value)
  }

  error(error: unknown): void { this.subscriber.error(error) }
  complete(): void { this.subscriber.complete() }

  expire(limit: 'each' | 'max'): void {
    this.inner.unsubscribe()
    this.subscriber.error(this.settings.fail(limit, limit === 'each' ? this.settings.each : this.settings.max))
  }

  unsubscribe(): void {
    this.eachDeadline?.cancel()
    this.maxDeadline?.cancel()
    this.inner?.unsubscribe()
  }
}

/** What a deadline fails when it falls due. */
interface Expiring { expire(limit: 'each' | 'max'): void }

/** One watch's deadline in a {@link DeadlineQueue}: `watch` is cleared once it fired or was cancelled. */
class Deadline {
  constructor(readonly queue: DeadlineQueue, readonly at: number, public watch: Expiring | undefined, readonly limit: 'each' | 'max') {}
  cancel(): void { this.queue.cancel(this) }
}

/**
 * The deadlines of one duration on one scheduler, in the order they were set, which (one duration,
 * one clock) is the order they fall due: one timer, for the first live one, serves them all. A
 * cancelled deadline is only marked; the marked ones are dropped when they reach the front, or all
 * at once when they outnumber the live ones (so memory follows the requests in flight, not the
 * requests made within one timeout). With no deadline live, no timer holds the process open: on a
 * virtual scheduler the action is cancelled; on `asyncScheduler` (real time, or a TestScheduler's run
 * mode) the timer is kept but unref'd, so one request at a time does not arm and clear a timer each.
 */
class DeadlineQueue {
  #deadlines: Deadline[] = []
  /** Index of the first deadline not yet fired or dropped. */
  #head = 0
  #live = 0
  /** The scheduled action (a scheduler other than `asyncScheduler`). */
  #action: Subscription | undefined = undefined
  /** The real timer (`asyncScheduler`): armed until it fires, and unref'd while nothing is live. */
  #timer: ReturnType<typeof timeoutProvider.setTimeout> | undefined = undefined
  readonly #isReal: boolean
  readonly #fire = () => this.#expire()

  constructor(readonly scheduler: SchedulerLike, readonly ms: number, readonly owner: Map<number, DeadlineQueue>) {
    this.#isReal = scheduler === asyncScheduler
  }

  add(watch: Expiring, limit: 'each' | 'max'): Deadline {
    const deadline = new Deadline(this, this.scheduler.now() + this.ms, watch, limit)
    this.#deadlines.push(deadline)
    // An armed timer falls due no later than this deadline (they come in order), and then re-arms.
    if (this.#live++ === 0) this.#arm(this.ms)
    return deadline
  }

  cancel(deadline: Deadline): void {
    if (deadline.watch === undefined) return
    deadline.watch = undefined
    if (--this.#live === 0) {
      this.#deadlines = []
      this.#head = 0
      this.#disarm()
      this.#leaveIfMany()
    } else if (this.#deadlines.length - this.#head > 2 * this.#live + 64) {
      this.#deadlines = this.#deadlines.slice(this.#head).filter(isLive)
      this.#head = 0
    }
  }

  #arm(delay: number): void {
    if (!this.#isReal) {
      this.#action ??= this.scheduler.schedule(this.#fire, delay)
    } else if (this.#timer === undefined) {
      this.#timer = timeoutProvider.setTimeout(this.#fire, delay)
    } else {
      // Node's timers can be ref'd and unref'd; a browser's or a worker's are plain numbers.
      ;(this.#timer as { ref?: () => void }).ref?.()
    }
  }

  #disarm(): void {
    if (!this.#isReal) {
      this.#action?.unsubscribe()
      this.#action = undefined
    } else if (this.#timer !== undefined && typeof (this.#timer as { unref?: () => void }).unref === 'function') {
      ;(this.#timer as { unref: () => void }).unref()
    } else if (this.#timer !== undefined) {
      timeoutProvider.clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }

  /**
   * An idle queue is kept for the next request of its duration, unless its scheduler has many
   * (timeouts computed per request): then it goes, with its timer, and the next one makes a new one.
   */
  #leaveIfMany(): void {
    if (this.owner.size <= MAX_IDLE_QUEUES || this.owner.get(this.ms) !== this) return
    this.owner.delete(this.ms)
    if (this.#timer !== undefined) timeoutProvider.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** Fails every watch whose deadline has come, in order, then waits for the next live one. */
  #expire(): void {
    this.#action = undefined
    this.#timer = undefined
    const now = this.scheduler.now()
    while (this.#head < this.#deadlines.length) {
      const deadline = this.#deadlines[this.#head]!
      const watch = deadline.watch
      if (watch !== undefined && deadline.at > now) break
      this.#head++
      if (watch === undefined) continue
      deadline.watch = undefined
      this.#live--
      watch.expire(deadline.limit)
    }
    if (this.#live === 0) {
      this.#deadlines = []
      this.#head = 0
      this.#leaveIfMany()
      return
    }
    if (this.#head > 1024 && this.#head * 2 > this.#deadlines.length) {
      this.#deadlines = this.#deadlines.slice(this.#head)
      this.#head = 0
    }
    if (this.#action === undefined && this.#timer === undefined) this.#arm(Math.max(0, this.#deadlines[this.#head]!.at - now))
  }
}

function isLive(deadline: Deadline): boolean { return deadline.watch !== undefined }

/** Queues of one scheduler past which an idle one is dropped (see `#leaveIfMany`). */
const MAX_IDLE_QUEUES = 8

/** The queues of each scheduler, by duration. */
const queues = new WeakMap<object, Map<number, DeadlineQueue>>()

function queueOf(scheduler: SchedulerLike, ms: number): DeadlineQueue {
  // A TestScheduler's run mode gets queues of its own (its timers are virtual, and die with the run).
  const key: object = scheduler === asyncScheduler ? timeoutProvider.delegate ?? scheduler : scheduler
  let byDuration = queues.get(key)
  if (byDuration === undefined) queues.set(key, byDuration = new Map())
  let queue = byDuration.get(ms)
  if (queue === undefined) byDuration.set(ms, queue = new DeadlineQueue(scheduler, ms, byDuration))
  return queue
}

function defaultError(limit: 'each' | 'max', ms: number): Error {
  return new TimeoutError(limit === 'max' ? `Request exceeded its maximum total time of ${ms} ms` : `Request timed out after ${ms} ms`, ms)
}
