import { describe, expect, it } from 'vitest'
import { withTimeout } from '../../../lib/operators/with-timeout.ts'
import { TimeoutError } from '../../../lib/jsonrpc/errors.ts'
import { createTestScheduler } from '../../helpers/marbles.ts'

const error = new TimeoutError('timed out')

describe('withTimeout', () => {
  it('passes values and completion through when the source is fast enough', () => {
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-|')
      expectObservable(source.pipe(withTimeout({ each: 5, error: () => error }))).toBe('-a-b-|')
      expectSubscriptions(source.subscriptions).toBe('^----!')
    })
  })

  it('errors after `each` of silence and unsubscribes the source', () => {
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a------b-|')
      expectObservable(source.pipe(withTimeout({ each: 3, error: () => error }))).toBe('-a--#', undefined, error)
      expectSubscriptions(source.subscriptions).toBe('^---!')
    })
  })

  it('restarts the clock only on values accepted by resetOn', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      const source = cold('-p-p-pr|')
      const resetOn = (value: string) => value === 'p'
      expectObservable(source.pipe(withTimeout({ each: 3, resetOn, error: () => error }))).toBe('-p-p-pr|')
      const noReset = cold('-r-r-r-r-|')
      expectObservable(noReset.pipe(withTimeout({ each: 2, resetOn, error: () => error }))).toBe('-r#', undefined, error)
    })
  })

  it('times each of many overlapping watches of one duration on its own', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      const watched = (marbles: string) => cold(marbles).pipe(withTimeout({ each: 4, error: () => error }))
      expectObservable(watched('--x|')).toBe('--x|')
      expectObservable(watched('------x|'), '-^').toBe('-----#', undefined, error)
      expectObservable(watched('-------'), '--^').toBe('------#', undefined, error)
      expectObservable(watched('-x-x-x-x|')).toBe('-x-x-x-x|')
      expectObservable(watched('---x|'), '---^').toBe('------x|')
    })
  })

  it('enforces max whatever the source emits', () => {
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-a-a-a-a-a-|')
      expectObservable(source.pipe(withTimeout({ each: 2, max: 6, error: () => error }))).toBe('-a-a-a#', undefined, error)
      expectSubscriptions(source.subscriptions).toBe('^-----!')
    })
  })

  it('times out a source that never emits', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-').pipe(withTimeout({ each: 4, error: () => error }))).toBe('----#', undefined, error)
    })
  })

  it('completes an empty source without error', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('|').pipe(withTimeout({ each: 4, error: () => error }))).toBe('|')
    })
  })

  it('forwards source errors', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-#', undefined, 'boom').pipe(withTimeout({ each: 4, error: () => error }))).toBe('-#', undefined, 'boom')
    })
  })

  it('stops its timers on early unsubscribe', () => {
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-------')
      expectObservable(source.pipe(withTimeout({ each: 5, error: () => error })), '^--!').toBe('-a-')
      expectSubscriptions(source.subscriptions).toBe('^--!')
    })
  })

  it('makes a TimeoutError with the limit by default', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-').pipe(withTimeout({ each: 2 }))).toBe('--#', undefined, expect.any(TimeoutError))
    })
  })

  it('disables the each timer for non-positive values', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-----a|').pipe(withTimeout({ each: 0, error: () => error }))).toBe('-----a|')
    })
  })
})
