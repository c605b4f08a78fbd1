import { Observable, type Subscription } from '../rx.ts'
import { ProtocolError } from '../jsonrpc/errors.ts'

/** One page of a paginated MCP list. */
export interface Page<T> {
  items: readonly T[]
  nextCursor?: string
}

/**
 * Walks an MCP paginated list lazily: fetches the first page on subscribe, emits its items one by
 * one, and fetches the next page only after the last item of the previous one was emitted and the
 * subscriber is still there (so `take(n)` fetches no more pages than it needs).
 *
 * Completes after the page without `nextCursor`. Errors with the page request's error, or with a
 * `ProtocolError` if the server hands back a cursor it already gave (a loop). Unsubscribing cancels
 * the page request in flight.
 *
 * @example
 * paginate(cursor => client.listTools({ cursor }).pipe(map(r => ({ items: r.tools, nextCursor: r.nextCursor }))))
 */
export function paginate<T>(fetchPage: (cursor: string | undefined) => Observable<Page<T>>): Observable<T> {
  return new Observable<T>(subscriber => {
    // Cursors already followed, to stop a server that loops.
    const seen = new Set<string>()
    // The page request in flight.
    let current: Subscription | undefined
    const load = (cursor: string | undefined) => {
      current = fetchPage(cursor).subscribe({
        next: page => {
          for (const item of page.items) {
            if (subscriber.closed) return
            subscriber.next(item)
          }
          if (subscriber.closed) return
          const next = page.nextCursor
          if (next === undefined || next === null) return subscriber.complete()
          if (seen.has(next)) return subscriber.error(new ProtocolError(`Pagination loop: cursor ${JSON.stringify(next)} was returned twice`))
          seen.add(next)
          load(next)
        },
        error: error => subscriber.error(error),
      })
    }
    load(undefined)
    return () => current?.unsubscribe()
  })
}
