import { describe, expect, it } from 'vitest'
import { HttpSession, MAX_EARLY_MESSAGES, type SessionConfig } from '../../transports/http-session.ts'
import { LegacySession } from '../../transports/legacy-sse.ts'
import type { Inbound } from '../../lib/transport.ts'

const CONFIG: SessionConfig = { eventStore: undefined, retryMs: 0, highWaterMark: 0, maxStreams: 0, nextStreamId: () => 's' }
const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' })
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

/** Reads every message a session's inbound gives until now (synchronous delivery). */
function read(inbound: { subscribe(observer: { next(item: Inbound): void }): { unsubscribe(): void } }): { items: Inbound[]; stop(): void } {
  const items: Inbound[] = []
  const subscription = inbound.subscribe({ next: item => items.push(item) })
  return { items, stop: () => subscription.unsubscribe() }
}

describe('HttpSession', () => {
  it('keeps messages that arrive before inbound is read and hands them over, in order, on subscribe', () => {
    const session = new HttpSession('a', CONFIG, 0, () => {})
    session.receive(ping(1))
    session.receive(ping(2))
    const reader = read(session.inbound)
    session.receive(ping(3))
    expect(reader.items.map(item => item.type === 'message' && (item.message as { id: number }).id)).toEqual([1, 2, 3])
  })

  it('keeps nothing once its reader has gone, and at most MAX_EARLY_MESSAGES before the first', () => {
    const session = new HttpSession('b', CONFIG, 0, () => {})
    for (let id = 0; id < MAX_EARLY_MESSAGES + 5; id++) session.receive(ping(id))
    const reader = read(session.inbound)
    expect(reader.items).toHaveLength(MAX_EARLY_MESSAGES)
    reader.stop()
    session.receive(ping(-1))
    expect(read(session.inbound).items).toEqual([])
  })

  it('drops what it kept when the session ends unread', () => {
    const session = new HttpSession('c', CONFIG, 0, () => {})
    session.receive(ping(1))
    session.end()
    let isComplete = false
    session.inbound.subscribe({ next: () => { throw new Error('no message expected') }, complete: () => { isComplete = true } })
    expect(isComplete).toBe(true)
  })
})

describe('LegacySession', () => {
  it('keeps messages that arrive before inbound is read and hands them over on subscribe', () => {
    const session = new LegacySession('d', 0, () => {})
    session.receiveFrame(bytes(ping(1)))
    session.receiveFrame(bytes(ping(2)))
    const reader = read(session.inbound)
    expect(reader.items.map(item => item.type === 'message' && (item.message as { id: number }).id)).toEqual([1, 2])
    session.end()
  })
})
