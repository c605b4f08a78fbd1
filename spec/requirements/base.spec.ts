import { afterEach, describe, expect, it } from 'vitest'
import { Subject } from 'rxjs'
import { createServer, type McpServer, type ServerContext } from '../../actors/server.ts'
import type { Inbound, Transport } from '../../lib/transport.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'

/**
 * Requirements of the base protocol that no other spec asserted on the wire (see spec/requirements/):
 * what a server sends back, read as raw JSON-RPC messages.
 */

const MODERN = '2026-07-28'

let server: McpServer | undefined
afterEach(async () => { await server?.close(); server = undefined })

/**
 * A server over a transport the test writes raw messages into. `replies` is every message the
 * server sent, parsed back from JSON, as a peer would read it.
 */
async function rawServer(setup: (server: McpServer) => void = () => {}) {
  server = createServer({ name: 'requirements', version: '1' }, { reportUnhandledError: () => {} })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, args => ({ content: [{ type: 'text', text: String(args.text) }] }))
  setup(server)
  const inbound = new Subject<Inbound>()
  const replies: JsonObject[] = []
  // Waits on the replies not yet satisfied, each looked at again on every reply (see `until`).
  const waiting = new Set<{ predicate: (replies: JsonObject[]) => boolean; done: () => void }>()
  const transport: Transport = {
    inbound,
    send: payload => {
      replies.push(JSON.parse(JSON.stringify(payload)) as JsonObject)
      for (const waiter of waiting) if (waiter.predicate(replies)) { waiting.delete(waiter); waiter.done() }
    },
    close: async () => inbound.complete(),
  }
  await server.listen(transport)
  const write = (message: JsonObject) => inbound.next({ type: 'message', message })
  /** Resolves once `predicate` holds of the replies: at once, or on the reply that makes it (the test's timeout bounds it). */
  const until = (predicate: (replies: JsonObject[]) => boolean) =>
    predicate(replies) ? Promise.resolve() : new Promise<void>(done => { waiting.add({ predicate, done }) })
  /** A ping written last and answered proves every message written before it was handled (one session handles in order). */
  const settle = async () => {
    const id = `settle-${replies.length}`
    write({ jsonrpc: '2.0', id, method: 'ping' })
    await until(all => all.some(reply => reply.id === id))
    return replies.filter(reply => reply.id !== id)
  }
  const initialize = async () => {
    write({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
    await until(all => all.some(reply => reply.id === 'init'))
    write({ jsonrpc: '2.0', method: 'notifications/initialized' })
    replies.length = 0
  }
  return { write, replies, until, settle, initialize }
}

const modernMeta = (extra: JsonObject = {}): JsonObject =>
  ({ [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: { name: 'raw', version: '1' }, ...extra })

describe('MCP 2025-11-25 base protocol', () => {
  it('answers every request of a burst with its own id', async () => {
    const raw = await rawServer()
    await raw.initialize()
    raw.write({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'seven' } } })
    raw.write({ jsonrpc: '2.0', id: 'eight', method: 'ping' })
    raw.write({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'echo', arguments: { text: 'zero' } } })
    await raw.until(replies => replies.length === 3)
    expect([...raw.replies].sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual([
      { jsonrpc: '2.0', id: 0, result: { content: [{ type: 'text', text: 'zero' }] } },
      { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'seven' }] } },
      { jsonrpc: '2.0', id: 'eight', result: {} },
    ])
  })

  it('answers no notification, known or unknown', async () => {
    const raw = await rawServer()
    await raw.initialize()
    raw.write({ jsonrpc: '2.0', method: 'notifications/initialized' })
    raw.write({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' })
    raw.write({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'nobody', progress: 1 } })
    raw.write({ jsonrpc: '2.0', method: 'vendor/unknown', params: { x: 1 } })
    expect(await raw.settle()).toEqual([])
  })

  it('sends its notifications without an id', async () => {
    const raw = await rawServer(server => {
      server.tool('chatty', {}, (_args, ctx: ServerContext) => {
        ctx.log('warning', 'careful')
        ctx.progress(1, 2, 'half')
        return { content: [] }
      })
    })
    await raw.initialize()
    raw.write({ jsonrpc: '2.0', id: 'level', method: 'logging/setLevel', params: { level: 'info' } })
    raw.write({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'chatty', arguments: {}, _meta: { progressToken: 'p' } } })
    await raw.until(replies => replies.some(reply => reply.id === 'call'))
    server!.tool('added', {}, () => ({ content: [] }))
    await raw.until(replies => replies.some(reply => reply.method === 'notifications/tools/list_changed'))
    const notifications = raw.replies.filter(reply => 'method' in reply)
    expect(notifications.map(notification => notification.method).sort()).toEqual(['notifications/message', 'notifications/progress', 'notifications/tools/list_changed'])
    for (const notification of notifications) expect(notification).not.toHaveProperty('id')
  })

  it('ignores a cancellation that arrives after the response', async () => {
    const raw = await rawServer()
    await raw.initialize()
    raw.write({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'done' } } })
    await raw.until(replies => replies.some(reply => reply.id === 1))
    raw.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'too late' } })
    // The id is free again once answered: a new request under it is served as any other.
    raw.write({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'again' } } })
    expect(await raw.settle()).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'again' }] } },
    ])
  })

  it('sends no progress after the response, even when the handler reports some', async () => {
    // The handler keeps its context and reports on it once its request was answered.
    let kept: ServerContext | undefined
    const raw = await rawServer(server => {
      server.tool('early', {}, (_args, ctx: ServerContext) => {
        kept = ctx
        ctx.progress(1, 3)
        return { content: [] }
      })
    })
    await raw.initialize()
    raw.write({ jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'early', arguments: {}, _meta: { progressToken: 'tok' } } })
    await raw.until(replies => replies.some(reply => reply.id === 'p'))
    kept!.progress(2, 3)
    kept!.progress(3, 3)
    const replies = await raw.settle()
    expect(replies.map(reply => reply.method ?? `response ${String(reply.id)}`)).toEqual(['notifications/progress', 'response p'])
    expect(replies[0]).toMatchObject({ params: { progressToken: 'tok', progress: 1 } })
  })
})

