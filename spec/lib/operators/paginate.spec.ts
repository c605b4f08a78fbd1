import { describe, expect, it } from 'vitest'
import { Observable, firstValueFrom, lastValueFrom, of, take, toArray, throwError } from 'rxjs'
import { paginate, type Page } from '../../../lib/operators/paginate.ts'
import { ProtocolError } from '../../../lib/jsonrpc/errors.ts'
import { createTestScheduler } from '../../helpers/marbles.ts'

function pages(data: number[][], calls: (string | undefined)[]): (cursor: string | undefined) => Observable<Page<number>> {
  return cursor => {
    calls.push(cursor)
    const index = cursor === undefined ? 0 : Number(cursor)
    return of(index + 1 < data.length ? { items: data[index]!, nextCursor: String(index + 1) } : { items: data[index]! })
  }
}

describe('paginate', () => {
  it('emits the items of every page in order and completes after the last page', async () => {
    const calls: (string | undefined)[] = []
    expect(await lastValueFrom(paginate(pages([[1, 2], [3], [4, 5]], calls)).pipe(toArray()))).toEqual([1, 2, 3, 4, 5])
    expect(calls).toEqual([undefined, '1', '2'])
  })

  it('fetches no more pages than take(n) needs', async () => {
    const calls: (string | undefined)[] = []
    expect(await lastValueFrom(paginate(pages([[1, 2], [3], [4, 5]], calls)).pipe(take(2), toArray()))).toEqual([1, 2])
    expect(calls).toEqual([undefined])
  })

  it('completes on an empty first page', async () => {
    expect(await lastValueFrom(paginate(() => of({ items: [] })).pipe(toArray()))).toEqual([])
  })

  it('errors with the page request error', async () => {
    await expect(firstValueFrom(paginate(() => throwError(() => new Error('nope'))))).rejects.toThrow('nope')
  })

  it('errors with ProtocolError when a cursor repeats', async () => {
    await expect(lastValueFrom(paginate(() => of({ items: [1], nextCursor: 'same' })))).rejects.toBeInstanceOf(ProtocolError)
  })

  it('unsubscribes the page request in flight', () => {
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const page = cold<Page<string>>('----a|', { a: { items: ['x'] } })
      expectObservable(paginate(() => page), '^-!').toBe('---')
      expectSubscriptions(page.subscriptions).toBe('^-!')
    })
  })
})
