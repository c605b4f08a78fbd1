import { afterEach, describe, expect, it } from 'vitest'
import { Subject } from 'rxjs'
import { jsonLines } from '../lib/codec/json-lines.ts'
import type { Inbound, Transport } from '../lib/transport.ts'
import type { JsonRpcPayload } from '../lib/jsonrpc/message.ts'
import { createServer, type McpServer } from '../actors/server.ts'
import { verifies } from './helpers/verifies.ts'

/**
 * A server session fed raw bytes through the stdio codec, as a misbehaving client would send them.
 * `write` takes text or bytes; `replies` are the messages the server sent back.
 */
function rawSession(server: McpServer, maxMessageSize = 64 * 1024) {
  const inbound = new Subject<Inbound>()
  const replies: JsonRpcPayload[] = []
  const transport: Transport = {
    inbound,
    send: payload => { replies.push(JSON.parse(JSON.stringify(payload))) },
    close: async () => inbound.complete(),
  }
  const decoder = jsonLines.createDecoder(item => inbound.next(item), { maxMessageSize })
  const write = (data: string | Uint8Array) => decoder.write(typeof data === 'string' ? new TextEncoder().encode(data) : data)
  const settle = async () => { for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve)) }
  const initialize = async (protocolVersion = '2025-11-25') => {
    write(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }) + '\n')
    write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    await settle()
    replies.length = 0
  }
  /** Sends a ping and checks the session still answers it. */
  const expectAlive = async () => {
    const before = replies.length
    write('{"jsonrpc":"2.0","id":"alive","method":"ping"}\n')
    await settle()
    expect(replies.slice(before)).toContainEqual({ jsonrpc: '2.0', id: 'alive', result: {} })
  }
  return { transport, write, settle, initialize, replies, expectAlive }
}

function echoServer(): McpServer {
  const server = createServer({ name: 'bad-input', version: '0' }, { reportUnhandledError: () => {} })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    args => ({ content: [{ type: 'text', text: String(args.text) }] }))
  return server
}

let server: McpServer
afterEach(async () => { await server?.close() })

async function open(options: { initialize?: boolean; protocolVersion?: string; maxMessageSize?: number } = {}) {
  server = echoServer()
  const raw = rawSession(server, options.maxMessageSize)
  await server.listen(raw.transport)
  if (options.initialize !== false) await raw.initialize(options.protocolVersion)
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
    await raw.settle()
    expect(raw.replies).toEqual([expected])
    if (initialize === false) await raw.initialize()
    await raw.expectAlive()
  })

  verifies('lifecycle:initialized-once', 'refuses a second initialize with -32600', async () => {
    const raw = await open()
    raw.write('{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}\n')
    await raw.settle()
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: 'again', error: { code: -32600, message: expect.stringContaining('already initialized') } }])
    await raw.expectAlive()
  })

  verifies('lifecycle:initialize-first', 'answers ping before initialize', async () => {
    const raw = await open({ initialize: false })
    raw.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    await raw.settle()
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }])
  })

  it('drops a response to an unknown id without answering', async () => {
    const raw = await open()
    raw.write('{"jsonrpc":"2.0","id":12345,"result":{}}\n{"jsonrpc":"2.0","id":12346,"error":{"code":-1,"message":"x"}}\n')
    await raw.settle()
    expect(raw.replies).toEqual([])
    await raw.expectAlive()
  })

  it('answers a line over the size limit with -32600 and reads the next line', async () => {
    const raw = await open({ maxMessageSize: 1024 })
    raw.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${'x'.repeat(4096)}"}}}\n`)
    await raw.settle()
    expect(raw.replies).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('1024') } }])
    await raw.expectAlive()
  })

  it('survives JSON nested 100,000 deep', async () => {
    const raw = await open({ maxMessageSize: 4 * 1024 * 1024 })
    raw.write('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) + '\n')
    raw.write('['.repeat(100_000) + ']'.repeat(100_000) + '\n')
    raw.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"deep","nested":${'['.repeat(50_000)}${']'.repeat(50_000)}}}}\n`)
    await raw.settle()
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('batch') } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'deep' }] } },
    ])
    await raw.expectAlive()
  })

  it('does not pollute prototypes through __proto__ or constructor keys', async () => {
    const raw = await open()
    raw.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"p","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}},"__proto__":{"polluted":true}}}\n')
    raw.write('{"jsonrpc":"2.0","id":2,"method":"initialize","__proto__":{"polluted":true},"params":{"__proto__":{"polluted":true}}}\n')
    await raw.settle()
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty('polluted')
    expect(raw.replies[0]).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'p' }] } })
    await raw.expectAlive()
  })

  verifies('jsonrpc:id-unique', 'refuses a request that reuses an in-flight id', async () => {
    server = createServer({ name: 'slow', version: '0' })
    server.tool('wait', {}, () => new Promise(resolve => setTimeout(() => resolve({ content: [] }), 50)))
    const raw = rawSession(server)
    await server.listen(raw.transport)
    await raw.initialize()
    raw.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}\n{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}\n')
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(raw.replies).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.stringContaining('already in use') } },
      { jsonrpc: '2.0', id: 1, result: { content: [] } },
    ])
    await raw.expectAlive()
  })

  it('accepts a batch in a 2025-03-26 session', async () => {
    const raw = await open({ protocolVersion: '2025-03-26' })
    raw.write('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]\n')
    await raw.settle()
    expect(raw.replies).toEqual([[
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'b' }] } },
    ]])
  })
})
