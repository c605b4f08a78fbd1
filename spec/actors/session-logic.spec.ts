import { describe, expect, it } from 'vitest'
import { NONE, effect, type Effect } from '../../actors/actor.ts'
import type { SessionState } from '../../actors/server.ts'
import { sessionLogic, type SessionMessage } from '../../actors/server/session-logic.ts'
import { subscriptionLogic } from '../../actors/server/subscription-logic.ts'

/** A state of the session; each row gets its own (subscriptions change in place). */
function state(changes: Partial<SessionState> = {}, uris: string[] = []): SessionState {
  return { ...sessionLogic.initial({ protocolVersion: '2025-11-25', logLevel: 'info' }), ...changes, subscriptions: new Set(uris) }
}
const client = { name: 'c', version: '1' }

describe('sessionLogic', () => {
  it('starts awaiting initialize, with the default version and level and no subscriptions', () => {
    expect(sessionLogic.initial({ protocolVersion: '2025-06-18', logLevel: 'warning' }))
      .toEqual({ status: 'awaiting-initialize', protocolVersion: '2025-06-18', clientCapabilities: {}, logLevel: 'warning', subscriptions: new Set() })
  })

  it.each<[string, () => SessionState, SessionMessage, SessionState, readonly Effect[]]>([
    ['takes the version and client at initialize', () => state(),
      { type: 'initialize', protocolVersion: '2025-03-26', clientInfo: client, clientCapabilities: { roots: {} } },
      { ...state({ status: 'initializing', protocolVersion: '2025-03-26', clientInfo: client, clientCapabilities: { roots: {} } }) }, NONE],
    ['ignores a second initialize', () => state({ status: 'operating' }),
      { type: 'initialize', protocolVersion: '2024-11-05', clientCapabilities: {} }, state({ status: 'operating' }), NONE],
    ['operates once initialized', () => state({ status: 'initializing' }), { type: 'initialized' }, state({ status: 'operating' }), NONE],
    ['ignores initialized before initialize', () => state(), { type: 'initialized' }, state(), NONE],
    ['sets the log level', () => state({ status: 'operating' }), { type: 'set-level', level: 'debug' }, state({ status: 'operating', logLevel: 'debug' }), NONE],
    ['spawns a subscription actor per new URI', () => state(), { type: 'subscribe', uri: 'a://1' }, state({}, ['a://1']),
      [effect.spawn('subscription:a://1', subscriptionLogic, { input: 'a://1' })]],
    ['holds one subscription per URI', () => state({}, ['a://1']), { type: 'subscribe', uri: 'a://1' }, state({}, ['a://1']), NONE],
    ['stops the subscription actor on unsubscribe', () => state({}, ['a://1', 'a://2']), { type: 'unsubscribe', uri: 'a://1' }, state({}, ['a://2']),
      [effect.stop('subscription:a://1')]],
    ['ignores unsubscribing what it does not hold', () => state(), { type: 'unsubscribe', uri: 'a://1' }, state(), NONE],
    ['tells the subscription of an update to its URI', () => state({}, ['a://1']), { type: 'resource-updated', uri: 'a://1' }, state({}, ['a://1']),
      [effect.send({ child: 'subscription:a://1' }, { type: 'updated' })]],
    ['ignores updates to other URIs', () => state({}, ['a://1']), { type: 'resource-updated', uri: 'a://2' }, state({}, ['a://1']), NONE],
    ['notifies the client when a subscription passes an update on', () => state({}, ['a://1']), { type: 'subscription.updated', uri: 'a://1' }, state({}, ['a://1']),
      [effect.emit({ type: 'notify', method: 'notifications/resources/updated', params: { uri: 'a://1' } })]],
    ['goes on from a saved session, a subscription actor per saved URI', () => state(),
      { type: 'restore', saved: { status: 'operating', protocolVersion: '2025-06-18', clientCapabilities: { sampling: {} }, logLevel: 'error', subscriptions: ['a://1'] } },
      state({ status: 'operating', protocolVersion: '2025-06-18', clientCapabilities: { sampling: {} }, logLevel: 'error' }, ['a://1']),
      [effect.spawn('subscription:a://1', subscriptionLogic, { input: 'a://1' })]],
    ['closes and stops itself, and so its children', () => state({ status: 'operating' }, ['a://1']), { type: 'closed' }, state({ status: 'closed' }, ['a://1']),
      [effect.stop()]],
    ['lets a request child end', () => state({ status: 'operating' }), { type: 'rxmcp.child.done', id: '7', output: undefined }, state({ status: 'operating' }), NONE],
  ])('%s', (_, before, message, next, effects) => {
    const [after, ran] = sessionLogic.transition(before(), message)
    expect(after).toEqual(next)
    expect(ran).toEqual(effects)
  })

  it('changes the subscription set in place, in a new state object', () => {
    const before = state()
    const [after] = sessionLogic.transition(before, { type: 'subscribe', uri: 'a://1' })
    expect(after).not.toBe(before)
    expect(after.subscriptions).toBe(before.subscriptions)
  })
})

describe('subscriptionLogic', () => {
  it.each([
    ['counts an update and passes it to its session', { uri: 'a://1', updates: 0 }, { uri: 'a://1', updates: 1 },
      [{ type: 'send', to: 'parent', message: { type: 'subscription.updated', uri: 'a://1' } }]],
  ])('%s', (_, before, next, effects) => {
    expect(subscriptionLogic.transition(before, { type: 'updated' })).toEqual([next, effects])
  })
})
