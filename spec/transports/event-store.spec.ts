import { describe, expect, it } from 'vitest'
import { createMemoryEventStore, MEMORY_EVENT_STORE_DEFAULTS } from '../../transports/event-store.ts'
import type { JsonRpcPayload } from '../../lib/jsonrpc/message.ts'

const MiB = 1024 * 1024
const answer = (id: number, size: number): JsonRpcPayload => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(size) }] } })
const note = (n: number): JsonRpcPayload => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } })

async function replay(store: ReturnType<typeof createMemoryEventStore>, lastEventId: string) {
  const got: string[] = []
  const streamId = await store.replayEventsAfter(lastEventId, eventId => { got.push(eventId) })
  return { streamId, got }
}

describe('createMemoryEventStore', () => {
  it('keeps 100 abandoned 3 MiB answers of one session within the session budget', () => {
    const store = createMemoryEventStore()
    const big = answer(0, 3 * MiB)
    const data = JSON.stringify(big)
    for (let i = 0; i < 100; i++) store.storeEvent(`post-${i}`, big, { sessionId: 'A', data })
    const { bytes, streams } = store.stats()
    console.log(`100 x 3 MiB answers in one session: ${(bytes / MiB).toFixed(1)} MiB kept in ${streams} streams (budget ${MEMORY_EVENT_STORE_DEFAULTS.maxBytesPerSession / MiB} MiB)`)
    expect(bytes).toBeLessThanOrEqual(MEMORY_EVENT_STORE_DEFAULTS.maxBytesPerSession)
    expect(store.sessionBytes('A')).toBe(bytes)
    // The newest answers are the ones kept.
    expect(store.stats().streams).toBeGreaterThan(0)
  })

  it('bounds the bytes of one stream, dropping its oldest events, and refuses a replay that would skip them', async () => {
    const store = createMemoryEventStore({ maxBytesPerStream: 10_000 })
    const first = store.storeEvent('s', answer(1, 4000), { sessionId: 'A' }) as string
    const second = store.storeEvent('s', answer(2, 4000), { sessionId: 'A' }) as string
    store.storeEvent('s', answer(3, 4000), { sessionId: 'A' })
    expect(store.stats().bytes).toBeLessThanOrEqual(10_000)
    expect(store.stats().events).toBe(2)
    // After `first`, event 2 is still there: the replay is whole.
    expect(await replay(store, first)).toEqual({ streamId: 's', got: ['s_2', 's_3'] })
    store.storeEvent('s', answer(4, 4000), { sessionId: 'A' })
    // Event 2 is gone now: replaying after `first` would hide it.
    expect((await replay(store, first)).streamId).toBeUndefined()
    expect(await replay(store, second)).toEqual({ streamId: 's', got: ['s_3', 's_4'] })
  })

  it('does not keep an event larger than the stream budget', () => {
    const store = createMemoryEventStore({ maxBytesPerStream: 1000 })
    store.storeEvent('s', answer(1, 5000), { sessionId: 'A' })
    expect(store.stats()).toMatchObject({ events: 0, bytes: 0 })
  })

  it('frees a session on deleteSession and a stream on deleteStream', () => {
    const store = createMemoryEventStore()
    for (let i = 0; i < 10; i++) store.storeEvent(`a-${i}`, answer(i, 100_000), { sessionId: 'A' })
    store.storeEvent('b', answer(1, 100_000), { sessionId: 'B' })
    store.deleteStream!('b')
    expect(store.sessionBytes('B')).toBe(0)
    expect(store.stats().streams).toBe(10)
    store.deleteSession!('A')
    expect(store.stats()).toEqual({ streams: 0, events: 0, bytes: 0, sessions: 0 })
  })

  it('lets no session evict the streams of another by opening many of its own', async () => {
    const store = createMemoryEventStore()
    const victim = store.storeEvent('victim', note(0), { sessionId: 'victim' }) as string
    store.storeEvent('victim', answer(1, 1000), { sessionId: 'victim' })
    // 10,001 stream opens (a priming event each) from one session, then from many.
    for (let i = 0; i <= 10_000; i++) store.storeEvent(`attacker-${i}`, note(i), { sessionId: 'attacker' })
    for (let i = 0; i <= 10_000; i++) store.storeEvent(`crowd-${i}`, note(i), { sessionId: `crowd-${i % 200}` })
    const stats = store.stats()
    console.log(`after 20,002 stream opens by 201 other sessions: ${stats.streams} streams, ${stats.sessions} sessions, ${stats.bytes} bytes`)
    expect(stats.streams).toBeLessThanOrEqual(MEMORY_EVENT_STORE_DEFAULTS.maxStreams)
    expect(await replay(store, victim)).toEqual({ streamId: 'victim', got: ['victim_2'] })
  })

  it('makes the largest session pay when the total bytes are reached', async () => {
    const store = createMemoryEventStore({ maxBytes: 2 * MiB, maxBytesPerSession: 2 * MiB })
    const victim = store.storeEvent('victim', note(0), { sessionId: 'victim' }) as string
    store.storeEvent('victim', answer(1, 100_000), { sessionId: 'victim' })
    for (let i = 0; i < 100; i++) store.storeEvent(`big-${i}`, answer(i, 100_000), { sessionId: `big-${i % 3}` })
    expect(store.stats().bytes).toBeLessThanOrEqual(2 * MiB)
    expect((await replay(store, victim)).got).toEqual(['victim_2'])
  })

  it('issue 25: counts the events it holds (eventCount, the telemetry gauge) through stores, drops and deletes, without a scan', () => {
    const store = createMemoryEventStore({ maxEventsPerStream: 3 })
    const counted = () => { expect(store.eventCount!()).toBe(store.stats().events); return store.eventCount!() }
    for (let i = 0; i < 5; i++) store.storeEvent('s', note(i), { sessionId: 'A' })
    expect(counted()).toBe(3)
    store.storeEvent('t', note(0), { sessionId: 'A' })
    store.storeEvent('u', note(0), { sessionId: 'B' })
    expect(counted()).toBe(5)
    store.deleteStream!('s')
    expect(counted()).toBe(2)
    store.deleteSession!('A')
    expect(counted()).toBe(1)
  })

  it('uses the JSON text it is given instead of encoding the message again', async () => {
    const store = createMemoryEventStore()
    const id = store.storeEvent('s', note(0), { sessionId: 'A' }) as string
    store.storeEvent('s', note(1), { sessionId: 'A', data: '{"jsonrpc":"2.0","method":"given"}' })
    const messages: unknown[] = []
    await store.replayEventsAfter(id, (_eventId, message) => { messages.push(message) })
    expect(messages).toEqual([{ jsonrpc: '2.0', method: 'given' }])
  })
})
