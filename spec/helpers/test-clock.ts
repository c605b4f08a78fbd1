import { VirtualTimeScheduler, type SchedulerAction, type Subscription } from 'rxjs'

/**
 * A virtual clock for code that takes a `scheduler` option, moved only by the test: nothing it
 * holds runs until {@link TestClock.advance}. Each wait scheduled on it is also heard as an event
 * ({@link TestClock.nextWait}), so a test awaits the code under test starting to wait instead of
 * re-checking on a timer, and sees how long the wait is.
 *
 * @example
 * const clock = new TestClock()
 * const transport = streamableHttpClient(url, { scheduler: clock })
 * expect(await clock.nextWait()).toBe(1000)
 * clock.advance(1000)
 */
export class TestClock extends VirtualTimeScheduler {
  /** Waits scheduled that no `nextWait` has taken yet, oldest first. */
  readonly #waits: { delay: number; subscription: Subscription }[] = []
  /** `nextWait` calls still waiting for a wait to be scheduled. */
  readonly #takers: ((wait: { delay: number; subscription: Subscription }) => void)[] = []

  constructor() { super(undefined, 0) }

  override schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    const subscription = super.schedule(work, delay, state)
    const taker = this.#takers.shift()
    if (taker !== undefined) taker({ delay, subscription })
    else this.#waits.push({ delay, subscription })
    return subscription
  }

  /**
   * The length of the next wait scheduled (one scheduled already, else the next one to be); with
   * `length`, the next wait of that length, passing over others (a listener's sweep, say). A wait
   * cancelled before it is taken is passed over too.
   */
  async nextWait(length?: number): Promise<number> {
    for (;;) {
      const wait = this.#waits.shift() ?? await new Promise<{ delay: number; subscription: Subscription }>(resolve => this.#takers.push(resolve))
      if (!wait.subscription.closed && (length === undefined || wait.delay === length)) return wait.delay
    }
  }

  /** Moves the clock `ms` on, running in order whatever falls due by then. */
  advance(ms: number): void {
    const target = this.frame + ms
    this.maxFrames = target
    this.flush()
    this.frame = target
  }
}