describe('MCP 2026-07-28 base protocol', () => {
  it('sends the notifications of a request without an id', async () => {
    const raw = await rawServer(server => {
      server.tool('chatty', {}, (_args, ctx: ServerContext) => {
        ctx.log('warning', 'careful')
        ctx.progress(1, 2, 'half')
        return { content: [] }
      })
    })
    raw.write({ jsonrpc: '2.0', id: 'm', method: 'tools/call', params: { name: 'chatty', arguments: {}, _meta: modernMeta({ progressToken: 'p', [MetaKey.logLevel]: 'info' }) } })
    await raw.until(replies => replies.some(reply => reply.id === 'm'))
    const notifications = raw.replies.filter(reply => 'method' in reply)
    expect(notifications.map(notification => notification.method).sort()).toEqual(['notifications/message', 'notifications/progress'])
    for (const notification of notifications) expect(notification).not.toHaveProperty('id')
  })

  it('ignores a cancellation of a modern request that arrives after the response', async () => {
    const raw = await rawServer()
    raw.write({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'done' }, _meta: modernMeta() } })
    await raw.until(replies => replies.some(reply => reply.id === 5))
    raw.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'too late' } })
    raw.write({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'echo', arguments: { text: 'next' }, _meta: modernMeta() } })
    await raw.until(replies => replies.some(reply => reply.id === 6))
    expect(raw.replies.map(reply => [reply.id, (reply.result as JsonObject | undefined)?.content, reply.error])).toEqual([
      [5, [{ type: 'text', text: 'done' }], undefined],
      [6, [{ type: 'text', text: 'next' }], undefined],
    ])
  })
})

describe('MCP 2026-07-28 progress and sampling (server)', () => {
  it('sends no progress after the response of a modern request', async () => {
    let kept: ServerContext | undefined
    const raw = await rawServer(server => {
      server.tool('early', {}, (_args, ctx: ServerContext) => {
        kept = ctx
        ctx.progress(1, 3)
        return { content: [] }
      })
    })
    raw.write({ jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'early', arguments: {}, _meta: modernMeta({ progressToken: 'tok' }) } })
    await raw.until(replies => replies.some(reply => reply.id === 'p'))
    kept!.progress(2, 3)
    raw.write({ jsonrpc: '2.0', id: 'next', method: 'tools/call', params: { name: 'echo', arguments: { text: 'n' }, _meta: modernMeta() } })
    await raw.until(replies => replies.some(reply => reply.id === 'next'))
    expect(raw.replies.map(reply => reply.method ?? `response ${String(reply.id)}`)).toEqual(['notifications/progress', 'response p', 'response next'])
  })

  it('does not ask a client for sampling with tools when it declared sampling without tools', async () => {
    const raw = await rawServer(server => {
      server.tool('ask', {}, async (_args, ctx: ServerContext) => {
        await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5, tools: [{ name: 't', inputSchema: { type: 'object' } }] })
        return { content: [] }
      })
    })
    raw.write({ jsonrpc: '2.0', id: 's', method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: { ...modernMeta(), [MetaKey.clientCapabilities]: { sampling: {} } } } })
    await raw.until(replies => replies.some(reply => reply.id === 's'))
    expect(raw.replies).toEqual([{
      jsonrpc: '2.0', id: 's',
      error: { code: -32021, message: expect.stringContaining('sampling.tools'), data: { requiredCapabilities: { sampling: { tools: {} } } } },
    }])
  })
})
