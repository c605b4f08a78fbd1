import { afterEach, describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { connect, type ListenEvent } from '../../actors/client.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { createConnection, type InspectionEvent } from '../../lib/connection.ts'
import { createSseParser } from '../../lib/codec/sse.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { collected } from '../helpers/collected.ts'
import { countListeners } from '../helpers/count-listeners.ts'

const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId'
const SERVER_INFO = { name: 'listening', version: '1' }
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of closers.splice(0).reverse()) await close() })

function listeningServer(): McpServer {
  const server = createServer(SERVER_INFO, { capabilities: { tools: { listChanged: true } } })
  server.tool('echo', {}, () => ({ content: [] }))
  closers.push(() => server.close())
  return server
}

/** The JSON-RPC messages among inspection events of one direction. */
function frames(events: readonly InspectionEvent[], type: 'rxmcp.frame.in' | 'rxmcp.frame.out'): JsonObject[] {
  return events.filter(event => event.type === type).map(event => (event as { message: JsonObject }).message)
}

/** The messages of one listen stream, by its id: notifications tagged with it, cancellations naming it, its response. */
function ofStream(messages: JsonObject[], id: unknown): JsonObject[] {
  return messages.filter(message => message.id === id
    || (message.params as JsonObject | undefined)?.requestId === id
    || ((message.params as JsonObject | undefined)?._meta as JsonObject | undefined)?.[SUBSCRIPTION] === id)
}

describe('issue 20: a server ends a listen stream without notifications/cancelled', () => {
  it('over a memory pair: notifications/cancelled naming the listen request (with its subscription id), then the completion result, when the server closes; the client completes and cancels nothing back', async () => {
    const server = listeningServer()
    const [near, far] = createMemoryPair()
    await server.listen(far)
    const seen = collected<InspectionEvent>()
    const client = await connect(near, { name: 'rx', version: '1' }, { era: 'modern', inspect: event => seen.push(event) })
    closers.push(() => client.close())
    const events = collected<ListenEvent>()
    let complete!: () => void
    const completed = new Promise<void>(resolve => { complete = resolve })
    client.listen({ toolsListChanged: true }).subscribe({ next: event => events.push(event), complete: () => complete() })
    await events.when(items => items.length === 1)
    const id = frames(seen.items, 'rxmcp.frame.out').find(message => message.method === 'subscriptions/listen')!.id
    await server.close()
    await completed
    await seen.when(items => ofStream(frames(items, 'rxmcp.frame.in'), id).length === 3)
    expect(ofStream(frames(seen.items, 'rxmcp.frame.in'), id)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { [SUBSCRIPTION]: id }, notifications: { toolsListChanged: true } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: { [SUBSCRIPTION]: id }, requestId: id, reason: 'The server is shutting down' } },
      { jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION]: id, 'io.modelcontextprotocol/serverInfo': SERVER_INFO } } },
    ])
    // The server ended it: the client does not cancel a request that is over.
    expect(frames(seen.items, 'rxmcp.frame.out').filter(message => message.method === 'notifications/cancelled')).toEqual([])
  })

  it('over real HTTP: the listen response stream carries notifications/cancelled, then the completion result, then ends', async () => {
    const server = listeningServer()
    const http = streamableHttp({ port: 0 })
    await server.listen(http)
    const body = { jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } }
    const response = await fetch(http.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify(body),
    })
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const received = collected<JsonObject>()
    const parser = createSseParser(event => { if (event.data !== '') received.push(JSON.parse(event.data) as JsonObject) })
    const decoder = new TextDecoder()
    const reader = response.body!.getReader()
    const ended = (async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        parser.write(decoder.decode(value, { stream: true }))
      }
    })()
    await received.when(items => items.length === 1)
    await server.close()
    await ended
    expect(received.items).toEqual([
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { [SUBSCRIPTION]: 'listen-1' }, notifications: { toolsListChanged: true } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: { [SUBSCRIPTION]: 'listen-1' }, requestId: 'listen-1', reason: 'The server is shutting down' } },
      { jsonrpc: '2.0', id: 'listen-1', result: { resultType: 'complete', _meta: { [SUBSCRIPTION]: 'listen-1', 'io.modelcontextprotocol/serverInfo': SERVER_INFO } } },
    ])
  })

  it('when the client cancels a listen (notifications/cancelled on a memory pair), stops it and sends nothing more for it, not even when the server closes', async () => {
    const server = listeningServer()
    const listeners = countListeners(server)
    const [near, far] = createMemoryPair()
    await server.listen(far)
    const seen = collected<InspectionEvent>()
    const connection = createConnection(near, { inspect: event => seen.push(event) })
    connection.start()
    closers.push(() => connection.close())
    const stream = connection.request('subscriptions/listen', { _meta: META, notifications: { toolsListChanged: true } }, { progress: false, timeout: 0 }).subscribe({ error: () => {} })
    const id = frames(seen.items, 'rxmcp.frame.out')[0]!.id
    await seen.when(items => ofStream(frames(items, 'rxmcp.frame.in'), id).length === 1)
    stream.unsubscribe()
    expect(frames(seen.items, 'rxmcp.frame.out').at(-1)).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'Request cancelled by the caller' } })
    await firstValueFrom(listeners.pipe(filter(count => count === 0)))
    server.tool('later', {}, () => ({ content: [] }))
    await server.close()
    await connection.closed
    expect(ofStream(frames(seen.items, 'rxmcp.frame.in'), id).map(message => message.method ?? 'response')).toEqual(['notifications/subscriptions/acknowledged'])
  })
})
