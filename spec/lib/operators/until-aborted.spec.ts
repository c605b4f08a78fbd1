import { describe, expect, it } from 'vitest'
import { untilAborted } from '../../../lib/operators/until-aborted.ts'
import { createTestScheduler } from '../../helpers/marbles.ts'

/** A signal whose listeners are counted, aborted with `reason` at `frame` of the test scheduler (never when undefined). */
function signalAt(schedule: (work: () => void, frame: number) => void, frame: number | undefined, reason: unknown) {
  const controller = new AbortController()
  const signal = controller.signal
  let listeners = 0
  const add = signal.addEventListener.bind(signal)
  const remove = signal.removeEventListener.bind(signal)
  signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => { listeners++; add(...args) }) as AbortSignal['addEventListener']
  signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => { listeners--; remove(...args) }) as AbortSignal['removeEventListener']
  if (frame !== undefined) schedule(() => controller.abort(reason), frame)
  return { signal, controller, listeners: () => listeners }
}

const REASON = new Error('aborted')

describe('untilAborted', () => {
  it.each<[string, string, number | undefined, string, string, string?]>([
    ['mirrors values and completion, then lets the signal go', '-a-b-|', undefined, '-a-b-|', '^----!'],
    ['mirrors an error', '-a-#', undefined, '-a-#', '^--!'],
    ['errors with the reason when the signal aborts, unsubscribing the source', '-a-----b-|', 3, '-a-#', '^--!'],
    ['never errors after the source completed', '-a|', 5, '-a|', '^-!'],
    ['lets the signal go on early unsubscribe', '-a-----b-|', undefined, '-a--', '^---!', '^---!'],
  ])('%s', (_, source, abortAt, expected, subscriptions, unsubscription) => {
    const scheduler = createTestScheduler()
    let counted!: ReturnType<typeof signalAt>
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      counted = signalAt((work, frame) => scheduler.schedule(work, frame), abortAt, REASON)
      const values = cold(source, undefined, REASON)
      expectObservable(values.pipe(untilAborted(counted.signal)), unsubscription).toBe(expected, undefined, REASON)
      expectSubscriptions(values.subscriptions).toBe(subscriptions)
    })
    expect(counted.listeners()).toBe(0)
  })

  it('errors at once, subscribing nothing, when the signal is aborted already', () => {
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const controller = new AbortController()
      controller.abort(REASON)
      const values = cold('-a|')
      expectObservable(values.pipe(untilAborted(controller.signal))).toBe('#', undefined, REASON)
      expectSubscriptions(values.subscriptions).toBe([])
    })
  })
})
