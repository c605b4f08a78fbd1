import { describe, expect, it } from 'vitest'
import { Observable, VirtualTimeScheduler, lastValueFrom } from 'rxjs'
import { HeldCalls, type HeldCallHooks } from '../../actors/held-calls.ts'
import type { MountCaller } from '../../actors/server/mountable.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'

/** A modern caller's round: answers what `answers` has by key, leaves the rest unanswered; carries `state` in and out. */
function round(subject: string, answers: Record<string, JsonObject> = {}, state?: unknown): MountCaller & { carried: unknown; asked: string[] } {
  const asked: string[] = []
  const ask = (key: string | undefined) => {
    asked.push(key!)
    return key !== undefined && answers[key] !== undefined ? Promise.resolve(answers[key]) : new Promise<never>(() => {})
  }
  return {
    era: 'modern', principal: { subject, issuer: 'https://issuer.example' } as MountCaller['principal'], session: undefined, clientCapabilities: {},
    task: undefined, progressToken: undefined, signal: new AbortController().signal, requestState: state, carried: undefined, asked,
    setRequestState(value: unknown) { this.carried = value },
    progress() {}, log() {},
    elicit: (_params, options) => ask(options?.key) as never,
    sample: (_params, options) => ask(options?.key) as never,
    listRoots: options => ask(options?.key) as never,
  }
}

/** A downstream call that asks one elicitation, then answers with what it got; counts its starts and cancellations. */
function downstream() {
  const counts = { started: 0, cancelled: 0 }
  const start = (hooks: HeldCallHooks) => new Observable<RequestEvent<JsonObject>>(subscriber => {
    counts.started++
    let isDone = false
    const controller = new AbortController()
    hooks.answerInput('elicitation/create', { mode: 'form', message: 'Name?' }, controller.signal).then(answer => {
      isDone = true
      subscriber.next({ type: 'result', result: { content: [{ type: 'text', text: String((answer.content as JsonObject).name) }] } })
      subscriber.complete()
    }, error => subscriber.error(error))
    return () => { if (!isDone) { counts.cancelled++; controller.abort() } }
  })
  return { counts, start }
}

const log = () => {}

describe('HeldCalls', () => {
  it('parks a call whose source waits for an answer, and resumes it only for the same principal', async () => {
    const held = new HeldCalls({ maxCalls: 10, ttlMs: 60_000, log })
    const { counts, start } = downstream()
    const first = round('alice')
    held.run(first, start).subscribe().unsubscribe()
    expect(first.asked).toEqual(['elicitation-1'])
    expect(counts).toEqual({ started: 1, cancelled: 0 })
    expect(held.holds(round('alice', {}, first.carried))).toBe(true)
    // Another principal with the same state (it could not get one sealed for it, but say it did): not resumed.
    expect(held.holds(round('mallory', {}, first.carried))).toBe(false)
    const retry = round('alice', { 'elicitation-1': { action: 'accept', content: { name: 'Ann' } } }, first.carried)
    expect(await lastValueFrom(held.run(retry, start))).toEqual({ content: [{ type: 'text', text: 'Ann' }] })
    expect(counts).toEqual({ started: 1, cancelled: 0 })
    expect(held.holds(retry)).toBe(false)
  })

  it('starts the call anew for a retry that names no held call', async () => {
    const held = new HeldCalls({ maxCalls: 10, ttlMs: 60_000, log })
    const { counts, start } = downstream()
    const first = round('alice')
    held.run(first, start).subscribe().unsubscribe()
    const stranger = round('mallory', { 'elicitation-1': { action: 'accept', content: { name: 'M' } } }, first.carried)
    expect(await lastValueFrom(held.run(stranger, start))).toEqual({ content: [{ type: 'text', text: 'M' }] })
    expect(counts.started).toBe(2)
  })

  it('parks at most maxCalls: a call past the bound is cancelled downstream', () => {
    const held = new HeldCalls({ maxCalls: 1, ttlMs: 60_000, log })
    const { counts, start } = downstream()
    held.run(round('alice'), start).subscribe().unsubscribe()
    held.run(round('bob'), start).subscribe().unsubscribe()
    expect(counts).toEqual({ started: 2, cancelled: 1 })
  })

  it('cancels a parked call downstream when its time is up', () => {
    const scheduler = new VirtualTimeScheduler()
    const held = new HeldCalls({ maxCalls: 10, ttlMs: 1000, scheduler, log })
    const { counts, start } = downstream()
    const first = round('alice')
    held.run(first, start).subscribe().unsubscribe()
    scheduler.flush()
    expect(counts).toEqual({ started: 1, cancelled: 1 })
    expect(held.holds(round('alice', {}, first.carried))).toBe(false)
  })

  it('cancels a call at once when its round ends with nothing asked (the caller cancelled)', () => {
    const held = new HeldCalls({ maxCalls: 10, ttlMs: 60_000, log })
    const counts = { cancelled: 0 }
    const start = () => new Observable<RequestEvent<JsonObject>>(() => () => { counts.cancelled++ })
    held.run(round('alice'), start).subscribe().unsubscribe()
    expect(counts.cancelled).toBe(1)
  })
})
