import { describe, expect, it } from 'vitest'
import { NONE, createActorSystem, type Effect } from '../../actors/actor.ts'
import { requestLogic, type RequestMessage, type RequestState } from '../../lib/request-logic.ts'

const running: RequestState = requestLogic.initial({ method: 'tools/call', unsubscribe: () => {} })
const initializing: RequestState = requestLogic.initial({ method: 'initialize', unsubscribe: () => {} })
const answered: RequestState = { phase: 'answered', isCancellable: false }
const cancelled: RequestState = { phase: 'cancelled', isCancellable: false }
const closed: RequestState = { phase: 'closed', isCancellable: false }
const done: Effect = { type: 'done' }
/** The message itself goes to the owner (the connection), which answers or aborts by it. */
const passOn: Effect = { type: 'emit-message' }
const reason = new Error('bye')

describe('requestLogic', () => {
  it('starts running, cancellable unless it is initialize', () => {
    expect(running).toEqual({ phase: 'running', isCancellable: true })
    expect(initializing).toEqual({ phase: 'running', isCancellable: false })
  })

  it.each<[string, RequestState, RequestMessage, RequestState, readonly Effect[]]>([
    ['lets progress out while running', running, { type: 'progress', params: { progressToken: 1, progress: 1 } }, running,
      [passOn]],
    ['answers a result and ends', running, { type: 'result', result: { ok: true } }, answered,
      [passOn, done]],
    ['answers an error and ends done, not failed', running, { type: 'error', error: reason }, answered,
      [passOn, done]],
    ['aborts its handler on cancel, with no answer', running, { type: 'cancel', reason }, cancelled,
      [passOn, done]],
    ['ignores a cancel of initialize', initializing, { type: 'cancel', reason }, initializing, NONE],
    ['aborts initialize too when the connection closes', initializing, { type: 'closed', error: reason }, closed,
      [passOn, done]],
    ['aborts its handler when the connection closes', running, { type: 'closed', error: reason }, closed,
      [passOn, done]],
    ['answers once: a second outcome is nothing', answered, { type: 'result', result: {} }, answered, NONE],
    ['sends no progress once answered', answered, { type: 'progress', params: { progressToken: 1, progress: 2 } }, answered, NONE],
    ['is not cancelled once answered', answered, { type: 'cancel' }, answered, NONE],
    ['sends no answer once cancelled', cancelled, { type: 'result', result: {} }, cancelled, NONE],
    ['ignores what its owner does not send it', running, { type: 'rxmcp.child.done', id: 'x', output: undefined } as never, running, NONE],
  ])('%s', (_, state, message, next, effects) => {
    expect(requestLogic.transition(state, message)).toEqual([next, effects])
  })

  it('stops its handler when its parent stops it, and not once it ended', () => {
    const system = createActorSystem()
    const parent = system.spawn({ name: 'parent', initial: () => 0, transition: n => [n, NONE] })
    const stops: string[] = []
    const one = system.spawn(requestLogic, { id: '1', parent, input: { method: 'tools/call', unsubscribe: () => stops.push('1') } })
    system.spawn(requestLogic, { id: '2', parent, input: { method: 'tools/call', unsubscribe: () => stops.push('2') } })
    one.send({ type: 'result', result: {} })
    expect(stops).toEqual(['1'])
    parent.stop()
    expect(stops).toEqual(['1', '2'])
  })
})
