/** What a {@link collected} list gives: the items, a way to add one, and a wait on them. */
export interface Collected<T> {
  /** Everything pushed so far, oldest first. */
  readonly items: T[]
  /** Adds an item (from an event's callback), and settles the waits it satisfies. */
  push(item: T): void
  /**
   * Resolves once the items pass `check`: at once if they do, else on the push that makes them.
   * No timer is involved: the test's own timeout bounds the wait.
   */
  when(check: (items: readonly T[]) => boolean): Promise<void>
}

/**
 * A list filled from callbacks (notifications, progress, stream events) that a test can await a
 * state of, instead of re-checking it on a timer.
 *
 * @example
 * const logs = collected<unknown>()
 * client.notifications('notifications/message').subscribe(message => logs.push(message))
 * await logs.when(items => items.length > 0)
 */
export function collected<T>(): Collected<T> {
  const items: T[] = []
  // Waits not yet satisfied, each looked at again on every push.
  const waiting = new Set<{ check: (items: readonly T[]) => boolean; done: () => void }>()
  return {
    items,
    push(item) {
      items.push(item)
      for (const waiter of waiting) if (waiter.check(items)) { waiting.delete(waiter); waiter.done() }
    },
    when(check) {
      if (check(items)) return Promise.resolve()
      return new Promise(done => { waiting.add({ check, done }) })
    },
  }
}
