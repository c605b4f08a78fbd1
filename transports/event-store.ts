import type { JsonRpcPayload, RequestId } from '../lib/jsonrpc/message.ts'

/** What the server tells a store about an event beyond the message. */
export interface StoredEventContext {
  /** The session the stream belongs to: the unit of quotas, and what `deleteSession` frees. */
  sessionId: string
  /** The message as JSON text, when the server already has it (saves encoding it twice). */
  data?: string
  /** On a POST stream's first event, in a shared session: the requests the stream answers. */
  pending?: RequestId[]
}

/**
 * Where the Streamable HTTP server keeps the events of its SSE streams, so a client that lost a
 * stream can resume it with `Last-Event-ID` and get exactly the events it missed.
 *
 * Event ids must be unique across streams and name their stream (the server reads the stream
 * back from the id, and checks that the stream belongs to the session asking). Implementations
 * may be asynchronous (Redis) or not (memory).
 */
export interface EventStore {
  /** Stores one event of `streamId` and returns its id. */
  storeEvent(streamId: string, message: JsonRpcPayload, context?: StoredEventContext): string | Promise<string>
  /**
   * Calls `send` for every event of the same stream stored after `lastEventId`, in order, and
   * returns that stream's id; `undefined` when the id is unknown (expired, forged, or some events
   * after it were dropped, so a replay would have a gap).
   */
  replayEventsAfter(lastEventId: string, send: (eventId: string, message: JsonRpcPayload) => void | Promise<void>): Promise<string | undefined>
  /**
   * Optional: forgets a stream the client received to its end, which no one will resume. The
   * server passes the stream's session too (a sharded store finds the stream's place by it).
   */
  deleteStream?(streamId: string, sessionId?: string): void | Promise<void>
  /** Optional: forgets every stream of a session that ended (DELETE, idle expiry, eviction). */
  deleteSession?(sessionId: string): void | Promise<void>
  /**
   * Optional, for sessions shared between instances: whether `streamId` is one of the session's
   * (a stream another instance served, resumed after it is gone)...
   */
  hasStream?(sessionId: string, streamId: string): Promise<boolean>
  /**
   * ...and the requests it answers (`pending` of its first event; undefined for a standalone
   * stream). The server passes the session it checked with `hasStream`.
   */
  pendingOf?(streamId: string, sessionId?: string): Promise<RequestId[] | undefined>
  /**
   * Optional: how many events the store holds now, where that is cheap to tell (the memory store
   * keeps a counter); the listener reports it as the gauge `rxmcp.sse.events.stored`. The Redis
   * store leaves it out: its count lives in the shared store, not in this process.
   */
  eventCount?(): number
}

/** Options of {@link createMemoryEventStore}; defaults in {@link MEMORY_EVENT_STORE_DEFAULTS}. */
export interface MemoryEventStoreOptions {
  /** Events kept per stream; older ones are dropped first. */
  maxEventsPerStream?: number
  /** Bytes (of JSON text) kept per stream; older events are dropped first. */
  maxBytesPerStream?: number
  /** Streams kept per session; the session's least recently written one is dropped first. */
  maxStreamsPerSession?: number
  /** Bytes kept per session; the session's least recently written streams are dropped first. */
  maxBytesPerSession?: number
  /** Streams kept in all. */
  maxStreams?: number
  /** Bytes kept in all. */
  maxBytes?: number
}

/** The defaults of {@link MemoryEventStoreOptions}. */
export const MEMORY_EVENT_STORE_DEFAULTS = {
  maxEventsPerStream: 1000,
  maxBytesPerStream: 8 * 1024 * 1024,
  maxStreamsPerSession: 100,
  maxBytesPerSession: 16 * 1024 * 1024,
  maxStreams: 10_000,
  maxBytes: 128 * 1024 * 1024,
} as const

/** What a {@link MemoryEventStore} holds now: byte counters to watch (and to test bounds with). */
export interface MemoryEventStoreStats {
  streams: number
  events: number
  /** JSON text kept, plus a fixed overhead per event. */
  bytes: number
  sessions: number
}

/** The in-memory {@link EventStore}, with its counters. */
export interface MemoryEventStore extends EventStore {
  stats(): MemoryEventStoreStats
  /** The bytes one session's streams hold now. */
  sessionBytes(sessionId: string): number
}

/** Bytes counted per event beside its text: the entry and its id. */
const EVENT_OVERHEAD = 64

/** One stored event: its position and its JSON text (the parsed message is not kept). */
interface StoredEvent { sequence: number; data: string }

/** One stream's events, oldest first. */
interface StoredStream {
  readonly id: string
  readonly session: StoredSession
  /** The last sequence number given out. */
  sequence: number
  /** The highest sequence number dropped for room: a replay from before it would have a gap. */
  dropped: number
  events: StoredEvent[]
  /** Index of the oldest live event in `events` (dropping from the front is O(1)). */
  head: number
  bytes: number
}

/** One session's streams, least recently written first. */
interface StoredSession {
  readonly id: string
  readonly streams: Map<string, StoredStream>
  bytes: number
}

/**
 * The embedded default {@link EventStore}: in memory, lost on restart, and bounded in bytes per
 * stream, per session and in total, as well as in events and streams. Each session spends only
 * its own quota; when the totals are reached, the session holding the most pays first, so one
 * client cannot evict another's streams by opening many of its own. A stream's bytes are freed
 * when the client read it to the end (`deleteStream`) and a session's when it ends (`deleteSession`).
 * @example
 * streamableHttp({ eventStore: createMemoryEventStore({ maxBytesPerSession: 4 * 1024 * 1024 }) })
 */
