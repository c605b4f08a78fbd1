import { describe, expect, it } from 'vitest'
import { canSendRequest, gateIncomingRequest, stepLifecycle, type LifecycleEvent, type LifecycleState, type Role } from '../../lib/lifecycle.ts'
import { InvalidRequestError } from '../../lib/jsonrpc/errors.ts'

describe('stepLifecycle', () => {
  it.each<[LifecycleState, LifecycleEvent['type'], LifecycleState]>([
    ['awaiting-initialize', 'initialize', 'initializing'],
    ['awaiting-initialize', 'initialized', 'awaiting-initialize'],
    ['initializing', 'initialized', 'operating'],
    ['initializing', 'initialize', 'initializing'],
    ['operating', 'initialize', 'operating'],
    ['operating', 'initialized', 'operating'],
    ['operating', 'close', 'closing'],
    ['awaiting-initialize', 'close', 'closing'],
    ['closing', 'closed', 'closed'],
    ['closed', 'close', 'closed'],
    ['operating', 'closed', 'closed'],
  ])('moves from %s on %s to %s', (state, event, next) => {
    expect(stepLifecycle(state, { type: event } as LifecycleEvent)).toBe(next)
  })
})

describe('gateIncomingRequest', () => {
  it.each<[Role, LifecycleState, string, boolean]>([
    ['server', 'awaiting-initialize', 'initialize', true],
    ['server', 'awaiting-initialize', 'ping', true],
    ['server', 'awaiting-initialize', 'tools/list', false],
    ['server', 'initializing', 'initialize', false],
    ['server', 'initializing', 'tools/list', true],
    ['server', 'operating', 'initialize', false],
    ['server', 'operating', 'tools/call', true],
    ['client', 'awaiting-initialize', 'sampling/createMessage', false],
    ['client', 'initializing', 'ping', true],
    ['client', 'initializing', 'roots/list', false],
    ['client', 'operating', 'roots/list', true],
  ])('as %s in %s lets %s pass: %s', (role, state, method, passes) => {
    const refusal = gateIncomingRequest(role, state, method)
    if (passes) expect(refusal).toBeUndefined()
    else {
      expect(refusal).toBeInstanceOf(InvalidRequestError)
      expect(refusal!.code).toBe(-32600)
    }
  })
})

describe('canSendRequest', () => {
  it.each<[Role, LifecycleState, string, boolean]>([
    ['client', 'awaiting-initialize', 'initialize', true],
    ['client', 'awaiting-initialize', 'tools/list', false],
    ['client', 'initializing', 'initialize', false],
    ['client', 'initializing', 'ping', true],
    ['client', 'operating', 'tools/list', true],
    ['server', 'initializing', 'sampling/createMessage', false],
    ['server', 'initializing', 'ping', true],
    ['server', 'operating', 'sampling/createMessage', true],
    ['server', 'operating', 'initialize', false],
    ['client', 'closed', 'ping', false],
  ])('as %s in %s may send %s: %s', (role, state, method, allowed) => {
    expect(canSendRequest(role, state, method)).toBe(allowed)
  })
})
