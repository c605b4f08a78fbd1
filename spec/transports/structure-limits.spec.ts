import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { once } from 'node:events'
import { Packr } from 'msgpackr'
import { WebSocket } from 'ws'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { websocketClient } from '../../transports/websocket-client.ts'
import type { StructureLimits } from '../../lib/codec/structure.ts'
import { connect } from '../../actors/client.ts'
import { websocket, WS_SUBPROTOCOL } from '../../transports/websocket.ts'
import { loadMsgpack } from '../../lib/codec/msgpack.ts'
import { ErrorCode, StructureLimitError } from '../../lib/jsonrpc/errors.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { events, messages } from '../helpers/sse-events.ts'

const MODERN = '2026-07-28'
const ACCEPT = 'application/json, text/event-stream'
const META = { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: { name: 'attacker', version: '1' } }
const tinyServer = fileURLToPath(new URL('../fixtures/tiny-server.ts', import.meta.url))

/** A tools/call of `echo` whose `text` argument is 1.9 million arrays deep: 3.8 MB, under the 4 MiB body limit. */
const DEEP = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":${JSON.stringify(META)},"arguments":{"text":${'['.repeat(1_900_000)}${']'.repeat(1_900_000)}}}}`
/** A tools/call of `echo` with 200,000 keys in its arguments: 2.6 MB. */
const WIDE = `{"jsonrpc":"2.0","id":"wide","method":"tools/call","params":{"name":"echo","_meta":${JSON.stringify(META)},"arguments":{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":0`).join(',')}}}}`
const echo = (id: number, text: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text }, _meta: META } })

const DEPTH_ERROR = { code: ErrorCode.ParseError, message: 'Parse error: the message nests deeper than 128 levels (maxDepth)', data: { bound: 'maxDepth', limit: 128 } }
const MEMBERS_ERROR = { code: ErrorCode.ParseError, message: 'Parse error: the message holds more than 100000 object members and array elements (maxMembers)', data: { bound: 'maxMembers', limit: 100_000 } }

let mcp: McpServer | undefined
const cleanups: Array<() => void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup()
  await mcp?.close()
  mcp = undefined
})

/** A server with one tool, `echo`, counting its calls. */
function echoServer() {
  const server = createServer({ name: 'bounded', version: '1' })
  const calls = { count: 0 }
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => {
    calls.count++
    return { content: [{ type: 'text', text: String(text) }] }
  })
  mcp = server
  return { server, calls }
}

describe('issue 20: one 4 MiB JSON body costs 1.6 s (nesting 1.9 million deep) or +380 MiB (200k keys)', () => {
  beforeAll(() => loadMsgpack())

  it('refuses both bodies over real HTTP with -32700 and their ids, unparsed, and keeps serving', async () => {
    const { server, calls } = echoServer()
    const http = streamableHttp({ port: 0 })
    await server.listen(http)
    const post = (body: string, name = 'echo') => fetch(http.url!, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
    })
    const deep = await post(DEEP)
    expect(deep.status).toBe(400)
    expect(await deep.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: DEPTH_ERROR.code, message: DEPTH_ERROR.message } })
    const wide = await post(WIDE)
    expect(wide.status).toBe(400)
    expect(await wide.json()).toEqual({ jsonrpc: '2.0', id: 'wide', error: { code: MEMBERS_ERROR.code, message: MEMBERS_ERROR.message } })
    expect(calls.count).toBe(0)
    const after = await post(JSON.stringify(echo(8, 'still serving')))
    expect(after.status).toBe(200)
    const answer = after.headers.get('content-type')?.includes('text/event-stream') ? messages(await events(after)).at(-1) : await after.json()
    expect(answer).toMatchObject({ id: 8, result: { content: [{ type: 'text', text: 'still serving' }] } })
  }, 60_000)

  it('refuses both over a real WebSocket (JSON text frames and msgpack binary frames), and the socket serves on', async () => {
    const { server, calls } = echoServer()
    const listener = websocket({ port: 0, heartbeatMs: 0 })
    await server.listen(listener)
    const exchange = async (subprotocol: string, frames: Array<string | Uint8Array>, count: number) => {
      const socket = new WebSocket(listener.url!, [subprotocol])
      cleanups.push(() => socket.terminate())
      await once(socket, 'open')
      const packr = new Packr({ useRecords: false })
      const answers: unknown[] = []
      const all = new Promise<void>(resolve => socket.on('message', (data: Buffer, isBinary: boolean) => {
        answers.push(isBinary ? packr.unpack(data) : JSON.parse(data.toString('utf8')))
        if (answers.length === count) resolve()
      }))
      for (const frame of frames) socket.send(frame)
      await all
      return answers
    }
    expect(await exchange(WS_SUBPROTOCOL.json, [DEEP, WIDE, JSON.stringify(echo(9, 'json'))], 3)).toEqual([
      { jsonrpc: '2.0', id: 7, error: DEPTH_ERROR },
      { jsonrpc: '2.0', id: 'wide', error: MEMBERS_ERROR },
      { jsonrpc: '2.0', id: 9, result: expect.objectContaining({ content: [{ type: 'text', text: 'json' }] }) },
    ])
    // msgpack: the same shapes, built by hand (msgpackr's own encoder would recurse 1.9 million deep).
    const packr = new Packr({ useRecords: false, variableMapSize: true })
    const envelope = (id: number, args: Uint8Array) => concat(
      [0x84], packr.pack('jsonrpc'), packr.pack('2.0'), packr.pack('id'), packr.pack(id), packr.pack('method'), packr.pack('tools/call'),
      packr.pack('params'), [0x83], packr.pack('name'), packr.pack('echo'), packr.pack('_meta'), packr.pack(META), packr.pack('arguments'), args)
    const deepArgs = concat([0x81], packr.pack('text'), new Uint8Array(1_900_000).fill(0x91), [0x90])
    const wideArgs = packr.pack(Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, 0])))
    expect(await exchange(WS_SUBPROTOCOL.msgpack, [envelope(10, deepArgs), envelope(11, wideArgs), packr.pack(echo(12, 'msgpack'))], 3)).toEqual([
      { jsonrpc: '2.0', id: 10, error: DEPTH_ERROR },
      { jsonrpc: '2.0', id: 11, error: MEMBERS_ERROR },
      { jsonrpc: '2.0', id: 12, result: expect.objectContaining({ content: [{ type: 'text', text: 'msgpack' }] }) },
    ])
    expect(calls.count).toBe(2)
  }, 60_000)

  it('refuses both as lines on the stdin of a real stdio server process, which answers the next line', async () => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', tinyServer], { stdio: ['pipe', 'pipe', 'ignore'] })
    cleanups.push(() => child.kill('SIGKILL'))
    const answers: unknown[] = []
    let pending = ''
    const all = new Promise<void>(resolve => child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8')
      let end: number
      while ((end = pending.indexOf('\n')) >= 0) {
        answers.push(JSON.parse(pending.slice(0, end)))
        pending = pending.slice(end + 1)
      }
      if (answers.length >= 3) resolve()
    }))
    child.stdin!.write(`${DEEP}\n${WIDE}\n${JSON.stringify(echo(13, 'stdio'))}\n`)
    await all
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: 7, error: DEPTH_ERROR },
      { jsonrpc: '2.0', id: 'wide', error: MEMBERS_ERROR },
      { jsonrpc: '2.0', id: 13, result: expect.objectContaining({ content: [{ type: 'text', text: 'stdio' }] }) },
    ])
    child.stdin!.end()
  }, 60_000)
})

describe('a client meets a result past the structure bounds', () => {
  it('fails that call at once with StructureLimitError (no timeout), over real HTTP, and calls on', async () => {
    const { server } = echoServer()
    let nested: unknown = 'bottom'
    for (let i = 0; i < 200; i++) nested = [nested]
    server.tool('deep', {}, () => ({ content: [{ type: 'text', text: 'deep' }], structuredContent: { nested } }))
    const http = streamableHttp({ port: 0 })
    await server.listen(http)
    const client = await connect(streamableHttpClient(http.url!), { name: 'careful', version: '1' })
    try {
      const error = await client.callTool('deep', {}, { timeout: 0 }).then(() => undefined, (caught: unknown) => caught)
      expect(error).toBeInstanceOf(StructureLimitError)
      expect(error).toMatchObject({ code: ErrorCode.ParseError, bound: 'maxDepth', limit: 128, kind: 'response' })
      expect(await client.callTool('echo', { text: 'after' })).toEqual({ content: [{ type: 'text', text: 'after' }] })
    } finally {
      await client.close()
    }
  }, 30_000)
})

/** A value `levels` arrays deep around 'bottom' (`levels` 0: the string itself). */
function nested(levels: number): unknown {
  let value: unknown = 'bottom'
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

describe('structureLimits on the HTTP and WebSocket listeners and clients', () => {
  /** A modern tools/call of `take` whose `value` argument is `levels` deep (the message: levels + 3). */
  const deepCall = (id: number, levels: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'take', _meta: META, arguments: { value: nested(levels) } } })

  /** A server whose tool `take` counts its calls, on a real HTTP listener with `structureLimits`; posts raw bodies. */
  async function httpServer(structureLimits?: StructureLimits) {
    const server = createServer({ name: 'bounded', version: '1' })
    mcp = server
    const calls = { count: 0 }
    server.tool('take', { inputSchema: { type: 'object' } }, () => { calls.count++; return { content: [{ type: 'text', text: 'taken' }] } })
    const http = streamableHttp({ port: 0, ...(structureLimits === undefined ? {} : { structureLimits }) })
    await server.listen(http)
    const post = async (body: string) => {
      const response = await fetch(http.url!, {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'take' },
      })
      const answer = response.headers.get('content-type')?.includes('text/event-stream') ? messages(await events(response)).at(-1) : await response.json()
      return { status: response.status, answer }
    }
    return { calls, post }
  }

  it('lets a streamableHttp listener with a raised maxDepth serve a request nested past 128 levels', async () => {
    const { calls, post } = await httpServer({ maxDepth: 256 })
    const deep = await post(deepCall(1, 200))
    expect(deep).toMatchObject({ status: 200, answer: { id: 1, result: { content: [{ type: 'text', text: 'taken' }] } } })
    expect(calls.count).toBe(1)
  })

  it('refuses on a streamableHttp listener with lowered limits a request the defaults let through (400, -32700, its id)', async () => {
    const { calls, post } = await httpServer({ maxDepth: 8, maxMembers: 50 })
    expect(await post(deepCall(2, 10))).toEqual({ status: 400, answer: { jsonrpc: '2.0', id: 2, error: { code: ErrorCode.ParseError, message: 'Parse error: the message nests deeper than 8 levels (maxDepth)' } } })
    const wide = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'take', _meta: META, arguments: { value: Array.from({ length: 60 }, (_, i) => i) } } })
    expect(await post(wide)).toEqual({ status: 400, answer: { jsonrpc: '2.0', id: 3, error: { code: ErrorCode.ParseError, message: 'Parse error: the message holds more than 50 object members and array elements (maxMembers)' } } })
    expect(calls.count).toBe(0)
    expect((await post(deepCall(4, 2))).answer).toMatchObject({ id: 4, result: { content: [{ type: 'text', text: 'taken' }] } })
  })

  it('refuses on a WebSocket listener with a lowered maxDepth what the defaults let through, and serves a raised one', async () => {
    const exchange = async (structureLimits: StructureLimits, frame: string) => {
      const server = createServer({ name: 'bounded', version: '1' })
      server.tool('take', { inputSchema: { type: 'object' } }, () => ({ content: [{ type: 'text', text: 'taken' }] }))
      const listener = websocket({ port: 0, heartbeatMs: 0, structureLimits })
      await server.listen(listener)
      const socket = new WebSocket(listener.url!, [WS_SUBPROTOCOL.json])
      cleanups.push(() => socket.terminate())
      await once(socket, 'open')
      const answer = once(socket, 'message').then(([data]) => JSON.parse(String(data)))
      socket.send(frame)
      try { return await answer } finally { await server.close() }
    }
    expect(await exchange({ maxDepth: 8 }, deepCall(5, 10))).toEqual({ jsonrpc: '2.0', id: 5, error: { code: ErrorCode.ParseError, message: 'Parse error: the message nests deeper than 8 levels (maxDepth)', data: { bound: 'maxDepth', limit: 8 } } })
    expect(await exchange({ maxDepth: 256 }, deepCall(6, 200))).toMatchObject({ id: 6, result: { content: [{ type: 'text', text: 'taken' }] } })
  })

  describe.each([
    ['streamableHttpClient', async (server: McpServer, structureLimits?: StructureLimits) => {
      const http = streamableHttp({ port: 0 })
      await server.listen(http)
      return streamableHttpClient(http.url!, structureLimits === undefined ? {} : { structureLimits })
    }],
    ['websocketClient', async (server: McpServer, structureLimits?: StructureLimits) => {
      const listener = websocket({ port: 0, heartbeatMs: 0 })
      await server.listen(listener)
      return websocketClient(listener.url!, structureLimits === undefined ? {} : { structureLimits })
    }],
  ] as const)('%s', (_name, transport) => {
    /** A client over `transport` with `structureLimits`, of a server whose tool `deep` answers `levels` deep. */
    async function client(structureLimits: StructureLimits | undefined, levels: number) {
      const { server } = echoServer()
      cleanups.push(() => { void server.close() })
      server.tool('deep', {}, () => ({ content: [{ type: 'text', text: 'deep' }], structuredContent: { nested: nested(levels) } }))
      const connected = await connect(await transport(server, structureLimits), { name: 'careful', version: '1' })
      cleanups.push(() => { void connected.close() })
      return connected
    }

    it('takes a result nested past 128 levels with a raised maxDepth (refused by default)', async () => {
      await expect((await client(undefined, 200)).callTool('deep', {}, { timeout: 0 })).rejects.toBeInstanceOf(StructureLimitError)
      expect((await client({ maxDepth: 256 }, 200).then(raised => raised.callTool('deep', {}))).structuredContent).toEqual({ nested: nested(200) })
    })

    it('refuses with a lowered maxDepth a result the defaults take (StructureLimitError at once), and calls on', async () => {
      const lowered = await client({ maxDepth: 12 }, 12)
      const error = await lowered.callTool('deep', {}, { timeout: 0 }).then(() => undefined, (caught: unknown) => caught)
      expect(error).toBeInstanceOf(StructureLimitError)
      expect(error).toMatchObject({ code: ErrorCode.ParseError, bound: 'maxDepth', limit: 12, kind: 'response' })
      expect(await lowered.callTool('echo', { text: 'after' })).toEqual({ content: [{ type: 'text', text: 'after' }] })
    })
  })
})

function concat(...parts: Array<Uint8Array | number[]>): Uint8Array {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0))
  let offset = 0
  for (const part of parts) { out.set(part, offset); offset += part.length }
  return out
}
