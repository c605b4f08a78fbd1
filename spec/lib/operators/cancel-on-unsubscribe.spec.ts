import { describe, expect, it } from 'vitest'
import { cancelOnUnsubscribe } from '../../../lib/operators/cancel-on-unsubscribe.ts'
import { createTestScheduler } from '../../helpers/marbles.ts'

describe('cancelOnUnsubscribe', () => {
  it('calls onCancel once when unsubscribed before the source finished', () => {
    let cancels = 0
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a---b-|')
      expectObservable(source.pipe(cancelOnUnsubscribe(() => cancels++)), '^--!').toBe('-a-')
      expectSubscriptions(source.subscriptions).toBe('^--!')
    })
    expect(cancels).toBe(1)
  })

  it('does not call onCancel when the source completes', () => {
    let cancels = 0
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|').pipe(cancelOnUnsubscribe(() => cancels++))).toBe('-a|')
    })
    expect(cancels).toBe(0)
  })

  it('does not call onCancel when the source errors', () => {
    let cancels = 0
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-#').pipe(cancelOnUnsubscribe(() => cancels++))).toBe('-#')
    })
    expect(cancels).toBe(0)
  })

  it('calls onCancel for a source that never emits when unsubscribed', () => {
    let cancels = 0
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-').pipe(cancelOnUnsubscribe(() => cancels++)), '^-!').toBe('--')
    })
    expect(cancels).toBe(1)
  })

  it('completes an empty source without cancelling', () => {
    let cancels = 0
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('|').pipe(cancelOnUnsubscribe(() => cancels++))).toBe('|')
    })
    expect(cancels).toBe(0)
  })
})
