import { Subject, filter, firstValueFrom, map } from 'rxjs'

/**
 * A list that grows as things happen in a test (handlers started, signals aborted), and a way to
 * wait until it holds `n` of them: event-driven, resolved by the push itself, never by polling.
 */
export function arrivals<T>(): { readonly items: T[]; push(item: T): void; atLeast(n: number): Promise<T[]> } {
  const items: T[] = []
  const added = new Subject<void>()
  return {
    items,
    push(item) {
      items.push(item)
      added.next()
    },
    atLeast(n) {
      if (items.length >= n) return Promise.resolve(items)
      return firstValueFrom(added.pipe(filter(() => items.length >= n), map(() => items)))
    },
  }
}
