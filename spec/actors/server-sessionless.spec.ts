import { afterEach, describe, expect, it } from 'vitest'
import { NEVER, Subject } from 'rxjs'
import { z } from 'zod'
import { createServer, type McpServer } from '../../actors/server.ts'
import type { JsonObject, JsonRpcMessage } from '../../lib/jsonrpc/message.ts'
import type { InspectionEvent } from '../../lib/connection.ts'
import type { Reply, ReplyEnvelope, TransportServer } from '../../lib/transport.ts'
import { ErrorCode } from '../../lib/jsonrpc/errors.ts'
import { MetaKey } from '../../lib/schema/modern.ts'

const MODERN = '2026-07-28'
const META = { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: { name: 'raw', version: '1' } }

/** A reply that keeps what the server writes, and can be closed as a client going away would. */
class RecordingReply implements Reply {
  readonly messages: JsonRpcMessage[] = []
  isClosed = false
  #close!: () => void
  readonly closed = new Promise<void>(resolve => { this.#close = resolve })
  #answered!: (message: JsonRpcMessage) => void
  /** The response, when it comes. */
  readonly response = new Promise<JsonRpcMessage>(resolve => { this.#answered = resolve })

  send(message: JsonRpcMessage): void {
    if (this.isClosed) throw new Error('closed')
    this.messages.push(message)
    if ('id' in message && !('method' in message)) { this.#answered(message); this.close() }
  }

  close(): void {
    if (this.isClosed) return
    this.isClosed = true
    this.#close()
  }
}

/** A listener of requests only: what a web handler or a custom HTTP adapter would give the server. */
function requestListener(): TransportServer & { send(message: unknown): RecordingReply } {
  const requests = new Subject<ReplyEnvelope>()
  return {
    connections: NEVER,
    requests,
    close: async () => requests.complete(),
    send(message: unknown) {
      const reply = new RecordingReply()
      requests.next({ message, reply, requestInfo: { transport: 'custom', headers: undefined, remoteAddress: '192.0.2.7' } })
      return reply
    },
  }
}

let server: McpServer | undefined
afterEach(async () => { await server?.close(); server = undefined })

describe('issue 21: requests served without a session (TransportServer.requests)', () => {
  it('serves a modern tools/call on its reply: progress first, then the finished result, with no session made', async () => {
    const events: InspectionEvent[] = []
    server = createServer({ name: 'sessionless', version: '1' }, { inspect: event => events.push(event) })
    let seen: { session: unknown; era: string; address: string | undefined } | undefined
    server.tool('count', { inputSchema: z.object({ to: z.number() }) }, async ({ to }, ctx) => {
      seen = { session: ctx.session, era: ctx.era, address: ctx.requestInfo.remoteAddress }
      for (let step = 1; step <= to; step++) ctx.progress(step, to)
      return { content: [{ type: 'text', text: `counted to ${to}` }] }
    })
    const listener = requestListener()
    await server.listen(listener)
    const reply = listener.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'count', arguments: { to: 2 }, _meta: { ...META, progressToken: 'p' } } })
    const response = await reply.response as unknown as JsonObject
    expect(reply.messages.map(message => 'method' in message ? message.method : 'response')).toEqual(['notifications/progress', 'notifications/progress', 'response'])
    expect(response.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'counted to 2' }], _meta: { [MetaKey.serverInfo]: { name: 'sessionless' } } })
    expect(seen).toEqual({ session: undefined, era: 'modern', address: '192.0.2.7' })
    expect(server.sessions.size).toBe(0)
    // Inspection sees the request and every message written for it.
    expect(events.filter(event => event.type === 'rxmcp.frame.in')).toHaveLength(1)
    expect(events.filter(event => event.type === 'rxmcp.frame.out')).toHaveLength(3)
  })

  it('serves a legacy request without a session (a stateless listener\'s): initialize and a call, shaped for the newest legacy revision', async () => {
    server = createServer({ name: 'sessionless', version: '1' })
    let session: unknown = 'unset'
    server.tool('echo', {}, (_args, ctx) => { session = ctx.session; return { content: [{ type: 'text', text: 'hi' }] } })
    const listener = requestListener()
    await server.listen(listener)
    const init = await listener.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }).response as unknown as JsonObject
    expect(init.result).toMatchObject({ protocolVersion: '2025-06-18', serverInfo: { name: 'sessionless' }, capabilities: { tools: { listChanged: true } } })
    const call = await listener.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo' } }).response as unknown as JsonObject
    expect(call.result).toEqual({ content: [{ type: 'text', text: 'hi' }] })
    expect(session).toBeUndefined()
    expect(server.sessions.size).toBe(0)
  })

  it('refuses what it cannot serve with the error the spec requires, and lives on', async () => {
    server = createServer({ name: 'sessionless', version: '1' })
    server.tool('echo', {}, () => ({ content: [] }))
    const listener = requestListener()
    await server.listen(listener)
    const batch = await listener.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]).response as unknown as { id: unknown; error: { code: number } }
    expect(batch).toMatchObject({ id: null, error: { code: ErrorCode.InvalidRequest } })
    const unknown = await listener.send({ jsonrpc: '2.0', id: 2, method: 'nope', params: { _meta: META } }).response as unknown as { error: { code: number } }
    expect(unknown.error.code).toBe(ErrorCode.MethodNotFound)
    const noMeta = await listener.send({ jsonrpc: '2.0', id: 3, method: 'server/discover' }).response as unknown as { error: { code: number } }
    expect(noMeta.error.code).toBe(ErrorCode.InvalidParams)
    const unknownVersion = await listener.send({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { ...META, [MetaKey.protocolVersion]: '2099-01-01' } } }).response as unknown as { error: { code: number } }
    expect(unknownVersion.error.code).toBe(-32022)
    const listed = await listener.send({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: META } }).response as unknown as JsonObject
    expect(listed.result).toMatchObject({ tools: [{ name: 'echo' }] })
  })

  it('cancels the handler when the reply closes before the answer, and writes nothing after', async () => {
    server = createServer({ name: 'sessionless', version: '1' })
    let aborted: (reason: unknown) => void
    const abortedWith = new Promise(resolve => { aborted = resolve })
    let isListening!: () => void
    const listening = new Promise<void>(resolve => { isListening = resolve })
    server.tool('wait', {}, (_args, ctx) => new Promise(() => { ctx.signal.addEventListener('abort', () => aborted(ctx.signal.reason)); isListening() }))
    const listener = requestListener()
    await server.listen(listener)
    const reply = listener.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', _meta: META } })
    // The handler has started: its signal is listened to.
    await listening
    reply.close()
    expect(await abortedWith).toMatchObject({ name: 'ConnectionClosedError' })
    expect(reply.messages).toEqual([])
  })
})
