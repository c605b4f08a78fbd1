import { describe, expect, it } from 'vitest'
import type { Observable } from 'rxjs'
import { inputRounds } from '../../actors/client/input-rounds.ts'
import { InputRoundsExceededError, InvalidResultError } from '../../actors/client/errors.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import { createTestScheduler } from '../helpers/marbles.ts'

type Event = RequestEvent<JsonObject>

const progress = (n: number): Event => ({ type: 'progress', progress: n })
const result = (value: JsonObject): Event => ({ type: 'result', result: value })
const DONE = { resultType: 'complete', content: [] }
const ASK = { resultType: 'input_required', inputRequests: { q: { method: 'roots/list' } }, requestState: 's1' }

describe('inputRounds', () => {
  it('passes progress and a complete result through, completing with the source', () => {
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<Event>('-a-b|', { a: progress(1), b: result(DONE) })
      const resend = () => { throw new Error('no retry expected') }
      expectObservable(source.pipe(inputRounds({ method: 'tools/call', params: {}, resend, answer: () => { throw new Error('no answer expected') } })))
        .toBe('-a-b|', { a: progress(1), b: result(DONE) })
      expectSubscriptions(source.subscriptions).toBe('^---!')
    })
  })

  it('passes never and empty through', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      const options = { method: 'tools/call', params: {}, resend: () => cold<Event>('|'), answer: () => cold<JsonObject>('|') }
      expectObservable(cold<Event>('-').pipe(inputRounds(options))).toBe('-')
      expectObservable(cold<Event>('|').pipe(inputRounds(options))).toBe('|')
    })
  })

  it('answers, then resends with inputResponses and the state, and emits the next round\'s events', () => {
    const sent: JsonObject[] = []
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold<Event>('--a|', { a: result(ASK) })
      const second = cold<Event>('-p-b|', { p: progress(2), b: result(DONE) })
      const answer = cold<JsonObject>('---r|', { r: { roots: [] } })
      const resend = (params: JsonObject): Observable<Event> => { sent.push(params); return second }
      expectObservable(first.pipe(inputRounds({ method: 'tools/call', params: { name: 'x' }, resend, answer: () => answer })))
        .toBe('------p-b|', { p: progress(2), b: result(DONE) })
      expectSubscriptions(answer.subscriptions).toBe('--^--!')
      expectSubscriptions(second.subscriptions).toBe('-----^---!')
    })
    expect(sent).toEqual([{ name: 'x', inputResponses: { q: { roots: [] } }, requestState: 's1' }])
  })

  it('unsubscribes the answer in flight and never resends when unsubscribed early', () => {
    let resent = 0
    createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold<Event>('-a|', { a: result(ASK) })
      const answer = cold<JsonObject>('-----r|', { r: { roots: [] } })
      const resend = () => { resent++; return cold<Event>('-b|', { b: result(DONE) }) }
      expectObservable(first.pipe(inputRounds({ method: 'tools/call', params: {}, resend, answer: () => answer })), '^--!').toBe('---')
      expectSubscriptions(answer.subscriptions).toBe('-^-!')
    })
    expect(resent).toBe(0)
  })

  it('errors with the answer\'s error, and with InvalidResultError for an unknown resultType', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      const failing = cold<JsonObject>('-#', undefined, new Error('declined'))
      expectObservable(cold<Event>('a|', { a: result(ASK) }).pipe(inputRounds({ method: 'tools/call', params: {}, resend: () => cold('|'), answer: () => failing })))
        .toBe('-#', undefined, new Error('declined'))
      expectObservable(cold<Event>('a|', { a: result({ resultType: 'weird' }) }).pipe(inputRounds({ method: 'tools/call', params: {}, resend: () => cold('|'), answer: () => cold('|') })))
        .toBe('#', undefined, new InvalidResultError('tools/call', 'unknown resultType "weird"'))
    })
  })

  it('errors with InputRoundsExceededError once maxRounds rounds were answered', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      const again = () => cold<Event>('a|', { a: result({ resultType: 'input_required', requestState: 'again' }) })
      expectObservable(again().pipe(inputRounds({ method: 'prompts/get', params: {}, resend: again, answer: () => cold('|'), maxRounds: 2 })))
        .toBe('#', undefined, new InputRoundsExceededError('prompts/get', 2))
    })
  })
})
