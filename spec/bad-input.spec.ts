import { afterEach, describe, expect, it } from 'vitest'
import { Subject } from 'rxjs'
import { jsonLines } from '../lib/codec/json-lines.ts'
import type { Inbound, Transport } from '../lib/transport.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { createServer, SERVER_DEFAULTS, type McpServer, type ServerOptions } from '../actors/server.ts'
import { verifies } from './helpers/verifies.ts'

/**
 * A server session fed raw bytes through the stdio codec, as a misbehaving client would send them.
 * `write` takes text or bytes; `replies` are the messages the server sent back.
 */
function rawSession(server: McpServer, maxMessageSize = 64 * 1024) {
  const inbound = new Subject<Inbound>()
  const replies: JsonRpcPayload[] = []
  // Who waits for the replies to pass a check (see `when`), looked at again on each reply sent.
  const waiting = new Set<{ check: () => boolean; done: () => void }>()
  const transport: Transport = {
    inbound,
    send: payload => {
      replies.push(JSON.parse(JSON.stringify(payload)))
      for (const waiter of waiting) if (waiter.check()) { waiting.delete(waiter); waiter.done() }
    },
    close: async () => inbound.complete(),
  }
  /** Resolves once the replies pass `check`: at once if they do, else on the reply that makes them. */
  const when = (check: () => boolean) => check() ? Promise.resolve() : new Promise<void>(done => { waiting.add({ check, done }) })
  /** Resolves once `count` replies have been sent (counted from the last time `replies` was emptied). */
  const replied = (count: number) => when(() => replies.length >= count)
  /** Resolves once a reply to request `id` was sent after the first `from` replies. */
  const answered = (id: string, from = 0) => when(() => replies.slice(from).some(reply => (reply as { id?: unknown }).id === id))
  const decoder = jsonLines.createDecoder(item => inbound.next(item), { maxMessageSize })
  const write = (data: string | Uint8Array) => decoder.write(typeof data === 'string' ? new TextEncoder().encode(data) : data)
  const initialize = async (protocolVersion = '2025-11-25') => {
    const before = replies.length
    write(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }) + '\n')
    write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    await answered('init', before)
    replies.length = 0
  }
  /** Sends a ping and checks the session still answers it. */
  const expectAlive = async () => {
    const before = replies.length
    write('{"jsonrpc":"2.0","id":"alive","method":"ping"}\n')
    await answered('alive', before)
    expect(replies.slice(before)).toContainEqual({ jsonrpc: '2.0', id: 'alive', result: {} })
  }
  return { transport, write, initialize, replies, replied, expectAlive }
}

function echoServer(options: ServerOptions = {}): McpServer {
  const server = createServer({ name: 'bad-input', version: '0' }, { reportUnhandledError: () => {}, ...options })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    args => ({ content: [{ type: 'text', text: String(args.text) }] }))
  // Results no wire can carry, as a careless handler returns them.
  server.tool('unserializable', {}, args => {
    const cyclic: Record<string, unknown> = { type: 'text', text: 'loop' }
    cyclic.self = cyclic
    const odd = args.kind === 'bigint' ? { type: 'text', text: 'n', n: 10n } : args.kind === 'cycle' ? cyclic : { type: 'text', text: 't', toJSON() { throw new Error('no') } }
    return { content: [odd as never] }
  })
  server.resourceTemplate('items://{id}', { name: 'item' }, uri => ({ uri, text: uri }))
  return server
}

let server: McpServer
afterEach(async () => { await server?.close() })

async function open(options: { initialize?: boolean; protocolVersion?: string; maxMessageSize?: number; server?: ServerOptions } = {}) {
  server = echoServer(options.server)
  const raw = rawSession(server, options.maxMessageSize)
  await server.listen(raw.transport)
  if (options.initialize !== false) {
    await raw.initialize(options.protocolVersion)
    // A tool's JSON Schema compiler loads on the first call: call once, so every case after answers
    // within the turns `settle` waits.
    raw.write('{"jsonrpc":"2.0","id":"warm","method":"tools/call","params":{"name":"echo","arguments":{"text":"w"}}}\n')
    // Loading it reads files, so wait for the answer itself, not for a number of turns.
    await raw.replied(1)
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: 'warm', result: { content: [{ type: 'text', text: 'w' }] } }])
    raw.replies.length = 0
  }
  return raw
}

