import { createConnection, type Connection, type IncomingRequest } from '../../lib/connection.ts'
import type { JsonObject, RequestId } from '../../lib/jsonrpc/message.ts'
import { createMemoryPair, type MemoryTransport } from '../../transports/memory.ts'

/** A request the fake server received. */
export interface Received { id: RequestId; method: string; params: JsonObject | undefined }

/** A handler of the fake server: the request's params and its incoming request, answer as a connection handler returns it. */
export type FakeHandler = (params: JsonObject | undefined, request: IncomingRequest) => unknown

/** What a modern server says in server/discover, unless a test says otherwise. */
export const DISCOVER_RESULT: JsonObject = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true } },
  instructions: 'Be kind',
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'fake-modern', version: '2.0.0' } },
  ttlMs: 0,
  cacheScope: 'public',
}

/**
 * A server made of one raw connection over a memory pair: every request it receives is recorded,
 * and answered by the handler given for its method (server/discover answers DISCOVER_RESULT
 * unless replaced; a method without handler answers -32601).
 */
export function fakeServer(handlers: Record<string, FakeHandler> = {}): { transport: MemoryTransport; server: Connection; received: Received[]; cancelled: JsonObject[]; of(method: string): Received[] } {
  const [near, far] = createMemoryPair()
  const server = createConnection(far)
  const received: Received[] = []
  const cancelled: JsonObject[] = []
  const all: Record<string, FakeHandler> = { 'server/discover': () => DISCOVER_RESULT, ...handlers }
  for (const [method, handler] of Object.entries(all)) {
    server.setRequestHandler(method, (params, request) => {
      received.push({ id: request.id, method, params })
      return handler(params, request)
    })
  }
  server.notifications('notifications/cancelled').subscribe(params => cancelled.push(params))
  server.start()
  return { transport: near, server, received, cancelled, of: method => received.filter(request => request.method === method) }
}

/** The `_meta` of a received request. */
export function metaOf(request: Received | undefined): JsonObject {
  return (request?.params?._meta ?? {}) as JsonObject
}

/** Resolves after a few turns of the event loop (messages over a memory pair are asynchronous). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise(resolve => setImmediate(resolve))
}