export function createMemoryEventStore(options: MemoryEventStoreOptions = {}): MemoryEventStore {
  const limits = { ...MEMORY_EVENT_STORE_DEFAULTS, ...options }
  // Every stream by id; each also sits in its session's map, which orders it by recency.
  const streams = new Map<string, StoredStream>()
  const sessions = new Map<string, StoredSession>()
  // Totals, kept in step with every add and drop.
  let totalBytes = 0
  let totalEvents = 0

  const dropOldest = (stream: StoredStream) => {
    const event = stream.events[stream.head]!
    stream.events[stream.head++] = undefined as unknown as StoredEvent
    // Compact now and then so the array does not keep dropped slots forever.
    if (stream.head > 64 && stream.head * 2 > stream.events.length) { stream.events = stream.events.slice(stream.head); stream.head = 0 }
    const size = event.data.length + EVENT_OVERHEAD
    stream.bytes -= size
    stream.session.bytes -= size
    totalBytes -= size
    totalEvents--
    stream.dropped = event.sequence
  }
  const dropStream = (stream: StoredStream) => {
    if (!streams.delete(stream.id)) return
    const session = stream.session
    session.streams.delete(stream.id)
    session.bytes -= stream.bytes
    totalBytes -= stream.bytes
    totalEvents -= stream.events.length - stream.head
    if (session.streams.size === 0) sessions.delete(session.id)
  }
  /** The session's least recently written stream other than `keep`. */
  const oldestOther = (session: StoredSession, keep: StoredStream) => {
    for (const stream of session.streams.values()) if (stream !== keep) return stream
    return undefined
  }
  /** Frees room in `session`, or in `keep` itself when it is the session's only stream. */
  const shrink = (session: StoredSession, keep: StoredStream) => {
    const other = oldestOther(session, keep)
    if (other !== undefined) dropStream(other)
    else if (keep.events.length > keep.head) dropOldest(keep)
    else return false
    return true
  }
  /** The session holding the most (bytes or streams): it pays first when the totals are reached. */
  const largest = (by: 'bytes' | 'streams') => {
    let found: StoredSession | undefined
    for (const session of sessions.values()) {
      if (found === undefined || (by === 'bytes' ? session.bytes > found.bytes : session.streams.size > found.streams.size)) found = session
    }
    return found!
  }

  return {
    storeEvent(streamId, message, context) {
      let stream = streams.get(streamId)
      if (stream === undefined) {
        const sessionId = context?.sessionId ?? ''
        let session = sessions.get(sessionId)
        if (session === undefined) { session = { id: sessionId, streams: new Map(), bytes: 0 }; sessions.set(sessionId, session) }
        stream = { id: streamId, session, sequence: 0, dropped: 0, events: [], head: 0, bytes: 0 }
        streams.set(streamId, stream)
      } else {
        // Recency within the session: the least recently written stream is first in its map.
        stream.session.streams.delete(streamId)
      }
      const session = stream.session
      session.streams.set(streamId, stream)
      const sequence = ++stream.sequence
      const data = context?.data ?? JSON.stringify(message)
      const size = data.length + EVENT_OVERHEAD
      stream.events.push({ sequence, data })
      stream.bytes += size
      session.bytes += size
      totalBytes += size
      totalEvents++
      // Per stream: its own oldest events go first (an event larger than the budget is not kept).
      while (stream.events.length > stream.head && (stream.bytes > limits.maxBytesPerStream || stream.events.length - stream.head > limits.maxEventsPerStream)) dropOldest(stream)
      // Per session: only the session's own streams pay.
      while (session.streams.size > limits.maxStreamsPerSession || session.bytes > limits.maxBytesPerSession) if (!shrink(session, stream)) break
      // In all: the largest holder pays.
      while (streams.size > limits.maxStreams) { const other = oldestOther(largest('streams'), stream); if (other === undefined) break; dropStream(other) }
      while (totalBytes > limits.maxBytes) { const payer = largest('bytes'); if (!shrink(payer, stream)) break }
      return `${streamId}_${sequence}`
    },
    deleteStream(streamId) {
      const stream = streams.get(streamId)
      if (stream !== undefined) dropStream(stream)
    },
    deleteSession(sessionId) {
      const session = sessions.get(sessionId)
      if (session !== undefined) for (const stream of [...session.streams.values()]) dropStream(stream)
    },
    async replayEventsAfter(lastEventId, send) {
      const underscore = lastEventId.lastIndexOf('_')
      if (underscore <= 0) return undefined
      const streamId = lastEventId.slice(0, underscore)
      const after = Number(lastEventId.slice(underscore + 1))
      const stream = streams.get(streamId)
      if (stream === undefined || !Number.isInteger(after) || after < 0 || after > stream.sequence) return undefined
      // Events after `after` were dropped for room: replaying the rest would hide the gap.
      if (after < stream.dropped) return undefined
      // A snapshot: events stored while `send` awaits belong to the live stream, not the replay.
      const events = stream.events.slice(stream.head)
      for (const event of events) {
        if (event.sequence > after) await send(`${streamId}_${event.sequence}`, JSON.parse(event.data) as JsonRpcPayload)
      }
      return streamId
    },
    stats() {
      return { streams: streams.size, events: totalEvents, bytes: totalBytes, sessions: sessions.size }
    },
    eventCount() {
      return totalEvents
    },
    sessionBytes(sessionId) {
      return sessions.get(sessionId)?.bytes ?? 0
    },
  }
}