describe('bad input', () => {
  type Case = [name: string, input: string | Uint8Array, expected: unknown, initialize?: boolean]
  const cases: Case[] = [
    ['invalid JSON', '{"jsonrpc": "2.0", "id": 1, oops\n', { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringContaining('Parse error') } }],
    ['a JSON number', '42\n', { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } }],
    ['a JSON string', '"hello"\n', { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } }],
    ['wrong jsonrpc version', '{"jsonrpc":"1.0","id":1,"method":"ping"}\n', { jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.any(String) } }],
    ['missing jsonrpc', '{"id":1,"method":"ping"}\n', { jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.any(String) } }],
    ['a null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}\n', { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } }],
    ['an object id', '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } }],
    ['an id of 1e400 (Infinity once parsed)', '{"jsonrpc":"2.0","id":1e400,"method":"ping"}\n', { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: id must be a string or a number' } }],
    ['an id of -1e400 on a tools/call', '{"jsonrpc":"2.0","id":-1e400,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}\n', { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: id must be a string or a number' } }],
    ['a tool result with a BigInt', '{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"unserializable","arguments":{"kind":"bigint"}}}\n', { jsonrpc: '2.0', id: 'b', error: { code: -32603, message: 'Internal error: the result could not be serialized' } }],
    ['a tool result with a cycle', '{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"unserializable","arguments":{"kind":"cycle"}}}\n', { jsonrpc: '2.0', id: 'c', error: { code: -32603, message: 'Internal error: the result could not be serialized' } }],
    ['a tool result whose toJSON throws', '{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"unserializable","arguments":{"kind":"throws"}}}\n', { jsonrpc: '2.0', id: 't', error: { code: -32603, message: 'Internal error: the result could not be serialized' } }],
    ['a numeric method', '{"jsonrpc":"2.0","id":2,"method":5}\n', { jsonrpc: '2.0', id: 2, error: { code: -32600, message: expect.any(String) } }],
    ['result and error together', '{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}\n', { jsonrpc: '2.0', id: 3, error: { code: -32600, message: expect.any(String) } }],
    ['an unknown method', '{"jsonrpc":"2.0","id":4,"method":"tools/explode"}\n', { jsonrpc: '2.0', id: 4, error: { code: -32601, message: expect.any(String) } }],
    ['a method named like an Object.prototype member', '{"jsonrpc":"2.0","id":5,"method":"constructor"}\n', { jsonrpc: '2.0', id: 5, error: { code: -32601, message: expect.any(String) } }],
    ['params that are an array', '{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}\n', { jsonrpc: '2.0', id: 6, error: { code: -32602, message: expect.any(String) } }],
    ['a tool name that is not a string', '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":42}}\n', { jsonrpc: '2.0', id: 7, error: { code: -32602, message: expect.any(String) } }],
    ['a tool named __proto__', '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"__proto__"}}\n', { jsonrpc: '2.0', id: 8, error: { code: -32602, message: expect.any(String) } }],
    ['a bad cursor', '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"not-a-cursor"}}\n', { jsonrpc: '2.0', id: 9, error: { code: -32602, message: 'Invalid params: invalid cursor' } }],
    ['a batch outside 2025-03-26', '[{"jsonrpc":"2.0","id":10,"method":"ping"}]\n', { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('batch') } }],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } }],
    ['a request before initialize', '{"jsonrpc":"2.0","id":11,"method":"tools/list"}\n', { jsonrpc: '2.0', id: 11, error: { code: -32600, message: expect.stringContaining('not initialized') } }, false],
  ]

  it.each(cases)('answers %s as the spec requires and the session lives on', async (_name, input, expected, initialize) => {
    const raw = await open({ initialize })
    raw.write(input)
    await raw.replied(1)
    expect(raw.replies).toEqual([expected])
    if (initialize === false) await raw.initialize()
    await raw.expectAlive()
    // Frames are taken in order: nothing more came for the bad input before the ping's answer.
    if (initialize !== false) expect(raw.replies).toEqual([expected, { jsonrpc: '2.0', id: 'alive', result: {} }])
  })

  verifies('lifecycle:initialized-once', 'refuses a second initialize with -32600', async () => {
    const raw = await open()
    raw.write('{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}\n')
    await raw.replied(1)
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: 'again', error: { code: -32600, message: expect.stringContaining('already initialized') } }])
    await raw.expectAlive()
  })

  verifies('lifecycle:initialize-first', 'answers ping before initialize', async () => {
    const raw = await open({ initialize: false })
    raw.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    await raw.replied(1)
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }])
  })

  it('drops a response to an unknown id without answering', async () => {
    const raw = await open()
    raw.write('{"jsonrpc":"2.0","id":12345,"result":{}}\n{"jsonrpc":"2.0","id":12346,"error":{"code":-1,"message":"x"}}\n')
    // Messages are taken in order: once a ping sent after them is answered, they were, and with nothing.
    await raw.expectAlive()
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: 'alive', result: {} }])
  })

  it('answers a request over the size limit with -32600 carrying its id, naming size and limit, and reads the next line', async () => {
    const raw = await open({ maxMessageSize: 1024 })
    raw.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${'x'.repeat(4096)}"}}}\n`)
    // The official SDK writes the id last: it is read from the line's end.
    raw.write(`{"params":{"name":"echo","arguments":{"text":"${'x'.repeat(4096)}"}},"method":"tools/call","jsonrpc":"2.0","id":"last"}\n`)
    await raw.replied(2)
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'Invalid Request: Message of 4191 bytes exceeds the limit of 1024 bytes', data: { size: 4191, limit: 1024 } } },
      { jsonrpc: '2.0', id: 'last', error: { code: -32600, message: 'Invalid Request: Message of 4196 bytes exceeds the limit of 1024 bytes', data: { size: 4196, limit: 1024 } } },
    ])
    await raw.expectAlive()
  })

  it('answers an oversized line whose id cannot be read with -32600 and id null', async () => {
    const raw = await open({ maxMessageSize: 1024 })
    raw.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat(4096)}"}}\n`)
    await raw.replied(1)
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('exceeds the limit of 1024 bytes') } }])
    await raw.expectAlive()
  })

  it('answers a batch of more than maxBatchSize entries with one -32600 in a 2025-03-26 session', async () => {
    const raw = await open({ protocolVersion: '2025-03-26', server: { maxBatchSize: 10 } })
    raw.write(JSON.stringify(Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))) + '\n')
    raw.write(JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))) + '\n')
    await raw.replied(2)
    expect(raw.replies[0]).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a batch of 11 entries exceeds the limit of 10', data: { entries: 11, limit: 10 } } })
    expect(raw.replies[1]).toHaveLength(10)
    await raw.expectAlive()
  })

  it('answers a 1.9 MiB batch of a million entries with one error, unparsed (maxMembers), and a batch past 1,000 entries with one error', async () => {
    const raw = await open({ protocolVersion: '2025-03-26', maxMessageSize: 4 * 1024 * 1024 })
    raw.write('[' + new Array(1_000_000).fill('1').join(',') + ']\n')
    raw.write('[' + new Array(1_001).fill('1').join(',') + ']\n')
    await raw.replied(2)
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the message holds more than 100000 object members and array elements (maxMembers)', data: { bound: 'maxMembers', limit: 100_000 } } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a batch of 1001 entries exceeds the limit of 1000', data: { entries: 1_001, limit: 1000 } } },
    ])
    await raw.expectAlive()
  })

  it('refuses resources/subscribe past maxSubscriptions with -32600, and takes one again after an unsubscribe', async () => {
    expect(SERVER_DEFAULTS.maxSubscriptions).toBe(1000)
    const raw = await open({ server: { maxSubscriptions: 3 } })
    const subscribe = (id: number, uri: string) => raw.write(JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } }) + '\n')
    for (let i = 1; i <= 4; i++) subscribe(i, `items://${i}`)
    // Subscribing again to a URI already held is no new subscription.
    subscribe(5, 'items://1')
    raw.write('{"jsonrpc":"2.0","id":6,"method":"resources/unsubscribe","params":{"uri":"items://2"}}\n')
    subscribe(7, 'items://4')
    await raw.replied(7)
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: 3, result: {} },
      { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'Invalid Request: this session already holds 3 resource subscriptions, the limit; unsubscribe first', data: { limit: 3 } } },
      { jsonrpc: '2.0', id: 5, result: {} },
      { jsonrpc: '2.0', id: 6, result: {} },
      { jsonrpc: '2.0', id: 7, result: {} },
    ])
    const [session] = server.sessions
    expect([...session!.state.subscriptions.keys()]).toEqual(['items://1', 'items://3', 'items://4'])
  })

  it('updates the subscription map in place, never copying it per subscribe', async () => {
    const raw = await open({ server: { maxSubscriptions: 5000 } })
    const [session] = server.sessions
    // An idle session shares one empty set; its own is made with its first subscription.
    raw.write(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'resources/subscribe', params: { uri: 'items://0' } }) + '\n')
    await raw.replied(1)
    const map = session!.state.subscriptions
    let states = 0
    const watching = session!.states.subscribe(state => { states++; expect(state.subscriptions).toBe(map) })
    for (let i = 1; i < 5000; i++) raw.write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'resources/subscribe', params: { uri: `items://${i}` } }) + '\n')
    for (let i = 0; i < 2500; i++) raw.write(JSON.stringify({ jsonrpc: '2.0', id: `u${i}`, method: 'resources/unsubscribe', params: { uri: `items://${i}` } }) + '\n')
    await raw.replied(7500)
    watching.unsubscribe()
    expect(session!.state.subscriptions).toBe(map)
    expect(map.size).toBe(2500)
    expect(states).toBe(1 + 4999 + 2500)
    expect(raw.replies).toHaveLength(7500)
  })

  it('survives JSON nested 100,000 deep: refused unparsed past 128 levels (maxDepth), with the id when one is read', async () => {
    const raw = await open({ maxMessageSize: 4 * 1024 * 1024 })
    raw.write('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) + '\n')
    raw.write('['.repeat(100_000) + ']'.repeat(100_000) + '\n')
    raw.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"deep","nested":${'['.repeat(50_000)}${']'.repeat(50_000)}}}}\n`)
    raw.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"deep enough","nested":${'['.repeat(120)}${']'.repeat(120)}}}}\n`)
    await raw.replied(4)
    const tooDeep = { code: -32700, message: 'Parse error: the message nests deeper than 128 levels (maxDepth)', data: { bound: 'maxDepth', limit: 128 } }
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: null, error: tooDeep },
      { jsonrpc: '2.0', id: null, error: tooDeep },
      { jsonrpc: '2.0', id: 1, error: tooDeep },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'deep enough' }] } },
    ])
    await raw.expectAlive()
  })

  it('does not pollute prototypes through __proto__ or constructor keys', async () => {
    const raw = await open()
    raw.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"p","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}},"__proto__":{"polluted":true}}}\n')
    raw.write('{"jsonrpc":"2.0","id":2,"method":"initialize","__proto__":{"polluted":true},"params":{"__proto__":{"polluted":true}}}\n')
    await raw.replied(2)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty('polluted')
    expect(raw.replies[0]).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'p' }] } })
    await raw.expectAlive()
  })

  verifies('jsonrpc:id-unique', 'refuses a request that reuses an in-flight id', async () => {
    server = createServer({ name: 'slow', version: '0' })
    // The first call is held until the test lets it go: the second one meets it in flight.
    let release!: () => void
    const released = new Promise<void>(resolve => { release = resolve })
    server.tool('wait', {}, async () => { await released; return { content: [] } })
    const raw = rawSession(server)
    await server.listen(raw.transport)
    await raw.initialize()
    raw.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}\n{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}\n')
    await raw.replied(1)
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.stringContaining('already in use') } },
    ])
    release()
    await raw.replied(2)
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.stringContaining('already in use') } },
      { jsonrpc: '2.0', id: 1, result: { content: [] } },
    ])
    await raw.expectAlive()
  })

  it('accepts a batch in a 2025-03-26 session', async () => {
    const raw = await open({ protocolVersion: '2025-03-26' })
    raw.write('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]\n')
    await raw.replied(1)
    expect(raw.replies).toEqual([[
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'b' }] } },
    ]])
  })
})
