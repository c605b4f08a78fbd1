import { describe, expect, it } from 'vitest'
import { backoff, backoffDelay, backoffPolicy } from '../../../lib/operators/backoff.ts'
import { createTestScheduler } from '../../helpers/marbles.ts'

const POLICY = { initialDelayMs: 10, maxDelayMs: 50 }

describe('backoffDelay', () => {
  it.each([
    [0, 10],
    [1, 20],
    [2, 40],
    [3, 50],
    [30, 50],
  ])('waits the initial delay doubled per attempt, capped (attempt %i: %i ms)', (attempt, expected) => {
    expect(backoffDelay(attempt, POLICY)).toBe(expected)
  })
})

describe('backoffPolicy', () => {
  it('takes each field left out from the defaults', () => {
    expect(backoffPolicy(undefined, POLICY)).toEqual(POLICY)
    expect(backoffPolicy({ maxDelayMs: 7 }, POLICY)).toEqual({ initialDelayMs: 10, maxDelayMs: 7 })
    expect(backoffPolicy({ initialDelayMs: 1, maxDelayMs: 2 }, POLICY)).toEqual({ initialDelayMs: 1, maxDelayMs: 2 })
  })
})

describe('backoff', () => {
  it('emits 0 and completes once the wait of its attempt is over, on the scheduler', () => {
    const scheduler = createTestScheduler()
    scheduler.run(({ expectObservable }) => {
      expectObservable(backoff(0, POLICY, scheduler)).toBe('10ms (0|)', { 0: 0 })
      expectObservable(backoff(2, POLICY, scheduler)).toBe('40ms (0|)', { 0: 0 })
      expectObservable(backoff(5, POLICY, scheduler)).toBe('50ms (0|)', { 0: 0 })
    })
  })

  it('emits nothing when unsubscribed before the wait is over', () => {
    const scheduler = createTestScheduler()
    scheduler.run(({ expectObservable }) => {
      expectObservable(backoff(1, POLICY, scheduler), '^ 9ms !').toBe('')
    })
  })
})
