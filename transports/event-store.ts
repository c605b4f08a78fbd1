import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'

/**
 * Where the Streamable HTTP server keeps the events of its SSE streams, so a client that lost a
 * stream can resume it with `Last-Event-ID` and get exactly the events it missed.
 *
 * Event ids must be unique across streams and name their stream (the server reads the stream
 * back from the id). Implementations may be asynchronous (Redis) or not (memory).
 */
export interface EventStore {
  /** Stores one event of `streamId` and returns its id. */
  storeEvent(streamId: string, message: JsonRpcPayload): string | Promise<string>
  /**
   * Calls `send` for every event of the same stream stored after `lastEventId`, in order, and
   * returns that stream's id; `undefined` when the id is unknown (expired or forged).
   */
  replayEventsAfter(lastEventId: string, send: (eventId: string, message: JsonRpcPayload) => void | Promise<void>): Promise<string | undefined>
  /** Optional: forgets a stream the client received to its end, which no one will resume. */
  deleteStream?(streamId: string): void | Promise<void>
}

/** Options of {@link createMemoryEventStore}. */
export interface MemoryEventStoreOptions {
  /** Events kept per stream; older ones are dropped first (default 1,000). */
  maxEventsPerStream?: number
  /** Streams kept; the least recently written is dropped first (default 10,000). */
  maxStreams?: number
}

/**
 * The embedded default {@link EventStore}: bounded, in memory, lost on restart.
 * @example
 * streamableHttp({ eventStore: createMemoryEventStore({ maxEventsPerStream: 100 }) })
 */
export function createMemoryEventStore(options: MemoryEventStoreOptions = {}): EventStore {
  const maxEvents = options.maxEventsPerStream ?? 1000
  const maxStreams = options.maxStreams ?? 10_000
  // Events per stream, in order; a Map keeps insertion order, which doubles as recency for eviction.
  const streams = new Map<string, { sequence: number; events: { sequence: number; message: JsonRpcPayload }[] }>()
  return {
    storeEvent(streamId, message) {
      let stream = streams.get(streamId)
      if (stream === undefined) {
        if (streams.size >= maxStreams) streams.delete(streams.keys().next().value!)
        stream = { sequence: 0, events: [] }
      } else {
        streams.delete(streamId)
      }
      streams.set(streamId, stream)
      const sequence = ++stream.sequence
      stream.events.push({ sequence, message })
      if (stream.events.length > maxEvents) stream.events.shift()
      return `${streamId}_${sequence}`
    },
    deleteStream(streamId) {
      streams.delete(streamId)
    },
    async replayEventsAfter(lastEventId, send) {
      const underscore = lastEventId.lastIndexOf('_')
      if (underscore <= 0) return undefined
      const streamId = lastEventId.slice(0, underscore)
      const after = Number(lastEventId.slice(underscore + 1))
      const stream = streams.get(streamId)
      if (stream === undefined || !Number.isInteger(after) || after < 0 || after > stream.sequence) return undefined
      for (const event of stream.events) {
        if (event.sequence > after) await send(`${streamId}_${event.sequence}`, event.message)
      }
      return streamId
    },
  }
}
